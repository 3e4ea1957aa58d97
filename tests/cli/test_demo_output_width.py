"""``hcal demo`` prints its tables, legend and notes within 80 columns.

Before: ~250-character lines (three wide tables with bootstrap intervals).
The files keep the wide tables; only what is printed is fitted.
"""

import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

import sklearn_hcal
from sklearn_hcal.cli._demo import DEMO_TABLES

pytest.importorskip("torch")
pytest.importorskip("skorch")
# trains a network in a subprocess: ~10 s on a shared machine
pytestmark = pytest.mark.slow


def test_demo_output_fits_80_columns(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["MPLBACKEND"] = "Agg"
    root = str(Path(sklearn_hcal.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    out = tmp_path / "demo"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sklearn_hcal",
            "demo",
            "--quick",
            "--epochs",
            "2",
            "--bootstrap",
            "5",
            "--no-figures",
            "--quiet",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    widths = [sum(1 for c in ln if not unicodedata.combining(c)) for ln in lines]
    assert max(widths) <= 80, lines[widths.index(max(widths))]
    legend = {ln[2:].partition(": ")[0] for ln in lines if ln.startswith("* ")}
    for spec in DEMO_TABLES.values():
        for _, header in spec:
            assert header in legend, header
    assert any(ln.startswith("* Temperature scaling (T = ") for ln in lines)
    # the files keep one row per method, as before
    md = (out / "mimori.md").read_text(encoding="utf-8").splitlines()
    headers = " | ".join(h for _, h in DEMO_TABLES["mimori"])
    assert md[0] == f"| method | {headers} |"
    assert len(md) == 2 + 7
