"""Bayes decisions: the label to predict from a predicted distribution.

Each LeWiDi perspectivist score is the mean of a loss between an
annotator's label ``t`` and the prediction ``d``; the prediction that
minimises its expectation under the predicted distribution ``p`` is

* the mode ``argmax_k p_k`` for the error rate (0-1 loss);
* a median of ``p`` for the absolute distance on an ordinal scale
  (``E|t − d|`` is minimal where the cumulative probability first reaches
  1/2; Bayes' rule for the absolute loss);
* for multi-label data, label by label: predict the label where
  ``P(label applies) ≥ 1/2`` (the mean over labels of ``|t_l − d_l|``
  separates into one 0-1 loss per label).

Ties: the first class (the lowest on an ordinal scale), as ``argmax`` does.
"""

from __future__ import annotations

import numpy as np

__all__ = ["median_decision", "mode_decision", "threshold_decision"]

#: Cumulative probabilities within this of 1/2 count as reaching it (sums of
#: floats: 0.1 + 0.4 is 0.49999999999999994).
_CDF_TOL = 1e-12


def mode_decision(P: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """The most probable class of each row (first of tied classes)."""
    return np.asarray(classes)[np.asarray(P).argmax(axis=1)]


def median_decision(P: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """The lowest class whose cumulative probability reaches 1/2.

    ``classes`` are the columns of ``P`` in scale order.
    """
    cdf = np.cumsum(np.asarray(P, dtype=np.float64), axis=1)
    return np.asarray(classes)[(cdf >= 0.5 - _CDF_TOL).argmax(axis=1)]


def threshold_decision(P: np.ndarray, threshold: float = 0.5) -> np.ndarray:
    """0/1 indicators ``P(label applies) ≥ threshold``, label by label."""
    return (np.asarray(P) >= threshold).astype(np.int64)
