"""Ctrl-C during AlphaCalibrator's Adam fit stops the fit.

skorch catches ``KeyboardInterrupt`` inside its training loop so that an
interactive user keeps a half-trained network; a calibrator must not return
a half-fitted α model without a word.
"""

import os
import signal
import threading

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_hcal import AlphaCalibrator
from sklearn_hcal.datasets import make_label_histograms

pytest.importorskip("skorch")


@pytest.mark.slow
@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signals reach the main thread only",
)
def test_sigint_during_the_adam_fit_raises():
    X, Y, _ = make_label_histograms(4000, 3, 5, n_features=3, random_state=0)
    Z = np.log(np.clip(X @ np.eye(3), 1e-3, None) + 1.0)
    # a first short fit imports torch and skorch, so that the signal below
    # lands in the training loop, not in an import
    # (two epochs: the warm-up's fit stops early, and says so)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        AlphaCalibrator(solver="adam", max_iter=2, random_state=0).fit(Z[:50], Y[:50])
    cal = AlphaCalibrator(
        solver="adam", max_iter=10**6, n_iter_no_change=10**6, random_state=0
    )
    timer = threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            cal.fit(Z, Y)
    finally:
        timer.cancel()
    assert not hasattr(cal, "coefs_")  # nothing half-fitted was kept
