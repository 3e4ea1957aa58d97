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
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, validate_params
from sklearn.utils.validation import _check_sample_weight

from .._validation import check_histograms_and_probabilities

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
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.searchsorted(edges[1:-1], values, side="right")


def _histograms_to_distributions(
    y_true, y_prob, counts
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated ``(p_hat, P, n)`` in float64; integer counts are required."""
    Y, P = check_histograms_and_probabilities(
        y_true, y_prob, counts=counts, allow_probabilities=False
    )
    Y = np.asarray(Y, dtype=np.float64)
    n = Y.sum(axis=1)
    return Y / n[:, None], np.asarray(P, dtype=np.float64), n


def _variance_correction(p_hat: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per item and class, ``p̂(1 − p̂)/(n − 1)`` (Prop. 2); 0 where ``n < 2``.

    ``p̂(1 − p̂)/(n − 1)`` is the unbiased estimate of ``Var(p̂_ik)`` =
    ``Q_ik(1 − Q_ik)/n_i``; it does not exist for a single annotation, so those
    items contribute no correction.
    """
    valid = n >= 2
    denom = np.where(valid, n - 1.0, 1.0)
    return np.where(valid[:, None], p_hat * (1.0 - p_hat) / denom[:, None], 0.0)


def _binned_calibration_terms(
    p_hat: np.ndarray, P: np.ndarray, n: np.ndarray, n_bins: int = 15
) -> dict:
    """All of Mimori et al.'s squared-loss terms, computed in one pass.

    Class-wise equal-width binning (eq. 12–14): for each class ``k`` the
    predictions ``P[:, k]`` are put in ``n_bins`` bins ``[j/B, (j+1)/B)``, the
    last one closed. Per-bin sums use one ``np.bincount`` over the flat index
    ``k * n_bins + bin``.

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
    n_samples, n_classes = P.shape
    n_cells = n_classes * n_bins
    bins = _bin_indices(P, n_bins)
    flat = (np.arange(n_classes) * n_bins + bins).ravel()

    count = np.bincount(flat, minlength=n_cells).astype(np.float64)
    sum_true = np.bincount(flat, weights=p_hat.ravel(), minlength=n_cells)
    sum_pred = np.bincount(flat, weights=P.ravel(), minlength=n_cells)
    nonempty = count > 0
    safe_count = np.where(nonempty, count, 1.0)
    mean_true = sum_true / safe_count
    mean_pred = sum_pred / safe_count

    # Deviations from the bin means (rather than sums of squares) keep the
    # within-bin variances accurate when p̂ is nearly constant in a bin.
    dev_true = p_hat.ravel() - mean_true[flat]
    dev_pred = P.ravel() - mean_pred[flat]
    ss_true = np.bincount(flat, weights=dev_true**2, minlength=n_cells)
    ss_resid = np.bincount(flat, weights=(dev_true - dev_pred) ** 2, minlength=n_cells)
    multi = count >= 2
    var_true = np.where(multi, ss_true / np.where(multi, count - 1.0, 1.0), 0.0)

    corr_item = _variance_correction(p_hat, n)
    corr_sum = np.bincount(flat, weights=corr_item.ravel(), minlength=n_cells)
    valid_item = np.broadcast_to((n >= 2)[:, None], P.shape).ravel()
    count_valid = np.bincount(
        flat, weights=valid_item.astype(np.float64), minlength=n_cells
    )

    # eq. 13 and Prop. 3: (|B|/N)(c̄ − z̄)² − (|B|/N) σ̄²/(|B| − 1), where
    # σ̄²|B|/(|B| − 1) is the ddof=1 variance, so the correction is var/N.
    cl_plugin_bins = count / n_samples * (mean_true - mean_pred) ** 2
    cl_bins = cl_plugin_bins - var_true / n_samples
    # eq. 35–36; the correction is applied to bins with >= 2 items of which at
    # least one has n_i >= 2 (SPEC §2, the reference implementation's rule).
    dl_plugin_bins = ss_resid / n_samples
    dl_corrected = multi & (count_valid > 0)
    dl_bins = dl_plugin_bins - np.where(
        dl_corrected, (corr_sum - var_true) / n_samples, 0.0
    )

    sq_err = ((p_hat - P) ** 2).sum(axis=1)
    gini = (p_hat * (1.0 - p_hat)).sum(axis=1)
    el_plugin = float(sq_err.mean())
    el = el_plugin - float(corr_item.sum()) / n_samples
    il_plugin = float(gini.mean())
    sq_loss = el_plugin + il_plugin
    cl_plugin = float(cl_plugin_bins.sum())
    cl = float(cl_bins.sum())

    shape = (n_classes, n_bins)
    return {
        "n_samples": n_samples,
        "n_bins": n_bins,
        "bin_edges": np.linspace(0.0, 1.0, n_bins + 1),
        "sq_loss": sq_loss,
        "el_plugin": el_plugin,
        "el": el,
        "il_plugin": il_plugin,
        "il": sq_loss - el,
        "cl_plugin": cl_plugin,
        "cl": cl,
        "dl_plugin": float(dl_plugin_bins.sum()),
        "dl": float(dl_bins.sum()),
        "ce_plugin": float(np.sqrt(max(cl_plugin, 0.0))),
        "ce": float(np.sqrt(max(cl, 0.0))),
        "cl_plugin_per_class": cl_plugin_bins.reshape(shape).sum(axis=1),
        "cl_per_class": cl_bins.reshape(shape).sum(axis=1),
        "bin_count": count.reshape(shape).astype(np.int64),
        "bin_count_valid": count_valid.reshape(shape).astype(np.int64),
        "bin_mean_true": np.where(nonempty, mean_true, np.nan).reshape(shape),
        "bin_mean_pred": np.where(nonempty, mean_pred, np.nan).reshape(shape),
        "bin_var_true": var_true.reshape(shape),
        "cl_plugin_bins": cl_plugin_bins.reshape(shape),
        "cl_bins": cl_bins.reshape(shape),
        "dl_plugin_bins": dl_plugin_bins.reshape(shape),
        "dl_bins": dl_bins.reshape(shape),
    }


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
    p_hat, P, n = _histograms_to_distributions(y_true, y_prob, counts)
    per_item = ((p_hat - P) ** 2 + p_hat * (1.0 - p_hat)).sum(axis=1)
    if sample_weight is None:
        return float(per_item.mean())
    w = _check_sample_weight(sample_weight, per_item, ensure_non_negative=True)
    total = w.sum()
    if total <= 0:
        raise ValueError("sample_weight must have a positive sum.")
    return float(np.dot(w, per_item) / total)


@validate_params(
    {**_COMMON, "debiased": ["boolean"]}, prefer_skip_nested_validation=True
)
def epistemic_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
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
    p_hat, P, n = _histograms_to_distributions(y_true, y_prob, counts)
    el = float(((p_hat - P) ** 2).sum(axis=1).mean())
    if debiased:
        _warn_single_annotations(n, "epistemic loss")
        el -= float(_variance_correction(p_hat, n).sum()) / n.shape[0]
    return el


def _binned(y_true, y_prob, counts, n_bins) -> tuple[dict, np.ndarray]:
    p_hat, P, n = _histograms_to_distributions(y_true, y_prob, counts)
    return _binned_calibration_terms(p_hat, P, n, n_bins), n


@validate_params(_BINNED, prefer_skip_nested_validation=True)
def calibration_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
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
    terms, _ = _binned(y_true, y_prob, counts, n_bins)
    return terms["cl"] if debiased else terms["cl_plugin"]


@validate_params(_BINNED, prefer_skip_nested_validation=True)
def calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
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
    terms, _ = _binned(y_true, y_prob, counts, n_bins)
    return terms["ce"] if debiased else terms["ce_plugin"]


@validate_params(_BINNED, prefer_skip_nested_validation=True)
def dispersion_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
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
    terms, n = _binned(y_true, y_prob, counts, n_bins)
    if not debiased:
        return terms["dl_plugin"]
    _warn_single_annotations(n, "dispersion loss")
    return terms["dl"]
