"""Bad input to the agreement coefficients is answered clearly.

Each message names the function, the argument and where the problem is (the
row, the item and annotator of a long table, the value), and says what to do;
nothing is computed silently from a table the coefficient is not defined on.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.metrics import (
    annotator_agreement,
    fleiss_kappa,
    item_agreement,
    krippendorff_alpha,
    model_agreement,
    pairwise_cohen_kappa,
)

LONG = pd.DataFrame(
    {"item": [1, 1, 2, 2], "annotator": ["a", "b", "a", "b"], "label": [0, 1, 1, 1]}
)


@pytest.mark.parametrize(
    "y, match",
    [
        ([[1, 0], [0, 1]], "no item has two annotations or more"),
        (LONG.assign(item=[1, 2, 3, 4]), "no item has two annotations or more"),
        ([[2, 0], [3, 0]], "every annotation .* is 0: .* 0/0"),
        (LONG.assign(label=1), "every annotation .* is 1"),
        (
            LONG.assign(label=[0, np.nan, 1, 1]),
            r"column 'label' at row 1 \(item 1, annotator 'b'\) is missing",
        ),
        ([[2, np.nan], [3, 0]], r"NaN or infinity \(row 0, column 1: nan\)"),
        ([[2, -1], [3, 0]], "non-negative label counts; row 0 holds -1"),
        ([[0.5, 0.5], [0.2, 0.8]], "integer label counts .* row 0 holds 0.5"),
        ([1, 2, 3], "counts table .* or a long table"),
        # was "y must be 1-D or 2-D", though 1-D is refused as well
        (np.ones((2, 2, 2)), r"counts table .* got an array of shape \(2, 2, 2\)"),
        (LONG.assign(annotator="a"), "annotator 'a' labels item 1 twice"),
        # a label typed as text among numbers: its row, not only the types
        (
            LONG.assign(label=[0, "1", 1, 1]),
            r"row 1 \(item 1, annotator 'b'\) holds '1' \(str\) where the first "
            r"label is 0 \(int\)",
        ),
    ],
)
def test_alpha_refuses_tables_it_is_not_defined_on(y, match):
    with pytest.raises(ValueError, match=match):
        krippendorff_alpha(y)


def test_alpha_refuses_an_unknown_level():
    with pytest.raises(ValueError, match="'level' parameter .* Got 'nominall'"):
        krippendorff_alpha(LONG, level="nominall")


def test_alpha_refuses_labels_outside_labels():
    with pytest.raises(ValueError, match=r"row 1 \(item 1, annotator 'b'\) holds 1"):
        krippendorff_alpha(LONG, labels=[0, 2])
    with pytest.raises(ValueError, match="labels has 3 entries"):
        krippendorff_alpha([[2, 1], [1, 1]], labels=[1, 2, 3])
    counts = pd.DataFrame([[2, 1], [1, 1]], columns=["x", "y"])
    with pytest.raises(ValueError, match="matched by name"):
        krippendorff_alpha(counts, labels=["x", "z"])


@pytest.mark.parametrize(
    "func", [pairwise_cohen_kappa, item_agreement, annotator_agreement]
)
def test_mixed_label_types_name_their_row_in_every_long_table_function(func):
    with pytest.raises(ValueError, match=r"row 2 \(item 2, annotator 'a'\) holds 'x'"):
        func(LONG.assign(label=[0, 1, "x", 1]))


@pytest.mark.parametrize("level", ["ordinal", "interval", "ratio"])
def test_an_infinite_value_is_named_where_distances_are_read(level):
    # was: "the classes [0.0, 1.0, inf] are not numbers"
    with pytest.raises(
        ValueError, match=r"row 1 \(item 1, annotator 'b'\) holds inf; level="
    ):
        krippendorff_alpha(LONG.assign(label=[0, np.inf, 1, 1]), level=level)
    counts = pd.DataFrame([[2, 1], [1, 1]], columns=[0.0, np.inf])
    with pytest.raises(ValueError, match="the class inf of .* is not finite"):
        krippendorff_alpha(counts, level=level)


@pytest.mark.parametrize("func", [krippendorff_alpha, fleiss_kappa])
def test_a_missing_class_name_in_labels_is_refused(func):
    # was: computed with a class named NaN, which no column can match by name
    with pytest.raises(
        ValueError, match="labels must name every class; entry 1 is nan"
    ):
        func([[2, 1], [1, 2]], labels=[1, np.nan])


def test_annotator_table_without_any_pair_raises_as_alpha_does():
    # was: a table of NaN without a word
    alone = LONG.assign(item=[1, 2, 3, 4])
    with pytest.raises(ValueError, match="no item has two annotations or more"):
        annotator_agreement(alone)


def test_model_agreement_of_two_annotators_warns_nothing():
    # α without either of two annotators is 0/0: NaN, not numpy's
    # "All-NaN slice encountered" RuntimeWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = model_agreement(LONG, pd.Series([0, 1], index=[1, 2]))
    assert np.isnan(out["human_alpha_change_median"])


def test_word_classes_need_an_order_or_numbers():
    words = LONG.assign(label=["lo", "hi", "hi", "hi"])
    with pytest.raises(ValueError, match="needs the scale's order.* labels="):
        krippendorff_alpha(words, level="ordinal")
    with pytest.raises(ValueError, match="level='interval' needs numeric values"):
        krippendorff_alpha(words, level="interval", labels=["lo", "hi"])
    # nominal data need no order
    assert krippendorff_alpha(words) == krippendorff_alpha(LONG)


def test_label_sets_mixed_with_single_labels_are_named():
    X = LONG.assign(label=[("x",), ("x", "y"), "y", ("y",)])
    with pytest.raises(ValueError, match=r"row 2 .* holds 'y', not a label set"):
        krippendorff_alpha(X)
    with pytest.raises(ValueError, match="label sets"):
        annotator_agreement(X.assign(label=[("x",)] * 4))


def test_fleiss_kappa_refuses_unequal_panels_and_points_at_alpha():
    with pytest.raises(ValueError, match="row 0 has 3 and row 1 has 2 .* krippendorff"):
        fleiss_kappa([[2, 1], [1, 1]])
    with pytest.raises(ValueError, match="two or more"):
        fleiss_kappa([[1, 0], [0, 1]])


def test_a_model_must_name_every_item():
    with pytest.raises(ValueError, match="RangeIndex"):
        annotator_agreement(LONG, pd.Series([0, 1]))
    with pytest.raises(ValueError, match="lacks the item 2"):
        annotator_agreement(LONG, pd.Series([0], index=[1]))
    with pytest.raises(ValueError, match="holds the item 3 not in X"):
        annotator_agreement(LONG, pd.Series([0, 1, 1], index=[1, 2, 3]))
    with pytest.raises(ValueError, match="already has an annotator named 'a'"):
        annotator_agreement(LONG, pd.Series([0, 1], index=[1, 2]), model_name="a")
    with pytest.raises(
        ValueError, match="y_pred holds 7 for item 2, not among the classes"
    ):
        annotator_agreement(LONG, pd.Series([0, 7], index=[1, 2]))


def test_long_table_functions_need_a_dataframe():
    with pytest.raises(ValueError, match="'X' parameter"):
        pairwise_cohen_kappa(np.ones((3, 3)))
    with pytest.raises(ValueError, match="'base' parameter"):
        item_agreement(LONG, base="two")
