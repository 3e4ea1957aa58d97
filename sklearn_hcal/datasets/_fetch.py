"""Download, verify and cache data sets (``fetch_*``)."""

from __future__ import annotations

import hashlib
import numbers
import os
import shutil
import tempfile
import urllib.request
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from sklearn.utils import Bunch

from ..utils._compat import Interval, validate_params
from ..utils._warnings import warn_user
from ._base import get_data_home
from ._chaosnli import (
    CHAOSNLI_FOLDER,
    CHAOSNLI_SUBSETS,
    _canonical_subset,
    load_chaosnli,
)

#: The ChaosNLI v1.0 archive, as linked from the README of
#: https://github.com/easonnie/ChaosNLI ("ChaosNLI is available at
#: https://www.dropbox.com/s/h4j7dqszmpt2679/chaosNLI_v1.0.zip");
#: ``dl=1`` asks Dropbox for the file itself rather than its preview page.
CHAOSNLI_URL = "https://www.dropbox.com/s/h4j7dqszmpt2679/chaosNLI_v1.0.zip?dl=1"

#: sha256 of the three JSONL files of ChaosNLI v1.0. The archive's own digest
#: is not published, so what is verified is its content.
CHAOSNLI_SHA256 = {
    "chaosNLI_snli.jsonl": (
        "99f9015ddda7d85f66a087452bc30d53974314fe27e7d589e2f41ad44bd509c1"
    ),
    "chaosNLI_mnli_m.jsonl": (
        "8eb49b589488e7b1a9ec95fb8a864bd50f0509b4f808eed0aed3f8167617664d"
    ),
    "chaosNLI_alphanli.jsonl": (
        "f55817ecc11a02ba3030cd7d2c567d23843456809020723abad53f4fde024c9e"
    ),
}

# A JSONL member of the real archive is below 1 MB; refuse to inflate anything
# much larger (a wrong or hostile archive).
_MAX_MEMBER_BYTES = 64 * 2**20
_CHUNK = 2**16


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _use_cached(
    path: Path,
    expected: str | None,
    *,
    download_if_missing: bool,
    what: str,
) -> bool:
    """Whether the cached ``path`` can be used as it is (the fetchers' cache rule).

    True when the file exists and its sha256 is ``expected`` (or nothing is
    expected). False when it must be downloaded: it is missing, or corrupt
    (a RuntimeWarning says so). When it must be downloaded but
    ``download_if_missing`` is False, raises OSError (corrupt) or
    FileNotFoundError (missing), naming ``what`` (e.g. ``"ChaosNLI"``).
    """
    fetcher = f"fetch_{what.lower()}"
    if path.is_file():
        got = _sha256(path)
        if expected is None or got == expected:
            return True
        if not download_if_missing:
            raise OSError(
                f"The cached {what} file {str(path)!r} is corrupt (sha256 {got}, "
                f"expected {expected}). Delete it or call {fetcher} with "
                "download_if_missing=True."
            )
        warn_user(
            f"The cached {what} file {str(path)!r} is corrupt (sha256 mismatch); "
            "downloading it again.",
            RuntimeWarning,
        )
        return False
    if not download_if_missing:
        raise FileNotFoundError(
            f"{what} file {path.name!r} is not cached in {str(path.parent)!r} and "
            "download_if_missing=False."
        )
    return False


def _data_home_source(data_home) -> str:
    """Which rule chose the data home, for messages."""
    if data_home is not None:
        return "(the data_home argument)"
    if "HCAL_DATA" in os.environ:
        return "(the HCAL_DATA environment variable)"
    return "(~/hcal_data: the HCAL_DATA environment variable is not set)"


def _download(url: str, folder: Path, *, timeout: float) -> Path:
    """Stream ``url`` into a new temporary file in ``folder`` and return it.

    The caller owns (and must remove) the file; on failure nothing is left.
    """
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".download-", suffix=".part")
    tmp = Path(tmp)
    try:
        with (
            os.fdopen(fd, "wb") as out,
            urllib.request.urlopen(url, timeout=timeout) as response,
        ):
            shutil.copyfileobj(response, out, _CHUNK)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OSError(f"Could not download {url}: {exc}") from exc
        raise
    return tmp


def _find_member(archive: zipfile.ZipFile, name: str) -> zipfile.ZipInfo:
    # The official archive holds chaosNLI_v1.0/<name> (plus macOS resource
    # forks under __MACOSX/); accept the file in any folder but those.
    matches = [
        info
        for info in archive.infolist()
        if not info.is_dir()
        and PurePosixPath(info.filename).name == name
        and "__MACOSX" not in PurePosixPath(info.filename).parts
    ]
    if len(matches) != 1:
        found = "no" if not matches else f"{len(matches)}"
        raise OSError(
            f"The downloaded archive is not ChaosNLI v1.0: it has {found} "
            f"member named {name!r} (members: "
            f"{[i.filename for i in archive.infolist()][:10]})."
        )
    return matches[0]


def _extract_verified(zip_path: Path, expected: dict[str, str], dest: Path) -> None:
    """Extract the ``expected`` members of a zip into ``dest``, all or nothing.

    Every member is written to a private temporary folder next to ``dest`` and
    checked against its sha256; only when all match are they moved into
    ``dest``, each with an atomic rename.
    """
    tmpdir = Path(tempfile.mkdtemp(dir=dest.parent, prefix=".extract-"))
    try:
        try:
            archive = zipfile.ZipFile(zip_path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise OSError(
                f"The downloaded file is not a valid zip archive ({exc}); the "
                "download may be truncated or the URL wrong."
            ) from exc
        with archive:
            for name, sha in expected.items():
                info = _find_member(archive, name)
                if info.file_size > _MAX_MEMBER_BYTES:
                    raise OSError(
                        f"Archive member {info.filename!r} is {info.file_size} "
                        "bytes, far larger than the ChaosNLI file it should be."
                    )
                target = tmpdir / name
                try:
                    with archive.open(info) as src, open(target, "wb") as out:
                        shutil.copyfileobj(src, out, _CHUNK)
                except (
                    zipfile.BadZipFile,
                    EOFError,
                    OSError,
                    zlib.error,
                    NotImplementedError,  # an unsupported compression method
                    RuntimeError,  # an encrypted member
                ) as exc:
                    raise OSError(
                        f"Archive member {info.filename!r} is corrupt ({exc})."
                    ) from exc
                got = _sha256(target)
                if got != sha:
                    raise OSError(
                        f"Checksum mismatch for {name!r} in the downloaded "
                        f"archive: sha256 {got}, expected {sha}. The file is "
                        "corrupt or not ChaosNLI v1.0; nothing was cached."
                    )
        dest.mkdir(parents=True, exist_ok=True)
        for name in expected:
            os.replace(tmpdir / name, dest / name)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


@validate_params(
    {
        "subset": [str],  # values checked (case-insensitively) below
        "data_home": [str, os.PathLike, None],
        "download_if_missing": ["boolean"],
        "url": [str, None],
        "timeout": [Interval(numbers.Real, 0, None, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def fetch_chaosnli(
    subset: str = "snli",
    *,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    url: str | None = None,
    timeout: float = 60.0,
) -> Bunch:
    """Load a ChaosNLI subset, downloading the official archive if needed.

    The ChaosNLI v1.0 zip archive (Nie et al., 2020) is downloaded once into
    ``<data home>/chaosnli_v1.0`` (see :func:`get_data_home`); its three JSONL
    files are verified against their known sha256 before anything is cached,
    so the cache is either complete and correct or absent. Later calls read
    the cache without network access (the cached file's checksum is checked
    again; a corrupt cache is downloaded afresh, with a warning).

    Parameters
    ----------
    subset : {"snli", "mnli", "alphanli"}, default="snli"
        Which subset (``"mnli_m"``, ``"abdnli"`` and ``"alpha"`` are aliases).
    data_home : str or path-like, default=None
        Cache folder; see :func:`get_data_home`.
    download_if_missing : bool, default=True
        If False, raise ``FileNotFoundError`` instead of downloading when the
        data is not cached.
    url : str, default=None
        Where to download the archive from (any URL ``urllib`` opens,
        ``file://`` included, e.g. a mirror); defaults to ``CHAOSNLI_URL``,
        the link in the ChaosNLI README.
    timeout : float, default=60.0
        Network timeout of the download, in seconds.

    Returns
    -------
    data : Bunch
        What :func:`load_chaosnli` returns.

    Raises
    ------
    FileNotFoundError
        If the data is not cached and ``download_if_missing=False``.
    OSError
        If the download fails, or the archive is not a valid zip, lacks a
        ChaosNLI file, or a file's sha256 differs from the known one.

    Examples
    --------
    >>> from sklearn_hcal.datasets import fetch_chaosnli
    >>> data = fetch_chaosnli("mnli")  # doctest: +SKIP
    >>> data.counts.shape  # doctest: +SKIP
    (1599, 3)
    """
    subset = _canonical_subset(subset)
    fname = CHAOSNLI_SUBSETS[subset][0]
    home = get_data_home(data_home)
    folder = home / CHAOSNLI_FOLDER
    if _use_cached(
        folder / fname,
        CHAOSNLI_SHA256[fname],
        download_if_missing=download_if_missing,
        what="ChaosNLI",
    ):
        return load_chaosnli(subset, path=folder)

    try:
        archive = _download(url or CHAOSNLI_URL, home, timeout=timeout)
    except OSError as exc:
        # Offline is the common case: say where the data is looked for and
        # how to point there, not urllib's traceback.
        raise OSError(
            f"{exc}. ChaosNLI file {fname!r} is not in {str(folder)!r}, under "
            f"the data home {_data_home_source(data_home)}; fetch_chaosnli "
            "downloads it there once. Offline, set the HCAL_DATA environment "
            f"variable (or data_home=) to a folder holding {CHAOSNLI_FOLDER}/"
            f"{fname}, or read a copy of the file with load_chaosnli(subset, "
            "path=folder)."
        ) from None
    try:
        _extract_verified(archive, CHAOSNLI_SHA256, folder)
    finally:
        archive.unlink(missing_ok=True)
    return load_chaosnli(subset, path=folder)
