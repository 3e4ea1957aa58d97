"""Shared fixtures.

Data in ``../shared/data`` (relative to the project root) is read-only and not
shipped; tests that need it skip when it is absent and fail when
``HCAL_REQUIRE_DATA=1`` (CI).
"""

import importlib.util
import os
from pathlib import Path

import pytest

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


@pytest.fixture
def chaosnli_dir() -> Path:
    return require_data("chaosnli_v1.0")


@pytest.fixture(autouse=True)
def _matplotlib_agg(monkeypatch):
    # Plots must never try to open a window in tests.
    monkeypatch.setenv("MPLBACKEND", "Agg")


# -- the `slow` mark is honest: a test that trains a network carries it ---------
# `make test-fast` deselects `slow`; a test that trains a skorch network (seconds
# each) without the mark would silently make the fast run slow. skorch's
# fit_loop is wrapped (not replaced) once per session to record that a network
# trained during the test.
_TRAINED: list = []


def pytest_configure(config):
    if importlib.util.find_spec("skorch") is None:
        return
    import skorch.net

    fit_loop = skorch.net.NeuralNet.fit_loop
    if getattr(fit_loop, "_hcal_recorded", False):
        return

    def recorded_fit_loop(self, *args, **kwargs):
        _TRAINED.append(type(self).__name__)
        return fit_loop(self, *args, **kwargs)

    recorded_fit_loop._hcal_recorded = True
    skorch.net.NeuralNet.fit_loop = recorded_fit_loop


@pytest.fixture(autouse=True)
def _slow_mark_is_honest(request):
    _TRAINED.clear()
    yield
    if _TRAINED and request.node.get_closest_marker("slow") is None:
        pytest.fail(
            f"{request.node.nodeid} trains a network ({_TRAINED[0]}) but is not "
            "marked @pytest.mark.slow (make test-fast must skip it)",
            pytrace=False,
        )
