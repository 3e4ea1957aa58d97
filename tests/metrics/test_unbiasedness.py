"""Monte Carlo checks of Mimori et al.'s (2021) (de)biased estimators.

The true distributions ``Q`` are drawn once (``make_label_histograms``) and kept
fixed; only the annotations ``Y ~ Multinomial(n_i, Q_i)`` are redrawn in each of
``R`` replicates (Mimori §3.3 / App. B.5 with 2 and 5 labels per item). Given
``Q``, the expectations of the estimators have closed forms, written out below
independently of the code under test; each check asks the replicate mean to lie
within 3 standard errors of its target, and each plug-in to miss its target by
many standard errors.
"""

import numpy as np
import pytest
from scipy.special import softmax

from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import (
    calibration_loss,
    disagreement_calibration_loss,
    disagreement_probability,
    disagreement_squared_loss,
    dispersion_loss,
    epistemic_loss,
    expected_squared_loss,
    predicted_disagreement,
)

N_REPLICATES = 200
N_ITEMS = 1000
N_BINS = 15


def _mean_se(values):
    values = np.asarray(values)
    return values.mean(), values.std(ddof=1) / np.sqrt(len(values))


def _bins(values):
    # floor(15 v), with v = 1 in the last bin; edge cases have probability 0
    # for continuous predictions, so this independent version suffices here.
    return np.minimum(np.floor(values * N_BINS).astype(int), N_BINS - 1)


def _binned_targets(Q, q, n):
    """Closed forms, given Q, of the class-wise binned CL quantities.

    Returns the true binned CL (Q in place of p̂), the expectation of the
    debiased estimator (which misses the truth by the within-bin spread of Q,
    -(1/N) Σ_{i∈B} (Q_i - Q̄_B)²/(|B| - 1), since eq. 14 treats the items of a
    bin as exchangeable), and the expectation of the plug-in (the truth plus
    (1/(N|B|)) Σ_{i∈B} Var(p̂_i), Var(p̂_ik) = Q_ik(1 - Q_ik)/n_i).
    """
    N, K = Q.shape
    truth = expected_debiased = expected_plugin = 0.0
    for k in range(K):
        b = _bins(q[:, k])
        for j in np.unique(b):
            m = b == j
            size = m.sum()
            gap = size / N * (Q[m, k].mean() - q[m, k].mean()) ** 2
            var_sum = (Q[m, k] * (1 - Q[m, k]) / n[m]).sum()
            truth += gap
            expected_plugin += gap + var_sum / (N * size)
            expected_debiased += gap + var_sum / (N * size)
            if size >= 2:
                # E[s²] = (1/|B|) Σ Var(p̂_i) + Σ (Q_i - Q̄)²/(|B| - 1)
                spread = ((Q[m, k] - Q[m, k].mean()) ** 2).sum() / (size - 1)
                expected_debiased -= (var_sum / size + spread) / N
    return truth, expected_debiased, expected_plugin


def _simulate(n_annotations, seed):
    X, _, Q = make_label_histograms(
        N_ITEMS, n_classes=3, n_annotations=n_annotations, random_state=seed
    )
    n = np.broadcast_to(np.asarray(n_annotations), (N_ITEMS,)).astype(float)
    rng = np.random.default_rng(seed)
    Ys = rng.multinomial(n.astype(int), Q, size=(N_REPLICATES, N_ITEMS))
    q_bad = softmax(X / 1.5, axis=1)  # under-confident model of the same logits
    mu_true = 1 - (Q**2).sum(1)
    phi_bad = predicted_disagreement(q_bad)
    stats = {
        key: []
        for key in [
            "el_plugin",
            "el",
            "cl_plugin",
            "cl",
            "dl_plugin",
            "dl",
            "sq_perfect",
            "sq_bad",
            "el_bad",
            "cl_bad",
            "mu",
            "mu_plugin",
            "lphi_true",
            "lphi_bad",
            "epistemic_plugin",
            "clphi_plugin",
            "clphi",
        ]
    }
    for Y in Ys:
        stats["el_plugin"].append(epistemic_loss(Y, Q, debiased=False))
        stats["el"].append(epistemic_loss(Y, Q))
        stats["cl_plugin"].append(calibration_loss(Y, Q, debiased=False))
        stats["cl"].append(calibration_loss(Y, Q))
        stats["dl_plugin"].append(dispersion_loss(Y, Q, debiased=False))
        stats["dl"].append(dispersion_loss(Y, Q))
        stats["sq_perfect"].append(expected_squared_loss(Y, Q))
        stats["sq_bad"].append(expected_squared_loss(Y, q_bad))
        stats["el_bad"].append(epistemic_loss(Y, q_bad))
        stats["cl_bad"].append(calibration_loss(Y, q_bad))
        mu_hat = disagreement_probability(Y)
        p_hat = Y / n[:, None]
        stats["mu"].append(np.mean(mu_hat - mu_true))
        stats["mu_plugin"].append(np.mean(1 - (p_hat**2).sum(1) - mu_true))
        stats["lphi_true"].append(disagreement_squared_loss(Y, mu_true))
        stats["lphi_bad"].append(disagreement_squared_loss(Y, phi_bad))
        stats["epistemic_plugin"].append(np.mean((mu_hat - mu_true) ** 2))
        stats["clphi_plugin"].append(
            disagreement_calibration_loss(Y, mu_true, debiased=False)
        )
        stats["clphi"].append(disagreement_calibration_loss(Y, mu_true))
    return {"Q": Q, "q_bad": q_bad, "n": n, "phi_bad": phi_bad, "stats": stats}


@pytest.fixture(scope="module", params=[2, 5, "mixed"], ids=lambda p: f"n={p}")
def sim(request):
    if request.param == "mixed":
        n_annotations = np.random.default_rng(9).integers(2, 6, size=N_ITEMS)
        seed = 11
    else:
        n_annotations, seed = request.param, request.param
    return _simulate(n_annotations, seed)


def _assert_unbiased(values, target):
    mean, se = _mean_se(values)
    assert abs(mean - target) < 3 * se, (mean, se, target)


def _assert_biased_up(values, target, n_se=10):
    mean, se = _mean_se(values)
    assert mean - target > n_se * se, (mean, se, target)


def test_epistemic_loss_perfect_predictor(sim):
    # Perfect predictor: EL = 0; E[EL_plugin | Q] = (1/N) Σ_ik Q(1 - Q)/n_i.
    Q, n, s = sim["Q"], sim["n"], sim["stats"]
    _assert_unbiased(s["el"], 0.0)
    _assert_biased_up(s["el_plugin"], 0.0)
    _assert_unbiased(s["el_plugin"], (Q * (1 - Q) / n[:, None]).sum(1).mean())


def test_calibration_loss_perfect_predictor(sim):
    Q, n, s = sim["Q"], sim["n"], sim["stats"]
    truth, expected_debiased, expected_plugin = _binned_targets(Q, Q, n)
    assert truth == pytest.approx(0.0, abs=1e-15)
    _assert_unbiased(s["cl"], expected_debiased)
    # The debiased estimator's exact bias (within-bin spread of Q, about
    # -1.7e-5 here) is below the Monte Carlo resolution, so at this precision
    # it averages to the truth 0; the plug-in is off by dozens of SEs.
    assert abs(expected_debiased - truth) < _mean_se(s["cl"])[1]
    _assert_unbiased(s["cl_plugin"], expected_plugin)
    _assert_biased_up(s["cl_plugin"], 0.0)


def test_dispersion_loss_perfect_predictor(sim):
    # DL = EL - CL = 0 for a perfect predictor
    s = sim["stats"]
    _assert_unbiased(s["dl"], 0.0)
    _assert_biased_up(s["dl_plugin"], 0.0)


def test_expected_squared_loss_is_unbiased(sim):
    # E‖e_Y - q‖² = Σ_k [Q_k (1 - q_k)² + (1 - Q_k) q_k²] = 1 - 2 Q·q + ‖q‖²
    Q, s = sim["Q"], sim["stats"]
    for q, key in [(Q, "sq_perfect"), (sim["q_bad"], "sq_bad")]:
        truth = (1 - 2 * (Q * q).sum(1) + (q**2).sum(1)).mean()
        _assert_unbiased(s[key], truth)
    # the under-confident model really is worse than the perfect one
    assert np.mean(s["sq_bad"]) > np.mean(s["sq_perfect"])


def test_imperfect_predictor(sim):
    Q, q, n, s = sim["Q"], sim["q_bad"], sim["n"], sim["stats"]
    _assert_unbiased(s["el_bad"], ((Q - q) ** 2).sum(1).mean())
    truth, expected_debiased, _ = _binned_targets(Q, q, n)
    assert truth > 1e-3  # a clearly miscalibrated model
    _assert_unbiased(s["cl_bad"], expected_debiased)
    assert abs(expected_debiased - truth) < 0.02 * truth


def test_disagreement_probability_is_unbiased(sim):
    # E[μ̂_i] = 1 - Σ Q_ik²; the plug-in 1 - Σ p̂² has mean (1 - 1/n_i) μ_i
    Q, n, s = sim["Q"], sim["n"], sim["stats"]
    mu = 1 - (Q**2).sum(1)
    _assert_unbiased(s["mu"], 0.0)
    _assert_unbiased(s["mu_plugin"], -(mu / n).mean())
    mean, se = _mean_se(s["mu_plugin"])
    assert mean < -10 * se  # biased downwards


def test_disagreement_squared_loss_is_unbiased(sim):
    # L_φ = E[(ϕ - φ)²] = μ(1 - μ) + (μ - φ)². With φ = μ (a perfect DPE) the
    # epistemic part (μ - φ)² is 0 and L̂_φ averages to the aleatoric μ(1 - μ),
    # while the naive epistemic part (μ̂ - φ)² is biased upwards (its mean is
    # Var(μ̂) > 0); no separate unbiased estimate of it exists from two labels.
    Q, s = sim["Q"], sim["stats"]
    mu = 1 - (Q**2).sum(1)
    _assert_unbiased(s["lphi_true"], (mu * (1 - mu)).mean())
    _assert_biased_up(s["epistemic_plugin"], 0.0)
    phi = sim["phi_bad"]
    _assert_unbiased(s["lphi_bad"], (mu * (1 - mu) + (mu - phi) ** 2).mean())


def test_disagreement_calibration_loss_perfect_dpe(sim):
    # φ = μ: CL_φ = 0. Given Q, the debiased estimator's expectation is
    # -(1/N) Σ_{i∈B} (μ_i - μ̄_B)²/(|B| - 1) (the same spread term as for CL).
    Q, s = sim["Q"], sim["stats"]
    mu = 1 - (Q**2).sum(1)
    b = _bins(mu)
    expected = 0.0
    for j in np.unique(b):
        m = b == j
        if m.sum() >= 2:
            expected -= ((mu[m] - mu[m].mean()) ** 2).sum() / (m.sum() - 1)
    expected /= len(mu)
    _assert_unbiased(s["clphi"], expected)
    assert abs(expected) < _mean_se(s["clphi"])[1]
    _assert_biased_up(s["clphi_plugin"], 0.0)


def test_calibration_loss_with_known_truth():
    # Items share one of four true distributions; the model reports a
    # temperature-sharpened version of each. Each prototype then fills its
    # own bin in each class, Q is constant within a bin, and the true binned
    # CL is Σ_p (N_p/N) ‖Q_p - q_p‖² exactly; the debiased estimator is
    # unbiased for it, with two labels per item.
    q1_true = np.array([0.1, 0.3, 0.6, 0.85])
    Q_proto = np.column_stack([1 - q1_true, q1_true])
    q_proto = softmax(np.log(Q_proto) / 0.6, axis=1)
    assert len(set(_bins(q_proto[:, 0]))) == len(set(_bins(q_proto[:, 1]))) == 4
    rng = np.random.default_rng(0)
    proto = rng.integers(0, 4, size=N_ITEMS)
    Q, q = Q_proto[proto], q_proto[proto]
    weights = np.bincount(proto, minlength=4) / N_ITEMS
    truth = (weights * ((Q_proto - q_proto) ** 2).sum(1)).sum()
    Ys = rng.multinomial(2, Q, size=(N_REPLICATES, N_ITEMS))
    debiased = np.array([calibration_loss(Y, q) for Y in Ys])
    plugin = np.array([calibration_loss(Y, q, debiased=False) for Y in Ys])
    _assert_unbiased(debiased, truth)
    # With ~250 items per bin the plug-in bias Σ_B Var(p̂)/N is small next to
    # the spread of either estimator, so compare them on the same replicates.
    _, expected_debiased, expected_plugin = _binned_targets(Q, q, np.full(N_ITEMS, 2.0))
    assert expected_debiased == pytest.approx(truth, rel=1e-9)
    _assert_unbiased(plugin, expected_plugin)
    _assert_biased_up(plugin - debiased, 0.0)
    _assert_unbiased(plugin - debiased, expected_plugin - truth)
