"""The bootstrap driver's weight matrices: a few, drawn over again.

When the products of one block of items run on this process's threads,
each chunk's weight matrix is returned once its products are done and the
drawing thread waits for one rather than drawing into fresh memory: no
more than ``_MATRICES`` are in use, the replicates are those of joblib's
workers (which get fresh matrices), and a report that fails while the
drawing thread waits still ends.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import sklearn_hcal.metrics._bootstrap._driver as driver
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import human_calibration_report
from sklearn_hcal.metrics._bootstrap._resamples import _chunk_weights


def _report(n_jobs):
    _, Y, F = make_label_histograms(300, 4, 5, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, replicates = human_calibration_report(
            Y,
            {"m": F},
            n_bootstrap=1000,
            random_state=5,
            return_bootstrap=True,
            n_jobs=n_jobs,
        )
    return replicates.to_numpy()


def test_chunks_are_drawn_into_a_few_matrices(monkeypatch):
    # 1,000 resamples of 300 items: 15 chunks of 64 and one of 40, drawn
    # up to 8 ahead of the products
    drawn = []

    def recorded(*args):
        weights = _chunk_weights(*args)
        drawn.append(weights)
        return weights

    monkeypatch.setattr(driver, "_chunk_weights", recorded)
    got = _report(n_jobs=1)
    assert len(drawn) == 16
    # the last, shorter chunk needs a matrix of its own shape
    assert len({id(w) for w in drawn}) <= driver._MATRICES + 1
    monkeypatch.undo()
    np.testing.assert_array_equal(got, _report(n_jobs=2))


def test_a_report_that_fails_while_the_drawing_thread_waits_ends(monkeypatch):
    # the products fail before any matrix is returned: the drawing thread,
    # waiting for one, must be let go, or the report never returns
    def fail(*args):
        raise RuntimeError("the products failed")

    monkeypatch.setattr(driver, "_reconstructed", fail)
    outcome = []

    def run():
        try:
            _report(n_jobs=1)
        except RuntimeError as error:
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert outcome and "the products failed" in str(outcome[0])


@pytest.mark.parametrize("cap", [None, 2])
def test_spare_matrices_are_drawn_over_in_the_order_returned(cap):
    spare = driver._Spare(cap)
    seeds = np.random.SeedSequence(0).spawn(3)
    first = spare.draw(seeds[0], 50, 4)
    second = spare.draw(seeds[1], 50, 4)
    spare.append(first)
    third = spare.draw(seeds[2], 50, 4)
    assert third is first and second is not first
    spare.close()


@pytest.mark.parametrize("n_resamples", [1, 2, 5, 40, 1000])
def test_interval_quantiles_are_nanquantiles(n_resamples):
    # the columns without NaN take np.quantile: the same numbers as
    # nanquantile's per-column loop, ties and all; the columns with some or
    # only NaN keep nanquantile
    from sklearn_hcal.metrics._bootstrap._intervals import _nanquantiles

    rng = np.random.default_rng(n_resamples)
    boot = rng.normal(size=(n_resamples, 3, 6)) * 10.0 ** rng.integers(-5, 5, 6)
    boot[:, 0, 1] = np.round(boot[:, 0, 1])  # ties
    boot[::3, 1, 2] = np.nan
    boot[:, 2, 4] = np.nan
    q = [0.025, 0.975, 0.5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the all-NaN column
        got = _nanquantiles(boot, q)
        expected = np.nanquantile(boot, q, axis=0)
    assert got.tobytes() == expected.tobytes()
    clean = boot[:, :1]  # no NaN at all: one np.quantile call
    expected = np.nanquantile(clean, q, axis=0)
    assert _nanquantiles(clean, q).tobytes() == expected.tobytes()
