"""Disagreement probability: estimates and evaluation (Mimori et al. 2021, §4).

The disagreement statistic of two annotators is ``ϕ^D = 1[Y(1) ≠ Y(2)]``; its
conditional mean given an item is ``μ_i = 1 − Σ_k Q_ik²`` (the Gini–Simpson
index of the true distribution). From a histogram of ``n_i >= 2`` labels the
U-statistic over all pairs of annotators (eq. 16) estimates it without bias.
A model predicts ``φ_i`` ("DPE", disagreement probability estimate); it is
evaluated with the unbiased squared loss ``L̂_φ`` (eq. 40) and the debiased
binned calibration loss ``CL̂_φ`` (eq. 42–45).

Reference: T. Mimori, K. Sasada, H. Matsui, I. Sato. *Diagnostic Uncertainty
Calibration: Towards Reliable Machine Predictions in Medical Domain*. AISTATS
2021.

Classes and tolerances
----------------------
The metrics take ``labels=`` like the others, for uniform signatures: it
maps 1-D labels ``y_true`` to columns and names the columns of 2-D class
probabilities ``y_disagreement`` (matched by name with a DataFrame
``y_true``; different names raise). ``φ`` and ``μ̂`` are invariant to the
class order, so ``labels`` never changes a value. ``φ`` within ``1e-8`` of
``[0, 1]`` is clipped (``1 − Σq²`` of a one-hot float row is ``-8e-15``);
further out raises, showing the value in full precision.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike

from .._validation import (
    checked_histograms,
)
from ..utils._docstrings import fill_doc
from ._constraints import ARRAY, BINNED_ESTIMATOR, DISAGREEMENT_PAIR
from ._disagreement_kernels import (
    _block_disagreement_sq,
    _disagreement_cl,
    _disagreement_cl_cells,
    _disagreement_from_probabilities,
    _disagreement_terms,
    _pair_disagreement,
    check_disagreement_inputs,
)
from ._dispatch import validate_params  # dask arrays: chunk-wise

__all__ = [
    "disagreement_probability",
    "predicted_disagreement",
    "disagreement_squared_loss",
    "disagreement_calibration_loss",
    "disagreement_calibration_error",
]


@validate_params({"counts": ARRAY}, prefer_skip_nested_validation=True)
def disagreement_probability(counts: ArrayLike) -> np.ndarray:
    """Unbiased per-item estimate of the probability that two annotators disagree.

    ``μ̂_i = 1 − Σ_k Y_ik(Y_ik − 1) / (n_i(n_i − 1))`` (Mimori et al. 2021,
    eq. 16 with the kernel ``ϕ^D = 1[Y(1) ≠ Y(2)]``; Gini–Simpson index). It is
    the fraction of pairs of distinct annotators who gave different labels, and
    ``E[μ̂_i] = 1 − Σ_k Q_ik²`` exactly. The plug-in ``1 − Σ_k p̂_ik²`` is
    smaller by the factor ``(n_i − 1)/n_i`` and biased downwards.

    Parameters
    ----------
    counts : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (non-negative integer counts). 1-D class labels mean
        one annotation per item.

    Returns
    -------
    disagreement : ndarray of shape (n_samples,)
        Values in [0, 1]. **NaN for items with fewer than two annotations**,
        where no pair of annotators exists and the probability cannot be
        estimated; use ``np.nanmean`` or filter on ``counts.sum(axis=1) >= 2``.
        No warning is raised: NaN is the documented answer for those items.

    Examples
    --------
    >>> from sklearn_hcal.metrics import disagreement_probability
    >>> # [3, 1]: 3 of 6 pairs disagree; [1, 1]: the only pair disagrees;
    >>> # [2, 0]: it agrees; [1, 0]: a single annotation
    >>> disagreement_probability([[3, 1], [1, 1], [2, 0], [1, 0]])
    array([0.5, 1. , 0. , nan])
    """
    Y, n, _, _ = checked_histograms(counts, name="counts", allow_probabilities=False)
    mu, _ = _pair_disagreement(Y, n)
    return mu


@validate_params(
    {
        "y_prob": ARRAY,
        # A plain type rather than an Interval so that np.inf is accepted;
        # positivity is checked by _check_concentration.
        "concentration": [numbers.Real, "array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def predicted_disagreement(
    y_prob: ArrayLike, *, concentration: float | ArrayLike | None = None
) -> np.ndarray:
    """Predicted probability that two annotators disagree (a DPE).

    From a point prediction ``q``: ``φ = 1 − Σ_k q_k²`` (two independent draws
    from ``Cat(q)`` differ). From a Dirichlet prediction ``Dir(α0·q)``:
    ``φ = α0/(α0 + 1)·(1 − Σ_k q_k²)`` (Mimori et al. 2021, §5.3, the
    Dirichlet-multinomial pair probability). From ``S`` ensemble members
    (MC dropout, test-time augmentation, §7): the mean over members of each
    member's ``φ`` (eq. 72).

    Parameters
    ----------
    y_prob : array-like of shape (n_samples, n_classes), (n_samples,) or \
            (n_members, n_samples, n_classes)
        Predicted probabilities. A 1-D array is the probability of the second
        of two classes (scikit-learn's convention); a 3-D array stacks the
        predictions of ensemble members.
    concentration : float or array-like of shape (n_samples,), default=None
        Dirichlet concentration ``α0 > 0`` (``np.inf`` = point prediction).

    Returns
    -------
    disagreement : ndarray of shape (n_samples,)
        Values in [0, 1].

    Examples
    --------
    >>> from sklearn_hcal.metrics import predicted_disagreement
    >>> predicted_disagreement([[0.5, 0.5], [1.0, 0.0]])
    array([0.5, 0. ])
    >>> predicted_disagreement([[0.5, 0.5]], concentration=1.0)
    array([0.25])
    >>> # two members, certain of opposite classes: each predicts φ = 0
    >>> predicted_disagreement([[[1.0, 0.0]], [[0.0, 1.0]]])
    array([0.])
    """
    return _disagreement_from_probabilities(
        y_prob, concentration=concentration, name="y_prob"
    )


_DISAGREEMENT_BINNED = {**DISAGREEMENT_PAIR, **BINNED_ESTIMATOR}


@validate_params(DISAGREEMENT_PAIR, prefer_skip_nested_validation=True)
@fill_doc
def disagreement_squared_loss(
    y_true: ArrayLike,
    y_disagreement: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
) -> float:
    """Unbiased squared loss of a predicted disagreement probability (``L̂_φD``).

    Mimori et al. (2021), eq. 40 with ``ϕ^D``: for each item the loss
    ``(ϕ − φ_i)²`` averaged over all pairs of distinct annotators, which for a
    binary ``ϕ`` is ``μ̂_i(1 − μ̂_i) + (μ̂_i − φ_i)²`` with ``μ̂`` from
    :func:`disagreement_probability`. The result is the mean over items with
    ``n_i >= 2``; items with one annotation have no pair and are left out.
    Its expectation is ``E[(ϕ^D − φ)²]``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes)
        Label histograms (non-negative integer counts).
    y_disagreement : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted disagreement ``φ`` in [0, 1]. A 1-D array (or an ``(n, 1)``
        column) is **always** ``φ``, never the probability of a binary class;
        a 2-D (or ``(S, n, K)`` ensemble) array of class probabilities is
        converted with :func:`predicted_disagreement`.
    %(counts)s
    labels : array-like of shape (n_classes,), default=None
        The classes, as for the other metrics (see the module notes); ``φ``
        and ``μ̂`` do not depend on the class order, so it never changes the
        value, only which inputs are consistent.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import disagreement_squared_loss
    >>> Y = [[1, 1], [2, 0], [1, 0]]      # μ̂ = 1, 0, NaN (left out)
    >>> # (0 + (1 - 0.5)²  +  0 + (0 - 0.5)²) / 2
    >>> disagreement_squared_loss(Y, [0.5, 0.5, 0.2])
    0.25
    """
    mu, phi, valid = check_disagreement_inputs(y_true, y_disagreement, counts, labels)
    if not valid.all():  # items without a pair are left out (none: no copies)
        mu, phi = mu[valid], phi[valid]
    loss = mu * (1.0 - mu) + (mu - phi) ** 2
    return float(np.add.reduce(loss) / loss.size)  # the sum and quotient of .mean()


@validate_params(_DISAGREEMENT_BINNED, prefer_skip_nested_validation=True)
@fill_doc
def disagreement_calibration_loss(
    y_true: ArrayLike,
    y_disagreement: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    debiased: bool = True,
) -> float:
    """Binned calibration loss of a predicted disagreement probability (``CL̂_φD``).

    Mimori et al. (2021), eq. 42–45: items are binned by ``φ`` into ``n_bins``
    equal-width bins ``[j/B, (j+1)/B)``, the last one closed. Plug-in:
    ``Σ_b (|B|/N)(mean_B μ̂ − mean_B φ)²``; debiased (eq. 44): each bin with
    ``|B| >= 2`` subtracts ``(|B|/N) σ̄²_B/(|B| − 1)``, ``σ̄²_B`` the ddof=0
    variance of ``μ̂`` in the bin. Following the reference implementation,
    ``N`` and ``|B|`` count all items while ``mean_B μ̂`` and ``σ̄²_B`` use the
    items with ``n_i >= 2`` only; a bin without such an item adds 0. When every
    item has two annotations or more this is exactly eq. 42–45. The debiased
    value can be negative.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes)
        Label histograms (non-negative integer counts).
    y_disagreement : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted disagreement ``φ`` in [0, 1] (1-D is always ``φ``); class
        probabilities (2-D, or 3-D ensembles) are converted with
        :func:`predicted_disagreement`.
    %(counts)s
    labels : array-like of shape (n_classes,), default=None
        The classes; see :func:`disagreement_squared_loss`.
    n_bins : int, default=15
        Equal-width bins on ``φ``.
    debiased : bool, default=True
        Apply the bias correction of eq. 44.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import disagreement_calibration_loss
    >>> Y = [[1, 1], [2, 0]]              # μ̂ = 1 and 0
    >>> # one bin: mean μ̂ = 0.5 = mean φ; σ̄² = 0.25, 2/2 * 0.25 / 1
    >>> disagreement_calibration_loss(Y, [0.5, 0.5], debiased=False)
    0.0
    >>> disagreement_calibration_loss(Y, [0.5, 0.5])
    -0.25
    """
    mu, phi, valid = check_disagreement_inputs(y_true, y_disagreement, counts, labels)
    return _disagreement_cl(mu, phi, valid, n_bins, debiased)


@validate_params(_DISAGREEMENT_BINNED, prefer_skip_nested_validation=True)
@fill_doc
def disagreement_calibration_error(
    y_true: ArrayLike,
    y_disagreement: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    debiased: bool = True,
) -> float:
    """Calibration error of a predicted disagreement, ``sqrt(max(CL̂_φD, 0))``.

    See :func:`disagreement_calibration_loss` (Mimori et al. 2021, eq. 42–45;
    reported as ``CE_φD`` in their Tables 1–2).

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes)
        Label histograms (non-negative integer counts).
    y_disagreement : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted disagreement ``φ`` in [0, 1] (1-D is always ``φ``); class
        probabilities are converted with :func:`predicted_disagreement`.
    %(counts)s
    labels : array-like of shape (n_classes,), default=None
        The classes; see :func:`disagreement_squared_loss`.
    n_bins : int, default=15
        Equal-width bins on ``φ``.
    debiased : bool, default=True
        Use the debiased calibration loss.

    Returns
    -------
    error : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import disagreement_calibration_error
    >>> Y = [[1, 1], [1, 1]]              # μ̂ = 1 for both
    >>> disagreement_calibration_error(Y, [0.5, 0.5])    # sqrt((1 - 0.5)²)
    0.5
    """
    mu, phi, valid = check_disagreement_inputs(y_true, y_disagreement, counts, labels)
    return float(np.sqrt(max(_disagreement_cl(mu, phi, valid, n_bins, debiased), 0.0)))


# --------------------------------------------------------------------------- #
# Registry declarations: the report's columns, the scorers and the command
# line's metric names are derived from these (see ._registry). A report
# block carries ``mu`` (μ̂), ``valid`` (n_i >= 2) and ``phi`` (the
# classifier's predicted disagreement).
# --------------------------------------------------------------------------- #
from ._registry import Metric, Stats, register  # noqa: E402

_PHI_BINS = Stats(
    "disagreement_bins",
    cells=lambda b, n_bins: _disagreement_cl_cells(b.mu, b.phi, b.valid, n_bins),
    n_cells=lambda n_classes, n_bins: (1, n_bins),
    finish=_disagreement_terms,
    params=("n_bins",),
)

register(
    Metric(
        "disagreement_squared_loss",
        "disagreement_sq_loss",
        disagreement_squared_loss,
        greater_is_better=False,
        description="unbiased squared loss L̂_φD of the predicted disagreement φ",
        source="Mimori et al. 2021, eq. 40",
        # unbiased squared loss of φ: its expectation is (φ − φ*)² plus a
        # constant, best at the true disagreement probability φ*
        proper=True,
        per_item=_block_disagreement_sq,
        requires="pairs",
        response="disagreement",
        order=150,
    )
)
for _name, _column, _order in (
    ("disagreement_calibration_error", "disagreement_ce", 160),
    ("disagreement_calibration_loss", "disagreement_cl", None),
):
    register(
        Metric(
            _name,
            _column,
            disagreement_calibration_error
            if _column == "disagreement_ce"
            else disagreement_calibration_loss,
            greater_is_better=False,
            description=f"binned calibration {_column[-2:].upper()} of φ (debiased)",
            source="Mimori et al. 2021, eq. 42–45",
            stats=_PHI_BINS,
            value=lambda t, debiased, _k=_column[-2:]: t[
                _k if debiased else f"{_k}_plugin"
            ],
            requires="pairs",
            response="disagreement",
            order=_order,
            # a binned calibration error: a constant φ at the mean reaches 0
            proper=False,
        )
    )
