"""The reader of long annotation tables (``_validation/_annotations.py``,
its labels in ``_annotation_labels.py``): what counts as missing, codes that
ignore the row order, how rows are named.
The messages both estimator families share are tested in
``tests/frontend/test_one_long_table.py``."""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal._validation import (
    annotation_labels,
    is_missing,
    read_annotation_table,
    sorted_codes,
)


@pytest.mark.parametrize(
    "values, expected",
    [
        (["a", None, "", "  ", "b", np.nan], [0, 1, 1, 1, 0, 1]),
        ([1.0, np.nan, 2.0], [0, 1, 0]),
        ([3, 4, 5], [0, 0, 0]),
        ([("x",), None, ()], [0, 1, 0]),  # label sets: () is no label chosen
        ([["x"], None, [], " "], [0, 1, 0, 1]),  # as lists: not hashable
        (pd.Series(["q", " ", None], dtype="string"), [0, 1, 1]),
    ],
)
def test_is_missing(values, expected):
    np.testing.assert_array_equal(is_missing(values), np.asarray(expected, bool))


def test_sorted_codes_do_not_depend_on_the_row_order():
    values = np.array(["b", "a", "c", "a"], dtype=object)
    codes, uniques = sorted_codes(values)
    assert list(uniques) == ["a", "b", "c"]
    np.testing.assert_array_equal(uniques[codes], values)
    order = [2, 0, 3, 1]
    shuffled, again = sorted_codes(values[order])
    assert list(again) == list(uniques)
    np.testing.assert_array_equal(shuffled, codes[order])


def test_sorted_codes_of_ids_that_do_not_sort_keep_missing_at_minus_one():
    values = np.array(["b", 2, None, "a", 2], dtype=object)
    codes, uniques = sorted_codes(values)
    assert list(uniques) == [2, "a", "b"]  # by their text
    assert codes[2] == -1
    np.testing.assert_array_equal(codes[[0, 1, 3, 4]], [2, 0, 1, 0])


def test_rows_are_named_by_position_index_and_keys():
    X = pd.DataFrame(
        {"item": ["q1", "q2", None], "annotator": ["ann", "bob", "cy"]},
        index=[0, 7, 2],
    )
    table = read_annotation_table(
        X.iloc[:2], item="item", annotator="annotator", owner="Est"
    )
    assert table.row(0) == "row 0 (item 'q1', annotator 'ann')"
    assert table.row(1) == "row 1 (index 7; item 'q2', annotator 'bob')"
    assert table.row(1, keys=False) == "row 1 (index 7)"
    with pytest.raises(ValueError, match=r"at row 2 \(annotator 'cy'\) is missing"):
        read_annotation_table(X, item="item", annotator="annotator", owner="Est")


def test_a_list_of_labels_keeps_its_types():
    # numpy would read ["yes", 1] as ["yes", "1"]: a label silently changed
    table = read_annotation_table(
        pd.DataFrame({"item": [1, 2], "annotator": ["a", "a"]}),
        item="item",
        annotator="annotator",
        owner="Est",
    )
    values, source = annotation_labels(table, ["yes", 1])
    assert values.tolist() == ["yes", 1] and source == "y"
    # label sets are a multi-label target: kept where those are taken
    ragged, _ = annotation_labels(table, [("a", "b"), ("c",)], matrix=True)
    assert ragged.tolist() == [("a", "b"), ("c",)]
    with pytest.raises(ValueError, match=r"y at row 0 .* holds the label set"):
        annotation_labels(table, [("a", "b"), ("c",)])
    with pytest.warns(UserWarning, match="column-vector y"):  # scikit-learn's rule
        column, _ = annotation_labels(table, np.array([[0], [1]]))
    assert column.tolist() == [0, 1]
