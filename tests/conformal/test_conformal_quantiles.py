"""The conformal p-values, thresholds and ECDF correction against loops."""

import math
from fractions import Fraction

import numpy as np
import pytest

from sklearn_hcal.conformal import HumanConformalClassifier, conformity_scores
from sklearn_hcal.conformal._quantiles import (
    ecdf_corrected_pvalues,
    pvalue_threshold,
    weighted_pvalues,
)


def _data(seed, n=30, K=4):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(K), size=n)
    Y = rng.multinomial(6, rng.dirichlet(np.ones(K), size=n))
    return P, Y


def _labels_from_weights(W, m):
    """Any m labels per item with the counts W * m (their order is irrelevant)."""
    counts = np.rint(W * m).astype(int)
    return [np.repeat(np.arange(W.shape[1]), c) for c in counts]


def _brute_mc_pvalue(S, labels, s):
    """Average over j of the split-conformal p-value with the j-th labels."""
    n, m = len(labels), len(labels[0])
    total = 0.0
    for j in range(m):
        hits = 0
        for i in range(n):
            if S[i, labels[i][j]] >= s:
                hits += 1
        total += (1 + hits) / (n + 1)
    return total / m


def test_weighted_pvalues_equal_loop():
    rng = np.random.default_rng(1)
    S = rng.random((20, 3))
    W = rng.dirichlet(np.ones(3), size=20)
    tests = np.r_[rng.random(15), S[:5, 0], [-1.0, 2.0]]
    got = weighted_pvalues(S, W, tests, 20)
    for t, p in zip(tests, got, strict=True):
        expected = (
            1 + sum(W[i, k] for i in range(20) for k in range(3) if S[i, k] >= t)
        ) / 21
        assert p == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("score", ["lac", "aps"])
@pytest.mark.parametrize("n_labels", [1, 3, 10])
def test_monte_carlo_pvalues_equal_brute_force(score, n_labels):
    P, Y = _data(n_labels)
    cp = HumanConformalClassifier(
        n_labels=n_labels, conformity_score=score, random_state=0
    )
    cp.fit(P, Y)
    W = cp.calibration_weights_
    # the sampled labels: m per item, only classes some annotator chose
    assert np.allclose(W.sum(axis=1), 1)
    assert np.allclose(W * n_labels, np.rint(W * n_labels))
    assert np.all(W[Y == 0] == 0)
    labels = _labels_from_weights(W, n_labels)
    P_test, _ = _data(100 + n_labels, n=8)
    S_cal = conformity_scores(P, score)
    S_test = conformity_scores(P_test, score)
    got = cp.predict_pvalues(P_test)
    for i in range(8):
        for k in range(4):
            brute = _brute_mc_pvalue(S_cal, labels, S_test[i, k])
            assert got[i, k] == pytest.approx(brute, abs=1e-12)


def test_majority_threshold_is_the_textbook_quantile():
    # standard split conformal: the ⌈(1 − α)(n + 1)⌉-th smallest score
    P, Y = _data(3, n=50)
    for level in (0.8, 0.9, 0.95):
        cp = HumanConformalClassifier(calibration="majority", confidence_level=level)
        cp.fit(P, Y)
        S = conformity_scores(P, "lac")  # 1 − π, rounded to 12 decimals
        scores = np.sort(S[np.arange(50), Y.argmax(axis=1)])
        rank = math.ceil(level * 51)
        expected = scores[rank - 1] if rank <= 50 else np.inf
        assert cp.threshold_ == expected
        P_test, _ = _data(4, n=40)
        S_test = conformity_scores(P_test, "lac")
        assert np.array_equal(cp.predict_set(P_test), S_test <= expected)


@pytest.mark.parametrize(
    ("n", "level"), [(9, 0.9), (999, 0.9), (19, 0.95), (99, 0.99), (39, 0.8)]
)
def test_pvalue_equal_to_alpha_is_out_of_the_set(n, level):
    # (n + 1)(1 − α) is an integer: the p-value of the ⌈(n + 1)(1 − α)⌉-th
    # score is α exactly, so that rank is the last in the set. In floating
    # point 1 − 0.9 < 0.1 kept one more score (all of them at n = 9).
    rank = math.ceil((n + 1) * Fraction(str(level)))  # exact integer arithmetic
    rng = np.random.default_rng(n)
    P = rng.dirichlet(np.ones(3), size=n)
    y = rng.integers(0, 3, size=n)
    cp = HumanConformalClassifier(calibration="majority", confidence_level=level)
    cp.fit(P, np.eye(3, dtype=int)[y])
    scores = np.sort(conformity_scores(P, "lac")[np.arange(n), y])
    assert cp.threshold_ == scores[rank - 1]
    S_test = np.r_[scores, scores + 1e-9]
    P_test = np.c_[1 - S_test, S_test / 2, S_test / 2]  # LAC score of class 0
    assert np.array_equal(cp.predict_set(P_test)[:, 0], S_test <= scores[rank - 1])
    # just above the rank-th score the p-value is α itself, and it is out
    p = cp.predict_pvalues(P_test[[n + rank - 1]])[0, 0]
    assert Fraction(p).limit_denominator(n + 1) == 1 - Fraction(str(level))
    # the Display's sets agree with the classifier's
    pytest.importorskip("matplotlib")
    from sklearn_hcal.plotting import ConformalCoverageDisplay

    Y_test = np.eye(3, dtype=int)[np.zeros(S_test.size, dtype=int)]
    disp = ConformalCoverageDisplay.from_predictions(
        Y_test, cp.predict_pvalues(P_test), levels=[level]
    )
    sets = cp.predict_set(P_test)
    assert disp.mean_set_size[0] == pytest.approx(sets.sum(axis=1).mean())


@pytest.mark.parametrize("calibration", ["monte_carlo", "exact"])
def test_weighted_pvalue_equal_to_alpha_is_out(calibration):
    # n = 9 items, each with its histogram on one class: every mode's weights
    # are one-hot, the Monte Carlo ones summed from k/m -- p = 1/10 = α is out
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=9)
    Y = 4 * np.eye(3, dtype=int)[rng.integers(0, 3, size=9)]
    cp = HumanConformalClassifier(
        calibration=calibration, confidence_level=0.9, random_state=0
    ).fit(P, Y)
    assert np.isfinite(cp.threshold_)
    assert not cp.predict_set(np.array([[1e-6, 0.5 - 5e-7, 0.5]]))[0, 0]


def test_monte_carlo_sums_are_exact_fractions():
    # 0.1 summed 1000 times in floating point is 99.9999999999986
    S = np.arange(1000.0).reshape(-1, 1) * np.ones((1, 10))
    W = np.full((1000, 10), 0.1)
    p = weighted_pvalues(S, W, np.array([0.0, 900.0]), 1000)
    assert p.tolist() == [1001 / 1001, 101 / 1001]


def test_too_few_items_keep_every_class():
    P, Y = _data(5, n=5)
    cp = HumanConformalClassifier(confidence_level=0.9).fit(P, Y)  # 1/6 > 0.1
    assert cp.threshold_ == np.inf
    assert cp.predict_set(P).all()


def test_exact_weights_are_the_histograms():
    P, Y = _data(6)
    cp = HumanConformalClassifier(calibration="exact").fit(P, Y)
    assert np.allclose(cp.calibration_weights_, Y / Y.sum(axis=1, keepdims=True))


def test_pvalue_threshold_matches_sets():
    rng = np.random.default_rng(7)
    S = rng.random((40, 3))
    W = rng.dirichlet(np.ones(3), size=40)
    for alpha in (0.05, 0.1, 0.3):
        q = pvalue_threshold(S, W, 40, alpha)
        grid = np.r_[np.unique(S), np.linspace(-0.1, 1.1, 50)]
        keep = weighted_pvalues(S, W, grid, 40) > alpha
        assert np.array_equal(keep, grid <= q)


def test_ecdf_correction_equals_loop():
    rng = np.random.default_rng(8)
    held = rng.choice(np.linspace(0.05, 1, 20), size=30)  # with ties
    p = np.r_[rng.random(10), held[:5]]
    got = ecdf_corrected_pvalues(held, p)
    for value, corrected in zip(p, got, strict=True):
        assert corrected == (1 + sum(h <= value for h in held)) / 31


def test_ecdf_classifier_equals_brute_force():
    P, Y = _data(9, n=60)
    cp = HumanConformalClassifier(
        n_labels=4, correction="ecdf", holdout=0.4, random_state=3
    ).fit(P, Y)
    assert cp.calibration_scores_.shape[0] == 36
    assert cp.holdout_pvalues_.shape == (24,)
    labels = _labels_from_weights(cp.calibration_weights_, 4)
    P_test, _ = _data(10, n=6)
    S_test = conformity_scores(P_test, "lac")
    got = cp.predict_pvalues(P_test)
    held = cp.holdout_pvalues_
    for i in range(6):
        for k in range(4):
            mc = _brute_mc_pvalue(cp.calibration_scores_, labels, S_test[i, k])
            expected = (1 + sum(h <= mc + 1e-12 for h in held)) / (len(held) + 1)
            assert got[i, k] == pytest.approx(expected)
    # every held-out p-value is the Monte Carlo p-value of one of its classes
    # (the label drawn for it)
    S_all = conformity_scores(P, "lac")
    candidates = weighted_pvalues(
        cp.calibration_scores_, cp.calibration_weights_, S_all, 36
    )
    assert all(np.isclose(candidates, h).any() for h in held)


def test_threshold_consistent_with_corrected_sets():
    P, Y = _data(11, n=80)
    cp = HumanConformalClassifier(correction="ecdf", random_state=0).fit(P, Y)
    P_test, _ = _data(12, n=50)
    S_test = conformity_scores(P_test, "lac")
    assert np.array_equal(cp.predict_set(P_test), S_test <= cp.threshold_)


def test_scores_equal_their_definitions():
    rng = np.random.default_rng(13)
    P = rng.dirichlet(np.ones(5), size=20)
    P[0] = [0.3, 0.3, 0.2, 0.1, 0.1]  # ties
    lac = conformity_scores(P, "lac")
    aps = conformity_scores(P, "aps")
    for i in range(20):
        for k in range(5):
            assert lac[i, k] == pytest.approx(1 - P[i, k], abs=1e-12)
            above = sum(P[i, j] for j in range(5) if P[i, j] > P[i, k])
            assert aps[i, k] == pytest.approx(above + P[i, k], abs=1e-12)
