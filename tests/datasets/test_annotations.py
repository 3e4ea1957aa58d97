"""annotations_to_histograms: long-format tables to label histograms."""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.datasets import annotations_to_histograms


@pytest.fixture
def table():
    # Three items, four annotators, labels typed by hand.
    return pd.DataFrame(
        {
            "item": ["q1", "q1", "q1", "q2", "q2", "q3", "q3", "q3", "q3"],
            "worker": ["w1", "w2", "w3", "w1", "w4", "w1", "w2", "w3", "w4"],
            "label": ["e", "n", "e", "c", "c", "n", "e", "c", "n"],
        }
    )


def test_hand_built_table(table):
    out = annotations_to_histograms(table, annotator="worker")
    expected = pd.DataFrame(
        [[0, 2, 1], [2, 0, 0], [1, 1, 2]],
        index=pd.Index(["q1", "q2", "q3"], name="item"),
        columns=pd.Index(["c", "e", "n"], name="label"),
        dtype=np.int64,
    )
    pd.testing.assert_frame_equal(out, expected)


def test_classes_order_and_unseen_class(table):
    out = annotations_to_histograms(table, classes=["e", "n", "c", "x"])
    assert list(out.columns) == ["e", "n", "c", "x"]
    np.testing.assert_array_equal(
        out.to_numpy(), [[2, 1, 0, 0], [0, 0, 2, 0], [1, 2, 1, 0]]
    )


def test_against_crosstab_on_random_table():
    rng = np.random.default_rng(0)
    n = 5000
    df = pd.DataFrame(
        {
            "id": rng.integers(0, 300, n),
            "rater": rng.integers(0, 10_000, n),
            "answer": rng.choice(["dog", "cat", "bird", "fish"], n),
        }
    ).drop_duplicates(["id", "rater"])
    out = annotations_to_histograms(df, item="id", label="answer", annotator="rater")
    ref = pd.crosstab(df["id"], df["answer"])
    pd.testing.assert_frame_equal(
        out.sort_index(), ref.astype(np.int64), check_names=True
    )
    assert out.to_numpy().sum() == len(df)
    # Items keep their order of first appearance in the table.
    np.testing.assert_array_equal(out.index, pd.unique(df["id"]))


def test_integer_labels_and_categorical_classes():
    df = pd.DataFrame({"item": [10, 10, 11, 12], "label": [2, 0, 2, 1]})
    out = annotations_to_histograms(df, classes=[0, 1, 2, 3])
    np.testing.assert_array_equal(
        out.to_numpy(), [[1, 0, 1, 0], [0, 0, 1, 0], [0, 1, 0, 0]]
    )
    assert list(out.columns) == [0, 1, 2, 3]
    cat = df.assign(label=pd.Categorical(df.label, categories=[2, 1, 0, 5]))
    out = annotations_to_histograms(cat)
    assert list(out.columns) == [2, 1, 0, 5]
    np.testing.assert_array_equal(out.loc[10].to_numpy(), [1, 0, 1, 0])


def test_output_feeds_the_validator(table):
    from sklearn_hcal._validation import check_label_histograms

    out = annotations_to_histograms(table)
    Y, classes = check_label_histograms(out, return_classes=True)
    np.testing.assert_array_equal(classes, ["c", "e", "n"])
    np.testing.assert_array_equal(Y.sum(1), [3, 2, 4])


def test_missing_values(table):
    bad = table.copy()
    bad.loc[4, "label"] = None
    bad.loc[7, "item"] = np.nan
    with pytest.raises(ValueError, match="2 rows with a missing item/label"):
        annotations_to_histograms(bad)
    out = annotations_to_histograms(bad, dropna=True)
    np.testing.assert_array_equal(out.to_numpy(), [[0, 2, 1], [1, 0, 0], [0, 1, 2]])
    only_missing = table.assign(label=None)
    with pytest.raises(ValueError, match="no annotations"):
        annotations_to_histograms(only_missing, dropna=True)
    no_worker = table.copy()
    no_worker.loc[0, "worker"] = None
    with pytest.raises(ValueError, match="missing annotator"):
        annotations_to_histograms(no_worker, annotator="worker")


def test_duplicate_item_annotator_pairs(table):
    dup = pd.concat(
        [table, pd.DataFrame({"item": ["q2"], "worker": ["w4"], "label": ["e"]})],
        ignore_index=True,
    )
    with pytest.raises(ValueError, match=r"repeat an \(item, annotator\).*'q2', 'w4'"):
        annotations_to_histograms(dup, annotator="worker")
    first = annotations_to_histograms(dup, annotator="worker", duplicates="first")
    last = annotations_to_histograms(dup, annotator="worker", duplicates="last")
    keep = annotations_to_histograms(dup, annotator="worker", duplicates="keep")
    assert first.loc["q2"].tolist() == [2, 0, 0]  # c, e, n
    assert last.loc["q2"].tolist() == [1, 1, 0]
    assert keep.loc["q2"].tolist() == [2, 1, 0]
    # Without an annotator column repeated rows are simply counted.
    assert annotations_to_histograms(dup).loc["q2"].tolist() == [2, 1, 0]


def test_unknown_labels_named(table):
    with pytest.raises(ValueError, match=r"not in classes: \['c'\]"):
        annotations_to_histograms(table, classes=["e", "n"])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"item": "id"}, "item='id' is not a column"),
        ({"label": "answer"}, "label='answer' is not a column"),
        ({"annotator": "rater"}, "annotator='rater' is not a column"),
        ({"label": "item"}, "different columns"),
        ({"classes": ["e", "e", "n", "c"]}, "classes must be unique"),
        ({"classes": []}, "classes must not be empty"),
        ({"duplicates": "drop"}, "duplicates"),
        ({"dropna": "yes"}, "dropna"),
    ],
)
def test_bad_arguments(table, kwargs, match):
    with pytest.raises(ValueError, match=match):
        annotations_to_histograms(table, **kwargs)


def test_bad_tables():
    with pytest.raises(ValueError, match="df"):
        annotations_to_histograms({"item": [1], "label": ["a"]})
    with pytest.raises(ValueError, match="no annotations"):
        annotations_to_histograms(pd.DataFrame({"item": [], "label": []}))
    mixed = pd.DataFrame({"item": [1, 2], "label": ["a", 3]})
    with pytest.raises(ValueError, match="cannot be sorted"):
        annotations_to_histograms(mixed)
    out = annotations_to_histograms(mixed, classes=[3, "a"])
    np.testing.assert_array_equal(out.to_numpy(), [[0, 1], [1, 0]])
