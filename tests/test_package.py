"""Package-level behaviour: lazy public namespaces and optional extras."""

import subprocess
import sys

import pytest

import sklearn_hcal
from sklearn_hcal.utils._optional import import_optional, resolve_device


def test_import_does_not_pull_torch_or_matplotlib():
    code = (
        "import sys, sklearn_hcal, sklearn_hcal.metrics, sklearn_hcal.datasets;"
        "import sklearn_hcal.plotting, sklearn_hcal.model_selection;"
        "from sklearn_hcal.metrics import jensen_shannon_distance;"
        "bad = [m for m in ('torch', 'skorch', 'matplotlib') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        sklearn_hcal.nope  # noqa: B018


def test_every_public_name_resolves():
    import sklearn_hcal.calibration
    import sklearn_hcal.datasets
    import sklearn_hcal.metrics
    import sklearn_hcal.model_selection
    import sklearn_hcal.plotting

    for module in (
        sklearn_hcal,
        sklearn_hcal.metrics,
        sklearn_hcal.calibration,
        sklearn_hcal.datasets,
        sklearn_hcal.model_selection,
        sklearn_hcal.plotting,
    ):
        for name in module.__all__:
            assert getattr(module, name) is not None, (module.__name__, name)


def test_missing_optional_dependency_names_the_extra(monkeypatch):
    # A None entry in sys.modules makes the import fail as if not installed.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r'pip install "sklearn-hcal\[plot\]"'):
        import_optional("matplotlib")
    monkeypatch.setitem(sys.modules, "skorch", None)
    with pytest.raises(ImportError, match=r"sklearn-hcal\[torch\]"):
        import_optional("skorch")


def test_resolve_device():
    torch = pytest.importorskip("torch")
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == (
        "cuda" if torch.cuda.is_available() else "cpu"
    )
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")
