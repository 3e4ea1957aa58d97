"""Bad inputs to the estimators: one parametrised matrix.

Each case is an input that gave a wrong result, a crash or an unhelpful
message before the calibration core. Errors must name the argument and the
offending row or value; inputs that can be handled safely (logits of ±1e300,
sparse histograms) must give the same answer as the equivalent sane input.
"""

import functools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from scipy.special import softmax
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

from sklearn_hcal import (
    AlphaCalibrator,
    MatrixScaler,
    SoftLabelClassifier,
    TemperatureScaler,
    VectorScaler,
)
from sklearn_hcal.datasets import make_label_histograms

CALIBRATORS = [TemperatureScaler, VectorScaler, MatrixScaler, AlphaCalibrator]

# logits scaled so that the largest is 1e300: finite, but their squares
# overflow
Z, Y, _ = make_label_histograms(400, 3, 5, temperature=2.0, random_state=0)
HUGE = 1e300 / np.abs(Z).max()


def _no_runtime_warnings():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("error", RuntimeWarning)
    return ctx


# -- logits of ±1e300: rescaled exactly, no overflow ----------------------------------
def test_huge_logits_temperature_scales_with_them():
    ctx = _no_runtime_warnings()
    try:
        big = TemperatureScaler().fit(Z * HUGE, Y)
        P = big.predict_proba(Z * HUGE)
    finally:
        ctx.__exit__(None, None, None)
    ref = TemperatureScaler().fit(Z, Y)
    # softmax(HUGE·z / T') = softmax(z / T) for T' = HUGE·T
    assert big.temperature_ == pytest.approx(HUGE * ref.temperature_, rel=1e-9)
    np.testing.assert_allclose(P, ref.predict_proba(Z), atol=1e-9)


def test_huge_logits_vector_scaling_is_scale_equivariant():
    ctx = _no_runtime_warnings()
    try:
        big = VectorScaler().fit(Z * HUGE, Y)
        P = big.predict_proba(Z * HUGE)
    finally:
        ctx.__exit__(None, None, None)
    ref = VectorScaler().fit(Z, Y)
    # v·z + b has the same minimiser with v / HUGE (no penalty on v)
    np.testing.assert_allclose(P, ref.predict_proba(Z), atol=1e-6)
    assert P.max() < 0.999  # not the one-hot rows of the overflowing fit


def test_huge_logits_matrix_scaling_loses_only_its_off_diagonal_penalty():
    ctx = _no_runtime_warnings()
    try:
        P = MatrixScaler().fit(Z * HUGE, Y).predict_proba(Z * HUGE)
    finally:
        ctx.__exit__(None, None, None)
    # ODIR penalises W; on scores HUGE times larger W is HUGE times smaller,
    # so the penalty is reg_weight / HUGE² = 0: the unpenalised fit on Z
    ref = MatrixScaler(reg_weight=0.0).fit(Z, Y)
    np.testing.assert_allclose(P, ref.predict_proba(Z), atol=1e-6)


def test_huge_logits_alpha_features_are_standardised_exactly():
    ctx = _no_runtime_warnings()
    try:
        big = AlphaCalibrator().fit(Z * HUGE, Y)
        a0 = big.predict_concentration(Z * HUGE)
    finally:
        ctx.__exit__(None, None, None)
    assert np.all(np.isfinite(big.feature_scale_))
    np.testing.assert_allclose(big.feature_scale_, HUGE * Z.std(axis=0), rtol=1e-12)
    # the same fit with the features given at unit scale (f is softmax(HUGE·z)
    # in both)
    ref = AlphaCalibrator(features=lambda X: X / HUGE).fit(Z * HUGE, Y)
    np.testing.assert_allclose(a0, ref.predict_concentration(Z * HUGE), rtol=1e-6)
    assert np.ptp(np.log(a0)) > 0.1  # not a constant α0


# -- one rule for the number of samples ----------------------------------------------
def _modes():
    clf = LogisticRegression().fit(Z, Y.argmax(axis=1))
    return {"estimator=None": None, "frozen": FrozenEstimator(clf)}


@pytest.mark.parametrize("mode", ["estimator=None", "frozen"])
@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_a_single_item_is_refused_by_every_calibrator(Cal, mode):
    with pytest.raises(ValueError, match=r"1 sample"):
        Cal(_modes()[mode]).fit(Z[:1], Y[:1])
    Cal(_modes()[mode]).fit(Z[:2], Y[:2])  # two are enough


# -- cross-validation folds missing a class ---------------------------------------
@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_a_fold_missing_a_class_is_named(Cal):
    X = np.random.RandomState(0).randn(30, 2)
    y = np.array([0] * 12 + [1] * 12 + [2] * 6)  # class 2 only in the last fold
    with pytest.raises(
        ValueError, match=r"fold 4 lacks class\(es\) \[2\] of \[0, 1, 2\]"
    ):
        Cal(LogisticRegression(), cv=KFold(5)).fit(X, y)


# -- targets ------------------------------------------------------------------------
def test_sparse_histogram_to_soft_label_classifier_is_supported():
    X, H, _ = make_label_histograms(120, 3, 5, n_features=3, random_state=1)
    dense = SoftLabelClassifier(LogisticRegression()).fit(X, H)
    for fmt in (sparse.csr_matrix, sparse.csr_array):
        sp = SoftLabelClassifier(LogisticRegression()).fit(X, fmt(H))
        np.testing.assert_array_equal(sp.predict_proba(X), dense.predict_proba(X))
        assert sp.score(X, fmt(H)) == dense.score(X, H)
    cal = TemperatureScaler().fit(Z, sparse.csr_matrix(Y))
    assert cal.temperature_ == TemperatureScaler().fit(Z, Y).temperature_


@pytest.mark.parametrize(
    "Est", [SoftLabelClassifier, TemperatureScaler, AlphaCalibrator]
)
def test_ragged_targets_name_the_argument(Est):
    est = Est(LogisticRegression()) if Est is SoftLabelClassifier else Est()
    ragged = [[1, 2, 0]] * 3 + [[1, 2]]
    with pytest.raises(ValueError, match="y could not be read.*different lengths"):
        est.fit(Z[:4], ragged)


@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_fractional_counts_and_alpha_needing_counts(Cal):
    Yf = Y.astype(float)
    Yf[2, 0] += 0.5
    if Cal is AlphaCalibrator:
        with pytest.raises(ValueError, match="y must hold non-negative integer"):
            Cal().fit(Z, Yf)
    else:  # the scalers take rows of probabilities, not fractional counts
        with pytest.raises(ValueError, match="y must hold integer label counts"):
            Cal().fit(Z, Yf)


@pytest.mark.parametrize(
    "Est", [SoftLabelClassifier, TemperatureScaler, AlphaCalibrator]
)
def test_classes_parameter_is_checked(Est):
    est = Est(LogisticRegression()) if Est is SoftLabelClassifier else Est()
    with pytest.raises(ValueError, match=r"classes must be .*distinct.*\['a', 'a'"):
        est.set_params(classes=["a", "a", "b"]).fit(Z, Y)
    frame = pd.DataFrame(Y, columns=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"\['a', 'b', 'c'\].*\['a', 'b', 'x'\]"):
        est.set_params(classes=["a", "b", "x"]).fit(Z, frame)
    with pytest.raises(ValueError, match=r"labels \['d'\] .* not among the classes"):
        labels = np.array(list("abcd"))[Z.argmax(1) + (Z[:, 0] > 2)]
        est.set_params(classes=["a", "b", "c"]).fit(Z, labels)


def test_soft_label_classifier_names_classes_of_labels_and_arrays():
    X, H, _ = make_label_histograms(90, 3, 5, n_features=3, random_state=2)
    clf = SoftLabelClassifier(LogisticRegression(), classes=["x", "y", "z"]).fit(X, H)
    np.testing.assert_array_equal(clf.classes_, ["x", "y", "z"])
    frame = pd.DataFrame(H, columns=["x", "y", "z"])[["z", "x", "y"]]
    again = SoftLabelClassifier(LogisticRegression(), classes=["x", "y", "z"])
    np.testing.assert_allclose(
        again.fit(X, frame).predict_proba(X), clf.predict_proba(X)
    )
    # labels with a class that never occurs still get its column
    labels = np.where(H[:, 0] > H[:, 2], "x", "z")
    lab = SoftLabelClassifier(LogisticRegression(), classes=["x", "y", "z"]).fit(
        X, labels
    )
    assert lab.predict_proba(X).shape == (90, 3)
    np.testing.assert_array_equal(lab.predict_proba(X)[:, 1], 0.0)


def test_unnamed_integer_labels_with_missing_classes_are_ambiguous():
    # estimator=None: X has 3 score columns, the labels name only 2 classes;
    # integer labels are names, not column positions (developer guide §class-names)
    y = np.where(Z[:, 0] > 0, 0, 2)
    with pytest.raises(ValueError, match=r"2 distinct labels \[0, 2\].*classes="):
        TemperatureScaler().fit(Z, y)
    fitted = TemperatureScaler(classes=[0, 1, 2]).fit(Z, y)
    np.testing.assert_array_equal(fitted.classes_, [0, 1, 2])


def test_counts_and_y_of_different_lengths():
    with pytest.raises(ValueError, match="counts and y have different numbers"):
        TemperatureScaler().fit(Z, Y.argmax(axis=1)[:-1], counts=Y)
    with pytest.raises(ValueError, match="counts and y have different numbers"):
        SoftLabelClassifier(LogisticRegression()).fit(Z, Y.argmax(1)[:-1], counts=Y)


def test_probability_input_required_at_prediction_names_the_row():
    P = softmax(Z, axis=1)
    cal = TemperatureScaler().fit(P, Y)
    bad = P.copy()
    bad[7] = [0.7, 0.7, 0.1]
    with pytest.raises(ValueError, match=r"row 7 is \[0\.7"):
        cal.predict_proba(bad)


def test_crossfit_with_weights_the_classifier_cannot_take_warns():
    from sklearn.neighbors import KNeighborsClassifier

    w = np.random.RandomState(0).uniform(0.5, 2, size=len(Z))
    with pytest.warns(UserWarning, match="used by the calibrator only"):
        TemperatureScaler(KNeighborsClassifier(), cv=2).fit(
            Z, Y.argmax(axis=1), sample_weight=w
        )


def test_ensembles_are_not_crossfitted():
    from sklearn_hcal import TestTimeAugmentationClassifier

    tta = TestTimeAugmentationClassifier(
        LogisticRegression(), augment=lambda X, random_state: X, n_samples=2
    )
    with pytest.raises(ValueError, match=r"ensemble.*FrozenEstimator\(TestTime"):
        AlphaCalibrator(tta, cv=2).fit(Z, Y)


# -- non-finite scores and new labels: the argument, the row and the value ----------
@pytest.mark.parametrize("value", [np.nan, -np.inf])
@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_non_finite_scores_name_the_row_and_the_value(Cal, value):
    bad = Z.copy()
    bad[5, 1] = value
    pattern = rf"X contains NaN or infinity \(row 5, column 1: {value!r}\)"
    with pytest.raises(ValueError, match=pattern):
        Cal().fit(bad, Y)
    fitted = Cal().fit(Z, Y)
    with pytest.raises(ValueError, match=pattern):
        fitted.predict_proba(bad)


@functools.cache
def _alpha_fitted():
    return AlphaCalibrator().fit(Z, Y)


@pytest.mark.parametrize(
    "value, shown", [(np.nan, "nan"), (-1.0, "-1.0"), (0.5, "0.5"), (np.inf, "inf")]
)
def test_bad_new_labels_name_the_row_the_class_and_the_value(value, shown):
    cal = _alpha_fitted()
    Y_new = Y.astype(float)
    Y_new[7, 2] = value
    with pytest.raises(
        ValueError, match=rf"Y_new must hold .*counts; row 7, class 2 is {shown}\b"
    ):
        cal.predict_posterior(Z, Y_new)
