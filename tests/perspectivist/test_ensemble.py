"""PerspectivistEnsemble: the mean of its members' per-annotator distributions,
decided by the classifier's Bayes rules (fast members, no network)."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.dummy import DummyClassifier

from sklearn_hcal.perspectivist import PerspectivistClassifier, PerspectivistEnsemble

from ._tables import SCALE, multilabel_table, ordinal_table


def _members(classes=None):
    return [
        PerspectivistClassifier(classes=classes, random_state=0),
        PerspectivistClassifier(DummyClassifier(), classes=classes, unseen="estimator"),
    ]


def test_probabilities_are_the_mean_of_the_members_fitted_apart():
    X, y = ordinal_table(40)
    ens = PerspectivistEnsemble(_members(SCALE)).fit(X, y)
    a, b = (m.fit(X, y).predict_proba(X) for m in _members(SCALE))
    np.testing.assert_allclose(ens.predict_proba(X), (a + b) / 2, rtol=0, atol=1e-15)
    # the members given are left unfitted: fit works on clones
    assert not hasattr(ens.estimators[0], "classes_")


def test_ordinal_decision_is_the_median_of_the_mean():
    X, y = ordinal_table(40)
    ens = PerspectivistEnsemble(_members(SCALE)).fit(X, y)
    P = ens.predict_proba(X)
    # the lowest class whose cumulative probability reaches 1/2, written out
    expected = [
        SCALE[next(k for k in range(len(SCALE)) if P[r, : k + 1].sum() >= 0.5 - 1e-12)]
        for r in range(len(P))
    ]
    assert ens.decision_ == "median"
    np.testing.assert_array_equal(ens.predict(X), expected)
    soft = ens.predict_soft_labels(X)
    items = X["item"].to_numpy()
    first = items[0]
    np.testing.assert_allclose(soft.loc[first], P[items == first].mean(axis=0))


def test_multilabel_decision_thresholds_the_mean():
    X, y = multilabel_table(30)
    ens = PerspectivistEnsemble(_members()).fit(X, y)
    P = ens.predict_proba(X)
    labels = ens.classes_.tolist()
    expected = [tuple(c for c, p in zip(labels, row) if p >= 0.5) for row in P]
    assert ens.decision_ == "threshold"
    assert list(ens.predict(X)) == expected


def test_clone_and_pickle_keep_the_predictions():
    X, y = ordinal_table(30)
    ens = PerspectivistEnsemble(_members(SCALE))
    assert clone(ens).get_params()["decision"] == "auto"
    fitted = ens.fit(X, y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict_proba(X), fitted.predict_proba(X))


def test_members_with_different_classes_are_refused():
    X, y = ordinal_table(30)
    members = [
        PerspectivistClassifier(classes=SCALE),
        PerspectivistClassifier(classes=[*SCALE, 3]),
    ]
    with pytest.raises(ValueError, match=r"estimators\[1\].*same classes="):
        PerspectivistEnsemble(members).fit(X, y)


def test_bad_input_is_named():
    X, y = ordinal_table(10)
    with pytest.raises(ValueError, match="estimators is empty"):
        PerspectivistEnsemble([]).fit(X, y)
    with pytest.raises(TypeError, match="X must be a DataFrame"):
        PerspectivistEnsemble(_members()).fit(X.to_numpy(), y)
    ens = PerspectivistEnsemble(_members(SCALE)).fit(X, y)
    with pytest.raises(ValueError, match="question"):
        ens.predict_proba(pd.DataFrame(X.drop(columns=["question"])))
