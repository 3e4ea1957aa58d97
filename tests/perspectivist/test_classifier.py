"""PerspectivistClassifier: soft labels, fallbacks, model selection, pickling."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

from sklearn_hcal.metrics import (
    perspectivist_absolute_distance,
    perspectivist_error_rate,
)
from sklearn_hcal.model_selection import AnnotatorKFold
from sklearn_hcal.perspectivist import PerspectivistClassifier, make_default_estimator

from ._tables import NLI, SCALE, multilabel_table, ordinal_table


@pytest.fixture(scope="module")
def ordinal():
    X, y = ordinal_table()
    return X, y, PerspectivistClassifier().fit(X, y)


def test_defaults_follow_the_scale(ordinal):
    _, _, clf = ordinal
    assert clf.classes_.tolist() == SCALE
    assert clf.ordinal_ and clf.decision_ == "median"
    assert set(clf.fallback_estimators_) == {
        ("annotator",),
        ("explanation",),
        ("annotator", "explanation"),
    }
    assert clf.annotators_.tolist() == ["A", "B", "C"]


def test_soft_labels_are_the_mean_of_the_annotators_distributions(ordinal):
    X, _, clf = ordinal
    P = clf.predict_proba(X)
    soft = clf.predict_soft_labels(X)
    assert list(soft.columns) == SCALE
    assert soft.index.name == "item"
    assert soft.index.tolist() == list(dict.fromkeys(X["item"]))
    for item in soft.index:
        rows = [i for i, v in enumerate(X["item"]) if v == item]
        expected = [sum(P[i, k] for i in rows) / len(rows) for k in range(len(SCALE))]
        np.testing.assert_allclose(soft.loc[item].to_numpy(), expected, atol=1e-12)


def test_multilabel_soft_labels_are_mean_label_probabilities():
    X, y = multilabel_table()
    clf = PerspectivistClassifier().fit(X, y)
    P = clf.predict_proba(X)
    soft = clf.predict_soft_labels(X)
    assert list(soft.columns) == NLI
    first = X["item"] == "i0"
    np.testing.assert_allclose(soft.loc["i0"].to_numpy(), P[first.to_numpy()].mean(0))


def test_clone_and_pickle_keep_the_model(ordinal):
    X, y, clf = ordinal
    assert clone(clf).get_params() == clf.get_params()
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(restored.predict(X), clf.predict(X))


def test_score_is_one_minus_the_lewidi_score(ordinal):
    X, y, clf = ordinal
    table = X[["item", "annotator"]].assign(label=y)
    pred = table.assign(label=clf.predict(X))
    anad = perspectivist_absolute_distance(table, pred, order=SCALE)
    assert clf.score(X, y) == pytest.approx(1 - anad, abs=1e-12)
    nominal = PerspectivistClassifier(ordinal=False).fit(X, y)
    pred = table.assign(label=nominal.predict(X))
    err = perspectivist_error_rate(table, pred)
    assert nominal.score(X, y) == pytest.approx(1 - err, abs=1e-12)


def ind(sets):
    return pd.DataFrame([[int(c in s) for c in NLI] for s in sets], columns=NLI)


def test_multilabel_score_is_one_minus_the_error_rate():
    X, y = multilabel_table(seed=1)
    clf = PerspectivistClassifier().fit(X, y)
    keys = X[["item", "annotator"]]
    truth = pd.concat([keys, ind(y)], axis=1)
    pred = pd.concat([keys, ind(clf.predict(X))], axis=1)
    err = perspectivist_error_rate(truth, pred, label=NLI)
    assert clf.score(X, y) == pytest.approx(1 - err, abs=1e-12)


def test_grid_search_with_item_groups_scores_each_fold_the_lewidi_way():
    X, y = ordinal_table(n_items=45, seed=2)
    est = make_default_estimator(ordinal=True, multilabel=False)
    grid = GridSearchCV(
        PerspectivistClassifier(est),
        {"estimator__ordinalclassifier__estimator__C": [0.3, 3.0]},
        cv=GroupKFold(n_splits=3),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no unseen annotator, no fallback
        grid.fit(X, y, groups=X["item"])
    best = grid.best_params_["estimator__ordinalclassifier__estimator__C"]
    # the score of each fold is 1 - ANAD on that fold's held-out items
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=X["item"]))
    manual = []
    for train, test in splits:
        assert not set(X["item"].iloc[train]) & set(X["item"].iloc[test])
        clf = PerspectivistClassifier(est).set_params(
            estimator__ordinalclassifier__estimator__C=best
        )
        clf.fit(X.iloc[train], y.iloc[train])
        table = X.iloc[test][["item", "annotator"]].assign(label=y.iloc[test])
        pred = table.assign(label=clf.predict(X.iloc[test]))
        manual.append(1 - perspectivist_absolute_distance(table, pred, order=SCALE))
    assert grid.best_score_ == pytest.approx(np.mean(manual), abs=1e-12)


def test_cross_validate_with_item_groups():
    X, y = multilabel_table(n_items=30, seed=3)
    res = cross_validate(
        PerspectivistClassifier(), X, y, groups=X["item"], cv=GroupKFold(n_splits=3)
    )
    assert np.all((res["test_score"] > 0.5) & (res["test_score"] <= 1))


def test_unseen_annotators_get_the_pools_model(ordinal):
    X, y, _ = ordinal
    # annotator-disjoint split: every row of one annotator held out
    train, test = next(AnnotatorKFold(n_splits=3).split(X, y))
    clf = PerspectivistClassifier().fit(X.iloc[train], y.iloc[train])
    held = X.iloc[test]
    assert held["annotator"].nunique() == 1
    assert not set(held["annotator"]) & set(X["annotator"].iloc[train])
    with pytest.warns(UserWarning, match=r"not seen in fit \(e\.g\. '"):
        P = clf.predict_proba(held)
    pool = clf.fallback_estimators_[("annotator",)]
    expected = pool.predict_proba(held.drop(columns=["item", "annotator"]))
    np.testing.assert_allclose(P, expected, atol=1e-12)


def test_rows_without_explanation_get_the_model_without_it(ordinal):
    X, _, clf = ordinal
    blank = X.copy()
    blank.loc[blank.index[:4], "explanation"] = [np.nan, "", "  ", None]
    with pytest.warns(UserWarning, match=r"4 of 180 rows lack \['explanation'\]"):
        P = clf.predict_proba(blank)
    no_expl = clf.fallback_estimators_[("explanation",)]
    expected = no_expl.predict_proba(X.iloc[:4].drop(columns=["item", "explanation"]))
    np.testing.assert_allclose(P[:4], expected, atol=1e-12)
    np.testing.assert_allclose(P[4:], clf.predict_proba(X)[4:], atol=1e-12)
    # a test file that ships no explanation at all
    with pytest.warns(UserWarning, match="180 of 180 rows lack"):
        clf.predict_proba(X.drop(columns=["explanation"]))


def test_unseen_annotator_without_explanation_gets_the_model_without_both(ordinal):
    X, _, clf = ordinal
    new = X.iloc[[0, 3, 6]].assign(annotator="Z", explanation=None)
    with pytest.warns(UserWarning):
        P = clf.predict_proba(new)
    both = clf.fallback_estimators_[("annotator", "explanation")]
    expected = both.predict_proba(new[["question", "Gender"]])
    np.testing.assert_allclose(P, expected, atol=1e-12)


def test_the_last_fallback_without_features_is_the_prior():
    X, y = ordinal_table(n_items=20)
    X = X[["item", "annotator", "explanation"]]
    clf = PerspectivistClassifier().fit(X, y)
    new = X.iloc[[0, 3]].assign(annotator="Z", explanation="")
    with pytest.warns(UserWarning):
        P = clf.predict_proba(new)
    prior = y.value_counts(normalize=True).reindex(SCALE, fill_value=0).to_numpy()
    np.testing.assert_allclose(P, np.tile(prior, (2, 1)), atol=1e-12)


def test_unseen_estimator_uses_the_estimator_itself(ordinal):
    X, y, _ = ordinal
    clf = PerspectivistClassifier(unseen="estimator", optional_columns=None).fit(X, y)
    assert clf.fallback_estimators_ == {}
    new = X.iloc[[0, 3, 6]].assign(annotator="Z")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = clf.predict_proba(new)
    np.testing.assert_allclose(
        P, clf.estimator_.predict_proba(new.drop(columns=["item"])), atol=1e-12
    )


def test_multilabel_predictions_follow_the_form_of_y():
    X, y = multilabel_table(seed=4)
    sets = PerspectivistClassifier().fit(X, y)
    pred = sets.predict(X)
    assert pred.dtype == object and all(isinstance(p, tuple) for p in pred)
    indicator = pd.DataFrame([[int(c in s) for c in NLI] for s in y], columns=NLI)
    ind = PerspectivistClassifier().fit(X, indicator)
    np.testing.assert_allclose(ind.predict_proba(X), sets.predict_proba(X))
    expected = [[int(c in s) for c in NLI] for s in pred]
    np.testing.assert_array_equal(ind.predict(X), expected)


def test_classes_absent_from_y_get_probability_zero():
    X, y = ordinal_table(n_items=30)
    keep = (y != 2).to_numpy()
    clf = PerspectivistClassifier(classes=SCALE + [3]).fit(X[keep], y[keep])
    assert clf.classes_.tolist() == SCALE + [3]
    P = clf.predict_proba(X)
    np.testing.assert_array_equal(P[:, -2:], 0.0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_sample_weight_counts_like_repeated_rows():
    X, y = ordinal_table(n_items=20)
    params = {"unseen": "estimator", "optional_columns": None}
    w = np.where(X["annotator"] == "A", 3, 1)
    weighted = PerspectivistClassifier(DummyClassifier(), **params).fit(
        X, y, sample_weight=w
    )
    rep = np.repeat(np.arange(len(X)), w)
    repeated = PerspectivistClassifier(DummyClassifier(), **params).fit(
        X.iloc[rep].assign(
            item=[f"{i}_{j}" for j, i in enumerate(X["item"].iloc[rep])]
        ),
        y.iloc[rep],
    )
    np.testing.assert_allclose(
        weighted.predict_proba(X), repeated.predict_proba(X), atol=1e-12
    )


def test_works_on_the_loaders_frame(tmp_path):
    # the frame of a file: the label column must be dropped from X
    X, y = ordinal_table(n_items=10)
    frame = X.assign(label=y)
    clf = PerspectivistClassifier().fit(frame.drop(columns=["label"]), frame["label"])
    assert clf.predict(frame.drop(columns=["label"])).shape == (30,)
