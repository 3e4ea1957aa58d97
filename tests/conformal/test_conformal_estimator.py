"""HumanConformalClassifier as a scikit-learn estimator."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_hcal.conformal import HumanConformalClassifier
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import (
    aggregated_coverage_score,
    majority_coverage_score,
    make_deferral_scorer,
    make_set_scorer,
    mean_set_size,
)
from sklearn_hcal.utils._pipeline import get_method
from tests._calibrator_checks import LABELS_VS_COLUMNS


@pytest.fixture(scope="module")
def data():
    X, Y, Q = make_label_histograms(
        900, n_classes=3, n_annotations=5, n_features=4, random_state=0
    )
    clf = LogisticRegression().fit(X[:300], Y[:300].argmax(axis=1))
    return X, Y, Q, clf


def test_frozen_classifier_and_named_histograms(data):
    X, Y, _, clf = data
    names = ["a", "b", "c"]
    clf_named = LogisticRegression().fit(X[:300], np.array(names)[Y[:300].argmax(1)])
    H = pd.DataFrame(Y[300:600], columns=names)[["c", "a", "b"]]  # another order
    cp = HumanConformalClassifier(FrozenEstimator(clf_named), random_state=0)
    cp.fit(X[300:600], H)
    assert list(cp.classes_) == names
    same = HumanConformalClassifier(FrozenEstimator(clf_named), random_state=0)
    same.fit(X[300:600], Y[300:600])
    assert np.array_equal(cp.predict_set(X[600:]), same.predict_set(X[600:]))
    assert cp.n_features_in_ == 4
    assert np.allclose(cp.predict_proba(X[600:]), clf_named.predict_proba(X[600:]))
    assert np.array_equal(cp.predict(X[600:]), clf_named.predict(X[600:]))


def test_pickle_and_clone(data):
    X, Y, _, clf = data
    cp = HumanConformalClassifier(FrozenEstimator(clf), n_labels=5, random_state=1)
    cp.fit(X[300:600], Y[300:600])
    again = pickle.loads(pickle.dumps(cp))
    assert np.array_equal(again.predict_set(X[600:]), cp.predict_set(X[600:]))
    fresh = clone(cp)
    assert not hasattr(fresh, "threshold_")
    fresh.fit(X[300:600], Y[300:600])
    assert fresh.threshold_ == cp.threshold_  # same random_state, same draws


def test_pipeline_and_cross_validate_with_scorers(data):
    X, Y, _, _ = data
    pipe_clf = make_pipeline(StandardScaler(), LogisticRegression())
    pipe_clf.fit(X[:300], Y[:300].argmax(axis=1))
    # the conformal classifier as the last step of a Pipeline: its input
    # there is the classifier's log-probabilities
    cp = make_pipeline(
        FunctionTransformer(np.log),
        HumanConformalClassifier(calibration="exact", input="logits"),
    )
    Xp = pipe_clf.predict_proba(X[300:])
    cp.fit(Xp, Y[300:])
    alone = HumanConformalClassifier(calibration="exact").fit(Xp, Y[300:])
    pipe_p = get_method(cp, "predict_pvalues")(Xp)
    assert np.allclose(pipe_p, alone.predict_pvalues(Xp), atol=0.01)
    scorer = make_set_scorer("aggregated_coverage_score")
    assert scorer(cp, Xp, Y[300:]) == pytest.approx(
        aggregated_coverage_score(Y[300:], cp[-1].predict_set(np.log(Xp)))
    )
    scoring = {
        "coverage": make_set_scorer("aggregated_coverage_score"),
        "majority": make_set_scorer("majority_coverage_score"),
        "size": make_set_scorer("mean_set_size"),
        "aurc": make_deferral_scorer("aurc_loss"),
    }
    est = HumanConformalClassifier(FrozenEstimator(pipe_clf), random_state=0)
    fitted = clone(est).fit(X[300:600], Y[300:600])
    for scorer in scoring.values():
        again = pickle.loads(pickle.dumps(scorer))
        assert again(fitted, X[600:], Y[600:]) == scorer(fitted, X[600:], Y[600:])
    res = cross_validate(
        est, X[300:], Y[300:], cv=KFold(3), scoring=scoring, error_score="raise"
    )
    # each fold's scorers equal the metrics on its test part
    folds = list(KFold(3).split(X[300:]))
    for f, (train, test) in enumerate(folds):
        fitted = clone(est).fit(X[300:][train], Y[300:][train])
        sets = fitted.predict_set(X[300:][test])
        Yt = Y[300:][test]
        assert res["test_coverage"][f] == pytest.approx(
            aggregated_coverage_score(Yt, sets)
        )
        assert res["test_majority"][f] == pytest.approx(
            majority_coverage_score(Yt, sets)
        )
        assert res["test_size"][f] == pytest.approx(-mean_set_size(Yt, sets))
    assert np.all(res["test_coverage"] > 0.8)


def test_metadata_routing_counts(data):
    import sklearn

    X, Y, _, clf = data
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_set_scorer("aggregated_coverage_score").set_score_request(
            counts=True
        )
        est = HumanConformalClassifier(FrozenEstimator(clf), random_state=0)
        est.set_fit_request(counts=True)  # calibrate on the histograms too
        res = cross_validate(
            est,
            X[300:],
            Y[300:].argmax(axis=1),
            cv=KFold(3),
            scoring=scorer,
            params={"counts": Y[300:]},
        )
    assert np.all(res["test_score"] > 0.8)


def test_unfrozen_classifier_refused(data):
    X, Y, _, clf = data
    with pytest.raises(ValueError, match="FrozenEstimator"):
        HumanConformalClassifier(LogisticRegression()).fit(X[:50], Y[:50])


def test_bad_inputs(data):
    X, Y, _, clf = data
    P = clf.predict_proba(X[300:400])
    with pytest.raises(ValueError, match="holdout"):
        HumanConformalClassifier(correction="ecdf", holdout=0.1).fit(P[:3], Y[:3])
    with pytest.raises(ValueError, match="confidence_level"):
        HumanConformalClassifier(confidence_level=1.0).fit(P, Y[300:400])
    with pytest.raises(ValueError, match="class"):
        HumanConformalClassifier().fit(P, Y[300:400, :2])
    with pytest.raises(ValueError, match="samples"):
        HumanConformalClassifier().fit(P, Y[300:350])
    cp = HumanConformalClassifier().fit(P, Y[300:400])
    with pytest.raises(ValueError, match="features"):
        cp.predict_set(P[:, :2])


def test_confidence_level_monotone(data):
    X, Y, _, clf = data
    cp = HumanConformalClassifier(FrozenEstimator(clf), calibration="exact")
    sizes = [
        cp.set_params(confidence_level=c)
        .fit(X[300:600], Y[300:600])
        .predict_set(X[600:])
        .sum()
        for c in (0.5, 0.8, 0.9, 0.95)
    ]
    assert sizes == sorted(sizes)


# With estimator=None, X is one probability column per class and the checks'
# 1-D labels cover fewer classes than X has columns: fit asks for classes=
# (the calibrators' behaviour). A FrozenEstimator fixes X's width, which the
# checks vary; that mode is tested above.
_EXPECTED_FAILURES = dict.fromkeys(
    [
        "check_classifiers_classes",
        "check_classifiers_train",
        "check_dtype_object",
        "check_estimators_dtypes",
        "check_estimators_fit_returns_self",
        "check_estimators_nan_inf",
        "check_estimators_overwrite_params",
        "check_estimators_pickle",
        "check_n_features_in_after_fitting",
        "check_pipeline_consistency",
        "check_positive_only_tag_during_fit",
        "check_readonly_memmap_input",
    ],
    LABELS_VS_COLUMNS,
)


@parametrize_with_checks(
    [HumanConformalClassifier(n_labels=3, random_state=0)],
    expected_failed_checks=lambda est: _EXPECTED_FAILURES,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_one_label_per_item_is_standard_conformal(data):
    # with one annotation per item, every calibration is the majority one
    X, Y, _, clf = data
    labels = Y[300:600].argmax(axis=1)
    sets = [
        HumanConformalClassifier(FrozenEstimator(clf), calibration=c, random_state=0)
        .fit(X[300:600], labels)
        .predict_set(X[600:])
        for c in ("majority", "monte_carlo", "exact")
    ]
    assert np.array_equal(sets[0], sets[1]) and np.array_equal(sets[0], sets[2])


def test_pvalues_do_not_depend_on_the_level(data):
    X, Y, _, clf = data
    cp = HumanConformalClassifier(FrozenEstimator(clf), calibration="exact")
    p80 = cp.set_params(confidence_level=0.8).fit(X[300:600], Y[300:600])
    p80 = p80.predict_pvalues(X[600:])
    cp.set_params(confidence_level=0.95).fit(X[300:600], Y[300:600])
    assert np.array_equal(p80, cp.predict_pvalues(X[600:]))
    assert np.array_equal(cp.predict_set(X[600:]), p80 > 0.05)
