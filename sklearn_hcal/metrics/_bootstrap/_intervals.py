"""Confidence intervals from the bootstrap's replicates."""

from __future__ import annotations

import numpy as np

__all__ = ["bootstrap_intervals"]


def bootstrap_intervals(point, boot, confidence_level, ci_method):
    """``(low, high)`` from replicates ``boot`` (resamples first) and ``point``.

    ``"bias_corrected"``: percentile interval shifted by the bootstrap bias
    ``mean(replicates) − estimate``; ``"percentile"``; ``"basic"``:
    ``2·estimate − q``. NaN replicates (a metric undefined on a resample) are
    left out.
    """
    alpha = 1.0 - confidence_level
    low, high = _nanquantiles(boot, [alpha / 2, 1 - alpha / 2])
    if ci_method == "bias_corrected":
        bias = np.nanmean(boot, axis=0) - point
        return low - bias, high - bias
    if ci_method == "basic":
        return 2 * point - high, 2 * point - low
    return low, high


def _nanquantiles(boot, q) -> np.ndarray:
    """``np.nanquantile(boot, q, axis=0)``, with ``np.quantile`` on the
    columns without NaN: on those it picks and interpolates the same order
    statistics (the same numbers, tested), in one call instead of
    ``nanquantile``'s Python loop over the columns (1–2 ms a report)."""
    has_nan = np.isnan(boot).any(axis=0)
    if not has_nan.any():
        return np.quantile(boot, q, axis=0)
    out = np.quantile(boot, q, axis=0)
    out[:, has_nan] = np.nanquantile(boot[:, has_nan], q, axis=0)
    return out
