"""The command line's default output reads at 80 columns, with a legend.

The README's and the user guide's ``hcal evaluate`` commands print no line
wider than 80 columns when standard output is not a terminal; every value of
the full table is still there (checked against ``--format json``); every
metric shown has one legend line, from the metric registry.
"""

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import Bunch

import sklearn_hcal
from sklearn_hcal.cli import main
from sklearn_hcal.cli._demo_notes import temperature_note
from sklearn_hcal.cli._terminal import fit_table, render_for_terminal
from sklearn_hcal.metrics import _registry
from sklearn_hcal.metrics._registry import Metric, get_metric

from ..conftest import require_data


def _columns(line: str) -> int:
    # Terminal columns of a line: combining marks (the hat of L̂) take none;
    # the outputs hold no East Asian wide characters.
    assert not any(unicodedata.east_asian_width(c) in "WF" for c in line), line
    return sum(1 for c in line if not unicodedata.combining(c))


def _widest(text: str) -> int:
    return max(_columns(line) for line in text.splitlines())


def _cells(text: str) -> dict:
    """``{(row name, column name): cell}`` of every Markdown table in text."""
    out = {}
    header = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif set("".join(cells)) <= set(":-"):
            continue
        else:
            for name, cell in zip(header[1:], cells[1:]):
                out[(cells[0], name)] = cell
                out[(name, cells[0])] = cell  # either orientation
    return out


def _legend(text: str) -> dict:
    """``{name: text}`` of the ``* name: text`` lines (continuations joined)."""
    out, name = {}, None
    for line in text.splitlines():
        if line.startswith("* "):
            name, _, rest = line[2:].partition(": ")
            out[name] = rest
        elif line.startswith("  ") and name is not None:
            out[name] += " " + line.strip()
        else:
            name = None
    return out


@pytest.fixture
def no_columns(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture
def two_models(tmp_path, monkeypatch):
    # The README's "hcal evaluate counts.npy --pred model_a.npy --pred
    # model_b.npy", in the folder of the files.
    rng = np.random.RandomState(0)
    Y = rng.multinomial(5, [0.5, 0.3, 0.2], size=300)
    np.save(tmp_path / "counts.npy", Y)
    np.save(tmp_path / "model_a.npy", rng.dirichlet([2, 2, 2], size=300))
    np.save(tmp_path / "model_b.npy", rng.dirichlet([5, 3, 2], size=300))
    monkeypatch.chdir(tmp_path)
    return ["counts.npy", "--pred", "model_a.npy", "--pred", "model_b.npy"]


def _snli(tmp_path):
    counts = require_data("chaosnli_v1.0", "chaosNLI_snli.jsonl")
    preds = require_data("chaosnli_prediction_samples", "snli_random_baseline.json")
    n = sum(1 for _ in open(counts, encoding="utf-8"))
    np.save(tmp_path / "uniform.npy", np.full((n, 3), 1 / 3))
    return counts, preds


def _evaluate(capsys, argv):
    assert main(["evaluate", *map(str, argv)]) == 0
    return capsys.readouterr().out


def _check_fits_and_complete(capsys, argv, width=80):
    text = _evaluate(capsys, argv)
    assert _widest(text) <= width, text
    as_json = [*argv, "--format", "json", "--names", "short"]
    full = json.loads(_evaluate(capsys, as_json))
    cells = _cells(text)
    for prediction, values in full.items():
        for metric, value in values.items():
            cell = cells[(prediction, metric)]
            if isinstance(value, dict):
                assert cell == (
                    f"{value['value']:.4f} [{value['low']:.4f}, {value['high']:.4f}]"
                )
            else:
                assert cell == f"{value:.4f}"
    legend = _legend(text)
    shown = list(next(iter(full.values())))
    assert [name for name in legend if name != "[low, high]"] == shown
    return text, legend


def test_readme_chaosnli_command_fits_80_columns(capsys, tmp_path, no_columns):
    # hcal evaluate chaosNLI_snli.jsonl --pred mine=predictions.json
    #     --bootstrap 1000   (before: 432-character lines)
    counts, preds = _snli(tmp_path)
    argv = [counts, "--pred", f"mine={preds}", "--bootstrap", "1000"]
    _, legend = _check_fits_and_complete(capsys, argv)
    assert "95% bootstrap interval" in legend["[low, high]"]


def test_readme_two_models_command_fits_80_columns(capsys, two_models, no_columns):
    _check_fits_and_complete(capsys, two_models)


def test_user_guide_commands_fit_80_columns(capsys, tmp_path, no_columns):
    counts, preds = _snli(tmp_path)
    two = [
        counts,
        "--pred",
        f"roberta={preds}",
        "--pred",
        f"uniform={tmp_path / 'uniform.npy'}",
        "--labels",  # the .npy names no classes; ChaosNLI's e, n, c are unsorted
        "e,n,c",
    ]
    _check_fits_and_complete(capsys, [*two, "--bootstrap", "200"])
    _check_fits_and_complete(capsys, [*two, "--transpose", "--ties", "any"])


def test_console_output_through_a_pipe_fits_80_columns(two_models):
    # The real entry point, standard output a pipe: 80 columns.
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    # the package under test, whatever the working folder
    root = str(Path(sklearn_hcal.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-m", "sklearn_hcal", "evaluate", *two_models],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert _widest(proc.stdout) <= 80
    # 16 default metrics do not fit a row per model: one row per metric
    assert proc.stdout.splitlines()[0].split("|")[1].strip() == "metric"


def test_columns_and_width_options_widen_the_table(capsys, two_models, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    text = _evaluate(capsys, two_models)
    assert text.splitlines()[0].split("|")[1].strip() == "prediction"
    assert 80 < _widest(text) <= 400
    monkeypatch.delenv("COLUMNS")
    narrow = _evaluate(capsys, [*two_models, "--width", "40"])
    assert _widest(narrow) <= 40
    assert _cells(narrow) == _cells(text)  # split, nothing lost


def test_legend_directions_follow_the_papers(capsys, two_models, no_columns):
    legend = _legend(_evaluate(capsys, two_models))
    # accuracy and RankCS are scores (Baan et al. 2022), the others losses
    assert legend["accuracy"].endswith("; higher is better")
    assert legend["rank_cs"].endswith("; higher is better")
    for name in ("el", "cl", "ce", "dl", "jsd", "kl", "dist_ce"):
        assert legend[name].endswith("; lower is better"), name
    # a signed error (> 0: under-confident) has no better side
    signed = _legend(_evaluate(capsys, [*two_models, "--metrics", "ent_ce_signed"]))
    assert signed["ent_ce_signed"].endswith("; no better side")


def test_a_new_metric_gets_its_legend_without_another_edit(monkeypatch):
    _registry.metrics()  # load the declarations first
    toy = Metric(
        "toy_score",
        "toy",
        None,
        greater_is_better=True,
        description="share of items whose first class is above one half",
        source="a test",
        per_item=lambda b: (b.P[:, 0] > 0.5).astype(float),
    )
    monkeypatch.setitem(_registry._REGISTRY, "toy", toy)
    assert get_metric("toy") is toy
    frame = pd.DataFrame({"toy": [0.25]}, index=pd.Index(["m"], name="prediction"))
    legend = _legend(render_for_terminal(frame, width=80))
    assert legend == {
        "toy": "share of items whose first class is above one half; higher is better"
    }


def test_fit_table_blocks_keep_every_cell():
    rng = np.random.RandomState(1)
    columns = [f"metric_{j}" for j in range(9)]
    frame = pd.DataFrame(
        rng.uniform(size=(6, 9)),
        columns=columns,
        index=pd.Index([f"model_{i}" for i in range(6)], name="prediction"),
    )
    for width in (30, 45, 80):
        text = fit_table(frame, width=width, digits=3)
        assert _widest(text) <= width
        cells = _cells(text)
        for name, row in frame.iterrows():
            for col in columns:
                assert cells[(name, col)] == f"{row[col]:.3f}"


def _info(raw, ts, oracle_jsd=0.03, temperature=1.5):
    report = pd.DataFrame(
        [raw, ts, {"kl": 0.02, "el": 0.0, "jsd": oracle_jsd, "dist_ce": 0.03}],
        index=["Raw", "Raw+ts", "Oracle"],
    )
    return Bunch(report=report, temperature=temperature)


def test_temperature_note_says_which_scores_are_proper():
    # The full demo's numbers (seed 0): KL improves, EL, JSD, DistCE worsen.
    raw = {"kl": 0.3513, "el": 0.0829, "jsd": 0.1489, "dist_ce": 0.1217}
    ts = {"kl": 0.3057, "el": 0.0852, "jsd": 0.2101, "dist_ce": 0.1651}
    note = temperature_note(_info(raw, ts))
    assert "T = 1.500" in note
    assert "KL 0.3513 → 0.3057" in note
    assert "It worsens EL 0.0829 → 0.0852, JSD 0.1489 → 0.2101, DistCE" in note
    assert "proper score" in note and "JSD and DistCE are not proper" in note
    assert "(T > 1)" in note
    # A run where the temperature improves every column explains nothing more.
    better = {"kl": 0.30, "el": 0.08, "jsd": 0.14, "dist_ce": 0.12}
    note = temperature_note(_info(raw, better))
    assert "worsens" not in note and "not proper" not in note


def test_sharper_than_truth_wins_jsd_and_distce_not_kl_or_el():
    # What the note claims, by simulation: with 10 labels per item, the
    # expected JSD and total variation (DistCE) to the histogram are smallest
    # for a prediction sharper than the true Q; the expected KL(p̂‖q) (log
    # loss) and squared distance (Brier, EL) are smallest at Q itself.
    from scipy.spatial.distance import jensenshannon
    from scipy.stats import binom

    Q, n = 0.75, 10
    k = np.arange(n + 1)
    w = binom.pmf(k, n, Q)
    p_hat = np.stack([k / n, 1 - k / n], axis=1)
    grid = np.linspace(0.5, 0.99, 50)
    expected = {name: [] for name in ("jsd", "tv", "kl", "sq")}
    for q in grid:
        qv = np.array([q, 1 - q])
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.where(p_hat > 0, p_hat * np.log(p_hat / qv), 0.0)
        js = np.array([jensenshannon(p, qv) for p in p_hat])
        expected["jsd"].append(w @ np.nan_to_num(js))
        expected["tv"].append(w @ (0.5 * np.abs(p_hat - qv).sum(1)))
        expected["kl"].append(w @ logs.sum(1))
        expected["sq"].append(w @ ((p_hat - qv) ** 2).sum(1))
    best = {name: grid[int(np.argmin(v))] for name, v in expected.items()}
    assert best["kl"] == pytest.approx(Q, abs=0.01)
    assert best["sq"] == pytest.approx(Q, abs=0.01)
    assert best["jsd"] > Q + 0.02 and best["tv"] > Q + 0.02


def test_demo_legend_lines_do_not_repeat_the_header():
    # the registry's descriptions start with the paper's name, which is the
    # demo's header: the lines read "RankCS: RankCS: fraction ..."
    from sklearn_hcal.cli._demo import DEMO_TABLES
    from sklearn_hcal.cli._demo_notes import legend_entries

    entries = dict(legend_entries(DEMO_TABLES))
    assert entries["RankCS"] == (
        "fraction of items whose class ranking matches; higher is better"
    )
    assert entries["EntCE (abs)"].startswith("mean |H(q) − H(p̂)|")
    for header, text in entries.items():
        assert not text.startswith(header.split(" ")[0] + ":"), (header, text)
