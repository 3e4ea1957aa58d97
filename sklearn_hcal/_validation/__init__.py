"""Input validation shared by metrics, scorers and estimators.

Conventions (SPEC §1):

* a *label histogram* is an ``(n_samples, n_classes)`` array of non-negative
  integer counts, one row per item, with at least one annotation per row;
* a 1-D array, or an ``(n, 1)`` column, is a vector of class labels, i.e. one
  annotation per item (a one-hot histogram);
* a *probability matrix* is ``(n_samples, n_classes)``, finite, non-negative,
  rows summing to one; for two classes a 1-D array is the probability of the
  second class (what scikit-learn's scorers pass).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property

import numpy as np

__all__ = [
    "PROBA_FLOOR",
    "ROUNDING_TOL_PER_CLASS",
    "ROW_SUM_TOL",
    "is_histogram_target",
    "looks_like_probabilities",
    "probabilities_to_logits",
    "row_sum_tolerance",
    "check_label_histograms",
    "check_probabilities",
    "check_logits",
    "check_histograms_and_probabilities",
    "column_order",
    "labels_to_histograms",
]

#: Tolerance on ``|row sum - 1|`` for probability rows computed in float64
#: (float32 rows get ``1e-5``).
ROW_SUM_TOL = 1e-6

#: Allowance per class for probabilities rounded before they were saved: a
#: row rounded to ``d >= 3`` decimals is off by at most ``K * 5e-4`` from 1,
#: so rows within :func:`row_sum_tolerance` are taken as probabilities (and
#: renormalised where they are used).
ROUNDING_TOL_PER_CLASS = 5e-4

#: Floor applied to probabilities before taking their log (a zero
#: probability gives the finite logit ``log(1e-12)``).
PROBA_FLOOR = 1e-12


def row_sum_tolerance(n_classes: int, dtype=np.float64) -> float:
    """Largest ``|row sum - 1|`` of a row still read as probabilities.

    ``max(ROW_SUM_TOL, ROUNDING_TOL_PER_CLASS * n_classes)`` (``1e-5`` instead
    of ``ROW_SUM_TOL`` for float32): exact probabilities, and probabilities
    rounded to three or more decimals, pass; anything further off is not a
    probability row.
    """
    base = ROW_SUM_TOL if np.dtype(dtype) == np.float64 else max(ROW_SUM_TOL, 1e-5)
    return max(base, ROUNDING_TOL_PER_CLASS * int(n_classes))


def is_histogram_target(y) -> bool:
    """Whether ``y`` is a label histogram: 2-D with more than one column.

    A 1-D array or an ``(n, 1)`` column is a vector of labels (SPEC §1).
    DataFrames, sparse matrices and nested lists are recognised by their
    shape; an object without a regular shape (a ragged list) is not a
    histogram (its validation then raises).
    """
    shape = getattr(y, "shape", None)
    if not isinstance(shape, tuple):
        try:
            shape = np.asarray(y).shape
        except ValueError:  # ragged nested lists
            return False
    return len(shape) == 2 and shape[1] > 1


def looks_like_probabilities(X) -> bool:
    """Whether ``X`` reads as rows of class probabilities, not logits.

    True when ``X`` is 2-D with at least two columns, every entry lies in
    ``[0, 1]`` and every row sums to 1 within :func:`row_sum_tolerance`
    (so probabilities rounded to three decimals still count).
    """
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] < 2 or X.shape[0] == 0 or X.dtype.kind not in "biuf":
        return False
    if np.any(X < 0) or np.any(X > 1):
        return False
    tol = row_sum_tolerance(X.shape[1], X.dtype)
    return bool(np.all(np.abs(X.sum(axis=1, dtype=np.float64) - 1.0) <= tol))


def probabilities_to_logits(P) -> np.ndarray:
    """``log(max(p / row sum, PROBA_FLOOR))`` as float64.

    Rows are renormalised first (rounded probabilities), so the softmax of
    the result gives back the normalised ``P`` (up to the floor).
    """
    P = np.asarray(P, dtype=np.float64)
    sums = P.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        P = np.where(sums > 0, P / sums, P)
    return np.log(np.maximum(P, PROBA_FLOOR))


#: Rows per block of the chunked passes (validation and metrics). ``None``
#: picks about :data:`_CHUNK_ELEMENTS` elements per block, which keeps a
#: block's float64 temporaries in the CPU cache while amortising numpy's
#: per-call overhead. Tests set it to a tiny value to exercise the chunking.
_CHUNK_ROWS: int | None = None
_CHUNK_ELEMENTS = 2**17


def _chunk_rows(n_columns: int = 1) -> int:
    """Rows per block: :data:`_CHUNK_ROWS`, or ~``_CHUNK_ELEMENTS`` elements."""
    if _CHUNK_ROWS is not None:
        return max(int(_CHUNK_ROWS), 1)
    return max(_CHUNK_ELEMENTS // max(int(n_columns), 1), 1024)


def _n_threads(n_blocks: int) -> int:
    """Threads for a metric's block pass.

    numpy releases the GIL in the element-wise kernels, reductions, sorts and
    ``bincount`` the metrics are made of, so row blocks run in parallel on
    threads. ``HCAL_NUM_THREADS`` caps the count (default: the CPU count, at
    most 4). Off the main thread (joblib or dask worker threads, which are
    parallel already) and for a single block the pass stays serial.
    """
    if n_blocks < 2 or threading.current_thread() is not threading.main_thread():
        return 1
    env = os.environ.get("HCAL_NUM_THREADS", "").strip()
    limit = int(env) if env.isdigit() and int(env) > 0 else min(os.cpu_count() or 1, 4)
    return max(1, min(limit, n_blocks))


def _row_blocks(n_rows: int, n_columns: int = 1, chunk_rows: int | None = None):
    """Consecutive row slices covering ``range(n_rows)``.

    Every chunked computation of the package walks its inputs with this
    generator, so that memory stays ``O(block)`` whatever ``n_rows`` is and
    a memory-mapped input is read once, block by block.
    """
    step = _chunk_rows(n_columns) if chunk_rows is None else max(int(chunk_rows), 1)
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def _map_row_blocks(fn, n_rows: int, n_columns: int = 1, chunk_rows=None) -> list:
    """``[fn(sl) for sl in _row_blocks(...)]``, on threads for several blocks.

    Results come back in block order, so reducing them adds the same numbers
    in the same order as a serial loop, whatever the number of threads (see
    :func:`_n_threads`).
    """
    slices = list(_row_blocks(n_rows, n_columns, chunk_rows))
    n_threads = _n_threads(len(slices))
    if n_threads == 1:
        return [fn(sl) for sl in slices]
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        return list(pool.map(fn, slices))


def _row_sums(block: np.ndarray) -> np.ndarray:
    """Row sums in float64.

    ``einsum`` is several times faster than ``sum(axis=1)`` for a few
    columns and, unlike a BLAS product, its summation order does not depend
    on the number of threads, so results are reproducible across processes.
    """
    if block.dtype.kind in "biu":
        return np.einsum("ij->i", block, dtype=np.int64, casting="unsafe").astype(
            np.float64
        )
    if block.dtype != np.float64:
        block = block.astype(np.float64)
    return np.einsum("ij->i", block)


def _to_array(X, *, name: str, allow_1d: bool = False, keep_int: bool = True):
    """``(array, classes)`` without copying float32/float64 (or integer) input.

    Object and string data are converted to float64 (or rejected); bool and
    float16 become float64; integers are kept when ``keep_int`` (the chunked
    passes convert them block by block). Only the shape is checked here, the
    values by :func:`_scan_histograms` / :func:`_scan_probabilities`.
    """
    classes = None
    if hasattr(X, "columns") and hasattr(X, "to_numpy"):  # pandas DataFrame
        classes = np.asarray(X.columns)
        X = X.to_numpy()
    elif hasattr(X, "to_numpy"):  # pandas Series
        X = X.to_numpy()
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be converted to an array: {exc}") from exc
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} must be numeric, got an array of dtype {arr.dtype}."
            ) from exc
    if arr.dtype in (np.float64, np.float32):
        pass
    elif keep_int and arr.dtype.kind in "iu":
        pass
    else:
        arr = arr.astype(np.float64)
    if arr.ndim == 1 and not allow_1d:
        raise ValueError(f"{name} must be 2-D, got a 1-D array of shape {arr.shape}.")
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D, got {arr.ndim} dimensions.")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is required.")
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"{name} has no columns: at least one class is required.")
    return arr, classes


def _all_finite(arr: np.ndarray) -> bool:
    """Chunked finiteness check: a block sum is finite unless it holds NaN/inf
    (or overflows, in which case the exact elementwise check decides)."""
    if arr.dtype.kind != "f":
        return True
    flat = arr.reshape(arr.shape[0], -1) if arr.ndim > 1 else arr[:, None]
    for sl in _row_blocks(flat.shape[0], flat.shape[1]):
        block = flat[sl]
        if not np.isfinite(block.sum(dtype=np.float64)) and not np.all(
            np.isfinite(block)
        ):
            return False
    return True


def _as_2d_float(
    X, *, name: str, dtype=(np.float64, np.float32), allow_1d: bool = False
):
    """Array conversion that keeps float32/float64 and rejects object/str data."""
    arr, classes = _to_array(X, name=name, allow_1d=allow_1d, keep_int=False)
    if not (arr.dtype.kind == "f" and arr.dtype in dtype):
        arr = arr.astype(np.float64)
    if not _all_finite(arr):
        raise ValueError(f"{name} contains NaN or infinity.")
    return arr, classes


def labels_to_histograms(
    y,
    *,
    n_classes: int | None = None,
    classes=None,
    name: str = "y",
    classes_param: str = "labels",
):
    """One-hot histogram from a 1-D vector of class labels.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, 1)
        Class labels, one annotation per item.
    n_classes : int, default=None
        Number of columns expected when ``classes`` is not given.
    classes : array-like, default=None
        The class of each column; labels are matched to columns by name.
    name : str, default="y"
        Argument name used in error messages.
    classes_param : str, default="labels"
        Name of the caller's parameter that passes ``classes`` (for the
        error message when the labels cannot be matched).

    Notes
    -----
    Labels travel by name, never by position alone. With ``classes`` each
    label is looked up among them (an unknown label raises). Without it the
    columns are the sorted distinct labels -- scikit-learn's ``classes_``
    convention, the column order of ``predict_proba`` -- which is unambiguous
    only when every class occurs: if ``n_classes`` is given and ``y`` holds
    another number of distinct labels, a ``ValueError`` asks for
    ``classes_param``. (Integer labels are not taken as column indices: a
    subset holding labels ``{1, 2}`` of classes ``{0, 1, 2}`` or ``{1, 2, 3}``
    cannot be told apart.)

    Returns
    -------
    Y : ndarray of shape (n_samples, n_classes)
        One-hot counts (float64).
    classes : ndarray of shape (n_classes,)
        The class of each column.
    """
    y = y.to_numpy() if hasattr(y, "to_numpy") else y
    try:
        y = np.asarray(y)
    except ValueError as exc:
        raise ValueError(f"{name} could not be converted to an array: {exc}") from exc
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D labels, got shape {y.shape}.")
    if y.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is required.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if classes is not None:
        classes = np.asarray(classes)
        idx = _lookup(classes, y, name=name, classes_param=classes_param)
    else:
        classes, idx = np.unique(y, return_inverse=True)
        if n_classes is not None and len(classes) != n_classes:
            shown = classes[:10].tolist()
            raise ValueError(
                f"{name} holds {len(classes)} distinct labels {shown} but there "
                f"are {n_classes} classes, so the labels cannot be matched to "
                f"the columns unambiguously; pass {classes_param}= (the class of "
                "each column) or a histogram."
            )
    Y = np.zeros((y.shape[0], len(classes)), dtype=np.float64)
    Y[np.arange(y.shape[0]), idx] = 1.0
    return Y, classes


def _lookup(classes: np.ndarray, values: np.ndarray, *, name, classes_param):
    """Positions of ``values`` in ``classes`` (each must occur)."""
    try:
        sorter = np.argsort(classes, kind="stable")
        pos = np.searchsorted(classes, values, sorter=sorter)
    except TypeError:  # mixed types that do not sort: a Python lookup
        table = {c: i for i, c in enumerate(classes.tolist())}
        idx = np.array([table.get(v, -1) for v in values.tolist()], dtype=np.intp)
        bad = idx < 0
    else:
        pos = np.clip(pos, 0, len(classes) - 1)
        idx = sorter[pos]
        bad = classes[idx] != values
    if np.any(bad):
        unknown = list(dict.fromkeys(values[bad].tolist()))[:5]
        raise ValueError(
            f"{name} contains labels {unknown} that are not among the classes "
            f"{classes.tolist()} ({classes_param})."
        )
    return idx


def column_order(classes, target, *, name: str, target_name: str):
    """Positions that put columns named ``classes`` in the order ``target``.

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
        Names of the columns of ``name`` (e.g. a DataFrame's columns).
    target : array-like of shape (n_classes,)
        The reference order (e.g. an estimator's ``classes_``).
    name, target_name : str
        Used in the error message.

    Returns
    -------
    order : ndarray of int or None
        ``columns[:, order]`` are in ``target`` order; None when the names
        are already in that order.

    Raises
    ------
    ValueError
        When the two sets of names differ (nothing is matched by position).
    """
    classes = np.asarray(classes)
    target = np.asarray(target)
    if classes.shape == target.shape and np.array_equal(
        classes.astype(object), target.astype(object)
    ):
        return None
    as_str = [str(c) for c in classes.tolist()]
    target_str = [str(c) for c in target.tolist()]
    if (
        len(set(as_str)) != len(as_str)
        or sorted(as_str) != sorted(target_str)
        or len(target_str) != len(set(target_str))
    ):
        raise ValueError(
            f"The classes of {name} {classes.tolist()} do not match the classes "
            f"of {target_name} {target.tolist()}; the columns are matched by "
            "name, so the two must hold the same class names."
        )
    position = {c: i for i, c in enumerate(as_str)}
    return np.array([position[c] for c in target_str], dtype=np.intp)


def _scan_histograms(
    arr: np.ndarray,
    *,
    name: str,
    allow_probabilities: bool,
    n_classes: int | None = None,
) -> tuple[np.ndarray, bool]:
    """Check a 2-D histogram in one chunked pass; return ``(n, is_counts)``.

    ``n`` is the float64 row sums (annotations per item, or ~1 for rows of
    probabilities), computed once here so that no metric sums the rows again.
    The checks run block by block (no full-size temporaries): finiteness
    from the block's row sums (a sum is finite unless the block holds NaN or
    infinity; only then is the block checked elementwise), one min-reduction
    for the sign, and, for float dtypes only, integrality. Errors are raised
    in the order of the checks of :func:`check_label_histograms`.
    """
    n_rows, n_cols = arr.shape
    n = np.empty(n_rows, dtype=np.float64)
    is_float = arr.dtype.kind == "f"

    def scan(sl):
        # -> (non-finite, negative, integral) for the block; integrality only
        # matters when nothing is negative (that error comes first).
        block = arr[sl]
        sums = _row_sums(block)
        n[sl] = sums
        if is_float and not np.isfinite(sums.sum()) and not np.all(np.isfinite(block)):
            return True, False, True
        negative = bool(block.min() < 0)
        integral = not is_float or negative or bool(np.all(np.floor(block) == block))
        return False, negative, integral

    flags = _map_row_blocks(scan, n_rows, n_cols)
    nonfinite = any(f[0] for f in flags)
    negative = any(f[1] for f in flags)
    integral = all(f[2] for f in flags)
    if nonfinite:
        raise ValueError(f"{name} contains NaN or infinity.")
    if n_classes is not None and n_cols != n_classes:
        raise ValueError(
            f"{name} has {n_cols} classes (columns) but {n_classes} were expected."
        )
    if negative:
        raise ValueError(f"{name} must be non-negative; found negative entries.")
    if integral:
        zero = n == 0
        if np.any(zero):
            first = int(np.flatnonzero(zero)[0])
            raise ValueError(
                f"{name} has rows with zero annotations (first at row {first}); "
                "every item needs at least one label."
            )
    elif allow_probabilities:
        bad = np.abs(n - 1.0) > ROW_SUM_TOL
        if np.any(bad):
            first = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name} must hold integer label counts or probability rows "
                f"summing to 1; row {first} sums to {n[first]:.6g}."
            )
    else:
        raise ValueError(
            f"{name} must hold non-negative integer label counts (a label "
            "histogram); found fractional values. This estimator needs the number "
            "of annotations per item."
        )
    return n, integral


def _histograms(
    Y,
    *,
    name: str,
    allow_probabilities: bool,
    n_classes: int | None = None,
    classes=None,
):
    """``(arr, n, is_counts, classes)`` of a histogram or label vector.

    Unlike :func:`check_label_histograms`, integer, float32 and memory-mapped
    arrays are returned as they are (no float64 copy); the metrics convert
    one block of rows at a time.
    """
    raw = Y.to_numpy() if hasattr(Y, "to_numpy") else Y
    shape = np.shape(raw)
    if len(shape) == 1 or (len(shape) == 2 and shape[1] == 1):
        arr, cls = labels_to_histograms(
            raw, n_classes=n_classes, classes=classes, name=name
        )
        return arr, np.ones(arr.shape[0]), True, cls
    arr, frame_classes = _to_array(Y, name=name, keep_int=True)
    n, is_counts = _scan_histograms(
        arr, name=name, allow_probabilities=allow_probabilities, n_classes=n_classes
    )
    cls = frame_classes if frame_classes is not None else np.arange(arr.shape[1])
    return arr, n, is_counts, cls


def check_label_histograms(
    Y,
    *,
    name: str = "y_true",
    allow_probabilities: bool = False,
    n_classes: int | None = None,
    classes=None,
    dtype=(np.float64, np.float32),
    return_classes: bool = False,
):
    """Validate a label histogram (or, optionally, a human distribution).

    Parameters
    ----------
    Y : array-like or DataFrame of shape (n_samples, n_classes) or (n_samples,)
        Non-negative integer counts. A DataFrame's columns are the classes.
        A 1-D array or an ``(n, 1)`` column is a vector of labels.
    name : str, default="y_true"
        Argument name used in error messages.
    allow_probabilities : bool, default=False
        Also accept rows of probabilities that sum to one (for metrics that
        only need the human distribution). Counts are always accepted.
    n_classes : int, default=None
        Expected number of classes; also used to one-hot 1-D labels.
    classes : array-like, default=None
        Classes of the columns for 1-D labels.
    dtype : tuple of dtypes, default=(float64, float32)
        Floating dtypes kept as they are; anything else becomes float64.
    return_classes : bool, default=False
        Also return the classes (DataFrame columns, the label values, or
        ``arange(n_classes)``).

    Returns
    -------
    Y : ndarray of shape (n_samples, n_classes)
        Counts (or probabilities) as floats.
    classes : ndarray of shape (n_classes,)
        Only when ``return_classes=True``.

    Notes
    -----
    The values are checked in blocks of rows, so a float32 or memory-mapped
    input is not copied (integer input is converted to float64, as
    documented above).
    """
    arr, _, _, cls = _histograms(
        Y,
        name=name,
        allow_probabilities=allow_probabilities,
        n_classes=n_classes,
        classes=classes,
    )
    if not (arr.dtype.kind == "f" and arr.dtype in dtype):
        arr = arr.astype(np.float64)
    return (arr, cls) if return_classes else arr


def _probabilities(P, *, name: str, n_classes: int | None = None) -> np.ndarray:
    """Checked probabilities; a binary 1-D input is kept 1-D (P(second class)).

    One chunked pass computes the row sums (float64), from which finiteness
    follows, and one min-reduction per block checks the sign. Errors come in
    the order of :func:`check_probabilities`.
    """
    arr, _ = _to_array(P, name=name, allow_1d=True, keep_int=False)
    if arr.ndim == 1:
        if not _all_finite(arr):
            raise ValueError(f"{name} contains NaN or infinity.")
        if n_classes is not None and n_classes != 2:
            raise ValueError(
                f"{name} is 1-D, which means P(second class) of a binary problem, "
                f"but {n_classes} classes were expected; pass an "
                f"(n_samples, {n_classes}) array."
            )
        for sl in _row_blocks(arr.shape[0]):
            block = arr[sl]
            if block.min() < 0 or block.max() > 1:
                raise ValueError(f"{name} is 1-D, so its values must lie in [0, 1].")
        return arr
    n_rows, n_cols = arr.shape
    tol = ROW_SUM_TOL if arr.dtype == np.float64 else max(ROW_SUM_TOL, 1e-5)

    def scan(sl):
        # -> (non-finite, negative, first row not summing to 1 or None)
        block = arr[sl]
        sums = _row_sums(block)
        if not np.isfinite(sums.sum()) and not np.all(np.isfinite(block)):
            return True, False, None
        bad = np.abs(sums - 1.0) > tol
        first = None
        if np.any(bad):
            local = int(np.flatnonzero(bad)[0])
            first = (sl.start + local, float(sums[local]))
        return False, bool(block.min() < 0), first

    flags = _map_row_blocks(scan, n_rows, n_cols)
    nonfinite = any(f[0] for f in flags)
    negative = any(f[1] for f in flags)
    first_bad = next((f[2] for f in flags if f[2] is not None), None)
    if nonfinite:
        raise ValueError(f"{name} contains NaN or infinity.")
    if n_classes is not None and n_cols != n_classes:
        raise ValueError(
            f"{name} has {n_cols} classes (columns) but {n_classes} were "
            "expected (class-count mismatch)."
        )
    if negative:
        raise ValueError(f"{name} must be non-negative probabilities.")
    if first_bad is not None:
        raise ValueError(
            f"{name} rows must sum to 1 (tolerance {tol:g}); row {first_bad[0]} "
            f"sums to {first_bad[1]:.6g}."
        )
    return arr


def _probability_block(P: np.ndarray, sl: slice) -> np.ndarray:
    """Rows ``sl`` of checked probabilities as a float64 ``(rows, K)`` array."""
    block = np.asarray(P[sl], dtype=np.float64)
    if block.ndim == 1:
        return np.column_stack([1.0 - block, block])
    return block


def check_probabilities(
    P,
    *,
    name: str = "y_prob",
    n_classes: int | None = None,
    dtype=(np.float64, np.float32),
):
    """Validate a probability matrix; a 1-D array is P(second class).

    Parameters
    ----------
    P : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted class probabilities.
    name : str, default="y_prob"
        Argument name used in error messages.
    n_classes : int, default=None
        Expected number of classes.
    dtype : tuple of dtypes, default=(float64, float32)
        Floating dtypes kept as they are.

    Returns
    -------
    P : ndarray of shape (n_samples, n_classes)
    """
    arr = _probabilities(P, name=name, n_classes=n_classes)
    if arr.dtype not in dtype:
        arr = arr.astype(np.float64)
    if arr.ndim == 1:
        arr = np.column_stack([1 - arr, arr])
    return arr


def check_logits(Z, *, name: str = "X", n_classes: int | None = None):
    """Validate a finite ``(n_samples, n_classes)`` score matrix."""
    arr, _ = _as_2d_float(Z, name=name, allow_1d=False)
    if n_classes is not None and arr.shape[1] != n_classes:
        raise ValueError(
            f"{name} has {arr.shape[1]} columns but {n_classes} classes were "
            "expected (class-count mismatch)."
        )
    return arr


class _Block:
    """Rows ``sl`` of a :class:`_Pair`; float64 views are made on first use.

    Metrics that are computed together (the report) share one block, so
    ``p_hat`` and the other derived arrays are computed once per block.
    """

    def __init__(self, pair: _Pair, sl: slice) -> None:
        self.sl = sl
        self.Y = pair.Y[sl]  # raw dtype: integer, float32 or float64
        self.n = pair.n[sl]
        self.is_counts = pair.is_counts
        self._P = pair.P
        self.cache: dict = {}

    @cached_property
    def P(self) -> np.ndarray:
        return _probability_block(self._P, self.sl)

    @cached_property
    def p_hat(self) -> np.ndarray:
        # Converting first is twice as fast as a mixed int/float division
        # and gives the same quotients.
        p_hat = np.array(self.Y, dtype=np.float64)
        p_hat /= self.n[:, None]
        return p_hat

    @cached_property
    def Yf(self) -> np.ndarray:
        """Counts as float64 (``Y(Y - 1)`` would overflow small int dtypes)."""
        return np.asarray(self.Y, dtype=np.float64)


class _Pair:
    """Validated ``(Y, P)`` for the chunked metric passes.

    ``Y`` and ``P`` are the caller's arrays (integer, float32, float64, or a
    memory map; ``P`` may be the 1-D P(second class) of a binary problem):
    nothing is copied to float64 wholesale. ``n`` holds the float64 row sums
    of ``Y`` and ``is_counts`` whether ``Y`` is integer-valued.
    """

    def __init__(self, Y, P, n, is_counts: bool) -> None:
        self.Y = Y
        self.P = P
        self.n = n
        self.is_counts = bool(is_counts)
        self.n_samples, self.n_classes = Y.shape

    def blocks(self, chunk_rows: int | None = None):
        """:class:`_Block` objects covering all rows, in order."""
        for sl in _row_blocks(self.n_samples, self.n_classes, chunk_rows):
            yield _Block(self, sl)

    def map_blocks(self, fn, chunk_rows: int | None = None) -> list:
        """``[fn(block) for block in self.blocks()]``, run on threads.

        See :func:`_map_row_blocks`: results in block order, so they do not
        depend on the number of threads. Each block (and the float64 arrays
        it caches) lives only for its call, so memory stays at one block's
        temporaries per thread, a few MB whatever the number of rows.
        """
        return _map_row_blocks(
            lambda sl: fn(_Block(self, sl)), self.n_samples, self.n_classes, chunk_rows
        )

    def take(self, idx) -> _Pair:
        """The pair restricted to the items ``idx`` (a copy of those rows)."""
        return _Pair(self.Y[idx], self.P[idx], self.n[idx], self.is_counts)


def _check_pair(
    y_true,
    y_prob,
    *,
    counts=None,
    allow_probabilities: bool = True,
    y_true_name: str = "y_true",
    y_prob_name: str = "y_prob",
) -> _Pair:
    """:func:`check_histograms_and_probabilities` without copies: a :class:`_Pair`."""
    if counts is not None:
        y_true, y_true_name = counts, "counts"
    raw = y_true.to_numpy() if hasattr(y_true, "to_numpy") else y_true
    shape = np.shape(raw)
    is_hist = len(shape) == 2 and shape[1] > 1
    if is_hist:
        Y, n, is_counts, _ = _histograms(
            y_true, name=y_true_name, allow_probabilities=allow_probabilities
        )
        P = _probabilities(y_prob, name=y_prob_name, n_classes=Y.shape[1])
    else:
        P = _probabilities(y_prob, name=y_prob_name)
        Y, n, is_counts, _ = _histograms(
            y_true,
            name=y_true_name,
            allow_probabilities=allow_probabilities,
            n_classes=2 if P.ndim == 1 else P.shape[1],
        )
    if Y.shape[0] != P.shape[0]:
        raise ValueError(
            f"{y_true_name} and {y_prob_name} have different numbers of samples: "
            f"{Y.shape[0]} and {P.shape[0]}."
        )
    return _Pair(Y, P, n, is_counts)


def check_histograms_and_probabilities(
    y_true,
    y_prob,
    *,
    counts=None,
    allow_probabilities: bool = True,
    y_true_name: str = "y_true",
    y_prob_name: str = "y_prob",
):
    """Validate a (histogram, probability) pair for a metric.

    ``counts``, when given, replaces ``y_true`` as the human histograms (SPEC
    §4, convention B: the label ``y_true`` that scikit-learn routes is ignored).
    The number of classes is taken from the histograms when they are 2-D, else
    from the probabilities.

    Returns
    -------
    Y : ndarray of shape (n_samples, n_classes)
    P : ndarray of shape (n_samples, n_classes)
    """
    pair = _check_pair(
        y_true,
        y_prob,
        counts=counts,
        allow_probabilities=allow_probabilities,
        y_true_name=y_true_name,
        y_prob_name=y_prob_name,
    )
    Y, P = pair.Y, pair.P
    if Y.dtype not in (np.float64, np.float32):
        Y = Y.astype(np.float64)
    if P.ndim == 1:
        P = np.column_stack([1 - P, P])
    return Y, P
