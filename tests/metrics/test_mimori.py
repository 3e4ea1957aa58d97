"""Mimori et al. (2021) estimators: hand-worked values, independent
implementations and input validation."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_hcal.metrics import (
    calibration_error,
    calibration_loss,
    dispersion_loss,
    epistemic_loss,
    expected_squared_loss,
)
from sklearn_hcal.metrics._bins import bin_indices
from sklearn_hcal.metrics._mimori_kernels import _binned_calibration_terms

# Worked example (K = 2, 15 bins, N = 4):
#   item  Y      n  p̂           q           bin of q0  bin of q1
#   0     [1,1]  2  [1/2, 1/2]  [.5, .5]    7          7
#   1     [2,0]  2  [1,   0  ]  [.5, .5]    7          7
#   2     [1,2]  3  [1/3, 2/3]  [0,  1 ]    0          14 (q = 1: last, closed bin)
#   3     [1,0]  1  [1,   0  ]  [.9, .1]    13         1
# Bins 2-6 and 8-12 (class 0), 0 and 2-13 (class 1) are empty.
Y_HAND = np.array([[1, 1], [2, 0], [1, 2], [1, 0]])
Q_HAND = np.array([[0.5, 0.5], [0.5, 0.5], [0.0, 1.0], [0.9, 0.1]])
# Σ_k (p̂ - q)²: 0, 0.5, 2/9, 0.02
EL_PLUGIN_HAND = (0.52 + 2 / 9) / 4
# Σ_k p̂(1 - p̂)/(n - 1): item 0 -> 0.5, item 2 -> (2/9 + 2/9)/2, item 3 -> none
EL_DEBIASED_HAND = (0.52 + 2 / 9 - 0.5 - 2 / 9) / 4  # = 0.005
# Σ_k p̂(1 - p̂): 0.5, 0, 4/9, 0
SQ_LOSS_HAND = (0.52 + 2 / 9 + 0.5 + 4 / 9) / 4
# class 0, bin 7: (2/4)(0.75 - 0.5)² = 1/32, s² = var([.5, 1], ddof=1) = 1/8
#          bin 0: (1/4)(1/3)², bin 13: (1/4)(0.1)²
# class 1, bin 7: (2/4)(0.25 - 0.5)² = 1/32, s² = 1/8
#          bin 14: (1/4)(2/3 - 1)², bin 1: (1/4)(0.1)²
CL_PLUGIN_HAND = 2 * (1 / 32 + 1 / 36 + 0.0025)
CL_DEBIASED_HAND = CL_PLUGIN_HAND - 2 * (1 / 8) / 4  # singleton bins uncorrected
# eq. 35: class 0 bin 7 residuals (p̂ - c̄) - (q - z̄) = ∓1/4 -> 1/8 / 4; same for
# class 1; singleton bins have no residual.
DL_PLUGIN_HAND = 2 * (1 / 8) / 4
# eq. 36, bin 7 of each class: Σ p̂(1-p̂)/(n-1) = 1/4 (item 0), s² = 1/8
DL_DEBIASED_HAND = DL_PLUGIN_HAND - 2 * (1 / 4 - 1 / 8) / 4  # = 0


def test_expected_squared_loss_hand():
    assert expected_squared_loss(Y_HAND, Q_HAND) == pytest.approx(SQ_LOSS_HAND)
    # Weights: item 1 only -> its own loss, (0.5 + 0.5 + 0 ...) = 0.5
    w = [0, 1, 0, 0]
    assert expected_squared_loss(Y_HAND, Q_HAND, sample_weight=w) == pytest.approx(0.5)
    # weighted mean of per-item losses 0.5, 0.5, 2/3, 0.02
    w = [1, 2, 3, 4]
    expected = (0.5 + 2 * 0.5 + 3 * 2 / 3 + 4 * 0.02) / 10
    assert expected_squared_loss(Y_HAND, Q_HAND, sample_weight=w) == pytest.approx(
        expected
    )


def test_epistemic_loss_hand():
    assert epistemic_loss(Y_HAND, Q_HAND, debiased=False) == pytest.approx(
        EL_PLUGIN_HAND
    )
    with pytest.warns(UserWarning, match="1 of 4 items have a single annotation"):
        assert epistemic_loss(Y_HAND, Q_HAND) == pytest.approx(EL_DEBIASED_HAND)
    # Without the single-label item there is nothing to warn about.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert epistemic_loss(Y_HAND[:3], Q_HAND[:3]) == pytest.approx(0.0)


def test_calibration_loss_hand():
    assert calibration_loss(Y_HAND, Q_HAND, debiased=False) == pytest.approx(
        CL_PLUGIN_HAND
    )
    assert calibration_loss(Y_HAND, Q_HAND) == pytest.approx(CL_DEBIASED_HAND)
    assert calibration_error(Y_HAND, Q_HAND) == pytest.approx(np.sqrt(CL_DEBIASED_HAND))
    assert calibration_error(Y_HAND, Q_HAND, debiased=False) == pytest.approx(
        np.sqrt(CL_PLUGIN_HAND)
    )


def test_dispersion_loss_hand():
    assert dispersion_loss(Y_HAND, Q_HAND, debiased=False) == pytest.approx(
        DL_PLUGIN_HAND
    )
    with pytest.warns(UserWarning, match="single annotation"):
        assert dispersion_loss(Y_HAND, Q_HAND) == pytest.approx(DL_DEBIASED_HAND)


def test_binned_terms_hand_and_decomposition():
    p_hat = Y_HAND / Y_HAND.sum(1, keepdims=True)
    t = _binned_calibration_terms(p_hat, Q_HAND, Y_HAND.sum(1).astype(float), 15)
    assert t["el_plugin"] == pytest.approx(EL_PLUGIN_HAND)
    assert t["el"] == pytest.approx(EL_DEBIASED_HAND)
    assert t["sq_loss"] == pytest.approx(SQ_LOSS_HAND)
    assert t["il"] == pytest.approx(SQ_LOSS_HAND - EL_DEBIASED_HAND)
    # plug-in decomposition is exact: EL = CL + DL
    assert t["el_plugin"] == pytest.approx(t["cl_plugin"] + t["dl_plugin"])
    # debiased: item 2 sits alone in its bins, so its correction
    # 2 * (2/9)/2 / 4 = 1/18 is in EL but in neither CL nor DL.
    assert t["cl"] + t["dl"] - t["el"] == pytest.approx(1 / 18)
    expected_count = np.zeros((2, 15), dtype=int)
    expected_count[0, [0, 7, 13]] = [1, 2, 1]
    expected_count[1, [1, 7, 14]] = [1, 2, 1]
    np.testing.assert_array_equal(t["bin_count"], expected_count)
    # item 3 (n = 1) sits in bin 13 of class 0 and bin 1 of class 1
    expected_valid = expected_count.copy()
    expected_valid[0, 13] = expected_valid[1, 1] = 0
    np.testing.assert_array_equal(t["bin_count_valid"], expected_valid)
    assert np.isnan(t["bin_mean_true"][0, 3])
    assert t["bin_mean_true"][0, 7] == pytest.approx(0.75)
    assert t["bin_var_true"][1, 7] == pytest.approx(1 / 8)
    np.testing.assert_allclose(t["cl_plugin_per_class"], [1 / 32 + 1 / 36 + 0.0025] * 2)


def test_last_bin_is_closed():
    # q1 = 1 and q1 = 0.95 share bin 14 (0.95 * 15 = 14.25); class 0 has q0 = 0
    # and 0.05 in bin 0. Each class: one bin, mean p̂ 1/2 against mean q.
    Y = [[0, 2], [2, 0]]
    q = [[0.0, 1.0], [0.05, 0.95]]
    # class 1: (2/2)(0.5 - 0.975)², class 0: (2/2)(0.5 - 0.025)²
    plugin = 2 * 0.475**2
    assert calibration_loss(Y, q, debiased=False) == pytest.approx(plugin)
    # s² = var([0, 1], ddof=1) = 1/2 per class, subtracted as s²/N
    assert calibration_loss(Y, q) == pytest.approx(plugin - 2 * 0.5 / 2)


def test_bin_edges():
    edges = np.linspace(0, 1, 16)
    np.testing.assert_array_equal(bin_indices(edges, 15), list(range(15)) + [14])
    below = np.nextafter(edges[1:-1], 0)
    np.testing.assert_array_equal(bin_indices(below, 15), np.arange(14))
    assert bin_indices(np.array([0.0, 0.999999, 1.0]), 1).tolist() == [0, 0, 0]


def test_empty_and_single_bins_do_not_contribute_corrections():
    # Every item alone in its bins: debiased CL = plug-in CL.
    Y = [[3, 1], [0, 4], [2, 2]]
    q = [[0.05, 0.95], [0.5, 0.5], [0.8, 0.2]]
    assert calibration_loss(Y, q) == calibration_loss(Y, q, debiased=False)
    assert dispersion_loss(Y, q) == dispersion_loss(Y, q, debiased=False) == 0.0


def _reference_binned(Y, P, n_bins):
    """Independent class-by-class implementation with pandas groupby."""
    n = Y.sum(1)
    p_hat = Y / n[:, None]
    N, K = P.shape
    cl_pl = cl = dl_pl = dl = 0.0
    edges = np.linspace(0, 1, n_bins + 1)
    for k in range(K):
        b = np.digitize(P[:, k], edges[1:-1], right=False)
        df = pd.DataFrame({"b": b, "y": p_hat[:, k], "q": P[:, k], "n": n})
        for _, g in df.groupby("b"):
            size = len(g)
            cbar, zbar = g.y.mean(), g.q.mean()
            cl_pl += size / N * (cbar - zbar) ** 2
            resid = ((g.y - cbar) - (g.q - zbar)) ** 2
            dl_pl += resid.sum() / N
            if size >= 2:
                s2 = g.y.var(ddof=1)
                cl += size / N * (cbar - zbar) ** 2 - s2 / N
                ok = g.n >= 2
                dl_b = resid.sum() / N
                if ok.any():
                    corr = (g.y[ok] * (1 - g.y[ok]) / (g.n[ok] - 1)).sum()
                    dl_b -= corr / N - s2 / N
                dl += dl_b
            else:
                cl += size / N * (cbar - zbar) ** 2
                dl += resid.sum() / N
    return cl_pl, cl, dl_pl, dl


@pytest.mark.parametrize("n_bins", [1, 4, 15])
def test_binned_against_pandas_reference(n_bins):
    rng = np.random.default_rng(3)
    N, K = 60, 3
    n = rng.integers(1, 6, size=N)
    P = rng.dirichlet(np.ones(K), size=N)
    P[:5] = np.eye(K)[rng.integers(0, K, 5)]  # exact 0 and 1 predictions
    Y = np.stack([rng.multinomial(ni, pi) for ni, pi in zip(n, P[::-1])])
    cl_pl, cl, dl_pl, dl = _reference_binned(Y, P, n_bins)
    assert calibration_loss(Y, P, n_bins=n_bins, debiased=False) == pytest.approx(cl_pl)
    assert calibration_loss(Y, P, n_bins=n_bins) == pytest.approx(cl)
    assert dispersion_loss(Y, P, n_bins=n_bins, debiased=False) == pytest.approx(dl_pl)
    with pytest.warns(UserWarning):
        assert dispersion_loss(Y, P, n_bins=n_bins) == pytest.approx(dl)


def test_debiased_decomposition_without_singletons():
    # One bin per class and n_i >= 2 everywhere: EL = CL + DL for the
    # debiased estimates too (eq. 36 is built for it).
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(4), size=40)
    Y = np.stack([rng.multinomial(3, p) for p in P])
    el = epistemic_loss(Y, P)
    cl = calibration_loss(Y, P, n_bins=1)
    dl = dispersion_loss(Y, P, n_bins=1)
    assert el == pytest.approx(cl + dl)
    assert epistemic_loss(Y, P, debiased=False) == pytest.approx(
        calibration_loss(Y, P, debiased=False) + dispersion_loss(Y, P, debiased=False)
    )


def test_single_labels_match_brier_score():
    # With one label per item L̂_sq is the multiclass Brier score (sum over
    # classes), which scikit-learn computes independently.
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, size=50)
    P = rng.dirichlet(np.ones(3), size=50)
    assert expected_squared_loss(y, P) == pytest.approx(
        brier_score_loss(y, P, labels=[0, 1, 2])
    )
    yb = rng.integers(0, 2, size=50)
    p1 = rng.uniform(size=50)
    # 1-D y_prob is P(class 1); binary Brier without halving sums both classes
    assert expected_squared_loss(yb, p1) == pytest.approx(
        brier_score_loss(yb, p1, scale_by_half=False)
    )
    # and EL plug-in is the same number as Σ_k (p̂ - q)² when n_i = 1
    assert epistemic_loss(yb, p1, debiased=False) == pytest.approx(
        expected_squared_loss(yb, p1)
    )


def test_binary_1d_probabilities_and_counts_keyword():
    rng = np.random.default_rng(2)
    p1 = rng.uniform(size=30)
    P = np.column_stack([1 - p1, p1])
    Y = np.stack([rng.multinomial(4, p) for p in P])
    for func in (
        expected_squared_loss,
        epistemic_loss,
        calibration_loss,
        calibration_error,
        dispersion_loss,
    ):
        full = func(Y, P)
        assert func(Y, p1) == pytest.approx(full)
        # developer guide §scorers convention B: counts= replaces the (label) y_true
        majority = Y.argmax(1)
        assert func(majority, p1, counts=Y) == pytest.approx(full)
        assert func(pd.DataFrame(Y, columns=["a", "b"]), P) == pytest.approx(full)


def test_fractional_counts_rejected_with_reason():
    frac = [[0.5, 0.5], [1.0, 0.0]]
    for func in (epistemic_loss, calibration_loss, dispersion_loss):
        with pytest.raises(ValueError, match="number of annotations per item"):
            func(frac, frac)
    with pytest.raises(ValueError, match="counts must hold non-negative integer"):
        expected_squared_loss([0, 1], [[0.5, 0.5], [0.5, 0.5]], counts=frac)


@pytest.mark.parametrize(
    "y_true, y_prob, match",
    [
        ([[1, 1], [2, 0]], [[0.5, 0.3, 0.2]] * 2, "class-count mismatch"),
        ([[1, 1], [2, 0]], [[0.5, 0.6], [0.5, 0.5]], "sum to 1"),
        ([[1, 1], [2, 0]], [[np.nan, 1], [0.5, 0.5]], "NaN"),
        ([[1, 1], [0, 0]], [[0.5, 0.5]] * 2, "zero annotations"),
        ([[1, -1], [2, 0]], [[0.5, 0.5]] * 2, "non-negative"),
        ([[1, 1], [2, 0]], [[0.5, 0.5]] * 3, "different numbers of samples"),
        (np.zeros((0, 2)), np.zeros((0, 2)), "empty"),
    ],
)
def test_bad_input(y_true, y_prob, match):
    for func in (
        expected_squared_loss,
        epistemic_loss,
        calibration_loss,
        calibration_error,
        dispersion_loss,
    ):
        with pytest.raises(ValueError, match=match):
            func(y_true, y_prob)


def test_bad_parameters():
    Y, P = [[1, 1], [2, 0]], [[0.5, 0.5]] * 2
    with pytest.raises(InvalidParameterError, match="n_bins"):
        calibration_loss(Y, P, n_bins=0)
    with pytest.raises(InvalidParameterError, match="debiased"):
        epistemic_loss(Y, P, debiased="yes")
    with pytest.raises(ValueError, match="[Nn]egative"):
        expected_squared_loss(Y, P, sample_weight=[-1, 2])
    with pytest.raises(ValueError, match="non-zero|positive sum"):
        expected_squared_loss(Y, P, sample_weight=[0, 0])
    with pytest.raises(ValueError, match="sample_weight"):
        expected_squared_loss(Y, P, sample_weight=[1, 2, 3])
