"""Regressions found by reviewing the displays and the data sets as a new user.

Each test recomputes the expected numbers independently (numpy, closed forms)
and compares them with what a display stores or a loader returns.
"""

import json

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sklearn_hcal.datasets import (  # noqa: E402
    load_chaosnli,
    load_lewidi,
    make_label_histograms,
)
from sklearn_hcal.datasets._chaosnli import read_chaosnli_predictions  # noqa: E402
from sklearn_hcal.plotting import (  # noqa: E402
    HumanModelMarginalDisplay,
    InstanceErrorDisplay,
)


def _uniform_model(n_classes, n_items=20):
    # One-hot humans, a uniform model: EntCE = log K exactly in theory.
    Y = np.zeros((n_items, n_classes))
    Y[np.arange(n_items), np.arange(n_items) % n_classes] = 10
    return Y, np.full((n_items, n_classes), 1.0 / n_classes)


@pytest.mark.parametrize("n_classes", [5, 12])
@pytest.mark.parametrize("kind", ["ent_ce", "abs_ent_ce"])
def test_instance_error_uniform_model_counted_in_last_bin(n_classes, kind):
    # H(uniform) computes to a few ulps above log K for K = 5, 12; the item
    # used to fall outside the histogram's last edge and the display showed
    # an empty histogram (fractions summing to 0).
    Y, P = _uniform_model(n_classes)
    disp = InstanceErrorDisplay.from_predictions(Y, {"uniform": P}, kind=kind)
    fractions = disp.fractions()["uniform"]
    assert fractions.sum() == pytest.approx(1.0)
    assert fractions[-1] == pytest.approx(1.0)
    np.testing.assert_allclose(disp.errors["uniform"], np.log(n_classes))
    plt.close(disp.figure_)


@pytest.mark.parametrize("view", ["marginal", "absolute_error", "error"])
def test_marginal_display_uniform_entropy_counted(view):
    n_classes = 5
    Y, P = _uniform_model(n_classes)
    disp = HumanModelMarginalDisplay.from_predictions(Y, {"uniform": P}, view=view)
    key = ("entropy", 0)
    counted = np.histogram(disp.panels[key]["uniform"], bins=disp.bin_edges[key])[0]
    assert counted.sum() == len(Y)
    plt.close(disp.figure_)


def test_marginal_display_uniform_humans_counted():
    # The humans' entropy, too: five votes spread over five classes.
    n_classes = 5
    Y = np.full((4, n_classes), 2)
    P = np.tile(np.eye(n_classes)[0] * 0.6 + 0.08, (4, 1))
    disp = HumanModelMarginalDisplay.from_predictions(Y, P)
    key = ("entropy", 0)
    human = disp.panels[key]["Human"]
    assert np.histogram(human, bins=disp.bin_edges[key])[0].sum() == 4
    plt.close(disp.figure_)


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
