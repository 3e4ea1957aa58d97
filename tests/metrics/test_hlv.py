"""Soft metrics for human label variation (LeWiDi, Kurniawan et al. 2025).

Every metric is checked on hand-sized arrays whose answer is written out as
arithmetic, and against an independent computation (scipy, scikit-learn, a
linear program, or a per-item loop written from the published definition).
"""

import itertools

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import linprog
from scipy.spatial.distance import cityblock, jensenshannon
from scipy.stats import entropy, pearsonr
from scipy.stats import wasserstein_distance as scipy_wasserstein
from sklearn.metrics import brier_score_loss

import sklearn_hcal._validation._core as V
from sklearn_hcal.metrics import (
    entropy_correlation_score,
    histogram_log_loss,
    manhattan_distance,
    po_jsd_score,
    ranked_probability_score_loss,
    soft_accuracy_score,
    soft_cross_entropy,
    soft_micro_f1_score,
    wasserstein_distance,
)
from tests.metrics._registered import metric_functions, requirement

#: The soft (LeWiDi, Kurniawan et al.) and ordinal metrics, from the registry.
MULTICLASS = metric_functions(family=("_hlv", "_ordinal"))
ORDINAL = metric_functions(requires="ordered")


def _problem(seed, n=30, k=4, n_ann=6):
    rng = np.random.default_rng(seed)
    Y = rng.multinomial(n_ann, rng.dirichlet(np.ones(k)), size=n)
    P = rng.dirichlet(np.ones(k), size=n)
    return Y, P


# --------------------------------------------------------------------------- #
# Soft cross-entropy (LeWiDi 2021/2023)
# --------------------------------------------------------------------------- #
def test_soft_cross_entropy_hand():
    soft = [[0.5, 0.5], [1.0, 0.0]]
    P = [[0.5, 0.5], [0.25, 0.75]]
    # offset 0: item 1 -(.5 log .5 + .5 log .5) = log 2; item 2 -log .25 = log 4
    assert soft_cross_entropy(soft, P, offset=0) == pytest.approx(
        (np.log(2) + np.log(4)) / 2, rel=1e-15
    )
    # LeWiDi 2023: 1e-9 inside the log
    expected = -(2 * 0.5 * np.log(0.5 + 1e-9) + np.log(0.25 + 1e-9)) / 2
    assert soft_cross_entropy(soft, P) == pytest.approx(expected, rel=1e-15)


def test_soft_cross_entropy_zero_prediction_is_finite():
    # q = 0 is clipped to 1e-12, then 1e-9 is added: -log(1.001e-9) = 20.72...
    assert soft_cross_entropy([[1, 0]], [[0.0, 1.0]]) == pytest.approx(
        -np.log(1e-12 + 1e-9), rel=1e-12
    )
    assert soft_cross_entropy([[1, 0]], [[0.0, 1.0]], offset=0) == pytest.approx(
        -np.log(1e-12), rel=1e-12
    )


def test_soft_cross_entropy_against_scipy_and_the_scorer_definition():
    Y, P = _problem(0)
    p_hat = Y / Y.sum(1, keepdims=True)
    # cross-entropy = H(p) + KL(p || q), both from scipy (no q is 0 here)
    ref = np.mean([entropy(p) + entropy(p, q) for p, q in zip(p_hat, P)])
    assert soft_cross_entropy(Y, P, offset=0) == pytest.approx(ref, rel=1e-12)
    # The SemEval-2023 scorer, written as a loop: clip, +1e-9, sum, / N
    total = 0.0
    for p, q in zip(p_hat, P):
        q = np.clip(q, 1e-12, 1 - 1e-12)
        total -= np.sum(p * np.log(q + 1e-9))
    assert soft_cross_entropy(Y, P) == pytest.approx(total / len(P), rel=1e-12)


def test_soft_cross_entropy_weighs_items_not_annotations():
    Y = [[1, 0], [3, 1]]  # p̂ = [1, 0], [.75, .25]
    P = [[0.5, 0.5], [0.5, 0.5]]
    # every item costs log 2, whatever its number of labels
    assert soft_cross_entropy(Y, P, offset=0) == pytest.approx(np.log(2))
    # and so does every annotation: both give log 2 with a uniform q ...
    assert histogram_log_loss(Y, P) == pytest.approx(np.log(2))
    # ... but not with another q: per item (-log .8) and (-.75 log .2 - .25 log .8)
    Q = [[0.2, 0.8], [0.2, 0.8]]
    item = (-np.log(0.2) + (-0.75 * np.log(0.2) - 0.25 * np.log(0.8))) / 2
    annotation = (-np.log(0.2) - 3 * np.log(0.2) - np.log(0.8)) / 5
    assert soft_cross_entropy(Y, Q, offset=0) == pytest.approx(item)
    assert histogram_log_loss(Y, Q) == pytest.approx(annotation)


# --------------------------------------------------------------------------- #
# Manhattan distance (LeWiDi 2025)
# --------------------------------------------------------------------------- #
def test_manhattan_hand_and_scipy():
    Y = [[3, 1], [2, 2], [0, 4]]
    P = [[0.5, 0.5], [0.5, 0.5], [0.1, 0.9]]
    # |.75-.5|+|.25-.5| = .5 ; 0 ; .1+.1 = .2
    assert manhattan_distance(Y, P) == pytest.approx((0.5 + 0 + 0.2) / 3)
    Y, P = _problem(1)
    p_hat = Y / Y.sum(1, keepdims=True)
    ref = np.mean([cityblock(p, q) for p, q in zip(p_hat, P)])
    assert manhattan_distance(Y, P) == pytest.approx(ref, rel=1e-12)


def test_manhattan_matches_the_rounded_official_average_within_1e5():
    # The notebook rounds each item's distance and the mean to 5 decimals.
    Y, P = _problem(2, n=200)
    p_hat = Y / Y.sum(1, keepdims=True)
    per_item = [
        round(sum(abs(a - b) for a, b in zip(q, p)), 5) for p, q in zip(p_hat, P)
    ]
    official = round(sum(per_item) / len(per_item), 5)
    assert abs(manhattan_distance(Y, P) - official) <= 1e-5


# --------------------------------------------------------------------------- #
# LeWiDi 2025 numbers on a Par-like fixture (scale -5..5), by hand
# --------------------------------------------------------------------------- #
PAR = [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5]


def _par_fixture():
    soft = pd.DataFrame(0.0, index=["a", "b", "c"], columns=PAR)
    pred = pd.DataFrame(0.0, index=["a", "b", "c"], columns=PAR)
    soft.loc["a", [-5, -4, -2]] = [0.5, 0.25, 0.25]
    pred.loc["a", -4] = 1.0
    soft.loc["b", [4, 5]] = [0.25, 0.75]
    pred.loc["b", 5] = 1.0
    soft.loc["c", -5] = 1.0
    pred.loc["c"] = 1 / 11
    return soft, pred


def test_lewidi_2025_manhattan_and_wasserstein_by_hand():
    soft, pred = _par_fixture()
    # Manhattan: a |.5-0|+|.25-1|+|.25-0| = 1.5 ; b .25 + .25 = .5 ;
    #            c (1 - 1/11) + 10 · 1/11 = 20/11
    md = (1.5 + 0.5 + 20 / 11) / 3
    # Wasserstein (unit steps): a moves .5 from -5 to -4 (.5·1) and .25 from
    # -2 to -4 (.25·2) = 1.0 ; b moves .25 from 4 to 5 = .25 ;
    # c moves 1/11 to each of the 10 other points: Σ_j j/11 = 55/11 = 5
    awd = (1.0 + 0.25 + 5.0) / 3
    assert manhattan_distance(soft, pred) == pytest.approx(md, rel=1e-14)
    assert wasserstein_distance(soft, pred) == pytest.approx(awd, rel=1e-14)
    # the class values -5..5 are unit-spaced: the same distance
    assert wasserstein_distance(soft, pred, values="classes") == pytest.approx(awd)


# --------------------------------------------------------------------------- #
# Wasserstein distance on ordered classes
# --------------------------------------------------------------------------- #
def _transport_lp(p, q, x):
    """Optimal transport cost with ground cost |x_h - x_k|, as a linear program."""
    k = len(p)
    cost = np.abs(np.subtract.outer(x, x)).ravel()
    rows = [np.kron(np.eye(k)[i], np.ones(k)) for i in range(k)]  # Σ_k γ_hk = p_h
    cols = [np.kron(np.ones(k), np.eye(k)[j]) for j in range(k)]  # Σ_h γ_hk = q_k
    res = linprog(cost, A_eq=np.array(rows + cols), b_eq=np.r_[p, q], bounds=(0, None))
    assert res.success
    return res.fun


@pytest.mark.parametrize("values", [None, [0.0, 0.5, 2.0, 2.5, 7.0]])
def test_wasserstein_against_scipy_and_a_transport_lp(values):
    Y, P = _problem(3, k=5)
    p_hat = Y / Y.sum(1, keepdims=True)
    x = np.arange(5.0) if values is None else np.asarray(values)
    ref = np.mean([scipy_wasserstein(x, x, p, q) for p, q in zip(p_hat, P)])
    assert wasserstein_distance(Y, P, values=values) == pytest.approx(ref, rel=1e-10)
    lp = np.mean([_transport_lp(p, q, x) for p, q in zip(p_hat[:6], P[:6])])
    assert wasserstein_distance(Y[:6], P[:6], values=values) == pytest.approx(
        lp, rel=1e-7
    )


def test_wasserstein_binary_is_half_the_manhattan():
    Y = [[3, 1], [0, 2]]
    P = [0.5, 0.9]  # 1-D: P(second class)
    # W = |F_p(0) - F_q(0)| = |p_0 - q_0| = half of Σ|p - q|
    assert wasserstein_distance(Y, P) == pytest.approx((0.25 + 0.1) / 2)
    assert manhattan_distance(Y, P) == pytest.approx(2 * (0.25 + 0.1) / 2)


def test_ordinal_order_matches_named_columns_by_name():
    scale = ["disagree", "neutral", "agree"]
    Y = pd.DataFrame([[2, 0, 2], [0, 1, 3]], columns=scale)
    P = pd.DataFrame([[0.0, 1.0, 0.0], [0.1, 0.2, 0.7]], columns=scale)
    ref = wasserstein_distance(Y, P, order=scale)
    rps = ranked_probability_score_loss(Y, P, order=scale)
    shuffled = ["agree", "disagree", "neutral"]
    assert wasserstein_distance(Y[shuffled], P[shuffled], order=scale) == (
        pytest.approx(ref, rel=1e-15)
    )
    assert ranked_probability_score_loss(
        Y[shuffled], P[shuffled], order=scale
    ) == pytest.approx(rps, rel=1e-15)
    # without order words carry no scale: refused, not read in column order
    with pytest.raises(ValueError, match="order="):
        wasserstein_distance(Y[shuffled], P[shuffled])
    # labels= names the columns of an array y_prob
    assert wasserstein_distance(
        Y[shuffled], P[scale].to_numpy(), labels=scale, order=scale
    ) == pytest.approx(ref)
    # reversing the scale changes nothing
    assert wasserstein_distance(Y, P, order=scale[::-1]) == pytest.approx(ref)
    with pytest.raises(ValueError, match="order"):
        wasserstein_distance(Y, P, order=["disagree", "neutral", "strongly agree"])


def test_numeric_columns_out_of_order_are_ambiguous():
    Y = pd.DataFrame([[1, 2, 1]], columns=[3, 1, 2])
    P = pd.DataFrame([[0.2, 0.3, 0.5]], columns=[3, 1, 2])
    with pytest.raises(ValueError, match="order="):
        wasserstein_distance(Y, P)
    with pytest.raises(ValueError, match="order="):
        ranked_probability_score_loss(Y, P)
    ordered = wasserstein_distance(Y[[1, 2, 3]], P[[1, 2, 3]])
    assert wasserstein_distance(Y, P, order=[1, 2, 3]) == pytest.approx(ordered)


def test_wasserstein_values_validation():
    Y, P = [[1, 1, 0]], [[0.2, 0.3, 0.5]]
    with pytest.raises(ValueError, match="values has 2 entries"):
        wasserstein_distance(Y, P, values=[0, 1])
    with pytest.raises(ValueError, match="strictly monotone"):
        wasserstein_distance(Y, P, values=[0, 2, 1])
    with pytest.raises(ValueError, match="numeric class names"):
        wasserstein_distance(
            pd.DataFrame(Y, columns=list("abc")),
            pd.DataFrame(P, columns=list("abc")),
            values="classes",
            order=list("abc"),
        )


# --------------------------------------------------------------------------- #
# Ranked probability score
# --------------------------------------------------------------------------- #
def test_rps_hand():
    # CDFs over 3 classes: q (.5, 1), p̂ (0, 0): ((.5)^2 + 1^2) / 2
    assert ranked_probability_score_loss([[0, 0, 4]], [[0.5, 0.5, 0.0]]) == 0.625
    assert ranked_probability_score_loss(
        [[0, 0, 4]], [[0.5, 0.5, 0.0]], normalize=False
    ) == pytest.approx(1.25)
    # the perfect prediction scores 0; the per-annotation score keeps the
    # human spread: p̂ = [.5, .5, 0]: F = (.5, 1): (.5·.5 + 0) / 2
    assert ranked_probability_score_loss([[2, 2, 0]], [[0.5, 0.5, 0.0]]) == 0
    assert ranked_probability_score_loss(
        [[2, 2, 0]], [[0.5, 0.5, 0.0]], annotations=True
    ) == pytest.approx(0.125)


def test_rps_against_a_loop_over_annotations():
    Y, P = _problem(4, k=5, n_ann=7)
    k = Y.shape[1]
    dist, per_annotation = [], []
    for y, q in zip(Y, P):
        Fq = np.cumsum(q)[:-1]
        Fp = np.cumsum(y / y.sum())[:-1]
        dist.append(np.sum((Fq - Fp) ** 2) / (k - 1))
        scores = []
        for label in np.repeat(np.arange(k), y):  # each annotation on its own
            Fy = (np.arange(k - 1) >= label).astype(float)
            scores.append(np.sum((Fq - Fy) ** 2) / (k - 1))
        per_annotation.append(np.mean(scores))
    assert ranked_probability_score_loss(Y, P) == pytest.approx(np.mean(dist))
    assert ranked_probability_score_loss(Y, P, annotations=True) == pytest.approx(
        np.mean(per_annotation)
    )


def test_binary_rps_per_annotation_is_the_brier_score():
    Y, P = _problem(5, k=2, n_ann=5)  # the same number of labels per item
    labels = np.concatenate([np.repeat([0, 1], y) for y in Y])
    prob = np.repeat(P[:, 1], 5)
    assert ranked_probability_score_loss(Y, P, annotations=True) == pytest.approx(
        brier_score_loss(labels, prob)
    )


# --------------------------------------------------------------------------- #
# Kurniawan et al. (2025)
# --------------------------------------------------------------------------- #
def test_soft_accuracy_and_micro_f1_hand():
    # min(.2, .6) + min(.8, .4) = .6
    assert soft_accuracy_score([[0.2, 0.8]], [[0.6, 0.4]]) == pytest.approx(0.6)
    soft = [[0.2, 0.8], [1.0, 0.0]]
    P = [[0.6, 0.4], [0.5, 0.5]]
    assert soft_accuracy_score(soft, P) == pytest.approx((0.6 + 0.5) / 2)
    assert soft_micro_f1_score(soft, P) == pytest.approx(2 * (0.6 + 0.5) / 4)


def test_soft_accuracy_against_a_loop_and_equal_to_micro_f1():
    Y, P = _problem(6)
    p_hat = Y / Y.sum(1, keepdims=True)
    ref = np.mean([sum(min(a, b) for a, b in zip(p, q)) for p, q in zip(p_hat, P)])
    assert soft_accuracy_score(Y, P) == pytest.approx(ref, rel=1e-12)
    assert soft_micro_f1_score(Y, P) == pytest.approx(ref, rel=1e-12)


def test_po_jsd_hand_and_scipy():
    # p = [.2, .8], q = [.6, .4]; m = [.4, .6]
    # JSD = ½[.2 log2(.2/.4) + .8 log2(.8/.6)] + ½[.6 log2(.6/.4) + .4 log2(.4/.6)]
    jsd = 0.5 * (0.2 * np.log2(0.5) + 0.8 * np.log2(0.8 / 0.6)) + 0.5 * (
        0.6 * np.log2(1.5) + 0.4 * np.log2(0.4 / 0.6)
    )
    assert po_jsd_score([[0.2, 0.8]], [[0.6, 0.4]]) == pytest.approx(1 - jsd)
    Y, P = _problem(7)
    p_hat = Y / Y.sum(1, keepdims=True)
    ref = 1 - np.mean([jensenshannon(p, q, base=2) ** 2 for p, q in zip(p_hat, P)])
    assert po_jsd_score(Y, P) == pytest.approx(ref, rel=1e-12)


def test_entropy_correlation_against_scipy():
    Y, P = _problem(8, k=3)
    p_hat = Y / Y.sum(1, keepdims=True)
    h_true = [entropy(p) / np.log(3) for p in p_hat]
    h_pred = [entropy(q, base=2) / np.log2(3) for q in P]
    ref = pearsonr(h_true, h_pred).statistic
    assert entropy_correlation_score(Y, P) == pytest.approx(ref, rel=1e-12)


def test_entropy_correlation_hand():
    # normalised entropies: humans (1, 0, 1, 0), model (0, 1, 0, 1): r = -1
    Y = [[2, 2], [4, 0], [1, 1], [0, 3]]
    P = [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [0.5, 0.5]]
    assert entropy_correlation_score(Y, P) == pytest.approx(-1.0)
    # humans (1, h, 0) with h = H(.25) in bits; model (1, h, 0) too: r = 1
    Q = [[0.5, 0.5], [0.75, 0.25], [0.0, 1.0]]
    assert entropy_correlation_score(Y[:1] + [[1, 3], [4, 0]], Q) == pytest.approx(1)


def test_entropy_correlation_undefined_is_an_error():
    with pytest.raises(ValueError, match="y_true are the same for every item"):
        entropy_correlation_score([[1, 0], [0, 1]], [[0.5, 0.5], [0.2, 0.8]])
    with pytest.raises(ValueError, match="y_prob are the same for every item"):
        entropy_correlation_score([[1, 1], [0, 1]], [[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match="at least 2 items"):
        entropy_correlation_score([[1, 1]], [[0.5, 0.5]])


# --------------------------------------------------------------------------- #
# Shared behaviour of the multi-class metrics
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("metric", MULTICLASS)
def test_counts_probabilities_and_labels_agree(metric):
    Y, P = _problem(10, k=3)
    p_hat = Y / Y.sum(1, keepdims=True)
    ref = metric(Y, P)
    assert metric(p_hat, P) == pytest.approx(ref, rel=1e-12)
    assert metric(np.zeros(len(Y)), P, counts=Y) == pytest.approx(ref, rel=1e-12)
    cols = ["x", "y", "z"]
    frame_y = pd.DataFrame(Y, columns=cols)
    frame_p = pd.DataFrame(P, columns=cols)
    # words carry no scale order: the ordinal metrics are told it
    kw = {"order": cols} if metric in ORDINAL else {}
    assert metric(frame_y, frame_p[["z", "x", "y"]], **kw) == pytest.approx(
        ref, rel=1e-12
    )
    assert metric(
        frame_y, P[:, [2, 0, 1]], labels=["z", "x", "y"], **kw
    ) == pytest.approx(ref, rel=1e-12)
    with pytest.raises(ValueError):
        metric(frame_y, pd.DataFrame(P, columns=["x", "y", "w"]))


@pytest.mark.parametrize("metric", MULTICLASS)
def test_one_dimensional_labels_map_by_name(metric):
    # one annotation per item, labels named through labels=
    y = np.array(["b", "a", "c", "c", "a"])
    P = np.random.default_rng(11).dirichlet(np.ones(3), size=5)
    onehot = (y[:, None] == np.array(["a", "b", "c"])).astype(int)
    if requirement(metric) == "variation":  # one label: every entropy is 0
        with pytest.raises(ValueError, match="y_true are the same"):
            metric(y, P, labels=["a", "b", "c"])
        return
    kw = {"order": ["a", "b", "c"]} if metric in ORDINAL else {}
    assert metric(y, P, labels=["a", "b", "c"], **kw) == pytest.approx(
        metric(onehot, P)
    )


@pytest.mark.parametrize("metric", MULTICLASS)
def test_chunked_passes_agree(metric, monkeypatch):
    Y, P = _problem(12, n=57, k=4)
    ref = metric(Y, P)
    monkeypatch.setattr(V, "_CHUNK_ROWS", 5)
    assert metric(Y, P) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("metric", MULTICLASS)
def test_bad_input_names_the_argument(metric):
    Y, P = _problem(13, n=4, k=3)
    with pytest.raises(ValueError, match="y_prob"):
        metric(Y, np.full((4, 3), 0.5))
    P_nan = P.copy()
    P_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        metric(Y, P_nan)
    with pytest.raises(ValueError, match="y_true"):
        metric(-Y, P)
    with pytest.raises(ValueError, match="labels"):
        metric(Y, P, labels=["a", "b"])


@pytest.mark.parametrize(
    "metric, best",
    [
        (manhattan_distance, 0.0),
        (soft_accuracy_score, 1.0),
        (soft_micro_f1_score, 1.0),
        (po_jsd_score, 1.0),
        (entropy_correlation_score, 1.0),
        (wasserstein_distance, 0.0),
        (ranked_probability_score_loss, 0.0),
    ],
)
def test_the_human_distribution_is_the_best_prediction(metric, best):
    Y, _ = _problem(14, k=4)
    p_hat = Y / Y.sum(1, keepdims=True)
    assert metric(Y, p_hat) == pytest.approx(best, abs=1e-12)


def test_oracle_minimises_soft_cross_entropy():
    Y, P = _problem(15, k=3)
    p_hat = Y / Y.sum(1, keepdims=True)
    h = np.mean([entropy(p) for p in p_hat])
    assert soft_cross_entropy(Y, p_hat, offset=0) == pytest.approx(h, rel=1e-9)
    assert soft_cross_entropy(Y, P) > soft_cross_entropy(Y, p_hat)


def test_all_permutations_of_a_three_point_scale():
    # The closed form is invariant to the scale's direction only; every
    # other permutation of the columns is a different scale.
    Y = np.array([[3, 0, 1]])
    P = np.array([[0.1, 0.6, 0.3]])
    distances = {
        perm: wasserstein_distance(Y[:, perm], P[:, perm])
        for perm in itertools.permutations(range(3))
    }
    assert distances[(0, 1, 2)] == pytest.approx(distances[(2, 1, 0)])
    x = np.arange(3.0)
    for perm, d in distances.items():
        ref = scipy_wasserstein(x, x, Y[0, list(perm)] / 4, P[0, list(perm)])
        assert d == pytest.approx(ref)
    assert_allclose(wasserstein_distance(Y, P), scipy_wasserstein(x, x, Y[0] / 4, P[0]))


def test_per_item_kernels_are_what_the_metrics_aggregate():
    # The registry registers metrics by these kernels: the mean (or the
    # ratio of sums / correlation) of the kernel is the public metric.
    from sklearn_hcal.metrics import _hlv_kernels as _hlv
    from sklearn_hcal.metrics import _ordinal

    Y, P = _problem(17, k=4)
    p_hat = Y / Y.sum(1, keepdims=True)
    means = {
        soft_cross_entropy: _hlv.soft_cross_entropy_per_item,
        manhattan_distance: _hlv.manhattan_per_item,
        soft_accuracy_score: _hlv._soft_accuracy_per_item,
        po_jsd_score: _hlv._po_jsd_per_item,
        wasserstein_distance: _ordinal.wasserstein_per_item,
        ranked_probability_score_loss: _ordinal._ranked_probability_per_item,
    }
    for metric, kernel in means.items():
        per_item = kernel(p_hat, P)
        assert per_item.shape == (len(Y),)
        assert metric(Y, P) == pytest.approx(per_item.mean(), rel=1e-12)
    num, den = _hlv._soft_micro_f1_parts_per_item(p_hat, P)
    assert soft_micro_f1_score(Y, P) == pytest.approx(num.sum() / den.sum())
    h_true, h_pred = _hlv._entropy_correlation_parts_per_item(p_hat, P)
    assert entropy_correlation_score(Y, P) == pytest.approx(
        pearsonr(h_true, h_pred).statistic
    )
