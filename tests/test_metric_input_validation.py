"""Bad input to the Baan / ChaosNLI metrics gives a clear, named error."""

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_hcal.metrics import (
    classwise_expected_calibration_error,
    distribution_calibration_error,
    entropy_calibration_error,
    expected_calibration_error,
    histogram_log_loss,
    jensen_shannon_distance,
    kl_divergence,
    majority_accuracy_score,
    ranking_calibration_score,
)

ALL_METRICS = [
    distribution_calibration_error,
    entropy_calibration_error,
    ranking_calibration_score,
    jensen_shannon_distance,
    kl_divergence,
    histogram_log_loss,
    majority_accuracy_score,
    expected_calibration_error,
    classwise_expected_calibration_error,
]

Y = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1]])
P = np.array([[0.6, 0.3, 0.1], [0.1, 0.5, 0.4], [0.3, 0.3, 0.4]])


def _with(A, row, col, value):
    A = np.array(A, dtype=float)
    A[row, col] = value
    return A


BAD_INPUTS = {
    "nan_counts": (_with(Y, 0, 0, np.nan), P, "y_true.*NaN"),
    "inf_counts": (_with(Y, 1, 2, np.inf), P, "y_true.*NaN or infinity"),
    "nan_prob": (Y, _with(P, 0, 0, np.nan), "y_prob.*NaN"),
    "inf_prob": (Y, _with(P, 2, 1, -np.inf), "y_prob.*NaN or infinity"),
    "negative_counts": (_with(Y, 0, 2, -1), P, "y_true must be non-negative"),
    "fractional_counts": (_with(Y, 0, 0, 2.5), P, "y_true must hold integer"),
    "zero_row": (_with(_with(Y, 1, 1, 0), 1, 2, 0), P, "y_true has rows with zero"),
    "prob_rows_not_one": (Y, _with(P, 0, 0, 0.7), "y_prob rows must sum to 1"),
    "negative_prob": (Y, _with(_with(P, 0, 0, -0.1), 0, 1, 1.0), "y_prob.*non-neg"),
    "class_mismatch": (Y, P[:, :2] / P[:, :2].sum(1, keepdims=True), "y_prob has 2"),
    "one_d_prob_not_binary": (Y, np.array([0.2, 0.5, 0.9]), "y_prob is 1-D"),
    "one_d_prob_out_of_range": (Y[:, :2], np.array([0.2, 1.5, 0.9]), "y_prob.*0, 1"),
    "empty_counts": (np.empty((0, 3)), np.empty((0, 3)), "y_true is empty"),
    "empty_labels": (np.array([]), np.empty((0, 3)), "y_prob is empty"),
    "n_samples_mismatch": (Y[:2], P, "different numbers of samples"),
    "too_many_labels": (
        np.array([0, 1, 2, 3]),
        np.tile(P[0], (4, 1)),
        "y_true holds 4 distinct labels",
    ),
    "non_numeric": (np.array([["a", "b", "c"]] * 3), P, "y_true must be numeric"),
}


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_raises_named_value_error(metric, case):
    y_true, y_prob, match = BAD_INPUTS[case]
    with pytest.raises(ValueError, match=match):
        metric(y_true, y_prob)


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda f: f.__name__)
def test_bad_counts_keyword_is_named_counts(metric):
    labels = np.argmax(Y, axis=1)
    with pytest.raises(ValueError, match="counts must be non-negative"):
        metric(labels, P, counts=_with(Y, 0, 0, -2))
    with pytest.raises(ValueError, match="counts and y_prob have different numbers"):
        metric(labels, P, counts=Y[:2])


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda f: f.__name__)
def test_probability_rows_accepted_but_not_near_misses(metric):
    # Human distributions summing to one are fine; 0.999 is neither counts nor
    # probabilities.
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    assert np.isfinite(metric(p_hat, P))
    with pytest.raises(ValueError, match="y_true .*summing to 1"):
        metric(_with(p_hat, 0, 0, p_hat[0, 0] - 1e-3), P)


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda f: f.__name__)
def test_non_array_arguments_are_rejected(metric):
    with pytest.raises(InvalidParameterError, match="y_true"):
        metric("not an array", P)
    with pytest.raises(InvalidParameterError, match="y_prob"):
        metric(Y, None)


BAD_KEYWORDS = [
    (ranking_calibration_score, {"ties": "bogus"}, "ties"),
    (ranking_calibration_score, {"ties": None}, "ties"),
    (majority_accuracy_score, {"ties": "bogus"}, "ties"),
    (majority_accuracy_score, {"ties": "strict"}, "ties"),
    (expected_calibration_error, {"n_bins": 0}, "n_bins"),
    (expected_calibration_error, {"n_bins": 2.5}, "n_bins"),
    (classwise_expected_calibration_error, {"n_bins": 0}, "n_bins"),
    (classwise_expected_calibration_error, {"n_bins": -3}, "n_bins"),
    (jensen_shannon_distance, {"base": 1}, "base"),
    (jensen_shannon_distance, {"base": 0.5}, "base"),
    (jensen_shannon_distance, {"base": -2}, "base"),
    (jensen_shannon_distance, {"squared": "yes"}, "squared"),
    (entropy_calibration_error, {"base": 0}, "base"),
    (entropy_calibration_error, {"absolute": "no"}, "absolute"),
    (kl_divergence, {"eps": 0}, "eps"),
    (kl_divergence, {"eps": 1.0}, "eps"),
    (histogram_log_loss, {"eps": -1e-3}, "eps"),
]


@pytest.mark.parametrize(
    "metric, kwargs, name",
    BAD_KEYWORDS,
    ids=[f"{f.__name__}-{k}" for f, k, _ in BAD_KEYWORDS],
)
def test_invalid_keyword_raises_invalid_parameter_error(metric, kwargs, name):
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        metric(Y, P, **kwargs)
    assert issubclass(InvalidParameterError, ValueError)


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda f: f.__name__)
def test_keywords_are_keyword_only(metric):
    with pytest.raises(TypeError):
        metric(Y, P, Y)
