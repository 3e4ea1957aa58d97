"""Splitters that hold annotations out of a long table."""

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV, cross_validate

from sklearn_hcal.aggregation import DawidSkene, MajorityVote
from sklearn_hcal.metrics import make_annotation_scorer
from sklearn_hcal.model_selection import AnnotatorKFold, OneAnnotationPerItemSplit


def long_table(seed=0, n_items=30, n_annotators=6):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        k = int(rng.integers(1, n_annotators + 1))  # 1 to 6 annotations
        for w in rng.choice(n_annotators, size=k, replace=False):
            rows.append((f"i{i}", f"w{w}", int(rng.integers(2))))
    return pd.DataFrame(rows, columns=["item", "annotator", "label"])


@pytest.mark.parametrize("min_annotations", [2, 4])
def test_one_annotation_of_each_eligible_item(min_annotations):
    X = long_table()
    counts = X["item"].value_counts()
    eligible = set(counts[counts >= min_annotations].index)
    cv = OneAnnotationPerItemSplit(4, min_annotations=min_annotations, random_state=0)
    assert cv.get_n_splits() == 4
    held = []
    for train, test in cv.split(X):
        assert len(np.intersect1d(train, test)) == 0
        assert len(train) + len(test) == len(X)
        items = X["item"].iloc[test]
        assert set(items) == eligible and items.is_unique
        # every held-out item keeps min_annotations - 1 annotations in training
        kept = X["item"].iloc[train].value_counts()
        assert (kept[sorted(eligible)] >= min_annotations - 1).all()
        held.append(set(test))
    # an item with at least n_splits annotations loses a different one each time
    for item in counts[counts >= 4].index:
        rows = set(np.flatnonzero(X["item"].to_numpy() == item))
        assert len({frozenset(h & rows) for h in held}) == 4


def test_same_seed_same_splits_and_shuffle_invariance():
    X = long_table(1)
    cv = OneAnnotationPerItemSplit(3, random_state=5)
    a = [test for _, test in cv.split(X)]
    b = [test for _, test in cv.split(X)]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    other = [test for _, test in OneAnnotationPerItemSplit(3, random_state=6).split(X)]
    assert any(not np.array_equal(x, y) for x, y in zip(a, other))


def test_one_annotation_split_errors():
    X = long_table()
    with pytest.raises(ValueError, match="min_annotations must be an int >= 2"):
        next(OneAnnotationPerItemSplit(min_annotations=1).split(X))
    with pytest.raises(ValueError, match="no item has min_annotations=50"):
        next(OneAnnotationPerItemSplit(min_annotations=50).split(X))
    with pytest.raises(
        ValueError,
        match=r"OneAnnotationPerItemSplit: X must be a pandas DataFrame with one "
        r"row per \(item, annotator\) and the columns item='item'",
    ):
        next(OneAnnotationPerItemSplit().split(X.to_numpy()))
    with pytest.raises(ValueError, match="item='tweet' is not a column of X"):
        next(OneAnnotationPerItemSplit(item="tweet").split(X))
    with pytest.raises(ValueError, match="groups= must be None"):
        next(OneAnnotationPerItemSplit().split(X, groups=X["item"]))
    X.loc[3, "item"] = None
    with pytest.raises(
        ValueError, match=r"X's column 'item' at row 3 is missing \(nan\)"
    ):
        next(OneAnnotationPerItemSplit().split(X))


def test_annotator_folds_are_disjoint():
    X = long_table(2)
    seen = []
    for train, test in AnnotatorKFold(3).split(X):
        tested = set(X["annotator"].iloc[test])
        assert tested.isdisjoint(set(X["annotator"].iloc[train]))
        seen.append(tested)
    assert set().union(*seen) == set(X["annotator"])
    shuffled = [
        set(X["annotator"].iloc[test])
        for _, test in AnnotatorKFold(3, shuffle=True, random_state=0).split(X)
    ]
    assert set().union(*shuffled) == set(X["annotator"])
    with pytest.raises(ValueError, match="groups= must be None"):
        next(AnnotatorKFold(3).split(X, groups=X["item"]))
    with pytest.raises(ValueError, match="annotator='who' is not a column"):
        next(AnnotatorKFold(3, annotator="who").split(X))


def test_unseen_annotators_get_the_pool():
    # the annotator-disjoint folds score the fall-back of every aggregator
    X = long_table(3, n_items=60)
    with pytest.warns(UserWarning, match="annotator values not seen in fit"):
        scores = cross_validate(
            DawidSkene(alpha=1.0),
            X,
            cv=AnnotatorKFold(3),
            scoring=make_annotation_scorer("log_loss"),
            error_score="raise",
        )
    assert np.isfinite(scores["test_score"]).all()


def test_usable_in_grid_search():
    X = long_table(4, n_items=80)
    search = GridSearchCV(
        MajorityVote(),
        {"alpha": [0.5, 1.0, 5.0]},
        cv=OneAnnotationPerItemSplit(3, random_state=0),
        scoring=make_annotation_scorer("brier_score_loss"),
    ).fit(X)
    assert search.best_params_["alpha"] in (0.5, 1.0, 5.0)
    assert search.n_splits_ == 3
