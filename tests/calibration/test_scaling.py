"""VectorScaler and MatrixScaler: gradients, optimum, reductions, model selection."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.optimize import check_grad, minimize
from scipy.special import log_softmax, rel_entr
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_hcal.calibration import MatrixScaler, TemperatureScaler, VectorScaler
from sklearn_hcal.datasets import make_label_histograms
from tests._calibrator_checks import expected_failed_checks


def _nll(U, Y, w):
    """Independent per-annotation multinomial NLL of histograms."""
    return -np.sum(w[:, None] * Y * log_softmax(U, axis=1)) / (w @ Y.sum(1))


def _vector_objective(v, b, Z, Y, w, lam_b):
    K = Z.shape[1]
    return _nll(Z * v + b, Y, w) + lam_b / K * np.sum(b**2)


def _matrix_objective(W, b, Z, Y, w, lam_w, lam_b):
    K = Z.shape[1]
    off = W[~np.eye(K, dtype=bool)]
    return (
        _nll(Z @ W.T + b, Y, w)
        + lam_w / (K * (K - 1)) * np.sum(off**2)
        + lam_b / K * np.sum(b**2)
    )


@pytest.fixture(scope="module")
def data():
    Z, Y, Q = make_label_histograms(
        600, 4, np.arange(600) % 5 + 1, temperature=1.7, random_state=0
    )
    return Z, Y


@pytest.mark.parametrize("Scaler", [VectorScaler, MatrixScaler])
def test_gradient_matches_finite_differences(Scaler, data):
    Z, Y = data
    Z, Y = Z[:80], Y[:80]
    K = Z.shape[1]
    rng = np.random.RandomState(1)
    w = rng.rand(80)
    n = Y.sum(1)
    est = Scaler(reg_bias=0.7)
    if Scaler is MatrixScaler:
        est.set_params(reg_weight=3.0)
    n_params = 2 * K if Scaler is VectorScaler else K * K + K
    for scale in (1.0, 2.5):
        theta = rng.randn(n_params)

        def f(t, scale=scale):
            return est._objective(t, Z / scale, scale, Y, w, n, w @ n)[0]

        def g(t, scale=scale):
            return est._objective(t, Z / scale, scale, Y, w, n, w @ n)[1]

        err = check_grad(f, g, theta, epsilon=1e-6)
        assert err < 1e-5 * max(1.0, np.linalg.norm(g(theta)))
        # and the objective is the independent one
        if Scaler is VectorScaler:
            ref = _vector_objective(theta[:K] / scale, theta[K:], Z, Y, w, 0.7)
        else:
            W = theta[: K * K].reshape(K, K) / scale
            ref = _matrix_objective(W, theta[K * K :], Z, Y, w, 3.0, 0.7)
        assert f(theta) == pytest.approx(ref, rel=1e-12)


def test_vector_fit_equals_gradient_free_minimisation():
    Z, Y, _ = make_label_histograms(40, 3, 4, temperature=2.0, random_state=2)
    w = np.random.RandomState(2).rand(40) + 0.5

    def f(t):
        return _vector_objective(t[:3], t[3:], Z, Y, w, 0.5)

    ref = minimize(
        f,
        np.r_[np.ones(3), np.zeros(3)],
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 40000, "maxfev": 40000},
    )
    vs = VectorScaler(reg_bias=0.5).fit(Z, Y, sample_weight=w)
    np.testing.assert_allclose(vs.coef_, ref.x[:3], atol=1e-5)
    np.testing.assert_allclose(vs.intercept_, ref.x[3:], atol=1e-5)


def test_matrix_fit_equals_gradient_free_minimisation():
    Z, Y, _ = make_label_histograms(40, 3, 4, temperature=2.0, random_state=3)

    def f(t):
        return _matrix_objective(
            t[:9].reshape(3, 3), t[9:], Z, Y, np.ones(40), 2.0, 0.5
        )

    # BFGS with finite-difference gradients (no analytic gradient)
    ref = minimize(
        f, np.r_[np.eye(3).ravel(), np.zeros(3)], method="BFGS", options={"gtol": 1e-9}
    )
    ms = MatrixScaler(reg_weight=2.0, reg_bias=0.5).fit(Z, Y)
    np.testing.assert_allclose(ms.coef_.ravel(), ref.x[:9], atol=1e-4)
    np.testing.assert_allclose(ms.intercept_, ref.x[9:], atol=1e-4)
    assert _matrix_objective(ms.coef_, ms.intercept_, Z, Y, np.ones(40), 2.0, 0.5) <= (
        ref.fun + 1e-10
    )


def test_vector_recovers_true_temperature():
    Z, Y, _ = make_label_histograms(5000, 3, 5, temperature=2.0, random_state=4)
    vs = VectorScaler(reg_bias=0.1).fit(Z, Y)
    np.testing.assert_allclose(vs.coef_, 0.5, rtol=0.08)
    np.testing.assert_allclose(vs.intercept_, 0.0, atol=0.1)


def test_objective_ordering_matrix_vector_temperature(data):
    Z, Y = data
    w = np.ones(len(Z))
    lam_b = 0.3
    ts = TemperatureScaler().fit(Z, Y)
    vs = VectorScaler(reg_bias=lam_b).fit(Z, Y)
    ms = MatrixScaler(reg_weight=1.0, reg_bias=lam_b).fit(Z, Y)
    obj_t = _nll(Z * ts.beta_, Y, w)  # = vector objective at v = β, b = 0
    obj_v = _vector_objective(vs.coef_, vs.intercept_, Z, Y, w, lam_b)
    obj_m = _matrix_objective(ms.coef_, ms.intercept_, Z, Y, w, 1.0, lam_b)
    # vector scaling's feasible set contains temperature scaling, matrix's
    # contains vector scaling (with no off-diagonal penalty there)
    assert obj_v <= obj_t + 1e-9
    assert (
        obj_m
        <= _matrix_objective(np.diag(vs.coef_), vs.intercept_, Z, Y, w, 1.0, lam_b)
        + 1e-9
    )
    assert obj_m <= obj_v + 1e-9


def test_huge_off_diagonal_penalty_gives_vector_scaling(data):
    Z, Y = data[0][:200], data[1][:200]
    vs = VectorScaler(reg_bias=0.2).fit(Z, Y)
    ms = MatrixScaler(reg_weight=1e6, reg_bias=0.2).fit(Z, Y)
    off = ms.coef_[~np.eye(4, dtype=bool)]
    assert np.abs(off).max() < 1e-4
    np.testing.assert_allclose(np.diag(ms.coef_), vs.coef_, atol=1e-3)
    np.testing.assert_allclose(ms.predict_proba(Z), vs.predict_proba(Z), atol=1e-4)


def test_huge_bias_penalty_removes_the_intercept(data):
    Z, Y = data[0][:200], data[1][:200]
    vs = VectorScaler(reg_bias=1e8).fit(Z, Y)
    ms = MatrixScaler(reg_bias=1e8).fit(Z, Y)
    assert np.abs(vs.intercept_).max() < 1e-6
    assert np.abs(ms.intercept_).max() < 1e-6
    small = VectorScaler(reg_bias=1e-3).fit(Z, Y)
    assert np.abs(small.intercept_).max() > 1e-3


def test_vector_scaling_invariant_to_score_scale_and_dtype(data):
    Z, Y = data
    ref = VectorScaler(reg_bias=0.1).fit(Z, Y)
    c = 1e4 / np.abs(Z).max()
    big = VectorScaler(reg_bias=0.1).fit(Z * c, Y)
    # v absorbs the scale exactly, b is unpenalised by it: same optimum
    assert np.all(np.isfinite(big.coef_))
    np.testing.assert_allclose(big.coef_ * c, ref.coef_, rtol=1e-4)
    np.testing.assert_allclose(
        big.predict_proba(Z * c), ref.predict_proba(Z), atol=1e-5
    )
    z32 = Z.astype(np.float32)
    f32 = VectorScaler(reg_bias=0.1).fit(z32, Y)
    ref32 = VectorScaler(reg_bias=0.1).fit(z32.astype(np.float64), Y)
    np.testing.assert_allclose(f32.coef_, ref32.coef_, rtol=1e-10)
    np.testing.assert_allclose(f32.coef_, ref.coef_, rtol=1e-4)
    ms_big = MatrixScaler().fit(Z * c, Y)
    assert np.all(np.isfinite(ms_big.predict_proba(Z * c)))
    identity = _nll(Z * c, Y, np.ones(len(Z)))
    assert _nll(ms_big.transform(Z * c), Y, np.ones(len(Z))) < identity


def test_convergence_warning():
    Z, Y, _ = make_label_histograms(200, 3, 3, temperature=3.0, random_state=5)
    with pytest.warns(ConvergenceWarning):
        MatrixScaler(max_iter=1).fit(Z, Y)


@pytest.mark.parametrize("Scaler", [VectorScaler, MatrixScaler])
def test_modes_clone_pickle(Scaler):
    X, Y, _ = make_label_histograms(
        150, 3, 4, n_features=3, temperature=1.0, random_state=6
    )
    clf = LogisticRegression().fit(X, Y.argmax(1))
    frozen = Scaler(FrozenEstimator(clf)).fit(X, Y)
    crossfit = Scaler(LogisticRegression(), cv=3).fit(X, Y)
    assert crossfit.predict_proba(X).shape == (150, 3)
    assert crossfit.score(X, Y) == pytest.approx(
        np.mean(crossfit.predict_proba(X).argmax(1) == Y.argmax(1))
    )
    again = pickle.loads(pickle.dumps(frozen))
    np.testing.assert_array_equal(again.predict_proba(X), frozen.predict_proba(X))
    assert not hasattr(clone(frozen), "coef_")


def test_grid_search_matrix_regularisation_with_human_scorer():
    from sklearn_hcal.metrics import get_human_scorer

    Z, Y, _ = make_label_histograms(300, 3, 5, temperature=1.5, random_state=7)
    grid = {"reg_weight": [0.1, 10.0], "reg_bias": [0.1, 10.0]}
    search = GridSearchCV(
        MatrixScaler(),
        grid,
        scoring=get_human_scorer("neg_kl_divergence"),
        cv=KFold(3),
        error_score="raise",
    ).fit(Z, Y)
    # recompute every candidate's mean held-out KL independently
    means = []
    for params in search.cv_results_["params"]:
        kls = []
        for train, test in KFold(3).split(Z):
            ms = MatrixScaler(**params).fit(Z[train], Y[train])
            P = ms.predict_proba(Z[test])
            H = Y[test] / Y[test].sum(1, keepdims=True)
            kls.append(np.mean(rel_entr(H, P).sum(1)))
        means.append(-np.mean(kls))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], means, rtol=1e-6)
    assert search.best_params_ == search.cv_results_["params"][int(np.argmax(means))]
    assert isinstance(search.best_estimator_, MatrixScaler)


@parametrize_with_checks(
    [
        VectorScaler(LogisticRegression(), cv=2),
        MatrixScaler(LogisticRegression(), cv=2),
        VectorScaler(),
        MatrixScaler(),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
