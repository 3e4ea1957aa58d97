"""Ctrl-C during ``hcal demo`` training stops the demo (exit 130, no tables).

skorch's fit loop catches ``KeyboardInterrupt`` and returns a half-trained
network; the demo must not calibrate, evaluate and write tables from it. A
real SIGINT goes to a real ``python -m sklearn_hcal demo`` process once it
reports its first training epoch.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sklearn_hcal

pytest.importorskip("torch")
pytest.importorskip("skorch")
pytestmark = [
    # a process that imports torch and trains: ~5-15 s on a shared machine
    pytest.mark.slow,
    pytest.mark.skipif(
        sys.platform == "win32", reason="SIGINT to a child process is POSIX"
    ),
]


def _default_sigint():
    # A shell without job control starts background jobs with SIGINT
    # ignored, and Python keeps it ignored; the test wants Ctrl-C as a
    # terminal delivers it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sigint_during_training_exits_130_and_writes_no_table(tmp_path):
    out = tmp_path / "demo"
    env = dict(os.environ, MPLBACKEND="Agg")
    # the package under test, whatever the working folder
    root = str(Path(sklearn_hcal.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sklearn_hcal",
            "demo",
            "--quick",
            "--epochs",
            "500",  # training outlasts the signal by far
            "--bootstrap",
            "0",
            "--no-figures",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_default_sigint,
    )
    try:
        lines = []
        deadline = time.monotonic() + 120
        for line in proc.stderr:
            lines.append(line)
            if "training CNN epoch" in line:
                break
            assert time.monotonic() < deadline, "".join(lines)
        else:
            pytest.fail("the demo ended before training:\n" + "".join(lines))
        proc.send_signal(signal.SIGINT)
        stdout, rest = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = "".join(lines) + rest
    assert proc.returncode == 130, stderr
    assert stderr.rstrip().endswith("hcal: interrupted"), stderr
    # nothing after training: no calibration, no table, no figure
    assert "calibrating" not in stderr
    assert stdout == ""
    assert sorted(p.name for p in out.iterdir()) == []
