"""``lewidi_scores`` against the LeWiDi 2025 notebook, digit for digit.

The notebook's functions are written again in ``_lewidi_notebook.py``.
Submissions are drawn as participants write them (2 to 7 decimals, rows
summing to 1 in decimal) on subsets of 16 and 40 items, whose means fall
on exact 5-decimal ties often (a 2-decimal Paraphrase submission over 40
items: one in four), where the order of the additions and the per-item
``ot.emd2`` values decide the printed last digit. ``official_rounding=True``
must give the notebook's number exactly, from Python and from ``hcal
evaluate``.
"""

from __future__ import annotations

import json
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.cli import main
from sklearn_hcal.datasets import load_lewidi
from sklearn_hcal.metrics import lewidi_scores

from ..conftest import require_data
from . import _lewidi_notebook as nb

SIZES = (16, 40)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``{(name, n_items): (path, records, test)}`` of subsets of the files."""
    folder = tmp_path_factory.mktemp("lewidi")
    out = {}
    for name in ("Paraphrase_dev", "CSC_dev", "MP_test", "VariErrNLI_dev"):
        src = require_data("lewidi", "2025", f"{name}.json")
        for n in SIZES:
            path = folder / f"{name}_{n}.json"
            records = nb.subset(src, path, n)
            with warnings.catch_warnings():
                # subsets of files whose soft labels are rounded: warned, read
                warnings.simplefilter("ignore")
                test = load_lewidi(path, annotators_meta=None)
            out[name, n] = (path, records, test)
    return out


def _is_tie(values) -> bool:
    """Whether the exact mean of the values, read as the decimals they print
    as, sits on a 5-decimal tie."""
    mean = sum(Fraction(repr(v)) for v in values) / len(values)
    return (mean * 10**5 - Fraction(1, 2)).denominator == 1


def _cli(tmp_path, capsys, truth, lines, *extra):
    pred = tmp_path / "pred.tsv"
    pred.write_text("".join(lines), encoding="utf-8")
    status = main(
        ["evaluate", str(truth), "--pred", f"m={pred}", "--format", "json"]
        + ["--official-rounding", *extra]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)["m"]


def soft_case(rng, files, name, decimals):
    """One soft submission: ``(test, truth path, lines, soft, expected, ties)``."""
    n = SIZES[rng.integers(len(SIZES))]
    path, records, test = files[name, n]
    ids = list(records)
    classes = [str(c) for c in test.classes]
    if test.multilabel:
        targets = [
            [[records[i]["soft_label"][lab][k] for k in ("0", "1")] for lab in classes]
            for i in ids
        ]
        texts, pairs = nb.decimal_probabilities(rng, n, len(classes), decimals)
        soft = pd.DataFrame(
            [[pair[1] for pair in row] for row in pairs], index=ids, columns=classes
        )
        lines = [
            f"{i}\t[{', '.join(f'[{a}, {b}]' for a, b in row)}]\n"
            for i, row in zip(ids, texts)
        ]
        expected = {
            "multilabel_manhattan_distance": nb.multilabel_average_md(targets, pairs)
        }
        return path, test, lines, soft, expected, False
    targets = [
        [records[i]["soft_label"][k] for k in records[i]["soft_label"]] for i in ids
    ]
    texts, values = nb.decimal_rows(rng, n, len(classes), decimals)
    soft = pd.DataFrame(values, index=ids, columns=list(test.classes))
    lines = [f"{i}\t[{', '.join(row)}]\n" for i, row in zip(ids, texts)]
    expected = {"manhattan_distance": nb.average_md(targets, values)}
    per_item = [sum(abs(p - t) for p, t in zip(v, t)) for v, t in zip(values, targets)]
    tie = _is_tie([round(d, 5) for d in per_item])
    if len(classes) > 2:
        expected["wasserstein_distance"] = nb.average_ws(targets, values)
    return path, test, lines, soft, expected, tie


NAMES = ("Paraphrase_dev", "CSC_dev", "MP_test", "VariErrNLI_dev")


def _soft_differences(files, n_submissions, seed, tmp_path=None, capsys=None):
    rng = np.random.default_rng(seed)
    differ, ties, cli_checked = [], 0, 0
    for k in range(n_submissions):
        name = NAMES[k % len(NAMES)]
        decimals = int(rng.integers(2, 8))
        path, test, lines, soft, expected, tie = soft_case(rng, files, name, decimals)
        ties += tie
        got = lewidi_scores(test, soft=soft, official_rounding=True)
        if got != expected:
            differ.append((name, decimals, got, expected))
        if capsys is not None:
            cli = _cli(tmp_path, capsys, path, lines)
            cli_checked += 1
            if cli != expected:
                differ.append(("cli", name, decimals, cli, expected))
    return differ, ties, cli_checked


def test_soft_track_last_digits_are_the_notebooks_at_ties(files, tmp_path, capsys):
    pytest.importorskip("ot")
    differ, ties, checked = _soft_differences(files, 120, 0, tmp_path, capsys)
    assert differ == []
    assert checked == 120
    assert ties >= 10  # the draw does reach exact ties


@pytest.mark.slow
def test_soft_track_on_thousands_of_submissions(files, tmp_path, capsys):
    # the acceptance run: 1,000 submissions per data set and metric
    pytest.importorskip("ot")
    differ, ties, _ = _soft_differences(files, 4000, 1, tmp_path, capsys)
    assert differ == []
    assert ties >= 100


def _perspectivist_case(rng, files, name):
    n = SIZES[rng.integers(len(SIZES))]
    path, records, test = files[name, n]
    ids = list(records)
    classes = [str(c) for c in test.classes]
    rows, targets, predictions = [], [], []
    for i in ids:
        who = nb.annotators(records[i])
        given = [records[i]["annotations"][a] for a in who]
        if test.multilabel:
            chosen = [
                tuple(lab for lab in classes if rng.random() < 0.4) or ("neutral",)
                for _ in who
            ]
            truth_sets = [set(g.split(",")) for g in given]
            targets.append([[int(lab in s) for s in truth_sets] for lab in classes])
            predictions.append([[int(lab in c) for c in chosen] for lab in classes])
        else:
            chosen = [classes[j] for j in rng.integers(0, len(classes), len(who))]
            targets.append([int(g) for g in given])
            predictions.append([int(c) for c in chosen])
        rows += [(i, a, c) for a, c in zip(who, chosen)]
    pred = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    if test.multilabel:
        expected = {
            "perspectivist_error_rate": nb.multilabel_error_rate(targets, predictions)
        }
    else:
        expected = {
            "perspectivist_error_rate": nb.error_rate(
                [[1] * len(t) for t in targets],
                [
                    [int(a == b) for a, b in zip(t, p)]
                    for t, p in zip(targets, predictions)
                ],
            )
        }
        if len(classes) > 2:
            expected["perspectivist_absolute_distance"] = nb.mean_absolute_distance(
                targets, predictions, len(classes)
            )
    return path, test, pred, expected


@pytest.mark.parametrize(
    "n_submissions", [80, pytest.param(4000, marks=pytest.mark.slow)]
)
def test_perspectivist_track_is_the_notebooks_bit_for_bit(files, n_submissions):
    rng = np.random.default_rng(2)
    differ = []
    for k in range(n_submissions):
        name = NAMES[k % len(NAMES)]
        _, test, pred, expected = _perspectivist_case(rng, files, name)
        got = lewidi_scores(test, perspectivist=pred, official_rounding=True)
        if got != expected:
            differ.append((name, got, expected))
    assert differ == []


def test_python_and_the_command_line_agree_bit_for_bit(files, tmp_path, capsys):
    rng = np.random.default_rng(3)
    for name in NAMES:
        path, test, pred, _ = _perspectivist_case(rng, files, name)
        lines = [
            f"{item}\t{json.dumps(list(group['label'].map(_json_label)))}\n"
            for item, group in pred.groupby("item", sort=False)
        ]
        got = _cli(tmp_path, capsys, path, lines, "--track", "perspectivist")
        assert got == lewidi_scores(test, perspectivist=pred, official_rounding=True)
        path, test, lines, soft, _, _ = soft_case(rng, files, name, 3)
        for rounding in (True, False):
            pred_file = tmp_path / "p.tsv"
            pred_file.write_text("".join(lines), encoding="utf-8")
            args = ["evaluate", str(path), "--pred", f"m={pred_file}"]
            args += ["--format", "json", *(["--official-rounding"] if rounding else [])]
            assert main(args) == 0
            cli = json.loads(capsys.readouterr().out)["m"]
            assert cli == lewidi_scores(test, soft=soft, official_rounding=rounding)


def _json_label(value):
    return list(value) if isinstance(value, tuple) else int(value)


# --------------------------------------------------------------------------- #
# multi-label label sets, gold rows off 1, the closed form
# --------------------------------------------------------------------------- #
def _multilabel_truth():
    from sklearn_hcal.metrics._shared import lewidi_truth

    # item 1: A chose {a}, B chose {a, b}; item 2: A chose {c}
    target = [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    truth = lewidi_truth(
        ["1", "1", "2"],
        ["A", "B", "A"],
        target,
        classes=["a", "b", "c"],
        multilabel=True,
    )
    pred = pd.DataFrame(
        {
            "item": ["1", "1", "2"],
            "annotator": ["A", "B", "A"],
            "label": [("a", "b"), ("b",), ("c",)],
        }
    )
    return truth, pred


def test_multilabel_error_rate_of_label_tuples_by_hand():
    truth, pred = _multilabel_truth()
    # item 1, per label over its two annotators: a 1/2 (B missed it), b 1/2
    # (A added it), c 0 -> 1/3; item 2: 0. The mean over items: 1/6 (the
    # exact-set error would be (2/2 + 0) / 2 = 1/2)
    got = lewidi_scores(truth, perspectivist=pred)
    assert got["perspectivist_error_rate"] == pytest.approx(1 / 6, abs=1e-15)
    official = lewidi_scores(truth, perspectivist=pred, official_rounding=True)
    # each label's rate rounded to 5 decimals, nothing else
    assert official["perspectivist_error_rate"] == pytest.approx(1 / 6, abs=1e-15)


def test_perspectivist_error_rate_refuses_label_tuples_and_names_the_way():
    from sklearn_hcal.metrics import perspectivist_error_rate

    truth, pred = _multilabel_truth()
    sets = truth.annotations[["item", "annotator"]].assign(
        label=[("a",), ("a", "b"), ("c",)]
    )
    with pytest.raises(ValueError, match="exact-set error") as err:
        perspectivist_error_rate(sets, pred)
    assert "lewidi_scores" in str(err.value) and "label=[" in str(err.value)


def test_gold_soft_labels_off_one_are_warned_and_normalised(tmp_path):
    pytest.importorskip("ot")
    records = {
        "1": {
            "annotators": "A,B,C",
            "annotations": {"A": "1", "B": "2", "C": "3"},
            "soft_label": {"1": 0.33, "2": 0.33, "3": 0.33},
            "text": "t",
        },
        "2": {
            "annotators": "A,B",
            "annotations": {"A": "1", "B": "1"},
            "soft_label": {"1": 1.0, "2": 0.0, "3": 0.0},
            "text": "u",
        },
    }
    path = tmp_path / "toy_test.json"
    path.write_text(json.dumps(records))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the soft label is not the share
        test = load_lewidi(path, annotators_meta=None)
    soft = pd.DataFrame(
        [[0.2, 0.3, 0.5], [0.5, 0.25, 0.25]], index=["1", "2"], columns=[1, 2, 3]
    )
    with pytest.warns(UserWarning, match=r"of 1 of 2 items do not sum to 1") as rec:
        got = lewidi_scores(test, soft=soft, official_rounding=True)
    assert "ot.emd2 cannot score them" in str(rec[0].message)
    # the decision: against the soft label divided by its sum
    targets = [[1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0]]
    assert got["wasserstein_distance"] == nb.average_ws(
        targets, soft.to_numpy().tolist()
    )
    # the Manhattan distance is the notebook's on the rows as shipped
    shipped = [[0.33, 0.33, 0.33], [1.0, 0.0, 0.0]]
    assert got["manhattan_distance"] == nb.average_md(shipped, soft.to_numpy().tolist())


def test_without_pot_the_closed_form_gives_the_same_distances(files, monkeypatch):
    pytest.importorskip("ot")
    _, records, test = files["CSC_dev", 40]
    rng = np.random.default_rng(7)
    values = rng.dirichlet(np.ones(6), size=40)
    soft = pd.DataFrame(values, index=list(records), columns=list(test.classes))
    with_pot = lewidi_scores(test, soft=soft, official_rounding=True)
    plain = lewidi_scores(test, soft=soft)
    monkeypatch.setitem(__import__("sys").modules, "ot", None)  # not installed
    without = lewidi_scores(test, soft=soft, official_rounding=True)
    assert without == with_pot
    assert without["wasserstein_distance"] == round(plain["wasserstein_distance"], 5)


def test_the_ordinal_rule_is_one_rule():
    from sklearn_hcal.metrics._shared import is_ordinal_scale
    from sklearn_hcal.perspectivist._input import resolve_scale

    for classes in (
        [1, 2, 3],
        [0, 1],
        [-5, 0, 5],
        ["a", "b", "c"],
        [1.0, 2.5, 4.0],
        np.array([1, 2, 3]),
        [True, False, True],
    ):
        assert resolve_scale(classes, False, "auto", "auto")[0] == is_ordinal_scale(
            classes
        )


def _ordinal_truth(tmp_path):
    """Items 7 and 8 of a 1..3 scale, annotated by A and B."""
    given = {"7": ["1", "3"], "8": ["2", "2"]}
    records = {
        item: {
            "annotators": "A,B",
            "annotations": dict(zip("AB", labels)),
            "soft_label": {c: labels.count(c) / 2 for c in "123"},
            "text": "t",
        }
        for item, labels in given.items()
    }
    path = tmp_path / "toy_dev.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    truth = load_lewidi(path)
    pred = truth.annotations[["item", "annotator", "label"]].astype(object)
    return truth, pred


@pytest.mark.parametrize(
    ("row", "col", "value", "match"),
    [
        # was "(first at index 1)": neither the item nor the annotator
        (1, 2, np.nan, r"row 1 \(index 1; item '7', annotator 'B'\), whose 'label'"),
        # was "the label np.float64(9.0) is not on the scale"
        (3, 2, 9, r"item '8', annotator 'B': the label 9\.0 is not on the scale"),
        # a renamed annotator: the lost pair and the pair nobody annotated
        (2, 1, "Z", r"e\.g\. \[\('8', 'A'\)\].* nobody annotated, e\.g\. \('8', 'Z'\)"),
    ],
    ids=["nan", "off_scale", "unknown_annotator"],
)
def test_a_bad_perspectivist_row_names_its_item_and_annotator(
    tmp_path, row, col, value, match
):
    truth, pred = _ordinal_truth(tmp_path)
    pred.iloc[row, col] = value
    with pytest.raises(ValueError, match=match):
        lewidi_scores(truth, perspectivist=pred)
