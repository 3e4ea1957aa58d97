"""The bootstrap's progress inside a longer run goes on from the run's clock."""

import io
import re
import time

import numpy as np

from sklearn_hcal.metrics import human_calibration_report
from sklearn_hcal.utils._progress import Progress


def _stamps(text):
    return [float(s) for s in re.findall(r"\[\s*([0-9.]+)s\]", text)]


def _data():
    rng = np.random.RandomState(0)
    Y = rng.multinomial(5, [0.5, 0.3, 0.2], size=40)
    P = rng.dirichlet([1, 1, 1], size=40)
    return Y, {"m": P}


def test_bootstrap_bar_continues_the_run_clock(capsys):
    # A run that started 100 s ago: the bootstrap's bar, created inside it,
    # must not restart at 0.
    run = Progress(io.StringIO(), start=time.perf_counter() - 100.0)
    Y, preds = _data()
    with run.shared_clock():
        human_calibration_report(
            Y, preds, metrics=["jsd"], n_bootstrap=8, random_state=0, verbose=1
        )
    stamps = _stamps(capsys.readouterr().err)
    assert stamps and min(stamps) >= 100.0


def test_bootstrap_bar_alone_starts_at_0(capsys):
    Y, preds = _data()
    human_calibration_report(
        Y, preds, metrics=["jsd"], n_bootstrap=8, random_state=0, verbose=1
    )
    stamps = _stamps(capsys.readouterr().err)
    assert stamps and max(stamps) < 100.0


def test_shared_clock_ends_with_its_block():
    run = Progress(io.StringIO(), start=time.perf_counter() - 100.0)
    with run.shared_clock():
        inner = Progress(io.StringIO())
    after = Progress(io.StringIO())
    assert inner._start == run._start
    assert after._start > run._start + 50
