"""The official LeWiDi files, as published, with the defaults.

Every file of ``lewidi/`` in the shared data loads with ``load_lewidi(path)``
(the 2025 metadata with its trailing commas included), its counts equal an
independent parse of the JSON (the ``json`` module and plain loops), its
report computes, and the official scores computed by ``hcal evaluate`` equal
the official definitions: POT's ``ot.emd2`` (the LeWiDi 2025 notebook's
Wasserstein distance) and a loop for the Manhattan distance, to 1e-12 (the
official rounding, digit for digit, is ``tests/metrics/test_lewidi_scores.py``).
"""

import json
import re

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.datasets import load_lewidi
from sklearn_hcal.metrics import (
    annotator_report,
    human_calibration_report,
    lewidi_scores,
    manhattan_distance,
    multilabel_manhattan_distance,
    wasserstein_distance,
)

from ..conftest import require_data

FILES = {
    "2023/ArMIS_train.json": [0, 1],
    "2023/HS-Brexit_train.json": [0, 1],
    "2023/MD-Agreement_dev.json": [0, 1],
    "2025/CSC_dev.json": list(range(1, 7)),
    "2025/MP_test.json": [0, 1],
    "2025/Paraphrase_train.json": list(range(-5, 6)),
    "2025/VariErrNLI_train.json": ["contradiction", "entailment", "neutral"],
}
ORDINAL = ["2025/CSC_dev.json", "2025/Paraphrase_train.json"]


def _path(name):
    return require_data("lewidi", *name.split("/"))


def _independent_counts(path):
    """{item: {class (text): count}} with the json module only."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    out = {}
    for item, record in data.items():
        ann = record["annotations"]
        if isinstance(ann, str):  # 2023: "0,1,1"
            labels = [a.strip() for a in ann.split(",")]
        else:  # 2025: {"Ann1": "3"} or {"Ann1": "entailment,neutral"}
            labels = [x.strip() for v in ann.values() for x in str(v).split(",")]
        row = {}
        for label in labels:
            key = (
                str(int(float(label))) if re.fullmatch(r"-?\d+(\.0)?", label) else label
            )
            row[key] = row.get(key, 0) + 1
        out[item] = row
    return out


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_official_file_loads_with_the_defaults(name):
    path = _path(name)
    data = load_lewidi(path)
    # Likert scales leave the loader in numeric order
    assert data.classes.tolist() == FILES[name]
    expected = _independent_counts(path)
    assert data.counts.index.tolist() == list(expected)
    got = {
        item: {str(c): int(n) for c, n in row.items() if n}
        for item, row in data.counts.iterrows()
    }
    assert got == expected
    if name.startswith("2025"):
        assert data.annotators is not None
    # the report on the loaded counts computes (a uniform prediction)
    uniform = np.full(data.counts.shape, 1.0 / data.counts.shape[1])
    if data.multilabel:
        n = data.item_info["n_annotators"].to_numpy()
        value = multilabel_manhattan_distance(
            data.counts.to_numpy() / n[:, None], np.full(data.counts.shape, 0.5)
        )
        assert np.isfinite(value)
    else:
        metrics = ["jsd", "kl", "manhattan"] + (
            ["wasserstein", "rps"] if name in ORDINAL else []
        )
        report = human_calibration_report(
            data.counts, {"uniform": uniform}, metrics=metrics
        )
        assert np.isfinite(report.to_numpy(dtype=float)).all()


def test_paraphrase_and_varierrnli_metadata_with_trailing_commas():
    for name in ("Paraphrase", "VariErrNLI"):
        meta = _path(f"2025/{name}_annotators_meta.json")
        with pytest.raises(json.JSONDecodeError):  # as published: not strict JSON
            json.loads(meta.read_text(encoding="utf-8"))
        data = load_lewidi(_path(f"2025/{name}_train.json"))
        strict = json.loads(re.sub(r",(\s*[}\]])", r"\1", meta.read_text("utf-8")))
        assert sorted(data.annotators.index) == sorted(strict)
        assert data.annotators.loc["Ann1", "Gender"] == strict["Ann1"]["Gender"]


def test_csc_annotators_missing_from_the_metadata_form_an_unknown_group():
    path = _path("2025/CSC_dev.json")
    data = load_lewidi(path)
    with open(_path("2025/CSC_annotators_meta.json"), encoding="utf-8") as f:
        listed = {k.strip() for k in json.load(f)}
    annotators = set(data.annotations["annotator"])
    missing = annotators - listed
    assert len(missing) == 32  # Ann840 .. Ann863 in the published files' subset
    table = data.annotators
    assert set(table.index[~table["in_metadata"]]) == missing
    assert (table.loc[sorted(missing), "Gender"] == "unknown").all()
    # a group report over the loaded table: the unknown group and its size
    pred = data.annotations.assign(label=1)
    report = annotator_report(
        data.annotations, pred, groups=data.annotators, by="Gender"
    )
    assert report.loc["unknown", "n_annotators"] == 32


@pytest.mark.parametrize("name", ORDINAL + ["2025/MP_test.json"])
def test_official_scores_equal_pot_and_the_manhattan_loop(name):
    ot = pytest.importorskip("ot")
    path = _path(name)
    data = load_lewidi(path)
    counts = data.counts.to_numpy(dtype=float)
    truth = counts / counts.sum(axis=1, keepdims=True)
    ordinal = name in ORDINAL
    rng = np.random.default_rng(0)
    pred = rng.dirichlet(np.ones(truth.shape[1]), size=truth.shape[0])
    soft = pd.DataFrame(pred, index=data.counts.index, columns=data.classes)
    k = truth.shape[1]
    cost = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    # the official per-item definitions, one item at a time
    manhattan = np.array(
        [sum(abs(a - b) for a, b in zip(t, p)) for t, p in zip(truth, pred)]
    )
    rows = zip(np.ascontiguousarray(truth), np.ascontiguousarray(pred))
    emd = np.array([ot.emd2(t, p, cost) for t, p in rows])
    got = lewidi_scores(data, soft=soft)
    assert got["manhattan_distance"] == pytest.approx(manhattan.mean(), abs=1e-12)
    # the library's metric on the loaded counts gives the same number
    assert manhattan_distance(data.counts, pred) == pytest.approx(
        manhattan.mean(), abs=1e-12
    )
    if ordinal:
        assert got["wasserstein_distance"] == pytest.approx(emd.mean(), abs=1e-12)
        assert wasserstein_distance(data.counts, pred) == pytest.approx(
            emd.mean(), abs=1e-12
        )
    else:
        assert "wasserstein_distance" not in got


def test_counts_share_is_the_truth_and_the_shipped_soft_labels_stay_beside():
    data = load_lewidi(_path("2023/HS-Brexit_train.json"))
    share = data.counts.div(data.counts.sum(axis=1), axis=0)
    gap = (share - data.soft_labels).abs().max(axis=1)
    # the files round to 2 or 3 decimals: 1/3 shipped as 0.33 or 0.333
    assert np.allclose(data.item_info["soft_label_gap"], gap, atol=1e-15)
    assert 0 < gap.max() < 0.01
    assert isinstance(data.soft_labels, pd.DataFrame)


@pytest.mark.parametrize("name", ["2025/VariErrNLI_train.json"])
def test_wide_annotations_and_frame_tuples_are_the_same_annotations(name):
    # Both multi-label encodings come from one long table: each (item,
    # annotator) 0/1 row of ``annotations`` marks exactly the labels of the
    # frame's tuple, and both equal the file's own comma-separated sets.
    path = _path(name)
    data = load_lewidi(path)
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    shipped = {
        (item, who.strip()): {x.strip() for x in str(v).split(",") if x.strip()}
        for item, record in raw.items()
        for who, v in record["annotations"].items()
    }
    labels = data.classes.tolist()
    wide = {
        (item, who): {lab for lab, on in zip(labels, row) if on}
        for item, who, *row in data.annotations.itertuples(index=False)
    }
    annotated = data.frame[data.frame["label"].notna()]
    tuples = {
        (item, who): label
        for item, who, label in annotated[["item", "annotator", "label"]].itertuples(
            index=False
        )
    }
    assert wide == shipped
    assert {key: set(t) for key, t in tuples.items()} == shipped
    # a tuple lists its labels once each, in the order of ``classes``
    assert all(list(t) == sorted(t, key=labels.index) for t in tuples.values())
