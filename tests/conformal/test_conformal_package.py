"""The conformal namespace is lazy and pulls no optional dependency."""

import subprocess
import sys

import sklearn_hcal.conformal
import sklearn_hcal.metrics
import sklearn_hcal.plotting


def test_import_does_not_pull_torch_or_matplotlib():
    code = (
        "import sys, sklearn_hcal.conformal;"
        "from sklearn_hcal.conformal import HumanConformalClassifier;"
        "from sklearn_hcal.metrics import aurc_loss, aggregated_coverage_score;"
        "bad = [m for m in ('torch', 'skorch', 'matplotlib') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_public_names_resolve():
    for name in sklearn_hcal.conformal.__all__:
        assert getattr(sklearn_hcal.conformal, name) is not None
    for name in (
        "aggregated_coverage_score",
        "majority_coverage_score",
        "mean_set_size",
        "coverage_by_set_size",
        "size_stratified_coverage_score",
        "make_set_scorer",
        "deferral_score",
        "risk_coverage_curve",
        "aurc_loss",
        "risk_at_coverage_loss",
        "make_deferral_scorer",
    ):
        assert name in sklearn_hcal.metrics.__all__
        assert callable(getattr(sklearn_hcal.metrics, name))
    for name in ("ConformalCoverageDisplay", "RiskCoverageDisplay"):
        assert name in sklearn_hcal.plotting.__all__
