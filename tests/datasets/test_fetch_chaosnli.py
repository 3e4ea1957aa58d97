"""fetch_chaosnli: download, verify and cache, against a local server."""

import functools
import hashlib
import http.server
import threading
import zipfile

import numpy as np
import pytest

from sklearn_hcal.datasets import fetch_chaosnli, load_chaosnli
from sklearn_hcal.datasets._fetch import CHAOSNLI_SHA256
from tests.conftest import require_data

FILES = ("chaosNLI_snli.jsonl", "chaosNLI_mnli_m.jsonl", "chaosNLI_alphanli.jsonl")
# The digests listed in the shared data MANIFEST, typed independently of the
# module's table.
MANIFEST_SHA256 = {
    "chaosNLI_snli.jsonl": "99f9015ddda7d85f66a087452bc30d53974314fe27e7d589e2f41ad44bd509c1",  # noqa: E501
    "chaosNLI_mnli_m.jsonl": "8eb49b589488e7b1a9ec95fb8a864bd50f0509b4f808eed0aed3f8167617664d",  # noqa: E501
    "chaosNLI_alphanli.jsonl": "f55817ecc11a02ba3030cd7d2c567d23843456809020723abad53f4fde024c9e",  # noqa: E501
}


@pytest.fixture(scope="module")
def source_dir():
    return require_data("chaosnli_v1.0", "chaosNLI_snli.jsonl").parent


def build_zip(path, source_dir, *, corrupt=None, drop=None):
    """An archive laid out as the official one (folder + __MACOSX forks)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("chaosNLI_v1.0/README.txt", "ChaosNLI v1.0\n")
        for name in FILES:
            if name == drop:
                continue
            data = (source_dir / name).read_bytes()
            if name == corrupt:
                data = bytearray(data)
                data[1000] ^= 0x01  # one flipped bit, a valid but wrong file
                data = bytes(data)
            zf.writestr(f"chaosNLI_v1.0/{name}", data)
            zf.writestr(f"__MACOSX/chaosNLI_v1.0/._{name}", b"\x00\x05junk")
    return path


class _Server:
    """A thread serving one folder on 127.0.0.1 and counting requests."""

    def __init__(self, folder):
        counter = self
        self.requests = 0

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output quiet
                pass

            def do_GET(self):
                counter.requests += 1
                super().do_GET()

        handler = functools.partial(Handler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.closed = False

    def url(self, name):
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/{name}"

    def close(self):
        if self.closed:
            return
        self.closed = True
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def server(tmp_path):
    srv_dir = tmp_path / "served"
    srv_dir.mkdir()
    srv = _Server(srv_dir)
    srv.dir = srv_dir
    yield srv
    srv.close()


def leftovers(home):
    """Every file below ``home`` (temporary or cached)."""
    return sorted(p.relative_to(home).as_posix() for p in home.rglob("*"))


def test_module_checksums_match_the_manifest():
    assert CHAOSNLI_SHA256 == MANIFEST_SHA256


def test_download_verify_cache_then_offline(tmp_path, server, source_dir):
    build_zip(server.dir / "chaosNLI_v1.0.zip", source_dir)
    home = tmp_path / "home"
    url = server.url("chaosNLI_v1.0.zip")

    data = fetch_chaosnli("snli", data_home=home, url=url)
    assert server.requests == 1
    ref = load_chaosnli("snli", path=source_dir)
    np.testing.assert_array_equal(data.counts, ref.counts)
    np.testing.assert_array_equal(data.uid, ref.uid)
    assert data.counts.shape == (1514, 3)
    # The whole archive is cached, verified, and nothing temporary is left.
    assert leftovers(home) == ["chaosnli_v1.0"] + [
        f"chaosnli_v1.0/{f}" for f in sorted(FILES)
    ]
    for name in FILES:
        digest = hashlib.sha256((home / "chaosnli_v1.0" / name).read_bytes())
        assert digest.hexdigest() == MANIFEST_SHA256[name]

    # Another subset comes from the cache: no second request.
    mnli = fetch_chaosnli("mnli_m", data_home=home, url=url)
    assert mnli.counts.shape == (1599, 3) and server.requests == 1

    # With the server gone the cache still loads, with or without downloads.
    server.close()
    alpha = fetch_chaosnli("alphanli", data_home=home, url=url)
    assert alpha.counts.shape == (1532, 2)
    again = fetch_chaosnli("snli", data_home=home, download_if_missing=False)
    np.testing.assert_array_equal(again.counts, ref.counts)
    # load_chaosnli reads the same cache through data_home's folder.
    np.testing.assert_array_equal(
        load_chaosnli("snli", path=home / "chaosnli_v1.0").counts, ref.counts
    )


def test_file_url_and_data_home_from_environment(tmp_path, source_dir, monkeypatch):
    archive = build_zip(tmp_path / "a.zip", source_dir)
    monkeypatch.setenv("HCAL_DATA", str(tmp_path / "env_home"))
    data = fetch_chaosnli("alpha", url=archive.as_uri())
    assert data.counts.shape == (1532, 2)
    assert (tmp_path / "env_home" / "chaosnli_v1.0" / "chaosNLI_snli.jsonl").is_file()


def test_missing_cache_without_download_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="download_if_missing=False"):
        fetch_chaosnli("snli", data_home=tmp_path, download_if_missing=False)


@pytest.mark.parametrize("corrupt", FILES)
def test_checksum_mismatch_rejected_and_nothing_cached(
    tmp_path, server, source_dir, corrupt
):
    build_zip(server.dir / "bad.zip", source_dir, corrupt=corrupt)
    home = tmp_path / "home"
    # Whatever subset is asked for, a wrong member anywhere rejects the archive.
    with pytest.raises(OSError, match=f"Checksum mismatch for '{corrupt}'"):
        fetch_chaosnli("snli", data_home=home, url=server.url("bad.zip"))
    assert leftovers(home) == []


def test_truncated_zip_rejected(tmp_path, server, source_dir):
    whole = build_zip(tmp_path / "whole.zip", source_dir).read_bytes()
    (server.dir / "cut.zip").write_bytes(whole[: len(whole) // 2])
    home = tmp_path / "home"
    with pytest.raises(OSError, match="not a valid zip archive"):
        fetch_chaosnli("snli", data_home=home, url=server.url("cut.zip"))
    assert leftovers(home) == []


def test_bit_flip_in_compressed_stream_rejected(tmp_path, server, source_dir):
    raw = bytearray(build_zip(tmp_path / "ok.zip", source_dir).read_bytes())
    with zipfile.ZipFile(tmp_path / "ok.zip") as zf:
        info = zf.getinfo("chaosNLI_v1.0/chaosNLI_snli.jsonl")
    # Inside the deflated data of the member, past its local header.
    raw[info.header_offset + 200] ^= 0xFF
    (server.dir / "flip.zip").write_bytes(bytes(raw))
    home = tmp_path / "home"
    with pytest.raises(OSError, match="corrupt|Checksum mismatch"):
        fetch_chaosnli("snli", data_home=home, url=server.url("flip.zip"))
    assert leftovers(home) == []


def test_missing_member_rejected(tmp_path, server, source_dir):
    build_zip(server.dir / "part.zip", source_dir, drop="chaosNLI_mnli_m.jsonl")
    home = tmp_path / "home"
    with pytest.raises(OSError, match="no member named 'chaosNLI_mnli_m.jsonl'"):
        fetch_chaosnli("snli", data_home=home, url=server.url("part.zip"))
    assert leftovers(home) == []


def test_http_error_and_unreachable_host(tmp_path, server):
    home = tmp_path / "home"
    with pytest.raises(OSError, match="Could not download .*404"):
        fetch_chaosnli("snli", data_home=home, url=server.url("nothing.zip"))
    url = server.url("x.zip")
    server.close()
    with pytest.raises(OSError, match="Could not download"):
        fetch_chaosnli("snli", data_home=home, url=url, timeout=5)
    assert leftovers(home) == []


def test_corrupt_cache_is_refused_or_downloaded_again(tmp_path, server, source_dir):
    build_zip(server.dir / "a.zip", source_dir)
    home = tmp_path / "home"
    url = server.url("a.zip")
    fetch_chaosnli("snli", data_home=home, url=url)
    cached = home / "chaosnli_v1.0" / "chaosNLI_snli.jsonl"
    cached.write_bytes(cached.read_bytes()[:-10])
    with pytest.raises(OSError, match="corrupt"):
        fetch_chaosnli("snli", data_home=home, download_if_missing=False)
    with pytest.warns(RuntimeWarning, match="downloading it again"):
        data = fetch_chaosnli("snli", data_home=home, url=url)
    assert server.requests == 2
    assert (
        hashlib.sha256(cached.read_bytes()).hexdigest()
        == MANIFEST_SHA256["chaosNLI_snli.jsonl"]
    )
    assert data.counts.shape == (1514, 3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"subset": "qnli"}, "subset must be one of"),
        ({"subset": "snli", "timeout": 0}, "timeout"),
        ({"subset": "snli", "url": 5}, "url"),
        ({"subset": "snli", "download_if_missing": "no"}, "download_if_missing"),
    ],
)
def test_bad_arguments(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fetch_chaosnli(data_home=tmp_path, **kwargs)
