"""Majority-label vs Monte Carlo conformal prediction on CIFAR-10H.

The shared data holds the CIFAR-10H human label counts (Peterson et al.
2019; 10,000 images, about 51 annotators each) but neither images nor a
CNN's predictions. The model here is therefore *simulated*, and says so:
its logits are ``log(p̂ + 0.01) + ε`` with ``p̂`` the human distribution of
the image and ``ε`` independent standard normal noise (σ = 1). It agrees
with the human majority on about 97 % of the images, as a good CIFAR-10
CNN does, and like a CNN it does not know the human distribution exactly.
The images are split 5,000 / 5,000 into calibration and test, ten times.
Measured with this model: majority-label calibration at 0.9 covers about
0.872 of the human distribution (≈ 2.8 points short); Monte Carlo
calibration about 0.902.
"""

import numpy as np
import pytest

from sklearn_hcal.conformal import HumanConformalClassifier
from sklearn_hcal.metrics import aggregated_coverage_score
from tests.conftest import require_data

N_SPLITS = 10


@pytest.fixture(scope="module")
def cifar10h():
    Y = np.load(require_data("cifar10h", "cifar10h-counts.npy"))
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    rng = np.random.default_rng(0)
    Z = np.log(p_hat + 0.01) + rng.standard_normal(p_hat.shape)
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return Y, P


def _coverage(cifar10h, **params):
    Y, P = cifar10h
    out = []
    for seed in range(N_SPLITS):
        perm = np.random.default_rng(seed).permutation(len(Y))
        cal, test = perm[:5000], perm[5000:]
        cp = HumanConformalClassifier(confidence_level=0.9, random_state=seed, **params)
        sets = cp.fit(P[cal], Y[cal]).predict_set(P[test])
        out.append(aggregated_coverage_score(Y[test], sets))
    out = np.asarray(out)
    return out.mean(), out.std(ddof=1) / np.sqrt(N_SPLITS)


def test_simulated_model_is_cnn_like(cifar10h):
    Y, P = cifar10h
    assert 0.95 < np.mean(P.argmax(axis=1) == Y.argmax(axis=1)) < 0.99


def test_majority_under_covers_monte_carlo_reaches_target(cifar10h):
    maj, maj_se = _coverage(cifar10h, calibration="majority")
    mc, mc_se = _coverage(cifar10h, calibration="monte_carlo", n_labels=10)
    # Monte Carlo: 0.90 within the error of ten splits (+ the 1/(n+1) slack)
    assert abs(mc - 0.9) < 4 * mc_se + 1 / 5001
    # majority: short of 0.9 by more than a point and a half (the issue
    # expects about 3 points with a real CNN; 2.8 with this model)
    assert maj < 0.9 - 0.015
    assert mc - maj > 0.015 + 4 * max(maj_se, mc_se)
