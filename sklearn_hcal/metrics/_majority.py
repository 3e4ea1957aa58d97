"""Metrics against the human *majority* label.

Accuracy and the (classwise) expected calibration error treat the most frequent
human label as the gold standard. Baan et al. (2022, §3) show why this is
ill-posed when humans disagree -- the oracle that predicts the human
distribution itself has an ECE of about 0.25 on ChaosNLI-SNLI -- and these
functions are provided to reproduce that argument and the accuracy columns of
ChaosNLI's Table 5.

Class alignment (``labels=``): see "Classes" in :mod:`sklearn_hcal.metrics`.
"""

from __future__ import annotations

import numpy as np

from ..utils._compat import StrOptions
from ..utils._docstrings import fill_doc
from . import _majority_compiled as _compiled
from ._bins import bin_index
from ._constraints import N_BINS, PAIR
from ._dispatch import validate_params  # dask arrays: chunk-wise
from ._distribution_kernels import _pair_mean, validate_pair

__all__ = [
    "majority_accuracy_score",
    "expected_calibration_error",
    "classwise_expected_calibration_error",
]


# --------------------------------------------------------------------------- #
# Per-item helpers (validated arrays in)
# --------------------------------------------------------------------------- #
def _argmax_last(A):
    """Index of the last maximum of each row (what a stable argsort ends with)."""
    A = np.asarray(A)
    return A.shape[1] - 1 - np.argmax(A[:, ::-1], axis=1)


#: Up to this many columns (and entries: the columns are a copy)
#: :func:`first_max` works on the columns.
_COLUMNWISE_MAX = 255
_COLUMNWISE_ENTRIES = 2**20
_DESCENDING: dict = {}


def first_max(A) -> np.ndarray:
    """``np.argmax(A, axis=1)``: the column of each row's first maximum.

    numpy's row-wise argmax runs a loop with data-dependent branches for
    every row: slow for a few columns, and slower on rows its branch
    predictor has not seen. Up to :data:`_COLUMNWISE_MAX` columns (a
    block's entries) the same columns come from a transposed copy in
    whole-array passes: each row's maximum, where it is reached, and the
    first such column (the largest ``K − k`` among them). A row holding
    NaN gets argmax's answer (the first NaN) from argmax itself.
    """
    A = np.asarray(A)
    n_cols = A.shape[1]
    if (
        n_cols > _COLUMNWISE_MAX
        or not 0 < A.size <= _COLUMNWISE_ENTRIES
        or A.dtype.kind not in "biuf"
    ):
        return np.argmax(A, axis=1)
    columns = np.ascontiguousarray(A.T)
    best = np.maximum.reduce(columns, axis=0)
    if A.dtype.kind == "f" and np.isnan(best).any():
        return np.argmax(A, axis=1)
    weights = _DESCENDING.get(n_cols)
    if weights is None:
        weights = np.arange(n_cols, 0, -1, dtype=np.uint8)[:, None]
        _DESCENDING[n_cols] = weights
    reached = np.equal(columns, best).view(np.uint8)
    reached *= weights
    return n_cols - np.maximum.reduce(reached, axis=0).astype(np.intp)


def _majority_correct_per_item(Y, P, ties="first"):
    """Whether the model's top class is the human majority, per item.

    ``"first"``: ``argmax q == argmax Y``, both taking the first of tied
    maxima; ``"last"``: both take the last (``argsort(...)[-1]``, as in Baan et
    al.'s code); ``"any"``: the model's top class (first of its ties) is one of
    the tied most frequent human classes.
    """
    Y = np.asarray(Y)
    P = np.asarray(P)
    if ties == "first":
        return first_max(P) == first_max(Y)
    if ties == "last":
        return _argmax_last(P) == _argmax_last(Y)
    if ties == "any":
        top = np.argmax(P, axis=1)
        return Y[np.arange(Y.shape[0]), top] == Y.max(axis=1)
    raise ValueError(f"ties must be 'first', 'last' or 'any', got {ties!r}.")


def _binned_gap_cells(conf, correct, n_bins):
    """Cells and values of :func:`_binned_gap_sums` (see :mod:`._cells`).

    One slot; cell 0 collects the unbinned confidences (0), cells
    ``1..n_bins`` the bins, the last one confidences above 1. Statistics:
    ``correct − conf`` and a count.
    """
    cell = (bin_index(conf, n_bins) + 1)[:, None]
    values = np.empty((cell.shape[0], 1, 2))
    np.subtract(correct, conf, out=values[:, 0, 0], dtype=np.float64)
    values[:, 0, 1] = 1.0
    return cell, values


def _binned_gap_sums(conf, correct, n_bins, weights=None) -> np.ndarray:
    """Per-bin partial sums ``[Σ w(correct − conf), Σ w]`` of a block.

    Shape ``(2, n_bins + 2)``, laid out as in :func:`_binned_gap_cells`.
    ``weights`` are item multiplicities (bootstrap), 1 by default. Partial
    sums of blocks add up to those of the whole data set.
    """
    # The sums of cell_sums(*_binned_gap_cells(...)) to the bit, without the
    # interleaved values: one bincount per statistic, adding the same
    # products w·value in the same order (integer counts are exact).
    conf = np.asarray(conf, dtype=np.float64)
    cell = bin_index(conf, n_bins, start=1)
    gap = np.subtract(correct, conf, dtype=np.float64)
    sums = np.empty((2, n_bins + 2))
    if weights is None:
        sums[1] = np.bincount(cell, minlength=n_bins + 2)  # exact in float64
    else:
        w = np.asarray(weights, dtype=np.float64)
        sums[1] = np.bincount(cell, weights=w, minlength=n_bins + 2)
        gap *= w
    sums[0] = np.bincount(cell, weights=gap, minlength=n_bins + 2)
    return sums


def _binned_gap_from_sums(sums):
    """``Σ_b (|B_b| / N_binned) |acc_b − conf_b|`` from :func:`_binned_gap_sums`.

    ``|B| · |acc_B − conf_B| = |Σ_{i∈B} (correct_i − conf_i)|``. ``sums`` may
    carry leading axes (one set of sums per bootstrap resample); the result
    then has them too, else it is a float. No binned item gives 0.
    """
    sums = np.asarray(sums, dtype=np.float64)
    if sums.ndim == 2:  # one set: two numpy calls (the counts are >= 0, so
        # abs leaves them; each row is summed as on its own)
        gap, n_binned = np.abs(sums[:, 1:]).sum(axis=-1)
        return float(gap / n_binned) if n_binned > 0 else 0.0
    n_binned = sums[..., 1, 1:].sum(axis=-1)
    gap = np.abs(sums[..., 0, 1:]).sum(axis=-1)
    out = np.divide(gap, n_binned, out=np.zeros_like(gap), where=n_binned > 0)
    return float(out) if out.ndim == 0 else out


def _binned_gap(conf, correct, n_bins, weights=None):
    """``Σ_b (|B_b| / N_binned) |acc_b − conf_b|`` for one set of confidences."""
    return _binned_gap_from_sums(_binned_gap_sums(conf, correct, n_bins, weights))


def top_class(P):
    """``(argmax q, max q)`` per row; :func:`first_max` and a gather of the
    values (from the flat array: ``take_along_axis`` builds index grids)."""
    top = first_max(P)
    return top, np.asarray(P).reshape(-1).take(_flat_index(top, P.shape[1]))


def _flat_index(columns, n_columns: int) -> np.ndarray:
    """The position of ``(i, columns[i])`` in a C-ordered ``(n, n_columns)``
    array's flattening: one index array, not two (fancy indexing by
    ``[arange(n), columns]`` costs twice as much)."""
    return columns + np.arange(0, columns.shape[0] * n_columns, n_columns)


def _block_majority(block):
    """Cached human majority (first maximum of ``Y``) of a block."""
    if "majority" not in block.cache:
        block.cache["majority"] = first_max(block.Y)
    return block.cache["majority"]


def _block_top(block):
    """Cached ``(top class, confidence, majority correct)`` of a block."""
    if "top" not in block.cache:
        top, conf = top_class(block.P)
        block.cache["top"] = (top, conf, top == _block_majority(block))
    return block.cache["top"]


def _classwise_cells(majority, P, n_bins):
    """Cells and values of :func:`_classwise_sums` (see :mod:`._cells`).

    One slot per class ``k``, cells laid out as in :func:`_binned_gap_cells`
    (flat index ``k * (n_bins + 2) + bin + 1``); statistics
    ``1[majority = k] − q_k`` and a count.
    """
    P = np.asarray(P, dtype=np.float64)
    n_rows, n_classes = P.shape
    width = n_bins + 2
    cell = bin_index(P, n_bins, slot_width=width, start=1)
    values = np.empty((n_rows, n_classes, 2))
    np.negative(P, out=values[..., 0])
    values[np.arange(n_rows), majority, 0] += 1.0
    values[..., 1] = 1.0
    return cell, values


def _classwise_sums(majority, P, n_bins, weights=None) -> np.ndarray:
    """Per-(class, bin) partial sums ``[Σ w(1[maj = k] − q_k), Σ w]`` of a block.

    Shape ``(2, n_classes, n_bins + 2)``, bins laid out as in
    :func:`_binned_gap_sums`.
    """
    P = np.asarray(P, dtype=np.float64)
    n_classes = P.shape[1]
    width = n_bins + 2
    n_cells = n_classes * width
    # The sums of cell_sums(*_classwise_cells(...)) to the bit, without the
    # interleaved values: one bincount per statistic, adding the same
    # products w·value in the same order (integer counts are exact).
    flat = bin_index(P, n_bins, slot_width=width, start=1).reshape(-1)
    gap = np.negative(P).reshape(-1)
    gap[_flat_index(majority, n_classes)] += 1.0
    sums = np.empty((2, n_cells))
    if weights is None:
        sums[1] = np.bincount(flat, minlength=n_cells)  # exact in float64
    else:
        w = np.repeat(np.asarray(weights, dtype=np.float64), n_classes)
        sums[1] = np.bincount(flat, weights=w, minlength=n_cells)
        gap *= w
    sums[0] = np.bincount(flat, weights=gap, minlength=n_cells)
    return sums.reshape(2, n_classes, width)


def _classwise_from_sums(sums):
    """Mean over classes of the per-class ECE (a class never binned adds 0).

    ``sums`` has shape ``(..., 2, n_classes, n_bins + 2)``; leading axes (one
    per bootstrap resample) are kept, else the result is a float.
    """
    sums = np.asarray(sums, dtype=np.float64)
    per_class_gap = np.abs(sums[..., 0, :, 1:]).sum(axis=-1)
    n_binned = sums[..., 1, :, 1:].sum(axis=-1)
    per_class = np.divide(
        per_class_gap,
        n_binned,
        out=np.zeros_like(per_class_gap),
        where=n_binned > 0,
    )
    out = per_class.mean(axis=-1)
    return float(out) if out.ndim == 0 else out


def _block_confidence_sums(block, n_bins):
    """:func:`_binned_gap_sums` of a block (compiled when the kernels run)."""
    sums = _compiled.binned_sums(block, n_bins, False)
    if sums is None:
        return _binned_gap_sums(*_block_top(block)[1:], n_bins)
    return sums[:, 0]


def _block_classwise_sums(block, n_bins, weights=None):
    sums = _compiled.binned_sums(block, n_bins, True, weights)
    if sums is None:  # the numpy path (no kernels, or weights)
        return _classwise_sums(_block_majority(block), block.P, n_bins, weights)
    return sums


# --------------------------------------------------------------------------- #
# Public metrics
# --------------------------------------------------------------------------- #
@validate_params(
    {**PAIR, "ties": [StrOptions({"first", "last", "any"})]},
    prefer_skip_nested_validation=True,
)
@fill_doc
def majority_accuracy_score(
    y_true, y_prob, *, counts=None, labels=None, ties: str = "first"
) -> float:
    """Accuracy of the model's top class against the human majority label.

    The accuracy columns of ChaosNLI (Nie et al., 2020, Table 5) and Baan et
    al. (2022, Table 1). With human ties the majority is ambiguous; ``ties``
    fixes the rule.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms, human probability rows, or 1-D labels (then this is
        plain accuracy).
    %(y_prob)s
    %(counts)s
    %(labels)s
    ties : {"first", "last", "any"}, default="first"
        ``"first"``: compare ``argmax`` of both (first maximum, like
        :func:`numpy.argmax`); ``"last"``: compare the last maxima (the final
        element of a stable ``argsort``, used for Baan et al.'s Table 1);
        ``"any"``: correct when the predicted class is among the tied most
        frequent human classes.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import majority_accuracy_score
    >>> Y = [[5, 5, 0], [1, 8, 1]]
    >>> P = [[0.2, 0.7, 0.1], [0.1, 0.8, 0.1]]
    >>> float(majority_accuracy_score(Y, P))  # first-tie majority of item 1 is 0
    0.5
    >>> float(majority_accuracy_score(Y, P, ties="any"))
    1.0
    """
    pair = validate_pair(y_true, y_prob, counts, labels=labels)
    return _pair_mean(pair, lambda b: _majority_correct_per_item(b.Y, b.P, ties))


@validate_params(
    {**PAIR, "n_bins": N_BINS},
    prefer_skip_nested_validation=True,
)
@fill_doc
def expected_calibration_error(
    y_true, y_prob, *, counts=None, labels=None, n_bins: int = 10
) -> float:
    """Confidence ECE against the human majority label.

    ``ECE = Σ_b (|B_b| / N) |acc(B_b) − conf(B_b)|`` (Baan et al., 2022, eq. 3;
    Guo et al., 2017) with confidence ``max_k q_ik``, prediction ``argmax q``
    and the majority ``argmax Y`` (first maximum on ties), ``n_bins``
    equal-width right-closed bins ``(a, b]``, normalised by the number of
    binned items.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    n_bins : int, default=10
        Number of equal-width confidence bins.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import expected_calibration_error
    >>> Y = [[3, 1], [1, 3], [3, 1], [3, 1]]
    >>> P = [[0.75, 0.25]] * 4  # confidence 0.75, majority hit on 3 of 4
    >>> float(expected_calibration_error(Y, P))
    0.0
    """
    pair = validate_pair(y_true, y_prob, counts, labels=labels)
    sums = 0.0
    for partial in pair.map_blocks(lambda b: _block_confidence_sums(b, n_bins)):
        sums = sums + partial
    return _binned_gap_from_sums(sums)


@validate_params(
    {**PAIR, "n_bins": N_BINS},
    prefer_skip_nested_validation=True,
)
@fill_doc
def classwise_expected_calibration_error(
    y_true, y_prob, *, counts=None, labels=None, n_bins: int = 10
) -> float:
    """Classwise ECE against the human majority label.

    ``cwECE = (1/K) Σ_k Σ_b (|B_bk| / N_k) |acc(B_bk) − conf(B_bk)|`` (Baan et
    al., 2022, eq. 8; Nixon et al., 2019): for each class ``k`` the confidence
    is ``q_ik`` and the "accuracy" ``1[argmax Y_i = k]`` (first maximum on
    ties). Bins are equal-width and right-closed ``(a, b]``, so items with
    ``q_ik = 0`` fall in no bin; ``N_k`` counts the binned items of class
    ``k`` (a class with none contributes 0).

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    n_bins : int, default=10
        Number of equal-width bins per class.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import classwise_expected_calibration_error
    >>> Y = [[1, 0], [0, 1]]
    >>> P = [[0.9, 0.1], [0.1, 0.9]]  # every bin is off by 0.1
    >>> round(classwise_expected_calibration_error(Y, P), 12)
    0.1
    """
    pair = validate_pair(y_true, y_prob, counts, labels=labels)
    sums = 0.0
    for partial in pair.map_blocks(lambda block: _block_classwise_sums(block, n_bins)):
        sums = sums + partial
    return _classwise_from_sums(sums)


# --------------------------------------------------------------------------- #
# Registry declarations: the report's columns, the scorers and the command
# line's metric names are derived from these (see ._registry).
# --------------------------------------------------------------------------- #
from ._registry import Metric, Stats, register  # noqa: E402


def _block_majority_correct(block, ties):
    """Per-item majority correctness; ``"first"`` reuses the block's top class."""
    if ties == "first":
        return _block_top(block)[2]
    return _majority_correct_per_item(block.Y, block.P, ties)


def _block_confidence_cells(block, n_bins):
    _, conf, correct = _block_top(block)
    return _binned_gap_cells(conf, correct, n_bins)


def _classwise_terms(sums, n_samples, n_bins):
    width = n_bins + 2
    shape = sums.shape[:-1] + (sums.shape[-1] // width, width)
    return {"classwise_ece": _classwise_from_sums(sums.reshape(shape))}


_CONFIDENCE_BINS = Stats(
    "confidence_bins",
    cells=_block_confidence_cells,
    n_cells=lambda n_classes, n_bins: (1, n_bins + 2),
    finish=lambda sums, n_samples, n_bins: {"ece": _binned_gap_from_sums(sums)},
    params=("n_bins",),
    # the metric function's reduction of a block (the kernel or bincounts)
    sums=_block_confidence_sums,
)
_CLASSWISE_BINS = Stats(
    "classwise_confidence_bins",
    cells=lambda b, n_bins: _classwise_cells(_block_majority(b), b.P, n_bins),
    n_cells=lambda n_classes, n_bins: (n_classes, n_bins + 2),
    finish=_classwise_terms,
    params=("n_bins",),
    sums=lambda b, n_bins: _block_classwise_sums(b, n_bins).reshape(2, -1),
)

register(
    Metric(
        "majority_accuracy_score",
        "accuracy",
        majority_accuracy_score,
        greater_is_better=True,
        description="accuracy of argmax q against the human majority",
        source="Nie et al. 2020, Table 5; Baan et al. 2022, Table 1",
        # only argmax q counts: every q with the majority's argmax ties
        proper=False,
        per_item=_block_majority_correct,
        scorer="majority_accuracy",
        order=10,
        bounds=(0.0, 1.0),
    )
)
register(
    Metric(
        "expected_calibration_error",
        "ece",
        expected_calibration_error,
        greater_is_better=False,
        description="confidence ECE against the majority label",
        source="Baan et al. 2022, eq. 3",
        # a calibration error: the constant prediction of the marginal can
        # reach 0, and it scores the majority label, not the distribution
        proper=False,
        stats=_CONFIDENCE_BINS,
        value=lambda t: t["ece"],
        order=20,
        bounds=(0.0, 1.0),
    )
)
register(
    Metric(
        "classwise_expected_calibration_error",
        "classwise_ece",
        classwise_expected_calibration_error,
        greater_is_better=False,
        description="classwise ECE against the majority label",
        source="Baan et al. 2022, eq. 8",
        # a calibration error against the majority label (as ece)
        proper=False,
        stats=_CLASSWISE_BINS,
        value=lambda t: t["classwise_ece"],
        order=30,
        bounds=(0.0, 1.0),
    )
)
