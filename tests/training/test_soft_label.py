"""Tests of SoftLabelClassifier (fitting any classifier on label histograms)."""

import pickle

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax
from scipy.stats import chisquare
from sklearn.base import clone
from sklearn.dummy import DummyClassifier
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_hcal import SoftLabelClassifier
from sklearn_hcal._training._soft_label import MISSING_CLASS_MARGIN
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import distribution_calibration_error, kl_divergence


def _mle_soft_labels(X, Y, weight=None):
    """Direct multinomial soft-label MLE: min -sum_i w_i sum_k Y_ik log q_ik."""
    n, d = X.shape
    K = Y.shape[1]
    w = np.ones(n) if weight is None else weight
    WY = Y * w[:, None]
    Xb = np.column_stack([X, np.ones(n)])

    def fun(theta):
        B = theta.reshape(d + 1, K)
        logq = log_softmax(Xb @ B, axis=1)
        loss = -np.sum(WY * logq)
        # d/dz of -sum_k y_k log softmax(z)_k = (sum_k y_k) q - y
        G = WY.sum(axis=1, keepdims=True) * np.exp(logq) - WY
        return loss, (Xb.T @ G).ravel()

    res = minimize(
        fun,
        np.zeros((d + 1) * K),
        jac=True,
        method="BFGS",
        options={"gtol": 1e-8, "maxiter": 10_000},
    )
    B = res.x.reshape(d + 1, K)
    return B[:d].T, B[d], res


def _centered(coef, intercept):
    # multinomial parameters are identified only up to a shift shared by all
    # classes; centring over classes picks one representative
    return coef - coef.mean(axis=0), intercept - intercept.mean()


@pytest.fixture(scope="module")
def small_problem():
    X, Y, _ = make_label_histograms(
        60, n_classes=3, n_annotations=4, n_features=3, scale=1.0, random_state=0
    )
    return X, Y


@pytest.mark.parametrize("with_weight", [False, True])
def test_weighted_is_soft_label_mle(small_problem, with_weight):
    X, Y = small_problem
    weight = np.random.RandomState(1).uniform(0.5, 2.0, len(X)) if with_weight else None
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000)
    clf = SoftLabelClassifier(lr, strategy="weighted").fit(X, Y, sample_weight=weight)
    coef, intercept, res = _mle_soft_labels(X, Y.astype(float), weight)
    # BFGS may stop on "precision loss" at the optimum; check stationarity
    assert np.max(np.abs(res.jac)) < 1e-6, res.message
    P_ref = softmax(X @ coef.T + intercept, axis=1)
    np.testing.assert_allclose(clf.predict_proba(X), P_ref, atol=1e-4)
    c1, b1 = _centered(clf.estimator_.coef_, clf.estimator_.intercept_)
    c2, b2 = _centered(coef, intercept)
    np.testing.assert_allclose(c1, c2, atol=1e-4)
    np.testing.assert_allclose(b1, b2, atol=1e-4)


def test_weighted_differs_from_majority_mle(small_problem):
    # guard against a vacuous MLE test: the hard-label fit is a different model
    X, Y = small_problem
    lr = LogisticRegression(C=np.inf, max_iter=10_000)
    soft = SoftLabelClassifier(lr, strategy="weighted").fit(X, Y)
    hard = SoftLabelClassifier(lr, strategy="majority", random_state=0).fit(X, Y)
    assert np.abs(soft.predict_proba(X) - hard.predict_proba(X)).max() > 0.05


def test_integer_sample_weight_equals_repeated_annotations(small_problem):
    X, Y = small_problem
    w = np.random.RandomState(2).randint(1, 4, len(X))
    lr = LogisticRegression(C=1.0, tol=1e-12, max_iter=10_000)
    a = SoftLabelClassifier(lr, strategy="weighted").fit(X, Y, sample_weight=w)
    b = SoftLabelClassifier(lr, strategy="weighted").fit(X, Y * w[:, None])
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_beats_majority_held_out(seed):
    # 3 labels per training item, 100 per test item (test histograms close to
    # the truth, so the metrics measure the model rather than label noise)
    n_ann = np.r_[np.full(400, 3), np.full(400, 100)]
    X, Y, Q = make_label_histograms(800, 4, n_ann, n_features=5, random_state=seed)
    tr, te = slice(0, 400), slice(400, None)
    res = {}
    for strategy in ("weighted", "majority"):
        clf = SoftLabelClassifier(
            LogisticRegression(), strategy=strategy, random_state=0
        ).fit(X[tr], Y[tr])
        P = clf.predict_proba(X[te])
        res[strategy] = (
            kl_divergence(Y[te], P),
            distribution_calibration_error(Y[te], P),
            kl_divergence(Q[te], P),
        )
    (kl_w, dce_w, klq_w), (kl_m, dce_m, klq_m) = res["weighted"], res["majority"]
    # stated margins: KL at most 60 % of the majority fit's, DistCE at least
    # 0.015 lower (measured: KL 0.020-0.023 vs 0.047-0.056, DistCE 0.057-0.069
    # vs 0.084-0.109 over these seeds)
    assert kl_w < 0.6 * kl_m
    assert dce_w < dce_m - 0.015
    assert klq_w < 0.5 * klq_m  # also against the true distributions


def _three_class_data(n=90, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 2))
    Y = rng.multinomial(5, [0.45, 0.35, 0.2], size=n)
    return X, Y


def test_absent_class_gets_zero_column():
    X, Y = _three_class_data()
    Y[:, 2] = 0
    Y[:, 0] += 1  # keep every row non-empty
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, Y)
    assert list(clf.classes_) == [0, 1, 2]
    P = clf.predict_proba(X)
    assert P.shape == (len(X), 3)
    np.testing.assert_array_equal(P[:, 2], 0.0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    # the inner binary model: the 1-D score s becomes (-s/2, s/2) and the
    # absent class sits MISSING_CLASS_MARGIN below, so softmax ~ predict_proba
    D = clf.decision_function(X)
    assert D.shape == (len(X), 3) and np.all(np.isfinite(D))
    s = clf.estimator_.decision_function(X)
    np.testing.assert_allclose(D[:, 1] - D[:, 0], s)
    np.testing.assert_allclose(D[:, 2], D[:, :2].min(axis=1) - MISSING_CLASS_MARGIN)
    np.testing.assert_allclose(softmax(D, axis=1), P, atol=1e-9)


def test_class_that_never_wins_the_majority():
    rng = np.random.RandomState(0)
    n = 120
    X = rng.normal(size=(n, 2))
    first = (X[:, 0] > 0).astype(int)
    Y = np.zeros((n, 4), dtype=int)
    Y[np.arange(n), first] = 3  # class 0 or 1 always wins
    Y[:, 2] = rng.randint(0, 3, n)  # class 2 seen, never a majority
    Y[:, 3] = 1  # class 3 always there, never a majority
    maj = SoftLabelClassifier(LogisticRegression(), strategy="majority").fit(X, Y)
    np.testing.assert_array_equal(maj.estimator_.classes_, [0, 1])
    P = maj.predict_proba(X)
    assert P.shape == (n, 4)
    np.testing.assert_array_equal(P[:, 2:], 0.0)
    weighted = SoftLabelClassifier(LogisticRegression(), strategy="weighted").fit(X, Y)
    Pw = weighted.predict_proba(X)
    assert np.all(Pw[:, 2:] > 0)
    # class 3 has a quarter to a sixth of each item's labels
    assert 0.1 < Pw[:, 3].mean() < 0.3
    # multinomial inner model with one unseen class: softmax(scores) = proba
    Y2 = Y.copy()
    Y2[:, 3] = 0
    clf = SoftLabelClassifier(LogisticRegression(), strategy="weighted").fit(X, Y2)
    D = clf.decision_function(X)
    np.testing.assert_allclose(softmax(D, axis=1), clf.predict_proba(X), atol=1e-9)
    np.testing.assert_array_equal(clf.predict_proba(X)[:, 3], 0.0)


def test_dataframe_columns_become_classes_in_order():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(150, 1))
    # the first column ("c") dominates for x < 0, the last ("b") for x > 0
    Y = np.column_stack(
        [
            rng.binomial(4, np.where(X[:, 0] < 0, 0.8, 0.1)),
            np.ones(150, dtype=int),
            rng.binomial(4, np.where(X[:, 0] > 0, 0.8, 0.1)),
        ]
    )
    frame = pd.DataFrame(Y, columns=["c", "a", "b"])
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, frame)
    assert list(clf.classes_) == ["c", "a", "b"]
    P = clf.predict_proba(np.array([[-3.0], [3.0]]))
    assert P[0].argmax() == 0 and P[1].argmax() == 2
    assert list(clf.predict(np.array([[-3.0], [3.0]]))) == ["c", "b"]
    # permuting the histogram columns permutes the probability columns
    perm = [2, 0, 1]
    clf_p = SoftLabelClassifier(LogisticRegression(tol=1e-10)).fit(X, Y[:, perm])
    clf_o = SoftLabelClassifier(LogisticRegression(tol=1e-10)).fit(X, Y)
    np.testing.assert_allclose(
        clf_p.predict_proba(X), clf_o.predict_proba(X)[:, perm], atol=1e-5
    )


def test_sample_strategy_reproducible_and_unbiased():
    rng = np.random.RandomState(0)
    n = 6000
    probs = np.array([0.5, 0.3, 0.2, 0.0])
    Y = rng.multinomial(7, probs, size=n)
    X = np.arange(n, dtype=float)[:, None]  # 1-NN recalls each item's label

    def drawn(seed):
        clf = SoftLabelClassifier(
            KNeighborsClassifier(n_neighbors=1), strategy="sample", random_state=seed
        ).fit(X, Y)
        assert clf.predict_proba(X).shape == (n, 4)
        return clf.predict(X)

    a, b, c = drawn(0), drawn(0), drawn(1)
    np.testing.assert_array_equal(a, b)
    assert np.mean(a != c) > 0.3
    # a drawn label always has a positive count
    assert np.all(Y[np.arange(n), a] > 0)
    # frequencies match mean(Y / n) (chi-square goodness of fit)
    expected = (Y / Y.sum(axis=1, keepdims=True)).mean(axis=0)[:3] * n
    observed = np.bincount(a, minlength=4)[:3]
    assert observed.sum() == n
    assert chisquare(observed, expected).pvalue > 1e-3
    # items whose histogram is concentrated on one class always draw it
    Y1 = np.zeros((50, 4), dtype=int)
    Y1[np.arange(50), np.arange(50) % 4] = 3
    clf = SoftLabelClassifier(
        KNeighborsClassifier(n_neighbors=1), strategy="sample", random_state=0
    ).fit(X[:50], Y1)
    np.testing.assert_array_equal(clf.predict(X[:50]), np.arange(50) % 4)


def test_majority_ties_broken_at_random():
    n = 4000
    Y = np.tile([[2, 2, 1], [0, 1, 3]], (n // 2, 1))
    X = np.arange(n, dtype=float)[:, None]
    labels = [
        SoftLabelClassifier(
            KNeighborsClassifier(n_neighbors=1), strategy="majority", random_state=s
        )
        .fit(X, Y)
        .predict(X)
        for s in (0, 0, 1)
    ]
    np.testing.assert_array_equal(labels[0], labels[1])
    tied = labels[0][0::2]
    assert set(np.unique(tied)) == {0, 1}
    # fair coin: 2000 ties, 5 standard deviations = 0.056
    assert abs(np.mean(tied == 0) - 0.5) < 0.056
    np.testing.assert_array_equal(labels[0][1::2], 2)  # no tie: the argmax
    assert np.any(labels[0] != labels[2])


def test_auto_strategy():
    X, Y = _three_class_data()
    with pytest.warns(UserWarning, match="majority label of each histogram"):
        knn = SoftLabelClassifier(KNeighborsClassifier(n_neighbors=3)).fit(X, Y)
    assert knn.strategy_ == "majority"
    assert knn.predict_proba(X).shape == (len(X), 3)
    assert SoftLabelClassifier(LogisticRegression()).fit(X, Y).strategy_ == "weighted"
    with pytest.raises(ValueError, match="sample_weight"):
        SoftLabelClassifier(KNeighborsClassifier(), strategy="weighted").fit(X, Y)
    with pytest.raises(ValueError, match="sample_weight"), pytest.warns(UserWarning):
        SoftLabelClassifier(KNeighborsClassifier()).fit(
            X, Y, sample_weight=np.ones(len(X))
        )


def test_labels_1d_same_as_plain_estimator():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 3))
    y = np.array(["dog", "cat", "eel"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 1)]
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, y)
    ref = LogisticRegression().fit(X, y)
    np.testing.assert_array_equal(clf.classes_, ref.classes_)
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X))
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))
    assert clf.score(X, y) == accuracy_score(y, ref.predict(X))
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X))


def test_binary_decision_function_and_score():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(100, 2))
    Y = np.column_stack(
        [rng.binomial(5, 1 / (1 + np.exp(2 * X[:, 0]))), np.zeros(100, int)]
    )
    Y[:, 1] = 5 - Y[:, 0]
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, Y)
    d = clf.decision_function(X)
    assert d.shape == (100,)
    np.testing.assert_allclose(d, clf.estimator_.decision_function(X))
    # score = argmax vs human majority, computed independently
    P = clf.predict_proba(X)
    assert clf.score(X, Y) == pytest.approx(np.mean(P.argmax(1) == Y.argmax(1)))
    w = rng.uniform(size=100)
    assert clf.score(X, Y, sample_weight=w) == pytest.approx(
        np.average(P.argmax(1) == Y.argmax(1), weights=w)
    )


def test_estimator_without_predict_proba():
    X, Y = _three_class_data()
    clf = SoftLabelClassifier(LinearSVC()).fit(X, Y)
    assert not hasattr(clf, "predict_proba")
    D = clf.decision_function(X)
    assert D.shape == (len(X), 3)
    np.testing.assert_array_equal(clf.predict(X), D.argmax(axis=1))


def test_pipeline_cross_validate_uses_kfold_and_majority_accuracy():
    X, Y, _ = make_label_histograms(150, 3, 5, n_features=4, random_state=0)
    X = X * 10 + 3
    pipe = make_pipeline(StandardScaler(), SoftLabelClassifier(LogisticRegression()))
    res = cross_validate(pipe, X, Y, cv=5, error_score="raise")
    manual = []
    for tr, te in KFold(5).split(X):
        fitted = clone(pipe).fit(X[tr], Y[tr])
        P = fitted.predict_proba(X[te])
        manual.append(np.mean(P.argmax(1) == Y[te].argmax(1)))
    np.testing.assert_allclose(res["test_score"], manual)
    assert 0.5 < np.mean(manual) <= 1.0


def test_cross_validate_fold_missing_a_class():
    X, Y = _three_class_data(100)
    Y[:, 2] = 0
    Y[:20, 2] = 4  # class 2 only in the first fold
    Y[:, 0] += 1
    res = cross_validate(
        SoftLabelClassifier(LogisticRegression()),
        X,
        Y,
        cv=5,
        return_estimator=True,
        error_score="raise",
    )
    first = res["estimator"][0]
    np.testing.assert_array_equal(first.estimator_.classes_, [0, 1])
    np.testing.assert_array_equal(first.predict_proba(X[:20])[:, 2], 0.0)


def test_grid_search_with_histograms():
    X, Y, _ = make_label_histograms(120, 3, 4, n_features=3, random_state=1)
    pipe = make_pipeline(StandardScaler(), SoftLabelClassifier(LogisticRegression()))
    grid = GridSearchCV(
        pipe,
        {"softlabelclassifier__estimator__C": [1e-3, 1.0]},
        cv=3,
        error_score="raise",
    ).fit(X, Y)
    means = grid.cv_results_["mean_test_score"]
    assert grid.best_score_ == pytest.approx(means.max())
    assert grid.best_params_["softlabelclassifier__estimator__C"] in (1e-3, 1.0)
    assert grid.predict_proba(X).shape == (120, 3)
    assert grid.score(X, Y) == pytest.approx(
        np.mean(grid.predict_proba(X).argmax(1) == Y.argmax(1))
    )


def test_sparse_and_dataframe_X():
    from scipy import sparse

    X, Y = _three_class_data()
    dense = SoftLabelClassifier(LogisticRegression(tol=1e-10)).fit(X, Y)
    sp = SoftLabelClassifier(LogisticRegression(tol=1e-10)).fit(sparse.csr_matrix(X), Y)
    np.testing.assert_allclose(
        sp.predict_proba(sparse.csr_matrix(X)), dense.predict_proba(X), atol=1e-6
    )
    frame = pd.DataFrame(X, columns=["u", "v"])
    named = SoftLabelClassifier(LogisticRegression()).fit(frame, Y)
    np.testing.assert_array_equal(named.feature_names_in_, ["u", "v"])
    assert named.n_features_in_ == 2
    with pytest.raises(ValueError, match="feature names"):
        named.predict_proba(frame.rename(columns={"u": "w"}))


def test_clone_and_pickle():
    X, Y = _three_class_data()
    clf = SoftLabelClassifier(LogisticRegression(C=0.5), strategy="majority")
    clf.set_params(random_state=3)
    c = clone(clf)
    assert c.get_params()["estimator__C"] == 0.5 and c.random_state == 3
    fitted = clf.fit(X, Y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict_proba(X), fitted.predict_proba(X))
    np.testing.assert_array_equal(again.classes_, fitted.classes_)


def test_bad_input():
    X, Y = _three_class_data()
    clf = SoftLabelClassifier(LogisticRegression())
    # neither counts nor rows of probabilities (those are soft labels)
    with pytest.raises(ValueError, match="non-integer value .* and sums to"):
        clf.fit(X, Y + 0.5)
    with pytest.raises(ValueError, match="non-negative"):
        clf.fit(X, Y - 3)
    with pytest.raises(ValueError, match="zero annotations"):
        clf.fit(X, np.vstack([np.zeros((1, 3), int), Y[1:]]))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(Xn, Y)
    with pytest.raises(ValueError, match="classifier"):
        SoftLabelClassifier(LinearRegression()).fit(X, Y)
    with pytest.raises(ValueError, match="strategy"):
        SoftLabelClassifier(LogisticRegression(), strategy="mode").fit(X, Y)
    with pytest.raises(NotFittedError):
        clf.predict(X)
    with pytest.raises(NotFittedError):
        clf.predict_proba(X)
    with pytest.raises(ValueError, match="different numbers of samples"):
        clf.fit(X[:-1], Y)
    clf.fit(X, Y)
    with pytest.raises(ValueError, match="4 classes.*3 were expected"):
        clf.score(X, np.column_stack([Y, Y[:, :1]]))
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :1])
    with pytest.raises(ValueError, match="Unknown label type"):
        clf.fit(X, np.linspace(0, 1, len(X)))


def test_dummy_prior_matches_weighted_class_frequencies():
    # DummyClassifier(prior) estimates sum_i Y_ik / sum_i n_i under "weighted"
    X, Y = _three_class_data()
    clf = SoftLabelClassifier(DummyClassifier(strategy="prior")).fit(X, Y)
    np.testing.assert_allclose(
        clf.predict_proba(X[:1])[0], Y.sum(axis=0) / Y.sum(), atol=1e-12
    )


@parametrize_with_checks(
    [
        SoftLabelClassifier(LogisticRegression()),
        SoftLabelClassifier(LogisticRegression(), weighting="item"),
        SoftLabelClassifier(make_pipeline(StandardScaler(), LogisticRegression())),
    ],
    expected_failed_checks=lambda est: {},
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_item_weighting_splits_one_unit_per_item():
    X, Y, _ = make_label_histograms(150, 3, 5, n_features=3, random_state=4)
    item = SoftLabelClassifier(LogisticRegression(C=0.3), weighting="item").fit(X, Y)
    # the direct weighted fit: one row per (item, class), weight Y_ik / n_i
    rows, cols = np.nonzero(Y)
    direct = LogisticRegression(C=0.3).fit(
        X[rows], cols, sample_weight=Y[rows, cols] / Y.sum(axis=1)[rows]
    )
    np.testing.assert_allclose(item.predict_proba(X), direct.predict_proba(X))
    # the total weight is the number of items, as with majority labels: with
    # 5 annotations per item, annotation weights are 5 × item weights, so
    # LogisticRegression's C/5 under "annotation" is C under "item"
    annotation = SoftLabelClassifier(LogisticRegression(C=0.3 / 5)).fit(X, Y)
    np.testing.assert_allclose(
        annotation.predict_proba(X), item.predict_proba(X), atol=1e-6
    )
    # one annotation per item: "item" weighting is the plain fit on labels
    onehot = np.eye(3, dtype=int)[Y.argmax(axis=1)]
    np.testing.assert_allclose(
        SoftLabelClassifier(LogisticRegression(), weighting="item")
        .fit(X, onehot)
        .predict_proba(X),
        LogisticRegression().fit(X, Y.argmax(axis=1)).predict_proba(X),
        atol=1e-6,
    )
