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
    _check_labels,
    _check_pair,
    _histograms,
    _normalised_block,
    _row_blocks,
    _row_sums,
    _scan_probabilities,
    _shape_of,
    check_disagreement,
    column_order,
    frame_names,
)
from ..utils._compat import Interval, validate_params
from ._cells import cell_sums
from ._mimori import _bin_indices

__all__ = [
    "disagreement_probability",
    "predicted_disagreement",
    "disagreement_squared_loss",
    "disagreement_calibration_loss",
    "disagreement_calibration_error",
]


def _mu_rows(Y: np.ndarray, n: np.ndarray) -> np.ndarray:
    """μ̂ of a block of counts ``Y`` (any numeric dtype) with row sums ``n``."""
    Y = np.asarray(Y, dtype=np.float64)
    valid = n >= 2
    pairs = np.where(valid, n * (n - 1.0), 1.0)
    mu = 1.0 - _row_sums(Y * (Y - 1.0)) / pairs
    mu[~valid] = np.nan
    return mu


def _pair_disagreement(Y: np.ndarray, n=None) -> tuple[np.ndarray, np.ndarray]:
    """``(μ̂, n)`` from counts; μ̂ is NaN where ``n < 2``.

    Of the ``n(n − 1)`` ordered pairs of distinct annotators, ``Σ_k Y_k(Y_k − 1)``
    agree, so ``1 − Σ_k Y_k(Y_k − 1)/(n(n − 1))`` is the fraction that disagree:
    eq. 16 with ``ϕ^D`` as the kernel, without enumerating pairs. Computed
    block by block of rows; ``n`` (the row sums) is reused when given.
    """
    n_rows, n_cols = np.shape(Y)
    if n is None:
        n = np.empty(n_rows)
        for sl in _row_blocks(n_rows, n_cols):
            n[sl] = _row_sums(np.asarray(Y[sl]))
    mu = np.empty(n_rows)
    for sl in _row_blocks(n_rows, n_cols):
        mu[sl] = _mu_rows(Y[sl], n[sl])
    return mu, n


def _phi_rows(P: np.ndarray) -> np.ndarray:
    """``1 − Σ_k q_k²`` of a block of probabilities."""
    P = np.asarray(P, dtype=np.float64)
    return 1.0 - _row_sums(P * P)


def _phi(P: np.ndarray, renormalise=None) -> np.ndarray:
    """``1 − Σ_k q_k²`` per row of checked probabilities (1-D: binary), by blocks.

    Rows off by rounding are renormalised first (``renormalise``: see
    :func:`~sklearn_hcal._validation._normalised_block`), so that a rounded
    row such as ``[1.0004, 0]`` gives 0, not ``-8e-4``.
    """
    n_rows = P.shape[0]
    phi = np.empty(n_rows)
    n_cols = 2 if P.ndim == 1 else P.shape[1]
    for sl in _row_blocks(n_rows, n_cols):
        phi[sl] = _phi_rows(_normalised_block(P, sl, renormalise=renormalise))
    return phi


@validate_params({"counts": ["array-like"]}, prefer_skip_nested_validation=True)
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
    Y, n, _, _ = _histograms(counts, name="counts", allow_probabilities=False)
    mu, _ = _pair_disagreement(Y, n)
    return mu


def _check_concentration(concentration, n_samples: int) -> np.ndarray | None:
    if concentration is None:
        return None
    alpha = np.asarray(concentration, dtype=np.float64)
    if alpha.ndim == 1 and alpha.shape[0] != n_samples:
        raise ValueError(
            f"concentration has {alpha.shape[0]} values but there are "
            f"{n_samples} samples."
        )
    if alpha.ndim > 1:
        raise ValueError(
            "concentration must be a positive float or a 1-D array of shape "
            f"(n_samples,), got shape {alpha.shape}."
        )
    if np.any(np.isnan(alpha)) or np.any(alpha <= 0):
        raise ValueError(
            "concentration must be positive and not NaN (np.inf means a point "
            "prediction)."
        )
    return alpha


def _disagreement_from_probabilities(
    y_prob,
    *,
    concentration=None,
    name: str = "y_prob",
    n_classes=None,
    n_classes_from=None,
) -> np.ndarray:
    """``φ`` from (n, K), binary 1-D, or ensemble (S, n, K) probabilities."""
    raw = y_prob.to_numpy() if hasattr(y_prob, "to_numpy") else y_prob
    ndim = len(_shape_of(raw, name=name))
    if ndim == 3:
        arr = np.asarray(raw)
        n_members, n_samples, n_classes_ = arr.shape
        if n_members == 0:
            raise ValueError(f"{name} has no ensemble members (shape {arr.shape}).")
        # Member by member (a loop over the S members, not the items), so
        # that an error names the member and its row: "y_prob[3] ... row 7".
        phi = np.empty((n_members, n_samples))
        for member in range(n_members):
            P, _, off = _scan_probabilities(
                arr[member],
                name=f"{name}[{member}]",
                n_classes=n_classes,
                n_classes_from=n_classes_from,
            )
            phi[member] = _phi(P, off)
    elif ndim in (1, 2):
        P, _, off = _scan_probabilities(
            raw, name=name, n_classes=n_classes, n_classes_from=n_classes_from
        )
        n_samples = P.shape[0]
        phi = _phi(P, off)
    else:
        raise ValueError(
            f"{name} must have shape (n_samples, n_classes), (n_samples,) for "
            f"two classes, or (n_members, n_samples, n_classes); got {ndim} "
            "dimensions."
        )
    alpha = _check_concentration(concentration, n_samples)
    if alpha is not None:
        # α0/(α0 + 1) written as 1/(1 + 1/α0) so that α0 = inf gives 1.
        phi = phi / (1.0 + 1.0 / alpha)
    if phi.ndim == 2:
        phi = phi.mean(axis=0)
    # Rounding can push 1 − Σq² a hair below 0 for one-hot predictions: the
    # one φ check clips it (and would name anything further out).
    return check_disagreement(phi, name=name)


@validate_params(
    {
        "y_prob": ["array-like"],
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


def _disagreement_histograms(y_true, *, name, labels, n_classes=None):
    """``(Y, n)`` of integer label histograms (or 1-D labels) for ``μ̂``.

    ``labels`` maps 1-D labels to columns; with histograms it must name one
    class per column (and match a DataFrame's column names as a set: ``μ̂``
    does not depend on the class order).
    """
    Y, n, _, _ = _histograms(
        y_true,
        name=name,
        allow_probabilities=False,
        n_classes=n_classes,
        classes=labels,
    )
    shape = _shape_of(y_true, name=name)
    if labels is not None and len(shape) == 2 and shape[1] > 1:
        labels = _check_labels(labels, Y.shape[1], name=name)
        names = frame_names(y_true)
        if names is not None:
            column_order(labels, names, name="labels", target_name=name)
    return Y, n


def _check_disagreement_inputs(
    y_true, y_disagreement, counts, labels=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated ``(μ̂, φ, valid)``; error when no item has ``n_i >= 2``.

    A 1-D ``y_disagreement`` (or an ``(n, 1)`` column) is ``φ``, checked by
    :func:`~sklearn_hcal._validation.check_disagreement`; 2-D class
    probabilities go through the metrics' pair validation (classes aligned
    by name, rows off by rounding renormalised) and 3-D ensembles through
    :func:`predicted_disagreement`.
    """
    name = "y_true"
    if counts is not None:
        y_true, name = counts, "counts"
    raw = (
        y_disagreement.to_numpy()
        if hasattr(y_disagreement, "to_numpy")
        else y_disagreement
    )
    shape = _shape_of(raw, name="y_disagreement")
    if len(shape) == 1 or (len(shape) == 2 and shape[1] == 1):
        phi = check_disagreement(raw, name="y_disagreement")
        Y, n = _disagreement_histograms(y_true, name=name, labels=labels)
    elif len(shape) == 2:
        pair = _check_pair(
            y_true,
            y_disagreement,
            labels=labels,
            allow_probabilities=False,
            y_true_name=name,
            y_prob_name="y_disagreement",
        )
        phi = np.empty(pair.n_samples)
        for block in pair.blocks():
            phi[block.sl] = _phi_rows(block.P)
        phi = check_disagreement(phi, name="y_disagreement")
        Y, n = pair.Y, pair.n
    else:
        # An ensemble (S, n, K) of class probabilities, turned into φ.
        y_shape = _shape_of(y_true, name=name)
        n_classes = None
        if len(y_shape) == 2 and y_shape[1] > 1:
            n_classes = y_shape[1]
        phi = _disagreement_from_probabilities(
            raw,
            name="y_disagreement",
            n_classes=n_classes,
            n_classes_from=None if n_classes is None else name,
        )
        Y, n = _disagreement_histograms(
            y_true,
            name=name,
            labels=labels,
            n_classes=shape[-1] if n_classes is None else n_classes,
        )
    if Y.shape[0] != phi.shape[0]:
        raise ValueError(
            f"{name} and y_disagreement have different numbers of samples: "
            f"{Y.shape[0]} and {phi.shape[0]}."
        )
    mu, n = _pair_disagreement(Y, n)
    valid = n >= 2
    if not np.any(valid):
        shape = _shape_of(y_true, name=name)
        single = ""
        if len(shape) == 1 or shape[1] == 1:
            single = f" (a 1-D or (n, 1) {name} is one label per item; pass histograms)"
        raise ValueError(
            f"{name} has no item with at least two annotations; disagreement "
            f"between annotators cannot be estimated from single labels{single}."
        )
    return mu, phi, valid


_DISAGREEMENT = {
    "y_true": ["array-like"],
    "y_disagreement": ["array-like"],
    "counts": ["array-like", None],
    "labels": ["array-like", None],
}
_DISAGREEMENT_BINNED = {
    **_DISAGREEMENT,
    "n_bins": [Interval(numbers.Integral, 1, None, closed="left")],
    "debiased": ["boolean"],
}


@validate_params(_DISAGREEMENT, prefer_skip_nested_validation=True)
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
    counts : array-like of shape (n_samples, n_classes), default=None
        Label histograms that replace ``y_true``.
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
    >>> disagreement_squared_loss(Y, [0.5, 0.5, 0.9])
    0.25
    """
    mu, phi, valid = _check_disagreement_inputs(y_true, y_disagreement, counts, labels)
    mu, phi = mu[valid], phi[valid]
    return float((mu * (1.0 - mu) + (mu - phi) ** 2).mean())


def _disagreement_cl_cells(mu, phi, valid, n_bins: int):
    """Cells and values of :func:`_disagreement_cl_sums` (see :mod:`._cells`).

    One slot: the bin of ``φ``. Statistics: a count, ``φ``, ``1[valid]``,
    ``μ̂`` and ``μ̂²`` (both 0 for items with ``n_i < 2``).
    """
    cell = _bin_indices(phi, n_bins)[:, None]
    mu0 = np.where(valid, mu, 0.0)
    values = np.empty((5, cell.shape[0], 1))
    values[0] = 1.0
    values[1, :, 0] = phi
    values[2, :, 0] = valid
    values[3, :, 0] = mu0
    np.multiply(mu0, mu0, out=values[4, :, 0])
    return cell, values


def _disagreement_cl_sums(mu, phi, valid, n_bins: int, weights=None) -> np.ndarray:
    """Per-bin partial sums ``[|B|, Σφ, |B_valid|, Σμ̂, Σμ̂²]``, shape (5, n_bins).

    Bins are formed on ``φ``; the ``μ̂`` sums run over the valid items
    (``n_i >= 2``). ``weights`` are item multiplicities (bootstrap).
    """
    return cell_sums(*_disagreement_cl_cells(mu, phi, valid, n_bins), n_bins, weights)


def _disagreement_cl_from_sums(sums, n_samples, debiased: bool):
    """Eq. 42–45 from :func:`_disagreement_cl_sums` of all items.

    ``sums`` of shape ``(..., 5, n_bins)`` may carry leading axes (one set
    of sums per bootstrap resample, ``n_samples`` of the leading shape); the
    result then has them too, else it is a float.
    """
    sums = np.asarray(sums, dtype=np.float64)
    count, sum_phi, count_valid, sum_mu, sum_mu2 = np.moveaxis(sums, -2, 0)
    N = np.asarray(n_samples, dtype=np.float64)[..., None]
    has_valid = count_valid > 0
    mean_mu = sum_mu / np.where(has_valid, count_valid, 1.0)
    mean_phi = sum_phi / np.where(count > 0, count, 1.0)
    cl_bins = np.where(has_valid, count / N * (mean_mu - mean_phi) ** 2, 0.0)
    if debiased:
        # ddof=0 variance of μ̂ over the valid items (clipped against rounding)
        ss = np.maximum(sum_mu2 - count_valid * mean_mu**2, 0.0)
        var0 = ss / np.where(has_valid, count_valid, 1.0)
        multi = count >= 2
        # eq. 44: (|B|/N) σ̄²/(|B| − 1)
        cl_bins = cl_bins - np.where(
            multi, count / N * var0 / np.where(multi, count - 1.0, 1.0), 0.0
        )
    out = cl_bins.sum(axis=-1)
    return float(out) if out.ndim == 0 else out


def _disagreement_cl(
    mu, phi, valid, n_bins: int, debiased: bool, weights=None
) -> float:
    """Binned calibration loss of ``φ`` against ``μ̂`` (eq. 42–45).

    Reference behaviour (SPEC §2): bins are formed on ``φ`` of all items and
    ``|B|``, ``N`` count all items, while ``mean_B μ̂`` and the variance
    ``σ̄²_B`` (ddof=0) use only the items with ``n_i >= 2``. A bin without such
    an item has no estimate of ``E[ϕ | bin]`` and adds 0. ``weights`` are
    item multiplicities (a bootstrap resample without copying the items).
    """
    sums = _disagreement_cl_sums(mu, phi, valid, n_bins, weights)
    n_samples = phi.shape[0] if weights is None else float(np.sum(weights))
    return _disagreement_cl_from_sums(sums, n_samples, debiased)


@validate_params(_DISAGREEMENT_BINNED, prefer_skip_nested_validation=True)
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
    counts : array-like of shape (n_samples, n_classes), default=None
        Label histograms that replace ``y_true``.
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
    mu, phi, valid = _check_disagreement_inputs(y_true, y_disagreement, counts, labels)
    return _disagreement_cl(mu, phi, valid, n_bins, debiased)


@validate_params(_DISAGREEMENT_BINNED, prefer_skip_nested_validation=True)
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
    counts : array-like of shape (n_samples, n_classes), default=None
        Label histograms that replace ``y_true``.
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
    mu, phi, valid = _check_disagreement_inputs(y_true, y_disagreement, counts, labels)
    return float(np.sqrt(max(_disagreement_cl(mu, phi, valid, n_bins, debiased), 0.0)))


# --------------------------------------------------------------------------- #
# Registry declarations: the report's columns, the scorers and the command
# line's metric names are derived from these (see ._registry). A report
# block carries ``mu`` (μ̂), ``valid`` (n_i >= 2) and ``phi`` (the
# classifier's predicted disagreement).
# --------------------------------------------------------------------------- #
from ._registry import Metric, Stats, register  # noqa: E402


def _block_disagreement_sq(block):
    """``(μ̂(1 − μ̂) + (μ̂ − φ)², 1)`` on valid items, ``(0, 0)`` elsewhere (eq. 40)."""
    valid = block.valid
    mu = np.nan_to_num(block.mu)  # NaN where n_i < 2; those items weigh 0
    loss = mu * (1.0 - mu) + (mu - block.phi) ** 2
    return np.where(valid, loss, 0.0), valid.astype(np.float64)


def _disagreement_terms(sums, n_samples, n_bins):
    # A resample (or agreement bin) without a pair of annotators has no
    # estimate: NaN, never a silent 0.
    defined = sums[..., 2, :].sum(axis=-1) > 0
    terms = {}
    for debiased, key in ((True, "cl"), (False, "cl_plugin")):
        cl = _disagreement_cl_from_sums(sums, n_samples, debiased)
        cl = np.where(defined, cl, np.nan)
        terms[key] = cl
        terms[key.replace("cl", "ce")] = np.sqrt(np.maximum(cl, 0.0))
    return terms


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
        )
    )
