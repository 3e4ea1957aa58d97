"""Disagreement probability estimates and their evaluation (Mimori et al. §4)."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_hcal.metrics import (
    disagreement_calibration_error,
    disagreement_calibration_loss,
    disagreement_probability,
    disagreement_squared_loss,
    predicted_disagreement,
)


def _annotator_labels(row):
    return np.repeat(np.arange(len(row)), row)


def _brute_force_pairs(Y, phi=None):
    """Eq. 16 / eq. 40 by enumerating every pair of distinct annotators."""
    mu, loss = [], []
    for i, row in enumerate(Y):
        labels = _annotator_labels(row)
        pairs = list(combinations(labels, 2))
        if not pairs:
            mu.append(np.nan)
            loss.append(np.nan)
            continue
        d = np.array([a != b for a, b in pairs], dtype=float)
        mu.append(d.mean())
        if phi is not None:
            loss.append(((d - phi[i]) ** 2).mean())
    return np.array(mu), np.array(loss)


def test_disagreement_probability_hand():
    # [3, 1]: pairs 6, agreeing 3*2/2 = 3 -> 1/2; [2, 1]: 1 - 2/6 = 2/3;
    # [3, 3]: 1 - 12/30 = 0.6; [1, 1, 1]: every pair disagrees
    Y = [[3, 1, 0], [2, 1, 0], [3, 3, 0], [1, 1, 1], [0, 0, 2], [0, 1, 0]]
    expected = [0.5, 2 / 3, 0.6, 1.0, 0.0, np.nan]
    np.testing.assert_allclose(disagreement_probability(Y), expected)


def test_disagreement_probability_gini_simpson_closed_form():
    rng = np.random.default_rng(0)
    Y = rng.integers(0, 6, size=(200, 4))
    Y[Y.sum(1) < 2, 0] += 2
    n = Y.sum(1)
    p_hat = Y / n[:, None]
    # Gini–Simpson with the small-sample factor n/(n - 1)
    gini_simpson = n / (n - 1) * (1 - (p_hat**2).sum(1))
    np.testing.assert_allclose(disagreement_probability(Y), gini_simpson)


def test_disagreement_probability_two_labels_is_indicator():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 3, size=(2, 100))
    Y = np.zeros((100, 3), dtype=int)
    np.add.at(Y, (np.arange(100), a), 1)
    np.add.at(Y, (np.arange(100), b), 1)
    np.testing.assert_array_equal(disagreement_probability(Y), (a != b).astype(float))


def test_disagreement_probability_brute_force():
    rng = np.random.default_rng(2)
    Y = rng.integers(0, 4, size=(60, 3))
    Y[Y.sum(1) == 0, 2] = 3
    Y[0] = [1, 0, 0]  # n = 1 -> NaN
    mu, _ = _brute_force_pairs(Y)
    np.testing.assert_allclose(disagreement_probability(Y), mu)
    np.testing.assert_allclose(
        disagreement_probability(pd.DataFrame(Y, columns=list("abc"))), mu
    )
    # 1-D labels: one annotation each -> nothing to estimate
    assert np.isnan(disagreement_probability([0, 1, 1])).all()


def test_predicted_disagreement():
    q = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(predicted_disagreement(q), [0.5, 0.62, 0.0])
    # Dir(α0 q): α0/(α0 + 1) (1 - Σq²); an array of α0 per item, inf = point
    np.testing.assert_allclose(
        predicted_disagreement(q, concentration=[1.0, 4.0, np.inf]),
        [0.25, 0.8 * 0.62, 0.0],
    )
    np.testing.assert_allclose(
        predicted_disagreement(q, concentration=np.inf), [0.5, 0.62, 0.0]
    )
    # binary 1-D = P(second class)
    np.testing.assert_allclose(predicted_disagreement([0.5, 0.1]), [0.5, 0.18])
    # ensemble (S, N, K): mean over members of each member's φ
    ens = np.stack([q, q[::-1]])
    np.testing.assert_allclose(predicted_disagreement(ens), [0.25, 0.62, 0.25])


def test_predicted_disagreement_dirichlet_by_simulation():
    # φ = P(two labels differ) when ζ ~ Dir(α0 q) and labels ~ Cat(ζ)
    rng = np.random.default_rng(3)
    q, a0 = np.array([0.6, 0.3, 0.1]), 2.5
    zeta = rng.dirichlet(a0 * q, size=200_000)
    simulated = (1 - (zeta**2).sum(1)).mean()
    phi = predicted_disagreement(q[None], concentration=a0)[0]
    assert phi == pytest.approx(simulated, abs=3e-3)


@pytest.mark.filterwarnings(
    "ignore:y_disagreement reaches:UserWarning"
)  # φ values by hand, beyond 1 - 1/K on purpose
def test_disagreement_squared_loss_hand_and_brute_force():
    # μ̂ = 1, 0, 2/3, NaN (n = 1, left out), 0.6
    Y = np.array([[1, 1], [2, 0], [2, 1], [1, 0], [3, 3]])
    phi = np.array([0.5, 0.5, 1.0, 0.25, 0.1])
    # 0 + .25, 0 + .25, 2/9 + 1/9, 0.24 + 0.25 over 4 items
    expected = (0.5 + 1 / 3 + 0.49) / 4
    assert disagreement_squared_loss(Y, phi) == pytest.approx(expected)
    _, loss = _brute_force_pairs(Y, phi)
    assert disagreement_squared_loss(Y, phi) == pytest.approx(np.nanmean(loss))

    rng = np.random.default_rng(4)
    Y = rng.integers(0, 4, size=(50, 3))
    Y[Y.sum(1) == 0, 1] = 1
    phi = rng.uniform(size=50)
    _, loss = _brute_force_pairs(Y, phi)
    assert disagreement_squared_loss(Y, phi) == pytest.approx(np.nanmean(loss))


@pytest.mark.filterwarnings(
    "ignore:y_disagreement reaches:UserWarning"
)  # φ values by hand, beyond 1 - 1/K on purpose
def test_disagreement_calibration_loss_hand():
    # item  Y       n  μ̂    φ     bin
    # 0     [1,1]   2  1    0.5   7
    # 1     [2,0]   2  0    0.5   7
    # 2     [2,1]   3  2/3  1.0   14 (closed last bin)
    # 3     [1,0]   1  -    0.25  3  (no valid item: adds 0)
    # 4     [3,3]   6  0.6  0.1   1
    # 5     [0,1]   1  -    0.52  7  (counts in |B| and mean φ only)
    Y = [[1, 1], [2, 0], [2, 1], [1, 0], [3, 3], [0, 1]]
    phi = [0.5, 0.5, 1.0, 0.25, 0.1, 0.52]
    N = 6
    bin7 = 3 / N * (0.5 - 1.52 / 3) ** 2
    plugin = bin7 + 1 / N * (1 / 3) ** 2 + 1 / N * 0.5**2
    # bin 7: σ̄² = var0([1, 0]) = 1/4, correction (3/6)(1/4)/(3 - 1)
    debiased = plugin - 3 / N * 0.25 / 2
    assert disagreement_calibration_loss(Y, phi, debiased=False) == pytest.approx(
        plugin
    )
    assert disagreement_calibration_loss(Y, phi) == pytest.approx(debiased)
    assert disagreement_calibration_error(Y, phi) == pytest.approx(
        np.sqrt(max(debiased, 0))
    )
    assert disagreement_calibration_error(Y, phi, debiased=False) == pytest.approx(
        np.sqrt(plugin)
    )
    # Empty bins: 15 bins vs. 1 bin give different answers: one bin pools all
    one_bin_mu, one_bin_phi = np.mean([1, 0, 2 / 3, 0.6]), np.mean(phi)
    assert disagreement_calibration_loss(
        Y, phi, n_bins=1, debiased=False
    ) == pytest.approx((one_bin_mu - one_bin_phi) ** 2)


def test_disagreement_calibration_error_clips_negative():
    Y = [[1, 1], [2, 0]]
    assert disagreement_calibration_loss(Y, [0.5, 0.5]) == pytest.approx(-0.25)
    assert disagreement_calibration_error(Y, [0.5, 0.5]) == 0.0


@pytest.mark.filterwarnings(
    "ignore:y_disagreement reaches:UserWarning"
)  # φ values by hand, beyond 1 - 1/K on purpose
def test_disagreement_calibration_equals_paper_when_all_valid():
    # With every n_i >= 2, eq. 42–45 written directly with a loop over bins.
    rng = np.random.default_rng(5)
    Y = rng.integers(0, 4, size=(80, 3))
    Y[Y.sum(1) < 2, 2] += 2
    phi = rng.uniform(size=80)
    phi[:3] = [0.0, 1.0, 1 / 3]
    mu = disagreement_probability(Y)
    b = np.minimum((phi * 10).astype(int), 9)  # 10 bins, last closed
    plugin = debiased = 0.0
    for j in np.unique(b):
        m = b == j
        size = m.sum()
        term = size / 80 * (mu[m].mean() - phi[m].mean()) ** 2
        plugin += term
        if size >= 2:
            term -= size / 80 * mu[m].var() / (size - 1)
        debiased += term
    kw = dict(n_bins=10)
    assert disagreement_calibration_loss(Y, phi, debiased=False, **kw) == pytest.approx(
        plugin
    )
    assert disagreement_calibration_loss(Y, phi, **kw) == pytest.approx(debiased)


def test_probabilities_converted_and_counts_keyword():
    rng = np.random.default_rng(6)
    P = rng.dirichlet(np.ones(3), size=40)
    Y = np.stack([rng.multinomial(3, p) for p in P])
    phi = 1 - (P**2).sum(1)
    for func in (
        disagreement_squared_loss,
        disagreement_calibration_loss,
        disagreement_calibration_error,
    ):
        expected = func(Y, phi)
        assert func(Y, P) == pytest.approx(expected)
        assert func(Y, np.stack([P, P])) == pytest.approx(expected)
        assert func(Y.argmax(1), phi, counts=Y) == pytest.approx(expected)
        assert func(pd.DataFrame(Y), pd.Series(phi)) == pytest.approx(expected)


@pytest.mark.filterwarnings(
    "ignore:y_disagreement reaches:UserWarning"
)  # φ values by hand, beyond 1 - 1/K on purpose
def test_one_dimensional_input_is_phi_not_binary_probability():
    Y = [[1, 1], [2, 0]]
    p = np.array([0.9, 0.1])
    # as φ: (0 + 0.01 + 0 + 0.01) / 2; as P(class 1) it would be φ = 0.18
    assert disagreement_squared_loss(Y, p) == pytest.approx(0.01)
    assert disagreement_squared_loss(Y, p[:, None]) == pytest.approx(0.01)


@pytest.mark.parametrize(
    "y_disagreement, match",
    [
        ([0.5, 1.2], r"\[0, 1\]"),
        ([-0.1, 0.5], r"\[0, 1\]"),
        ([np.nan, 0.5], "NaN"),
        ([0.5, 0.5, 0.5], "different numbers of samples"),
        ([[0.2, 0.3, 0.5], [0.2, 0.3, 0.5]], "class-count mismatch"),
        ([[0.2, 0.3], [0.5, 0.5]], "sum to 1"),
        ([], "empty"),
    ],
)
def test_bad_disagreement_input(y_disagreement, match):
    Y = [[1, 1], [2, 0]]
    for func in (
        disagreement_squared_loss,
        disagreement_calibration_loss,
        disagreement_calibration_error,
    ):
        with pytest.raises(ValueError, match=match):
            func(Y, y_disagreement)


def test_bad_histograms():
    for func in (
        disagreement_squared_loss,
        disagreement_calibration_loss,
        disagreement_calibration_error,
    ):
        with pytest.raises(ValueError, match="number of annotations per item"):
            func([[0.5, 0.5], [1.0, 0.0]], [0.5, 0.5])
        with pytest.raises(ValueError, match="at least two annotations"):
            func([[1, 0], [0, 1]], [0.5, 0.5])
        with pytest.raises(ValueError, match="at least two annotations"):
            func([0, 1], [0.5, 0.5])
        with pytest.raises(ValueError, match="counts must hold"):
            func([0, 1], [0.5, 0.5], counts=[[0.5, 0.5], [1.0, 0.0]])
    with pytest.raises(ValueError, match="number of annotations per item"):
        disagreement_probability([[0.5, 0.5]])
    with pytest.raises(ValueError, match="non-negative"):
        disagreement_probability([[2, -1]])
    with pytest.raises(ValueError, match="empty"):
        disagreement_probability(np.zeros((0, 3)))


def test_bad_parameters():
    q = [[0.5, 0.5], [0.2, 0.8]]
    with pytest.raises(ValueError, match="concentration must be positive"):
        predicted_disagreement(q, concentration=0.0)
    with pytest.raises(ValueError, match="concentration must be positive"):
        predicted_disagreement(q, concentration=[1.0, np.nan])
    with pytest.raises(ValueError, match="concentration has 3 values"):
        predicted_disagreement(q, concentration=[1.0, 2.0, 3.0])
    with pytest.raises(InvalidParameterError, match="concentration"):
        predicted_disagreement(q, concentration="big")
    with pytest.raises(ValueError, match="dimensions"):
        predicted_disagreement(np.full((2, 2, 2, 2), 0.5))
    with pytest.raises(InvalidParameterError, match="n_bins"):
        disagreement_calibration_loss([[1, 1]], [0.5], n_bins=0)
