"""Input validation shared by metrics, scorers and estimators.

This module holds the conventions, the tolerances, the block machinery of
the chunked passes and the disagreement check; :mod:`._labels` maps labels
and class names to columns; :mod:`._scan` checks the values of histograms
and probabilities (one chunked pass each); :mod:`._pair` validates a (human
labels, model probabilities) pair for the metrics, aligning classes by name
(developer guide §class-names). Every name is importable from
``sklearn_hcal._validation``.

Conventions (developer guide §data-conventions):

* a *label histogram* is an ``(n_samples, n_classes)`` array of non-negative
  integer counts, one row per item, with at least one annotation per row;
* a 1-D array, or an ``(n, 1)`` column, is a vector of class labels, i.e. one
  annotation per item (a one-hot histogram);
* a *probability matrix* is ``(n_samples, n_classes)``, finite, non-negative,
  rows summing to one; for two classes a 1-D array is the probability of the
  second class (what scikit-learn's scorers pass). Rows off by rounding
  (within :func:`row_sum_tolerance`) are accepted and renormalised;
* a *disagreement probability* ``φ`` lies in ``[0, 1]``; values within
  :data:`DISAGREEMENT_TOL` outside it are rounding errors and are clipped
  (:func:`check_disagreement`).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._refuse import refuse_first

#: Tolerance on ``|row sum - 1|`` for probability rows computed in float64
#: (float32 rows get ``1e-5``).
ROW_SUM_TOL = 1e-6

#: Allowance per class for probabilities rounded before they were saved: a
#: row rounded to ``d >= 3`` decimals is off by at most ``K * 5e-4`` from 1,
#: so rows within :func:`row_sum_tolerance` are taken as probabilities (and
#: renormalised where they are used).
ROUNDING_TOL_PER_CLASS = 5e-4

#: Entries of a probability row at most this far below 0 are rounding errors
#: (``1 - (p_1 + p_2)`` computed in float64 gives ``-1e-16``), read as 0 by
#: the metrics and by the calibrators' detection of probabilities alike
#: (float32 rows get ``1e-6``: its rounding error is ~``6e-8`` per operation).
NEGATIVE_ROUNDING_TOL = 1e-8


def negative_tolerance(dtype=np.float64) -> float:
    """How far below 0 a probability entry of ``dtype`` may be (rounding)."""
    if np.dtype(dtype) == np.float64 or np.dtype(dtype).kind in "biu":
        return NEGATIVE_ROUNDING_TOL
    return max(NEGATIVE_ROUNDING_TOL, 1e-6)


#: Floor applied to probabilities before taking their log (a zero
#: probability gives the finite logit ``log(1e-12)``).
PROBA_FLOOR = 1e-12

#: Disagreement probabilities this far outside ``[0, 1]`` are rounding errors
#: (``1 − Σ q²`` of a one-hot float row is ``-8e-15``) and are clipped; any
#: value further out is an error (developer guide §tolerances).
DISAGREEMENT_TOL = 1e-8


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

    A 1-D array or an ``(n, 1)`` column is a vector of labels (developer guide
    §data-conventions). DataFrames, sparse matrices and nested lists are recognised by
    their shape; an object without a regular shape (a ragged list) is not a
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

    True when ``X`` is 2-D with at least two columns, no entry is below 0
    by more than :func:`negative_tolerance` and every row sums to 1 within
    :func:`row_sum_tolerance` -- the rows the metrics accept as
    probabilities, so that probabilities rounded to three decimals, or with
    an entry of ``-1e-15`` left by ``1 - sum(others)``, still count (no entry
    can then exceed 1 by more than rounding).
    """
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] < 2 or X.shape[0] == 0 or X.dtype.kind not in "biuf":
        return False
    if X.min() < -negative_tolerance(X.dtype):
        return False
    tol = row_sum_tolerance(X.shape[1], X.dtype)
    return bool(np.all(np.abs(X.sum(axis=1, dtype=np.float64) - 1.0) <= tol))


def probabilities_to_logits(P) -> np.ndarray:
    """``log(max(p / row sum, PROBA_FLOOR))`` as float64.

    Rows are renormalised first (rounded probabilities), so the softmax of
    the result gives back the normalised ``P`` (up to the floor).
    """
    # entries a rounding error below 0 (see negative_tolerance) are 0
    P = np.maximum(np.asarray(P, dtype=np.float64), 0.0)
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


def row_blocks(n_rows: int, n_columns: int = 1, chunk_rows: int | None = None):
    """Consecutive row slices covering ``range(n_rows)``.

    Every chunked computation of the package walks its inputs with this
    generator, so that memory stays ``O(block)`` whatever ``n_rows`` is and
    a memory-mapped input is read once, block by block.
    """
    step = _chunk_rows(n_columns) if chunk_rows is None else max(int(chunk_rows), 1)
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def map_row_blocks(fn, n_rows: int, n_columns: int = 1, chunk_rows=None) -> list:
    """``[fn(sl) for sl in row_blocks(...)]``, on threads for several blocks.

    Results come back in block order, so reducing them adds the same numbers
    in the same order as a serial loop, whatever the number of threads (see
    :func:`_n_threads`).
    """
    step = _chunk_rows(n_columns) if chunk_rows is None else max(int(chunk_rows), 1)
    if 0 < n_rows <= step:  # one block: no list, no thread decision
        return [fn(slice(0, n_rows))]
    slices = list(row_blocks(n_rows, n_columns, chunk_rows))
    n_threads = _n_threads(len(slices))
    if n_threads == 1:
        return [fn(sl) for sl in slices]
    return list(_block_pool(n_threads).map(fn, slices))


_POOLS: dict = {}


def _block_pool(n_threads: int) -> ThreadPoolExecutor:
    """A thread pool kept for the process: starting threads on every call
    cost more than a small metric's pass (the pool of a forked parent is
    not reused: its threads do not exist in the child)."""
    key = (os.getpid(), n_threads)
    pool = _POOLS.get(key)
    if pool is None:
        pool = _POOLS[key] = ThreadPoolExecutor(
            max_workers=n_threads, thread_name_prefix="hcal-blocks"
        )
    return pool


def rows_from(offset: int):
    """How messages name row ``i`` of a chunk whose first row is ``offset``.

    ``None`` (the scans' ``row i``) for a whole array; else ``row i +
    offset``, the item's position among all items, so that an error in a
    chunk of a dask array or of a :class:`~sklearn_hcal.metrics.MetricState`
    update names the same row as the in-memory call.
    """
    if not offset:
        return None
    return lambda row: f"row {row + offset}"


def row_sums(block: np.ndarray) -> np.ndarray:
    """Row sums in float64.

    ``einsum`` is several times faster than ``sum(axis=1)`` for a few
    columns and, unlike a BLAS product, its summation order does not depend
    on the number of threads, so results are reproducible across processes.
    """
    if block.dtype.kind in "biu":
        # counts sum exactly in float64 (below 2**53), without an int64 pass
        return np.einsum("ij->i", block, dtype=np.float64, casting="unsafe")
    if block.dtype != np.float64:
        block = block.astype(np.float64)
    return np.einsum("ij->i", block)


def _first_non_number(arr: np.ndarray) -> str:
    """``" (row i, column j: value)"`` for the first entry that is no number.

    A pandas column of a nullable dtype (``Int64``, ``Float64``) holding
    ``pd.NA`` arrives as an object array; the error then points at the cell.
    """
    for index, value in np.ndenumerate(arr):
        try:
            float(value)
        except (TypeError, ValueError):
            where = ", ".join(f"{k} {i}" for k, i in zip(("row", "column"), index))
            value = value.item() if isinstance(value, np.generic) else value
            return f" ({where}: {value!r})"
    return ""


def to_array(X, *, name: str, allow_1d: bool = False, keep_int: bool = True):
    """``(array, classes)`` without copying float32/float64 (or integer) input.

    Object and string data are converted to float64 (or rejected); bool and
    float16 become float64; integers are kept when ``keep_int`` (the chunked
    passes convert them block by block). Only the shape is checked here, the
    values by :func:`scan_histograms` / :func:`scan_probabilities`.
    """
    classes = None
    if hasattr(X, "columns") and hasattr(X, "to_numpy"):  # pandas DataFrame
        classes = np.asarray(X.columns)
        X = X.to_numpy()
    elif hasattr(X, "to_numpy"):  # pandas Series
        X = X.to_numpy()
    arr = as_array(X, name=name)
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} must be numeric, got an array of dtype {arr.dtype}"
                f"{_first_non_number(arr)}."
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


def _ragged_row(X) -> tuple[int, int, int] | None:
    """``(row, its length, length of row 0)`` of the first row of another length.

    For nested sequences (lists of lists); None when the rows cannot be
    measured or all have the same length.
    """
    try:
        lengths = [len(row) for row in X]
    except TypeError:  # a row without a length (a scalar among lists)
        for i, row in enumerate(X):
            if not hasattr(row, "__len__"):
                return i, 1, -1
        return None
    for i, length in enumerate(lengths):
        if length != lengths[0]:
            return i, length, lengths[0]
    return None


def _entries(count: int) -> str:
    return f"{count} entry" if count == 1 else f"{count} entries"


def as_array(X, *, name: str, dtype=None) -> np.ndarray:
    """``np.asarray(X)`` whose failure names the argument (and the ragged row).

    numpy's own message for a ragged nested list ("setting an array element
    with a sequence... inhomogeneous shape") names neither the argument nor
    the row.
    """
    try:
        return np.asarray(X, dtype=dtype)
    except (ValueError, TypeError) as exc:
        ragged = _ragged_row(X) if isinstance(X, (list, tuple)) else None
        if ragged is not None:
            row, length, first = ragged
            what = "a scalar" if first < 0 else _entries(length)
            first_what = "" if first < 0 else f" while row 0 has {_entries(first)}"
            raise ValueError(
                f"{name} is ragged: row {row} has {what}{first_what}; every row "
                "needs one entry per class."
            ) from exc
        raise ValueError(f"{name} could not be converted to an array: {exc}") from exc


def shape_of(X, *, name: str) -> tuple:
    """Shape of an array-like: arrays and DataFrames by their ``shape``, lists
    by converting them (a ragged list raises, naming ``name`` and the row)."""
    shape = getattr(X, "shape", None)
    if isinstance(shape, tuple):
        return shape
    return as_array(X, name=name).shape


def all_finite(arr: np.ndarray) -> bool:
    """Chunked finiteness check: a block sum is finite unless it holds NaN/inf
    (or overflows, in which case the exact elementwise check decides)."""
    if arr.dtype.kind != "f":
        return True
    flat = arr.reshape(arr.shape[0], -1) if arr.ndim > 1 else arr[:, None]
    for sl in row_blocks(flat.shape[0], flat.shape[1]):
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
    arr, classes = to_array(X, name=name, allow_1d=allow_1d, keep_int=False)
    if not (arr.dtype.kind == "f" and arr.dtype in dtype):
        arr = arr.astype(np.float64)
    if not all_finite(arr):
        raise ValueError(f"{name} contains NaN or infinity.")
    return arr, classes


def check_logits(Z, *, name: str = "X", n_classes: int | None = None):
    """Validate a finite ``(n_samples, n_classes)`` score matrix."""
    arr, _ = _as_2d_float(Z, name=name, allow_1d=False)
    if n_classes is not None and arr.shape[1] != n_classes:
        raise ValueError(
            f"{name} has {arr.shape[1]} columns but {n_classes} classes were "
            "expected (class-count mismatch)."
        )
    return arr


def check_disagreement(
    phi, *, name: str = "y_disagreement", row_offset: int = 0
) -> np.ndarray:
    """Validate predicted disagreement probabilities ``φ`` (one per item).

    Values within :data:`DISAGREEMENT_TOL` (``1e-8``) outside ``[0, 1]`` are
    rounding errors -- ``1 − Σ_k q_k²`` of a one-hot float row is ``-8e-15``,
    a float32 softmax row gives ``-4e-16`` -- and are clipped; a value
    further out raises, shown with full precision (``repr``) so that an
    excess such as ``1 + 1e-15`` is not printed as ``1``.

    Parameters
    ----------
    phi : array-like of shape (n_samples,) or (n_samples, 1)
        Predicted probabilities that two annotators disagree.
    name : str, default="y_disagreement"
        Argument name used in error messages.
    row_offset : int, default=0
        Position of the first value among all items (a chunk's), added to
        the rows that messages name.

    Returns
    -------
    phi : ndarray of shape (n_samples,)
        A float64 copy, clipped to ``[0, 1]``.

    Examples
    --------
    >>> from sklearn_hcal._validation import check_disagreement
    >>> check_disagreement([0.5, -8e-15, 1.0 + 1e-15])
    array([0.5, 0. , 1. ])
    >>> check_disagreement([0.5, -1e-3])
    Traceback (most recent call last):
    ...
    ValueError: y_disagreement must hold disagreement probabilities in [0, 1]; \
row 1 is -0.001 (values within 1e-08 of [0, 1] are clipped as rounding errors).
    """
    raw = phi.to_numpy() if hasattr(phi, "to_numpy") else phi
    arr = as_array(raw, name=name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        # an (n, 1) column is φ, as scikit-learn treats column vectors
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one disagreement probability per item: one "
            f"value per sample), got shape {arr.shape}."
        )
    try:
        arr = np.array(arr, dtype=np.float64)  # a copy: clipped in place below
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}.") from exc
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is required.")
    if arr.min() >= 0.0 and arr.max() <= 1.0:
        # the common input, in [0, 1] (NaN fails both): nothing to refuse
        # or clip, in two reductions instead of five passes
        return arr
    refuse_first(
        ~np.isfinite(arr),
        lambda row: (
            f"{name} contains NaN or infinity "
            f"(row {row + row_offset}: {float(arr[row])!r})."
        ),
    )
    refuse_first(
        (arr < -DISAGREEMENT_TOL) | (arr > 1.0 + DISAGREEMENT_TOL),
        lambda row: (
            f"{name} must hold disagreement probabilities in [0, 1]; row "
            f"{row + row_offset} is {float(arr[row])!r} (values within "
            f"{DISAGREEMENT_TOL:g} of [0, 1] are clipped as rounding errors)."
        ),
    )
    return np.clip(arr, 0.0, 1.0, out=arr)
