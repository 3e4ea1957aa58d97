"""Submission files from Python: written, read back, scored as in memory;
training splits combined without losing VariErrNLI's colliding items."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.datasets import (
    combine_lewidi_splits,
    load_lewidi,
    read_lewidi_submission,
    write_lewidi_submission,
)
from sklearn_hcal.metrics import lewidi_scores
from sklearn_hcal.perspectivist import PerspectivistClassifier

from ..conftest import require_data

#: VariErrNLI's train and dev files use these ids for different items.
COLLIDING = {"111338", "129081", "32754", "84781"}


def _subset(tmp_path, name, n_items, start=0, rename=None):
    src = require_data("lewidi", "2025", f"{name}.json")
    records = json.loads(src.read_text(encoding="utf-8"))
    dest = tmp_path / (rename or f"{name}.json")
    keep = dict(list(records.items())[start : start + n_items])
    dest.write_text(json.dumps(keep), encoding="utf-8")
    return dest


@pytest.mark.parametrize(
    ("name", "test_name"),
    [("Paraphrase_train", "Paraphrase_dev"), ("VariErrNLI_train", "VariErrNLI_dev")],
)
def test_model_to_files_to_scores_equals_the_scores_in_memory(
    tmp_path, name, test_name
):
    train = load_lewidi(_subset(tmp_path, name, 60), annotators_meta=None)
    test = load_lewidi(_subset(tmp_path, test_name, 15), annotators_meta=None)
    X = train.frame.drop(columns=["label"])
    classes = None if train.multilabel else list(train.classes)
    clf = PerspectivistClassifier(classes=classes, random_state=0)
    clf.fit(X, train.frame["label"])
    X_test = test.frame[X.columns]
    soft, labels = clf.predict_soft_labels(X_test), clf.predict(X_test)
    pe = test.frame[["item", "annotator"]].assign(label=list(labels))
    paths = write_lewidi_submission(tmp_path, test, soft=soft, perspectivist=labels)
    assert paths["soft"].name == f"{test_name}_soft.tsv"
    assert paths["perspectivist"].name == f"{test_name}_pe.tsv"
    read_soft = read_lewidi_submission(paths["soft"], test)
    read_pe = read_lewidi_submission(paths["perspectivist"], test)
    for rounding in (False, True):
        in_memory = lewidi_scores(
            test, soft=soft, perspectivist=pe, official_rounding=rounding
        )
        from_files = lewidi_scores(
            test, soft=read_soft, perspectivist=read_pe, official_rounding=rounding
        )
        assert from_files == in_memory
    # the values written are the values predicted, to the bit
    np.testing.assert_array_equal(
        read_soft.to_numpy(), soft.loc[read_soft.index, list(test.classes)].to_numpy()
    )


def test_multilabel_soft_file_is_nested_pairs_and_flat_is_still_read(tmp_path):
    test = load_lewidi(_subset(tmp_path, "VariErrNLI_dev", 4), annotators_meta=None)
    labels = list(test.classes)
    soft = pd.DataFrame(
        [[0.25, 0.5, 0.75]] * 4, index=test.item_info.index, columns=labels
    )
    path = write_lewidi_submission(tmp_path, test, soft=soft)["soft"]
    first = path.read_text().splitlines()[0].split("\t")[1]
    # the notebook's multilabel_average_MD reads [[1 - p, p], ...]
    assert json.loads(first) == [[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]]
    flat = tmp_path / "flat.tsv"
    flat.write_text("".join(f"{i}\t[0.25, 0.5, 0.75]\n" for i in test.item_info.index))
    pd.testing.assert_frame_equal(
        read_lewidi_submission(flat, test), read_lewidi_submission(path, test)
    )


def test_varierrnli_splits_combined_keep_every_annotation(tmp_path):
    paths = [
        require_data("lewidi", "2025", f"VariErrNLI_{s}.json") for s in ("train", "dev")
    ]
    splits = [load_lewidi(p) for p in paths]
    train_ids = set(map(str, splits[0].item_info.index))
    dev_ids = set(map(str, splits[1].item_info.index))
    assert train_ids & dev_ids == COLLIDING
    # the documented plain concatenation runs into the colliding ids
    plain = pd.concat([s.frame for s in splits], ignore_index=True)
    with pytest.raises(ValueError, match="twice") as err:
        PerspectivistClassifier().fit(plain.drop(columns="label"), plain["label"])
    assert "drop_duplicates" not in str(err.value)
    both = combine_lewidi_splits(splits)
    assert len(both.frame) == sum(len(s.frame) for s in splits)
    assert len(both.annotations) == sum(len(s.annotations) for s in splits)
    assert both.frame.groupby(["item", "annotator"]).size().max() == 1
    assert both.renamed == {f"dev:{i}": i for i in sorted(COLLIDING)}
    # the dev rows of a colliding id are the dev file's, under their new id
    for qualified, original in both.renamed.items():
        rows = both.frame[both.frame["item"] == qualified]
        dev = splits[1].frame[splits[1].frame["item"].astype(str) == original]
        assert rows["label"].tolist() == dev["label"].tolist()
        assert set(both.groups[rows.index]) == {original}
    assert both.groups.tolist() == [
        str(i) for s in splits for i in s.frame["item"].tolist()
    ]


def test_a_repeated_qualified_id_is_refused(tmp_path):
    a = load_lewidi(_subset(tmp_path, "Paraphrase_dev", 3), annotators_meta=None)
    with pytest.raises(ValueError, match="already an item id"):
        combine_lewidi_splits([a, a, a], names=["x", "y", "y"])


def test_perspectivist_labels_must_cover_every_listed_annotator(tmp_path):
    test = load_lewidi(_subset(tmp_path, "Paraphrase_dev", 3), annotators_meta=None)
    table = test.frame[["item", "annotator"]].assign(label=1).iloc[1:]
    with pytest.raises(ValueError, match="no label for"):
        write_lewidi_submission(tmp_path, test, perspectivist=table)
    with pytest.raises(ValueError, match="labels for the 12 rows"):
        write_lewidi_submission(tmp_path, test, perspectivist=[1, 2])
