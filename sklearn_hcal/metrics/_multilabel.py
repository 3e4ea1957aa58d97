"""Soft evaluation of multi-label data, one binary distribution per label.

In multi-label annotation (VariErrNLI: an annotator may pick both
"entailment" and "neutral") each label ``l`` of item ``i`` has a human
probability ``t_il`` -- the fraction of the item's annotators who chose it --
and a predicted probability ``q_il``. LeWiDi 2025 and Kurniawan et al.
(2025) compare the binary distributions ``[1 − t_il, t_il]`` and
``[1 − q_il, q_il]`` label by label, then average.

Inputs are ``(n_samples, n_labels)`` arrays of per-label probabilities in
``[0, 1]`` (rows need not sum to one); with ``n_annotators=`` they are counts
of annotators per label. None of these metrics needs more than the
probabilities.

Why they are not in the metric registry
---------------------------------------
The registry's consumers -- :func:`human_calibration_report`, the
``HUMAN_SCORERS`` and ``hcal evaluate`` -- validate their labels as
single-label histograms: rows of counts or of probabilities that sum to one,
compared with one probability row per item. Per-label probabilities are
another data shape (rows need not sum to one, each column is its own binary
distribution), so a report column would have to bypass that validation and
the class alignment, and the command line has no multi-label file format.
They therefore stay plain functions. They do make scorers:
``make_human_scorer(multilabel_manhattan_distance)`` scores a classifier
whose ``predict_proba`` returns the ``(n_samples, n_labels)`` per-label
probabilities (e.g. :class:`~sklearn.multiclass.OneVsRestClassifier` on a
label-indicator ``y``) against ``y`` holding per-label human probabilities.
With exactly two labels scikit-learn passes a scorer only the second column
of ``predict_proba``, and the metric raises (the shapes differ).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_class_names, column_order, frame_names
from ..utils._compat import validate_params
from ._cells import cell_sums
from ._constraints import OPTIONAL_ARRAY, PAIR
from ._distribution_kernels import _jsd_per_item
from ._pearson import _pearson_cells, _pearson_or_raise

__all__ = [
    "multilabel_manhattan_distance",
    "multilabel_soft_micro_f1_score",
    "multilabel_po_jsd_score",
    "multilabel_entropy_correlation_score",
]

_COMMON = {**PAIR, "n_annotators": OPTIONAL_ARRAY}


def _as_label_matrix(X, name):
    """``(float64 (n, L) array, column names or None)``; 1-D is one label."""
    names = frame_names(X, name=name)
    raw = X.to_numpy() if hasattr(X, "to_numpy") else X
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from exc
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(
            f"{name} must be a non-empty (n_samples, n_labels) array, got shape "
            f"{arr.shape}."
        )
    finite = np.isfinite(arr)
    if not finite.all():
        row, col = np.argwhere(~finite)[0]
        raise ValueError(
            f"{name} contains NaN or infinity (row {row}, label {col}: "
            f"{float(arr[row, col])!r})."
        )
    return arr, names


def _check_n_annotators(n_annotators, n_items: int) -> np.ndarray:
    """``n_annotators`` as float64, one positive finite count per item."""
    raw = n_annotators.to_numpy() if hasattr(n_annotators, "to_numpy") else n_annotators
    try:
        n = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"n_annotators must be numeric: {exc}") from exc
    if n.ndim == 2 and n.shape[1] == 1:
        n = n[:, 0]
    if n.ndim != 1 or n.shape[0] != n_items:
        raise ValueError(
            f"n_annotators must hold one number of annotators per item: "
            f"{n_items} items, got shape {n.shape}."
        )
    bad = ~np.isfinite(n) | (n <= 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            "n_annotators must hold positive finite numbers of annotators (the "
            f"counts are divided by them); row {row} is {float(n[row])!r}."
        )
    return n


def _check_in_unit_interval(arr, name, hint=""):
    bad = (arr < 0) | (arr > 1)
    if np.any(bad):
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} must hold per-label probabilities in [0, 1]; row {row}, "
            f"label {col} is {arr[row, col]!r}.{hint}"
        )


def _check_multilabel(y_true, y_prob, counts=None, labels=None, n_annotators=None):
    """``(T, Q)``: human and predicted per-label probabilities, aligned."""
    target, name = (y_true, "y_true") if counts is None else (counts, "counts")
    T, t_names = _as_label_matrix(target, name)
    Q, q_names = _as_label_matrix(y_prob, "y_prob")
    if labels is not None:
        q_names = check_class_names(labels, n_columns=Q.shape[1], of="y_prob")
        if t_names is None:
            t_names = q_names
    if T.shape != Q.shape:
        raise ValueError(
            f"{name} and y_prob must have the same shape (n_samples, n_labels), "
            f"got {T.shape} and {Q.shape}."
        )
    if t_names is not None and q_names is not None:
        order = column_order(q_names, t_names, name="y_prob (labels)", target_name=name)
        if order is not None:
            Q = Q[:, order]
    if n_annotators is not None:
        T = T / _check_n_annotators(n_annotators, T.shape[0])[:, None]
    hint = "" if n_annotators is not None else " Pass n_annotators= for counts."
    _check_in_unit_interval(T, name, hint)
    _check_in_unit_interval(Q, "y_prob")
    return T, Q


def _binary(P):
    """``(n, L)`` probabilities -> ``(n·L, 2)`` rows ``[1 − p, p]``."""
    flat = P.reshape(-1)
    return np.column_stack([1.0 - flat, flat])


# --------------------------------------------------------------------------- #
# Per-item kernels
# --------------------------------------------------------------------------- #
def multilabel_manhattan_per_item(T, Q):
    """``(1/L) Σ_l (|t − q| + |(1 − t) − (1 − q)|) = (2/L) Σ_l |t_l − q_l|``."""
    return 2.0 * np.abs(T - Q).mean(axis=1)


def _multilabel_po_jsd_per_item(T, Q):
    """``1 − (1/L) Σ_l JSD₂([1 − t_l, t_l], [1 − q_l, q_l])`` per item."""
    jsd = _jsd_per_item(_binary(T), _binary(Q), base=2, squared=True)
    return 1.0 - jsd.reshape(T.shape).mean(axis=1)


def _multilabel_soft_micro_f1_parts_per_item(T, Q):
    """``(2 Σ_l min(t_l, q_l), Σ_l (t_l + q_l))`` per item.

    Kurniawan et al. (2025) pool the probabilities that each label applies
    (not the binary distributions): a label nobody chose and the model does
    not predict adds nothing.
    """
    return 2.0 * np.minimum(T, Q).sum(axis=1), (T + Q).sum(axis=1)


def _multilabel_entropy_correlation_parts_per_item(T, Q):
    """``(H₂(t_il), H₂(q_il))``, each ``(n, L)``: correlate column by column."""
    return _binary_normalised_entropy(T), _binary_normalised_entropy(Q)


def _binary_normalised_entropy(P):
    """Entropy of ``[1 − p, p]`` in bits, elementwise (``0 log 0 = 0``)."""
    P = np.asarray(P, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = -(P * np.log2(P)) - ((1.0 - P) * np.log2(1.0 - P))
    return np.where((P == 0) | (P == 1), 0.0, terms)


# --------------------------------------------------------------------------- #
# Public metrics
# --------------------------------------------------------------------------- #


@validate_params(_COMMON, prefer_skip_nested_validation=True)
def multilabel_manhattan_distance(
    y_true, y_prob, *, counts=None, labels=None, n_annotators=None
) -> float:
    """Mean average Manhattan distance of per-label binary distributions.

    ``MAMD = (1/N) Σ_i (1/L) Σ_l Σ_{k∈{0,1}} |p_ilk − t_ilk|`` (LeWiDi 2025,
    VariErrNLI soft evaluation), i.e. ``(1/N) Σ_i (2/L) Σ_l |q_il − t_il|``.
    It lies in ``[0, 2]``; lower is better.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        Human probability that each label applies (fraction of the item's
        annotators who chose it), or counts of annotators with
        ``n_annotators``. A DataFrame's columns are the labels.
    y_prob : array-like of shape (n_samples, n_labels)
        Predicted probability that each label applies.
    counts : array-like of shape (n_samples, n_labels), default=None
        Replaces ``y_true`` when given (metadata routing).
    labels : array-like of shape (n_labels,), default=None
        The label of each column of ``y_prob``.
    n_annotators : array-like of shape (n_samples,), default=None
        Annotators per item; when given, ``y_true`` holds counts.

    Returns
    -------
    float

    References
    ----------
    LeWiDi 2025 evaluation notebook ("MAMD", ``multilabel_average_MD``).

    Examples
    --------
    >>> from sklearn_hcal.metrics import multilabel_manhattan_distance
    >>> T = [[0.0, 0.5, 0.75]]   # contradiction, entailment, neutral
    >>> Q = [[0.0, 0.25, 1.0]]
    >>> float(multilabel_manhattan_distance(T, Q))  # (0 + 0.5 + 0.5) / 3
    0.3333333333333333
    """
    T, Q = _check_multilabel(y_true, y_prob, counts, labels, n_annotators)
    return float(multilabel_manhattan_per_item(T, Q).mean())


@validate_params(_COMMON, prefer_skip_nested_validation=True)
def multilabel_soft_micro_f1_score(
    y_true, y_prob, *, counts=None, labels=None, n_annotators=None
) -> float:
    """Soft micro-F1 over items and labels (Kurniawan et al., 2025).

    ``F1 = 2 Σ_i Σ_l min(t_il, q_il) / Σ_i Σ_l (t_il + q_il)``; higher is
    better. When no label applies anywhere, in the data or in the prediction,
    the two agree perfectly and the score is 1.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        Human probability that each label applies (fraction of the item's
        annotators who chose it), or counts of annotators with
        ``n_annotators``. A DataFrame's columns are the labels.
    y_prob : array-like of shape (n_samples, n_labels)
        Predicted probability that each label applies.
    counts : array-like of shape (n_samples, n_labels), default=None
        Replaces ``y_true`` when given (metadata routing).
    labels : array-like of shape (n_labels,), default=None
        The label of each column of ``y_prob``.
    n_annotators : array-like of shape (n_samples,), default=None
        Annotators per item; when given, ``y_true`` holds counts.

    Returns
    -------
    float

    References
    ----------
    Kurniawan, Mistica, Baldwin, Lau (2025). arXiv:2502.01891.

    Examples
    --------
    >>> from sklearn_hcal.metrics import multilabel_soft_micro_f1_score
    >>> T = [[0.2, 0.3], [0.1, 0.8]]
    >>> Q = [[0.8, 0.1], [0.3, 0.4]]
    >>> round(multilabel_soft_micro_f1_score(T, Q), 12)  # 2·0.8 / (1.4 + 1.6)
    0.533333333333
    """
    T, Q = _check_multilabel(y_true, y_prob, counts, labels, n_annotators)
    num, den = _multilabel_soft_micro_f1_parts_per_item(T, Q)
    den_total = float(den.sum())
    return 1.0 if den_total == 0 else float(num.sum()) / den_total


@validate_params(_COMMON, prefer_skip_nested_validation=True)
def multilabel_po_jsd_score(
    y_true, y_prob, *, counts=None, labels=None, n_annotators=None
) -> float:
    """PO-JSD of per-label binary distributions (Kurniawan et al., 2025).

    ``1 − (1/N) Σ_i (1/L) Σ_l JSD([1 − t_il, t_il], [1 − q_il, q_il])`` with
    the Jensen-Shannon divergence in bits; in ``[0, 1]``, higher is better.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        Human probability that each label applies (fraction of the item's
        annotators who chose it), or counts of annotators with
        ``n_annotators``. A DataFrame's columns are the labels.
    y_prob : array-like of shape (n_samples, n_labels)
        Predicted probability that each label applies.
    counts : array-like of shape (n_samples, n_labels), default=None
        Replaces ``y_true`` when given (metadata routing).
    labels : array-like of shape (n_labels,), default=None
        The label of each column of ``y_prob``.
    n_annotators : array-like of shape (n_samples,), default=None
        Annotators per item; when given, ``y_true`` holds counts.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import multilabel_po_jsd_score
    >>> float(multilabel_po_jsd_score([[1.0, 0.0]], [[0.0, 0.0]]))  # (0 + 1) / 2
    0.5
    """
    T, Q = _check_multilabel(y_true, y_prob, counts, labels, n_annotators)
    return float(_multilabel_po_jsd_per_item(T, Q).mean())


@validate_params(_COMMON, prefer_skip_nested_validation=True)
def multilabel_entropy_correlation_score(
    y_true, y_prob, *, counts=None, labels=None, n_annotators=None
) -> float:
    """Mean over labels of the correlation of binary entropies across items.

    For each label ``l``, Pearson's ``r`` between ``H₂(t_il)`` and
    ``H₂(q_il)`` over the items (binary entropies in bits), then the mean
    over labels (Kurniawan et al., 2025). A label whose entropies are the
    same for every item has no correlation: ValueError naming it.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        Human probability that each label applies (fraction of the item's
        annotators who chose it), or counts of annotators with
        ``n_annotators``. A DataFrame's columns are the labels.
    y_prob : array-like of shape (n_samples, n_labels)
        Predicted probability that each label applies.
    counts : array-like of shape (n_samples, n_labels), default=None
        Replaces ``y_true`` when given (metadata routing).
    labels : array-like of shape (n_labels,), default=None
        The label of each column of ``y_prob``.
    n_annotators : array-like of shape (n_samples,), default=None
        Annotators per item; when given, ``y_true`` holds counts.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import multilabel_entropy_correlation_score
    >>> T = [[0.5, 0.1], [0.2, 0.5], [0.0, 0.3]]
    >>> Q = [[0.4, 0.2], [0.1, 0.6], [0.05, 0.3]]
    >>> multilabel_entropy_correlation_score(T, Q) > 0.9
    True
    """
    T, Q = _check_multilabel(y_true, y_prob, counts, labels, n_annotators)
    h_true, h_pred = _multilabel_entropy_correlation_parts_per_item(T, Q)
    names = frame_names(y_true if counts is None else counts)
    labels_ = names if names is not None else range(T.shape[1])
    sums = cell_sums(*_pearson_cells(h_true, h_pred), T.shape[1])
    rs = _pearson_or_raise(sums, [f"entropies of label {lab!r}" for lab in labels_])
    return float(np.mean(rs))


# --------------------------------------------------------------------------- #
# How the official scorer rounds (not a report column: see the module notes)
# --------------------------------------------------------------------------- #
from ._registry import OfficialRounding, declare_official_rounding  # noqa: E402

# multilabel_average_MD: average_MD of each item's per-label distributions
# (each label's distance and the item's mean rounded), then the rounded mean
declare_official_rounding(
    "multilabel_manhattan_distance",
    OfficialRounding(
        "multilabel_average_MD", rounds=("label", "item", "mean"), multilabel=True
    ),
)
