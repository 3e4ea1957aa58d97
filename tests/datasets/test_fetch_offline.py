"""Offline, ``fetch_chaosnli`` says where the data is looked for.

The examples load ChaosNLI with ``fetch_chaosnli``; without network and
without a cached copy the error must name the data home and ``HCAL_DATA``
(how to point at a copy), not end in a chained urllib traceback.
"""

import socket
import traceback

import pytest

from sklearn_hcal.datasets import fetch_chaosnli


def _unreachable_url() -> str:
    # A local port nobody listens on: the connection is refused at once,
    # as offline, without touching the network.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/chaosNLI_v1.0.zip"


def test_offline_error_names_hcal_data_and_the_data_home(tmp_path, monkeypatch):
    home = tmp_path / "empty_home"
    monkeypatch.setenv("HCAL_DATA", str(home))
    with pytest.raises(OSError) as info:
        fetch_chaosnli("snli", url=_unreachable_url(), timeout=5)
    message = str(info.value)
    assert message.startswith("Could not download http://127.0.0.1:")
    assert "HCAL_DATA" in message and "(the HCAL_DATA environment variable)" in message
    assert str(home / "chaosnli_v1.0") in message
    assert "chaosnli_v1.0/chaosNLI_snli.jsonl" in message
    # one exception, not urllib's chain under it
    assert info.value.__cause__ is None and info.value.__suppress_context__
    text = "".join(traceback.format_exception(info.value))
    assert "During handling" not in text and "direct cause" not in text


def test_offline_error_names_the_data_home_argument(tmp_path, monkeypatch):
    monkeypatch.delenv("HCAL_DATA", raising=False)
    home = tmp_path / "mine"
    with pytest.raises(OSError, match=r"\(the data_home argument\).*HCAL_DATA"):
        fetch_chaosnli("mnli", data_home=home, url=_unreachable_url(), timeout=5)
