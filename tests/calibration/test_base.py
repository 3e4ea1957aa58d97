"""Score resolution, estimator modes and input checks of the logit calibrators."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier

from sklearn_hcal._frontend import get_scores
from sklearn_hcal._validation import PROBA_FLOOR
from sklearn_hcal.calibration import MatrixScaler, TemperatureScaler, VectorScaler
from sklearn_hcal.datasets import make_label_histograms


@pytest.fixture(scope="module")
def features_and_histograms():
    X, Y, _ = make_label_histograms(
        240, 3, 5, n_features=4, temperature=1.5, random_state=0
    )
    return X, Y


class _PredictOnly(ClassifierMixin, BaseEstimator):
    """A real (if minimal) classifier that offers no scores."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


# -- get_scores -----------------------------------------------------------------
def test_get_scores_binary_decision_is_zero_d():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 2)
    y = (X[:, 0] + 0.5 * rng.randn(60) > 0).astype(int)
    clf = LogisticRegression().fit(X, y)
    Z = get_scores(clf, X)
    assert Z.shape == (60, 2)
    np.testing.assert_array_equal(Z[:, 0], 0.0)
    np.testing.assert_allclose(Z[:, 1], clf.decision_function(X))
    # softmax([0, d]) is the logistic model's own probability
    np.testing.assert_allclose(softmax(Z, axis=1), clf.predict_proba(X), rtol=1e-12)


def test_get_scores_multiclass_decision(features_and_histograms):
    X, Y = features_and_histograms
    clf = LogisticRegression().fit(X, Y.argmax(1))
    np.testing.assert_array_equal(get_scores(clf, X), clf.decision_function(X))
    np.testing.assert_array_equal(
        get_scores(FrozenEstimator(clf), X), clf.decision_function(X)
    )


def test_get_scores_predict_proba_is_floored_log(features_and_histograms):
    X, Y = features_and_histograms
    nb = GaussianNB().fit(X, Y.argmax(1))
    np.testing.assert_allclose(
        softmax(get_scores(nb, X), axis=1), nb.predict_proba(X), atol=1e-10
    )
    tree = DecisionTreeClassifier(random_state=0).fit(X, Y.argmax(1))
    Z = get_scores(tree, X)
    assert np.all(np.isfinite(Z))
    # a fully grown tree predicts exact zeros, which become log(floor)
    assert np.isclose(Z.min(), np.log(PROBA_FLOOR))


def test_get_scores_without_scores_raises(features_and_histograms):
    X, Y = features_and_histograms
    clf = _PredictOnly().fit(X, Y.argmax(1))
    with pytest.raises(ValueError, match="neither decision_function nor"):
        get_scores(clf, X)
    with pytest.raises(ValueError, match="estimator"):
        TemperatureScaler(FrozenEstimator(clf)).fit(X, Y)
    with pytest.raises(ValueError, match="estimator"):
        TemperatureScaler(_PredictOnly()).fit(X, Y)


# -- estimator=None: logits or probabilities -------------------------------------
def test_probability_input_is_converted_by_log():
    Z, Y, _ = make_label_histograms(300, 4, 3, temperature=2.0, random_state=1)
    P = softmax(Z, axis=1)
    on_proba = TemperatureScaler().fit(P, Y)
    on_logits = TemperatureScaler().fit(Z, Y)
    assert on_proba.input_type_ == "proba"
    assert on_logits.input_type_ == "logits"
    # log P differs from Z by a per-row constant, which softmax ignores
    assert on_proba.temperature_ == pytest.approx(on_logits.temperature_, rel=1e-8)
    np.testing.assert_allclose(
        on_proba.predict_proba(P), on_logits.predict_proba(Z), atol=1e-10
    )
    with pytest.raises(ValueError, match="probabilities"):
        on_proba.predict_proba(Z)
    # forcing "logits" reads the same matrix as scores
    forced = TemperatureScaler(input="logits").fit(P, Y)
    assert forced.input_type_ == "logits"
    assert not np.isclose(forced.temperature_, on_proba.temperature_)


# -- the three estimator modes -------------------------------------------------
@pytest.mark.parametrize("Scaler", [TemperatureScaler, VectorScaler, MatrixScaler])
def test_frozen_equals_scores(Scaler, features_and_histograms):
    X, Y = features_and_histograms
    clf = LogisticRegression().fit(X, Y.argmax(1))
    frozen = Scaler(FrozenEstimator(clf)).fit(X, Y)
    direct = Scaler().fit(clf.decision_function(X), Y)
    np.testing.assert_allclose(
        frozen.predict_proba(X),
        direct.predict_proba(clf.decision_function(X)),
        atol=1e-7,
    )
    assert frozen.estimator_ is frozen.estimator
    assert frozen.n_features_in_ == X.shape[1]


def test_crossfit_labels_uses_stratified_out_of_fold_scores(features_and_histograms):
    X, Y = features_and_histograms
    y = Y.argmax(1)
    oof = np.empty((len(y), 3))
    for train, test in StratifiedKFold(3).split(X, y):
        oof[test] = (
            LogisticRegression().fit(X[train], y[train]).decision_function(X[test])
        )
    cal = TemperatureScaler(LogisticRegression(), cv=3).fit(X, y)
    ref = TemperatureScaler().fit(oof, y)
    assert cal.temperature_ == pytest.approx(ref.temperature_, rel=1e-10)
    full = LogisticRegression().fit(X, y)
    np.testing.assert_allclose(cal.estimator_.coef_, full.coef_)
    np.testing.assert_allclose(
        cal.predict_proba(X),
        softmax(full.decision_function(X) / ref.temperature_, axis=1),
        atol=1e-12,
    )


def test_crossfit_histograms_go_through_soft_label_classifier(
    features_and_histograms,
):
    from sklearn_hcal import SoftLabelClassifier

    X, Y = features_and_histograms
    oof = np.empty(Y.shape)
    for train, test in KFold(4).split(X):
        model = SoftLabelClassifier(LogisticRegression()).fit(X[train], Y[train])
        oof[test] = model.decision_function(X[test])
    cal = TemperatureScaler(LogisticRegression(), cv=4).fit(X, Y)
    ref = TemperatureScaler().fit(oof, Y)
    assert cal.temperature_ == pytest.approx(ref.temperature_, rel=1e-10)
    assert isinstance(cal.estimator_, SoftLabelClassifier)
    full = SoftLabelClassifier(LogisticRegression()).fit(X, Y)
    np.testing.assert_allclose(
        cal.transform(X), full.decision_function(X) / ref.temperature_, atol=1e-10
    )


# -- classes -----------------------------------------------------------------------
def test_classes_from_dataframe_and_string_labels():
    Z, Y, _ = make_label_histograms(200, 3, 4, random_state=2)
    frame = pd.DataFrame(Y, columns=["e", "n", "c"])
    # unsorted names and an unnamed Z: which column scores which class is
    # said with classes= (developer guide §class-names)
    with pytest.raises(ValueError, match="classes="):
        TemperatureScaler().fit(Z, frame)
    ts = TemperatureScaler(classes=["e", "n", "c"]).fit(Z, frame)
    np.testing.assert_array_equal(ts.classes_, ["e", "n", "c"])
    assert set(ts.predict(Z)) <= {"e", "n", "c"}
    np.testing.assert_array_equal(ts.predict(Z), np.array(["e", "n", "c"])[Z.argmax(1)])

    rng = np.random.RandomState(0)
    X = rng.randn(90, 2)
    labels = np.array(["cat", "dog", "eel"])[rng.randint(0, 3, 90)]
    cal = TemperatureScaler(FrozenEstimator(LogisticRegression().fit(X, labels)))
    cal.fit(X, labels)
    np.testing.assert_array_equal(cal.classes_, ["cat", "dog", "eel"])
    assert cal.predict(X).dtype.kind == "U"


def test_score_histograms_is_majority_accuracy():
    Z, Y, _ = make_label_histograms(300, 3, 5, random_state=3)
    ts = TemperatureScaler().fit(Z, Y)
    # independent majority accuracy: first maximum of the histogram
    expected = np.mean(Z.argmax(1) == Y.argmax(1))
    assert ts.score(Z, Y) == pytest.approx(expected)
    w = np.random.RandomState(0).rand(300)
    expected_w = np.average(Z.argmax(1) == Y.argmax(1), weights=w)
    assert ts.score(Z, Y, sample_weight=w) == pytest.approx(expected_w)
    labels = Y.argmax(1)
    assert ts.score(Z, labels) == pytest.approx(expected)


# -- bad input ---------------------------------------------------------------------
@pytest.mark.parametrize("Scaler", [TemperatureScaler, VectorScaler, MatrixScaler])
def test_bad_input(Scaler):
    Z, Y, _ = make_label_histograms(50, 3, 2, random_state=4)
    with pytest.raises(NotFittedError):
        Scaler().predict_proba(Z)
    bad = Z.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Scaler().fit(bad, Y)
    fitted = Scaler().fit(Z, Y)
    with pytest.raises(ValueError, match="features"):
        fitted.predict_proba(Z[:, :2])
    with pytest.raises(ValueError, match="1 sample"):
        Scaler().fit(Z[:1], Y[:1])
    with pytest.raises(ValueError, match="classes"):
        Scaler().fit(Z, Y[:, :2])
    with pytest.raises(ValueError, match="y to be passed"):
        Scaler().fit(Z, None)
    with pytest.raises(ValueError, match="negative"):
        Scaler().fit(Z, -Y)
    with pytest.raises(ValueError, match="n_features=1"):
        Scaler().fit(Z[:, :1], Y[:, 0] > 0)


def test_class_count_mismatch_with_frozen_estimator(features_and_histograms):
    X, Y = features_and_histograms
    clf = LogisticRegression().fit(X, Y.argmax(1))
    with pytest.raises(ValueError, match="classes"):
        TemperatureScaler(FrozenEstimator(clf)).fit(X, np.c_[Y, Y[:, :1]])
    with pytest.raises(NotFittedError):
        TemperatureScaler(FrozenEstimator(LogisticRegression())).fit(X, Y)


# -- the core: nesting, names, score ------------------------------------------------
def test_nested_calibrators_receive_histograms_unwrapped(features_and_histograms):
    from sklearn_hcal import SoftLabelClassifier

    X, Y = features_and_histograms
    inner = TemperatureScaler(LogisticRegression(), cv=2)
    outer = VectorScaler(inner, cv=2).fit(X, Y)
    # the inner calibrator fits on the histograms itself (a SoftLabelClassifier
    # around it would repeat items across its own folds)
    assert isinstance(outer.estimator_, TemperatureScaler)
    assert isinstance(outer.estimator_.estimator_, SoftLabelClassifier)
    ref = clone(inner).fit(X, Y)
    assert outer.estimator_.temperature_ == pytest.approx(ref.temperature_)


def test_feature_names_out_and_input_feature_check(features_and_histograms):
    X, Y = features_and_histograms
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    cal = MatrixScaler(LogisticRegression(), cv=2).fit(
        frame, pd.DataFrame(Y, columns=["x", "y", "z"])
    )
    np.testing.assert_array_equal(
        cal.get_feature_names_out(), ["logit_x", "logit_y", "logit_z"]
    )
    np.testing.assert_array_equal(
        cal.get_feature_names_out(["a", "b", "c", "d"]), cal.get_feature_names_out()
    )
    with pytest.raises(ValueError, match="input_features"):
        cal.get_feature_names_out(["a", "b", "c", "e"])
    with pytest.raises(NotFittedError):
        MatrixScaler().get_feature_names_out()


def test_score_with_counts_and_named_columns(features_and_histograms):
    X, Y = features_and_histograms
    names = ["x", "y", "z"]
    cal = TemperatureScaler(LogisticRegression(), cv=2).fit(
        X, pd.DataFrame(Y, columns=names)
    )
    expected = np.mean(cal.predict_proba(X).argmax(1) == Y.argmax(1))
    shuffled = pd.DataFrame(Y, columns=names)[["z", "x", "y"]]
    assert cal.score(X, shuffled) == pytest.approx(expected)
    labels = np.array(names)[Y.argmax(1)]
    assert cal.score(X, labels, counts=Y) == pytest.approx(expected)
    with pytest.raises(ValueError, match="do not match"):
        cal.score(X, pd.DataFrame(Y, columns=["x", "y", "w"]))


def test_crossfit_requires_a_partition(features_and_histograms):
    from sklearn.model_selection import ShuffleSplit

    X, Y = features_and_histograms
    with pytest.raises(ValueError, match="partition.*sample \\d+ is in 0 test folds"):
        TemperatureScaler(LogisticRegression(), cv=ShuffleSplit(2, random_state=0)).fit(
            X, Y
        )
