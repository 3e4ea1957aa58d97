"""``hcal evaluate`` with a LeWiDi file as the truth: the official scores.

Prediction files keyed by item id (JSON, TSV, CSV; per-annotator JSON and
TSV) are written here from seeded random predictions; the printed values are
checked against POT's ``ot.emd2`` (the LeWiDi 2025 notebook's Wasserstein
distance), plain loops and the library's public metrics on the loaded data.
"""

import json

import numpy as np
import pytest

from sklearn_hcal.cli import main
from sklearn_hcal.datasets import load_lewidi
from sklearn_hcal.metrics import (
    manhattan_distance,
    multilabel_manhattan_distance,
    perspectivist_absolute_distance,
    perspectivist_error_rate,
    soft_cross_entropy,
    wasserstein_distance,
)

from ..conftest import require_data


def _run(capsys, *argv):
    status = main(["evaluate", *map(str, argv), "--format", "json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)


def _error(capsys, *argv):
    status = main(["evaluate", *map(str, argv)])
    err = capsys.readouterr().err
    assert status == 2, err
    return err


def _soft_predictions(data, seed=0):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(len(data.classes)), size=len(data.item_info))


def _write_json(path, ids, classes, P):
    rows = {
        i: {str(c): float(p) for c, p in zip(classes, row)} for i, row in zip(ids, P)
    }
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_csc_soft_track_equals_pot_and_rounds_like_the_scorer(tmp_path, capsys):
    ot = pytest.importorskip("ot")
    truth_file = require_data("lewidi", "2025", "CSC_dev.json")
    data = load_lewidi(truth_file)
    ids = data.item_info.index.tolist()
    P = _soft_predictions(data)
    pred = _write_json(tmp_path / "pred.json", ids, data.classes, P)
    # the official submission layout: id <TAB> [p1, ..., p6]
    tsv = tmp_path / "pred.tsv"
    tsv.write_text("".join(f"{i}\t{list(map(float, r))}\n" for i, r in zip(ids, P)))
    truth = data.counts.to_numpy(float)
    truth = truth / truth.sum(axis=1, keepdims=True)
    cost = np.abs(np.subtract.outer(np.arange(6), np.arange(6))).astype(float)
    emd = np.array([ot.emd2(t.copy(), p.copy(), cost) for t, p in zip(truth, P)])
    man = np.abs(truth - P).sum(axis=1)

    got = _run(capsys, truth_file, "--pred", f"j={pred}", "--pred", f"t={tsv}")
    for name in ("j", "t"):
        assert got[name]["wasserstein_distance"] == pytest.approx(emd.mean(), abs=1e-12)
        assert got[name]["manhattan_distance"] == pytest.approx(man.mean(), abs=1e-12)
    rounded = _run(capsys, truth_file, "--pred", f"j={pred}", "--official-rounding")
    assert rounded["j"] == {
        "manhattan_distance": round(float(np.mean(np.round(man, 5))), 5),
        # average_WS rounds only the mean (tests/cli/test_lewidi_official_rounding)
        "wasserstein_distance": round(float(np.mean(emd)), 5),
    }


def test_2023_file_scores_soft_cross_entropy_from_a_csv(tmp_path, capsys):
    truth_file = require_data("lewidi", "2023", "HS-Brexit_train.json")
    data = load_lewidi(truth_file)
    P = _soft_predictions(data, seed=1)
    csv = tmp_path / "pred.csv"
    lines = ["id,0,1"] + [
        f"{i},{float(a)!r},{float(b)!r}" for i, (a, b) in zip(data.counts.index, P)
    ]
    csv.write_text("\n".join(lines) + "\n")
    got = _run(capsys, truth_file, "--pred", f"m={csv}")["m"]
    assert set(got) == {"manhattan_distance", "soft_cross_entropy"}
    assert got["soft_cross_entropy"] == pytest.approx(
        soft_cross_entropy(data.counts, P), rel=1e-12
    )


def test_varierrnli_multilabel_soft_track(tmp_path, capsys):
    truth_file = require_data("lewidi", "2025", "VariErrNLI_train.json")
    data = load_lewidi(truth_file)
    rng = np.random.default_rng(2)
    Q = rng.uniform(size=data.counts.shape)
    pred = _write_json(tmp_path / "pred.json", data.counts.index, data.classes, Q)
    got = _run(capsys, truth_file, "--pred", f"m={pred}")["m"]
    n = data.item_info["n_annotators"].to_numpy()
    T = data.counts.to_numpy() / n[:, None]
    assert got == {
        "multilabel_manhattan_distance": pytest.approx(
            multilabel_manhattan_distance(T, Q), rel=1e-12
        )
    }
    # the official definition: per label |t - q| + |(1 - t) - (1 - q)|, mean
    loop = np.mean(
        [np.mean([2 * abs(t - q) for t, q in zip(a, b)]) for a, b in zip(T, Q)]
    )
    assert got["multilabel_manhattan_distance"] == pytest.approx(loop, abs=1e-12)


def test_perspectivist_track_on_csc_and_mp(tmp_path, capsys):
    rng = np.random.default_rng(3)
    csc = require_data("lewidi", "2025", "CSC_dev.json")
    data = load_lewidi(csc, annotators_meta=None)
    pred = data.annotations.assign(label=rng.integers(1, 7, len(data.annotations)))
    rows = {}
    for item, who, label in pred[["item", "annotator", "label"]].itertuples(
        index=False
    ):
        rows.setdefault(item, {})[who] = str(label)
    path = tmp_path / "persp.json"
    path.write_text(json.dumps(rows))
    got = _run(capsys, csc, "--pred", f"m={path}", "--track", "perspectivist")["m"]
    assert got["perspectivist_error_rate"] == pytest.approx(
        perspectivist_error_rate(data.annotations, pred), abs=1e-12
    )
    assert got["perspectivist_absolute_distance"] == pytest.approx(
        perspectivist_absolute_distance(data.annotations, pred, order=range(1, 7)),
        abs=1e-12,
    )
    # MP: binary, the TSV layout lists the labels in the item's annotator order
    mp = require_data("lewidi", "2025", "MP_test.json")
    data = load_lewidi(mp, annotators_meta=None)
    pred = data.annotations.assign(label=rng.integers(0, 2, len(data.annotations)))
    lists = pred.groupby("item", sort=False)["label"].agg(list)
    tsv = tmp_path / "persp.tsv"
    tsv.write_text("".join(f"{i}\t{v}\n" for i, v in lists.items()))
    got = _run(capsys, mp, "--pred", f"m={tsv}", "--track", "perspectivist")["m"]
    assert got == {
        "perspectivist_error_rate": pytest.approx(
            perspectivist_error_rate(data.annotations, pred), abs=1e-12
        )
    }


def test_the_track_follows_the_official_file_names(tmp_path, capsys):
    # hcal lewidi writes X_pe.tsv beside X_soft.tsv: without --track, the
    # per-annotator file was read as soft labels and refused as malformed
    mp = require_data("lewidi", "2025", "MP_test.json")
    data = load_lewidi(mp, annotators_meta=None)
    rng = np.random.default_rng(5)
    pred = data.annotations.assign(label=rng.integers(0, 2, len(data.annotations)))
    lists = pred.groupby("item", sort=False)["label"].agg(list)
    pe = tmp_path / "MP_test_pe.tsv"
    pe.write_text("".join(f"{i}\t{v}\n" for i, v in lists.items()))
    by_name = _run(capsys, mp, "--pred", f"m={pe}")["m"]
    assert (
        by_name
        == _run(capsys, mp, "--pred", f"m={pe}", "--track", "perspectivist")["m"]
    )
    assert by_name["perspectivist_error_rate"] == pytest.approx(
        perspectivist_error_rate(data.annotations, pred), abs=1e-12
    )
    # one run scores one track: files of both are refused, each named
    soft = tmp_path / "MP_test_soft.tsv"
    soft.write_text("".join(f"{i}\t[0.5, 0.5]\n" for i in lists.index))
    err = _error(capsys, mp, "--pred", f"a={pe}", "--pred", f"b={soft}")
    assert "files of both tracks" in err and "MP_test_soft.tsv (soft)" in err


def test_lewidi_truth_errors_name_the_item(tmp_path, capsys):
    truth_file = require_data("lewidi", "2025", "CSC_dev.json")
    data = load_lewidi(truth_file, annotators_meta=None)
    ids = data.item_info.index.tolist()
    P = _soft_predictions(data)
    pred = _write_json(tmp_path / "p.json", ids[1:], data.classes, P[1:])
    assert f"item {ids[0]!r}" in _error(capsys, truth_file, "--pred", pred)
    P[3] = [0.5] * 6
    pred = _write_json(tmp_path / "p.json", ids, data.classes, P)
    assert f"item {ids[3]!r}" in _error(capsys, truth_file, "--pred", pred)
    assert "--order" in _error(
        capsys, truth_file, "--pred", pred, "--order", "1,2,3,4,5"
    )
    assert "--metrics" in _error(capsys, truth_file, "--pred", pred, "--metrics", "jsd")


def test_order_on_a_lewidi_truth_reorders_the_scale(tmp_path, capsys):
    truth_file = require_data("lewidi", "2025", "CSC_dev.json")
    data = load_lewidi(truth_file, annotators_meta=None)
    P = _soft_predictions(data, seed=4)
    pred = _write_json(tmp_path / "p.json", data.item_info.index, data.classes, P)
    plain = _run(capsys, truth_file, "--pred", pred)
    reversed_ = _run(capsys, truth_file, "--pred", pred, "--order", "6,5,4,3,2,1")
    # the Wasserstein distance is invariant when the scale is reversed
    assert reversed_["p"]["wasserstein_distance"] == pytest.approx(
        plain["p"]["wasserstein_distance"], rel=1e-12
    )
    shuffled = _run(capsys, truth_file, "--pred", pred, "--order", "2,1,3,4,5,6")
    assert shuffled["p"]["wasserstein_distance"] != pytest.approx(
        plain["p"]["wasserstein_distance"]
    )


def test_python_and_the_command_line_give_the_same_numbers(tmp_path, capsys):
    # rows rounded to 4 decimals miss 1 by up to 3e-4: within the tolerance
    # both accept, and both must divide them by their sums (the command
    # line used to score them as written: 6e-9 apart)
    truth_file = require_data("lewidi", "2025", "CSC_dev.json")
    data = load_lewidi(truth_file, annotators_meta=None)
    P = np.round(_soft_predictions(data, seed=7), 4)
    assert np.abs(P.sum(axis=1) - 1).max() > 1e-5
    pred = _write_json(tmp_path / "p.json", data.item_info.index, data.classes, P)
    got = _run(capsys, truth_file, "--pred", pred)["p"]
    assert got["manhattan_distance"] == pytest.approx(
        manhattan_distance(data.counts, P), abs=1e-15
    )
    assert got["wasserstein_distance"] == pytest.approx(
        wasserstein_distance(data.counts, P), abs=1e-15
    )
