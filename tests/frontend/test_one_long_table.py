"""The aggregators and the perspectivist classifier read a long table of
annotations through one reader (developer guide §estimators): the same bad
table gives the same error, word for word, whichever family reads it."""

import copy
import re

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal._frontend import HumanTargetMixin, ItemWeightsMixin
from sklearn_hcal.perspectivist import PerspectivistClassifier
from tests.aggregation._models import AGGREGATORS

FAMILIES = [*AGGREGATORS, PerspectivistClassifier]


def _table():
    """Seven annotations of three items; an index that is not the positions."""
    X = pd.DataFrame(
        {
            "item": ["q1", "q1", "q1", "q2", "q2", "q3", "q3"],
            "annotator": ["ann", "bob", "cy", "ann", "bob", "cy", "ann"],
            "text": ["a b", "a c", "b c", "c d", "d e", "e f", "f a"],
        },
        index=[10, 11, 12, 13, 14, 15, 16],
    )
    y = pd.Series(["yes", "no", "yes", "no", "no", "yes", "yes"], name="label")
    return X, y


def _set(frame, column, position, value):
    frame = frame.copy()
    frame[column] = frame[column].astype(object)
    frame.iloc[position, frame.columns.get_loc(column)] = value
    return frame


def _case(name):
    X, y = _table()
    params = {}
    if name == "not a DataFrame":
        X = X.to_numpy()
    elif name == "a column named twice":
        X = pd.concat([X, X[["text"]]], axis=1)
    elif name == "item and annotator one column":
        params["annotator"] = "item"
    elif name == "no such column":
        params["annotator"] = "worker"
    elif name == "empty":
        X, y = X.iloc[:0], y.iloc[:0]
    elif name == "missing item":
        X = _set(X, "item", 4, None)
    elif name == "NaN annotator":
        X = _set(X, "annotator", 2, np.nan)
    elif name == "blank item":
        X = _set(X, "item", 5, "  ")
    elif name == "missing label":
        y = y.astype(object).copy()
        y.iloc[3] = None
    elif name == "y of another length":
        y = y.iloc[:-1]
    elif name == "repeated (item, annotator) pair":
        X = _set(X, "annotator", 2, "bob")  # bob labels q1 twice
    elif name == "label outside classes":
        y = y.copy()
        y.iloc[3] = "maybe"
        params["classes"] = ["yes", "no"]  # named in this order, not sorted
    elif name == "one class":
        y = pd.Series(["yes"] * len(y), name="label")
    elif name == "classes naming one class":
        params["classes"] = ["yes"]
    elif name == "a class named twice":
        params["classes"] = ["yes", "no", "yes"]
    elif name == "labels of mixed types":
        y = y.astype(object).copy()
        y.iloc[1] = 0
    else:  # pragma: no cover
        raise KeyError(name)
    return X, y, params


CASES = [
    "not a DataFrame",
    "a column named twice",
    "item and annotator one column",
    "no such column",
    "empty",
    "missing item",
    "NaN annotator",
    "blank item",
    "missing label",
    "y of another length",
    "repeated (item, annotator) pair",
    "label outside classes",
    "one class",
    "classes naming one class",
    "a class named twice",
    "labels of mixed types",
]

#: what each message must name (the argument, the row, the ids, the value)
NAMED = {
    "missing item": ["X's column 'item'", "row 4 (index 14; annotator 'bob')", "None"],
    "NaN annotator": ["X's column 'annotator'", "row 2 (index 12; item 'q1')"],
    "blank item": ["X's column 'item'", "row 5 (index 15; annotator 'cy')", "'  '"],
    "missing label": ["y at row 3 (index 13; item 'q2', annotator 'ann')", "None"],
    "repeated (item, annotator) pair": [
        "annotator 'bob' labels item 'q1' twice",
        "row 1 (index 11) and row 2 (index 12)",
    ],
    "label outside classes": [
        "y at row 3 (index 13; item 'q2', annotator 'ann') holds 'maybe'",
        "['yes', 'no']",
    ],
    "no such column": ["annotator='worker'", "['item', 'annotator', 'text']"],
}


def _message(Model, X, y, params):
    with pytest.raises(ValueError) as err:
        Model(**params).fit(X, y)
    return re.sub(Model.__name__, "<estimator>", str(err.value))


@pytest.mark.parametrize("case", CASES)
def test_the_same_bad_table_gives_the_same_error_in_both_families(case):
    messages = {Model.__name__: _message(Model, *_case(case)) for Model in FAMILIES}
    assert len(set(messages.values())) == 1, messages
    message = messages["PerspectivistClassifier"]
    assert message.startswith("<estimator>: ")  # the estimator is named
    for part in NAMED.get(case, []):
        assert part in message, (part, message)


PREDICT_CASES = ["not a DataFrame", "no such column", "empty", "missing item"]


@pytest.fixture(scope="module")
def fitted():
    X, y = _table()
    return {Model: Model().fit(X, y) for Model in FAMILIES}


@pytest.mark.parametrize("case", PREDICT_CASES)
def test_the_same_bad_pairs_give_the_same_error_at_prediction(case, fitted):
    # the annotator predictions of both families: predict_annotator_proba of
    # an aggregator, predict_proba of the perspectivist classifier
    X, _, params = _case(case)
    messages = {}
    for Model, model in fitted.items():
        model = copy.deepcopy(model).set_params(**params)
        method = getattr(model, "predict_annotator_proba", None) or model.predict_proba
        with pytest.raises(ValueError) as err:
            method(X)
        messages[Model.__name__] = re.sub(Model.__name__, "<estimator>", str(err.value))
    assert len(set(messages.values())) == 1, messages


def test_the_perspectivist_classifier_weighs_rows_through_the_front_end():
    # It takes the item weights from the front end and nothing else of the
    # targets' level: its labels are not histograms (developer guide
    # §estimators).
    assert issubclass(PerspectivistClassifier, ItemWeightsMixin)
    assert not issubclass(PerspectivistClassifier, HumanTargetMixin)
    assert PerspectivistClassifier._item_weights is HumanTargetMixin._item_weights
    X, y = _table()
    w = np.ones(len(X))
    w[3] = np.nan
    with pytest.raises(ValueError, match=r"sample_weight contains NaN or infinity"):
        PerspectivistClassifier().fit(X, y, sample_weight=w)
