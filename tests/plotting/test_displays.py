"""Reliability displays and shared display behaviour (sklearn_hcal.plotting).

The displays must show the numbers the metric functions report: every test
recombines a display's stored data and compares it with the public metric on
the same inputs, mostly on the real ChaosNLI-SNLI histograms.
"""

import subprocess
import sys
import warnings

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from sklearn_hcal import AlphaCalibrator  # noqa: E402
from sklearn_hcal.datasets import load_chaosnli, make_label_histograms  # noqa: E402
from sklearn_hcal.metrics import (  # noqa: E402
    disagreement_calibration_error,
    disagreement_calibration_loss,
    disagreement_probability,
    expected_calibration_error,
    predicted_disagreement,
)
from sklearn_hcal.plotting import (  # noqa: E402
    AgreementBinDisplay,
    CalibrationDispersionDisplay,
    DisagreementReliabilityDisplay,
    HumanModelMarginalDisplay,
    InstanceErrorDisplay,
    MajorityReliabilityDisplay,
)
from tests.conftest import require_data  # noqa: E402

ALL_DISPLAYS = [
    MajorityReliabilityDisplay,
    InstanceErrorDisplay,
    HumanModelMarginalDisplay,
    DisagreementReliabilityDisplay,
    CalibrationDispersionDisplay,
    AgreementBinDisplay,
]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def snli():
    """ChaosNLI-SNLI counts and three classifiers of Baan et al.'s kind."""
    path = require_data("chaosnli_v1.0", "chaosNLI_snli.jsonl")
    Y = load_chaosnli("snli", path=path).counts
    rng = np.random.default_rng(0)
    # 20 of the 100 votes without replacement: a multivariate hypergeometric
    # draw per item (Baan et al.'s "as good as it realistically gets" H1).
    sub = np.array([rng.multivariate_hypergeometric(y, 20) for y in Y])
    preds = {
        "uniform": np.full(Y.shape, 1.0 / Y.shape[1]),
        "oracle": Y / Y.sum(axis=1, keepdims=True),
        "H20": sub / 20.0,
    }
    return Y, preds


@pytest.fixture(scope="module")
def synthetic():
    X, Y, _ = make_label_histograms(
        300, 3, 5, n_features=4, concentration=3.0, random_state=0
    )
    clf = LogisticRegression().fit(X, Y.argmax(axis=1))
    return X, Y, clf


# --------------------------------------------------------------------------- #
# Shared behaviour
# --------------------------------------------------------------------------- #
def test_importing_plotting_does_not_import_matplotlib():
    code = (
        "import sys, sklearn_hcal.plotting as p;"
        "[getattr(p, n) for n in p.__all__];"
        "sys.exit(1 if 'matplotlib' in sys.modules else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("display", ALL_DISPLAYS, ids=lambda d: d.__name__)
def test_missing_matplotlib_names_the_extra(monkeypatch, display):
    Y = np.array([[3, 1], [1, 3], [2, 2]])
    P = np.array([[0.7, 0.3], [0.4, 0.6], [0.5, 0.5]])
    # A None entry makes `import matplotlib` fail as if it were not installed.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r'pip install "sklearn-hcal\[plot\]"'):
        display.from_predictions(Y, P)


def test_dict_of_predictions_rejects_name_and_empty_dict():
    Y = np.array([[3, 1], [1, 3]])
    P = np.array([[0.7, 0.3], [0.4, 0.6]])
    with pytest.raises(ValueError, match="name must be None when y_prob is a dict"):
        InstanceErrorDisplay.from_predictions(Y, {"a": P}, name="b")
    with pytest.raises(ValueError, match="empty dict"):
        AgreementBinDisplay.from_predictions(Y, {})


def test_bad_probabilities_name_the_classifier():
    Y = np.array([[3, 1], [1, 3]])
    good = np.array([[0.7, 0.3], [0.4, 0.6]])
    bad = np.array([[0.7, 0.7], [0.4, 0.6]])
    with pytest.raises(ValueError, match=r"y_prob\['bad'\] rows must sum to 1"):
        CalibrationDispersionDisplay.from_predictions(Y, {"good": good, "bad": bad})
    with pytest.raises(ValueError, match="kind"):
        MajorityReliabilityDisplay.from_predictions(Y, good, kind="pie")


# --------------------------------------------------------------------------- #
# MajorityReliabilityDisplay
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("which", ["uniform", "oracle", "H20"])
def test_majority_reliability_recombines_to_ece(snli, which):
    Y, preds = snli
    P = preds[which]
    disp = MajorityReliabilityDisplay.from_predictions(Y, P, name=which)
    counts = disp.bin_counts
    gap = np.abs(disp.bin_accuracy - disp.bin_confidence)
    filled = counts > 0
    recombined = np.sum(counts[filled] * gap[filled]) / counts.sum()
    expected = expected_calibration_error(Y, P)
    assert recombined == pytest.approx(expected, abs=1e-12)
    assert disp.ece == pytest.approx(expected, abs=1e-15)
    # Every confidence is >= 1/3 > 0, so every item is binned.
    assert counts.sum() == Y.shape[0]
    # The drawn curve and counts are the stored numbers.
    x, y = disp.line_.get_data()
    np.testing.assert_allclose(x, disp.bin_confidence[filled])
    np.testing.assert_allclose(y, disp.bin_accuracy[filled])
    np.testing.assert_array_equal(disp.counts_.get_data().values, counts)
    assert f"ECE = {expected:.3f}" in disp.line_.get_label()


def test_oracle_is_miscalibrated_against_the_majority(snli):
    # Baan et al. (2022, Table 1): the oracle's ECE is about 0.25 although it
    # predicts the human distribution; its majority accuracy is 1 in every bin.
    Y, preds = snli
    disp = MajorityReliabilityDisplay.from_predictions(Y, preds["oracle"])
    assert disp.ece == pytest.approx(0.245, abs=0.005)
    filled = disp.bin_counts > 0
    np.testing.assert_array_equal(disp.bin_accuracy[filled], 1.0)
    assert np.all(disp.bin_confidence[filled] < 1.0)


def test_majority_reliability_on_given_axes_with_two_classifiers(snli):
    Y, preds = snli
    fig, ax = plt.subplots()
    first = MajorityReliabilityDisplay.from_predictions(
        Y, preds["oracle"], name="oracle", ax=ax
    )
    second = MajorityReliabilityDisplay.from_predictions(
        Y, preds["H20"], name="H20", ax=first.ax_
    )
    assert first.ax_ is ax and second.ax_ is ax and second.figure_ is fig
    labels = ax.get_legend_handles_labels()[1]
    assert labels.count("Perfectly calibrated") == 1
    assert sum(label.startswith(("oracle (", "H20 (")) for label in labels) == 2
    # One shared twin axis holds both count histograms.
    assert second.ax_counts_ is first.ax_counts_
    assert len(fig.axes) == 2
    assert len(first.ax_counts_.patches) == 2


def test_majority_reliability_bars(snli):
    Y, preds = snli
    disp = MajorityReliabilityDisplay.from_predictions(Y, preds["H20"], kind="bar")
    filled = disp.bin_counts > 0
    heights = [patch.get_height() for patch in disp.line_.patches]
    np.testing.assert_allclose(heights, disp.bin_accuracy[filled])


def test_majority_reliability_from_estimator(synthetic):
    X, Y, clf = synthetic
    disp = MajorityReliabilityDisplay.from_estimator(clf, X, Y, n_bins=5)
    ref = MajorityReliabilityDisplay.from_predictions(Y, clf.predict_proba(X), n_bins=5)
    np.testing.assert_array_equal(disp.bin_counts, ref.bin_counts)
    assert disp.ece == ref.ece
    assert disp.line_.get_label().startswith("LogisticRegression (ECE")
    with pytest.raises(ValueError, match="takes one estimator"):
        MajorityReliabilityDisplay.from_estimator({"a": clf, "b": clf}, X, Y)


# --------------------------------------------------------------------------- #
# DisagreementReliabilityDisplay
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("which", ["uniform", "oracle", "H20"])
def test_disagreement_diagram_recombines_to_calibration_loss(snli, which):
    Y, preds = snli
    phi = predicted_disagreement(preds[which])
    disp = DisagreementReliabilityDisplay.from_predictions(Y, phi, name=which)
    assert disp.bin_edges.shape == (16,)
    n = disp.bin_counts.sum()
    assert n == Y.shape[0]
    seen = ~np.isnan(disp.bin_observed)
    plugin = np.sum(
        disp.bin_counts[seen]
        / n
        * (disp.bin_observed[seen] - disp.bin_predicted[seen]) ** 2
    )
    assert plugin == pytest.approx(
        disagreement_calibration_loss(Y, phi, debiased=False), abs=1e-12
    )
    assert disp.calibration_loss == pytest.approx(
        disagreement_calibration_loss(Y, phi), abs=1e-15
    )
    assert disp.calibration_error == pytest.approx(
        disagreement_calibration_error(Y, phi), abs=1e-15
    )
    # Class probabilities give the same diagram through φ = 1 − Σq².
    again = DisagreementReliabilityDisplay.from_predictions(Y, preds[which])
    np.testing.assert_allclose(again.bin_predicted, disp.bin_predicted)


def test_disagreement_diagram_observed_means(snli):
    # Independent recomputation of one bin's mean μ̂ from the raw counts.
    Y, preds = snli
    phi = predicted_disagreement(preds["H20"])
    disp = DisagreementReliabilityDisplay.from_predictions(Y, phi)
    b = int(np.argmax(disp.bin_counts))
    lo, hi = disp.bin_edges[b], disp.bin_edges[b + 1]
    members = (phi >= lo) & (phi < hi)
    n = Y.sum(axis=1)
    pairs_agree = (Y * (Y - 1)).sum(axis=1) / (n * (n - 1))
    assert disp.bin_counts[b] == members.sum()
    assert disp.bin_observed[b] == pytest.approx(np.mean(1 - pairs_agree[members]))
    assert disp.bin_predicted[b] == pytest.approx(np.mean(phi[members]))


def test_disagreement_diagram_skips_single_annotations():
    Y = np.array([[1, 0], [0, 1], [3, 1], [2, 2]])
    phi = np.array([0.1, 0.1, 0.5, 0.5])
    disp = DisagreementReliabilityDisplay.from_predictions(Y, phi, n_bins=2)
    np.testing.assert_array_equal(disp.bin_counts, [2, 2])
    np.testing.assert_array_equal(disp.bin_counts_valid, [0, 2])
    assert np.isnan(disp.bin_observed[0])
    mu = disagreement_probability(Y)
    assert disp.bin_observed[1] == pytest.approx(np.nanmean(mu[2:]))
    # Only the bin with an observation is drawn.
    assert disp.line_.get_xydata().shape == (1, 2)


def test_disagreement_diagram_uses_predict_disagreement():
    Z, Y, _ = make_label_histograms(300, 3, 5, concentration=3.0, random_state=0)
    cal = AlphaCalibrator(alpha_reg=0.0).fit(Z, Y)
    disp = DisagreementReliabilityDisplay.from_estimator(cal, Z, Y, name="alpha")
    assert disp.disagreement_source == "predict_disagreement"
    phi = cal.predict_disagreement(Z)
    ref = DisagreementReliabilityDisplay.from_predictions(Y, phi)
    np.testing.assert_allclose(disp.bin_predicted, ref.bin_predicted)
    assert disp.calibration_error == disagreement_calibration_error(Y, phi)
    # ... which is not the point prediction's 1 − Σf² (α0 is finite).
    point = DisagreementReliabilityDisplay.from_predictions(Y, cal.predict_proba(Z))
    assert not np.allclose(
        np.nan_to_num(point.bin_predicted), np.nan_to_num(disp.bin_predicted)
    )
    # Both on one axes: two labelled curves, Mimori's dotted original.
    DisagreementReliabilityDisplay.from_predictions(
        Y, cal.predict_proba(Z), name="original", ax=disp.ax_, linestyle=":"
    )
    labels = disp.ax_.get_legend_handles_labels()[1]
    assert any(label.startswith("alpha (") for label in labels)
    assert any(label.startswith("original (") for label in labels)


def test_disagreement_from_estimator_without_predict_disagreement(synthetic):
    # developer guide §never-degrade: the point prediction's 1 - Σq² only with a
    # warning, unless response_method="predict_proba" asks for it.
    X, Y, clf = synthetic
    with pytest.warns(UserWarning, match="no predict_disagreement") as record:
        disp = DisagreementReliabilityDisplay.from_estimator(clf, X, Y)
    assert record[0].filename == __file__  # points at the caller
    assert disp.disagreement_source == "predict_proba"
    ref = DisagreementReliabilityDisplay.from_predictions(
        Y, 1.0 - (clf.predict_proba(X) ** 2).sum(axis=1)
    )
    np.testing.assert_allclose(disp.bin_predicted, ref.bin_predicted)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        asked = DisagreementReliabilityDisplay.from_estimator(
            clf, X, Y, response_method="predict_proba"
        )
    np.testing.assert_allclose(asked.bin_predicted, ref.bin_predicted)
    with pytest.raises(ValueError, match="has no predict_disagreement"):
        DisagreementReliabilityDisplay.from_estimator(
            clf, X, Y, response_method="predict_disagreement"
        )


def _logit_problem(n=400, seed=0):
    """Logit-like features of a known scale and the histograms they drive."""
    Z, Y, _ = make_label_histograms(n, 3, 5, concentration=3.0, random_state=seed)
    return 4.0 * Z + 1.0, Y  # StandardScaler has something to undo


def test_disagreement_display_reaches_through_a_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    Z, Y = _logit_problem()
    pipe = make_pipeline(StandardScaler(), AlphaCalibrator(random_state=0)).fit(Z, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no silent or noisy fallback
        disp = DisagreementReliabilityDisplay.from_estimator(pipe, Z, Y, name="p")
    assert disp.disagreement_source == "predict_disagreement"
    # the same φ by hand: scale, then the calibrator's own method
    phi = pipe[-1].predict_disagreement(pipe[0].transform(Z))
    ref = DisagreementReliabilityDisplay.from_predictions(Y, phi)
    np.testing.assert_allclose(disp.bin_predicted, ref.bin_predicted)
    assert disp.calibration_error == disagreement_calibration_error(Y, phi)
    # ... which is not the point prediction's 1 − Σf²
    point = predicted_disagreement(pipe.predict_proba(Z))
    assert np.abs(np.sort(phi) - np.sort(point)).max() > 1e-2


def test_disagreement_display_reaches_an_ensemble_in_a_pipeline(synthetic):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_hcal.calibration import TestTimeAugmentationClassifier

    X, Y, _ = synthetic

    def jitter(X, random_state):
        return X + 0.5 * random_state.standard_normal(X.shape)

    tta = TestTimeAugmentationClassifier(
        LogisticRegression(), augment=jitter, n_samples=5, random_state=0
    )
    pipe = make_pipeline(StandardScaler(), tta).fit(X, Y)
    disp = DisagreementReliabilityDisplay.from_estimator(pipe, X, Y)
    assert disp.disagreement_source == "predict_disagreement"
    F = pipe[-1].predict_proba_samples(pipe[0].transform(X))
    phi = (1.0 - (F**2).sum(axis=-1)).mean(axis=0)  # eq. 72 by hand
    ref = DisagreementReliabilityDisplay.from_predictions(Y, phi)
    np.testing.assert_allclose(disp.bin_predicted, ref.bin_predicted)
    # an (S, n, K) stack of members gives the same diagram
    stacked = DisagreementReliabilityDisplay.from_predictions(Y, F)
    np.testing.assert_allclose(stacked.bin_predicted, ref.bin_predicted)


def test_hidden_predict_disagreement_is_an_error():
    from sklearn.model_selection import GridSearchCV, KFold

    Z, Y = _logit_problem(200)
    grid = GridSearchCV(
        AlphaCalibrator(random_state=0), {"alpha_reg": [0.005]}, cv=KFold(2)
    ).fit(Z, Y)
    with pytest.raises(ValueError, match="best_estimator_"):
        DisagreementReliabilityDisplay.from_estimator(grid, Z, Y)
    disp = DisagreementReliabilityDisplay.from_estimator(grid.best_estimator_, Z, Y)
    assert disp.disagreement_source == "predict_disagreement"


def test_float32_softmax_row_does_not_crash_the_diagram():
    # A float32 softmax row [1, 2e-8, 0] passes the row-sum check
    # but 1 − Σp² is −4.4e-16 in float64 arithmetic.
    P = np.array(
        [[1.0, 2e-8, 0.0], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.4, 0.4, 0.2]],
        dtype=np.float32,
    )
    Y = np.array([[5, 0, 0], [1, 3, 1], [0, 1, 4], [2, 2, 1]])
    phi = 1.0 - np.sum(P.astype(np.float64) ** 2, axis=1)
    assert phi[0] < 0  # the input of the crash
    disp = DisagreementReliabilityDisplay.from_predictions(Y, P, n_bins=5)
    assert disp.bin_counts[0] == 1 and disp.bin_predicted[0] == 0.0
    # The command line hands the display that φ itself (1-D). Values within
    # 1e-8 of [0, 1] are clipped by the metrics layer (developer guide §tolerances).
    again = DisagreementReliabilityDisplay.from_predictions(Y, phi, n_bins=5)
    np.testing.assert_array_equal(again.bin_counts, disp.bin_counts)
    assert again.bin_predicted[0] == 0.0
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        DisagreementReliabilityDisplay.from_predictions(Y, phi - 1e-3)


def test_disagreement_bad_inputs():
    Y = np.array([[3, 1], [1, 3]])
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        DisagreementReliabilityDisplay.from_predictions(Y, [0.2, 1.5])
    with pytest.raises(ValueError, match="samples"):
        DisagreementReliabilityDisplay.from_predictions(Y, [0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="classes"):
        DisagreementReliabilityDisplay.from_predictions(Y, np.full((2, 3), 1 / 3))


def test_reliability_confidence_a_rounding_error_above_one():
    # Rows may sum to 1 within 1e-6, so the top probability can exceed 1 by a
    # hair; the diagram still has n_bins bins and draws that item in the last.
    Y = np.array([[3, 0], [1, 2], [2, 1]])
    P = np.array([[1.0 + 4e-7, 0.0], [0.3, 0.7], [0.55, 0.45]])
    disp = MajorityReliabilityDisplay.from_predictions(Y, P, n_bins=10)
    assert disp.bin_counts.shape == (10,)
    assert disp.bin_counts[-1] == 1 and disp.bin_counts.sum() == 3
    plt.close("all")


# --------------------------------------------------------------------------- #
# classes by name in the displays (developer guide §class-names)
# --------------------------------------------------------------------------- #
def _brute_force_ece(Y, P, n_bins=10):
    """Confidence ECE against the first-maximum majority, item by item."""
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        members = [i for i in range(len(P)) if lo < P[i].max() <= hi]
        if members:
            acc = np.mean([P[i].argmax() == Y[i].argmax() for i in members])
            conf = np.mean([P[i].max() for i in members])
            total += len(members) * abs(acc - conf)
    return total / len(P)


@pytest.fixture(scope="module")
def string_classifier():
    """A classifier on string labels a, b, c and its one-hot histograms."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    y = np.array(list("abc"))[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)]
    clf = LogisticRegression().fit(X, y)
    onehot = 3 * (y[:, None] == clf.classes_).astype(int)  # columns a, b, c
    return X, y, clf, onehot


def test_displays_from_estimator_match_named_histograms_by_name(string_classifier):
    # Regression: from_estimator handed predict_proba to the displays without
    # its classes, so a DataFrame y in another column order was read by
    # position (ECE 0.648 instead of 0.046, no warning).
    pd = pytest.importorskip("pandas")
    X, _, clf, onehot = string_classifier
    frame = pd.DataFrame(onehot, columns=clf.classes_)[["c", "a", "b"]]
    want = _brute_force_ece(onehot, clf.predict_proba(X))
    disp = MajorityReliabilityDisplay.from_estimator(clf, X, frame)
    assert disp.ece == pytest.approx(want, rel=1e-12)
    # the marginal panels are titled in y's class order, each with its data
    marg = HumanModelMarginalDisplay.from_estimator(clf, X, frame)
    assert marg.class_names == ["c", "a", "b"]
    model = marg.panels[("class", 0)]["LogisticRegression"]
    np.testing.assert_allclose(model, clf.predict_proba(X)[:, 2])


def test_displays_map_1d_labels_through_classes(string_classifier):
    # Regression: 1-D labels of a subset lacking a class could not be matched
    # (an error asking for labels=, which the displays did not take).
    X, y, clf, onehot = string_classifier
    keep = y != "c"
    want = _brute_force_ece(onehot[keep], clf.predict_proba(X[keep]))
    disp = MajorityReliabilityDisplay.from_estimator(clf, X[keep], y[keep])
    assert disp.ece == pytest.approx(want, rel=1e-12)
    # from_predictions takes labels= like the metric functions
    P = clf.predict_proba(X[keep])[:, [2, 0, 1]]
    disp = MajorityReliabilityDisplay.from_predictions(
        y[keep], P, labels=["c", "a", "b"]
    )
    assert disp.ece == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="labels="):
        MajorityReliabilityDisplay.from_predictions(y[keep], P)
    errors = InstanceErrorDisplay.from_predictions(
        y[keep], P, labels=["c", "a", "b"], kind="dist_ce"
    )
    p_hat = onehot[keep] / 3
    tvd = 0.5 * np.abs(p_hat - clf.predict_proba(X[keep])).sum(axis=1)
    np.testing.assert_allclose(errors.errors["Classifier"], tvd, rtol=1e-12)


def test_displays_refuse_differently_named_predictions_of_unnamed_labels(
    string_classifier,
):
    # y_true without class names and two predictions naming their columns in
    # different orders: which order y_true follows is a guess.
    pd = pytest.importorskip("pandas")
    X, _, clf, onehot = string_classifier
    P = clf.predict_proba(X)
    preds = {
        "abc": pd.DataFrame(P, columns=list("abc")),
        "cab": pd.DataFrame(P[:, [2, 0, 1]], columns=list("cab")),
    }
    with pytest.raises(ValueError, match="ambiguous"):
        InstanceErrorDisplay.from_predictions(onehot, preds)
    # named labels make it unambiguous: both are the same classifier
    disp = InstanceErrorDisplay.from_predictions(
        pd.DataFrame(onehot, columns=list("abc")), preds, kind="dist_ce"
    )
    np.testing.assert_allclose(disp.errors["abc"], disp.errors["cab"], rtol=1e-12)
