"""Conformal p-values from weighted calibration scores (Stutz et al. 2023).

Every calibration mode of :class:`~sklearn_hcal.conformal.HumanConformalClassifier`
is one formula. Item ``i`` contributes the scores ``S_ik`` of all classes
with weights ``w_ik ≥ 0`` summing to one over ``k``:

* the majority label: ``w_i = onehot(majority)``;
* Monte Carlo with ``m`` labels ``Y_i^1 … Y_i^m`` drawn from the item's
  histogram: ``w_ik = #{j : Y_i^j = k} / m``;
* the histogram's exact distribution (``m → ∞``): ``w_ik = p̂_ik``.

The p-value of a test score ``s`` is

    p(s) = (1 + Σ_i Σ_k w_ik 1[S_ik ≥ s]) / (n + 1),

which for ``m = 1`` (one-hot weights) is split conformal prediction's
p-value and for ``m > 1`` is the average over ``j`` of the ``m`` p-values
computed with the ``j``-th sampled labels, i.e. the Monte Carlo p-value of
Stutz et al. (2023, §3). The set at level ``1 − α`` keeps the classes with
``p > α``.

Guarantees (coverage of a label drawn from the test item's histogram):
``m = 1``: ``≥ 1 − α`` (split conformal prediction; exchangeable items).
``m > 1`` and the exact distribution: ``≥ 1 − 2α``, because an average of
valid p-values, doubled, is a valid p-value (Stutz et al. 2023, who cite
Rüschendorf 1982 / Vovk and Wang 2020) -- in practice coverage is close to
``1 − α``. :func:`ecdf_corrected_pvalues` restores ``≥ 1 − α`` in finite
samples with held-out items.

Comparing a p-value with ``α``: the p-values are fractions ``c / (n + 1)``
and ``α`` is the decimal the user wrote, so the comparison must be exact. In
floating point ``1 − 0.9`` is ``0.09999999999999998``: a p-value of exactly
``1/10`` (``n = 9``) or ``100/1000`` (``n = 999``) would pass ``p > α`` and
put one calibration score too many into every set.
:func:`pvalues_above_alpha` reads ``α`` as the exact decimal
(``Fraction(repr(0.9)) = 9/10``) and counts p-values within a relative
``PVALUE_RTOL`` of it as equal to it; the Monte Carlo weights are summed as
integers (``m`` draws per item), so their p-values are exact fractions.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = [
    "PVALUE_RTOL",
    "alpha_of_level",
    "ecdf_corrected_pvalues",
    "mc_label_weights",
    "pvalue_threshold",
    "pvalues_above_alpha",
    "weighted_pvalues",
]

#: P-values within this relative distance of ``α`` count as equal to it.
#: Distinct fractions ``c / (n + 1)`` and a 3-decimal ``α`` differ by at least
#: ``1e-3 / (m (n + 1))`` (``1e-11`` relative at ``n = 10⁶``, ``m = 100``),
#: the float sum of exact weights errs by far less.
PVALUE_RTOL = 1e-12


def _decimal(value) -> Fraction:
    """A float as the decimal it was written as: ``0.9`` is ``9/10``."""
    if isinstance(value, Fraction):
        return value
    return Fraction(repr(float(value)))


def alpha_of_level(confidence_level) -> Fraction:
    """``α = 1 − confidence_level``, exactly (``1 − 0.9`` is ``1/10``).

    Examples
    --------
    >>> from sklearn_hcal.conformal._quantiles import alpha_of_level
    >>> alpha_of_level(0.9), 1 - 0.9
    (Fraction(1, 10), 0.09999999999999998)
    """
    return 1 - _decimal(confidence_level)


def pvalues_above_alpha(pvalues, alpha) -> np.ndarray:
    """``p > α`` for conformal p-values, ``α`` read as an exact decimal.

    Parameters
    ----------
    pvalues : ndarray
        Conformal p-values (fractions ``c / (n + 1)``).
    alpha : float or Fraction
        The level's ``α``; a float is read as the decimal it prints as
        (:func:`alpha_of_level` gives it from a confidence level).

    Returns
    -------
    above : ndarray of bool, the shape of ``pvalues``
        P-values within a relative ``PVALUE_RTOL`` of ``α`` are not above it.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.conformal._quantiles import pvalues_above_alpha
    >>> p = np.array([1, 2]) / 10  # n = 9 calibration items
    >>> (p > 1 - 0.9).tolist(), pvalues_above_alpha(p, 0.1).tolist()
    ([True, True], [False, True])
    """
    bound = float(_decimal(alpha))
    return np.asarray(pvalues, dtype=np.float64) > bound * (1.0 + PVALUE_RTOL)


def mc_label_weights(p_hat, n_labels, random_state) -> np.ndarray:
    """Weights ``#{j : Y_i^j = k} / m`` of ``m`` labels drawn from each row.

    ``p_hat`` rows are probabilities; one multinomial draw per item is the
    same as ``m`` independent categorical draws (only the counts matter).
    """
    rng = np.random.default_rng(random_state)
    counts = rng.multinomial(n_labels, p_hat)
    return counts / float(n_labels)


def _tail(scores, weights):
    """Sorted scores and ``tail[r] = Σ weights of scores ≥ sorted[r]``.

    ``tail`` has one more entry (0, for scores above every calibration
    score) so that ``searchsorted`` indexes it directly.
    """
    scores = np.asarray(scores, dtype=np.float64).ravel()
    weights = np.asarray(weights, dtype=np.float64).ravel()
    keep = weights > 0
    scores, weights = scores[keep], weights[keep]
    order = np.argsort(scores, kind="stable")
    scores, weights = scores[order], weights[order]
    tail = np.zeros(scores.size + 1)
    tail[:-1] = _exact_cumsum(weights[::-1])[::-1]
    return scores, tail


def _exact_cumsum(weights) -> np.ndarray:
    """Cumulative sums of weights, exact when they are multiples of ``1/m``.

    Monte Carlo weights are counts over ``m`` draws; a float running sum
    of ``k/m`` drifts from the fraction it stands for, which matters where a
    p-value meets ``α``. Such weights are summed as integers and divided
    once; other weights (a histogram's ``Y_ik / n_i``) in floating point.
    """
    positive = weights[weights > 0]
    if positive.size:
        m = np.rint(1.0 / positive.min())
        units = np.rint(weights * m)
        if 1 <= m <= 2**20 and np.all(np.abs(weights * m - units) < 1e-9):
            return np.cumsum(units.astype(np.int64)) / m
    return np.cumsum(weights)


def weighted_pvalues(cal_scores, cal_weights, test_scores, n_items) -> np.ndarray:
    """Conformal p-values ``(1 + Σ w 1[S ≥ s]) / (n + 1)`` of test scores.

    Parameters
    ----------
    cal_scores, cal_weights : ndarray of shape (n_items, n_classes)
        Calibration scores and their weights (rows summing to one).
    test_scores : ndarray of any shape
        Scores ``s`` to evaluate.
    n_items : int
        Number of calibration items ``n``.

    Returns
    -------
    pvalues : ndarray of the shape of ``test_scores``

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.conformal._quantiles import weighted_pvalues
    >>> S = np.array([[0.1, 0.9], [0.4, 0.6]])
    >>> W = np.array([[1.0, 0.0], [0.5, 0.5]])
    >>> weighted_pvalues(S, W, np.array([0.5]), 2).tolist()  # (1 + 0.5) / 3
    [0.5]
    """
    sorted_scores, tail = _tail(cal_scores, cal_weights)
    test_scores = np.asarray(test_scores, dtype=np.float64)
    # first calibration score >= s: every score from there on counts
    where = np.searchsorted(sorted_scores, test_scores, side="left")
    # the weights sum to n in exact arithmetic; their float sum may pass it
    return np.minimum((1.0 + tail[where]) / (n_items + 1.0), 1.0)


def pvalue_threshold(cal_scores, cal_weights, n_items, alpha) -> float:
    """The largest score ``q`` whose p-value exceeds ``α`` (an exact decimal).

    The p-value is non-increasing in ``s`` and changes only at calibration
    scores, so ``{s : p(s) > α} = (−∞, q]``: ``q`` is the largest
    calibration score with ``p > α``, ``+inf`` when even scores above all of
    them keep ``p = 1/(n + 1) > α`` (too few items for the level), and
    ``−inf`` when no score qualifies.
    """
    sorted_scores, tail = _tail(cal_scores, cal_weights)
    if pvalues_above_alpha(1.0 / (n_items + 1.0), alpha):
        return np.inf
    p = (1.0 + tail[:-1]) / (n_items + 1.0)
    ok = np.flatnonzero(pvalues_above_alpha(p, alpha))
    return float(sorted_scores[ok[-1]]) if ok.size else -np.inf


def ecdf_corrected_pvalues(holdout_pvalues, pvalues) -> np.ndarray:
    """ECDF correction of Monte Carlo p-values on held-out items.

    ``p̃ = (1 + #{l : p_l ≤ p}) / (L + 1)`` where ``p_l`` are the Monte Carlo
    p-values of the ``L`` held-out items at one label drawn from each
    item's histogram. ``p̃`` is split conformal prediction with the Monte
    Carlo p-value as the conformity score, so ``P(p̃ ≤ α) ≤ α`` in finite
    samples whatever ``m`` was (the correction of Stutz et al. 2023, §3.3,
    in its exact conformal form).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.conformal._quantiles import ecdf_corrected_pvalues
    >>> ecdf_corrected_pvalues(np.array([0.1, 0.5, 0.9]), np.array([0.5])).tolist()
    [0.75]
    """
    held = np.sort(np.asarray(holdout_pvalues, dtype=np.float64).ravel())
    pvalues = np.asarray(pvalues, dtype=np.float64)
    below = np.searchsorted(held, pvalues, side="right")
    return (1.0 + below) / (held.size + 1.0)
