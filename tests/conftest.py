"""Shared fixtures.

Data in ``../shared/data`` (relative to the project root) is read-only and not
shipped; tests that need it skip when it is absent and fail when
``HCAL_REQUIRE_DATA=1`` (CI).
"""

import os
import shutil
from pathlib import Path

import pytest

from tests._tiny_model import tiny_bert

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(
    os.environ.get("HCAL_SHARED_DATA", PROJECT_ROOT.parent / "shared" / "data")
)


def require_data(*parts: str) -> Path:
    """Path of a shared data file; skip (or fail in CI) when it is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        msg = f"shared data {path} is not available"
        if os.environ.get("HCAL_REQUIRE_DATA") == "1":
            pytest.fail(msg + " and HCAL_REQUIRE_DATA=1")
        pytest.skip(msg)
    return path


def require_crowdkit():
    """``crowdkit.aggregation`` (crowd-kit 1.4.2, a test-only oracle).

    Skips when crowd-kit is not importable and fails under
    ``HCAL_REQUIRE_DATA=1`` (CI installs the dev extra, ``make install``).
    """
    try:
        import crowdkit.aggregation as aggregation
    except ImportError as exc:
        msg = (
            f"crowd-kit is not importable ({exc}); `make install` installs "
            "crowd-kit==1.4.2 --no-deps with the light packages it imports"
        )
        if os.environ.get("HCAL_REQUIRE_DATA") == "1":
            pytest.fail(msg + " and HCAL_REQUIRE_DATA=1")
        pytest.skip(msg)
    return aggregation


_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def require_chromium() -> str:
    """Path of a headless-capable Chromium; skip when absent, fail in CI."""
    path = os.environ.get("HCAL_CHROMIUM") or next(
        (p for p in map(shutil.which, _BROWSERS) if p), None
    )
    if path is None:
        msg = "Chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI") == "true" or os.environ.get("HCAL_REQUIRE_DATA") == "1":
            pytest.fail(msg + " and this is CI")
        pytest.skip(msg)
    return path


@pytest.fixture
def chaosnli_dir() -> Path:
    return require_data("chaosnli_v1.0")


@pytest.fixture(autouse=True)
def _matplotlib_agg(monkeypatch):
    # Plots must never try to open a window in tests.
    monkeypatch.setenv("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A tiny randomly initialised BERT folder (model and tokenizer), shared by
    the encoder, transformer and ``hcal lewidi --model`` tests."""
    pytest.importorskip("transformers")
    return tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(scope="session")
def tiny_model_128(tmp_path_factory):
    """The tiny BERT reading 128 tokens: LeWiDi rows at the transformer's
    default ``max_length``."""
    pytest.importorskip("transformers")
    return tiny_bert(tmp_path_factory.mktemp("tiny_bert_128"), max_positions=128)


@pytest.fixture(scope="session")
def tiny_model_wide(tmp_path_factory):
    """The tiny BERT 32 numbers wide: ``make_default_estimator``'s named
    encoder reduces the vectors to more dimensions than 16."""
    pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("tiny_bert_wide")
    return tiny_bert(folder, max_positions=128, hidden_size=32)


@pytest.fixture
def kernels_on():
    """The compiled kernels on for a test, even where
    ``SKLEARN_HCAL_COMPILED=0`` is set: the compiled side of a comparison
    with the numpy path (else both sides would be numpy's)."""
    from sklearn_hcal.utils._compiled import compiled_available, use_compiled

    with use_compiled(True):
        assert compiled_available()
        yield
