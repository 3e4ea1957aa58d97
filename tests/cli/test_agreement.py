"""``hcal agreement``: the coefficients of every file ``hcal evaluate`` reads.

The printed values are those of the library's functions on the same data
(themselves checked against the ``krippendorff`` package and statsmodels in
``tests/metrics/test_agreement.py``); the tables fit 80 columns and carry a
legend; bad input exits 2 with one line.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.cli import main
from sklearn_hcal.datasets import load_lewidi
from sklearn_hcal.metrics import annotator_agreement, fleiss_kappa, krippendorff_alpha
from tests.conftest import require_data

LONG = "item,annotator,label\n1,a,1\n1,b,1\n2,a,2\n2,b,1\n3,a,3\n3,b,3\n3,c,2\n"
COUNTS = "uid,lo,mid,hi\nq1,3,0,0\nq2,1,2,0\nq3,0,1,2\nq4,0,0,3\n"


def _run(capsys, *argv):
    status = main(["agreement", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def _values(out: str) -> dict:
    """``{row name: value}`` of the printed Markdown table(s)."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) >= 2:
            try:
                rows[cells[0]] = float(cells[1].split(" [")[0])
            except ValueError:
                continue
    return rows


def test_lewidi_file_prints_alpha_at_the_levels_of_its_scale(capsys):
    path = require_data("lewidi", "2025", "CSC_dev.json")
    status, out, err = _run(capsys, path)
    assert status == 0, err
    frame = load_lewidi(path).frame
    got = _values(out)
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff_alpha(frame, level=level)
        assert got[f"alpha_{level}"] == pytest.approx(expected, abs=5e-5)
    assert "* alpha: Krippendorff's α" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_chaosnli_counts_print_fleiss_kappa_for_equal_panels(capsys):
    path = require_data("chaosnli_v1.0", "chaosNLI_snli.jsonl")
    status, out, err = _run(capsys, path, "--format", "json")
    assert status == 0, err
    table = json.loads(out)
    from sklearn_hcal.datasets import load_chaosnli

    counts = load_chaosnli("snli", path=path).counts
    assert table["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(counts))
    assert table["alpha_nominal"]["value"] == pytest.approx(krippendorff_alpha(counts))


def test_long_csv_and_counts_csv(tmp_path, capsys):
    long = tmp_path / "long.csv"
    long.write_text(LONG)
    status, out, err = _run(capsys, long, "--by-annotator", "--width", "80")
    assert status == 0, err
    table = pd.read_csv(long)
    got = _values(out)
    assert got["alpha_nominal"] == pytest.approx(krippendorff_alpha(table), abs=5e-5)
    assert got["alpha_interval"] == pytest.approx(
        krippendorff_alpha(table, level="interval"), abs=5e-5
    )
    per_annotator = annotator_agreement(table)
    assert "| annotator |" in out and "* change:" in out
    assert got["c"] == per_annotator.loc["c", "n_annotations"]
    counts = tmp_path / "counts.csv"
    counts.write_text(COUNTS)
    status, out, err = _run(capsys, counts, "--order", "lo,mid,hi")
    assert status == 0, err
    frame = pd.read_csv(counts, index_col="uid")
    got = _values(out)
    assert got["alpha_ordinal"] == pytest.approx(
        krippendorff_alpha(frame, level="ordinal", labels=["lo", "mid", "hi"]),
        abs=5e-5,
    )
    assert got["fleiss_kappa"] == pytest.approx(fleiss_kappa(frame), abs=5e-5)
    assert "alpha_interval" not in got  # words have no distances


def test_bootstrap_interval_is_printed_and_reproducible(tmp_path, capsys):
    counts = tmp_path / "counts.npy"
    np.save(counts, np.random.default_rng(0).multinomial(4, [0.6, 0.3, 0.1], 200))
    argv = (counts, "--bootstrap", "100", "--seed", "3", "--format", "csv")
    status, first, err = _run(capsys, *argv)
    assert status == 0, err
    _, second, _ = _run(capsys, *argv)
    assert first == second
    table = pd.read_csv(pd.io.common.StringIO(first), index_col=0)
    ci = krippendorff_alpha(
        np.load(counts), level="ordinal", n_bootstrap=100, random_state=3
    )
    assert table.loc["alpha_ordinal", "value_low"] == pytest.approx(ci.low)
    assert table.loc["alpha_ordinal", "value_high"] == pytest.approx(ci.high)


@pytest.mark.parametrize(
    "files, argv, match",
    [
        ({}, ["missing.csv"], "missing.csv: no such file"),
        ({"c.csv": COUNTS}, ["c.csv", "--by-annotator"], "without annotator ids"),
        ({"c.csv": COUNTS}, ["c.csv", "--level", "interval"], "needs numeric values"),
        ({"c.csv": COUNTS}, ["c.csv", "--level", "nominall"], "unknown level"),
        ({"c.csv": COUNTS}, ["c.csv", "--confidence", "1.5"], r"\(0, 1\)"),
        (
            {"l.csv": "item,annotator,label\n1,a,x\n2,a,y\n"},
            ["l.csv"],
            "no item has two annotations",
        ),
        (
            {"l.csv": "item,annotator,label\n1,a,x\n1,a,y\n"},
            ["l.csv"],
            "annotator 'a' labels item 1 twice",
        ),
        (
            {"p.csv": "lo,hi\n0.5,0.5\n0.2,0.8\n"},
            ["p.csv"],
            "human probabilities, not counts",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(
    tmp_path, capsys, monkeypatch, files, argv, match
):
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    status, out, err = _run(capsys, *argv)
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("hcal: error: ")
    assert re.search(match, err), err
