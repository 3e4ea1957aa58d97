"""AlphaCalibrator: recovery of a known concentration, optimality, closed forms,
estimator modes, scikit-learn integration and bad input."""

import pickle
import warnings

import numpy as np
import pytest
from scipy import optimize
from scipy.special import digamma, gammaln, softmax

torch = pytest.importorskip("torch")

from sklearn.base import clone  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from sklearn_hcal.calibration import AlphaCalibrator  # noqa: E402
from sklearn_hcal.datasets import make_label_histograms  # noqa: E402
from tests._calibrator_checks import expected_failed_checks  # noqa: E402


def _dm_problem(n, K=3, n_labels=5, a=(0.3, -0.2, 0.1), b=1.6094379124341003, seed=0):
    """Items with Q ~ Dir(α0*(z)·softmax(z)), α0* = exp(a·z + b) known."""
    Z, _, _ = make_label_histograms(n, n_classes=K, n_annotations=1, random_state=seed)
    alpha0 = np.exp(Z @ np.asarray(a)[:K] + b)
    Z2, Y, Q = make_label_histograms(
        n, n_classes=K, n_annotations=n_labels, concentration=alpha0, random_state=seed
    )
    assert np.array_equal(Z, Z2)
    return Z, Y, alpha0


def _reference_objective(params, G, F, Y, reg):
    """The α-calibration loss and its gradient, written with scipy."""
    log_a0 = G @ params[:-1] + params[-1]
    a0 = np.exp(log_a0)
    alpha = a0[:, None] * F
    n = Y.sum(1)
    w = n / n.mean()
    ll = gammaln(a0) - gammaln(a0 + n) + (gammaln(alpha + Y) - gammaln(alpha)).sum(1)
    dll = a0 * (
        (F * (digamma(alpha + Y) - digamma(alpha))).sum(1)
        + digamma(a0)
        - digamma(a0 + n)
    )
    d = (-w * dll + 2 * reg * log_a0) / len(n)
    grad = np.append(G.T @ d, d.sum())
    return np.mean(w * -ll) + reg * np.mean(log_a0**2), grad


def test_recovers_known_concentration():
    Z, Y, alpha0 = _dm_problem(20_000)
    cal = AlphaCalibrator(alpha_reg=0.0, random_state=0).fit(Z, Y)
    assert cal.solver_ == "lbfgs"
    rel = np.abs(cal.predict_concentration(Z) / alpha0 - 1)
    assert np.median(rel) < 0.10
    # f is never altered
    np.testing.assert_array_equal(cal.predict_proba(Z), softmax(Z, axis=1))


@pytest.mark.parametrize("n_labels", [2, [2, 3, 5]])
def test_matches_independent_scipy_optimum(n_labels):
    rng = np.random.RandomState(1)
    n = 300
    n_ann = n_labels if np.isscalar(n_labels) else rng.choice(n_labels, size=n)
    Z, _, _ = make_label_histograms(n, n_classes=3, n_annotations=1, random_state=1)
    alpha0 = np.exp(0.4 * Z[:, 0] + 1.0)
    _, Y, _ = make_label_histograms(
        n, n_classes=3, n_annotations=n_ann, concentration=alpha0, random_state=1
    )
    F = softmax(Z, axis=1)
    cal = AlphaCalibrator(alpha_reg=0.005).fit(Z, Y)
    ref = optimize.minimize(
        _reference_objective,
        np.zeros(Z.shape[1] + 1),
        args=(Z, F, Y, 0.005),
        jac=True,
        method="BFGS",
        options={"gtol": 1e-9},
    )
    assert np.abs(ref.jac).max() < 1e-6
    np.testing.assert_allclose(
        np.log(cal.predict_concentration(Z)),
        Z @ ref.x[:-1] + ref.x[-1],
        atol=2e-4,
    )
    assert cal.loss_ == pytest.approx(ref.fun, abs=1e-9)
    # α0 moved far from its initial value of 1: the fit is not stuck at init.
    assert abs(np.median(np.log(cal.predict_concentration(Z)))) > 0.3


def _eq51_rhs(log_a0, f, y, lam):
    """Mimori et al. eq. 51 (binary or K classes), with the explicit sums."""
    a0 = np.exp(log_a0)
    n = int(y.sum())
    # α0 multiplied into each term of eq. 51 so that j = 1 stays finite
    first = sum(
        a0 * f[k] / (a0 * f[k] + (j - 1))
        for k in range(len(f))
        for j in range(1, y[k] + 1)
    )
    second = sum(a0 / (a0 + (j - 1)) for j in range(1, n + 1))
    return -(first - second) / n + 2 * lam * log_a0


def test_per_instance_optimum_solves_eq51():
    # One free α0 per item (one-hot features): each optimum is a root of
    # eq. 51. With a common n, our normalisation equals the paper's eq. 50
    # with λ_paper = alpha_reg / n.
    rng = np.random.RandomState(0)
    N, n, reg = 24, 5, 0.1
    F = rng.dirichlet(np.ones(2), size=N)
    Y = np.stack([rng.multinomial(n, rng.dirichlet(2 * f)) for f in F])
    Z = np.log(F)
    onehot = np.eye(N)
    cal = AlphaCalibrator(
        features=lambda X: onehot[: len(X)],
        alpha_reg=reg,
        solver="lbfgs",
        max_iter=2000,
        tol=1e-10,
    ).fit(Z, Y)
    fitted = np.log(cal.predict_concentration(Z))
    roots = np.array(
        [
            optimize.brentq(_eq51_rhs, -40, 40, args=(F[i], Y[i], reg / n), xtol=1e-12)
            for i in range(N)
        ]
    )
    np.testing.assert_allclose(fitted, roots, atol=1e-3)
    # unanimous items get a smaller α0 than split ones (App. D.2 discussion)
    unanimous = Y.max(1) == n
    assert unanimous.any() and (~unanimous).any()


def test_closed_forms_and_sampling():
    Z, Y, _ = _dm_problem(500, seed=3)
    cal = AlphaCalibrator(random_state=0).fit(Z, Y)
    Zt = Z[:50]
    f = cal.predict_proba(Zt)
    a0 = cal.predict_concentration(Zt)
    np.testing.assert_allclose(cal.transform(Zt), a0[:, None] * f)
    np.testing.assert_allclose(
        cal.predict_disagreement(Zt), a0 / (a0 + 1) * (1 - (f**2).sum(1))
    )
    Ynew = Y[:50]
    np.testing.assert_allclose(
        cal.predict_posterior(Zt, Ynew),
        (a0[:, None] * f + Ynew) / (a0 + Ynew.sum(1))[:, None],
    )
    # one new label as a 1-D vector; a zero row keeps the prior
    lab = np.argmax(Ynew, axis=1)
    np.testing.assert_allclose(
        cal.predict_posterior(Zt, lab),
        (a0[:, None] * f + np.eye(3)[lab]) / (a0 + 1)[:, None],
    )
    np.testing.assert_allclose(cal.predict_posterior(Zt, np.zeros((50, 3))), f)
    draws = cal.sample(Zt, 4000, random_state=0)
    assert draws.shape == (4000, 50, 3)
    np.testing.assert_allclose(draws.sum(-1), 1.0)
    se = draws.std(0) / np.sqrt(4000)
    assert np.all(np.abs(draws.mean(0) - f) < 3 * se + 1e-12) or (
        np.mean(np.abs(draws.mean(0) - f) < 3 * se) > 0.99
    )
    # Monte Carlo disagreement 1 - E Σζ² agrees with the closed form
    mc = 1 - (draws**2).sum(-1).mean(0)
    np.testing.assert_allclose(mc, cal.predict_disagreement(Zt), atol=0.02)


def test_probabilities_input_is_converted():
    Z, Y, _ = _dm_problem(400, seed=4)
    P = softmax(Z, axis=1)
    a = AlphaCalibrator().fit(Z, Y)
    b = AlphaCalibrator().fit(P, Y)
    assert b.input_type_ == "proba"
    np.testing.assert_allclose(b.predict_proba(P), P, atol=1e-12)
    # log-probabilities differ from logits by a per-row constant, so the
    # concentration model sees different features; both must fit sensibly
    assert np.all(np.isfinite(b.predict_concentration(P)))
    assert a.input_type_ == "logits"


def test_single_label_items_contribute_only_the_regulariser():
    Z, Y, _ = _dm_problem(600, seed=5)
    Z1, Y1, _ = make_label_histograms(300, n_classes=3, n_annotations=1, random_state=9)
    a = AlphaCalibrator(alpha_reg=0.0).fit(Z, Y)
    b = AlphaCalibrator(alpha_reg=0.0).fit(np.vstack([Z, Z1]), np.vstack([Y, Y1]))
    # without the regulariser, adding single-label items only rescales the
    # loss (weights n_i / mean n) and leaves the optimum unchanged
    np.testing.assert_allclose(
        a.predict_concentration(Z), b.predict_concentration(Z), rtol=1e-3
    )
    with pytest.warns(UserWarning, match="No item has two or more"):
        c = AlphaCalibrator().fit(Z1, Y1)
    np.testing.assert_allclose(c.predict_concentration(Z1), 1.0)
    with pytest.warns(UserWarning, match="No item has two or more"):
        AlphaCalibrator().fit(Z1, np.argmax(Y1, axis=1))


@pytest.mark.slow
def test_adam_solver_and_hidden_layers_reach_the_optimum():
    Z, Y, alpha0 = _dm_problem(4000, seed=6)
    lb = AlphaCalibrator(alpha_reg=0.0).fit(Z, Y)
    ad = AlphaCalibrator(
        alpha_reg=0.0, solver="adam", learning_rate=0.05, random_state=0
    ).fit(Z, Y)
    assert ad.solver_ == "adam"
    diff = np.abs(
        np.log(ad.predict_concentration(Z)) - np.log(lb.predict_concentration(Z))
    )
    assert np.median(diff) < 0.08 and diff.max() < 0.4
    mlp = AlphaCalibrator(
        hidden_layer_sizes=(8,), alpha_reg=0.0, learning_rate=0.02, random_state=0
    ).fit(Z, Y)
    assert mlp.solver_ == "adam" and len(mlp.coefs_) == 2
    rel = np.abs(mlp.predict_concentration(Z) / alpha0 - 1)
    assert np.median(rel) < 0.3
    # deterministic on the CPU given random_state
    mlp2 = clone(mlp).fit(Z, Y)
    np.testing.assert_array_equal(
        mlp.predict_concentration(Z), mlp2.predict_concentration(Z)
    )


@pytest.mark.slow
def test_auto_solver_rule():
    Z, Y, _ = _dm_problem(300, seed=7)
    G = np.random.RandomState(0).randn(300, 64)
    assert AlphaCalibrator().fit(Z, Y).solver_ == "lbfgs"
    cal = AlphaCalibrator(features=lambda X: G[: len(X)], random_state=0)
    assert cal.fit(Z, Y).solver_ == "adam"


def test_frozen_estimator_keeps_probabilities():
    rng = np.random.RandomState(0)
    X = rng.randn(600, 4)
    Z = X @ rng.randn(4, 3)
    alpha0 = np.full(600, 3.0)
    Q = np.stack([rng.dirichlet(a * softmax(z)) for a, z in zip(alpha0, Z)])
    Y = np.stack([rng.multinomial(4, q) for q in Q])
    clf = LogisticRegression().fit(X, Y.argmax(1))
    cal = AlphaCalibrator(FrozenEstimator(clf)).fit(X, Y)
    np.testing.assert_array_equal(cal.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(cal.predict(X), clf.predict(X))
    np.testing.assert_array_equal(cal.classes_, clf.classes_)
    assert cal.predict_disagreement(X).shape == (600,)


def test_crossfit_unfitted_estimator_with_histograms():
    rng = np.random.RandomState(0)
    X = rng.randn(300, 3)
    Y = np.stack([rng.multinomial(3, softmax(x)) for x in X])
    cal = AlphaCalibrator(LogisticRegression(), cv=3).fit(X, Y)
    assert type(cal.estimator_).__name__ == "SoftLabelClassifier"
    np.testing.assert_allclose(cal.predict_proba(X), cal.estimator_.predict_proba(X))


@pytest.mark.slow
def test_pickle_and_clone():
    Z, Y, _ = _dm_problem(300, seed=8)
    cal = AlphaCalibrator(hidden_layer_sizes=(4,), random_state=0).fit(Z, Y)
    back = pickle.loads(pickle.dumps(cal))
    np.testing.assert_array_equal(
        back.predict_disagreement(Z), cal.predict_disagreement(Z)
    )
    assert clone(cal).get_params() == cal.get_params()


def test_bad_input():
    Z, Y, _ = _dm_problem(100, seed=9)
    Zn = Z.copy()
    Zn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        AlphaCalibrator().fit(Zn, Y)
    G = np.random.RandomState(0).randn(100, 2)
    G[0, 0] = np.inf
    with pytest.raises(ValueError, match="features"):
        AlphaCalibrator(features=lambda X: G).fit(Z, Y)
    with pytest.raises(ValueError, match="skorch"):
        AlphaCalibrator(features="penultimate").fit(Z, Y)
    with pytest.raises(ValueError, match="classes"):
        AlphaCalibrator().fit(Z, Y[:, :2])
    with pytest.raises(ValueError, match="non-negative"):
        AlphaCalibrator().fit(Z, -Y)
    with pytest.raises(ValueError, match="alpha_reg"):
        AlphaCalibrator(alpha_reg=-1.0).fit(Z, Y)
    cal = AlphaCalibrator().fit(Z, Y)
    with pytest.raises(ValueError, match="Y_new"):
        cal.predict_posterior(Z, -np.ones((100, 3)))
    with pytest.raises(ValueError, match="n_draws"):
        cal.sample(Z, 0)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        AlphaCalibrator().predict_disagreement(Z)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_finite_features_name_their_row_and_huge_ones_fit(value, dtype):
    # The fit finds non-finite features through their moments (no extra pass
    # over G): each kind, in either dtype, must still be named with its row
    # and column, and finite features of any magnitude must not be mistaken
    # for them.
    Z, Y, _ = _dm_problem(100, seed=9)
    G = np.random.RandomState(0).randn(100, 3).astype(dtype)
    bad = G.copy()
    bad[7, 2] = value
    bad[40, 1] = value
    with pytest.raises(ValueError, match=rf"first at row 7, column 2: {value!r}"):
        AlphaCalibrator(features=lambda X: bad).fit(Z, Y)
    both = G.copy()
    both[[5, 9], 0] = [np.inf, -np.inf]  # inf - inf: a NaN mean
    with pytest.raises(ValueError, match="first at row 5, column 0: inf"):
        AlphaCalibrator(features=lambda X: both).fit(Z, Y)
    huge = G.astype(np.float64) * 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        cal = AlphaCalibrator(features=lambda X: huge).fit(Z, Y)
    assert np.all(np.isfinite(cal.feature_scale_))


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_cuda_is_a_clear_error():
    Z, Y, _ = _dm_problem(50, seed=10)
    with pytest.raises(ValueError, match="CUDA is not available"):
        AlphaCalibrator(device="cuda").fit(Z, Y)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_fit_on_gpu_predict_on_cpu():
    Z, Y, _ = _dm_problem(2000, seed=11)
    gpu = AlphaCalibrator(device="cuda", alpha_reg=0.0).fit(Z, Y)
    cpu = AlphaCalibrator(device="cpu", alpha_reg=0.0).fit(Z, Y)
    back = pickle.loads(pickle.dumps(gpu))
    assert all(isinstance(c, np.ndarray) for c in back.coefs_)
    np.testing.assert_allclose(
        back.predict_concentration(Z), cpu.predict_concentration(Z), rtol=1e-4
    )
    ad = AlphaCalibrator(device="cuda", solver="adam", random_state=0).fit(Z, Y)
    assert np.all(np.isfinite(pickle.loads(pickle.dumps(ad)).predict_disagreement(Z)))


def _skorch_net(seed=0):
    from sklearn_hcal import make_soft_label_net

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU())
            self.dropout = torch.nn.Dropout(0.3)
            self.fc = torch.nn.Linear(6, 3)

        def forward(self, X):
            return self.fc(self.dropout(self.body(X)))

    return make_soft_label_net(MLP, max_epochs=3, random_state=seed)


@pytest.mark.slow
def test_skorch_penultimate_and_named_layer_features():
    torch.set_num_threads(1)
    rng = np.random.RandomState(0)
    X = rng.randn(200, 4).astype(np.float32)
    Y = np.stack([rng.multinomial(3, softmax(x[:3])) for x in X])
    net = _skorch_net().fit(X, Y)
    cal = AlphaCalibrator(FrozenEstimator(net), features="penultimate").fit(X, Y)
    assert cal.feature_mean_.shape == (6,)
    with torch.no_grad():
        body = net.module_.body(torch.as_tensor(X)).double().numpy()
    np.testing.assert_allclose(cal.feature_mean_, body.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cal.predict_proba(X), net.predict_proba(X), atol=1e-6)
    named = AlphaCalibrator(FrozenEstimator(net), features="body").fit(X, Y)
    np.testing.assert_allclose(named.feature_mean_, cal.feature_mean_, rtol=1e-6)
    with pytest.raises(ValueError, match="available layers.*body"):
        AlphaCalibrator(FrozenEstimator(net), features="nope").fit(X, Y)


@parametrize_with_checks(
    [
        AlphaCalibrator(random_state=0, max_iter=20),
        AlphaCalibrator(LogisticRegression(), cv=2, random_state=0, max_iter=20),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


def test_model_selection_with_human_scorers():
    from sklearn.model_selection import GridSearchCV, KFold, cross_validate

    from sklearn_hcal.metrics import HUMAN_SCORERS, get_human_scorer

    Z, Y, _ = _dm_problem(600, seed=12)
    search = GridSearchCV(
        AlphaCalibrator(),
        {"alpha_reg": [0.0, 0.005, 100.0]},
        scoring=get_human_scorer("neg_disagreement_squared_loss"),
        cv=KFold(3),
        error_score="raise",
    ).fit(Z, Y)
    scores = search.cv_results_["mean_test_score"]
    # a huge penalty pins α0 = 1, far from the truth (α0* ≈ 5): worst score
    assert np.argmin(scores) == 2
    res = cross_validate(
        AlphaCalibrator(),
        Z,
        Y,
        cv=KFold(3),
        scoring={
            **HUMAN_SCORERS,
            "dsl": get_human_scorer("neg_disagreement_squared_loss"),
        },
        error_score="raise",
    )
    assert np.all(np.isfinite(res["test_dsl"]))
    assert np.all(np.isfinite(res["test_neg_epistemic_loss"]))


def test_verbose_progress_goes_to_stderr_not_stdout(capsys):
    X, Y, _ = make_label_histograms(200, 3, 3, random_state=0)
    AlphaCalibrator(verbose=1, random_state=0).fit(X, Y)
    out, err = capsys.readouterr()
    assert out == ""
    assert "AlphaCalibrator: solver=" in err
    AlphaCalibrator(verbose=0, random_state=0).fit(X, Y)
    assert capsys.readouterr() == ("", "")


def test_integer_sample_weight_equals_repeated_items():
    Z, Y, _ = _dm_problem(300, seed=13)
    w = np.random.RandomState(0).randint(0, 4, size=300)
    weighted = AlphaCalibrator(solver="lbfgs").fit(Z, Y, sample_weight=w)
    rows = np.repeat(np.arange(300), w)
    repeated = AlphaCalibrator(solver="lbfgs").fit(Z[rows], Y[rows])
    np.testing.assert_allclose(weighted.feature_mean_, repeated.feature_mean_)
    np.testing.assert_allclose(weighted.feature_scale_, repeated.feature_scale_)
    np.testing.assert_allclose(
        weighted.predict_concentration(Z), repeated.predict_concentration(Z), rtol=1e-5
    )
    assert weighted.loss_ == pytest.approx(repeated.loss_, rel=1e-8)
    unweighted = AlphaCalibrator(solver="lbfgs").fit(Z, Y)
    assert (
        np.abs(
            np.log(
                unweighted.predict_concentration(Z) / weighted.predict_concentration(Z)
            )
        ).max()
        > 1e-3
    )


def test_degenerate_fit_at_the_clip_bound_warns():
    # unanimous annotators on items where f hesitates: without a penalty the
    # likelihood pushes α0 towards 0 for every item
    rng = np.random.RandomState(0)
    Z = 0.35 * rng.randn(600, 10)
    Y = np.zeros((600, 10), int)
    Y[np.arange(600), rng.randint(10, size=600)] = 10
    with pytest.warns(UserWarning, match="alpha0 is below 1e-6.*100%"):
        cal = AlphaCalibrator(alpha_reg=0.0).fit(Z, Y)
    assert np.all(cal.predict_concentration(Z) < 1e-6)
    # the default penalty keeps α0 away from the bound: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        AlphaCalibrator().fit(Z, Y)
        # nor does a well-specified problem warn
        AlphaCalibrator(alpha_reg=0.0).fit(*_dm_problem(300, seed=14)[:2])


def test_input_parameter_forces_the_reading_of_X():
    Z, Y, _ = _dm_problem(300, seed=15)
    P = softmax(Z, axis=1)
    as_logits = AlphaCalibrator(input="logits").fit(P, Y)
    assert as_logits.input_type_ == "logits"
    np.testing.assert_allclose(as_logits.predict_proba(P), softmax(P, axis=1))
    with pytest.raises(ValueError, match="probabilities.*row 0"):
        AlphaCalibrator(input="proba").fit(Z, Y)


def test_normalization_eq50_is_the_reference_objective_rescaled():
    # With a common number of labels n, "reference" with alpha_reg equals
    # "eq50" with alpha_reg / n (the objectives differ by the factor n).
    Z, Y, _ = make_label_histograms(
        600, n_classes=3, n_annotations=5, concentration=4.0, random_state=3
    )
    ref = AlphaCalibrator(alpha_reg=0.05, random_state=0).fit(Z, Y)
    eq50 = AlphaCalibrator(alpha_reg=0.05 / 5, normalization="eq50", random_state=0)
    eq50.fit(Z, Y)
    np.testing.assert_allclose(
        ref.predict_concentration(Z), eq50.predict_concentration(Z), rtol=1e-4
    )


def test_l2_reg_shrinks_the_weights_towards_a_constant_concentration():
    Z, Y, _ = make_label_histograms(
        600, n_classes=3, n_annotations=5, concentration=4.0, random_state=4
    )
    free = AlphaCalibrator(alpha_reg=0.0, random_state=0).fit(Z, Y)
    tight = AlphaCalibrator(alpha_reg=0.0, l2_reg=1e4, random_state=0).fit(Z, Y)
    assert np.linalg.norm(tight.coefs_[0]) < 1e-3 * np.linalg.norm(free.coefs_[0])
    # the intercept is not penalised: a constant α0 fitted to the data
    a0 = tight.predict_concentration(Z)
    assert np.ptp(np.log(a0)) < 1e-2
    assert 1.0 < np.median(a0) < 20.0


def test_feature_standardisation_weights_equal_repeats_and_never_overflow():
    from sklearn_hcal.calibration._alpha._features import standardize_features

    rng = np.random.RandomState(0)
    G = rng.normal(size=(40, 3))
    w = rng.randint(1, 4, size=40)
    H, mean, scale = standardize_features(G, w)
    Hr, mean_r, scale_r = standardize_features(np.repeat(G, w, axis=0))
    np.testing.assert_allclose(mean, mean_r, rtol=1e-12)
    np.testing.assert_allclose(scale, scale_r, rtol=1e-12)
    np.testing.assert_allclose(H, (G - mean_r) / scale_r, rtol=1e-12)
    huge = G * 1e300
    H, mean, scale = standardize_features(huge)
    assert np.all(np.isfinite(scale)) and np.all(np.isfinite(H))
    np.testing.assert_allclose(H, (G - G.mean(0)) / G.std(0), atol=1e-10)
