"""Metrics for ordered classes (Likert scales): Wasserstein distance and RPS.

How classes are declared ordered
--------------------------------
The ordinal metrics read the **columns as the scale, in column order**
(developer guide §data-conventions: the class order is the column order), with unit
spacing -- what LeWiDi 2025 does for its Likert data sets (Par: −5..5, CSC: 1..6). Two
parameters change that, and both compose with named classes (DataFrame
columns or ``labels=``, aligned first as every metric does):

* ``order`` -- the class names in scale order. Columns are matched to it by
  name (never by position), so a DataFrame ``["agree", "neutral",
  "disagree"]`` can be evaluated on the scale ``disagree < neutral < agree``.
  Without ``order``, numeric class names that are not monotone in column
  order (e.g. columns ``[3, 1, 2]``) are ambiguous and raise, and so do
  class names that are not numbers (words carry no order) when there are
  more than two classes (with two, both orders give the same value).
* ``values`` -- the position of each class on the scale, in scale order
  (numbers, strictly monotone), or ``"classes"`` to use the numeric class
  names themselves. Only the Wasserstein distance uses spacing; the ranked
  probability score is defined on ranks.

Both metrics are invariant when the scale is reversed.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_class_names, column_order, row_sums
from ..utils._compat import StrOptions
from ..utils._docstrings import fill_doc
from ._constraints import OPTIONAL_ARRAY, PAIR
from ._dispatch import validate_params  # dask arrays: chunk-wise
from ._distribution_kernels import _pair_mean
from ._hlv import _check_named_pair, _class_names

__all__ = ["wasserstein_distance", "ranked_probability_score_loss"]

_ORDINAL = {**PAIR, "order": OPTIONAL_ARRAY}


def _numeric(values):
    """``values`` as float64, or None when they are not all numbers."""
    arr = np.asarray(values)
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64)
    try:
        return np.array([float(v) for v in arr.tolist()], dtype=np.float64)
    except (TypeError, ValueError):
        return None


def scale_permutation(classes, order):
    """Column positions in scale order (None: the column order already is).

    ``order`` names the classes in scale order (matched by name with
    :func:`~sklearn_hcal._validation.column_order`). Without it the column
    order is the scale, unless the classes are numbers out of order.
    """
    if order is not None:
        order = np.asarray(order)
        if order.ndim != 1:
            raise ValueError(f"order must be 1-D, got shape {order.shape}.")
        # a repeated class is named as such, not as a mismatch of the classes
        check_class_names(order, param="order", of="the scale")
        return column_order(classes, order, name="y_true/y_prob", target_name="order")
    numeric = _numeric(classes)
    if numeric is None and len(classes) > 2:
        # Words carry no order: the column order would be a guess (a scale
        # "never" .. "always" in alphabetical columns scores as another scale).
        raise ValueError(
            f"The classes {np.asarray(classes).tolist()} are not numbers, so "
            "their scale order is unknown; pass order= (the classes in scale "
            "order, e.g. order=['never', 'sometimes', 'always'])."
        )
    if numeric is not None and len(numeric) > 2:
        steps = np.diff(numeric)
        if not (np.all(steps > 0) or np.all(steps < 0)):
            raise ValueError(
                f"The classes {np.asarray(classes).tolist()} are numbers that are "
                "not in increasing (or decreasing) column order, so the scale "
                "order is ambiguous; pass order= (the classes in scale order)."
            )
    return None


def _scale_values(values, classes_in_order, n_classes):
    """Positions of the classes (scale order) as float64, or None (unit)."""
    if values is None:
        return None
    if isinstance(values, str):  # "classes": validated by StrOptions
        positions = _numeric(classes_in_order)
        if positions is None:
            raise ValueError(
                'values="classes" needs numeric class names, got '
                f"{np.asarray(classes_in_order).tolist()}."
            )
    else:
        positions = _numeric(values)
        if positions is None or positions.ndim != 1:
            raise ValueError("values must be a 1-D array of numbers.")
    if positions.shape[0] != n_classes:
        raise ValueError(
            f"values has {positions.shape[0]} entries but there are {n_classes} "
            "classes."
        )
    steps = np.diff(positions)
    if not np.all(np.isfinite(positions)) or not (
        np.all(steps > 0) or np.all(steps < 0)
    ):
        raise ValueError(
            "values must be finite and strictly monotone in scale order, got "
            f"{positions.tolist()}."
        )
    return positions


def _scale(classes, order, values):
    """``(permutation or None, positions or None)`` of the columns' classes."""
    classes = np.asarray(classes)
    if isinstance(values, str) and _numeric(classes) is None:
        # before the order's error: values="classes" is what asked for numbers
        raise ValueError(
            'values="classes" needs numeric class names: it reads each class '
            f"name as its position on the scale, but the classes {classes.tolist()} "
            "are not numbers; pass "
            "values= as a list of positions (in scale order), or leave values "
            "out for unit steps (with order= when the names are words)."
        )
    perm = scale_permutation(classes, order)
    in_order = classes if perm is None else classes[perm]
    return perm, _scale_values(values, in_order, len(classes))


def _ordinal_pair(y_true, y_prob, counts, labels, order, values):
    """``(pair, permutation or None, positions or None)`` of an ordinal metric."""
    pair, classes = _check_named_pair(y_true, y_prob, counts=counts, labels=labels)
    return (pair, *_scale(classes, order, values))


def _in_scale_order(block, perm):
    if perm is None:
        return block.p_hat, block.P
    return block.p_hat[:, perm], block.P[:, perm]


# --------------------------------------------------------------------------- #
# Per-item kernels (columns already in scale order)
# --------------------------------------------------------------------------- #
def _cdf_gap(p_hat, P):
    """``F_p̂(k) − F_q(k)`` for ``k = 1..K−1`` (the last CDF value is 1 − 1)."""
    return np.cumsum(np.subtract(p_hat, P, dtype=np.float64), axis=1)[:, :-1]


def wasserstein_per_item(p_hat, P, values=None):
    """1-Wasserstein distance between two distributions on an ordered scale.

    On the real line ``W1(p, q) = ∫ |F_p − F_q|``; for classes at positions
    ``x_1 < … < x_K`` the CDFs are steps, so
    ``W1 = Σ_{k<K} |F_p(k) − F_q(k)| (x_{k+1} − x_k)`` (unit spacing when
    ``values`` is None). This is the optimal-transport cost with ground cost
    ``|x_h − x_k|`` that LeWiDi 2025 computes with ``ot.emd2``.
    """
    gap = np.abs(_cdf_gap(p_hat, P))
    if values is None:
        return row_sums(gap)
    return np.einsum("ij,j->i", gap, np.abs(np.diff(values)))


def _ranked_probability_per_item(p_hat, P, annotations=False, normalize=True):
    """Ranked probability score per item against the human distribution.

    ``RPS_i = Σ_{k<K} (F_q(k) − F_p̂(k))²``, divided by ``K − 1`` when
    ``normalize``. With ``annotations=True`` it is the mean RPS of the
    item's individual annotations, ``RPS(q, p̂) + Σ_{k<K} F_p̂(k)(1 − F_p̂(k))``
    (the same normalisation), since ``E[(F_q − 1[y ≤ k])²] = (F_q − F_p̂)² +
    F_p̂(1 − F_p̂)`` for a label ``y`` drawn from ``p̂``.
    """
    gap = _cdf_gap(p_hat, P)
    out = row_sums(gap * gap)
    if annotations:
        F = np.cumsum(np.asarray(p_hat, dtype=np.float64), axis=1)[:, :-1]
        out += row_sums(F * (1.0 - F))
    if normalize:
        out /= P.shape[1] - 1
    return out


# --------------------------------------------------------------------------- #
# Public metrics
# --------------------------------------------------------------------------- #
@validate_params(
    {**_ORDINAL, "values": ["array-like", StrOptions({"classes"}), None]},
    prefer_skip_nested_validation=True,
)
@fill_doc
def wasserstein_distance(
    y_true, y_prob, *, counts=None, labels=None, order=None, values=None
) -> float:
    """Average Wasserstein (earth mover's) distance on an ordered scale.

    ``AWD = (1/N) Σ_i W1(p̂_i, q_i)``, the mean cost of moving the predicted
    mass onto the human one when moving mass between classes ``h`` and ``k``
    costs ``|x_h − x_k|`` (LeWiDi 2025's soft evaluation of the ordinal data
    sets Par and CSC, with unit spacing). Computed in closed form from the
    cumulative distributions, ``W1 = Σ_{k<K} |F_p̂(k) − F_q(k)| (x_{k+1} −
    x_k)``; per item it equals ``scipy.stats.wasserstein_distance(x, x, p̂_i,
    q_i)``. Lower is better; it lies in ``[0, x_K − x_1]``.

    Parameters
    ----------
    %(ordinal_data)s
    values : array-like of shape (n_classes,) or "classes", default=None
        Position of each class on the scale, in scale order (strictly
        monotone); ``"classes"`` uses the numeric class names. None: unit
        spacing ``0, 1, …, K − 1`` (LeWiDi 2025).

    Returns
    -------
    float

    References
    ----------
    LeWiDi 2025 evaluation notebook (Le-Wi-Di/le-wi-di.github.io,
    ``LeWiDi_3-2025/Evaluation_LeWiDi_2025_Metrics.ipynb``), "AWD".

    Examples
    --------
    >>> from sklearn_hcal.metrics import wasserstein_distance
    >>> Y = [[2, 0, 2]]              # half the mass at each end of the scale
    >>> P = [[0.0, 1.0, 0.0]]        # all of it in the middle
    >>> float(wasserstein_distance(Y, P))  # move 0.5 by 1 step, twice
    1.0
    >>> float(wasserstein_distance(Y, P, values=[1, 2, 4]))  # 0.5·1 + 0.5·2
    1.5
    """
    pair, perm, positions = _ordinal_pair(y_true, y_prob, counts, labels, order, values)
    return _pair_mean(
        pair,
        lambda b: wasserstein_per_item(*_in_scale_order(b, perm), positions),
    )


@validate_params(
    {**_ORDINAL, "annotations": ["boolean"], "normalize": ["boolean"]},
    prefer_skip_nested_validation=True,
)
@fill_doc
def ranked_probability_score_loss(
    y_true,
    y_prob,
    *,
    counts=None,
    labels=None,
    order=None,
    annotations=False,
    normalize=True,
) -> float:
    """Mean ranked probability score (RPS) against the human distributions.

    ``RPS_i = 1/(K − 1) Σ_{k<K} (F_q(k) − F_p̂(k))²`` on the cumulative
    distributions over the ordered classes (Epstein, 1969, in the normalised
    form of Murphy, 1971), averaged over items. A squared distance between
    CDFs, it penalises mass placed far from the human labels more than mass
    placed nearby. Lower is better; ``q = p̂`` scores 0.

    With ``annotations=True`` each item's score is the mean RPS of its
    individual annotations (the proper scoring rule applied to every label),
    which adds ``1/(K − 1) Σ_k F_p̂(k)(1 − F_p̂(k))`` -- the human
    disagreement, which no prediction can remove.

    Parameters
    ----------
    %(ordinal_data)s
    annotations : bool, default=False
        Score the individual annotations (see above) instead of the human
        distribution.
    normalize : bool, default=True
        Divide by ``K − 1`` so that the score lies in ``[0, 1]``.

    Returns
    -------
    float

    References
    ----------
    Epstein (1969). A scoring system for probability forecasts of ranked
    categories. J. Applied Meteorology 8. Murphy (1971). A note on the
    ranked probability score. J. Applied Meteorology 10.

    Examples
    --------
    >>> from sklearn_hcal.metrics import ranked_probability_score_loss
    >>> Y = [[0, 0, 4]]                # everyone chose the top class
    >>> P = [[0.5, 0.5, 0.0]]          # CDFs: q (.5, 1), p̂ (0, 0)
    >>> float(ranked_probability_score_loss(Y, P))  # (.25 + 1) / 2
    0.625
    """
    pair, perm, _ = _ordinal_pair(y_true, y_prob, counts, labels, order, None)
    return _pair_mean(
        pair,
        lambda b: _ranked_probability_per_item(
            *_in_scale_order(b, perm), annotations, normalize
        ),
    )


# --------------------------------------------------------------------------- #
# Registry declarations: the report's columns, the scorers and the command
# line's metric names are derived from these (see ._registry). ``order`` and
# ``values`` are metric parameters (``metric_params`` of the report, keyword
# arguments of ``make_human_scorer``), matched to the class names of the
# report's human labels.
# --------------------------------------------------------------------------- #
from ._registry import Metric, OfficialRounding, register  # noqa: E402


def _block_scale(block, order, values):
    """:func:`_scale` of a report block's classes (positional when unnamed)."""
    return _scale(_class_names(block.classes, block.P.shape[1]), order, values)


def _block_wasserstein(block, order, values):
    perm, positions = _block_scale(block, order, values)
    return wasserstein_per_item(*_in_scale_order(block, perm), positions)


def _block_ranked_probability(block, order, annotations, normalize):
    perm, _ = _block_scale(block, order, None)
    return _ranked_probability_per_item(
        *_in_scale_order(block, perm), annotations, normalize
    )


register(
    Metric(
        "wasserstein_distance",
        "wasserstein",
        wasserstein_distance,
        greater_is_better=False,
        description="mean Wasserstein distance on the ordered classes (unit "
        "steps unless values=)",
        source="LeWiDi 2025 (AWD)",
        # W1 = Σ |F_p̂ − F_q| is an L1 loss on the CDFs: not proper
        proper=False,
        per_item=_block_wasserstein,
        requires="ordered",
        bounds=(0.0, None),
        # average_WS rounds the mean only, not each item's distance
        official_rounding=OfficialRounding("average_WS", rounds=("mean",)),
    )
)
register(
    Metric(
        "ranked_probability_score_loss",
        "rps",
        ranked_probability_score_loss,
        greater_is_better=False,
        description="mean ranked probability score of the ordered classes, "
        "divided by K − 1",
        source="Epstein 1969; Murphy 1971",
        # Σ (F_p̂ − F_q)²: squared, linear in p̂ up to terms free of q,
        # the classic strictly proper score for ordered classes
        proper=True,
        per_item=_block_ranked_probability,
        requires="ordered",
        scorer="neg_ranked_probability_score",
        bounds=(0.0, None),
    )
)
