"""Data-set parsers and generators on malformed or extreme input.

Repeated ids and annotators, bad counts and empty labels must raise naming the
file and the record; a tiny Dirichlet concentration must keep the mean.
"""

import json

import numpy as np
import pytest

from sklearn_hcal.datasets import (
    load_chaosnli,
    load_lewidi,
    make_label_histograms,
)
from sklearn_hcal.datasets._chaosnli import read_chaosnli_predictions


def _lewidi_record(annotations, soft, annotators="Ann1,Ann2"):
    return {
        "text": "t",
        "annotators": annotators,
        "annotations": annotations,
        "soft_label": soft,
        "split": "dev",
        "lang": "en",
    }


def test_lewidi_repeated_item_id_raises(tmp_path):
    # json.load keeps the last of two "1" records: item 1's first two
    # annotations vanished without a word.
    first = json.dumps(_lewidi_record("1,0", {"0": 0.5, "1": 0.5}))
    second = json.dumps(_lewidi_record("1,1", {"0": 0.0, "1": 1.0}))
    path = tmp_path / "X_dev.json"
    path.write_text(f'{{"1": {first}, "2": {second}, "1": {second}}}')
    with pytest.raises(ValueError, match=r"X_dev\.json repeats the key '1'"):
        load_lewidi(path)


def test_lewidi_repeated_annotator_raises(tmp_path):
    record = '{"soft_label": {"a": 1.0}, "annotations": {"Ann1": "a", "Ann1": "a"}}'
    path = tmp_path / "Y_dev.json"
    path.write_text(f'{{"7": {record}}}')
    with pytest.raises(ValueError, match="repeats the key 'Ann1'"):
        load_lewidi(path)


@pytest.mark.parametrize(
    "record, message",
    [
        (
            _lewidi_record("1,0", {"0": 0.5, "1": 0.5}, "Ann1,Ann2,Ann3"),
            "Item '3': 2 annotations but 3 annotators",
        ),
        (
            _lewidi_record("1,0", {"0": 0.5, "1": "half"}),
            "Item '3': soft_label holds 'half'",
        ),
    ],
)
def test_lewidi_record_errors_name_file_and_item(tmp_path, record, message):
    path = tmp_path / "Z_train.json"
    path.write_text(json.dumps({"3": record}))
    with pytest.raises(ValueError, match=f"Z_train\\.json: {message}"):
        load_lewidi(path)


def _chaosnli_folder(tmp_path, lines):
    (tmp_path / "chaosNLI_snli.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_chaosnli_repeated_uid_raises(tmp_path):
    # Used to load as two rows of one item, the text indexed by a repeated uid.
    folder = _chaosnli_folder(
        tmp_path,
        [
            '{"uid": "a", "label_count": [3, 1, 0]}',
            '{"uid": "b", "label_count": [1, 1, 2]}',
            '{"uid": "a", "label_count": [0, 4, 0]}',
        ],
    )
    with pytest.raises(ValueError, match="line 3 repeats uid 'a' of line 1"):
        load_chaosnli("snli", path=folder)


@pytest.mark.parametrize("row", ["[3, -1, 0]", "[0.5, 0.5, 0]"])
def test_chaosnli_bad_counts_name_the_line(tmp_path, row):
    # A negative count loaded silently; a fractional one named no line.
    folder = _chaosnli_folder(
        tmp_path,
        [
            '{"uid": "a", "label_count": [3, 1, 0]}',
            f'{{"uid": "b", "label_count": {row}}}',
        ],
    )
    with pytest.raises(ValueError, match=r"line 2 \(uid 'b'\): label_count must hold"):
        load_chaosnli("snli", path=folder)


def test_chaosnli_predictions_repeated_uid_raises(tmp_path):
    path = tmp_path / "pred.json"
    record = '{"predicted_probabilities": [0.5, 0.5, 0.0]}'
    path.write_text(f'{{"m": {{"u1": {record}, "u2": {record}, "u1": {record}}}}}')
    with pytest.raises(ValueError, match="repeats the key 'u1'"):
        read_chaosnli_predictions(path)


def test_make_label_histograms_tiny_concentration_keeps_the_mean():
    # Q ~ Dir(α0 · softmax(z)) has E[Q] = softmax(z) for every α0. With a tiny
    # α0 all gamma draws underflow and the one-hot fallback always took the
    # top class: E[Q_top] was ~1 instead of mean softmax_top ~0.74.
    X, Y, Q = make_label_histograms(
        20000, n_classes=3, n_annotations=4, concentration=1e-4, random_state=0
    )
    S = np.exp(X - X.max(axis=1, keepdims=True))
    S /= S.sum(axis=1, keepdims=True)
    top = np.argmax(S, axis=1)
    rows = np.arange(len(S))
    expected = S[rows, top].mean()
    # Q_top is (nearly) Bernoulli(S_top): standard error below 0.0035.
    assert Q[rows, top].mean() == pytest.approx(expected, abs=0.015)
    # The histograms follow Q: E[Y / n] = E[Q].
    assert (Y[rows, top] / 4).mean() == pytest.approx(expected, abs=0.015)


@pytest.mark.parametrize(
    "annotations, who",
    [("1,,0", "Ann2"), ({"Ann1": "1", "Ann7": None}, "Ann7"), ({"Ann1": " "}, "Ann1")],
)
def test_lewidi_empty_label_raises(tmp_path, annotations, who):
    # "1,,0" used to load with a class named "" (and None with one named
    # "None"), breaking the numeric order of the classes.
    record = _lewidi_record(annotations, None, "Ann1,Ann2,Ann3")
    del record["soft_label"]
    path = tmp_path / "E_test.json"
    path.write_text(json.dumps({"5": record}))
    with pytest.raises(
        ValueError, match=f"E_test\\.json: Item '5': annotator '{who}' has an empty"
    ):
        load_lewidi(path)
