"""ConformalCoverageDisplay and RiskCoverageDisplay."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from sklearn_hcal.conformal import HumanConformalClassifier  # noqa: E402
from sklearn_hcal.metrics import (  # noqa: E402
    aggregated_coverage_score,
    aurc_loss,
    deferral_score,
    majority_coverage_score,
    mean_set_size,
    risk_coverage_curve,
)
from sklearn_hcal.plotting import (  # noqa: E402
    ConformalCoverageDisplay,
    RiskCoverageDisplay,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 3))
    Q = np.exp(X) / np.exp(X).sum(axis=1, keepdims=True)
    Y = rng.multinomial(5, Q)
    clf = LogisticRegression().fit(X[:200], Y[:200].argmax(axis=1))
    return X, Y, clf


def test_coverage_display_values(data):
    X, Y, clf = data
    cp = HumanConformalClassifier(FrozenEstimator(clf), random_state=0)
    cp.fit(X[200:400], Y[200:400])
    levels = [0.6, 0.8, 0.9]
    disp = ConformalCoverageDisplay.from_estimator(
        cp, X[400:], Y[400:], levels=levels, name="MC"
    )
    for j, level in enumerate(levels):
        sets = cp.set_params(confidence_level=level).predict_set(X[400:])
        assert disp.aggregated_coverage[j] == pytest.approx(
            aggregated_coverage_score(Y[400:], sets)
        )
        assert disp.majority_coverage[j] == pytest.approx(
            majority_coverage_score(Y[400:], sets)
        )
        assert disp.mean_set_size[j] == pytest.approx(mean_set_size(None, sets))
    assert np.allclose(disp.lines_["aggregated"].get_ydata(), disp.aggregated_coverage)
    # a second classifier on the same axes; the target line is drawn once
    maj = HumanConformalClassifier(FrozenEstimator(clf), calibration="majority")
    maj.fit(X[200:400], Y[200:400])
    again = ConformalCoverageDisplay.from_estimator(
        maj, X[400:], Y[400:], levels=levels, ax=disp.ax_, name="majority"
    )
    labels = again.ax_[0].get_legend_handles_labels()[1]
    assert sum("Target" in label for label in labels) == 1
    plt.close(disp.figure_)


def test_coverage_display_errors(data):
    X, Y, clf = data
    with pytest.raises(ValueError, match="levels"):
        ConformalCoverageDisplay.from_predictions(
            Y[:10], np.full((10, 3), 0.5), levels=[1.0]
        )
    with pytest.raises(ValueError, match="predict_pvalues"):
        ConformalCoverageDisplay.from_estimator(clf, X[:10], Y[:10])


def test_risk_coverage_display(data):
    X, Y, clf = data
    disp = RiskCoverageDisplay.from_estimator(clf, X[400:], Y[400:])
    P = clf.predict_proba(X[400:])
    cov, risk, _ = risk_coverage_curve(Y[400:], P)
    assert np.allclose(disp.coverage, cov) and np.allclose(disp.selective_risk, risk)
    assert disp.aurc == pytest.approx(aurc_loss(Y[400:], P))
    ent = RiskCoverageDisplay.from_estimator(
        clf, X[400:], Y[400:], deferral="entropy", ax=disp.ax_
    )
    assert ent.aurc == pytest.approx(
        aurc_loss(Y[400:], P, y_score=deferral_score(P, method="entropy"))
    )
    assert len(disp.ax_.get_lines()) == 2
    with pytest.raises(ValueError, match="predict_disagreement"):
        RiskCoverageDisplay.from_estimator(
            clf, X[400:], Y[400:], deferral="disagreement"
        )
    plt.close(disp.figure_)


@pytest.mark.parametrize("display", [ConformalCoverageDisplay, RiskCoverageDisplay])
def test_missing_matplotlib_names_the_extra(monkeypatch, display):
    import sys

    Y = np.array([[3, 1], [1, 3], [2, 2]])
    P = np.array([[0.7, 0.3], [0.4, 0.6], [0.5, 0.5]])
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"sklearn-hcal\[plot\]"):
        display.from_predictions(Y, P)
