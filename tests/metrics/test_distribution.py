"""Distribution-level metrics: hand-worked values, scipy cross-checks, properties."""

import itertools

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy
from sklearn.metrics import log_loss

from sklearn_hcal.metrics import (
    distribution_calibration_error,
    entropy_calibration_error,
    histogram_log_loss,
    jensen_shannon_distance,
    kl_divergence,
    ranking_calibration_score,
)
from sklearn_hcal.metrics._distribution_kernels import (
    _entropy,
    _entropy_error_per_item,
    _jsd_per_item,
    _rank_match_per_item,
    _to_distribution,
    _tvd_per_item,
    kl_per_item,
)
from tests.metrics._registered import metric_functions

#: The distribution-level metrics, from the registry.
DIST_METRICS = metric_functions(family="_distribution")


def _random_problem(rng, n=40, k=3, n_ann=7):
    Y = rng.multinomial(n_ann, np.ones(k) / k, size=n)
    P = rng.dirichlet(np.ones(k), size=n)
    return Y, P


# --------------------------------------------------------------------------- #
# Hand-sized arrays with exact answers
# --------------------------------------------------------------------------- #
def test_distce_hand():
    # p̂ = [.75, .25], [0, 1], [.5, .5]
    # TVD: ½(|.5-.75| + |.5-.25|) = .25 ; ½(|.2-0| + |.8-1|) = .2 ; ½(.5+.5) = .5
    Y = [[3, 1], [0, 4], [1, 1]]
    P = [[0.5, 0.5], [0.2, 0.8], [1.0, 0.0]]
    assert distribution_calibration_error(Y, P) == pytest.approx((0.25 + 0.2 + 0.5) / 3)


def test_entce_hand():
    # Item 1: p̂ = [1, 0] (H = 0), q = [.5, .5] (H = log 2): +log 2 (under-confident)
    # Item 2: p̂ = [.5, .5] (H = log 2), q = [1, 0] (H = 0): -log 2
    # Item 3: p̂ = [.25, .75], q = [.75, .25]: same entropy, error 0
    Y = [[2, 0], [3, 3], [1, 3]]
    P = [[0.5, 0.5], [1.0, 0.0], [0.75, 0.25]]
    log2 = np.log(2)
    assert entropy_calibration_error(Y, P) == pytest.approx(2 * log2 / 3)
    assert entropy_calibration_error(Y, P, absolute=False) == pytest.approx(
        0, abs=1e-15
    )
    # base 2 rescales by 1/log 2: 2/3 bits
    assert entropy_calibration_error(Y, P, base=2) == pytest.approx(2 / 3)
    signed = _entropy_error_per_item(_to_distribution(np.array(Y, float)), np.array(P))
    assert_allclose(signed, [log2, -log2, 0.0], atol=1e-15)


def test_rankcs_hand_strict_and_weak():
    Y = np.array(
        [
            [5, 3, 2],  # strict order 0 > 1 > 2
            [5, 3, 2],
            [4, 4, 2],  # human tie between 0 and 1
            [4, 4, 2],
            [6, 2, 2],  # human tie between 1 and 2
            [5, 3, 2],
        ]
    )
    P = np.array(
        [
            [0.6, 0.3, 0.1],  # same order: match (both)
            [0.3, 0.6, 0.1],  # swaps 0/1: mismatch (both)
            [0.3, 0.5, 0.2],  # argsort [2,0,1] = argsort(Y) [2,0,1]: strict match
            [0.5, 0.3, 0.2],  # argsort [2,1,0] != [2,0,1]: strict no, weak yes
            [0.7, 0.2, 0.1],  # argsort [2,1,0] vs Y [1,2,0]: strict no, weak yes
            [0.5, 0.25, 0.25],  # model tie where humans rank 1 > 2: no (both)
        ]
    )
    strict = _rank_match_per_item(Y, P, "strict")
    weak = _rank_match_per_item(Y, P, "weak")
    assert strict.tolist() == [True, False, True, False, False, False]
    assert weak.tolist() == [True, False, True, True, True, False]
    assert ranking_calibration_score(Y, P) == pytest.approx(2 / 6)
    assert ranking_calibration_score(Y, P, ties="weak") == pytest.approx(4 / 6)


def test_rankcs_weak_model_tie_on_human_tie():
    # Humans tie classes 1 and 2; the model ties them too -> weak match.
    # Strict: argsort(Y)=[1,2,0], argsort(q)=[1,2,0] -> match as well.
    Y = [[6, 2, 2]]
    P = [[0.6, 0.2, 0.2]]
    assert ranking_calibration_score(Y, P, ties="weak") == 1.0
    assert ranking_calibration_score(Y, P, ties="strict") == 1.0


def _weak_match_bruteforce(y, q):
    """Independent pairwise rule: Y_j > Y_k must imply q_j > q_k."""
    for j, k in itertools.permutations(range(len(y)), 2):
        if y[j] > y[k] and not q[j] > q[k]:
            return False
    return True


def test_rankcs_weak_matches_pairwise_definition():
    rng = np.random.default_rng(0)
    # Few annotations and coarse probabilities -> many ties on both sides.
    Y = rng.multinomial(4, [0.3, 0.3, 0.2, 0.2], size=400)
    P = rng.multinomial(3, [0.25] * 4, size=400) / 3.0
    expected = [_weak_match_bruteforce(y, q) for y, q in zip(Y, P)]
    assert _rank_match_per_item(Y, P, "weak").tolist() == expected
    assert 0 < np.mean(expected) < 1  # the check exercised both outcomes


def test_rankcs_strict_matches_argsort_loop():
    rng = np.random.default_rng(1)
    Y = rng.multinomial(5, [0.4, 0.3, 0.3], size=300)
    P = rng.multinomial(4, [1 / 3] * 3, size=300) / 4.0
    expected = [
        np.array_equal(np.argsort(q, kind="stable"), np.argsort(y, kind="stable"))
        for y, q in zip(Y, P)
    ]
    assert ranking_calibration_score(Y, P) == pytest.approx(np.mean(expected))


def test_rankcs_weak_at_least_strict_without_model_ties():
    rng = np.random.default_rng(2)
    Y, P = _random_problem(rng, n=300, k=4, n_ann=5)  # continuous q: no model ties
    strict = _rank_match_per_item(Y, P, "strict")
    weak = _rank_match_per_item(Y, P, "weak")
    assert np.all(weak[strict])


def test_jsd_hand():
    # Disjoint supports: m = [.5,.5]; KL(p‖m) = KL(q‖m) = log 2 -> divergence log 2
    assert jensen_shannon_distance([[1, 0]], [[0.0, 1.0]], squared=True) == (
        pytest.approx(np.log(2))
    )
    assert jensen_shannon_distance([[1, 0]], [[0.0, 1.0]]) == pytest.approx(
        np.sqrt(np.log(2))
    )
    assert jensen_shannon_distance([[1, 0]], [[0.0, 1.0]], base=2) == pytest.approx(1)
    # Identical distributions: exactly 0 (no sqrt of a negative rounding error).
    assert jensen_shannon_distance([[1, 2, 3]], [[1 / 6, 2 / 6, 3 / 6]]) == 0.0
    # p̂ = [1, 0], q = [.5, .5]: m = [.75, .25];
    # KL(p‖m) = log(4/3); KL(q‖m) = .5 log(.5/.75) + .5 log(.5/.25) = .5 log(4/3)
    div = 0.5 * (np.log(4 / 3) + 0.5 * np.log(4 / 3))
    assert jensen_shannon_distance([[3, 0]], [[0.5, 0.5]], squared=True) == (
        pytest.approx(div)
    )


def test_kl_hand_and_eps_rule():
    # p̂ = [.5, .5], q = [.25, .75]: .5 log 2 + .5 log(2/3) = .5 log(4/3)
    assert kl_divergence([[1, 1]], [[0.25, 0.75]]) == pytest.approx(0.5 * np.log(4 / 3))
    # 0·log 0 = 0: p̂ = [1, 0], q = [.5, .5] -> log 2
    assert kl_divergence([[2, 0]], [[0.5, 0.5]]) == pytest.approx(np.log(2))
    # q = [0, 1] with p̂ = [.5, .5]: q' = [eps, 1] / (1 + eps)
    eps = 1e-15
    expected = 0.5 * np.log(0.5 * (1 + eps) / eps) + 0.5 * np.log(0.5 * (1 + eps))
    assert kl_divergence([[1, 1]], [[0.0, 1.0]]) == pytest.approx(expected)
    assert np.isfinite(kl_divergence([[1, 1]], [[0.0, 1.0]]))
    eps = 1e-4
    expected = 0.5 * np.log(0.5 * (1 + eps) / eps) + 0.5 * np.log(0.5 * (1 + eps))
    assert kl_divergence([[1, 1]], [[0.0, 1.0]], eps=eps) == pytest.approx(expected)


def test_histogram_log_loss_hand():
    # -(3 log .5 + 1 log .5 + 2 log .8) / 6
    Y = [[3, 1], [0, 2]]
    P = [[0.5, 0.5], [0.2, 0.8]]
    expected = -(4 * np.log(0.5) + 2 * np.log(0.8)) / 6
    assert histogram_log_loss(Y, P) == pytest.approx(expected)
    # A zero predicted probability on an observed class is floored at eps.
    assert histogram_log_loss([[1, 0]], [[0.0, 1.0]], eps=1e-3) == pytest.approx(
        -np.log(1e-3)
    )


# --------------------------------------------------------------------------- #
# Independent implementations on random data
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("base", [None, 2, np.e, 10, 1.5])
@pytest.mark.parametrize("squared", [False, True])
def test_jsd_matches_scipy(base, squared):
    rng = np.random.default_rng(3)
    Y, P = _random_problem(rng, n=60, k=4, n_ann=6)  # zero counts occur
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    ref = np.array([jensenshannon(a, b, base=base) for a, b in zip(p_hat, P)])
    if squared:
        ref = ref**2
    assert jensen_shannon_distance(Y, P, base=base, squared=squared) == pytest.approx(
        ref.mean(), rel=1e-12
    )
    assert_allclose(_jsd_per_item(p_hat, P, base, squared), ref, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("eps", [1e-15, 1e-3])
def test_kl_matches_scipy_entropy(eps):
    rng = np.random.default_rng(4)
    Y, P = _random_problem(rng, n=50, k=3, n_ann=5)
    P[::5, 0] = 0.0  # exact zeros hit the floor
    P /= P.sum(axis=1, keepdims=True)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    # scipy.stats.entropy(pk, qk) normalises qk itself: that is the renormalisation.
    ref = np.array([entropy(a, np.maximum(b, eps)) for a, b in zip(p_hat, P)])
    assert kl_divergence(Y, P, eps=eps) == pytest.approx(ref.mean(), rel=1e-12)
    assert_allclose(kl_per_item(p_hat, P, eps), ref, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("base", [None, 2, 3])
def test_entropy_matches_scipy(base):
    rng = np.random.default_rng(5)
    Y, P = _random_problem(rng, n=30, k=5, n_ann=4)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    assert_allclose(
        _entropy(p_hat, base), entropy(p_hat, base=base, axis=1), rtol=1e-12
    )
    ref = entropy(P, base=base, axis=1) - entropy(p_hat, base=base, axis=1)
    assert entropy_calibration_error(Y, P, base=base) == pytest.approx(
        np.abs(ref).mean(), rel=1e-12
    )
    assert entropy_calibration_error(Y, P, base=base, absolute=False) == pytest.approx(
        ref.mean(), rel=1e-10, abs=1e-14
    )


def test_distce_matches_l1_norm():
    rng = np.random.default_rng(6)
    Y, P = _random_problem(rng, n=30, k=4)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    ref = 0.5 * np.linalg.norm(P - p_hat, ord=1, axis=1)
    assert distribution_calibration_error(Y, P) == pytest.approx(ref.mean())
    assert_allclose(_tvd_per_item(p_hat, P), ref)


def test_histogram_log_loss_matches_sklearn_log_loss():
    rng = np.random.default_rng(7)
    Y, P = _random_problem(rng, n=25, k=3, n_ann=4)
    # One row per annotation (class k of item i repeated Y_ik times).
    items, classes = np.nonzero(Y)
    weights = Y[items, classes]
    ref = log_loss(classes, P[items], sample_weight=weights, labels=[0, 1, 2])
    assert histogram_log_loss(Y, P) == pytest.approx(ref, rel=1e-12)
    # 1-D labels: plain log loss.
    y = rng.integers(0, 3, size=25)
    assert histogram_log_loss(y, P) == pytest.approx(log_loss(y, P, labels=[0, 1, 2]))


# --------------------------------------------------------------------------- #
# Properties
# --------------------------------------------------------------------------- #
def test_ranges_and_oracle_zero():
    rng = np.random.default_rng(8)
    Y, P = _random_problem(rng, n=200, k=4)
    assert 0 <= distribution_calibration_error(Y, P) <= 1
    assert 0 <= jensen_shannon_distance(Y, P, base=2) <= 1
    assert kl_divergence(Y, P) >= 0
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    assert distribution_calibration_error(Y, p_hat) == 0
    assert jensen_shannon_distance(Y, p_hat) == 0
    assert kl_divergence(Y, p_hat) == pytest.approx(0, abs=1e-12)
    assert entropy_calibration_error(Y, p_hat) == 0
    assert ranking_calibration_score(Y, p_hat) == 1
    assert ranking_calibration_score(Y, p_hat, ties="weak") == 1
    # The log loss is minimised by the human distribution (Gibbs' inequality).
    assert histogram_log_loss(Y, p_hat) < histogram_log_loss(Y, P)


@pytest.mark.parametrize("metric", DIST_METRICS)
def test_invariant_to_class_permutation(metric):
    rng = np.random.default_rng(9)
    Y, P = _random_problem(rng, n=50, k=4, n_ann=3)
    perm = np.array([2, 0, 3, 1])
    if metric is ranking_calibration_score:
        # The strict rule depends on class order through ties; the weak rule not.
        kwargs = {"ties": "weak"}
    else:
        kwargs = {}
    assert metric(Y[:, perm], P[:, perm], **kwargs) == pytest.approx(
        metric(Y, P, **kwargs), rel=1e-12
    )


def test_depends_on_counts_only_through_distribution():
    rng = np.random.default_rng(10)
    Y, P = _random_problem(rng, n=30)
    for metric in DIST_METRICS:
        if metric is histogram_log_loss:
            continue  # the log loss weighs items by n_i
        assert metric(3 * Y, P) == pytest.approx(metric(Y, P), rel=1e-12)


# --------------------------------------------------------------------------- #
# Input conventions
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("metric", DIST_METRICS)
def test_binary_1d_probabilities_equal_two_columns(metric):
    rng = np.random.default_rng(11)
    Y, P = _random_problem(rng, n=30, k=2, n_ann=5)
    assert metric(Y, P[:, 1]) == pytest.approx(metric(Y, P), rel=1e-12)


@pytest.mark.parametrize("metric", DIST_METRICS)
def test_counts_replaces_y_true(metric):
    rng = np.random.default_rng(12)
    Y, P = _random_problem(rng, n=30)
    majority = np.argmax(Y, axis=1)
    assert metric(majority, P, counts=Y) == metric(Y, P)
    # Without counts the 1-D labels are one-hot histograms.
    onehot = np.eye(3)[majority]
    assert metric(majority, P) == pytest.approx(metric(onehot, P))


@pytest.mark.parametrize("metric", DIST_METRICS)
def test_dataframe_and_float32_input(metric):
    rng = np.random.default_rng(13)
    Y, P = _random_problem(rng, n=30)
    cols = ["e", "n", "c"]
    ref = metric(Y, P)
    assert metric(pd.DataFrame(Y, columns=cols), pd.DataFrame(P, columns=cols)) == (
        pytest.approx(ref, rel=1e-12)
    )
    got = metric(Y.astype(np.float32), P.astype(np.float32))
    assert got == pytest.approx(ref, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("metric", DIST_METRICS)
def test_probabilities_accepted_as_y_true(metric):
    rng = np.random.default_rng(14)
    Y, P = _random_problem(rng, n=30)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    if metric is histogram_log_loss:
        # Probability rows weigh every item equally: mean cross-entropy.
        ref = np.mean(-(p_hat * np.log(P)).sum(axis=1))
        assert metric(p_hat, P) == pytest.approx(ref)
    else:
        assert metric(p_hat, P) == pytest.approx(metric(Y, P), rel=1e-12)


def test_public_metrics_are_means_of_per_item_helpers():
    rng = np.random.default_rng(15)
    Y, P = _random_problem(rng, n=40)
    p_hat = _to_distribution(Y)
    assert distribution_calibration_error(Y, P) == np.mean(_tvd_per_item(p_hat, P))
    assert jensen_shannon_distance(Y, P) == np.mean(_jsd_per_item(p_hat, P))
    assert kl_divergence(Y, P) == np.mean(kl_per_item(p_hat, P))
    assert entropy_calibration_error(Y, P) == np.mean(
        np.abs(_entropy_error_per_item(p_hat, P))
    )
