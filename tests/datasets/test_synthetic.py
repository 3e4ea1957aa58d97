"""make_label_histograms: shapes, truth, sampling distribution, bad input."""

import numpy as np
import pytest
from scipy import stats

from sklearn_hcal.datasets import make_label_histograms


def _softmax(z):
    # Written out here so that the check does not reuse scipy's softmax.
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_shapes_and_q_is_the_softmax_of_the_logits():
    X, Y, Q = make_label_histograms(50, n_classes=4, n_annotations=7, random_state=0)
    assert X.shape == (50, 4) and Y.shape == (50, 4) and Q.shape == (50, 4)
    assert Y.dtype == np.int64
    np.testing.assert_array_equal(Y.sum(1), 7)
    assert np.all(Y >= 0)
    np.testing.assert_allclose(Q, _softmax(X), rtol=1e-12)
    _, _, Q2 = make_label_histograms(50, n_classes=4, temperature=2.5, random_state=0)
    np.testing.assert_allclose(Q2, _softmax(X / 2.5), rtol=1e-12)


def test_feature_mode_and_scale():
    X, Y, Q = make_label_histograms(
        4000, n_classes=3, n_features=6, scale=1.5, random_state=1
    )
    assert X.shape == (4000, 6) and Y.shape == (4000, 3)
    np.testing.assert_allclose(Q.sum(1), 1.0)
    # Logits are linear in X: the log-odds are recovered exactly by least squares.
    log_odds = np.log(Q[:, 1:] / Q[:, :1])
    coef, res, *_ = np.linalg.lstsq(X, log_odds, rcond=None)
    assert np.max(np.abs(X @ coef - log_odds)) < 1e-8
    # With n_features=None the logits are N(0, scale²).
    Z, _, _ = make_label_histograms(4000, n_classes=3, scale=1.5, random_state=2)
    assert stats.kstest(Z.ravel() / 1.5, "norm").pvalue > 1e-3


def test_per_item_annotation_counts():
    n = np.array([1, 2, 3, 10, 100])
    _, Y, _ = make_label_histograms(5, n_classes=3, n_annotations=n, random_state=0)
    np.testing.assert_array_equal(Y.sum(1), n)
    _, Y, _ = make_label_histograms(
        3, n_classes=2, n_annotations=[4.0, 5.0, 6.0], random_state=0
    )
    np.testing.assert_array_equal(Y.sum(1), [4, 5, 6])


def test_reproducible_and_seed_dependent():
    a = make_label_histograms(30, n_classes=3, concentration=5.0, random_state=3)
    b = make_label_histograms(30, n_classes=3, concentration=5.0, random_state=3)
    c = make_label_histograms(30, n_classes=3, concentration=5.0, random_state=4)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0]) and not np.array_equal(a[2], c[2])


def test_counts_are_multinomial_given_q():
    # Pearson's statistic per item has expectation K - 1 exactly; summed over
    # items with moderate Q it is close to chi-square(N (K - 1)).
    n, K, N = 30, 3, 3000
    _, Y, Q = make_label_histograms(
        N, n_classes=K, n_annotations=n, scale=0.7, random_state=5
    )
    assert Q.min() > 0.01
    pearson = np.sum((Y - n * Q) ** 2 / (n * Q))
    dof = N * (K - 1)
    assert stats.chi2.sf(pearson, dof) > 1e-3 and stats.chi2.cdf(pearson, dof) > 1e-3
    # Class totals against the multinomial mean and variance.
    z = (Y.sum(0) - n * Q.sum(0)) / np.sqrt(n * (Q * (1 - Q)).sum(0))
    assert np.all(np.abs(z) < 4)
    # Within-item covariance: E[Y_0 Y_1] = n (n - 1) Q_0 Q_1.
    prod = Y[:, 0] * Y[:, 1]
    expected = n * (n - 1) * Q[:, 0] * Q[:, 1]
    assert abs(prod.mean() - expected.mean()) < 4 * prod.std() / np.sqrt(N)


def test_dirichlet_q_mean_and_variance():
    N, K, a0 = 20000, 3, 4.0
    X, Y, Q = make_label_histograms(
        N, n_classes=K, n_annotations=10, concentration=a0, random_state=6
    )
    p = _softmax(X)
    np.testing.assert_allclose(Q.sum(1), 1.0)
    resid = Q - p  # E[Q | p] = p
    z = resid.mean(0) / (resid.std(0) / np.sqrt(N))
    assert np.all(np.abs(z) < 4)
    # Var[Q_k | p] = p_k (1 - p_k) / (a0 + 1)
    ratio = (resid**2).sum(0) / (p * (1 - p) / (a0 + 1)).sum(0)
    np.testing.assert_allclose(ratio, 1.0, atol=0.05)
    # Dirichlet-multinomial overdispersion of the counts around n p:
    # Var[Y_k | p] = n p_k (1 - p_k) (n + a0) / (1 + a0).
    n = 10
    ry = ((Y - n * p) ** 2).sum(0) / (n * p * (1 - p) * (n + a0) / (1 + a0)).sum(0)
    np.testing.assert_allclose(ry, 1.0, atol=0.05)


def test_per_item_concentration_and_tiny_concentration():
    conc = np.r_[np.full(2000, 0.5), np.full(2000, 200.0)]
    X, _, Q = make_label_histograms(
        4000, n_classes=3, concentration=conc, random_state=7
    )
    dev = ((Q - _softmax(X)) ** 2).sum(1)
    assert dev[:2000].mean() > 20 * dev[2000:].mean()
    _, Y, Q = make_label_histograms(
        50, n_classes=4, concentration=1e-300, random_state=8
    )
    assert np.all(np.isfinite(Q))
    np.testing.assert_allclose(Q.sum(1), 1.0)
    # Near-zero concentration: each Q is (numerically) a vertex of the simplex.
    assert np.all(Q.max(1) > 1 - 1e-9)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 0}, "n_samples"),
        ({"n_classes": 1}, "n_classes"),
        ({"n_annotations": 0}, "n_annotations"),
        ({"n_samples": 3, "n_annotations": [1, 2]}, r"shape \(3,\)"),
        ({"n_samples": 3, "n_annotations": [1, 0, 2]}, "at least 1"),
        ({"n_samples": 3, "n_annotations": [1.5, 2, 2]}, "integers"),
        ({"n_features": 0}, "n_features"),
        ({"scale": 0.0}, "scale"),
        ({"temperature": -1.0}, "temperature"),
        ({"concentration": 0.0}, "concentration"),
        ({"n_samples": 3, "concentration": [1.0, 2.0]}, "concentration"),
        ({"n_samples": 3, "concentration": [1.0, -2.0, 1.0]}, "concentration"),
        ({"n_samples": 3, "concentration": [1.0, np.inf, 1.0]}, "concentration"),
        ({"random_state": "x"}, "random_state"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_label_histograms(**kwargs)
