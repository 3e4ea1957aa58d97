"""The joints between estimators: classes by name, Pipelines, prefit nets.

Each test protects against a wrong answer given without a word on the code
before the calibration core: classes matched by position, Pipelines losing
the histograms, cross-fitted skorch nets, rounded probabilities read as
logits and fitted-but-not-frozen classifiers treated differently by
different calibrators; plus two scikit-learn conventions (set_output through
a Pipeline, metadata routing of ``counts`` into ``fit``).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from scipy.special import softmax
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_validate
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_hcal import (
    AlphaCalibrator,
    MatrixScaler,
    SoftLabelClassifier,
    TemperatureScaler,
    VectorScaler,
)
from sklearn_hcal.datasets import make_label_histograms

CALIBRATORS = [TemperatureScaler, VectorScaler, MatrixScaler, AlphaCalibrator]
NAMES = ["negative", "neutral", "positive"]
SHUFFLED = ["positive", "negative", "neutral"]


@pytest.fixture(scope="module")
def named():
    X, Y, _ = make_label_histograms(
        900, 3, 5, n_features=4, temperature=1.5, random_state=0
    )
    H = pd.DataFrame(Y, columns=NAMES)
    return X[:450], H.iloc[:450], X[450:], H.iloc[450:]


def _calibrator(Cal, estimator):
    return Cal(estimator, random_state=0) if Cal is AlphaCalibrator else Cal(estimator)


def _fitted_state(cal):
    if isinstance(cal, TemperatureScaler):
        return np.array([cal.temperature_])
    if isinstance(cal, AlphaCalibrator):
        return np.concatenate([c.ravel() for c in cal.coefs_ + cal.intercepts_])
    return np.concatenate([cal.coef_.ravel(), cal.intercept_])


# -- classes by name -------------------------------------------------------------------
@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_shuffled_dataframe_columns_give_the_unshuffled_fit(Cal, named):
    X, H, X2, H2 = named
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, H)
    np.testing.assert_array_equal(clf.classes_, NAMES)
    plain = _calibrator(Cal, FrozenEstimator(clf)).fit(X2, H2)
    # the same histograms as an array in clf's column order: the positional fit
    positional = _calibrator(Cal, FrozenEstimator(clf)).fit(X2, H2.to_numpy())
    shuffled = _calibrator(Cal, FrozenEstimator(clf)).fit(X2, H2[SHUFFLED])
    np.testing.assert_allclose(_fitted_state(shuffled), _fitted_state(positional))
    np.testing.assert_allclose(_fitted_state(plain), _fitted_state(positional))
    np.testing.assert_array_equal(shuffled.classes_, NAMES)
    np.testing.assert_allclose(shuffled.predict_proba(X2), plain.predict_proba(X2))
    if Cal in (TemperatureScaler, AlphaCalibrator):
        # neither may change the predicted class: identical to clf's argmax
        np.testing.assert_array_equal(shuffled.predict(X2), clf.predict(X2))
    # an array named by classes= is matched the same way
    by_param = Cal(FrozenEstimator(clf), classes=SHUFFLED)
    if Cal is AlphaCalibrator:
        by_param.set_params(random_state=0)
    by_param.fit(X2, H2[SHUFFLED].to_numpy())
    np.testing.assert_allclose(_fitted_state(by_param), _fitted_state(positional))


@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_classifier_on_string_labels_and_shuffled_histograms(Cal, named):
    X, H, X2, H2 = named
    labels = np.array(NAMES)[H.to_numpy().argmax(axis=1)]
    clf = LogisticRegression().fit(X, labels)
    shuffled = _calibrator(Cal, FrozenEstimator(clf)).fit(X2, H2[SHUFFLED])
    positional = _calibrator(Cal, FrozenEstimator(clf)).fit(X2, H2.to_numpy())
    np.testing.assert_allclose(_fitted_state(shuffled), _fitted_state(positional))
    np.testing.assert_array_equal(shuffled.classes_, clf.classes_)
    if Cal is TemperatureScaler:
        assert np.isfinite(shuffled.temperature_)
        np.testing.assert_array_equal(shuffled.predict(X2), clf.predict(X2))
    # 1-D string labels are looked up by name as well (one label per item
    # says nothing about α0, which AlphaCalibrator says)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "No item has two or more annotations")
        by_label = _calibrator(Cal, FrozenEstimator(clf)).fit(X2, labels[: len(X2)])
    np.testing.assert_array_equal(by_label.classes_, clf.classes_)


@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_different_class_names_raise(Cal, named):
    X, H, X2, H2 = named
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, H)
    other = H2.rename(columns={"neutral": "contradiction"})
    with pytest.raises(
        ValueError, match="contradiction.*neutral|neutral.*contradiction"
    ):
        Cal(FrozenEstimator(clf)).fit(X2, other)


def test_crossfit_keeps_dataframe_names(named):
    X, H, _, _ = named
    cal = TemperatureScaler(LogisticRegression(), cv=3).fit(X, H[SHUFFLED])
    np.testing.assert_array_equal(cal.classes_, SHUFFLED)
    ref = TemperatureScaler(LogisticRegression(), cv=3).fit(X, H)
    assert cal.temperature_ == pytest.approx(ref.temperature_, rel=1e-6)
    np.testing.assert_array_equal(cal.predict(X), ref.predict(X))


def test_input_columns_named_like_the_histograms_are_aligned():
    Z, Y, _ = make_label_histograms(300, 3, 5, temperature=2.0, random_state=1)
    scores = pd.DataFrame(Z, columns=NAMES)
    H = pd.DataFrame(Y, columns=NAMES)
    ref = TemperatureScaler().fit(scores, H)
    cal = TemperatureScaler().fit(scores, H[SHUFFLED])
    assert cal.temperature_ == pytest.approx(ref.temperature_, rel=1e-12)
    np.testing.assert_array_equal(cal.classes_, NAMES)


def test_chained_calibrator_columns_are_matched_by_class_name():
    # A calibrator's transform under set_output(transform="pandas") names its
    # columns logit_<class>; a second calibrator fitted on them (estimator=None)
    # must read those names, not the column positions.
    Z, Y, _ = make_label_histograms(300, 3, 5, temperature=2.0, random_state=1)
    H = pd.DataFrame(Y, columns=NAMES)
    ref = TemperatureScaler().fit(Z, Y)
    order = [NAMES.index(c) for c in SHUFFLED]
    logits = pd.DataFrame(Z[:, order], columns=[f"logit_{c}" for c in SHUFFLED])
    cal = TemperatureScaler().fit(logits, H)
    assert cal.temperature_ == pytest.approx(ref.temperature_, rel=1e-9)
    np.testing.assert_array_equal(cal.classes_, SHUFFLED)
    # 1-D string labels are matched through the same names
    labels = np.asarray(NAMES)[Y.argmax(axis=1)]
    on_labels = TemperatureScaler().fit(logits, labels)
    assert on_labels.temperature_ == pytest.approx(
        TemperatureScaler().fit(Z, labels).temperature_, rel=1e-9
    )
    # names that match only some classes are refused rather than guessed
    odd = logits.rename(columns={"logit_neutral": "logit_other"})
    with pytest.raises(ValueError, match="do not match"):
        TemperatureScaler().fit(odd, H)
    # names unrelated to the classes leave the columns positional
    plain = pd.DataFrame(Z, columns=["x0", "x1", "x2"])
    assert TemperatureScaler().fit(plain, H).temperature_ == pytest.approx(
        ref.temperature_, rel=1e-12
    )


# -- Pipelines first-class -------------------------------------------------------------
def _expanded_weighted_fit(pipe, X, Y, steps):
    # one row per (item, class) weighted by the count, the weights given to
    # every step that takes them (the scaler too: the rows are repeats)
    rows, cols = np.nonzero(Y)
    weights = {f"{step}__sample_weight": Y[rows, cols] for step in steps}
    return clone(pipe).fit(X[rows], cols, **weights)


STEPS = ["standardscaler", "logisticregression"]


def test_soft_label_classifier_routes_weights_to_the_final_step():
    X, Y, _ = make_label_histograms(200, 3, 5, n_features=4, random_state=2)
    X = 5 * X + 2
    pipe = make_pipeline(StandardScaler(), LogisticRegression())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the auto strategy must not fall back
        auto = SoftLabelClassifier(pipe).fit(X, Y)
    assert auto.strategy_ == "weighted"
    ref = _expanded_weighted_fit(pipe, X, Y, STEPS)
    np.testing.assert_allclose(auto.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    weighted = SoftLabelClassifier(pipe, strategy="weighted").fit(X, Y)
    np.testing.assert_allclose(weighted.predict_proba(X), auto.predict_proba(X))
    # majority votes give another model: the histograms were used
    majority = SoftLabelClassifier(pipe, strategy="majority", random_state=0)
    assert (
        np.abs(majority.fit(X, Y).predict_proba(X) - ref.predict_proba(X)).max() > 1e-3
    )
    # the scaler is weighted as well: its mean is the per-annotation mean
    scaler = auto.estimator_[0]
    np.testing.assert_allclose(scaler.mean_, Y.sum(1) @ X / Y.sum())
    # nested pipelines: <outer step>__<inner step>__sample_weight
    nested = make_pipeline(
        StandardScaler(), make_pipeline(PCA(n_components=3), LogisticRegression())
    )
    fitted = SoftLabelClassifier(nested).fit(X, Y)
    ref = _expanded_weighted_fit(
        nested, X, Y, ["standardscaler", "pipeline__logisticregression"]
    )
    np.testing.assert_allclose(fitted.predict_proba(X), ref.predict_proba(X), atol=1e-8)


def test_auto_strategy_warns_when_it_falls_back_to_majority():
    X, Y, _ = make_label_histograms(100, 3, 5, n_features=4, random_state=3)
    pipe = make_pipeline(StandardScaler(), KNeighborsClassifier())
    with pytest.warns(UserWarning, match="majority label"):
        clf = SoftLabelClassifier(pipe).fit(X, Y)
    assert clf.strategy_ == "majority"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SoftLabelClassifier(pipe, strategy="majority").fit(X, Y)  # as intended
        SoftLabelClassifier(pipe).fit(X, Y.argmax(axis=1))  # labels: no fallback
    with pytest.raises(ValueError, match="sample_weight"):
        SoftLabelClassifier(pipe, strategy="weighted").fit(X, Y)


@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_crossfitted_calibrators_train_a_pipeline_on_the_histograms(Cal):
    X, Y, _ = make_label_histograms(240, 3, 5, n_features=4, random_state=4)
    pipe = make_pipeline(StandardScaler(), LogisticRegression())
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        cal = _calibrator(Cal, pipe).set_params(cv=3).fit(X, Y)
    assert isinstance(cal.estimator_, SoftLabelClassifier)
    assert cal.estimator_.strategy_ == "weighted"
    ref = _expanded_weighted_fit(pipe, X, Y, STEPS)
    np.testing.assert_allclose(
        cal.estimator_.predict_proba(X), ref.predict_proba(X), atol=1e-8
    )
    # the calibrator was trained on the out-of-fold scores of such fits
    oof = np.empty(Y.shape)
    for train, test in KFold(3).split(X):
        fold = _expanded_weighted_fit(pipe, X[train], Y[train], STEPS)
        oof[test] = fold.decision_function(X[test])
    direct = _calibrator(Cal, None).fit(oof, Y)
    np.testing.assert_allclose(_fitted_state(cal), _fitted_state(direct), rtol=1e-5)


# -- cross-fitted skorch nets are refused; prefit nets work ----------------------------
def _tiny_net():
    torch = pytest.importorskip("torch")
    pytest.importorskip("skorch")
    from sklearn_hcal import make_soft_label_net

    return make_soft_label_net(
        torch.nn.Linear,
        module__in_features=4,
        module__out_features=3,
        max_epochs=5,
        lr=0.05,
        random_state=0,
    )


@pytest.mark.slow
@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_crossfitting_a_skorch_net_is_refused(Cal):
    net = _tiny_net()
    X, Y, _ = make_label_histograms(120, 3, 5, n_features=4, random_state=5)
    X = X.astype(np.float32)
    with pytest.raises(ValueError, match="cannot cross-fit a skorch net.*Frozen"):
        Cal(net, cv=2).fit(X, Y)
    with pytest.raises(ValueError, match="cannot cross-fit a skorch net"):
        Cal(net.fit(X, Y), cv=2).fit(X, Y)  # fitted, not frozen
    with pytest.raises(ValueError, match="cannot cross-fit a skorch net"):
        Cal(make_pipeline(StandardScaler(), _tiny_net()), cv=2).fit(X, Y)


@pytest.mark.slow
def test_frozen_skorch_net_is_calibrated_on_its_logits():
    from sklearn_hcal import skorch_logits

    X, Y, _ = make_label_histograms(300, 3, 5, n_features=4, random_state=6)
    X = X.astype(np.float32)
    net = _tiny_net().fit(X[:150], Y[:150])
    logits = skorch_logits(net, X[150:])
    ts = TemperatureScaler(FrozenEstimator(net)).fit(X[150:], Y[150:])
    ref = TemperatureScaler(input="logits").fit(logits, Y[150:])
    assert ts.temperature_ == pytest.approx(ref.temperature_, rel=1e-10)
    alpha = AlphaCalibrator(FrozenEstimator(net), random_state=0).fit(X[150:], Y[150:])
    alpha_ref = AlphaCalibrator(input="logits", random_state=0).fit(logits, Y[150:])
    np.testing.assert_allclose(
        alpha.predict_concentration(X[150:]),
        alpha_ref.predict_concentration(logits),
        rtol=1e-4,
    )
    np.testing.assert_allclose(
        alpha.predict_proba(X[150:]), net.predict_proba(X[150:]), atol=1e-6
    )


# -- rounded probabilities are probabilities -------------------------------------------
def test_rounded_probabilities_are_read_as_probabilities():
    Z, Y, _ = make_label_histograms(2000, 3, 5, temperature=2.0, random_state=0)
    P = softmax(Z, axis=1)
    exact = TemperatureScaler().fit(P, Y)
    rounded = TemperatureScaler().fit(P.round(3), Y)
    assert rounded.input_type_ == "proba"
    # rounding moves each probability by at most 5e-4: the same temperature
    assert rounded.temperature_ == pytest.approx(exact.temperature_, rel=0.02)
    Pr = P.round(3)
    alpha = AlphaCalibrator().fit(Pr, Y)
    assert alpha.input_type_ == "proba"
    # f is the (renormalised) probabilities themselves, not softmax(P)
    np.testing.assert_allclose(
        alpha.predict_proba(Pr), Pr / Pr.sum(axis=1, keepdims=True), rtol=0, atol=0
    )


# -- one rule for fitted-but-not-frozen classifiers ------------------------------------
@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_fitted_but_not_frozen_is_crossfitted_with_a_warning(Cal):
    X, Y, _ = make_label_histograms(200, 3, 5, n_features=4, random_state=7)
    fitted = LogisticRegression(C=0.01).fit(X[:50], Y[:50].argmax(axis=1))
    with pytest.warns(UserWarning, match="FrozenEstimator"):
        cal = _calibrator(Cal, fitted).set_params(cv=3).fit(X, Y)
    assert cal.estimator_ is not fitted
    fresh = _calibrator(Cal, LogisticRegression(C=0.01)).set_params(cv=3).fit(X, Y)
    np.testing.assert_allclose(cal.predict_proba(X), fresh.predict_proba(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        frozen = _calibrator(Cal, FrozenEstimator(fitted)).fit(X, Y)
    assert frozen.estimator_.estimator is fitted


# -- set_output and metadata routing ---------------------------------------------------
@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_set_output_pandas_through_a_pipeline(Cal):
    X, Y, _ = make_label_histograms(150, 3, 5, n_features=4, random_state=8)
    Xf = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    Yf = pd.DataFrame(Y, columns=NAMES)
    pipe = make_pipeline(StandardScaler(), _calibrator(Cal, LogisticRegression()))
    pipe.set_params(**{f"{Cal.__name__.lower()}__cv": 3})
    out = pipe.set_output(transform="pandas").fit(Xf, Yf).transform(Xf)
    prefix = "alpha" if Cal is AlphaCalibrator else "logit"
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == [f"{prefix}_{c}" for c in NAMES]
    np.testing.assert_array_equal(out.index, Xf.index)
    cal = pipe[-1]
    np.testing.assert_allclose(out.to_numpy(), cal.transform(pipe[0].transform(Xf)))
    np.testing.assert_array_equal(cal.get_feature_names_out(), out.columns)


@pytest.fixture
def routing():
    sklearn.set_config(enable_metadata_routing=True)
    yield
    sklearn.set_config(enable_metadata_routing=False)


def _models():
    pipe = make_pipeline(StandardScaler(), LogisticRegression())
    return [
        SoftLabelClassifier(pipe),
        TemperatureScaler(pipe, cv=3),
        MatrixScaler(LogisticRegression(), cv=3),
        AlphaCalibrator(LogisticRegression(), cv=3, random_state=0),
    ]


@pytest.mark.parametrize("model", _models(), ids=lambda m: type(m).__name__)
def test_counts_routed_into_fit_equal_histograms_as_y(model, routing):
    X, Y, _ = make_label_histograms(240, 3, 5, n_features=4, random_state=9)
    y = Y.argmax(axis=1)  # the majority label travels as y
    with sklearn.config_context(enable_metadata_routing=False):
        a = clone(model).fit(X, Y)
    b = clone(model).set_fit_request(counts=True).fit(X, y, counts=Y)
    np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), atol=1e-10)
    # and what trains on majority labels is another model
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "No item has two or more annotations")
        c = clone(model).fit(X, y)
    assert np.abs(c.predict_proba(X) - a.predict_proba(X)).max() > 1e-4
    # inside cross_validate: counts are split with the folds
    request = clone(model).set_fit_request(counts=True).set_score_request(counts=True)
    res_b = cross_validate(
        request, X, y, cv=KFold(3), params={"counts": Y}, return_estimator=True
    )
    with sklearn.config_context(enable_metadata_routing=False):
        res_a = cross_validate(clone(model), X, Y, cv=KFold(3), return_estimator=True)
    for ea, eb in zip(res_a["estimator"], res_b["estimator"]):
        np.testing.assert_allclose(eb.predict_proba(X), ea.predict_proba(X), atol=1e-10)
    # score(counts=) is the majority accuracy against the routed histograms
    np.testing.assert_allclose(res_b["test_score"], res_a["test_score"])


def test_fit_without_the_request_refuses_counts(routing):
    X, Y, _ = make_label_histograms(60, 3, 5, n_features=4, random_state=10)
    from sklearn.exceptions import UnsetMetadataPassedError

    with pytest.raises(UnsetMetadataPassedError, match="counts"):
        cross_validate(
            TemperatureScaler(LogisticRegression(), cv=2),
            X,
            Y.argmax(axis=1),
            cv=KFold(2),
            params={"counts": Y},
        )
