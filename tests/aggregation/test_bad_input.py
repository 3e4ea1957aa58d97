"""Bad tables are refused with the row, the item or the value named."""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.aggregation import (
    GLAD,
    MACE,
    DawidSkene,
    MajorityVote,
    Wawa,
)
from sklearn_hcal.datasets import load_lewidi
from tests.conftest import require_data

from ._models import AGGREGATORS


def table(changes=None):
    X = pd.DataFrame(
        {
            "item": ["q1", "q1", "q1", "q2", "q2", "q3", "q3"],
            "annotator": ["ann", "bob", "cy", "ann", "bob", "cy", "ann"],
            "label": ["yes", "no", "yes", "no", "no", "yes", "yes"],
        },
        index=[10, 11, 12, 13, 14, 15, 16],
    )
    for (column, position), value in (changes or {}).items():
        X.iloc[position, X.columns.get_loc(column)] = value
    return X


@pytest.mark.parametrize("Model", AGGREGATORS)
def test_repeated_item_annotator_pair_names_both_rows(Model):
    X = table({("annotator", 2): "bob"})  # bob labels q1 twice
    with pytest.raises(
        ValueError, match=r"annotator 'bob' labels item 'q1' twice"
    ) as e:
        Model().fit(X)
    assert "row 1 (index 11) and row 2 (index 12)" in str(e.value)
    # no advice to drop rows: repeated ids across splits are different items
    assert "drop_duplicates" not in str(e.value)
    assert "combine_lewidi_splits" in str(e.value)


@pytest.mark.parametrize("Model", AGGREGATORS)
def test_label_not_in_classes_names_the_row_and_value(Model):
    with pytest.raises(
        ValueError,
        match=r"X's column 'label' at row 3 \(index 13; item 'q2', annotator 'ann'\) "
        r"holds 'maybe', not among the classes \['no', 'yes'\] \(classes=\)",
    ):
        Model(classes=["no", "yes"]).fit(table({("label", 3): "maybe"}))
    # and at transform time against the fitted classes
    model = Model().fit(table())
    with pytest.raises(
        ValueError,
        match=r"at row 0 \(index 10; item 'q1', annotator 'ann'\) holds 'maybe', "
        r"not among the classes \['no', 'yes'\] \(the fitted classes_\)",
    ):
        model.transform(table({("label", 0): "maybe"}))


@pytest.mark.parametrize("Model", AGGREGATORS)
@pytest.mark.parametrize("column", ["item", "annotator", "label"])
def test_missing_values_name_the_row(Model, column):
    X = table({(column, 4): None})
    with pytest.raises(
        ValueError,
        match=rf"X's column '{column}' at row 4 \(index 14[;)].* is missing "
        rf"\(nan\): every row needs its {column}",
    ):
        Model().fit(X)


@pytest.mark.parametrize("Model", AGGREGATORS)
def test_nan_label_in_a_float_column(Model):
    X = pd.DataFrame(
        {
            "item": [1, 1, 2, 2],
            "annotator": [1, 2, 1, 2],
            "label": [0.0, 1.0, np.nan, 1],
        }
    )
    with pytest.raises(
        ValueError,
        match=r"X's column 'label' at row 2 \(item 2, annotator 1\) is missing "
        r"\(nan\).*1 row\(s\) lack one",
    ):
        Model().fit(X)


@pytest.mark.parametrize("Model", AGGREGATORS)
def test_empty_table(Model):
    with pytest.raises(ValueError, match=r"X is empty \(0 rows\)"):
        Model().fit(table().iloc[:0])


@pytest.mark.parametrize("Model", AGGREGATORS)
def test_not_a_dataframe(Model):
    with pytest.raises(
        ValueError, match=r"X must be a pandas DataFrame with one row per \(item, "
    ):
        Model().fit(table().to_numpy())


@pytest.mark.parametrize("Model", AGGREGATORS)
def test_missing_column_lists_the_columns(Model):
    with pytest.raises(ValueError, match=r"annotator='worker' is not a column of X"):
        Model(annotator="worker").fit(table())


@pytest.mark.parametrize("Model", AGGREGATORS)
def test_a_single_class_asks_for_classes(Model):
    X = table()
    X["label"] = "yes"
    with pytest.raises(ValueError, match=r"1 class\(es\) \['yes'\].*Pass classes="):
        Model().fit(X)
    # with both classes named the table is fine
    model = Model(classes=["no", "yes"]).fit(X)
    assert model.posteriors_.shape == (3, 2)


def test_repeated_classes_refused():
    with pytest.raises(ValueError, match="'yes' occurs more than once"):
        DawidSkene(classes=["yes", "no", "yes"]).fit(table())


def test_labels_from_y_must_match_the_rows():
    X = table().drop(columns="label")
    with pytest.raises(
        ValueError, match=r"y must hold one label per row of X \(7 rows\), got shape"
    ):
        DawidSkene().fit(X, ["yes", "no"])
    y = table()["label"].to_numpy()
    np.testing.assert_allclose(
        DawidSkene().fit(X, y).posteriors_, DawidSkene().fit(table()).posteriors_
    )


def test_glad_refuses_an_annotator_with_one_annotation():
    X = table({("annotator", 6): "dee"})  # dee's only annotation, row 6
    with pytest.raises(ValueError, match=r"annotator 'dee' has 1 annotation\(s\)") as e:
        GLAD().fit(X)
    assert "row 6 (index 16)" in str(e.value)
    assert "at least 2 per annotator" in str(e.value)
    DawidSkene().fit(X)  # the other models take them


def test_glad_refusal_on_a_real_file():
    # CSC's dev file has annotators with a single annotation
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X = load_lewidi(require_data("lewidi", "2025", "CSC_dev.json")).annotations
    once = X["annotator"].value_counts()
    once = set(once[once == 1].index)
    with pytest.raises(ValueError, match="has 1 annotation") as e:
        GLAD().fit(X)
    named = str(e.value).split("annotator ")[1].split(" has")[0].strip("'")
    assert named in once
    kept = X[X["annotator"].map(X["annotator"].value_counts()) >= 2]
    GLAD(max_iter=3, tol=None).fit(kept)  # the message's fix works


def test_predict_annotator_proba_input():
    model = DawidSkene().fit(table())
    pairs = pd.DataFrame({"item": ["q1", None], "annotator": ["ann", "bob"]})
    with pytest.raises(ValueError, match=r"column 'item' at row 1 .* is missing"):
        model.predict_annotator_proba(pairs)
    with pytest.raises(ValueError, match="not a column of X"):
        model.predict_annotator_proba(pairs.rename(columns={"item": "id"}))
    with pytest.raises(ValueError, match="X is empty"):
        model.predict_annotator_proba(pairs.iloc[:0])


@pytest.mark.parametrize("Model", AGGREGATORS)
def test_unfitted_raises(Model):
    from sklearn.exceptions import NotFittedError

    for method in ("transform", "predict", "predict_annotator_proba"):
        with pytest.raises(NotFittedError):
            getattr(Model(), method)(table())


@pytest.mark.parametrize(
    "model, match",
    [
        (DawidSkene(max_iter=0), "max_iter"),
        (DawidSkene(alpha=-1), "alpha"),
        (GLAD(tol=-1.0), "tol"),
        (MACE(method="gibbs"), "method"),
        (MajorityVote(alpha=-0.5), "alpha"),
    ],
)
def test_parameters_are_validated_in_fit(model, match):
    with pytest.raises(ValueError, match=match):
        model.fit(table())


def test_wawa_warns_for_an_item_of_annotators_without_skill():
    X = pd.DataFrame(
        {
            "item": ["q1", "q1", "q1", "q2", "q2", "q2"],
            "annotator": ["a", "b", "c", "a", "b", "c"],
            "label": ["yes", "yes", "no", "no", "no", "yes"],
        }
    )
    wawa = Wawa().fit(X)
    assert wawa.skills_["c"] == 0
    new = pd.DataFrame({"item": ["q9"], "annotator": ["c"], "label": ["no"]})
    with pytest.warns(UserWarning, match="item 'q9'.*plain share") as record:
        posterior = wawa.transform(new)
    assert record[0].filename == __file__
    np.testing.assert_array_equal(posterior.to_numpy(), [[1.0, 0.0]])


def test_a_multilabel_file_is_answered_with_the_per_label_fit():
    # VariErrNLI's annotations have one 0/1 column per label, no label column
    path = require_data("lewidi", "2025", "VariErrNLI_dev.json")
    X = load_lewidi(path).annotations
    with pytest.raises(ValueError, match="looks like multi-label") as e:
        DawidSkene().fit(X)
    assert "label='contradiction'" in str(e.value)
    # the message's fix works, and gives the labels' own classes
    assert DawidSkene(label="contradiction").fit(X).classes_.tolist() == [0, 1]
    # a table with other columns that are not 0/1 gets no such advice
    with pytest.raises(ValueError, match="not a column of X") as e:
        DawidSkene().fit(X.assign(contradiction=X["contradiction"] * 2))
    assert "multi-label" not in str(e.value)


@pytest.mark.parametrize("Model", AGGREGATORS)
def test_label_sets_are_refused_naming_the_label_column(Model):
    # VariErrNLI's frame holds each annotator's tuple of labels: numpy's
    # "inhomogeneous shape" escaped; the answer is the wide table's, per label
    X = table()
    X["label"] = pd.Series(
        [("yes",), ("no", "yes"), ("yes",), ("no",), ("no",), ("yes",), ("yes",)],
        index=X.index,
        dtype=object,
    )
    with pytest.raises(
        ValueError,
        match=r"X's column 'label' at row 0 \(index 10; item 'q1', annotator 'ann'\) "
        r"holds the label set \('yes',\) \(7 row\(s\) hold label sets.*one label per "
        r"annotation.*label='yes', one fit per label",
    ):
        Model().fit(X)


def test_a_multilabel_frame_is_answered_with_the_per_label_fit():
    path = require_data("lewidi", "2025", "VariErrNLI_dev.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = load_lewidi(path)
    with pytest.raises(ValueError, match=r"X's column 'label' at row 0 .* label set"):
        DawidSkene().fit(data.frame)
    # the fix the message gives: one yes/no fit per label on the wide table
    chosen = data.frame["label"].map(lambda labels: "contradiction" in labels)
    fitted = MajorityVote(label="contradiction").fit(data.annotations)
    shares = chosen.groupby(data.frame["item"]).mean()
    np.testing.assert_allclose(
        fitted.posteriors_[1].to_numpy(), shares.reindex(fitted.posteriors_.index)
    )
