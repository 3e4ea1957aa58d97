"""Bad inputs at the first natural call: each case is silently wrong, or
unhelpfully worded, on the code before this file.

* a DataFrame of human labels whose columns are not in ``classes_`` order,
  scored against a plain ``predict_proba`` array (metrics, report, Displays,
  ``hcal evaluate``);
* probability rows with an entry of ``-1e-15`` (rounding), read as logits by
  the calibrators' input detection;
* AlphaCalibrator whose sample weights drop every item with two or more
  labels;
* messages that named neither the argument nor the row and value.

Expected values come from plain numpy formulas (KL by hand), never from the
code under test.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from sklearn_hcal import (
    MatrixScaler,
    SoftLabelClassifier,
    TemperatureScaler,
    VectorScaler,
)
from sklearn_hcal.cli import main
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import (
    disagreement_squared_loss,
    expected_squared_loss,
    human_calibration_report,
    jensen_shannon_distance,
    kl_divergence,
    multilabel_manhattan_distance,
    ranked_probability_score_loss,
    wasserstein_distance,
)
from sklearn_hcal.report import CalibrationReport

NAMES = ["negative", "neutral", "positive"]  # sorted: classes_ order
SHUFFLED = ["positive", "negative", "neutral"]


def _kl(Y, P):
    """Mean KL(p̂ ‖ q) by hand (natural log, 0 log 0 = 0)."""
    p = Y / Y.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / P), 0.0)
    return float(terms.sum(axis=1).mean())


@pytest.fixture(scope="module")
def fitted():
    """A classifier trained on string labels: its predict_proba follows the
    sorted names; the histograms come as a DataFrame in another order."""
    X, Y, _ = make_label_histograms(
        1200, n_classes=3, n_annotations=5, n_features=5, random_state=0
    )
    clf = LogisticRegression().fit(X[:600], np.array(NAMES)[Y[:600].argmax(1)])
    assert list(clf.classes_) == list(NAMES)
    H = pd.DataFrame(Y[600:], columns=NAMES)
    return clf, X[600:], H, clf.predict_proba(X[600:])


# --------------------------------------------------------------------------- #
# 1. a named truth and a plain predict_proba array
# --------------------------------------------------------------------------- #
def test_issue_case_shuffled_frame_and_plain_array_raises(fitted):
    clf, X, H, P = fitted
    right = _kl(H.to_numpy(), P)
    wrong = _kl(H[SHUFFLED].to_numpy(), P)  # what the old code returned
    assert wrong > 3 * right  # the silent error is large, not rounding
    with pytest.raises(ValueError) as info:
        kl_divergence(H[SHUFFLED], P)
    msg = str(info.value)
    # both orders, the argument names and the way out
    for needle in (str(SHUFFLED), str(list(NAMES)), "y_true", "y_prob", "labels="):
        assert needle in msg, msg
    # labels= (or a named y_prob) gives the right value
    assert kl_divergence(H[SHUFFLED], P, labels=clf.classes_) == pytest.approx(right)
    named = pd.DataFrame(P, columns=clf.classes_)
    assert kl_divergence(H[SHUFFLED], named) == pytest.approx(right)


def test_sorted_frame_and_plain_array_stay_positional(fitted):
    _, _, H, P = fitted
    assert kl_divergence(H, P) == pytest.approx(_kl(H.to_numpy(), P))


def test_counts_frame_and_binary_and_unsortable_names():
    Y = np.array([[3, 1], [0, 2], [1, 1]])
    p1 = np.array([0.2, 0.7, 0.5])  # P(second class) of a classifier
    with pytest.raises(ValueError, match=r"counts names its classes \['yes', 'no'\]"):
        jensen_shannon_distance(
            [0, 1, 0], p1, counts=pd.DataFrame(Y, columns=["yes", "no"])
        )
    frame = pd.DataFrame(Y, columns=["yes", "no"])
    with pytest.raises(ValueError, match=r"sorted order \['no', 'yes'\]"):
        kl_divergence(frame, p1)
    mixed = pd.DataFrame(Y, columns=pd.Index([1, "a"], dtype=object))
    with pytest.raises(ValueError, match="mix types that do not sort"):
        kl_divergence(mixed, p1)


def test_ordinal_metrics_follow_the_same_rule():
    Y = np.array([[3, 1, 0], [0, 2, 2]])
    P = np.array([[0.5, 0.3, 0.2], [0.1, 0.4, 0.5]])
    likert = pd.DataFrame(Y, columns=["disagree", "neutral", "agree"])
    for metric in (wasserstein_distance, ranked_probability_score_loss):
        # positions of an unnamed P, and a scale of words: neither is guessed
        with pytest.raises(ValueError, match="labels=|order="):
            metric(likert, P)
        # labels= says the columns follow the frame, order= gives the scale
        got = metric(likert, P, labels=likert.columns, order=list(likert.columns))
        assert got == pytest.approx(metric(Y, P))


def test_disagreement_of_probabilities_does_not_depend_on_class_order():
    # 1 − Σ q² is the same in any class order: no class names needed
    Y = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1]])
    P = np.array([[0.5, 0.3, 0.2], [0.1, 0.4, 0.5], [0.3, 0.3, 0.4]])
    frame = pd.DataFrame(Y, columns=SHUFFLED)
    phi = 1.0 - (P**2).sum(axis=1)
    assert disagreement_squared_loss(frame, P) == pytest.approx(
        disagreement_squared_loss(Y, phi)
    )


def test_report_raises_and_labels_give_the_majority_accuracy(fitted):
    clf, _, H, P = fitted
    with pytest.raises(ValueError, match=r"y_true names its classes .*labels="):
        human_calibration_report(H[SHUFFLED], {"clf": P})
    report = human_calibration_report(
        H[SHUFFLED], {"clf": P}, metrics=["accuracy", "kl"], labels=clf.classes_
    )
    # ties go to the first column of y_true (the shuffled frame's order)
    majority = np.array(SHUFFLED)[H[SHUFFLED].to_numpy().argmax(1)]
    assert report.loc["clf", "accuracy"] == pytest.approx(
        np.mean(np.array(NAMES)[P.argmax(1)] == majority)
    )
    assert report.loc["clf", "kl"] == pytest.approx(_kl(H.to_numpy(), P))


@pytest.mark.parametrize(
    "function",
    ["instance_calibration_errors", "loss_decomposition", "metrics_by_agreement"],
)
@pytest.mark.filterwarnings(
    "ignore:.*agreement bins are empty:UserWarning"
)  # tiny data on purpose
def test_other_report_functions_follow_the_same_rule(fitted, function):
    import sklearn_hcal.metrics as metrics

    clf, _, H, P = fitted
    with pytest.raises(ValueError, match=r"y_true names its classes .*labels="):
        getattr(metrics, function)(H[SHUFFLED], P)
    # labels= gives the table of arrays aligned by hand (ties in the
    # majority are broken in the frame's column order, so keep that order)
    left = getattr(metrics, function)(H[SHUFFLED], P, labels=clf.classes_)
    by_hand = P[:, [list(clf.classes_).index(c) for c in SHUFFLED]]
    right = getattr(metrics, function)(H[SHUFFLED].to_numpy(), by_hand)
    np.testing.assert_allclose(
        np.asarray(left, dtype=float), np.asarray(right, dtype=float), equal_nan=True
    )


def test_displays_raise_on_a_shuffled_frame_and_a_plain_array(fitted):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_hcal.plotting import MajorityReliabilityDisplay

    clf, X, H, P = fitted
    with pytest.raises(ValueError, match=r"y_prob.*labels="):
        MajorityReliabilityDisplay.from_predictions(H[SHUFFLED], P)
    # from_estimator names the columns by classes_: matched by name
    MajorityReliabilityDisplay.from_estimator(clf, X, H[SHUFFLED])
    plt.close("all")


def _cli(capsys, *argv):
    status = main(["evaluate", *map(str, argv), "--format", "json"])
    return status, capsys.readouterr()


def test_cli_csv_names_and_npy_predictions(capsys, tmp_path, fitted):
    clf, _, H, P = fitted
    H[SHUFFLED].to_csv(tmp_path / "counts.csv", index=False)
    np.save(tmp_path / "p.npy", P)
    status, out = _cli(capsys, tmp_path / "counts.csv", "--pred", tmp_path / "p.npy")
    assert status == 2
    assert "--labels" in out.err and str(SHUFFLED) in out.err
    assert str(list(NAMES)) in out.err
    status, out = _cli(
        capsys,
        tmp_path / "counts.csv",
        "--pred",
        tmp_path / "p.npy",
        "--labels",
        ",".join(clf.classes_),
        "--metrics",
        "kl",
    )
    assert status == 0, out.err
    import json

    assert json.loads(out.out)["p"]["kl_divergence"] == pytest.approx(
        _kl(H.to_numpy(), P)
    )
    status, out = _cli(
        capsys, tmp_path / "counts.csv", "--pred", tmp_path / "p.npy", "--labels", "a,b"
    )
    assert status == 2 and "--labels names 2 classes" in out.err


# --------------------------------------------------------------------------- #
# 2. an entry of -1e-15 is rounding, for the input detection too
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def rounded():
    _, Y, Q = make_label_histograms(400, n_classes=3, n_annotations=5, random_state=1)
    P = 0.7 * Q + 0.3 / 3  # under-confident probabilities
    R = P.copy()
    # 1 - (p1 + p2) computed in float64: one entry a hair below 0
    R[0] = [0.4, 0.6 + 1e-15, -1e-15]
    P[0] = [0.4, 0.6, 0.0]
    return Y, P, R


@pytest.mark.parametrize("calibrator", [TemperatureScaler, VectorScaler, MatrixScaler])
def test_calibrators_read_rounded_probabilities_as_probabilities(rounded, calibrator):
    Y, P, R = rounded
    clean = calibrator().fit(P, Y)
    cal = calibrator().fit(R, Y)
    assert clean.input_type_ == "proba"
    assert cal.input_type_ == "proba"
    np.testing.assert_allclose(
        cal.predict_proba(R[1:]), clean.predict_proba(P[1:]), atol=1e-6
    )


@pytest.mark.filterwarnings(
    "ignore:L-BFGS did not reach:UserWarning"
)  # max_iter=5 on purpose
def test_alpha_calibrator_reads_rounded_probabilities(rounded):
    pytest.importorskip("torch")
    from sklearn_hcal import AlphaCalibrator

    Y, _, R = rounded
    cal = AlphaCalibrator(max_iter=5, random_state=0).fit(R, Y)
    assert cal.input_type_ == "proba"
    f = cal.predict_proba(R)
    assert np.all(f >= 0) and np.allclose(f.sum(axis=1), 1.0)


def test_metrics_accept_rounding_below_zero_and_refuse_more(rounded):
    Y, P, R = rounded
    assert kl_divergence(Y, R) == pytest.approx(_kl(Y, np.maximum(P, 1e-12)))
    assert np.isfinite(jensen_shannon_distance(Y, R))
    bad = R.copy()
    bad[0] = [0.4, 0.601, -1e-3]
    with pytest.raises(ValueError, match=r"row 0, column 2: -0\.001"):
        kl_divergence(Y, bad)
    # and a calibrator reads that as logits, as before
    assert TemperatureScaler().fit(bad, Y).input_type_ == "logits"
    with pytest.raises(ValueError, match=r"X must hold probabilities.*row 0"):
        TemperatureScaler(input="proba").fit(bad, Y)


# --------------------------------------------------------------------------- #
# 3. AlphaCalibrator: weights that drop every multi-label item
# --------------------------------------------------------------------------- #
def test_alpha_zero_weights_on_every_multi_label_item_warn():
    pytest.importorskip("torch")
    from sklearn_hcal import AlphaCalibrator

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(60, 3))
    Y = np.eye(3, dtype=int)[rng.integers(0, 3, 60)]
    Y[:20] *= 3  # 20 items with three labels each
    weights = np.ones(60)
    weights[:20] = 0.0
    with pytest.warns(UserWarning, match="positive sample_weight"):
        cal = AlphaCalibrator(max_iter=5, random_state=0).fit(
            Z, Y, sample_weight=weights
        )
    # the same data unweighted learns from the multi-label items: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.filterwarnings("ignore", message=".*(converge|iteration).*")
        AlphaCalibrator(max_iter=5, random_state=0).fit(Z, Y)
    assert np.allclose(cal.predict_concentration(Z), 1.0, rtol=0.05)


# --------------------------------------------------------------------------- #
# 4. messages naming the argument, the row and the value
# --------------------------------------------------------------------------- #
def _with_nan(P, row):
    P = np.array(P, dtype=float)
    P[row, 1] = np.nan
    return P


X4 = np.random.default_rng(0).normal(size=(6, 2))
Y4 = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1], [2, 0, 2], [0, 3, 1], [1, 2, 1]])
P4 = np.full((6, 3), 1 / 3)


@pytest.mark.parametrize(
    "call, pattern",
    [
        (
            lambda: TemperatureScaler(LogisticRegression(), cv=2).fit(
                X4, Y4.argmax(1), counts=Y4[:5]
            ),
            r"counts and y have different numbers of samples: 5 and 6",
        ),
        (
            lambda: SoftLabelClassifier(LogisticRegression()).fit(
                X4, Y4.argmax(1), counts=Y4[:5]
            ),
            r"counts and y have different numbers of samples: 5 and 6",
        ),
        (
            lambda: TemperatureScaler(LogisticRegression(), cv=2).fit(
                X4, counts=Y4[:5]
            ),
            r"X and counts have different numbers of samples: 6 and 5",
        ),
        (
            lambda: multilabel_manhattan_distance(
                [[1, 2], [0, 1]], [[0.5, 0.5], [0.5, 0.5]], n_annotators=[2, 0]
            ),
            r"n_annotators must hold positive .*row 1 is 0\.0",
        ),
        (
            lambda: multilabel_manhattan_distance(
                [[1, 2], [0, 1]], [[0.5, 0.5], [0.5, 0.5]], n_annotators=[2, 2, 2]
            ),
            r"n_annotators must hold one number .* 2 items, got shape \(3,\)",
        ),
        (
            lambda: multilabel_manhattan_distance([[1, np.nan]], [[0.5, 0.5]]),
            r"y_true contains NaN or infinity \(row 0, label 1: nan\)",
        ),
        (
            lambda: multilabel_manhattan_distance(
                [[0.5, 0.5]], [[0.5, np.inf]], labels=["a", "b"]
            ),
            r"y_prob contains NaN or infinity \(row 0, label 1: inf\)",
        ),
        (
            lambda: multilabel_manhattan_distance(
                [[0.5, 0.5]], [[0.5, 0.5]], labels=["a", "a"]
            ),
            r"labels must name each class once; 'a' occurs more than once",
        ),
        (
            lambda: wasserstein_distance(Y4, P4, order=[0, 0, 1]),
            r"order must name each class once; 0 occurs more than once",
        ),
        (
            lambda: ranked_probability_score_loss(
                pd.DataFrame(Y4, columns=list("abc")),
                pd.DataFrame(P4, columns=list("abc")),
                order=["a", "b", "a"],
            ),
            r"order must name each class once; 'a' occurs more than once",
        ),
        (
            lambda: expected_squared_loss(Y4, P4, sample_weight=[1, 1, -2, 1, 1, 1]),
            r"sample_weight must hold non-negative item weights; row 2 is -2\.0",
        ),
        (
            lambda: expected_squared_loss(
                Y4, P4, sample_weight=[1, np.nan, 1, 1, 1, 1]
            ),
            r"sample_weight contains NaN or infinity \(row 1: nan\)",
        ),
        (
            lambda: SoftLabelClassifier(LogisticRegression()).fit(
                X4, Y4, sample_weight=[1, 1, 1, 1, np.inf, 1]
            ),
            r"sample_weight contains NaN or infinity \(row 4: inf\)",
        ),
        (
            lambda: TemperatureScaler(LogisticRegression(), cv=2).fit(
                X4, Y4, sample_weight=[1, 1, 1, -0.5, 1, 1]
            ),
            r"sample_weight must hold non-negative item weights; row 3 is -0\.5",
        ),
        (
            lambda: TemperatureScaler(FrozenEstimator(_frozen_clf())).fit(
                X4, Y4, sample_weight=[1, 1, 1, 1, 1]
            ),
            r"sample_weight has 5 entries but there are 6 items",
        ),
        (
            # a report's classifier given in a dict is named by its key
            lambda: CalibrationReport(
                human_calibration_report(Y4, {"m": P4}, metrics=["jsd"]),
                y_true=Y4,
                predictions={"m": _with_nan(P4, 4)},
            ).to_html(figures=False),
            r"predictions\['m'\] contains NaN or infinity \(row 4, column 1: nan\)",
        ),
        (
            lambda: CalibrationReport.from_predictions(Y4, {"m": _with_nan(P4, 4)}),
            r"predictions\['m'\] contains NaN or infinity \(row 4, column 1: nan\)",
        ),
        (
            lambda: human_calibration_report(Y4, {"m": _with_nan(P4, 4)}),
            r"predictions\['m'\] contains NaN or infinity \(row 4, column 1: nan\)",
        ),
    ],
    ids=[
        "counts_vs_y_calibrator",
        "counts_vs_y_soft_label",
        "X_vs_counts",
        "n_annotators_zero",
        "n_annotators_length",
        "multilabel_nan_truth",
        "multilabel_inf_prob",
        "multilabel_repeated_label",
        "order_repeated_int",
        "order_repeated_name",
        "sample_weight_negative_metric",
        "sample_weight_nan_metric",
        "sample_weight_inf_fit",
        "sample_weight_negative_fit",
        "sample_weight_length",
        "report_table_prediction_by_key",
        "report_from_predictions_by_key",
        "report_function_prediction_by_key",
    ],
)
def test_message_names_argument_and_row(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


def _frozen_clf():
    return LogisticRegression().fit(X4, Y4.argmax(1))
