"""Results do not depend on the order of the rows, nor on the column names."""

import numpy as np
import pandas as pd
import pytest

from ._models import aggregators
from ._tables import crowd_table

MODELS = aggregators(
    MajorityVote={"alpha": 0.5},
    DawidSkene={"alpha": 0.5},
    GLAD={"max_iter": 15},
    MACE={"n_restarts": 2, "max_iter": 20, "random_state": 0},
)


@pytest.fixture(scope="module")
def crowd():
    return crowd_table(50, 8, per_item=4, seed=4)[0]


def _fitted(model, X):
    from sklearn.base import clone

    return clone(model).fit(X)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_row_order_does_not_matter(crowd, model):
    a = _fitted(model, crowd)
    shuffled = crowd.sample(frac=1.0, random_state=1)
    b = _fitted(model, shuffled.set_index(pd.Index(np.arange(len(crowd))[::-1])))
    # same items, annotators and posteriors, in the same (sorted) order
    pd.testing.assert_index_equal(a.items_, b.items_)
    pd.testing.assert_index_equal(a.annotators_, b.annotators_)
    np.testing.assert_allclose(a.posteriors_, b.posteriors_, atol=1e-10)
    pairs = crowd[["item", "annotator"]].iloc[:20]
    np.testing.assert_allclose(
        a.predict_annotator_proba(pairs), b.predict_annotator_proba(pairs), atol=1e-10
    )
    # transform reads the rows in any order too
    np.testing.assert_allclose(a.transform(shuffled), a.transform(crowd), atol=1e-10)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_column_names_and_extra_columns(crowd, model):
    renamed = crowd.rename(columns={"item": "tweet", "annotator": "who", "label": "y"})
    renamed["text"] = "some text"  # other columns are ignored
    b = _fitted(model.set_params(item="tweet", annotator="who", label="y"), renamed)
    a = _fitted(
        model.set_params(item="item", annotator="annotator", label="label"), crowd
    )
    np.testing.assert_allclose(a.posteriors_, b.posteriors_, atol=1e-12)
    assert b.posteriors_.index.name == "tweet" and b.posteriors_.columns.name == "y"
    assert b.predict(renamed).name == "y"


@pytest.mark.parametrize(
    "model", [MODELS[0], *MODELS[2:5]], ids=lambda m: type(m).__name__
)
def test_class_order_follows_classes(crowd, model):
    # classes= fixes the column order; the numbers follow the names. (Not
    # Wawa, whose majority breaks ties by the order of classes_, nor MACE,
    # whose random start is drawn in that order.)
    a = _fitted(model, crowd)
    b = _fitted(model.set_params(classes=["c", "a", "b"]), crowd)
    model.set_params(classes=None)
    assert list(b.posteriors_.columns) == ["c", "a", "b"]
    np.testing.assert_allclose(
        a.posteriors_[["c", "a", "b"]].to_numpy(), b.posteriors_.to_numpy(), atol=1e-10
    )
