"""Non-conformity scores of a classifier's probabilities, one per class.

A score ``s(x, k)`` is small when class ``k`` conforms to the model's
prediction for ``x``; a prediction set keeps the classes whose score is at
most a calibrated threshold. Both scores are deterministic functions of the
probabilities, which is all the conformal guarantees need.

* ``"lac"`` -- least ambiguous set-valued classifier (Sadinle, Lei and
  Wasserman, 2019): ``s(x, k) = 1 − π_k(x)``; it gives the smallest sets on
  average.
* ``"aps"`` -- adaptive prediction sets (Romano, Sesia and Candès, 2020)
  without the randomisation: ``s(x, k) = Σ_j π_j(x) 1[π_j(x) > π_k(x)] +
  π_k(x)``, the probability mass of the classes ranked at or above ``k``.
  Without the random ``U · π_k`` term the sets are slightly larger (more
  conservative) but every call of ``predict_set`` returns the same set.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CONFORMITY_SCORES", "conformity_scores"]

#: The scores ``score=`` accepts.
CONFORMITY_SCORES = ("lac", "aps")


def _aps(P: np.ndarray) -> np.ndarray:
    # Sorting once per row: the mass above class k is the cumulative sum of
    # the sorted probabilities up to k's rank, with tied classes sharing the
    # mass of all of them (s = Σ_{π_j > π_k} π_j + π_k counts a tied class
    # only once, its own).
    order = np.argsort(-P, axis=1, kind="stable")
    sorted_P = np.take_along_axis(P, order, axis=1)
    above = np.cumsum(sorted_P, axis=1) - sorted_P  # strictly before in order
    # items tied with an earlier class must not count that class: use the
    # first position of each run of equal values
    first = np.ones_like(sorted_P, dtype=bool)
    first[:, 1:] = sorted_P[:, 1:] != sorted_P[:, :-1]
    idx = np.where(first, np.arange(P.shape[1]), 0)
    idx = np.maximum.accumulate(idx, axis=1)
    above = np.take_along_axis(above, idx, axis=1)
    S = np.empty_like(P)
    np.put_along_axis(S, order, above + sorted_P, axis=1)
    return S


def conformity_scores(P, score: str = "lac") -> np.ndarray:
    """Non-conformity scores ``s(x_i, k)`` of every item and class.

    Parameters
    ----------
    P : ndarray of shape (n_samples, n_classes)
        Validated class probabilities.
    score : {"lac", "aps"}, default="lac"
        ``"lac"``: ``1 − π_k``; ``"aps"``: the probability mass of the classes
        at least as probable as ``k`` (non-randomised APS).

    Returns
    -------
    S : ndarray of shape (n_samples, n_classes)
        Lower is more conforming.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.conformal._scores import conformity_scores
    >>> P = np.array([[0.5, 0.3, 0.2]])
    >>> conformity_scores(P, "lac").round(2).tolist()
    [[0.5, 0.7, 0.8]]
    >>> conformity_scores(P, "aps").round(2).tolist()
    [[0.5, 0.8, 1.0]]
    """
    P = np.asarray(P, dtype=np.float64)
    # Rounded to 12 decimals: scores equal in exact arithmetic (the APS score
    # of a least probable class is 1 = Σ π) then tie, whatever the summation
    # order, so sets do not depend on rounding errors.
    if score == "lac":
        return np.round(1.0 - P, 12)
    if score == "aps":
        return np.round(_aps(P), 12)
    raise ValueError(f"score must be one of {CONFORMITY_SCORES}, got {score!r}.")
