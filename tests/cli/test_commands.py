"""``hcal`` command line: the parser, ``hcal demo`` end to end, error paths.

The demo runs once per module through the real entry points (``python -m
sklearn_hcal`` and the ``hcal`` console script) in quick mode; its tables are
checked against properties (Mimori et al.'s claims), against the metric
functions on the test split rebuilt here, and against scipy.
"""

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon

from sklearn_hcal.cli import main
from sklearn_hcal.cli._demo import DEMO_METHODS, DEMO_TABLES
from sklearn_hcal.cli._experiment import split_one_label
from sklearn_hcal.utils._progress import Progress

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

HCAL = Path(sys.executable).with_name("hcal")


def _run(args, timeout=240):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def _markdown_rows(text: str) -> list[list[str]]:
    """Cells of a Markdown table (without the separator line)."""
    rows = []
    for line in text.strip().splitlines():
        assert line.startswith("|") and line.endswith("|"), line
        cells = [c.strip() for c in line.strip("|").split("|")]
        if all(set(c) <= {"-", ":"} for c in cells):
            continue
        rows.append(cells)
    return rows


@pytest.fixture(scope="module")
def quick_demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    proc = _run(
        [
            sys.executable,
            "-m",
            "sklearn_hcal",
            "demo",
            "--quick",
            "--out",
            str(out),
            "--seed",
            "0",
        ]
    )
    return proc, out


def test_demo_quick_exit_and_files(quick_demo):
    proc, out = quick_demo
    assert proc.returncode == 0, proc.stderr
    for key in DEMO_TABLES:
        assert (out / f"{key}.csv").is_file()
        assert (out / f"{key}.md").is_file()
    assert (out / "report.md").is_file()
    # progress goes to stderr, one line per step when not on a terminal
    assert "training CNN epoch 4/4" in proc.stderr
    assert "\r" not in proc.stderr
    assert "Traceback" not in proc.stderr
    # the three tables are printed on stdout
    for key in DEMO_TABLES:
        for _, header in DEMO_TABLES[key]:
            assert header in proc.stdout


def test_demo_csv_rows_and_columns(quick_demo):
    _, out = quick_demo
    for key, spec in DEMO_TABLES.items():
        table = pd.read_csv(out / f"{key}.csv", index_col="method")
        assert list(table.index) == list(DEMO_METHODS)
        expected = []
        for col, _ in spec:
            expected += [col, f"{col}_low", f"{col}_high"]
        assert list(table.columns) == expected
        assert table.notna().all().all()


def test_demo_markdown_tables_parse(quick_demo):
    _, out = quick_demo
    for key, spec in DEMO_TABLES.items():
        rows = _markdown_rows((out / f"{key}.md").read_text(encoding="utf-8"))
        assert rows[0] == ["method"] + [h for _, h in spec]
        assert [r[0] for r in rows[1:]] == list(DEMO_METHODS)
        csv = pd.read_csv(out / f"{key}.csv", index_col="method")
        for r in rows[1:]:
            for (col, _), cell in zip(spec, r[1:]):
                value, interval = cell.split(" [")
                low, high = interval.rstrip("]").split(", ")
                assert float(value) == pytest.approx(csv.loc[r[0], col], abs=6e-5)
                assert float(low) == pytest.approx(
                    csv.loc[r[0], f"{col}_low"], abs=6e-5
                )
    report = (out / "report.md").read_text(encoding="utf-8")
    assert report.count("| method |") == 3


def test_demo_alpha_beats_raw_on_disagreement(quick_demo):
    # Mimori et al. (2021), Table 1: α-calibration lowers L̂_φD and CE_φD.
    _, out = quick_demo
    t = pd.read_csv(out / "mimori.csv", index_col="method")
    for base in ("Raw", "Raw+ts", "MC-dropout"):
        alpha = f"{base}+α"
        assert (
            t.loc[alpha, "disagreement_sq_loss"] < t.loc[base, "disagreement_sq_loss"]
        ), base
        assert t.loc[alpha, "disagreement_ce"] < t.loc[base, "disagreement_ce"], base
    assert t.loc["Raw+α", "disagreement_sq_loss"] < t.loc["Raw", "disagreement_sq_loss"]


def test_demo_posterior_and_shared_columns(quick_demo):
    _, out = quick_demo
    t = pd.read_csv(out / "mimori.csv", index_col="method")
    baan = pd.read_csv(out / "baan.csv", index_col="method")
    # Table 2: the posterior after one more label beats the prior.
    for name in ("Raw+α", "Raw+ts+α", "MC-dropout+α"):
        assert t.loc[name, "el_posterior"] < t.loc[name, "el_prior"], name
    # point predictors and the oracle do not update (documented decision)
    for name in ("Raw", "Raw+ts", "Oracle"):
        assert t.loc[name, "el_posterior"] == t.loc[name, "el_prior"]
    # α-calibration keeps the class probabilities: same class-probability metrics
    for base in ("Raw", "Raw+ts", "MC-dropout"):
        for col in ("accuracy", "sq_loss", "el", "el_prior"):
            assert t.loc[f"{base}+α", col] == pytest.approx(t.loc[base, col])
        for col in ("ece", "dist_ce", "ent_ce"):
            assert baan.loc[f"{base}+α", col] == pytest.approx(baan.loc[base, col])


def test_demo_intervals_contain_mean_type_estimates(quick_demo):
    _, out = quick_demo
    for key, cols in {
        "mimori": ["accuracy", "sq_loss", "disagreement_sq_loss", "el_prior"],
        "baan": ["dist_ce", "ent_ce"],
        "chaosnli": ["jsd", "kl"],
    }.items():
        t = pd.read_csv(out / f"{key}.csv", index_col="method")
        for col in cols:
            assert np.all(t[f"{col}_low"] <= t[col] + 1e-6), (key, col)
            assert np.all(t[col] <= t[f"{col}_high"] + 1e-6), (key, col)


def test_demo_oracle_row_matches_independent_computation(quick_demo):
    # The oracle's row is rebuilt from the data set alone: the test split of
    # Mix-Digits with the demo's seed and sizes, JSD with scipy.
    from sklearn_hcal.datasets import make_mixed_digits
    from sklearn_hcal.metrics import disagreement_squared_loss

    _, out = quick_demo
    d = make_mixed_digits(
        {"train": 1, "valid": 5, "test": 10},
        valid_size=0.25,
        test_size=0.35,
        random_state=0,
    )
    Y, Q = d.test.counts, d.test.true_proba
    p_hat = Y / Y.sum(1, keepdims=True)
    chaos = pd.read_csv(out / "chaosnli.csv", index_col="method")
    assert chaos.loc["Oracle", "jsd"] == pytest.approx(
        np.mean(jensenshannon(p_hat, Q, axis=1)), rel=1e-5
    )
    t = pd.read_csv(out / "mimori.csv", index_col="method")
    assert t.loc["Oracle", "accuracy"] == pytest.approx(
        np.mean(Q.argmax(1) == Y.argmax(1)), rel=1e-5
    )
    # φ = 1 − ΣQ², the true disagreement probability
    assert t.loc["Oracle", "disagreement_sq_loss"] == pytest.approx(
        disagreement_squared_loss(Y, 1 - (Q**2).sum(1)), rel=1e-5
    )


def test_hcal_console_script_runs_demo(tmp_path):
    assert HCAL.is_file(), f"console script not found at {HCAL}"
    proc = _run(
        [
            str(HCAL),
            "demo",
            "--quick",
            "--epochs",
            "1",
            "--bootstrap",
            "0",
            "--no-figures",
            "--quiet",
            "--out",
            str(tmp_path),
        ]
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    table = pd.read_csv(tmp_path / "chaosnli.csv", index_col="method")
    assert list(table.index) == list(DEMO_METHODS)
    assert list(table.columns) == ["jsd", "kl"]  # no intervals without bootstrap


@pytest.mark.slow
def test_run_demo_is_reproducible():
    from sklearn_hcal.cli._demo import run_demo

    kw = dict(quick=True, max_epochs=1, n_bootstrap=0, mc_samples=2, progress=False)
    a, b = run_demo(seed=3, **kw), run_demo(seed=3, **kw)
    c = run_demo(seed=4, **kw)
    for key in DEMO_TABLES:
        pd.testing.assert_frame_equal(a.tables[key], b.tables[key])
    assert not a.tables["chaosnli"].equals(c.tables["chaosnli"])
    assert a.files == [] and a.figures == []


def testsplit_one_label():
    rng = np.random.RandomState(0)
    Y = np.tile([[3, 1, 0]], (20000, 1))
    update, rest = split_one_label(Y, rng)
    np.testing.assert_array_equal(update.sum(1), 1)
    np.testing.assert_array_equal(update + rest, Y)
    assert rest.min() >= 0
    # a random annotator's label: class 0 with probability 3/4, never class 2
    assert update[:, 0].mean() == pytest.approx(0.75, abs=0.01)
    assert update[:, 2].sum() == 0


# --------------------------------------------------------------------------- #
# parser, help, errors
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"], ["evaluate", "-h"]])
def test_help(argv, capsys):
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: hcal")


def test_version(capsys):
    import sklearn_hcal

    assert main(["--version"]) == 0
    assert sklearn_hcal.__version__ in capsys.readouterr().out


def _one_line_error(capsys, *needles):
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hcal: error: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="tests the error when CUDA is missing"
)
def test_device_cuda_without_cuda(capsys, tmp_path):
    assert main(["demo", "--quick", "--device", "cuda", "--out", str(tmp_path)]) == 2
    _one_line_error(capsys, "--device cuda", "CUDA is not available")
    assert list(tmp_path.iterdir()) == []  # failed before doing anything


def test_progress_terminal_and_pipe():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    p = Progress(tty)
    for i in range(1, 5):
        p.update("epochs", i, 4)
    p.message("next")
    text = tty.getvalue()
    assert text.count("\r") == 4 and "4/4" in text and text.endswith("next\n")

    pipe = io.StringIO()
    p = Progress(pipe)
    for i in range(1, 101):
        p.update("epochs", i, 100)
    lines = pipe.getvalue().splitlines()
    assert "\r" not in pipe.getvalue()
    assert [line.split()[-1] for line in lines] == [
        "25/100",
        "50/100",
        "75/100",
        "100/100",
    ]

    silent = io.StringIO()
    Progress(silent, enabled=False).message("x")
    assert silent.getvalue() == ""


def test_run_demo_rejects_file_as_out_before_training(tmp_path):
    from sklearn_hcal.cli._demo import run_demo

    target = tmp_path / "file.txt"
    target.write_text("x")
    with pytest.raises(ValueError, match="not a folder"):
        run_demo(target, quick=True, progress=False)


def test_demo_figures_draw_each_methods_own_disagreement(tmp_path):
    # The demo's figures are drawn from validated inputs (developer guide
    # §checked-once) with each method's own φ: a φ of another length is
    # refused naming it, and the four figures are written.
    pytest.importorskip("matplotlib")
    from sklearn.utils import Bunch

    from sklearn_hcal.cli._demo import _save_figures

    rng = np.random.default_rng(0)
    Y = rng.multinomial(5, rng.dirichlet(np.ones(3), 120))
    P, Q = rng.dirichlet(np.ones(3), 120), rng.dirichlet(np.ones(3), 120)
    preds = {
        "Raw": (P, 1 - (P**2).sum(axis=1), P),
        "Alpha": (Q, 0.9 * (1 - (Q**2).sum(axis=1)), Q),
    }
    paths, skipped = _save_figures(tmp_path, Bunch(predictions=preds, test_counts=Y))
    assert skipped is None
    assert sorted(Path(p).name for p in paths) == [
        "calibration_dispersion.png",
        "disagreement_reliability.png",
        "instance_errors.png",
        "majority_reliability.png",
    ]
    preds["Alpha"] = (Q, np.full(119, 0.3), Q)
    with pytest.raises(ValueError, match="different numbers of samples"):
        _save_figures(tmp_path, Bunch(predictions=preds, test_counts=Y))
