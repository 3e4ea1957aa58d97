"""Mimori et al.'s (2021) estimators of squared-loss terms from label histograms.

With ``n_i`` annotations per item, the empirical distribution
``p̂_i = Y_i / n_i`` is an unbiased but noisy estimate of the true label
distribution ``Q_i``. Plugging it into squared-loss terms biases them upwards
by the sampling variance of ``p̂``; Mimori et al. (2021, §3, App. B) give
corrections:

* ``expected_squared_loss`` — unbiased estimator of ``E‖e_Y − q‖²``
  (Prop. 1, eq. 8);
* ``epistemic_loss`` — ``EL = E‖Q − q‖²`` (eq. 9–10, Prop. 2);
* ``calibration_loss`` / ``calibration_error`` — class-wise binned
  ``CL`` (eq. 12–14, Prop. 3) and ``CE = sqrt(CL)``;
* ``dispersion_loss`` — ``DL = EL − CL`` (App. B.4, eq. 35–36).

Reference: T. Mimori, K. Sasada, H. Matsui, I. Sato. *Diagnostic Uncertainty
Calibration: Towards Reliable Machine Predictions in Medical Domain*. AISTATS
2021.

Classes (``labels=``, as in :func:`sklearn.metrics.log_loss`)
--------------------------------------------------------------
Columns are matched by class name, never guessed. ``labels`` gives the class
of each column of ``y_prob`` in the columns' order (any order; scikit-learn's
``log_loss`` instead assumes the sorted order); without it a DataFrame
``y_prob``'s column names are the classes, else the columns are positional.
1-D labels ``y_true`` are looked up among those classes; with positional
columns the sorted distinct labels are the classes and must number
``n_classes`` (else a ``ValueError`` asks for ``labels=``: labels ``[1, 1]``
cannot say which of three columns they are). When ``y_true`` (or ``counts``)
is a DataFrame and ``y_prob`` carries names too, ``y_prob``'s columns are
put in ``y_true``'s order, and different names raise. A 2-D array ``y_true``
takes its class names from ``labels``. Probability rows within
``row_sum_tolerance(K)`` of 1 (rounded to 3 decimals) are renormalised.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike

from .._validation import _check_pair, _Pair, _row_blocks, _row_sums
from ..utils._compat import Interval, check_sample_weight, validate_params
from ._cells import cell_sums

__all__ = [
    "expected_squared_loss",
    "epistemic_loss",
    "calibration_loss",
    "calibration_error",
    "dispersion_loss",
]


def _bin_indices(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bin of each value in [0, 1]: ``[j/B, (j+1)/B)``, last closed.

    The inner edges come from ``np.linspace`` so that a value equal to an edge
    ``j/B`` (as computed in floating point) falls in bin ``j``; values at or
    above the last inner edge, including exactly 1, fall in bin ``B - 1``.

    This is ``searchsorted(edges[1:-1], values, side="right")``, computed as
    ``floor(value * B)`` and corrected by one step where the rounding of the
    product or of the edges disagrees with the exact comparison (a binary
    search per element is several times slower).
    """
    values = np.asarray(values, dtype=np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    lower = edges[:-1].copy()
    lower[0] = -np.inf  # bin 0 takes everything below the first inner edge
    upper = edges[1:].copy()
    upper[-1] = np.inf  # the last bin is closed (and takes values above 1)
    idx = np.floor(values * n_bins)
    np.clip(idx, 0, n_bins - 1, out=idx)
    pos = idx.astype(np.intp)
    pos -= values < lower[pos]
    pos += values >= upper[pos]
    return pos


def _validate_counts(y_true, y_prob, counts, labels=None) -> _Pair:
    """Validated inputs as a ``_Pair``; integer counts are required."""
    return _check_pair(
        y_true, y_prob, counts=counts, labels=labels, allow_probabilities=False
    )


def _correction_factor(n: np.ndarray) -> np.ndarray:
    """``1/(n − 1)`` where ``n >= 2``, else 0 (no correction for one label)."""
    valid = n >= 2
    return np.divide(1.0, n - 1.0, out=np.zeros(n.shape), where=valid)


#: Rows of the per-cell partial sums of :func:`_cell_sums`.
_COUNT, _COUNT_VALID, _SUM_TRUE, _SUM_PRED, _SUM_TRUE2, _SUM_RESID2, _SUM_CORR = range(
    7
)


def _cell_values(
    p_hat: np.ndarray, P: np.ndarray, n: np.ndarray, n_bins: int
) -> tuple[np.ndarray, np.ndarray]:
    """Cells and values of :func:`_cell_sums` for a block (see :mod:`._cells`).

    One slot per class; the cell of ``(i, k)`` is ``k * n_bins + bin(q_ik)``.
    Statistics (the ``_COUNT``... constants): a count, ``1[n_i >= 2]``,
    ``p̂``, ``q``, ``p̂²``, ``(p̂ − q)²`` and ``p̂(1 − p̂)/(n − 1)`` (0 where
    ``n_i < 2``).
    """
    P = np.asarray(P, dtype=np.float64)
    p_hat = np.asarray(p_hat, dtype=np.float64)
    n_items, n_classes = P.shape
    cell = _bin_indices(P, n_bins)
    cell += np.arange(0, n_classes * n_bins, n_bins)
    values = np.empty((7, n_items, n_classes))
    values[_COUNT] = 1.0
    values[_COUNT_VALID] = (n >= 2)[:, None]
    values[_SUM_TRUE] = p_hat
    values[_SUM_PRED] = P
    np.multiply(p_hat, p_hat, out=values[_SUM_TRUE2])
    resid = np.subtract(p_hat, P, out=values[_SUM_RESID2])
    resid *= resid
    gini = np.subtract(1.0, p_hat, out=values[_SUM_CORR])
    gini *= p_hat
    gini *= _correction_factor(n)[:, None]
    return cell, values


def _cell_sums(
    p_hat: np.ndarray,
    P: np.ndarray,
    n: np.ndarray,
    n_bins: int,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Per-(class, bin) partial sums of a block of items, shape (7, K * n_bins).

    Rows (see the ``_COUNT``... constants): item count ``|B|``, count of items
    with ``n_i >= 2``, ``Σ p̂``, ``Σ q``, ``Σ p̂²``, ``Σ (p̂ − q)²`` and
    ``Σ p̂(1 − p̂)/(n − 1)`` over items with ``n_i >= 2``, each weighted by
    ``weights`` (item multiplicities, for the bootstrap) when given. The sums
    of all blocks are sufficient statistics for every term of
    :func:`_terms_from_sums`, so the binned losses are computed in one
    chunked pass with ``O(K * n_bins)`` memory besides the block.
    """
    n_items, n_classes = np.shape(P)
    n_cells = n_classes * n_bins
    # The values hold 7 statistics per element: sub-blocks keep them at
    # about the size of the block's own float64 arrays.
    step = max(1, 2**16 // (7 * n_classes))
    sums = np.zeros((7, n_cells))
    for start in range(0, n_items, step):
        sl = slice(start, start + step)
        w = None if weights is None else weights[sl]
        sums += cell_sums(*_cell_values(p_hat[sl], P[sl], n[sl], n_bins), n_cells, w)
    return sums


def _terms_from_sums(sums: np.ndarray, n_samples, n_bins: int) -> dict:
    """Mimori et al.'s squared-loss terms from the per-cell sums of all items.

    See :func:`_binned_calibration_terms` for the keys. With the bin means
    ``c̄ = Σp̂/|B|`` and ``z̄ = Σq/|B|``, the within-bin sums of squares are
    ``Σ (p̂ − c̄)² = Σp̂² − |B| c̄²`` and ``Σ ((p̂ − c̄) − (q − z̄))² =
    Σ (p̂ − q)² − |B| (c̄ − z̄)²`` (clipped at 0 against rounding).

    ``sums`` of shape ``(..., 7, n_cells)`` may carry leading axes (one set
    of sums per bootstrap resample, ``n_samples`` then of the leading shape):
    every term then has those axes, else the scalar terms are floats.
    """
    sums = np.asarray(sums, dtype=np.float64)
    batch = sums.shape[:-2]
    N = np.asarray(n_samples, dtype=np.float64)
    n_per_cell = N[..., None]
    count = sums[..., _COUNT, :]
    count_valid = sums[..., _COUNT_VALID, :]
    n_cells = count.shape[-1]
    n_classes = n_cells // n_bins
    nonempty = count > 0
    safe_count = np.where(nonempty, count, 1.0)
    mean_true = sums[..., _SUM_TRUE, :] / safe_count
    mean_pred = sums[..., _SUM_PRED, :] / safe_count
    gap = mean_true - mean_pred
    ss_true = np.maximum(sums[..., _SUM_TRUE2, :] - count * mean_true**2, 0.0)
    ss_resid = np.maximum(sums[..., _SUM_RESID2, :] - count * gap**2, 0.0)
    multi = count >= 2
    var_true = np.where(multi, ss_true / np.where(multi, count - 1.0, 1.0), 0.0)

    # eq. 13 and Prop. 3: (|B|/N)(c̄ − z̄)² − (|B|/N) σ̄²/(|B| − 1), where
    # σ̄²|B|/(|B| − 1) is the ddof=1 variance, so the correction is var/N.
    cl_plugin_bins = count / n_per_cell * gap**2
    cl_bins = cl_plugin_bins - var_true / n_per_cell
    # eq. 35–36; the correction is applied to bins with >= 2 items of which at
    # least one has n_i >= 2 (SPEC §2, the reference implementation's rule).
    dl_plugin_bins = ss_resid / n_per_cell
    dl_corrected = multi & (count_valid > 0)
    dl_bins = dl_plugin_bins - np.where(
        dl_corrected, (sums[..., _SUM_CORR, :] - var_true) / n_per_cell, 0.0
    )

    el_plugin = sums[..., _SUM_RESID2, :].sum(axis=-1) / N
    el = el_plugin - sums[..., _SUM_CORR, :].sum(axis=-1) / N
    # Σ_k p̂(1 − p̂) = Σ p̂ − Σ p̂², summed over all cells.
    il_plugin = (
        sums[..., _SUM_TRUE, :].sum(axis=-1) - sums[..., _SUM_TRUE2, :].sum(axis=-1)
    ) / N
    sq_loss = el_plugin + il_plugin
    cl_plugin = cl_plugin_bins.sum(axis=-1)
    cl = cl_bins.sum(axis=-1)

    def scalar(x):
        return float(x) if not batch else x

    shape = batch + (n_classes, n_bins)
    return {
        "n_samples": int(round(float(N))) if not batch else N,
        "n_bins": n_bins,
        "bin_edges": np.linspace(0.0, 1.0, n_bins + 1),
        "sq_loss": scalar(sq_loss),
        "el_plugin": scalar(el_plugin),
        "el": scalar(el),
        "il_plugin": scalar(il_plugin),
        "il": scalar(sq_loss - el),
        "cl_plugin": scalar(cl_plugin),
        "cl": scalar(cl),
        "dl_plugin": scalar(dl_plugin_bins.sum(axis=-1)),
        "dl": scalar(dl_bins.sum(axis=-1)),
        "ce_plugin": scalar(np.sqrt(np.maximum(cl_plugin, 0.0))),
        "ce": scalar(np.sqrt(np.maximum(cl, 0.0))),
        "cl_plugin_per_class": cl_plugin_bins.reshape(shape).sum(axis=-1),
        "cl_per_class": cl_bins.reshape(shape).sum(axis=-1),
        "bin_count": np.rint(count).reshape(shape).astype(np.int64),
        "bin_count_valid": np.rint(count_valid).reshape(shape).astype(np.int64),
        "bin_mean_true": np.where(nonempty, mean_true, np.nan).reshape(shape),
        "bin_mean_pred": np.where(nonempty, mean_pred, np.nan).reshape(shape),
        "bin_var_true": var_true.reshape(shape),
        "cl_plugin_bins": cl_plugin_bins.reshape(shape),
        "cl_bins": cl_bins.reshape(shape),
        "dl_plugin_bins": dl_plugin_bins.reshape(shape),
        "dl_bins": dl_bins.reshape(shape),
    }


def _binned_calibration_terms(
    p_hat: np.ndarray, P: np.ndarray, n: np.ndarray, n_bins: int = 15
) -> dict:
    """All of Mimori et al.'s squared-loss terms, computed in one pass.

    Class-wise equal-width binning (eq. 12–14): for each class ``k`` the
    predictions ``P[:, k]`` are put in ``n_bins`` bins ``[j/B, (j+1)/B)``, the
    last one closed. Per-bin sums are accumulated block by block of rows
    (:func:`_cell_sums`, one ``np.bincount`` per statistic over the flat index
    ``k * n_bins + bin``), so no ``(n_samples, n_classes)`` temporary is made.

    Parameters
    ----------
    p_hat : ndarray of shape (n_samples, n_classes)
        Empirical human distributions ``Y / n``.
    P : ndarray of shape (n_samples, n_classes)
        Predicted probabilities.
    n : ndarray of shape (n_samples,)
        Annotations per item.
    n_bins : int, default=15
        Bins per class.

    Returns
    -------
    terms : dict
        Scalars (floats): ``sq_loss`` (L̂_sq, Prop. 1, unit weights),
        ``el_plugin``/``el`` (eq. 9/10), ``il_plugin``/``il`` (the irreducible
        part ``E Σ_k Q_k(1 − Q_k)``; ``il = sq_loss − el``), ``cl_plugin``/``cl``
        (eq. 13/14 summed), ``dl_plugin``/``dl`` (eq. 35/36, with SPEC's rule
        for which bins are corrected), ``ce_plugin``/``ce``
        (``sqrt(max(CL, 0))``).
        Arrays of shape (n_classes,): ``cl_plugin_per_class``,
        ``cl_per_class``. Arrays of shape (n_classes, n_bins):
        ``bin_count``, ``bin_count_valid`` (items with ``n_i >= 2``),
        ``bin_mean_true`` and ``bin_mean_pred`` (NaN in empty bins),
        ``bin_var_true`` (ddof=1 variance of ``p̂_k``; 0 for bins with fewer
        than two items), ``cl_plugin_bins``, ``cl_bins``, ``dl_plugin_bins``,
        ``dl_bins``. ``bin_edges`` has shape (n_bins + 1,). Also
        ``n_samples`` and ``n_bins``.
    """
    n_samples, n_classes = np.shape(P)
    sums = 0.0
    for sl in _row_blocks(n_samples, n_classes):
        sums = sums + _cell_sums(p_hat[sl], P[sl], n[sl], n_bins)
    return _terms_from_sums(sums, n_samples, n_bins)


def _pair_cell_sums(pair: _Pair, n_bins: int, weights=None) -> np.ndarray:
    """:func:`_cell_sums` of all items of a validated pair, block by block."""

    def block_sums(block):
        w = None if weights is None else weights[block.sl]
        return _cell_sums(block.p_hat, block.P, block.n, n_bins, w)

    sums = 0.0
    for partial in pair.map_blocks(block_sums):
        sums = sums + partial
    return sums


def _warn_single_annotations(n: np.ndarray, what: str) -> None:
    n_single = int(np.count_nonzero(n < 2))
    if n_single:
        warnings.warn(
            f"{n_single} of {n.shape[0]} items have a single annotation; the "
            f"bias correction of the debiased {what} needs n_i >= 2 and is "
            "skipped for them, so the estimate is biased upwards.",
            UserWarning,
            stacklevel=3,
        )


_COMMON = {
    "y_true": ["array-like"],
    "y_prob": ["array-like"],
    "counts": ["array-like", None],
    "labels": ["array-like", None],
}
_BINNED = {
    **_COMMON,
    "n_bins": [Interval(numbers.Integral, 1, None, closed="left")],
    "debiased": ["boolean"],
}


@validate_params(
    {**_COMMON, "sample_weight": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def expected_squared_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Unbiased estimate of the expected squared loss from label histograms.

    ``L̂_sq = Σ_i (w_i / W) Σ_k [(p̂_ik − q_ik)² + p̂_ik(1 − p̂_ik)]``
    (Mimori et al. 2021, Prop. 1, eq. 8), with ``p̂_i = Y_i / n_i``. Its
    expectation is ``E‖e_Y − q‖²``, the Brier score of a single random
    annotation, whatever the number of annotations; with one label per item
    it *is* the Brier score (sum over classes).

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (non-negative integer counts), or 1-D class labels
        (one annotation per item). Probabilities are rejected: the estimator
        needs the number of annotations ``n_i``.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities; for two classes a 1-D array is the
        probability of the second class.
    counts : array-like of shape (n_samples, n_classes), default=None
        Label histograms that replace ``y_true`` (metadata-routing
        convention: ``y_true`` is then ignored).
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob`` (default: a DataFrame's column
        names, else positional); see "Classes" in the module notes.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative item weights ``w_i``; unit weights by default.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import expected_squared_loss
    >>> Y = [[2, 0], [1, 1]]          # p̂ = [1, 0] and [0.5, 0.5]
    >>> q = [[1.0, 0.0], [1.0, 0.0]]
    >>> # item 0: 0 + 0; item 1: 0.25 + 0.25 + 0.25 + 0.25 = 1
    >>> expected_squared_loss(Y, q)
    0.5
    """
    pair = _validate_counts(y_true, y_prob, counts, labels)
    w = None
    if sample_weight is not None:
        w = check_sample_weight(sample_weight, pair.n, ensure_non_negative=True)
        if w.sum() <= 0:
            raise ValueError("sample_weight must have a positive sum.")
    total = 0.0
    for block in pair.blocks():
        p_hat = block.p_hat
        per_item = _row_sums((p_hat - block.P) ** 2 + p_hat * (1.0 - p_hat))
        if w is not None:
            per_item *= w[block.sl]
        total += float(per_item.sum())
    return total / (pair.n_samples if w is None else float(w.sum()))


@validate_params(
    {**_COMMON, "debiased": ["boolean"]}, prefer_skip_nested_validation=True
)
def epistemic_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    debiased: bool = True,
) -> float:
    """Epistemic loss ``EL = E‖Q − q‖²`` estimated from label histograms.

    Plug-in (eq. 9): ``(1/N) Σ_i Σ_k (p̂_ik − q_ik)²``, biased upwards by the
    sampling variance of ``p̂``. Debiased (Prop. 2, eq. 10, unbiased when every
    ``n_i >= 2``): subtract ``(1/N) Σ_i Σ_k p̂_ik(1 − p̂_ik)/(n_i − 1)``, the sum
    over items with ``n_i >= 2``; items with one annotation get no correction
    (a ``UserWarning`` says so). The debiased value can be negative.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (non-negative integer counts) or 1-D labels.
        Probabilities are rejected: the estimator needs ``n_i``.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities (1-D: probability of the second class).
    counts : array-like of shape (n_samples, n_classes), default=None
        Label histograms that replace ``y_true``.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob`` (default: a DataFrame's column
        names, else positional); see "Classes" in the module notes.
    debiased : bool, default=True
        Apply the bias correction of Prop. 2.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import epistemic_loss
    >>> Y = [[1, 1], [2, 0]]
    >>> q = [[0.5, 0.5], [0.5, 0.5]]
    >>> # plug-in: (0 + 0.5) / 2; correction: (0.25 + 0.25) / 1 / 2
    >>> epistemic_loss(Y, q, debiased=False)
    0.25
    >>> epistemic_loss(Y, q)
    0.0
    """
    pair = _validate_counts(y_true, y_prob, counts, labels)
    sq_err = correction = 0.0
    for block in pair.blocks():
        resid = block.p_hat - block.P
        sq_err += float(np.sum(resid * resid))
        if debiased:
            gini = block.p_hat * (1.0 - block.p_hat)
            # an elementwise product, not BLAS: a BLAS call per block costs
            # more than the block's arithmetic on a busy machine
            gini *= _correction_factor(block.n)[:, None]
            correction += float(gini.sum())
    el = sq_err / pair.n_samples
    if debiased:
        _warn_single_annotations(pair.n, "epistemic loss")
        el -= correction / pair.n_samples
    return el


def _binned(y_true, y_prob, counts, n_bins, labels) -> tuple[dict, np.ndarray]:
    pair = _validate_counts(y_true, y_prob, counts, labels)
    sums = _pair_cell_sums(pair, n_bins)
    return _terms_from_sums(sums, pair.n_samples, n_bins), pair.n


@validate_params(_BINNED, prefer_skip_nested_validation=True)
def calibration_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    debiased: bool = True,
) -> float:
    """Class-wise binned calibration loss ``CL`` from label histograms.

    For each class ``k``, items are binned by ``q_ik`` into ``n_bins``
    equal-width bins ``[j/B, (j+1)/B)``, the last one closed ``[1 − 1/B, 1]``.
    Plug-in (eq. 13): ``CL = Σ_k Σ_b (|B|/N)(mean_B p̂_k − mean_B q_k)²``.
    Debiased (Prop. 3, eq. 14): each bin with at least two items subtracts
    ``s²_B / N``, ``s²_B`` the ddof=1 sample variance of ``p̂_k`` in the bin
    (eq. 14's ``(|B|/N) σ̄²/(|B| − 1)``); bins with one item are not corrected
    and empty bins add 0. The correction also holds for single-label data,
    where it is Bröcker's (2012) debiased reliability. Can be negative.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (non-negative integer counts) or 1-D labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities (1-D: probability of the second class).
    counts : array-like of shape (n_samples, n_classes), default=None
        Label histograms that replace ``y_true``.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob`` (default: a DataFrame's column
        names, else positional); see "Classes" in the module notes.
    n_bins : int, default=15
        Equal-width bins per class.
    debiased : bool, default=True
        Apply the bias correction of Prop. 3.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import calibration_loss
    >>> Y = [[2, 0], [0, 2]]
    >>> q = [[0.5, 0.5], [0.5, 0.5]]
    >>> # one bin per class holds both items: mean p̂ = 0.5 = mean q
    >>> calibration_loss(Y, q, debiased=False)
    0.0
    >>> # s² = 0.5 in each class's bin: 0 - 2 * 0.5 / 2
    >>> calibration_loss(Y, q)
    -0.5
    """
    terms, _ = _binned(y_true, y_prob, counts, n_bins, labels)
    return terms["cl"] if debiased else terms["cl_plugin"]


@validate_params(_BINNED, prefer_skip_nested_validation=True)
def calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    debiased: bool = True,
) -> float:
    """Calibration error ``CE = sqrt(max(CL, 0))`` (Mimori et al. 2021, §2.1).

    See :func:`calibration_loss` for ``CL``; a negative debiased ``CL`` (an
    estimate that cannot tell the model from a calibrated one) gives 0.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (non-negative integer counts) or 1-D labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities (1-D: probability of the second class).
    counts : array-like of shape (n_samples, n_classes), default=None
        Label histograms that replace ``y_true``.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob`` (default: a DataFrame's column
        names, else positional); see "Classes" in the module notes.
    n_bins : int, default=15
        Equal-width bins per class.
    debiased : bool, default=True
        Use the debiased ``CL``.

    Returns
    -------
    error : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import calibration_error
    >>> Y = [[2, 0], [2, 0]]
    >>> q = [[0.5, 0.5], [0.5, 0.5]]
    >>> # CL = 0.25 + 0.25 (no within-bin variance), CE = sqrt(0.5)
    >>> round(calibration_error(Y, q), 6)
    0.707107
    """
    terms, _ = _binned(y_true, y_prob, counts, n_bins, labels)
    return terms["ce"] if debiased else terms["ce_plugin"]


@validate_params(_BINNED, prefer_skip_nested_validation=True)
def dispersion_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    debiased: bool = True,
) -> float:
    """Dispersion loss ``DL = EL − CL`` (Mimori et al. 2021, App. B.4).

    Plug-in (eq. 35): ``(1/N) Σ_k Σ_b Σ_{i∈B} ((p̂_ik − c̄_kb) − (q_ik − z̄_kb))²``
    with the bin means ``c̄``, ``z̄`` of :func:`calibration_loss`; it equals
    ``EL_plugin − CL_plugin`` exactly. Debiased (eq. 36): each bin with at
    least two items, one of them or more with ``n_i >= 2``, subtracts
    ``(1/N) Σ_{i∈B, n_i≥2} p̂_ik(1 − p̂_ik)/(n_i − 1) − s²_B/N``. Singleton bins
    are not corrected, so ``EL = CL + DL`` holds for the debiased estimates only
    when no bin is a singleton and every corrected bin has an item with
    ``n_i >= 2`` (the reference implementation's behaviour). A ``UserWarning``
    is raised when some items have a single annotation.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (non-negative integer counts) or 1-D labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities (1-D: probability of the second class).
    counts : array-like of shape (n_samples, n_classes), default=None
        Label histograms that replace ``y_true``.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob`` (default: a DataFrame's column
        names, else positional); see "Classes" in the module notes.
    n_bins : int, default=15
        Equal-width bins per class.
    debiased : bool, default=True
        Apply the bias correction of eq. 36.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import dispersion_loss
    >>> Y = [[2, 0], [0, 2]]
    >>> q = [[0.5, 0.5], [0.5, 0.5]]
    >>> # each class's bin: residuals ±0.5 around the bin means, 2 * 0.25 / 2
    >>> dispersion_loss(Y, q, debiased=False)
    0.5
    >>> # p̂(1 − p̂) = 0 and s² = 0.5 per class: 0.5 - 2 * (0 - 0.5 / 2)
    >>> dispersion_loss(Y, q)
    1.0
    """
    terms, n = _binned(y_true, y_prob, counts, n_bins, labels)
    if not debiased:
        return terms["dl_plugin"]
    _warn_single_annotations(n, "dispersion loss")
    return terms["dl"]


# --------------------------------------------------------------------------- #
# Registry declarations: the report's columns, the scorers and the command
# line's metric names are derived from these (see ._registry).
# --------------------------------------------------------------------------- #
from ._registry import Metric, Stats, register  # noqa: E402


def _gini_per_item(p_hat, n, debiased):
    """``Σ_k p̂_k(1 − p̂_k)``, times ``n/(n − 1)`` where ``n >= 2`` if debiased.

    The irreducible loss ``IL`` of an item (Mimori et al. 2021, eq. 6): the
    debiased version is the unbiased disagreement probability.
    """
    gini = _row_sums(p_hat * (1.0 - p_hat))
    return gini * (1.0 + _correction_factor(n)) if debiased else gini


def _epistemic_per_item(block, debiased):
    """``Σ_k (p̂ − q)²`` minus, if debiased, ``Σ_k p̂(1 − p̂)/(n − 1)`` (eq. 9–10)."""
    resid = block.p_hat - block.P
    el = _row_sums(resid * resid)
    if debiased:
        el -= _gini_per_item(block.p_hat, block.n, False) * _correction_factor(block.n)
    return el


_CLASSWISE_15 = Stats(
    "classwise_squared_bins",
    cells=lambda b, n_bins: _cell_values(b.p_hat, b.P, b.n, n_bins),
    n_cells=lambda n_classes, n_bins: (n_classes, n_bins),
    finish=_terms_from_sums,
    params=("n_bins",),
)


def _debiased_term(name):
    return lambda t, debiased: t[name if debiased else f"{name}_plugin"]


register(
    Metric(
        "expected_squared_loss",
        "sq_loss",
        expected_squared_loss,
        greater_is_better=False,
        description="unbiased expected squared loss L̂_sq of one annotation",
        source="Mimori et al. 2021, Prop. 1",
        per_item=lambda b: (
            _row_sums((b.p_hat - b.P) ** 2) + _gini_per_item(b.p_hat, b.n, False)
        ),
        requires="counts",
        order=100,
    )
)
for _column, _function, _source, _order in (
    ("el", epistemic_loss, "Prop. 2, eq. 9–10", 110),
    ("cl", calibration_loss, "eq. 12–14", 120),
    ("ce", calibration_error, "§2.1", 130),
    ("dl", dispersion_loss, "eq. 35–36", 140),
):
    _hooks = (
        {"per_item": _epistemic_per_item}
        if _column == "el"
        else {"stats": _CLASSWISE_15, "value": _debiased_term(_column)}
    )
    _what = _function.__name__.replace("_", " ")
    for _debiased in (True, False):
        register(
            Metric(
                _function.__name__ + ("" if _debiased else "_plugin"),
                _column + ("" if _debiased else "_plugin"),
                _function,
                greater_is_better=False,
                description=f"{_what} ({'debiased' if _debiased else 'plug-in'})",
                source=f"Mimori et al. 2021, {_source}",
                kwargs={} if _debiased else {"debiased": False},
                requires="counts",
                order=_order if _debiased else None,
                **_hooks,
            )
        )
for _debiased in (True, False):
    register(
        Metric(
            "irreducible_loss" + ("" if _debiased else "_plugin"),
            "il" + ("" if _debiased else "_plugin"),
            None,  # loss_decomposition's IL row: L̂_sq − EL
            greater_is_better=False,
            description="irreducible loss L̂_sq − EL "
            + ("(debiased)" if _debiased else "(plug-in)"),
            source="Mimori et al. 2021, eq. 6",
            per_item=lambda b, debiased: _gini_per_item(b.p_hat, b.n, debiased),
            kwargs={"debiased": _debiased},
            requires="counts",
        )
    )
