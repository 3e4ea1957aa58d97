"""The α-calibration solver against an independent scipy fit, a known truth in
simulation, closed forms of the two loss normalisations, and devices."""

import warnings

import numpy as np
import pytest
from scipy import optimize
from scipy.special import digamma, gammaln, softmax

torch = pytest.importorskip("torch")

from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from sklearn_hcal.calibration._alpha._config import SolverConfig  # noqa: E402
from sklearn_hcal.calibration._alpha._features import (  # noqa: E402
    standardize_features,
)
from sklearn_hcal.calibration._alpha._solvers import (  # noqa: E402
    choose_solver,
    fit_concentration_model,
    predict_log_alpha0,
)
from sklearn_hcal.calibration._dirichlet import (  # noqa: E402
    alpha_calibration_objective,
)


def _standardise(G):
    return (G - G.mean(0)) / G.std(0)


def _histograms(rng, alpha0, F, n_labels):
    """``Y_i ~ Multinomial(n_i, Q_i)`` with ``Q_i ~ Dir(α0_i f_i)``."""
    g = rng.standard_gamma(alpha0[:, None] * F)
    Q = g / g.sum(1, keepdims=True)
    n = np.broadcast_to(n_labels, len(F))
    # labels by inverse CDF, one uniform per label; padding labels are dropped
    u = rng.random_sample((len(F), int(n.max()), 1))
    labels = (np.cumsum(Q, axis=1)[:, None, :] < u).sum(-1).clip(0, F.shape[1] - 1)
    labels = np.where(np.arange(int(n.max())) < n[:, None], labels, -1)
    return np.stack([(labels == k).sum(1) for k in range(F.shape[1])], axis=1)


def _feature_problem(n, d, K=3, rank=4, n_labels=5, seed=0):
    """Penultimate-like features with a known truth, log α0 linear in them.

    ``G = U A + noise`` (a rank-``rank`` latent spread over ``d`` correlated
    features), logits ``Z = G V`` with a head reading the latent, and
    ``log α0 = 0.3 z_0 - 0.2 z_1 + log 5 = G w + log 5``.
    """
    rng = np.random.RandomState(seed)
    A = rng.standard_normal((rank, d)) / np.sqrt(rank)
    G = rng.standard_normal((n, rank)) @ A + 0.5 * rng.standard_normal((n, d))
    V = np.linalg.pinv(A) @ (2.0 * rng.standard_normal((rank, K)) / np.sqrt(rank))
    Z = G @ V
    w = V @ np.r_[0.3, -0.2, np.zeros(K - 2)]
    alpha0 = np.exp(G @ w + np.log(5.0))
    F = softmax(Z, axis=1)
    return G, Z, F, _histograms(rng, alpha0, F, n_labels), alpha0, w


def _objective(params, H, F, Y, alpha_reg, l2_reg, normalization, sw):
    """The α-calibration loss and its gradient, written with scipy only.

    ``mean_i(u_i NLL_i) + alpha_reg·mean_i(s_i η_i²) + l2_reg·‖θ‖²`` with
    ``η = Hθ + b``; ``u_i = s_i n_i / n̄`` (reference) or ``s_i / n̄`` (eq. 50),
    ``s`` the item weights scaled to mean 1 and ``n̄`` their weighted mean n.
    """
    theta, b = params[:-1], params[-1]
    eta = H @ theta + b
    a0 = np.exp(eta)
    alpha = a0[:, None] * F
    n = Y.sum(1)
    s = sw / sw.mean()
    nbar = np.sum(s * n) / np.sum(s)
    u = s * n / nbar if normalization == "reference" else s / nbar
    ll = gammaln(a0) - gammaln(a0 + n) + (gammaln(alpha + Y) - gammaln(alpha)).sum(1)
    dll = a0 * (
        digamma(a0)
        - digamma(a0 + n)
        + (F * (digamma(alpha + Y) - digamma(alpha))).sum(1)
    )
    N = len(n)
    loss = np.mean(-u * ll) + alpha_reg * np.mean(s * eta**2) + l2_reg * theta @ theta
    d_eta = (-u * dll + 2 * alpha_reg * s * eta) / N
    grad = np.append(H.T @ d_eta + 2 * l2_reg * theta, d_eta.sum())
    return loss, grad


def _scipy_fit(H, F, Y, alpha_reg, l2_reg, normalization, sw):
    res = optimize.minimize(
        _objective,
        np.zeros(H.shape[1] + 1),
        args=(H, F, Y, alpha_reg, l2_reg, normalization, sw),
        jac=True,
        method="L-BFGS-B",
        options={"ftol": 0.0, "gtol": 1e-11, "maxiter": 20_000, "maxcor": 30},
    )
    assert np.abs(res.jac).max() < 1e-8
    return res


@pytest.mark.parametrize(
    "normalization, alpha_reg, l2_reg, weighted",
    [
        ("reference", 0.005, 0.0, False),
        ("reference", 0.005, 0.01, True),
        ("eq50", 0.002, 0.0, False),
        ("eq50", 0.0, 0.003, True),
    ],
)
def test_equals_independent_scipy_lbfgsb(normalization, alpha_reg, l2_reg, weighted):
    rng = np.random.RandomState(3)
    N = 300
    G, _, F, _, alpha0, _ = _feature_problem(N, 20, seed=3)
    # unequal numbers of labels, single-label items included
    Y = _histograms(rng, alpha0, F, rng.choice([1, 2, 3, 5], size=N))
    H = _standardise(G)
    sw = rng.uniform(0.2, 3.0, N) if weighted else np.ones(N)
    fit = fit_concentration_model(
        H,
        F,
        Y,
        sample_weight=sw if weighted else None,
        alpha_reg=alpha_reg,
        l2_reg=l2_reg,
        normalization=normalization,
        tol=1e-9,
    )
    ref = _scipy_fit(H, F, Y, alpha_reg, l2_reg, normalization, sw)
    assert fit.converged and fit.solver == "lbfgs"
    np.testing.assert_allclose(fit.coefs[0][:, 0], ref.x[:-1], atol=2e-6)
    np.testing.assert_allclose(fit.intercepts[0], ref.x[-1:], atol=2e-6)
    assert fit.loss == pytest.approx(ref.fun, abs=1e-11)
    # and the scipy gradient vanishes at our solution
    _, grad = _objective(
        np.append(fit.coefs[0][:, 0], fit.intercepts[0]),
        H,
        F,
        Y,
        alpha_reg,
        l2_reg,
        normalization,
        sw,
    )
    assert np.abs(grad).max() < 1e-7


def test_gradients_float64():
    # The independent gradient against finite differences, and torch's
    # gradient of the library objective (eq. 50 weights) against its own.
    rng = np.random.RandomState(4)
    G, _, F, Y, _, _ = _feature_problem(40, 5, seed=4)
    Y = _histograms(rng, np.full(40, 3.0), F, rng.choice([1, 2, 4], size=40))
    H = _standardise(G)
    sw = rng.uniform(0.5, 2.0, 40)
    x0 = 0.1 * rng.standard_normal(6)
    for norm in ("reference", "eq50"):
        err = optimize.check_grad(
            lambda p, norm=norm: _objective(p, H, F, Y, 0.01, 0.02, norm, sw)[0],
            lambda p, norm=norm: _objective(p, H, F, Y, 0.01, 0.02, norm, sw)[1],
            x0,
        )
        assert err < 1e-6
    la = torch.as_tensor(H @ x0[:-1] + x0[-1]).requires_grad_(True)
    ft, yt = torch.as_tensor(F), torch.as_tensor(Y, dtype=torch.float64)
    assert torch.autograd.gradcheck(
        lambda t: alpha_calibration_objective(
            t, ft, yt, alpha_reg=0.01, normalization="eq50"
        ),
        (la,),
    )
    # the library objective equals the independent one (θ-free terms only)
    with torch.no_grad():
        lib = alpha_calibration_objective(
            la, ft, yt, alpha_reg=0.01, normalization="eq50"
        )
    ours = _objective(x0, H, F, Y, 0.01, 0.0, "eq50", np.ones(40))[0]
    assert float(lib) == pytest.approx(ours, rel=1e-12)


def _fit_quietly(*args, **kwargs):
    """Fit; fail on any warning (a ConvergenceWarning above all)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fit_concentration_model(*args, **kwargs)


def _median_error(fit, H, alpha0):
    la = predict_log_alpha0(H, fit.coefs, fit.intercepts)
    return np.median(np.abs(np.exp(la) / alpha0 - 1))


def test_recovers_known_alpha0_from_512_features():
    # 512 correlated features on 4,000 items (8 items per weight: without
    # l2_reg the optimum runs to the clip bounds of α0). With l2_reg the fit
    # converges quietly in a few dozen iterations, its objective is below the
    # objective at the true weights, and α0 is recovered.
    G, Z, F, Y, alpha0, w = _feature_problem(4000, 512, K=3, rank=4, seed=5)
    H = _standardise(G)
    fit = _fit_quietly(H, F, Y, alpha_reg=0.0, l2_reg=0.3)
    assert fit.solver == "lbfgs" and fit.converged and fit.n_iter < 50
    # the truth in standardised coordinates: log α0 = H θ* + b*
    theta = np.append(w * G.std(0), np.log(5.0) + G.mean(0) @ w)
    at_truth = _objective(theta, H, F, Y, 0.0, 0.3, "reference", np.ones(4000))[0]
    assert fit.loss <= at_truth
    assert _median_error(fit, H, alpha0) < 0.15  # α0 = 1 (the start) gives 0.8


def test_normalisations_are_rescalings_for_equal_n():
    # Equal n: reference(λα, λw) = n · eq50(λα / n, λw / n), same minimiser.
    n = 4
    G, _, F, Y, _, _ = _feature_problem(500, 10, n_labels=n, seed=6)
    H = _standardise(G)
    ref = _fit_quietly(H, F, Y, alpha_reg=0.02, l2_reg=0.01, tol=1e-9)
    eq50 = _fit_quietly(
        H, F, Y, alpha_reg=0.02 / n, l2_reg=0.01 / n, normalization="eq50", tol=1e-9
    )
    np.testing.assert_allclose(eq50.coefs[0], ref.coefs[0], atol=1e-6)
    np.testing.assert_allclose(eq50.intercepts[0], ref.intercepts[0], atol=1e-6)
    assert ref.loss == pytest.approx(n * eq50.loss, rel=1e-10)
    # Unequal n: not a rescaling (the reference weighs items by n_i).
    rng = np.random.RandomState(6)
    Y2 = _histograms(rng, np.full(500, 5.0), F, rng.choice([2, 10], size=500))
    a = _fit_quietly(H, F, Y2, alpha_reg=0.0)
    b = _fit_quietly(H, F, Y2, alpha_reg=0.0, normalization="eq50")
    assert np.abs(a.coefs[0] - b.coefs[0]).max() > 1e-3


def test_large_l2_leaves_the_intercept_only_optimum():
    # l2_reg -> ∞ pins the weights at 0; the intercept then solves the
    # one-parameter problem, found here with scipy's scalar minimiser.
    G, _, F, Y, _, _ = _feature_problem(400, 8, seed=7)
    fit = _fit_quietly(_standardise(G), F, Y, alpha_reg=0.01, l2_reg=1e8)
    zeros = np.zeros((400, 0))
    best = optimize.minimize_scalar(
        lambda b: _objective(
            np.array([b]), zeros, F, Y, 0.01, 0, "reference", np.ones(400)
        )[0],
        bounds=(-10, 10),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert np.abs(fit.coefs[0]).max() < 1e-6
    assert fit.intercepts[0][0] == pytest.approx(best.x, abs=1e-5)


@pytest.mark.parametrize("d", [20, 80])
def test_ill_conditioned_features_converge_to_the_same_fit(d):
    # An invertible mixing of the features spans the same linear models: the
    # optimum (and every α0) is unchanged, and the whitened L-BFGS does not
    # care that the covariance of the mixed features is near singular. At 80
    # features the fit starts on float32 features, whose products lose the
    # small directions of such a covariance first.
    G, _, F, Y, _, _ = _feature_problem(800 if d == 20 else 2000, d, seed=8)
    H = _standardise(G)
    rng = np.random.RandomState(8)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    M = Q @ np.diag(np.logspace(0, -4, d)) @ Q.T
    Hm = _standardise(H @ M)
    assert np.linalg.cond(np.cov(Hm.T)) > 1e7
    a = _fit_quietly(H, F, Y, alpha_reg=0.005, tol=1e-9)
    b = _fit_quietly(Hm, F, Y, alpha_reg=0.005, tol=1e-9)
    np.testing.assert_allclose(
        predict_log_alpha0(Hm, b.coefs, b.intercepts),
        predict_log_alpha0(H, a.coefs, a.intercepts),
        atol=1e-5,
    )
    if d == 20:
        # (at 80 features the float32 covariance itself loses the smallest
        # directions: 76 iterations against 18 with float64 L-BFGS throughout)
        assert b.n_iter <= 3 * a.n_iter
    with pytest.warns(ConvergenceWarning, match="max_iter=50"):
        fit_concentration_model(
            Hm, F, Y, alpha_reg=0.005, max_iter=50, precondition=False
        )


def _held_out_nll(log_a0, F, Y):
    """Mean Dirichlet-multinomial NLL of held-out items: the scipy objective
    with ``η = log α0`` as its one feature, unpenalised, eq. 50's weights
    ``1/n̄`` undone."""
    one_feature = (np.array([1.0, 0.0]), log_a0[:, None], F, Y, 0.0, 0.0, "eq50")
    loss, _ = _objective(*one_feature, np.ones(len(Y)))
    return loss * Y.sum(1).mean()


@pytest.mark.parametrize("weighted", [False, True])
def test_wide_features_reach_the_independent_optimum(weighted, monkeypatch):
    # Wide features take the fast path: the first L-BFGS stage on float32
    # features, the preconditioner from a subsample of their rows. The fit
    # must still end at the optimum of the float64 objective, found here by
    # scipy's L-BFGS-B to a gradient of 1e-11: the same held-out likelihood
    # and α0 on items it never saw, a training loss no higher (float64
    # L-BFGS throughout, on all rows, lands as close: 1-2e-9 in the held-out
    # NLL, 6e-7 in log α0).
    from sklearn_hcal.calibration._alpha import _model
    from sklearn_hcal.calibration._alpha._solvers import FLOAT32_STAGE_FEATURES

    n, d = 2000, 96
    G, _, F, Y, _, _ = _feature_problem(n + 1000, d, rank=6, seed=13)
    H = _standardise(G)
    assert d >= FLOAT32_STAGE_FEATURES  # the float32 stage runs
    # and the preconditioner reads a subsample of the rows
    monkeypatch.setattr(_model, "PRECONDITIONER_MIN_ROWS", 0)
    assert _model.preconditioner_rows(n, d) < n
    tr, te = slice(None, n), slice(n, None)
    sw = np.random.RandomState(13).uniform(0.3, 3.0, n) if weighted else np.ones(n)
    fit = _fit_quietly(
        H[tr],
        F[tr],
        Y[tr],
        sample_weight=sw if weighted else None,
        alpha_reg=0.005,
        random_state=0,
        tol=1e-9,  # a float32 gradient alone could not get there
    )
    ref = _scipy_fit(H[tr], F[tr], Y[tr], 0.005, 0.0, "reference", sw)
    assert fit.converged and fit.loss <= ref.fun + 1e-13
    ours = predict_log_alpha0(H[te], fit.coefs, fit.intercepts)
    theirs = H[te] @ ref.x[:-1] + ref.x[-1]
    np.testing.assert_allclose(ours, theirs, atol=2e-6)
    assert _held_out_nll(ours, F[te], Y[te]) == pytest.approx(
        _held_out_nll(theirs, F[te], Y[te]), abs=1e-8
    )


@pytest.mark.parametrize("offset", [0.0, 1e3])
def test_float32_features_serve_the_float32_stage_as_they_are(offset):
    # The estimator hands its float32 features to the solver, which reads
    # them in place of a float32 copy of the standardised ones (the
    # standardisation folded into the weights) unless their means lie far
    # from 0 (offset 1e3: float32 products would lose the spread): either
    # way the fit must end at the optimum of the float64 fit, here the same
    # features given in float64 (the same values, no float32 path to read).
    from sklearn_hcal import AlphaCalibrator
    from sklearn_hcal.calibration._alpha._solvers import features_in_float32

    n, d = 2000, 96
    G, Z, _, Y, _, _ = _feature_problem(n + 1000, d, rank=6, seed=14)
    G32 = (G + offset).astype(np.float32)
    G64 = G32.astype(np.float64)
    H, mean, scale = standardize_features(G32[:n])
    X = features_in_float32(H, (G32[:n], mean, scale), torch.device("cpu")).X
    assert (X.data_ptr() == G32.ctypes.data) == (offset == 0)  # read as it is
    fits = [
        AlphaCalibrator(
            features=lambda X, G=Gx: G[: len(X)] if len(X) == n else G[n:],
            alpha_reg=0.005,
            tol=1e-9,
            random_state=0,
        ).fit(Z[:n], Y[:n])
        for Gx in (G32, G64)
    ]
    a0 = [fit.predict_concentration(Z[n:]) for fit in fits]
    np.testing.assert_allclose(np.log(a0[0]), np.log(a0[1]), atol=2e-6)
    F = softmax(Z[n:], axis=1)
    assert _held_out_nll(np.log(a0[0]), F, Y[n:]) == pytest.approx(
        _held_out_nll(np.log(a0[1]), F, Y[n:]), abs=1e-8
    )
    assert fits[0].loss_ == pytest.approx(fits[1].loss_, abs=1e-13)


def test_sample_weights_equal_repeats_in_both_normalisations():
    rng = np.random.RandomState(9)
    G, _, F, _, alpha0, _ = _feature_problem(200, 6, seed=9)
    Y = _histograms(rng, alpha0, F, rng.choice([2, 3, 6], size=200))
    H = _standardise(G)
    reps = rng.randint(1, 4, size=200)
    idx = np.repeat(np.arange(200), reps)
    for norm in ("reference", "eq50"):
        w = _fit_quietly(H, F, Y, sample_weight=reps, normalization=norm, tol=1e-9)
        r = _fit_quietly(H[idx], F[idx], Y[idx], normalization=norm, tol=1e-9)
        np.testing.assert_allclose(w.coefs[0], r.coefs[0], atol=1e-6)
        assert w.loss == pytest.approx(r.loss, rel=1e-10)


def test_standardize_features_equals_numpy():
    G = np.random.RandomState(12).standard_normal((50, 4)).astype(np.float32) * 3 + 1
    G[:, 2] = 7.0  # constant: scale 1
    before = G.copy()
    H, mean, scale = standardize_features(G)
    G64 = G.astype(np.float64)
    std = G64.std(0)
    std[2] = 1.0
    np.testing.assert_allclose(H, (G64 - G64.mean(0)) / std, atol=1e-12)
    np.testing.assert_array_equal(G, before)
    assert H.dtype == np.float64 and scale[2] == 1.0


def test_auto_solver_and_parameter_checks():
    # regularised linear models always fit full batch; hidden layers use Adam
    assert choose_solver("auto", 512, 300, ()) == "adam"
    assert choose_solver("auto", 512, 300, (), l2_reg=0.01) == "lbfgs"
    assert choose_solver("auto", 2048, 100_000, ()) == "lbfgs"
    assert choose_solver("auto", 10, 100_000, (8,), l2_reg=0.01) == "adam"
    # data too large for the GPU in float64: mini-batches
    assert choose_solver("auto", 10, 100_000, (), fits_in_memory=False) == "adam"
    H, F, Y = np.zeros((4, 2)), np.full((4, 2), 0.5), np.ones((4, 2))
    with pytest.raises(ValueError, match="l2_reg"):
        fit_concentration_model(H, F, Y, l2_reg=-1.0)
    with pytest.raises(ValueError, match="normalization"):
        fit_concentration_model(H, F, Y, normalization="per_item")


@pytest.mark.slow
def test_adam_through_skorch_stops_early_near_the_optimum(capsys):
    # skorch runs the epochs: held-out early stopping restores the best
    # weights, close to the exact (L-BFGS) optimum; progress goes to stderr.
    G, _, F, Y, _, _ = _feature_problem(3000, 3, seed=11)
    H = _standardise(G)
    exact = _fit_quietly(H, F, Y, alpha_reg=0.0)
    adam = _fit_quietly(
        H,
        F,
        Y,
        alpha_reg=0.0,
        solver="adam",
        learning_rate=0.05,
        random_state=0,
        verbose=1,
    )
    assert adam.solver == "adam" and adam.converged and adam.n_iter < 200
    out, err = capsys.readouterr()
    assert out == "" and "valid_loss" in err
    diff = predict_log_alpha0(H, adam.coefs, adam.intercepts) - predict_log_alpha0(
        H, exact.coefs, exact.intercepts
    )
    assert np.median(np.abs(diff)) < 0.1
    again = _fit_quietly(
        H, F, Y, alpha_reg=0.0, solver="adam", learning_rate=0.05, random_state=0
    )
    np.testing.assert_array_equal(again.coefs[0], adam.coefs[0])
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        fit_concentration_model(H, F, Y, solver="adam", max_iter=2, random_state=0)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_cuda_is_a_clear_error():
    H, F, Y = np.zeros((4, 2)), np.full((4, 2), 0.5), np.ones((4, 2))
    with pytest.raises(ValueError, match="CUDA is not available"):
        fit_concentration_model(H, F, Y, device=torch.device("cuda"))
    with pytest.raises(ValueError, match="CUDA is not available"):
        fit_concentration_model(H, F, Y, device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_fit_equals_cpu_fit():
    G, _, F, Y, alpha0, _ = _feature_problem(3000, 256, seed=10)
    H = _standardise(G)
    cpu = _fit_quietly(H, F, Y, alpha_reg=0.0, l2_reg=0.01, tol=1e-9)
    gpu = _fit_quietly(H, F, Y, alpha_reg=0.0, l2_reg=0.01, tol=1e-9, device="cuda")
    assert gpu.solver == "lbfgs" and gpu.converged  # float64 on the GPU too
    np.testing.assert_allclose(gpu.coefs[0], cpu.coefs[0], atol=1e-6)
    adam = fit_concentration_model(
        H, F, Y, solver="adam", device="cuda", random_state=0, max_iter=50
    )
    assert np.all(np.isfinite(adam.coefs[0]))  # float32 mini-batches
    assert _median_error(adam, H, alpha0) < 0.5


def test_a_configuration_and_its_keywords_give_the_same_fit():
    # The estimator passes one SolverConfig; direct calls may change fields
    # by keyword: one fit either way, and the fields are checked either way.
    G, _, F, Y, _, _ = _feature_problem(400, 3, seed=5)
    H = _standardise(G)
    config = SolverConfig(alpha_reg=0.01, l2_reg=0.02, random_state=0)
    by_config = fit_concentration_model(H, F, Y, config)
    by_keywords = fit_concentration_model(
        H, F, Y, alpha_reg=0.01, l2_reg=0.02, random_state=0
    )
    np.testing.assert_array_equal(by_config.coefs[0], by_keywords.coefs[0])
    assert by_config.n_iter == by_keywords.n_iter
    with pytest.raises(ValueError, match="max_iter"):
        fit_concentration_model(H, F, Y, config, max_iter=0)
    with pytest.raises(TypeError):
        fit_concentration_model(H, F, Y, hidden_layer_sizes=(3,))


def test_a_failed_fit_leaves_no_configuration_on_the_estimator():
    # The fit's configuration (its torch device among it) is dropped in a
    # finally: a fit that raises leaves the estimator as a fresh one.
    from sklearn_hcal import AlphaCalibrator

    G, _, F, Y, _, _ = _feature_problem(50, 3, seed=1)
    est = AlphaCalibrator(input="proba")
    fresh = set(vars(est))

    def private(estimator):
        return {k for k in vars(estimator) if k.startswith("_") and k not in fresh}

    with pytest.raises(ValueError, match="different numbers of samples"):
        est.fit(F, Y[:-1])
    assert private(est) == set()
    est.fit(F, Y)
    assert private(est) == set()


def test_a_restart_that_did_not_move_is_not_repeated(monkeypatch):
    # Unregularised on multinomial 50-label histograms (the truth is α0 = ∞):
    # the line search stalls and L-BFGS restarts from where it stopped. A
    # restart that ends where it began would be repeated exactly by the
    # next (a fresh history from the same point), so allowing more restarts
    # than one must change neither the fit nor the evaluations spent.
    from sklearn_hcal.calibration._alpha import _lbfgs
    from sklearn_hcal.datasets import make_label_histograms

    Z, Y, _ = make_label_histograms(2000, 10, 50, random_state=0)
    H, F = _standardise(Z), softmax(Z, axis=1)
    fits = {}
    for cap in (1, 3):
        monkeypatch.setattr(_lbfgs, "_MAX_RESTARTS", cap)
        with warnings.catch_warnings():  # it stalls: a ConvergenceWarning
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits[cap] = fit_concentration_model(H, F, Y, alpha_reg=0.0, random_state=0)
    np.testing.assert_array_equal(fits[1].coefs[0], fits[3].coefs[0])
    np.testing.assert_array_equal(fits[1].intercepts[0], fits[3].intercepts[0])
    assert (fits[3].n_iter, fits[3].n_evals) == (fits[1].n_iter, fits[1].n_evals)


def test_float32_features_are_not_copied_before_standardisation():
    # Penultimate features usually come in float32: they are standardised
    # into one float64 copy, with the fit of their float64 version (the
    # conversion is exact) and without a float64 copy made first.
    from sklearn_hcal import AlphaCalibrator
    from sklearn_hcal.calibration._alpha._features import (
        as_feature_array,
        extract_features,
    )

    G, Z, F, Y, _, _ = _feature_problem(300, 8, seed=3)
    G32 = G.astype(np.float32)
    assert extract_features(lambda X: G32, None, Z, None) is G32
    assert as_feature_array(G32) is G32
    assert as_feature_array(G32.astype(np.int64)).dtype == np.float64
    fits = [
        AlphaCalibrator(features=lambda X, g=g: g, random_state=0).fit(Z, Y)
        for g in (G32, G32.astype(np.float64))
    ]
    np.testing.assert_array_equal(fits[0].coefs_[0], fits[1].coefs_[0])
    np.testing.assert_array_equal(fits[0].feature_scale_, fits[1].feature_scale_)
    np.testing.assert_array_equal(fits[0].transform(Z), fits[1].transform(Z))


def test_likelihood_on_observed_classes_is_the_plain_one_to_the_bit(monkeypatch):
    # The solver's lgamma form skips the classes without labels (their terms
    # are exact zeros) and builds the gradient in autograd's order: the same
    # value, gradient and fit as the plain differentiable function, also
    # where α0·f is floored and under any outer gradient.
    from sklearn_hcal.calibration import _dirichlet
    from sklearn_hcal.calibration._alpha import _likelihood
    from sklearn_hcal.datasets import make_label_histograms

    rng = np.random.RandomState(0)
    F = rng.dirichlet(np.ones(6), size=3000)
    F[:5, 0] = 1e-40  # floored classes
    Y = np.random.default_rng(0).multinomial(30, rng.dirichlet(np.ones(6), size=3000))
    Ft, Yt = torch.as_tensor(F), torch.as_tensor(Y, dtype=torch.float64)
    outer = torch.as_tensor(rng.uniform(0.1, 3.0, 3000))
    eta = torch.as_tensor(3 * rng.standard_normal(3000), dtype=torch.float64)
    values, grads = [], []
    for nll in (
        _dirichlet.dirichlet_multinomial_nll_log_alpha0,
        _likelihood.nll_observed_classes,
    ):
        x = eta.clone().requires_grad_()
        v = nll(x, Ft, Yt)
        (outer * v).sum().backward()
        values.append(v.detach())
        grads.append(x.grad)
    assert torch.equal(values[0], values[1]) and torch.equal(grads[0], grads[1])

    Z, Y, _ = make_label_histograms(2000, 10, 50, random_state=0)
    H, F = _standardise(Z), softmax(Z, axis=1)
    fits = []
    for nll in (
        _likelihood.nll_observed_classes,
        _dirichlet.dirichlet_multinomial_nll_log_alpha0,
    ):
        monkeypatch.setattr(_likelihood, "nll_observed_classes", nll)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits.append(fit_concentration_model(H, F, Y, random_state=0))
    np.testing.assert_array_equal(fits[0].coefs[0], fits[1].coefs[0])
    assert fits[0].loss == fits[1].loss and fits[0].n_evals == fits[1].n_evals


def test_observed_entries_are_recomputed_for_new_or_changed_counts():
    # The observed entries are cached per counts tensor (L-BFGS evaluates
    # the same one): a changed or another tensor must not reuse them, and
    # they are dropped with their tensor.
    import gc

    from sklearn_hcal.calibration import _dirichlet
    from sklearn_hcal.calibration._alpha import _likelihood

    f = torch.full((2, 3), 1 / 3, dtype=torch.float64)
    la = torch.tensor([0.3, 1.2], dtype=torch.float64)
    y = torch.tensor([[2.0, 0.0, 1.0], [0.0, 0.0, 4.0]], dtype=torch.float64)
    plain = _dirichlet.dirichlet_multinomial_nll_log_alpha0
    assert torch.equal(_likelihood.nll_observed_classes(la, f, y), plain(la, f, y))
    y[1, 0] = 3.0  # in place: a new version
    assert torch.equal(_likelihood.nll_observed_classes(la, f, y), plain(la, f, y))
    z = y.flip(1).contiguous()
    assert torch.equal(_likelihood.nll_observed_classes(la, f, z), plain(la, f, z))
    del y, z
    gc.collect()
    assert _likelihood._LAST[0] is None


def test_lbfgs_reports_log_alpha0_at_its_result():
    # The degeneracy check reads log α0 from L-BFGS's last evaluation
    # instead of another pass over the features: it must be the fitted
    # model's log α0 (numpy's prediction from the returned weights).
    G, _, F, Y, _, _ = _feature_problem(600, 12, seed=4)
    H = _standardise(G)
    for l2 in (0.0, 0.05):
        fit = _fit_quietly(H, F, Y, l2_reg=l2, random_state=0)
        np.testing.assert_allclose(
            fit.log_alpha0,
            predict_log_alpha0(H, fit.coefs, fit.intercepts),
            rtol=1e-10,
            atol=1e-10,
        )


@pytest.mark.parametrize("n", [5_000, 20_000, 50_000])
def test_narrow_features_keep_all_rows_for_the_preconditioner(n):
    # the logit features' covariance costs nothing: a subsample would only
    # add L-BFGS iterations (CIFAR-10H-sized 50-label fits took a quarter
    # more); wide features read a share of the rows from 8,000 items on
    from sklearn_hcal.calibration._alpha import _model

    assert _model.preconditioner_rows(n, 11) == min(n, _model.PRECONDITIONER_ROWS)
    subsampled = _model.preconditioner_rows(n, 512) < n
    assert subsampled == (n > _model.PRECONDITIONER_MIN_ROWS)
