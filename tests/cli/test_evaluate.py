"""``hcal evaluate``: file formats, uid matching, output formats, errors.

Numbers are checked against the metric functions (and scipy) on arrays built
here independently of :mod:`sklearn_hcal.cli._files`, and against ChaosNLI's Table 5
chance row.
"""

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.special import softmax

from sklearn_hcal.cli import main
from sklearn_hcal.metrics import (
    jensen_shannon_distance,
    kl_divergence,
    majority_accuracy_score,
)
from sklearn_hcal.metrics._registry import default_columns, get_metric
from tests.conftest import require_data

HCAL = Path(sys.executable).with_name("hcal")
NLI_NAMES = ["entailment", "neutral", "contradiction"]


def _evaluate(capsys, *argv):
    status = main(["evaluate", *map(str, argv)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def _json(capsys, *argv):
    return json.loads(_evaluate(capsys, *argv, "--format", "json"))


def _error(capsys, *argv, needles=()):
    status = main(["evaluate", *map(str, argv)])
    err = capsys.readouterr().err
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hcal: error: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _load_snli():
    """uid-matched (Y, P) built with the json module only."""
    counts = require_data("chaosnli_v1.0", "chaosNLI_snli.jsonl")
    preds = require_data("chaosnli_prediction_samples", "snli_random_baseline.json")
    with open(counts, encoding="utf-8") as f:
        items = [json.loads(line) for line in f if line.strip()]
    with open(preds, encoding="utf-8") as f:
        records = json.load(f)["random_baseline"]
    Y = np.array([it["label_count"] for it in items], dtype=float)
    P = np.array([records[it["uid"]]["predicted_probabilities"] for it in items])
    return counts, preds, items, records, Y, P


@pytest.fixture
def synthetic(tmp_path):
    rng = np.random.RandomState(0)
    n, K = 40, 3
    Y = rng.multinomial(7, [0.5, 0.3, 0.2], size=n)
    Z = rng.normal(size=(n, K))
    P = softmax(Z, axis=1)
    ids = np.array([f"item{i}" for i in range(n)])
    return tmp_path, Y, Z, P, ids


# --------------------------------------------------------------------------- #
# ChaosNLI
# --------------------------------------------------------------------------- #
def test_chaosnli_random_baseline_matches_metric_functions(capsys):
    counts, preds, _, _, Y, P = _load_snli()
    result = _json(capsys, counts, "--pred", f"random={preds}")
    assert list(result) == ["random"]
    row = result["random"]
    assert row["jensen_shannon_distance"] == pytest.approx(
        jensen_shannon_distance(Y, P), rel=1e-12
    )
    assert row["kl_divergence"] == pytest.approx(kl_divergence(Y, P), rel=1e-12)
    assert row["majority_accuracy_score"] == pytest.approx(
        majority_accuracy_score(Y, P), rel=1e-12
    )
    # and scipy, ChaosNLI's own implementation of JSD
    p_hat = Y / Y.sum(1, keepdims=True)
    assert row["jensen_shannon_distance"] == pytest.approx(
        np.mean(jensenshannon(p_hat, P, axis=1)), rel=1e-9
    )
    # JSON names every default metric like its function in sklearn_hcal.metrics
    assert set(row) == {get_metric(c).name for c in default_columns()}


def test_chaosnli_prediction_class_order_is_label_count_order():
    # predicted_probabilities are in label_count order [e, n, c]: their argmax
    # is predicted_label on every item without a tied maximum.
    *_, records, _, _ = _load_snli()
    P = np.array([r["predicted_probabilities"] for r in records.values()])
    label = np.array([NLI_NAMES.index(r["predicted_label"]) for r in records.values()])
    top = np.sort(P, axis=1)
    untied = top[:, -1] > top[:, -2]
    assert untied.sum() > 1000
    np.testing.assert_array_equal(P[untied].argmax(1), label[untied])


def test_chaosnli_chance_baseline_reproduces_table_5(capsys, tmp_path):
    # Nie et al. (2020), Table 5, "Chance" on ChaosNLI-S: JSD 0.383, KL 0.5457.
    counts, *_ = _load_snli()
    n = sum(1 for line in open(counts, encoding="utf-8") if line.strip())
    uniform = tmp_path / "uniform.npy"
    np.save(uniform, np.full((n, 3), 1 / 3))
    # the .jsonl names its classes e, n, c (not sorted): --labels names the
    # .npy's columns
    row = _json(capsys, counts, "--pred", f"chance={uniform}", "--labels", "e,n,c")[
        "chance"
    ]
    assert row["jensen_shannon_distance"] == pytest.approx(0.383, abs=5e-4)
    assert row["kl_divergence"] == pytest.approx(0.5457, abs=5e-4)


def test_chaosnli_alphanli_two_classes(capsys):
    counts = require_data("chaosnli_v1.0", "chaosNLI_alphanli.jsonl")
    preds = require_data("chaosnli_prediction_samples", "abdnli_random_baseline.json")
    items = [json.loads(line) for line in open(counts, encoding="utf-8")]
    records = json.load(open(preds, encoding="utf-8"))["random_baseline"]
    Y = np.array([it["label_count"] for it in items], dtype=float)
    P = np.array([records[it["uid"]]["predicted_probabilities"] for it in items])
    row = _json(
        capsys, counts, "--pred", f"r={preds}", "--metrics", "jensen_shannon_distance"
    )
    assert row == {
        "r": {"jensen_shannon_distance": pytest.approx(jensen_shannon_distance(Y, P))}
    }


def test_chaosnli_several_models_and_shuffled_order(capsys, tmp_path):
    counts, preds, items, records, Y, P = _load_snli()
    rng = np.random.RandomState(0)
    uids = list(records)
    rng.shuffle(uids)
    uniform = {u: {"predicted_probabilities": [1 / 3] * 3} for u in uids}
    multi = {"shuffled": {u: records[u] for u in uids}, "uniform": uniform}
    path = tmp_path / "multi.json"
    path.write_text(json.dumps(multi))
    result = _json(
        capsys,
        counts,
        "--pred",
        f"base={preds}",
        "--pred",
        f"two={path}",
        "--metrics",
        "jensen_shannon_distance,kl_divergence",
    )
    assert list(result) == ["base", "two/shuffled", "two/uniform"]
    assert result["two/shuffled"] == pytest.approx(result["base"])
    assert result["two/uniform"]["kl_divergence"] == pytest.approx(
        kl_divergence(Y, np.full_like(P, 1 / 3))
    )


def test_chaosnli_missing_and_unknown_uid(capsys, tmp_path):
    counts, preds, items, records, *_ = _load_snli()
    dropped = items[5]["uid"]
    missing = {"m": {u: r for u, r in records.items() if u != dropped}}
    path = tmp_path / "missing.json"
    path.write_text(json.dumps(missing))
    _error(capsys, counts, "--pred", f"m={path}", needles=(dropped, "missing.json"))

    extra = {
        "m": dict(records, **{"not-a-uid": {"predicted_probabilities": [1, 0, 0]}})
    }
    path = tmp_path / "extra.json"
    path.write_text(json.dumps(extra))
    _error(capsys, counts, "--pred", f"m={path}", needles=("unknown uid 'not-a-uid'",))


# --------------------------------------------------------------------------- #
# .npy and .csv, logits, formats, bootstrap
# --------------------------------------------------------------------------- #
def test_npy_inputs(capsys, synthetic):
    tmp, Y, Z, P, _ = synthetic
    np.save(tmp / "Y.npy", Y)
    np.save(tmp / "P.npy", P)
    row = _json(capsys, tmp / "Y.npy", "--pred", f"m={tmp / 'P.npy'}")["m"]
    assert row["jensen_shannon_distance"] == pytest.approx(
        np.mean(jensenshannon(Y / Y.sum(1, keepdims=True), P, axis=1))
    )
    assert row["majority_accuracy_score"] == pytest.approx(
        np.mean(P.argmax(1) == Y.argmax(1))
    )


def test_pred_without_a_name_is_named_by_its_file_stem(capsys, synthetic):
    tmp, Y, Z, P, _ = synthetic
    np.save(tmp / "Y.npy", Y)
    np.save(tmp / "roberta.npy", P)
    np.save(tmp / "U.npy", np.full_like(P, 1 / 3))
    rows = _json(
        capsys,
        tmp / "Y.npy",
        "--pred",
        tmp / "roberta.npy",
        "--pred",
        f"u={tmp / 'U.npy'}",
    )
    assert list(rows) == ["roberta", "u"]
    assert rows["roberta"]["jensen_shannon_distance"] == pytest.approx(
        np.mean(jensenshannon(Y / Y.sum(1, keepdims=True), P, axis=1))
    )
    # two files with the same stem need names
    (tmp / "other").mkdir()
    np.save(tmp / "other" / "roberta.npy", P)
    _error(
        capsys,
        tmp / "Y.npy",
        "--pred",
        tmp / "roberta.npy",
        "--pred",
        tmp / "other" / "roberta.npy",
        needles=("the name 'roberta' is used twice",),
    )


def test_csv_inputs_with_ids_and_reordered_classes(capsys, synthetic):
    tmp, Y, Z, P, ids = synthetic
    counts = pd.DataFrame(Y, columns=["a", "b", "c"])
    counts.insert(0, "uid", ids)
    counts.to_csv(tmp / "Y.csv", index=False)
    order = np.random.RandomState(1).permutation(len(ids))
    # different item order, different column order, id column last
    preds = pd.DataFrame(P[order][:, [2, 0, 1]], columns=["c", "a", "b"])
    preds["uid"] = ids[order]
    preds.to_csv(tmp / "P.csv", index=False)
    np.save(tmp / "P.npy", P)
    from_csv = _json(capsys, tmp / "Y.csv", "--pred", f"m={tmp / 'P.csv'}")
    np.save(tmp / "Y.npy", Y)
    from_npy = _json(capsys, tmp / "Y.npy", "--pred", f"m={tmp / 'P.npy'}")
    assert from_csv["m"] == pytest.approx(from_npy["m"])
    assert from_csv["m"]["kl_divergence"] == pytest.approx(kl_divergence(Y, P))


def test_id_column_option(capsys, synthetic):
    tmp, Y, _, P, ids = synthetic
    frame = pd.DataFrame(Y, columns=["a", "b", "c"])
    frame.insert(0, "item", ids)
    frame.to_csv(tmp / "Y.csv", index=False)
    np.save(tmp / "P.npy", P)
    # without --id-column the "item" column is not a number
    _error(
        capsys,
        tmp / "Y.csv",
        "--pred",
        f"m={tmp / 'P.npy'}",
        needles=("line 2", "'item'"),
    )
    row = _json(
        capsys, tmp / "Y.csv", "--pred", f"m={tmp / 'P.npy'}", "--id-column", "item"
    )["m"]
    assert row["kl_divergence"] == pytest.approx(kl_divergence(Y, P))


def test_predictions_without_ids_against_histograms_with_ids_warn(capsys, synthetic):
    # Rows matched by position although the histograms could be matched by
    # id: a fallback (shuffled predictions would score wrongly), so it warns.
    tmp, Y, _, P, ids = synthetic
    frame = pd.DataFrame(Y, columns=["a", "b", "c"])
    frame.insert(0, "uid", ids)
    frame.to_csv(tmp / "Y.csv", index=False)
    pd.DataFrame(P, columns=["a", "b", "c"]).to_csv(tmp / "P.csv", index=False)
    status = main(["evaluate", str(tmp / "Y.csv"), "--pred", f"m={tmp / 'P.csv'}"])
    err = capsys.readouterr().err
    assert status == 0, err
    assert "hcal: warning:" in err and "matched to" in err and "by position" in err
    # with ids on both sides: matched by id, no warning, the same score
    pd.DataFrame(P, columns=["a", "b", "c"]).assign(uid=ids).iloc[::-1].to_csv(
        tmp / "P_ids.csv", index=False
    )
    argv = ["evaluate", str(tmp / "Y.csv"), "--pred", f"m={tmp / 'P_ids.csv'}"]
    status = main([*argv, "--format", "json"])
    captured = capsys.readouterr()
    assert status == 0 and "warning" not in captured.err, captured.err
    row = json.loads(captured.out)["m"]
    assert row["kl_divergence"] == pytest.approx(kl_divergence(Y, P))


def test_logits(capsys, synthetic):
    tmp, Y, Z, P, _ = synthetic
    np.save(tmp / "Y.npy", Y)
    np.save(tmp / "Z.npy", Z)
    np.save(tmp / "P.npy", P)
    with_logits = _json(
        capsys, tmp / "Y.npy", "--pred", f"m={tmp / 'Z.npy'}", "--logits"
    )
    with_probs = _json(capsys, tmp / "Y.npy", "--pred", f"m={tmp / 'P.npy'}")
    assert with_logits["m"] == pytest.approx(with_probs["m"])
    # logits without --logits are rejected with a hint
    _error(
        capsys,
        tmp / "Y.npy",
        "--pred",
        f"m={tmp / 'Z.npy'}",
        needles=("--logits", "Z.npy"),
    )


def test_binary_1d_predictions(capsys, tmp_path):
    rng = np.random.RandomState(0)
    Y = rng.multinomial(5, [0.3, 0.7], size=30)
    p1 = rng.uniform(size=30)
    np.save(tmp_path / "Y.npy", Y)
    np.save(tmp_path / "p.npy", p1)
    row = _json(capsys, tmp_path / "Y.npy", "--pred", f"m={tmp_path / 'p.npy'}")["m"]
    P = np.column_stack([1 - p1, p1])
    assert row["kl_divergence"] == pytest.approx(kl_divergence(Y, P))


def test_output_formats(capsys, synthetic):
    tmp, Y, Z, P, _ = synthetic
    np.save(tmp / "Y.npy", Y)
    np.save(tmp / "P.npy", P)
    np.save(tmp / "U.npy", np.full_like(P, 1 / 3))
    args = [
        tmp / "Y.npy",
        "--pred",
        f"model={tmp / 'P.npy'}",
        "--pred",
        f"uniform={tmp / 'U.npy'}",
    ]
    as_json = _json(capsys, *args)
    csv = pd.read_csv(
        io.StringIO(_evaluate(capsys, *args, "--format", "csv", "--names", "long")),
        index_col=0,
    )
    assert csv.index.name == "prediction"
    assert list(csv.index) == ["model", "uniform"]
    assert list(csv.columns) == list(as_json["model"])
    for name in csv.index:
        assert csv.loc[name].to_dict() == pytest.approx(as_json[name], rel=1e-9)
    md = (
        _evaluate(
            capsys,
            *args,
            "--format",
            "markdown",
            "--digits",
            "6",
            "--names",
            "long",
            "--width",
            "0",  # no limit: the wide table, one row per prediction
        )
        .strip()
        .splitlines()
    )
    assert len(md) > 4 and set(md[1]) <= set("|:-") and md[4] == ""
    header = [c.strip() for c in md[0].strip("|").split("|")]
    assert header == ["prediction"] + list(as_json["model"])
    cells = [c.strip() for c in md[2].strip("|").split("|")]
    assert cells[0] == "model"
    assert float(cells[1 + header.index("kl_divergence") - 1]) == pytest.approx(
        as_json["model"]["kl_divergence"], abs=1e-6
    )


def test_bootstrap_intervals(capsys, synthetic):
    tmp, Y, _, P, _ = synthetic
    np.save(tmp / "Y.npy", Y)
    np.save(tmp / "P.npy", P)
    args = [
        tmp / "Y.npy",
        "--pred",
        f"m={tmp / 'P.npy'}",
        "--bootstrap",
        "200",
        "--seed",
        "1",
    ]
    metrics = [
        "--metrics",
        "jensen_shannon_distance,kl_divergence,majority_accuracy_score",
    ]
    row = _json(capsys, *args, *metrics)["m"]
    assert set(row) == {
        "jensen_shannon_distance",
        "kl_divergence",
        "majority_accuracy_score",
    }
    for name, entry in row.items():
        assert set(entry) == {"value", "low", "high"}
        assert entry["low"] <= entry["value"] <= entry["high"], name
        assert entry["low"] < entry["high"], name
    assert row["kl_divergence"]["value"] == pytest.approx(kl_divergence(Y, P))
    # same seed, same intervals; CSV has the bounds as columns
    csv = pd.read_csv(
        io.StringIO(_evaluate(capsys, *args, *metrics, "--format", "csv")), index_col=0
    )
    assert csv.loc["m", "kl_low"] == pytest.approx(row["kl_divergence"]["low"])
    md = _evaluate(capsys, *args, *metrics)
    assert "[" in md and "]" in md


def test_probability_histograms_drop_count_metrics(capsys, synthetic):
    tmp, Y, _, P, _ = synthetic
    np.save(tmp / "H.npy", Y / Y.sum(1, keepdims=True))
    np.save(tmp / "P.npy", P)
    row = _json(capsys, tmp / "H.npy", "--pred", f"m={tmp / 'P.npy'}")["m"]
    assert "epistemic_loss" not in row and "jensen_shannon_distance" in row
    _error(
        capsys,
        tmp / "H.npy",
        "--pred",
        f"m={tmp / 'P.npy'}",
        "--metrics",
        "epistemic_loss",
        needles=("integer label counts",),
    )


def test_console_script_evaluate_success(tmp_path):
    rng = np.random.RandomState(0)
    Y = rng.multinomial(4, [0.6, 0.4], size=20)
    P = softmax(rng.normal(size=(20, 2)), axis=1)
    np.save(tmp_path / "Y.npy", Y)
    np.save(tmp_path / "P.npy", P)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sklearn_hcal",
            "evaluate",
            str(tmp_path / "Y.npy"),
            "--pred",
            f"m={tmp_path / 'P.npy'}",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["m"]["kl_divergence"] == pytest.approx(
        kl_divergence(Y, P)
    )


def test_plots_option(capsys, synthetic):
    pytest.importorskip("matplotlib")
    pytest.importorskip("sklearn_hcal.plotting")
    tmp, Y, _, P, _ = synthetic
    np.save(tmp / "Y.npy", Y)
    np.save(tmp / "P.npy", P)
    _evaluate(
        capsys, tmp / "Y.npy", "--pred", f"m={tmp / 'P.npy'}", "--plots", tmp / "figs"
    )
    names = sorted(p.name for p in (tmp / "figs").iterdir())
    assert names == [
        "calibration_dispersion.png",
        "disagreement_reliability.png",
        "instance_errors.png",
        "majority_reliability.png",
    ]
    assert all((tmp / "figs" / n).read_bytes()[:4] == b"\x89PNG" for n in names)


def test_chaosnli_counts_with_csv_predictions_by_long_class_names(capsys, tmp_path):
    # CSV columns named entailment/neutral/contradiction, in another order,
    # are matched to label_count's [e, n, c].
    counts, preds, _, records, Y, P = _load_snli()
    rows = [[u] + r["predicted_probabilities"] for u, r in records.items()]
    frame = pd.DataFrame(rows, columns=["uid"] + NLI_NAMES)
    frame[["contradiction", "uid", "entailment", "neutral"]].to_csv(
        tmp_path / "p.csv", index=False
    )
    row = _json(capsys, counts, "--pred", f"m={tmp_path / 'p.csv'}")["m"]
    assert row["kl_divergence"] == pytest.approx(kl_divergence(Y, P), rel=1e-12)


# --------------------------------------------------------------------------- #
# layouts, names, --ties, the one ChaosNLI parser
# --------------------------------------------------------------------------- #
def test_short_names_transpose_and_long_layouts(capsys, synthetic):
    tmp, Y, _, P, _ = synthetic
    np.save(tmp / "Y.npy", Y)
    np.save(tmp / "P.npy", P)
    np.save(tmp / "U.npy", np.full_like(P, 1 / 3))
    args = [tmp / "Y.npy", "--pred", f"m={tmp / 'P.npy'}", "--pred"]
    args += [f"u={tmp / 'U.npy'}", "--metrics", "jsd,kl_divergence", "--format", "csv"]
    wide = pd.read_csv(io.StringIO(_evaluate(capsys, *args)), index_col=0)
    assert list(wide.columns) == ["jsd", "kl"]  # short names, either input name
    assert wide.loc["m", "kl"] == pytest.approx(kl_divergence(Y, P), rel=1e-9)
    tr = pd.read_csv(io.StringIO(_evaluate(capsys, *args, "--transpose")), index_col=0)
    assert list(tr.index) == ["jsd", "kl"] and list(tr.columns) == ["m", "u"]
    pd.testing.assert_frame_equal(tr.T, wide, check_names=False)
    long = pd.read_csv(io.StringIO(_evaluate(capsys, *args, "--long")))
    assert list(long.columns) == ["prediction", "metric", "value"]
    assert len(long) == 4
    got = long.set_index(["prediction", "metric"])["value"]
    assert got[("u", "jsd")] == pytest.approx(wide.loc["u", "jsd"])
    md = _evaluate(capsys, *args[:-2], "--transpose", "--metrics", "jsd")
    header = md.splitlines()[0].strip("|").split("|")
    assert [cell.strip() for cell in header] == ["metric", "m", "u"]


def test_ties_option_chooses_the_majority_rule(capsys, tmp_path):
    # Items with tied human majorities: the three rules disagree.
    Y = np.array([[2, 2, 0], [1, 1, 1], [3, 0, 1], [0, 2, 2]] * 5)
    P = softmax(np.random.RandomState(0).normal(size=(20, 3)), axis=1)
    np.save(tmp_path / "Y.npy", Y)
    np.save(tmp_path / "P.npy", P)
    values = {}
    for ties in ("first", "last", "any"):
        row = _json(
            capsys,
            tmp_path / "Y.npy",
            "--pred",
            f"m={tmp_path / 'P.npy'}",
            "--metrics",
            "accuracy",
            "--ties",
            ties,
        )["m"]
        values[ties] = row["majority_accuracy_score"]
        assert values[ties] == pytest.approx(majority_accuracy_score(Y, P, ties=ties))
    assert len(set(values.values())) > 1


def test_alphanli_classes_are_one_and_two_for_csv_predictions(capsys, tmp_path):
    counts = require_data("chaosnli_v1.0", "chaosNLI_alphanli.jsonl")
    from sklearn_hcal.datasets import load_chaosnli

    data = load_chaosnli("alphanli", path=counts)
    assert list(data.classes) == [1, 2]
    assert set(data.majority_label) <= {1, 2}  # the file's own labels
    P = softmax(np.random.RandomState(1).normal(size=data.counts.shape), axis=1)
    frame = pd.DataFrame({"uid": data.uid, "2": P[:, 1], "1": P[:, 0]})
    frame.to_csv(tmp_path / "p.csv", index=False)  # columns named 2, 1
    row = _json(capsys, counts, "--pred", f"m={tmp_path / 'p.csv'}")["m"]
    assert row["kl_divergence"] == pytest.approx(kl_divergence(data.counts, P))


# --------------------------------------------------------------------------- #
# rounded probabilities and --renormalize
# --------------------------------------------------------------------------- #
def test_rounded_probabilities_are_scored_as_probabilities(capsys, synthetic):
    # Probabilities saved with 3 decimals are the renormalised probabilities,
    # not logits: scipy's jensenshannon normalises its inputs itself.
    tmp, Y, _, P, _ = synthetic
    R = P.round(3)
    assert 1e-6 < np.abs(R.sum(1) - 1).max() <= 1.5e-3
    pd.DataFrame(R, columns=list("abc")).to_csv(tmp / "r.csv", index=False)
    np.save(tmp / "Y.npy", Y)
    main_args = [tmp / "Y.npy", "--pred", f"m={tmp / 'r.csv'}", "--format", "json"]
    status = main(["evaluate", *map(str, main_args)])
    captured = capsys.readouterr()
    assert status == 0 and captured.err == ""
    jsd = json.loads(captured.out)["m"]["jensen_shannon_distance"]
    p_hat = Y / Y.sum(1, keepdims=True)
    assert jsd == pytest.approx(np.mean(jensenshannon(p_hat, R, axis=1)), rel=1e-9)
    # read as logits (the old advice), the numbers would be far off
    assert abs(jsd - np.mean(jensenshannon(p_hat, softmax(R, axis=1), axis=1))) > 0.01


def test_renormalize_divides_rows_by_their_sums(capsys, synthetic):
    tmp, Y, _, P, _ = synthetic
    np.save(tmp / "Y.npy", Y)
    np.save(tmp / "P.npy", P)
    lost = P * np.where(np.arange(len(P)) % 2 == 0, 0.9, 1.0)[:, None]
    np.save(tmp / "lost.npy", lost)
    H = Y / Y.sum(1, keepdims=True)
    np.save(tmp / "H.npy", H * 0.8)
    metrics = ["--metrics", "jsd,kl,dist_ce", "--format", "json"]
    reference = _json(capsys, tmp / "Y.npy", "--pred", f"m={tmp / 'P.npy'}")["m"]

    status = main(
        ["evaluate", str(tmp / "Y.npy"), "--pred", f"m={tmp / 'lost.npy'}"]
        + ["--renormalize", *metrics]
    )
    captured = capsys.readouterr()
    assert status == 0
    assert captured.err.splitlines() == [
        f"hcal: warning: {tmp / 'lost.npy'}: --renormalize divided 20 prediction "
        "rows by their sums (first: row 0 summed to 0.9)."
    ]
    row = json.loads(captured.out)["m"]
    for name, value in row.items():
        assert value == pytest.approx(reference[name], rel=1e-9), name

    # human probabilities that lost mass: the same distributions
    status = main(
        ["evaluate", str(tmp / "H.npy"), "--pred", f"m={tmp / 'P.npy'}"]
        + ["--renormalize", *metrics]
    )
    captured = capsys.readouterr()
    assert status == 0
    assert len(captured.err.splitlines()) == 1
    assert "divided 40 label-histogram rows" in captured.err
    row = json.loads(captured.out)["m"]
    for name, value in row.items():
        assert value == pytest.approx(reference[name], rel=1e-9), name

    # integer counts are never renormalised (p̂ comes from the counts)
    status = main(
        ["evaluate", str(tmp / "Y.npy"), "--pred", f"m={tmp / 'P.npy'}"]
        + ["--renormalize", *metrics]
    )
    captured = capsys.readouterr()
    assert status == 0 and captured.err == ""
    assert json.loads(captured.out)["m"] == pytest.approx(
        {k: reference[k] for k in json.loads(captured.out)["m"]}
    )


def test_plots_with_a_float32_one_hot_softmax_row(capsys, synthetic):
    # A float32 softmax row [1, 2e-8, 0] passes the row-sum check
    # and gives 1 - sum q^2 = -4.4e-16; the figures clip it (the library's
    # phi check) instead of crashing after the table was printed.
    pytest.importorskip("matplotlib")
    tmp, Y, _, P, _ = synthetic
    P32 = P.astype(np.float32)
    P32[0] = [1.0, 2e-8, 0.0]
    assert 1.0 - float((P32[0].astype(float) ** 2).sum()) < 0
    np.save(tmp / "Y.npy", Y)
    np.save(tmp / "P.npy", P32)
    out = _evaluate(
        capsys, tmp / "Y.npy", "--pred", f"m={tmp / 'P.npy'}", "--plots", tmp / "figs"
    )
    assert out.startswith("| metric ")  # the table, transposed to fit 80 columns
    assert (tmp / "figs" / "disagreement_reliability.png").read_bytes()[:4] == (
        b"\x89PNG"
    )


def test_ordinal_metrics_follow_the_scale_of_named_classes(capsys, tmp_path):
    # The report names the columns by the file's classes (one validation for
    # the table and the HTML file), so --order is given by name: the value
    # must be the metric function's with that order, and a file without
    # class names keeps --order by column position.
    from sklearn_hcal.metrics import ranked_probability_score_loss as rps
    from sklearn_hcal.metrics import wasserstein_distance

    rng = np.random.default_rng(3)
    words = ["always", "never", "sometimes"]  # alphabetical, not the scale
    scale = ["never", "sometimes", "always"]
    Y = rng.multinomial(4, rng.dirichlet(np.ones(3), 40))
    P = rng.dirichlet(np.ones(3), 40)
    pd.DataFrame(Y, columns=words).to_csv(tmp_path / "Y.csv", index=False)
    pd.DataFrame(P, columns=words).to_csv(tmp_path / "P.csv", index=False)
    args = ["--pred", f"m={tmp_path / 'P.csv'}", "--metrics", "wasserstein,rps"]
    got = _json(capsys, tmp_path / "Y.csv", *args, "--order", ",".join(scale))["m"]
    frame = pd.DataFrame(Y, columns=words)
    expected = {
        "wasserstein_distance": wasserstein_distance(frame, P, order=scale),
        "ranked_probability_score_loss": rps(frame, P, order=scale),
    }
    assert got == pytest.approx(expected, rel=1e-12)
    # the scale is not the column order: it changes the value
    positional = wasserstein_distance(Y, P)
    assert abs(expected["wasserstein_distance"] - positional) > 1e-3
    # words without --order are refused, with the command line's hint
    _error(capsys, tmp_path / "Y.csv", *args, needles=("--order A,B,C",))
    # .npy files name no class: --order gives column positions
    np.save(tmp_path / "Y.npy", Y)
    np.save(tmp_path / "P.npy", P)
    npy = ["--pred", f"m={tmp_path / 'P.npy'}", "--metrics", "wasserstein"]
    got = _json(capsys, tmp_path / "Y.npy", *npy, "--order", "1,2,0")["m"]
    assert got["wasserstein_distance"] == pytest.approx(
        expected["wasserstein_distance"], rel=1e-12
    )
