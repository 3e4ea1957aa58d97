"""Ordinal metrics read a scale, never a column order they were not told.

CSC's points renamed to words and stored alphabetically: the column order
is another scale, so the Wasserstein distance and RPS refuse the words
without ``order=`` (in the functions and the report's columns)
instead of scoring the wrong scale; with ``order=`` they equal the value on
the numeric scale (scipy's Wasserstein distance as the independent check).
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance as scipy_wasserstein

from sklearn_hcal.metrics import (
    human_calibration_report,
    ranked_probability_score_loss,
    wasserstein_distance,
)

WORDS = ["never", "rarely", "sometimes", "often", "usually", "always"]


def _csc_like(seed=0, n=80):
    rng = np.random.default_rng(seed)
    Y = rng.multinomial(4, rng.dirichlet(np.ones(6), size=n))
    P = rng.dirichlet(np.ones(6), size=n)
    return Y, P


def _scipy(Y, P):
    x = np.arange(6.0)
    return np.mean([scipy_wasserstein(x, x, y, p) for y, p in zip(Y, P)])


def test_word_classes_without_order_are_refused_everywhere():
    Y, P = _csc_like()
    alpha = sorted(WORDS)  # the columns as a DataFrame would sort them
    perm = [WORDS.index(w) for w in alpha]
    H = pd.DataFrame(Y[:, perm], columns=alpha)
    Q = pd.DataFrame(P[:, perm], columns=alpha)
    truth = _scipy(Y, P)
    # read in column order the value is another scale's
    assert abs(wasserstein_distance(H.to_numpy(), Q.to_numpy()) - truth) > 0.01
    for metric in (wasserstein_distance, ranked_probability_score_loss):
        with pytest.raises(ValueError, match=r"not numbers.*order="):
            metric(H, Q)
    with pytest.raises(ValueError, match="order="):
        human_calibration_report(H, {"m": Q}, metrics=["wasserstein"])
    # with the order: the numeric scale's value, whatever the column order
    assert wasserstein_distance(H, Q, order=WORDS) == pytest.approx(truth, rel=1e-12)
    report = human_calibration_report(
        H,
        {"m": Q},
        metrics=["wasserstein"],
        metric_params={"wasserstein": {"order": WORDS}},
    )
    assert report.loc["m", "wasserstein"] == pytest.approx(truth, rel=1e-12)


def test_two_word_classes_need_no_order():
    # both orders of a two-point scale give the same value
    rng = np.random.default_rng(1)
    Y = rng.multinomial(5, [0.3, 0.7], size=20)
    P = rng.dirichlet(np.ones(2), size=20)
    H = pd.DataFrame(Y, columns=["no", "yes"])
    Q = pd.DataFrame(P, columns=["no", "yes"])
    assert wasserstein_distance(H, Q) == pytest.approx(
        wasserstein_distance(Y, P), rel=1e-12
    )
