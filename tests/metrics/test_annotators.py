"""Per-annotator (perspectivist) evaluation of LeWiDi 2025.

The official scores are re-implemented here as per-item loops written from
the notebook's formulas (ER, MER, ANAD) and compared with the vectorised
functions; small fixtures are also worked by hand.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.metrics import (
    annotator_report,
    perspectivist_absolute_distance,
    perspectivist_error_rate,
)


def _long(rows, columns=("item", "annotator", "label")):
    return pd.DataFrame(rows, columns=list(columns))


# MP-like binary irony labels, stored as strings as in the JSON files
ANN = _long(
    [
        ("t1", "Ann0", "0"),
        ("t1", "Ann10", "1"),
        ("t1", "Ann16", "1"),
        ("t2", "Ann0", "1"),
        ("t3", "Ann10", "0"),
        ("t3", "Ann16", "0"),
    ]
)
PRED = _long(
    [
        ("t1", "Ann0", 0),
        ("t1", "Ann10", 0),
        ("t1", "Ann16", 1),
        ("t2", "Ann0", 0),
        ("t3", "Ann10", 0),
        ("t3", "Ann16", 1),
        ("t2", "Ann16", 1),  # not annotated: ignored
    ]
)


def _official_error_rate(ann, pred):
    """ER = (1/N) Σ_i (1 − (a − Σ_k |t_ik − p_ik|) / a), item by item."""
    scores = []
    for item, group in ann.groupby("item", sort=False):
        targets = [float(v) for v in group["label"]]
        predicted = [
            float(pred[(pred.item == item) & (pred.annotator == a)].label.iloc[0])
            for a in group["annotator"]
        ]
        a = len(targets)
        errors = sum(abs(t - p) for t, p in zip(targets, predicted))
        scores.append(1 - (a - errors) / a)
    return np.mean(scores)


def test_error_rate_by_hand_and_by_the_definition():
    # t1: 1 of 3 missed; t2: 1 of 1; t3: 1 of 2  ->  (1/3 + 1 + 1/2) / 3
    expected = (1 / 3 + 1 + 1 / 2) / 3
    assert perspectivist_error_rate(ANN, PRED) == pytest.approx(expected)
    assert perspectivist_error_rate(ANN, PRED) == pytest.approx(
        _official_error_rate(ANN, PRED)
    )
    # averaged per item first: the pooled rate 3/6 is another number
    assert expected != pytest.approx(3 / 6)


def test_categorical_labels_count_mismatches():
    ann = _long([(1, "A", "cat"), (1, "B", "dog"), (2, "A", "bird")])
    pred = _long([(1, "A", "cat"), (1, "B", "cat"), (2, "A", "cat")])
    assert perspectivist_error_rate(ann, pred) == pytest.approx((1 / 2 + 1) / 2)


def test_multilabel_error_rate_against_the_definition():
    labels = ["contradiction", "entailment", "neutral"]
    ann = pd.DataFrame(
        [
            ("i1", "Ann1", 0, 0, 1),
            ("i1", "Ann2", 0, 1, 1),
            ("i1", "Ann3", 0, 0, 1),
            ("i2", "Ann1", 1, 0, 0),
            ("i2", "Ann3", 0, 1, 0),
        ],
        columns=["item", "annotator", *labels],
    )
    pred = ann.copy()
    pred[labels] = [[0, 0, 1], [0, 0, 1], [1, 0, 1], [1, 0, 0], [1, 0, 0]]
    # MER: per item (1/L) Σ_j (1/a) Σ_k |t - p|
    # i1: contradiction 1/3, entailment 1/3, neutral 0 -> (2/3) / 3 = 2/9
    # i2: contradiction 1/2, entailment 1/2, neutral 0 -> 1/3
    assert perspectivist_error_rate(ann, pred, label=labels) == pytest.approx(
        (2 / 9 + 1 / 3) / 2
    )
    ref = []
    for item in ["i1", "i2"]:
        t = ann[ann.item == item][labels].to_numpy()
        p = pred[pred.item == item][labels].to_numpy()
        a = t.shape[0]
        ref.append(
            np.mean([1 - (a - np.abs(t[:, j] - p[:, j]).sum()) / a for j in range(3)])
        )
    assert perspectivist_error_rate(ann, pred, label=labels) == pytest.approx(
        np.mean(ref)
    )


# Par-like ratings on -5..5
PAR_ANN = _long(
    [
        ("q1", "Ann1", "-3"),
        ("q1", "Ann2", "-4"),
        ("q1", "Ann3", "0"),
        ("q1", "Ann4", "-4"),
        ("q2", "Ann1", "5"),
        ("q2", "Ann2", "4"),
    ]
)
PAR_PRED = _long(
    [
        ("q1", "Ann1", -4),
        ("q1", "Ann2", -4),
        ("q1", "Ann3", -4),
        ("q1", "Ann4", -4),
        ("q2", "Ann1", 5),
        ("q2", "Ann2", -5),
    ]
)


def test_anad_by_hand_and_by_the_definition():
    # q1: (1 + 0 + 4 + 0) / 4 / 11 ; q2: (0 + 9) / 2 / 11
    expected = ((1 + 0 + 4 + 0) / 4 / 11 + (0 + 9) / 2 / 11) / 2
    scale = list(range(-5, 6))
    got = perspectivist_absolute_distance(PAR_ANN, PAR_PRED, order=scale)
    assert got == pytest.approx(expected)
    assert perspectivist_absolute_distance(
        PAR_ANN, PAR_PRED, scale=11
    ) == pytest.approx(expected)
    # the notebook's absolute_distance, per item then averaged
    ref = []
    for item, group in PAR_ANN.groupby("item"):
        pred = PAR_PRED[PAR_PRED.item == item].set_index("annotator").label
        d = sum(abs(float(t) - pred[a]) for a, t in zip(group.annotator, group.label))
        ref.append(d / len(group) / 11)
    assert got == pytest.approx(np.mean(ref))


def test_anad_with_named_ordinal_labels():
    scale = ["never", "rarely", "often", "always"]
    ann = _long([(1, "A", "never"), (1, "B", "always")])
    pred = _long([(1, "A", "often"), (1, "B", "always")])
    # (2 steps + 0) / 2 annotators / 4 points
    assert perspectivist_absolute_distance(ann, pred, order=scale) == 0.25


def test_numbers_in_strings_compare_as_numbers():
    ann = _long([(1, "A", "0.0"), (1, "B", "1.0")])
    pred = _long([(1, "A", 0), (1, "B", "1")])
    assert perspectivist_error_rate(ann, pred) == 0.0


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="lack 1 of the 6"):
        perspectivist_error_rate(ANN, PRED.iloc[1:])
    with pytest.raises(ValueError, match="repeating an \\(item, annotator\\) pair"):
        perspectivist_error_rate(pd.concat([ANN, ANN.iloc[:1]]), PRED)
    with pytest.raises(ValueError, match="different kinds"):
        perspectivist_error_rate(ANN, PRED.assign(label="yes"))
    with pytest.raises(ValueError, match="lacks the columns"):
        perspectivist_error_rate(ANN, PRED.rename(columns={"label": "y"}))
    with pytest.raises(ValueError, match="missing values"):
        perspectivist_error_rate(
            ANN.assign(label=[None, "1", "1", "1", "0", "0"]), PRED
        )
    with pytest.raises(ValueError, match="scale="):
        perspectivist_absolute_distance(PAR_ANN, PAR_PRED)
    with pytest.raises(ValueError, match="not in order"):
        perspectivist_absolute_distance(PAR_ANN, PAR_PRED, order=range(-4, 6))
    with pytest.raises(ValueError, match="order="):
        perspectivist_absolute_distance(
            _long([(1, "A", "low")]), _long([(1, "A", "high")]), scale=3
        )


def test_report_per_annotator_by_hand():
    report = annotator_report(ANN, PRED)
    # Ann0: t1 right, t2 wrong ; Ann10: t1 wrong, t3 right ; Ann16: t1 right,
    # t3 wrong
    assert list(report.index) == ["Ann0", "Ann10", "Ann16"]
    assert report.index.name == "annotator"
    assert report["n_items"].tolist() == [2, 2, 2]
    assert report["error_rate"].tolist() == [0.5, 0.5, 0.5]
    par = annotator_report(PAR_ANN, PAR_PRED, scale=11)
    # Ann1: (1 + 0) / 2 / 11 ; Ann2: (0 + 9) / 2 / 11 ; Ann3: 4/11 ; Ann4: 0
    assert par["absolute_distance"].tolist() == pytest.approx(
        [1 / 22, 9 / 22, 4 / 11, 0.0]
    )
    assert par["error_rate"].tolist() == pytest.approx([0.5, 0.5, 1.0, 0.0])


def test_report_per_group_and_weighting():
    meta = pd.DataFrame(
        {"Gender": ["Female", "Male", "Male", "Female"], "Age": [20, 30, 40, 50]},
        index=["Ann1", "Ann2", "Ann3", "Ann4"],
    )
    report = annotator_report(PAR_ANN, PAR_PRED, scale=11, groups=meta, by="Gender")
    # Female: Ann1 (q1: 1, q2: 0) and Ann4 (q1: 0): 3 pairs, distance 1 -> 1/33
    # Male: Ann2 (q1: 0, q2: 9) and Ann3 (q1: 4): 3 pairs, distance 13 -> 13/33
    assert report.loc["Female", "n_annotators"] == 2
    assert report.loc["Female", "n_annotations"] == 3
    assert report.loc["Female", "n_items"] == 2
    assert report.loc["Female", "absolute_distance"] == pytest.approx(1 / 33)
    assert report.loc["Male", "absolute_distance"] == pytest.approx(13 / 33)
    # each annotator weighing the same: Male = mean(9/22, 4/11) = 17/44
    by_annotator = annotator_report(
        PAR_ANN,
        PAR_PRED,
        scale=11,
        groups=meta,
        by="Gender",
        group_weighting="annotators",
    )
    assert by_annotator.loc["Male", "absolute_distance"] == pytest.approx(17 / 44)
    assert by_annotator.loc["Female", "absolute_distance"] == pytest.approx(1 / 44)
    # two grouping columns give a MultiIndex
    two = annotator_report(PAR_ANN, PAR_PRED, groups=meta, by=["Gender", "Age"])
    assert two.index.names == ["Gender", "Age"]
    assert len(two) == 4


def test_report_group_errors():
    with pytest.raises(ValueError, match="without a group"):
        annotator_report(ANN, PRED, groups={"Ann0": "x", "Ann10": "y"})
    with pytest.raises(ValueError, match="by="):
        annotator_report(ANN, PRED, by="Gender")
    with pytest.raises(ValueError, match="pass by="):
        annotator_report(
            ANN, PRED, groups=pd.DataFrame({"a": [1], "b": [2]}, index=["Ann0"])
        )


def test_missing_group_values_are_a_group_of_their_own():
    groups = pd.Series({"Ann0": "x", "Ann10": np.nan, "Ann16": "x"})
    report = annotator_report(ANN, PRED, groups=groups)
    assert report["n_annotations"].sum() == len(ANN)
    assert len(report) == 2
