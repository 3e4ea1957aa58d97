"""TemperatureScaler: agreement with scikit-learn, recovery of the truth, stability."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax, rel_entr, softmax
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_hcal.calibration import TemperatureScaler
from sklearn_hcal.datasets import make_label_histograms
from tests._calibrator_checks import expected_failed_checks


def _sklearn_beta(clf, X, y, sample_weight=None):
    cal = CalibratedClassifierCV(FrozenEstimator(clf), method="temperature")
    cal.fit(X, y, sample_weight=sample_weight)
    return float(cal.calibrated_classifiers_[0].calibrators[0].beta_)


@pytest.fixture(scope="module")
def multiclass_problem():
    X, Y, _ = make_label_histograms(
        400, 4, 6, n_features=5, temperature=1.0, random_state=0
    )
    # strongly regularised (underconfident) on its training data: T < 1
    clf = LogisticRegression(C=0.05).fit(X, Y.argmax(1))
    return X, Y, clf


def test_labels_equal_sklearn_temperature(multiclass_problem):
    X, Y, clf = multiclass_problem
    y = Y.argmax(1)
    ours = TemperatureScaler(FrozenEstimator(clf)).fit(X, y)
    beta_sk = _sklearn_beta(clf, X, y)
    assert ours.beta_ == pytest.approx(beta_sk, rel=1e-4)
    assert not np.isclose(ours.beta_, 1.0, rtol=0.05)
    cal = CalibratedClassifierCV(FrozenEstimator(clf), method="temperature")
    np.testing.assert_allclose(
        ours.predict_proba(X), cal.fit(X, y).predict_proba(X), atol=1e-5
    )


def test_labels_with_weights_equal_sklearn(multiclass_problem):
    X, Y, clf = multiclass_problem
    y = Y.argmax(1)
    w = np.random.RandomState(1).uniform(0.1, 3.0, len(y))
    ours = TemperatureScaler(FrozenEstimator(clf)).fit(X, y, sample_weight=w)
    assert ours.beta_ == pytest.approx(_sklearn_beta(clf, X, y, w), rel=1e-4)


def test_binary_decision_is_twice_sklearn():
    # scikit-learn turns a binary decision d into [-d, d]; we use [0, d] so
    # that softmax gives the classifier's own sigmoid: β_ours = 2 β_sklearn.
    X, Y, _ = make_label_histograms(300, 2, 1, n_features=3, random_state=2)
    y = Y.argmax(1)
    clf = LogisticRegression(C=100.0).fit(X, y)
    ours = TemperatureScaler(FrozenEstimator(clf)).fit(X, y)
    assert ours.beta_ == pytest.approx(2 * _sklearn_beta(clf, X, y), rel=1e-4)


def test_histograms_equal_sklearn_on_weighted_expansion(multiclass_problem):
    X, Y, clf = multiclass_problem
    K = Y.shape[1]
    X_rep = np.repeat(X, K, axis=0)
    y_rep = np.tile(np.arange(K), len(X))
    counts = Y.ravel()
    keep = counts > 0
    beta_sk = _sklearn_beta(clf, X_rep[keep], y_rep[keep], counts[keep])
    ours = TemperatureScaler(FrozenEstimator(clf)).fit(X, Y)
    assert ours.beta_ == pytest.approx(beta_sk, rel=1e-4)
    # and the histogram fit differs from the majority-label fit
    assert not np.isclose(_sklearn_beta(clf, X, Y.argmax(1)), beta_sk, rtol=0.05)


def test_matches_direct_scalar_minimisation_with_weights():
    Z, Y, _ = make_label_histograms(
        500, 5, np.arange(500) % 7 + 1, temperature=0.7, random_state=3
    )
    w = np.random.RandomState(3).rand(500)

    def nll(beta):
        return -np.sum(w[:, None] * Y * log_softmax(beta * Z, axis=1)) / (w @ Y.sum(1))

    ref = minimize_scalar(
        nll, bounds=(1e-3, 1e3), method="bounded", options={"xatol": 1e-12}
    )
    ts = TemperatureScaler().fit(Z, Y, sample_weight=w)
    assert ts.beta_ == pytest.approx(ref.x, rel=1e-6)
    assert ts.n_iter_ < 20


@pytest.mark.parametrize("T_true", [0.5, 2.0])
def test_recovers_true_temperature_but_majority_does_not(T_true):
    Z, Y, Q = make_label_histograms(5000, 3, 5, temperature=T_true, random_state=4)
    np.testing.assert_allclose(softmax(Z / T_true, axis=1), Q)
    on_histograms = TemperatureScaler().fit(Z, Y)
    assert on_histograms.temperature_ == pytest.approx(T_true, rel=0.05)
    on_majority = TemperatureScaler().fit(Z, Y.argmax(1))
    assert abs(on_majority.temperature_ / T_true - 1) > 0.2


def test_never_changes_the_predicted_class():
    Z, Y, _ = make_label_histograms(1000, 6, 3, temperature=3.0, random_state=5)
    ts = TemperatureScaler().fit(Z, Y)
    np.testing.assert_array_equal(ts.predict(Z), Z.argmax(1))
    np.testing.assert_array_equal(ts.predict_proba(Z).argmax(1), Z.argmax(1))


def test_large_logits_and_float32():
    Z, Y, _ = make_label_histograms(2000, 4, 5, temperature=2.0, random_state=6)
    ref = TemperatureScaler().fit(Z, Y)
    c = 1e4 / np.abs(Z).max()
    big = TemperatureScaler().fit(Z * c, Y)
    assert np.all(np.abs(Z * c) <= 1e4 + 1e-6) and np.abs(Z * c).max() > 9e3
    assert np.isfinite(big.temperature_)
    assert big.temperature_ == pytest.approx(ref.temperature_ * c, rel=1e-8)
    # the standard errors scale too (T' = c·T, β' = β / c), up to 1e300
    assert big.temperature_se_ == pytest.approx(ref.temperature_se_ * c, rel=1e-6)
    huge = TemperatureScaler().fit(Z * (1e300 / np.abs(Z).max()), Y)
    assert huge.beta_se_ / huge.beta_ == pytest.approx(
        ref.beta_se_ / ref.beta_, rel=1e-6
    )
    assert np.isfinite(huge.temperature_se_) and huge.temperature_se_ > 0
    np.testing.assert_allclose(
        big.predict_proba(Z * c), ref.predict_proba(Z), atol=1e-10
    )
    z32 = Z.astype(np.float32)
    f32 = TemperatureScaler().fit(z32, Y)
    ref32 = TemperatureScaler().fit(z32.astype(np.float64), Y)
    assert f32.temperature_ == pytest.approx(ref32.temperature_, rel=1e-12)
    assert f32.temperature_ == pytest.approx(ref.temperature_, rel=1e-5)
    assert f32.predict_proba(z32).dtype == np.float64


def test_integer_weights_equal_repetition():
    Z, Y, _ = make_label_histograms(200, 3, 4, temperature=1.5, random_state=7)
    reps = np.random.RandomState(7).randint(0, 4, 200)
    weighted = TemperatureScaler().fit(Z, Y, sample_weight=reps)
    repeated = TemperatureScaler().fit(np.repeat(Z, reps, 0), np.repeat(Y, reps, 0))
    assert weighted.beta_ == pytest.approx(repeated.beta_, rel=1e-10)
    # the standard error too: weights count as repeated (independent) items
    assert weighted.beta_se_ == pytest.approx(repeated.beta_se_, rel=1e-8)


def test_degenerate_cases_warn_with_defined_results():
    Y = np.array([[2, 1, 0], [0, 3, 1], [1, 1, 1]])
    with pytest.warns(UserWarning, match="constant"):
        flat = TemperatureScaler().fit(np.zeros((3, 3)), Y)
    assert flat.temperature_ == 1.0

    Z = np.array([[3.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.5, 4.0]])
    agree = np.eye(3) * 4  # every annotation on the row's top class
    with pytest.warns(UserWarning, match="temperature goes to 0"):
        sharp = TemperatureScaler().fit(Z, agree)
    assert 0 < sharp.temperature_ < 1e-3
    np.testing.assert_allclose(sharp.predict_proba(Z), np.eye(3), atol=1e-12)

    # labels always on the lowest score: best T is infinite (uniform output)
    against = np.eye(3)[Z.argmin(1)] * 2
    with pytest.warns(UserWarning, match="infinite"):
        anti = TemperatureScaler().fit(Z, against)
    assert anti.temperature_ == np.inf and anti.beta_ == 0
    np.testing.assert_allclose(anti.predict_proba(Z), 1 / 3)


def test_clone_and_pickle():
    Z, Y, _ = make_label_histograms(100, 3, 3, random_state=8)
    ts = TemperatureScaler(tol=1e-12).fit(Z, Y)
    assert clone(ts).get_params() == ts.get_params()
    assert not hasattr(clone(ts), "temperature_")
    again = pickle.loads(pickle.dumps(ts))
    np.testing.assert_array_equal(again.predict_proba(Z), ts.predict_proba(Z))


@pytest.mark.slow
def test_skorch_net_frozen():
    torch = pytest.importorskip("torch")
    skorch = pytest.importorskip("skorch")
    X, Y, _ = make_label_histograms(
        200, 3, 4, n_features=4, temperature=1.0, random_state=9
    )
    X = X.astype(np.float32)
    torch.manual_seed(0)
    net = skorch.NeuralNetClassifier(
        torch.nn.Linear(4, 3),
        criterion=torch.nn.CrossEntropyLoss,
        max_epochs=20,
        lr=0.5,
        train_split=None,
        verbose=0,
    ).fit(X, Y.argmax(1))
    ts = TemperatureScaler(FrozenEstimator(net)).fit(X, Y)
    # independent route: log of the net's own probabilities
    ref = TemperatureScaler(input="logits").fit(np.log(net.predict_proba(X)), Y)
    assert ts.temperature_ == pytest.approx(ref.temperature_, rel=1e-4)
    assert ts.predict_proba(X).shape == (200, 3)


def test_pipeline_cross_validate_with_human_scorers():
    from sklearn_hcal.metrics import HUMAN_SCORERS

    X, Y, _ = make_label_histograms(
        300, 3, 5, n_features=4, temperature=1.0, random_state=10
    )
    pipe = make_pipeline(StandardScaler(), TemperatureScaler(LogisticRegression()))
    res = cross_validate(
        pipe, X, Y, cv=KFold(3), scoring=HUMAN_SCORERS, error_score="raise"
    )
    assert np.all(np.isfinite(res["test_neg_kl_divergence"]))
    # the KL of the first fold, recomputed independently
    train, test = next(KFold(3).split(X))
    P = clone(pipe).fit(X[train], Y[train]).predict_proba(X[test])
    H = Y[test] / Y[test].sum(1, keepdims=True)
    kl = np.mean(rel_entr(H, P).sum(1))
    assert res["test_neg_kl_divergence"][0] == pytest.approx(-kl, rel=1e-6)


def _expected_failed_checks(estimator):
    if estimator.estimator is None:
        return expected_failed_checks(estimator)
    return {
        "check_transformer_n_iter": (
            "the check's blobs are separable, so the temperature is set in "
            "closed form (with a warning) and n_iter_ is 0"
        ),
    }


@parametrize_with_checks(
    [TemperatureScaler(LogisticRegression(), cv=2), TemperatureScaler()],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
