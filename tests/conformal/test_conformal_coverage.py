"""Coverage of Monte Carlo vs majority-label conformal prediction.

Simulations with known label distributions (Stutz et al. 2023, §3 and
their toy experiment): items have true distributions Q drawn from a
Dirichlet, five annotators each, and a model whose probabilities are a
noisy version of Q. Over 200 repetitions the mean coverage of Q (the
probability that a new annotator's label falls in the set) must be within
its Monte Carlo error of the target for the Monte Carlo calibrations and
well below it for majority-label calibration.
"""

import numpy as np
import pytest

from sklearn_hcal.conformal import HumanConformalClassifier

ALPHA = 0.1
N_REP, N_CAL, N_TEST, K = 200, 400, 400, 4


def _simulate(seed=0):
    rng = np.random.default_rng(seed)
    n = N_CAL + N_TEST
    Q = rng.dirichlet(np.full(K, 0.6), size=(N_REP, n))
    Y = rng.multinomial(5, Q)
    # a model that knows Q only roughly: log Q blurred by Gaussian noise
    Z = np.log(Q + 1e-3) + 0.7 * rng.standard_normal(Q.shape)
    P = np.exp(Z - Z.max(axis=-1, keepdims=True))
    P /= P.sum(axis=-1, keepdims=True)
    return Q, Y, P


@pytest.fixture(scope="module")
def simulation():
    return _simulate()


def _coverages(simulation, **params):
    Q, Y, P = simulation
    out = np.empty(N_REP)
    for r in range(N_REP):
        cp = HumanConformalClassifier(
            confidence_level=1 - ALPHA, random_state=r, **params
        ).fit(P[r, :N_CAL], Y[r, :N_CAL])
        sets = cp.predict_set(P[r, N_CAL:])
        out[r] = np.mean(np.sum(Q[r, N_CAL:] * sets, axis=1))  # coverage of Q
    return out.mean(), out.std(ddof=1) / np.sqrt(N_REP)


@pytest.mark.parametrize(
    "params",
    [
        {"calibration": "monte_carlo", "n_labels": 1},
        {"calibration": "monte_carlo", "n_labels": 10},
        {"calibration": "exact"},
        {"calibration": "monte_carlo", "n_labels": 10, "conformity_score": "aps"},
    ],
    ids=["mc1", "mc10", "exact", "mc10-aps"],
)
def test_monte_carlo_reaches_target(simulation, params):
    mean, se = _coverages(simulation, **params)
    # split conformal coverage lies in [1 - α, 1 - α + 1/(n + 1)] in
    # expectation (exactly for one sampled label, empirically for more)
    assert 1 - ALPHA - 3 * se <= mean <= 1 - ALPHA + 1 / (N_CAL + 1) + 3 * se


def test_ecdf_correction_guarantee(simulation):
    mean, se = _coverages(
        simulation, calibration="monte_carlo", n_labels=10, correction="ecdf"
    )
    assert mean >= 1 - ALPHA - 3 * se
    assert mean <= 1 - ALPHA + 2 / (N_CAL / 2 + 1) + 3 * se  # not trivially large


def test_majority_calibration_under_covers(simulation):
    mean, se = _coverages(simulation, calibration="majority")
    mc_mean, mc_se = _coverages(simulation, calibration="exact")
    assert mean < 1 - ALPHA - 10 * se
    assert mean < mc_mean - 10 * max(se, mc_se)


def test_majority_calibration_covers_the_majority(simulation):
    # what standard conformal prediction does guarantee: the majority label
    Q, Y, P = simulation
    hits = np.empty(N_REP)
    for r in range(N_REP):
        cp = HumanConformalClassifier(calibration="majority").fit(
            P[r, :N_CAL], Y[r, :N_CAL]
        )
        sets = cp.predict_set(P[r, N_CAL:])
        hits[r] = np.mean(sets[np.arange(N_TEST), Y[r, N_CAL:].argmax(axis=1)])
    se = hits.std(ddof=1) / np.sqrt(N_REP)
    assert 1 - ALPHA - 3 * se <= hits.mean() <= 1 - ALPHA + 1 / (N_CAL + 1) + 3 * se
