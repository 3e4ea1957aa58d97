"""Temperature scaling with one label per item, and its standard error.

Simulations with a known truth (``make_label_histograms(temperature=T)``:
``Q = softmax(z / T)``, so the best inverse temperature is exactly ``1/T``),
and the sandwich standard error against a numerical one computed here with
scipy alone (``scipy.differentiate`` for the item scores and the information,
``scipy.optimize.brentq`` for the root).
"""

import warnings

import numpy as np
import pytest
from scipy.differentiate import derivative
from scipy.optimize import brentq
from scipy.special import logsumexp

from sklearn_hcal.calibration import TemperatureScaler
from sklearn_hcal.datasets import make_label_histograms, sample_annotations

T_TRUE = 2.0


@pytest.mark.parametrize("source", ["histogram", "Q"])
def test_single_label_fit_recovers_a_known_temperature(source):
    # 5,000 items, one label each: drawn from a 10-label histogram, or
    # straight from Q (a histogram of one annotation per item)
    if source == "histogram":
        Z, Y, _ = make_label_histograms(
            5000, 4, 10, scale=3.0, temperature=T_TRUE, random_state=0
        )
        y = sample_annotations(Y, random_state=1)
    else:
        Z, y, _ = make_label_histograms(
            5000, 4, 1, scale=3.0, temperature=T_TRUE, random_state=2
        )
    ts = TemperatureScaler().fit(Z, y)
    assert ts.temperature_ == pytest.approx(T_TRUE, rel=0.10)
    # the standard error says how close: well inside the 10% here
    assert 0 < ts.temperature_se_ < 0.03 * T_TRUE
    assert abs(ts.temperature_ - T_TRUE) < 4 * ts.temperature_se_


def test_majority_labels_bias_the_temperature_low():
    Z, Y, _ = make_label_histograms(
        5000, 4, 10, scale=3.0, temperature=T_TRUE, random_state=3
    )
    single = TemperatureScaler().fit(Z, sample_annotations(Y, random_state=4))
    majority = TemperatureScaler().fit(Z, Y.argmax(1))
    assert abs(single.temperature_ - T_TRUE) < 3 * single.temperature_se_
    # majority votes are more confident than the humans: too low a T, by
    # far more than the noise of a fit
    assert majority.temperature_ < 0.8 * T_TRUE
    assert T_TRUE - majority.temperature_ > 10 * majority.temperature_se_


def test_standard_error_interval_covers_the_truth_and_the_full_fit():
    n_rep, beta_true = 100, 1 / T_TRUE
    covered_beta, covered_t, z_truth, z_full = [], [], [], []
    for rep in range(n_rep):
        Z, Y, _ = make_label_histograms(
            1000, 4, 10, scale=3.0, temperature=T_TRUE, random_state=100 + rep
        )
        single = TemperatureScaler().fit(Z, sample_annotations(Y, random_state=rep))
        full = TemperatureScaler().fit(Z, Y)
        covered_beta.append(abs(single.beta_ - beta_true) < 1.96 * single.beta_se_)
        covered_t.append(
            abs(single.temperature_ - T_TRUE) < 1.96 * single.temperature_se_
        )
        z_truth.append((single.beta_ - beta_true) / single.beta_se_)
        gap = single.temperature_ - full.temperature_
        z_full.append(gap / single.temperature_se_)
    # coverage 0.95: with 100 replicates, 3 binomial sd is 0.065
    assert 0.95 - 0.065 <= np.mean(covered_beta) <= 1.0
    assert 0.95 - 0.065 <= np.mean(covered_t) <= 1.0
    # and the se is not too large either: z-scores with sd ≈ 1 (sd of the
    # sd over 100 replicates ≈ 0.07)
    assert 0.8 < np.std(z_truth) < 1.2
    # the documented rule: within ±2 se of the full-histogram fit on the
    # same items, typically (the full fit is not the truth, so sd ≈ 1 too)
    assert 0.8 < np.std(z_full) < 1.3
    assert np.mean(np.abs(z_full) < 2) >= 0.9


def _item_nll(beta, n, yz, *z):
    """Item i's NLL at its own beta[i] (elementwise, as scipy wants)."""
    return n * logsumexp(np.stack([beta * zk for zk in z], axis=-1), axis=-1) - (
        beta * yz
    )


def _item_score(beta, *args):
    return derivative(_item_nll, beta, args=args).df


def _numerical_sandwich(Z, Y, w):
    """β̂ and its sandwich se from the per-item NLL, by scipy alone."""
    # per-item data as arguments: scipy subsets them with the items it
    # still iterates on
    args = (Y.sum(axis=1), np.sum(Y * Z, axis=1), *Z.T)

    def total_score(b):
        return float(w @ _item_score(np.full(len(Z), b), *args))

    beta = brentq(total_score, 1e-3, 20.0, xtol=1e-14, rtol=1e-14)
    at = np.full(len(Z), beta)
    g = _item_score(at, *args)
    h = derivative(_item_score, at, args=args).df
    return beta, np.sqrt(w @ (g * g)) / (w @ h)


@pytest.mark.parametrize("labels", ["single", "histogram"])
def test_standard_error_equals_a_numerical_sandwich(labels):
    Z, Y, _ = make_label_histograms(
        300, 3, 5, scale=2.0, temperature=1.5, random_state=5
    )
    w = np.random.RandomState(5).uniform(0.2, 3.0, len(Z))
    if labels == "single":
        y = sample_annotations(Y, random_state=6)
        Y = np.eye(3)[y]
    else:
        y = Y
    beta, se = _numerical_sandwich(Z, Y.astype(float), w)
    ts = TemperatureScaler().fit(Z, y, sample_weight=w)
    # measured: 1e-12 and 4e-11 apart
    assert ts.beta_ == pytest.approx(beta, rel=1e-10)
    assert ts.beta_se_ == pytest.approx(se, rel=1e-8)
    assert ts.temperature_se_ == pytest.approx(se / beta**2, rel=1e-8)


def test_standard_error_is_nan_with_a_warning_where_undefined():
    Y = np.array([[2, 1, 0], [0, 3, 1], [1, 1, 1]])
    with pytest.warns(UserWarning, match="constant.*standard error to NaN"):
        flat = TemperatureScaler().fit(np.zeros((3, 3)), Y)
    assert np.isnan(flat.beta_se_) and np.isnan(flat.temperature_se_)
    Z = np.array([[3.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.5, 4.0]])
    with pytest.warns(UserWarning, match="temperature goes to 0.*standard error"):
        sharp = TemperatureScaler().fit(Z, np.eye(3) * 4)  # separable
    assert np.isnan(sharp.beta_se_) and np.isnan(sharp.temperature_se_)
    with pytest.warns(UserWarning, match="infinite.*standard error to NaN"):
        anti = TemperatureScaler().fit(Z, np.eye(3)[Z.argmin(1)] * 2)  # β = 0
    assert np.isnan(anti.beta_se_) and np.isnan(anti.temperature_se_)
    # an ordinary fit: finite, positive, no warning
    Z, Y, _ = make_label_histograms(200, 3, 1, random_state=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ts = TemperatureScaler().fit(Z, Y)
    assert np.isfinite(ts.beta_se_) and ts.beta_se_ > 0
