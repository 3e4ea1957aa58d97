"""Majority-label metrics: accuracy with tie rules, ECE and classwise ECE."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score

from sklearn_hcal.metrics import (
    classwise_expected_calibration_error,
    expected_calibration_error,
    majority_accuracy_score,
)
from sklearn_hcal.metrics._majority import _majority_correct_per_item
from tests.metrics._registered import metric_functions

#: The majority-label metrics, from the registry.
MAJ_METRICS = metric_functions(family="_majority")


def _random_problem(rng, n=60, k=3, n_ann=7):
    Y = rng.multinomial(n_ann, np.ones(k) / k, size=n)
    P = rng.dirichlet(np.ones(k), size=n)
    return Y, P


# --------------------------------------------------------------------------- #
# Independent loop implementations (explicit bin edges, lo < c <= hi)
# --------------------------------------------------------------------------- #
def _ece_loop(conf, correct, n_bins):
    edges = np.linspace(0, 1, n_bins + 1)
    total, n_binned = 0.0, 0
    for lo, hi in zip(edges[:-1], edges[1:]):
        in_bin = (conf > lo) & (conf <= hi)
        if in_bin.any():
            total += in_bin.sum() * abs(correct[in_bin].mean() - conf[in_bin].mean())
            n_binned += in_bin.sum()
    return total / n_binned if n_binned else 0.0


def _classwise_loop(Y, P, n_bins):
    majority = np.argmax(Y, axis=1)
    return np.mean(
        [
            _ece_loop(P[:, k], (majority == k).astype(float), n_bins)
            for k in range(P.shape[1])
        ]
    )


# --------------------------------------------------------------------------- #
# Majority accuracy
# --------------------------------------------------------------------------- #
def test_majority_accuracy_ties_hand():
    Y = np.array(
        [
            [5, 5, 0],  # human tie between 0 and 1
            [5, 5, 0],
            [1, 8, 1],  # clear majority 1
            [3, 3, 3],  # three-way tie
        ]
    )
    P = np.array(
        [
            [0.2, 0.7, 0.1],  # predicts 1: first-majority 0 (no), last 1 (yes), any yes
            [0.6, 0.3, 0.1],  # predicts 0: first yes, last no, any yes
            [0.1, 0.8, 0.1],  # correct under every rule
            [0.1, 0.1, 0.8],  # predicts 2: first no, last yes (both last), any yes
        ]
    )
    assert _majority_correct_per_item(Y, P, "first").tolist() == [
        False,
        True,
        True,
        False,
    ]
    assert _majority_correct_per_item(Y, P, "last").tolist() == [
        True,
        False,
        True,
        True,
    ]
    assert majority_accuracy_score(Y, P) == 0.5
    assert majority_accuracy_score(Y, P, ties="last") == 0.75
    assert majority_accuracy_score(Y, P, ties="any") == 1.0


def test_majority_accuracy_last_uses_last_argmax_of_prediction():
    # Model tie between 0 and 1: "last" predicts 1 = argsort(q)[-1].
    Y = [[1, 4, 0]]
    P = [[0.4, 0.4, 0.2]]
    assert np.argsort(P[0], kind="stable")[-1] == 1
    assert majority_accuracy_score(Y, P, ties="last") == 1.0
    assert majority_accuracy_score(Y, P, ties="first") == 0.0


def test_majority_accuracy_equals_accuracy_for_labels():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(4), size=50)
    y = rng.integers(0, 4, size=50)
    ref = accuracy_score(y, np.argmax(P, axis=1))
    assert majority_accuracy_score(y, P) == pytest.approx(ref)


def test_tie_rules_agree_without_ties_and_any_is_largest():
    rng = np.random.default_rng(1)
    Y, P = _random_problem(rng, n=300, n_ann=4)
    first = _majority_correct_per_item(Y, P, "first")
    last = _majority_correct_per_item(Y, P, "last")
    anyt = _majority_correct_per_item(Y, P, "any")
    no_tie = (Y == Y.max(axis=1, keepdims=True)).sum(axis=1) == 1
    assert np.array_equal(first[no_tie], last[no_tie])
    assert np.array_equal(first[no_tie], anyt[no_tie])
    assert np.all(anyt[first])
    assert (~no_tie).any()  # ties were exercised


# --------------------------------------------------------------------------- #
# ECE
# --------------------------------------------------------------------------- #
def test_ece_hand():
    # conf .6: item 1 correct, item 2 wrong -> |.5 - .6| = .1, weight 2/4
    # conf .9: items 3, 4 correct -> |1 - .9| = .1, weight 2/4
    Y = [[3, 1], [1, 3], [2, 0], [0, 5]]
    P = [[0.6, 0.4], [0.6, 0.4], [0.9, 0.1], [0.1, 0.9]]
    assert expected_calibration_error(Y, P) == pytest.approx(0.1)


def test_ece_bins_are_right_closed():
    # 0.7 lies in (0.6, 0.7] together with 0.65: acc .5, conf .675 -> 0.175.
    # A left-closed [0.7, 0.8) bin would give (|1 - .7| + |0 - .65|)/2 = 0.475.
    Y = [[1, 0, 0], [0, 1, 0]]
    P = [[0.7, 0.2, 0.1], [0.65, 0.25, 0.1]]
    assert expected_calibration_error(Y, P) == pytest.approx(0.175)
    # Confidence 1 sits in the last bin (0.9, 1].
    assert expected_calibration_error([[1, 0]], [[1.0, 0.0]]) == 0.0


def test_ece_single_bin_is_gap_of_means():
    rng = np.random.default_rng(2)
    Y, P = _random_problem(rng)
    correct = np.argmax(P, axis=1) == np.argmax(Y, axis=1)
    ref = abs(correct.mean() - P.max(axis=1).mean())
    assert expected_calibration_error(Y, P, n_bins=1) == pytest.approx(ref)


@pytest.mark.parametrize("n_bins", [5, 10, 15, 20])
def test_ece_matches_loop_implementation(n_bins):
    rng = np.random.default_rng(3)
    Y, P = _random_problem(rng, n=400, k=3, n_ann=5)
    # Multiples of 0.05 put many confidences exactly on bin edges.
    P_edge = rng.multinomial(20, [1 / 3] * 3, size=400) / 20.0
    for Q in (P, P_edge):
        correct = (np.argmax(Q, axis=1) == np.argmax(Y, axis=1)).astype(float)
        ref = _ece_loop(Q.max(axis=1), correct, n_bins)
        assert expected_calibration_error(Y, Q, n_bins=n_bins) == pytest.approx(
            ref, rel=1e-12, abs=1e-15
        )


# --------------------------------------------------------------------------- #
# Classwise ECE
# --------------------------------------------------------------------------- #
def test_classwise_ece_hand():
    # Class 0: confidences .9, .1 ; hits 1, 0 -> gaps .1, .1 -> .1
    # Class 1: same by symmetry -> .1
    Y = [[1, 0], [0, 1]]
    P = [[0.9, 0.1], [0.1, 0.9]]
    assert classwise_expected_calibration_error(Y, P) == pytest.approx(0.1)


def test_classwise_ece_zero_probability_is_unbinned():
    # Class 0: only item 1 binned (q=1, hit) -> 0.
    # Class 1: items 2, 3 binned (q=1, no hit) -> 1; item 1 has q=0, unbinned.
    # Mean 0.5 (putting q=0 in the first bin would give 2/3).
    Y = [[1, 0], [1, 0], [1, 0]]
    P = [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    assert classwise_expected_calibration_error(Y, P) == pytest.approx(0.5)


@pytest.mark.parametrize("n_bins", [3, 10, 15])
def test_classwise_ece_matches_loop_implementation(n_bins):
    rng = np.random.default_rng(4)
    Y, P = _random_problem(rng, n=300, k=4, n_ann=5)
    P_edge = rng.multinomial(10, [0.25] * 4, size=300) / 10.0  # zeros and edges
    for Q in (P, P_edge):
        assert classwise_expected_calibration_error(
            Y, Q, n_bins=n_bins
        ) == pytest.approx(_classwise_loop(Y, Q, n_bins), rel=1e-12, abs=1e-15)


def test_oracle_is_miscalibrated_under_disagreement():
    # Baan et al. §3: predicting the human distribution is always "correct"
    # but under-confident whenever humans disagree, so ECE = mean gap > 0.
    Y = np.array([[6, 4], [7, 3], [9, 1], [10, 0]])
    p_hat = Y / 10
    assert majority_accuracy_score(Y, p_hat) == 1.0
    # one bin per distinct confidence: gaps .4, .3, .1, 0 -> mean 0.2
    assert expected_calibration_error(Y, p_hat) == pytest.approx(0.2)


# --------------------------------------------------------------------------- #
# Input conventions
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("metric", MAJ_METRICS)
def test_binary_1d_probabilities_equal_two_columns(metric):
    rng = np.random.default_rng(5)
    Y, P = _random_problem(rng, n=40, k=2)
    assert metric(Y, P[:, 1]) == pytest.approx(metric(Y, P), rel=1e-12)


@pytest.mark.parametrize("metric", MAJ_METRICS)
def test_counts_replaces_y_true(metric):
    rng = np.random.default_rng(6)
    Y, P = _random_problem(rng, n=40)
    unrelated = rng.integers(0, 3, size=40)
    assert metric(unrelated, P, counts=Y) == metric(Y, P)
    assert metric(unrelated, P) == pytest.approx(metric(np.eye(3)[unrelated], P))


@pytest.mark.parametrize("metric", MAJ_METRICS)
def test_dataframe_float32_and_probability_y_true(metric):
    rng = np.random.default_rng(7)
    Y, P = _random_problem(rng, n=40)  # continuous q: no confidence on a bin edge
    cols = ["e", "n", "c"]
    ref = metric(Y, P)
    assert metric(pd.DataFrame(Y, columns=cols), pd.DataFrame(P, columns=cols)) == ref
    got = metric(Y.astype(np.float32), P.astype(np.float32))
    assert got == pytest.approx(ref, rel=1e-5, abs=1e-6)
    assert metric(Y / Y.sum(axis=1, keepdims=True), P) == pytest.approx(ref)
