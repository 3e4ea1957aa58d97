"""Krippendorff's α's bootstrap interval, on the report's resamples.

α is a ratio of sums over items, so a resample's α is read off the items'
contributions weighted by their multiplicities in the report's resamples
(:func:`~sklearn_hcal.metrics._bootstrap.resampled_sums`): a given
``random_state`` draws the resamples of ``resample_weights``, and no
resample is materialised (developer guide §agreement).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import NamedTuple

import numpy as np

from ...utils._compat import Interval, StrOptions
from .._bootstrap import bootstrap_intervals, resampled_sums
from ._kernels import alpha_from_coincidences, distances, item_coincidences

__all__ = ["BOOTSTRAP", "AlphaInterval", "alpha_interval"]

#: The interval's parameters, as :func:`krippendorff_alpha` takes them.
BOOTSTRAP = {
    "n_bootstrap": [Interval(Integral, 0, None, closed="left")],
    "confidence_level": [Interval(Real, 0, 1, closed="neither")],
    "ci_method": [StrOptions({"percentile", "basic", "bias_corrected"})],
    "random_state": ["random_state"],
}


class AlphaInterval(NamedTuple):
    """α and the ends of its bootstrap interval."""

    alpha: float
    low: float
    high: float


def alpha_interval(alpha: float, Y, values, level: str, boot: dict) -> AlphaInterval:
    """α with the interval of its ``boot["n_bootstrap"]`` replicates.

    ``Y`` holds the pairable items' counts (rows) in scale order; ``boot``
    the parameters of :data:`BOOTSTRAP`.
    """
    replicates = _alpha_replicates(
        Y, values, level, boot["n_bootstrap"], boot["random_state"]
    )
    low, high = bootstrap_intervals(
        alpha, replicates, boot["confidence_level"], boot["ci_method"]
    )
    return AlphaInterval(alpha, float(low), float(high))


def _alpha_replicates(Y, values, level, n_bootstrap, random_state) -> np.ndarray:
    """α of ``n_bootstrap`` resamples of the items (rows of ``Y``).

    α is a function of sums over items, so a resample's α is read off the
    items' contributions weighted by their multiplicities, drawn by the
    report's bootstrap (:mod:`.._bootstrap`: one ``SeedSequence`` stream per
    chunk of resamples, the same replicates for any chunking): ``o``'s
    entries for the ordinal level (its distance depends on the resample's
    totals), else each item's observed disagreement and counts.
    """
    N, K = Y.shape
    if level == "ordinal":
        features = item_coincidences(Y).reshape(N, K * K)
    else:
        d = distances(values, level, None)
        g = 1.0 / (Y.sum(axis=1) - 1.0)
        observed = ((Y @ d) * Y).sum(axis=1) * g
        features = np.column_stack([observed, Y])
    sums = resampled_sums(features, random_state, n_bootstrap)
    if level == "ordinal":
        return alpha_from_coincidences(sums.reshape(-1, K, K), values, level)
    observed, n_v = sums[:, 0], sums[:, 1:]
    n = n_v.sum(axis=1)
    expected = np.einsum("bc,ck,bk->b", n_v, d, n_v)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    return np.where(expected > 0, alpha, np.nan)
