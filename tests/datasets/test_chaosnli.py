"""load_chaosnli against the official files' own fields."""

import json

import numpy as np
import pytest

from sklearn_hcal.datasets import load_chaosnli
from tests.conftest import require_data

SIZES = {"snli": (1514, 3), "mnli": (1599, 3), "alphanli": (1532, 2)}


@pytest.mark.parametrize("subset", sorted(SIZES))
def test_shapes_and_consistency_with_shipped_fields(subset):
    folder = require_data("chaosnli_v1.0")
    data = load_chaosnli(subset, path=folder)
    assert data.counts.shape == SIZES[subset]
    assert data.counts.dtype == np.int64
    assert np.all(data.counts.sum(axis=1) == 100)
    # the shipped entropy (base 2) is that of the shipped counts
    p = data.counts / data.counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.nansum(np.where(p > 0, p * np.log2(p), 0.0), axis=1)
    np.testing.assert_allclose(h, data.entropy, atol=1e-9)
    # the shipped majority label is the argmax of the counts (ties aside)
    top = data.counts.max(axis=1, keepdims=True)
    winners = data.counts == top
    idx = np.array([list(data.classes).index(m) for m in data.majority_label])
    assert np.all(winners[np.arange(len(idx)), idx])
    assert len(data.uid) == len(data.text) == len(data.old_labels)


def test_first_record_matches_raw_json():
    file = require_data("chaosnli_v1.0", "chaosNLI_snli.jsonl")
    with open(file) as fh:
        raw = json.loads(fh.readline())
    data = load_chaosnli("snli", path=file)
    assert data.uid[0] == raw["uid"]
    assert data.counts[0].tolist() == raw["label_count"]
    assert data.text.iloc[0]["premise"] == raw["example"]["premise"]
    assert data.old_labels[0] == raw["old_labels"]


def test_aliases_and_errors(tmp_path):
    folder = require_data("chaosnli_v1.0")
    assert load_chaosnli("mnli_m", path=folder).subset == "mnli"
    with pytest.raises(ValueError, match="subset must be one of"):
        load_chaosnli("qnli", path=folder)
    with pytest.raises(FileNotFoundError, match="fetch_chaosnli"):
        load_chaosnli("snli", path=tmp_path)
    bad = tmp_path / "chaosNLI_snli.jsonl"
    bad.write_text('{"uid": "a", "label_count": [1, 2, 3]}\nnot json\n')
    with pytest.raises(ValueError, match="line 2 is not valid JSON"):
        load_chaosnli("snli", path=tmp_path)
