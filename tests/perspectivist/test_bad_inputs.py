"""Bad input to PerspectivistClassifier: one clear ValueError naming the row."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.dummy import DummyClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from sklearn_hcal.perspectivist import (
    OrdinalClassifier,
    PerspectivistClassifier,
    PerspectivistEnsemble,
    TransformerPerspectivistClassifier,
    make_default_estimator,
)

from ._tables import multilabel_table, ordinal_table


@pytest.fixture(scope="module")
def table():
    return ordinal_table(n_items=12)


def test_x_must_be_a_long_table(table):
    X, y = table
    with pytest.raises(
        ValueError,
        match=r"X must be a pandas DataFrame with one row per \(item, annotator\) "
        r"and the columns item='item' and annotator='annotator'",
    ):
        PerspectivistClassifier().fit(X.to_numpy(), y)
    with pytest.raises(
        ValueError, match=r"annotator='annotator' is not a column of X.*annotator="
    ):
        PerspectivistClassifier().fit(X.drop(columns=["annotator"]), y)


def test_a_row_without_annotator_is_named(table):
    X, y = table
    X = X.copy()
    X.loc[5, "annotator"] = None
    with pytest.raises(
        ValueError,
        match=r"X's column 'annotator' at row 5 \(item 'i1'\) is missing \(nan\)",
    ):
        PerspectivistClassifier().fit(X, y)
    X = table[0].copy()
    X.loc[7, "item"] = ""
    with pytest.raises(
        ValueError,
        match=r"X's column 'item' at row 7 \(annotator 'B'\) is missing \(''\)",
    ):
        PerspectivistClassifier().fit(X, y)


def test_a_repeated_pair_is_named(table):
    X, y = table
    X = X.copy()
    X.loc[4, "annotator"] = X.loc[3, "annotator"]
    with pytest.raises(
        ValueError,
        match=r"annotator 'A' labels item 'i1' twice \(row 3 and row 4\)",
    ):
        PerspectivistClassifier().fit(X, y)


def test_the_label_column_in_x_is_refused(table):
    X, y = table
    with pytest.raises(ValueError, match="target column 'label'.*leak"):
        PerspectivistClassifier().fit(X.assign(label=y), y)
    with pytest.raises(ValueError, match="target column 'rating'"):
        PerspectivistClassifier().fit(X.assign(rating=y), y.rename("rating"))


def test_a_missing_label_is_named_with_its_item_and_annotator(table):
    X, y = table
    y = y.astype(object).copy()
    y[10] = None
    with pytest.raises(
        ValueError, match=r"y at row 10 \(item 'i3', annotator 'B'\) is missing"
    ):
        PerspectivistClassifier().fit(X, y)


def test_a_label_outside_the_scale_is_named(table):
    X, y = table
    with pytest.raises(
        ValueError,
        match=r"y at row 0 \(item 'i0', annotator 'A'\) holds -?\d, not among the "
        r"classes \[7, 8, 9\] \(classes=\)",
    ):
        PerspectivistClassifier(classes=[7, 8, 9]).fit(X, y)
    Xm, ym = multilabel_table(n_items=5)
    ym = ym.copy()
    ym[4] = ("neutral", "maybe")
    with pytest.raises(
        ValueError, match=r"y at row 4 \(item .*\) holds 'maybe', not among the classes"
    ):
        PerspectivistClassifier(classes=["contradiction", "entailment", "neutral"]).fit(
            Xm, ym
        )


@pytest.mark.parametrize(
    "make, row, odd, first",
    [
        # a label set among labels, and a label among label sets: the other
        # kind's first row is named (rows 0-2 being sets, row 0 was named twice)
        (lambda: ordinal_table(n_items=12), 2, ("a", "b"), "a single label"),
        (lambda: multilabel_table(n_items=5), 3, "neutral", "a label set"),
    ],
    ids=["set_among_labels", "label_among_sets"],
)
def test_mixed_sets_and_labels_name_the_odd_row(make, row, odd, first):
    X, y = make()
    y = y.astype(object).copy()
    y[row] = odd
    kind = "a single label" if isinstance(odd, str) else "a label set"
    with pytest.raises(ValueError) as err:
        PerspectivistClassifier().fit(X, y)
    assert (
        f"mixes label sets and single labels: y at row {row} (item "
        f"'{X['item'][row]}', annotator '{X['annotator'][row]}') is {odd!r} "
        f"({kind}) while y at row 0 (item 'i0', annotator 'A') is {y[0]!r} "
        f"({first})" in str(err.value)
    )


def test_wrong_length_and_continuous_targets(table):
    X, y = table
    with pytest.raises(
        ValueError, match=r"y must hold one label per row of X \(36 rows\)"
    ):
        PerspectivistClassifier().fit(X, y[:-1])
    with pytest.raises(ValueError, match="continuous"):
        PerspectivistClassifier().fit(X, y + 0.5)


def test_decisions_that_do_not_fit_the_target(table):
    X, y = table
    with pytest.raises(ValueError, match="decision='median' needs an ordinal"):
        PerspectivistClassifier(ordinal=False, decision="median").fit(X, y)
    with pytest.raises(ValueError, match="decision='threshold'"):
        PerspectivistClassifier(decision="threshold").fit(X, y)
    words = y.map({-2: "a", -1: "b", 0: "c", 1: "d", 2: "e"})
    with pytest.raises(ValueError, match="ordinal=True needs a numeric scale"):
        PerspectivistClassifier(ordinal=True).fit(X, words)


def test_an_estimator_that_names_its_columns_needs_fallbacks_off(table):
    X, y = table
    named = make_pipeline(
        ColumnTransformer([("e", TfidfVectorizer(), "explanation")]),
        LogisticRegression(),
    )
    with pytest.raises(ValueError, match=r"without the columns \['explanation'\]"):
        PerspectivistClassifier(named, unseen="estimator").fit(X, y)
    clf = PerspectivistClassifier(named, unseen="estimator", optional_columns=None)
    assert clf.fit(X, y).fallback_estimators_ == {}


def test_predict_needs_the_fitted_columns(table):
    X, y = table
    clf = PerspectivistClassifier().fit(X, y)
    with pytest.raises(ValueError, match=r"lacks the columns \['question'\]"):
        clf.predict(X.drop(columns=["question"]))
    with pytest.raises(ValueError, match=r"X is empty \(0 rows\)"):
        clf.predict(X.iloc[:0])


def test_sample_weight_is_checked_by_row(table):
    X, y = table
    w = np.ones(len(X))
    w[3] = -1
    with pytest.raises(ValueError, match="row 3 is -1.0"):
        PerspectivistClassifier().fit(X, y, sample_weight=w)


def test_one_class_needs_classes(table):
    X, _ = table
    with pytest.raises(
        ValueError, match=r"y holds 1 class\(es\) \[1\]; at least two.*classes="
    ):
        PerspectivistClassifier().fit(X, pd.Series([1] * len(X)))


def test_ratings_written_as_text_are_not_ordered_as_text():
    # '10' < '2' as text: the thresholds were "y > '10'" between 1 and 2
    X = np.arange(30, dtype=float).reshape(-1, 1)
    y = np.array(["1", "2", "10"] * 10)
    with pytest.raises(
        ValueError,
        match=r"numbers written as text, whose text order \['1', '10', '2'\] .* "
        r"numeric order \['1', '2', '10'\]; map them onto numbers",
    ):
        OrdinalClassifier().fit(X, y)
    # as PerspectivistClassifier(ordinal=True), which needs a numeric scale
    table = pd.DataFrame({"item": np.arange(30), "annotator": ["a", "b", "c"] * 10})
    with pytest.raises(ValueError, match="ordinal=True needs a numeric scale"):
        PerspectivistClassifier(ordinal=True).fit(table, y)
    # numbers, and text whose order is the numbers' order, are taken
    assert OrdinalClassifier().fit(X, y.astype(int)).classes_.tolist() == [1, 2, 10]
    assert OrdinalClassifier().fit(X, np.array(["1", "2", "3"] * 10)).classes_.size == 3


def test_indicator_y_names_the_row_column_and_value():
    # a multi-label indicator entry that is not 0 or 1 is refused at the
    # user's row (with its item and annotator), its column and its value
    X, y = multilabel_table(n_items=5)
    labels = ["contradiction", "entailment", "neutral"]
    indicator = np.array([[int(c in s) for c in labels] for s in y])
    indicator[7, 2] = 2
    with pytest.raises(
        ValueError,
        match=r"y \(a multi-label indicator\) at row 7 \(item 'i2', annotator 'B'\), "
        r"column 2: 2 is not 0 or 1\.",
    ):
        PerspectivistClassifier().fit(X, indicator)


def test_a_numeric_explanation_column_is_named(table):
    # was read as the words "0.5", "1.5", ... and fitted without a word
    X, y = table
    scores = X.assign(explanation=np.arange(len(X)) + 0.5)
    with pytest.raises(
        ValueError,
        match=r"explanation='explanation' names a column of numbers \(row 0 holds 0.5",
    ):
        PerspectivistClassifier(random_state=0).fit(scores, y)
    # without explanations the column is not read, so not refused
    PerspectivistClassifier(
        make_default_estimator(ordinal=True, multilabel=False, explanations=False)
    ).fit(scores.drop(columns="explanation"), y)


def test_a_numeric_explanation_column_is_named_by_the_transformer(table, tiny_model):
    X, y = table
    scores = X.assign(explanation=np.arange(len(X)) + 0.5)
    clf = TransformerPerspectivistClassifier(
        str(tiny_model), text_columns=["question"], max_epochs=1
    )
    with pytest.raises(ValueError, match="names a column of numbers"):
        clf.fit(scores, y)


def test_an_ensemble_member_that_is_not_perspectivist_is_named(table):
    # was AttributeError: 'DummyClassifier' object has no attribute 'optional_columns_'
    X, y = table
    ens = PerspectivistEnsemble([PerspectivistClassifier(), DummyClassifier()])
    with pytest.raises(
        ValueError,
        match=r"estimators\[1\] is DummyClassifier\(\), not a perspectivist model",
    ):
        ens.fit(X, y)


def test_a_row_longer_than_the_model_reads_is_named(tiny_model):
    # was torch's "The expanded size of the tensor (167) must match the
    # existing size (64)": the tiny model reads 64 token positions
    X, y = ordinal_table(n_items=2)
    X["question"] = " ".join(["what is the thing"] * 40)
    clf = TransformerPerspectivistClassifier(
        str(tiny_model), text_columns=["question"], max_epochs=1, max_length=256
    )
    with pytest.raises(
        ValueError, match=r"X at row 0 is \d+ tokens long, more than the 64"
    ):
        clf.fit(X, y)
