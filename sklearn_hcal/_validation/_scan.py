"""Value checks of label histograms and probability matrices, in one pass each.

Why one module: the histogram and probability scans share their block
passes, their whole-array fast paths (which only ever accept) and
first-offender helpers; about 360 lines are code, the rest the order of
the documented checks.

Each check walks its input in blocks of rows (no full-size temporaries, so a
float32 or memory-mapped input is never copied) and reports the *first*
offending row -- with the offending value where there is one -- in the order
of the documented checks, whatever the block size.

The scans name rows ``row i`` (0-based) and columns ``column j``; a caller
that read the array from a file passes ``where`` (row index -> text, e.g.
``"line 4 (uid 'x')"``) and ``column_names`` (e.g. ``"column 'dog'"``) so
that the same checks report the file's own line numbers and class names
(``hcal evaluate``).
"""

from __future__ import annotations

import numpy as np

from ._core import (
    ROW_SUM_TOL,
    all_finite,
    map_row_blocks,
    negative_tolerance,
    row_blocks,
    row_sum_tolerance,
    row_sums,
    rows_from,
    shape_of,
    to_array,
)
from ._labels import labels_to_histograms

__all__ = ["check_label_histograms", "check_probabilities"]


def _first_cell(mask: np.ndarray, offset: int) -> tuple[int, int]:
    """``(global row, column)`` of the first True of a 2-D block mask."""
    flat = int(np.argmax(mask))  # index into the C-order flattening
    row, col = divmod(flat, mask.shape[1])
    return offset + row, col


def _row_name(row: int) -> str:
    return f"row {row}"


def _namers(where, column_names):
    """``(row -> text, column -> text)`` for messages (see the module notes)."""
    rows = _row_name if where is None else where
    if column_names is None:
        return rows, lambda col: f"column {col}"
    return rows, lambda col: str(column_names[col])


def _cell(arr: np.ndarray, row: int, col: int, where=None, column_names=None) -> str:
    """``"row r, column c: value"`` with the value in full precision."""
    rows, cols = _namers(where, column_names)
    return f"{rows(row)}, {cols(col)}: {arr[row, col].item()!r}"


def check_finite(arr: np.ndarray, *, name: str, where=None, column_names=None):
    """Raise, naming the first non-finite cell, unless ``arr`` is finite.

    The finiteness check of the scans below, for arrays that need nothing
    else (logits read from a file by ``hcal evaluate --logits``).
    """
    if arr.dtype.kind != "f":
        return
    flat = arr if arr.ndim == 2 else arr[:, None]
    for sl in row_blocks(flat.shape[0], flat.shape[1]):
        finite = np.isfinite(flat[sl])
        if not finite.all():
            row, col = _first_cell(~finite, sl.start)
            if arr.ndim == 2:
                what = _cell(arr, row, col, where, column_names)
            else:
                what = f"{_namers(where, None)[0](row)}: {arr[row].item()!r}"
            raise ValueError(f"{name} contains NaN or infinity ({what}).")


#: Integer dtypes whose row sums :func:`_clean_count_sums` takes in int64.
_SMALL_INTEGERS = frozenset(
    np.dtype(t) for t in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)
)


def _clean_count_sums(arr: np.ndarray):
    """The float64 row sums of an integer histogram that passes every check
    of :func:`scan_histograms` (no negative count, no empty row), else None.

    The fast path of the common input: one min-reduction and one integer
    row sum over the whole array (no temporaries of its size), instead of
    the chunked scan. The sums are exact, so they are the scan's numbers;
    anything unusual (a negative count, an empty row, int64 counts large
    enough to overflow, another dtype) returns None and the chunked scan
    decides, raising its own errors.
    """
    if arr.dtype.kind not in "iu" or arr.size == 0:
        return None
    if arr.dtype in _SMALL_INTEGERS:
        if arr.min() < 0:
            return None
    elif arr.dtype != np.int64:
        return None
    elif arr.view(np.uint64).max() > _INT64_SAFE // arr.shape[1]:
        # one pass for both: a negative count reads as a huge unsigned one
        return None
    n = np.einsum("ij->i", arr, dtype=np.int64).astype(np.float64)
    if n.min() <= 0:
        return None
    return n


#: Below 2**53 the int64 row sums are exactly the float64 ones.
_INT64_SAFE = 2**53


#: Up to this many entries the row sums of probabilities are a BLAS product.
_BLAS_SUMS = 2**16

#: How close to a tolerance the BLAS row sums of :func:`_clean_probability_flag`
#: may come before the scan's own sums decide (the two differ by a few ulps).
_SUM_GUARD = 1e-12


def _clean_probability_flag(arr: np.ndarray):
    """Whether rows of clean float64 probabilities need renormalising; None
    when the input is not plainly clean (the chunked scan then decides).

    Clean: finite, no negative entry and every row within the tolerance of
    1. The row sums (no temporaries of the array's size) only decide, never
    enter a value. For a small array they are one BLAS product, twice as
    fast as the scan's ``einsum`` but rounded otherwise: a row sum within
    :data:`_SUM_GUARD` of a tolerance is then left to the scan. A large
    array takes the scan's own sums (BLAS's threads stall on a busy machine).
    """
    n_cols = arr.shape[1]
    sums = arr @ _ones(n_cols) if arr.size <= _BLAS_SUMS else row_sums(arr)
    # max |s − 1| from the extremes (s − 1 rounds monotonically): two
    # reductions instead of two passes and one; NaN propagates through both
    worst = max(float(sums.max()) - 1.0, 1.0 - float(sums.min()))
    tol = row_sum_tolerance(n_cols, arr.dtype)
    # NaN or infinity make ``worst`` NaN or infinite: not <= (the scan says)
    if not worst <= tol - _SUM_GUARD or abs(worst - ROW_SUM_TOL) <= _SUM_GUARD:
        return None
    if arr.min() < 0:
        return None
    return worst > ROW_SUM_TOL


_ONES: dict = {}


def _ones(n: int) -> np.ndarray:
    ones = _ONES.get(n)
    if ones is None:
        ones = _ONES[n] = np.ones(n)
    return ones


def _first_flags(flags, count: int) -> list:
    """The first non-None value of each of ``count`` per-block flags."""
    return [next((f[i] for f in flags if f[i] is not None), None) for i in range(count)]


def _check_finite_and_width(
    arr, nonfinite, n_classes, name, where, column_names, *, source=""
) -> None:
    """The first two checks of both 2-D scans: no NaN/inf, then K columns."""
    if nonfinite is not None:
        raise ValueError(
            f"{name} contains NaN or infinity "
            f"({_cell(arr, *nonfinite, where, column_names)})."
        )
    n_cols = arr.shape[1]
    if n_classes is not None and n_cols != n_classes:
        raise ValueError(
            f"{name} has {n_cols} classes (columns) but {n_classes} were "
            f"expected{source} (class-count mismatch)."
        )


def scan_histograms(
    arr: np.ndarray,
    *,
    name: str,
    allow_probabilities: bool,
    n_classes: int | None = None,
    where=None,
    column_names=None,
) -> tuple[np.ndarray, bool]:
    """Check a 2-D histogram in one chunked pass; return ``(n, is_counts)``.

    ``n`` is the float64 row sums (annotations per item, or ~1 for rows of
    probabilities), computed once here so that no metric sums the rows again.
    The checks run block by block (no full-size temporaries): finiteness
    from the block's row sums (a sum is finite unless the block holds NaN or
    infinity; only then is the block checked elementwise), one min-reduction
    for the sign, and, for float dtypes only, integrality. Errors are raised
    in the order of the checks of :func:`check_label_histograms` and name the
    first offending row.

    Rows of probabilities (``allow_probabilities``) may be off by rounding:
    rows within :func:`row_sum_tolerance` pass, and ``p̂ = Y / n`` divides
    each row by its sum. ``where`` and ``column_names`` name rows and
    columns in the messages (see the module notes).
    """
    rows, cols = _namers(where, column_names)
    n_rows, n_cols = arr.shape
    if n_classes is None or n_cols == n_classes:
        n = _clean_count_sums(arr)
        if n is not None:
            return n, True
    n = np.empty(n_rows, dtype=np.float64)
    is_float = arr.dtype.kind == "f"

    def scan(sl):
        # -> (first non-finite cell, first negative cell, first fractional
        # cell), each None when absent; integrality only matters when nothing
        # is negative (that error comes first).
        block = arr[sl]
        sums = row_sums(block)
        n[sl] = sums
        if is_float and not np.isfinite(sums.sum()):
            finite = np.isfinite(block)
            if not finite.all():
                return _first_cell(~finite, sl.start), None, None
        if block.min() >= 0:
            negative = None
        else:
            negative = _first_cell(block < 0, sl.start)
        fractional = None
        if is_float and negative is None:
            whole = np.floor(block) == block
            if not whole.all():
                fractional = _first_cell(~whole, sl.start)
        return None, negative, fractional

    flags = map_row_blocks(scan, n_rows, n_cols)
    nonfinite, negative, fractional = _first_flags(flags, 3)
    _check_finite_and_width(arr, nonfinite, n_classes, name, where, column_names)
    if negative is not None:
        raise ValueError(
            f"{name} must be non-negative; "
            f"{_cell(arr, *negative, where, column_names)}."
        )
    if fractional is None:
        zero = n == 0
        if zero.any():
            first = int(np.flatnonzero(zero)[0])
            raise ValueError(
                f"{name} has rows with zero annotations (first at {rows(first)}); "
                "every item needs at least one label."
            )
        return n, True
    row, col = fractional
    value = arr[row, col].item()
    if not allow_probabilities:
        raise ValueError(
            f"{name} must hold non-negative integer label counts (a label "
            f"histogram); {rows(row)} holds the fractional value {value!r} "
            f"({cols(col)}). The number of annotations per item is needed here."
        )
    tol = row_sum_tolerance(n_cols, arr.dtype)
    bad = np.abs(n - 1.0) > tol
    if bad.any():
        # Blame the row that is neither counts nor probabilities: the first
        # fractional row when it does not sum to 1 (a count of 2.5), else the
        # first row that does not sum to 1 (counts mixed with probabilities).
        if bad[row]:
            if arr[row].max() <= 1:  # a row of probabilities, off
                what = f"{rows(row)} sums to {n[row]:.6g} (tolerance {tol:g})"
            else:  # a count of 2.5
                what = (
                    f"{rows(row)} holds the non-integer value {value!r} "
                    f"({cols(col)}) and sums to {n[row]:.6g}"
                )
            raise ValueError(
                f"{name} must hold integer label counts or probability rows "
                f"summing to 1; {what}."
            )
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} must hold integer label counts or probability rows summing "
            f"to 1, not both: {rows(row)} is a row of probabilities (it holds "
            f"{value!r}) but {rows(first)} sums to {n[first]:.6g}."
        )
    return n, False


def checked_histograms(
    Y,
    *,
    name: str,
    allow_probabilities: bool,
    n_classes: int | None = None,
    classes=None,
    classes_param: str = "labels",
    row_offset: int = 0,
):
    """``(arr, n, is_counts, classes)`` of a histogram or label vector.

    Unlike :func:`check_label_histograms`, integer, float32 and memory-mapped
    arrays are returned as they are (no float64 copy); the metrics convert
    one block of rows at a time. ``row_offset`` is the position of the first
    row among all items (a chunk's), added to the rows messages name.
    """
    raw = Y.to_numpy() if hasattr(Y, "to_numpy") else Y
    shape = shape_of(raw, name=name)
    if len(shape) == 1 or (len(shape) == 2 and shape[1] == 1):
        arr, cls = labels_to_histograms(
            raw,
            n_classes=n_classes,
            classes=classes,
            name=name,
            classes_param=classes_param,
            row_offset=row_offset,
        )
        return arr, np.ones(arr.shape[0]), True, cls
    arr, frame_classes = to_array(Y, name=name, keep_int=True)
    n, is_counts = scan_histograms(
        arr,
        name=name,
        allow_probabilities=allow_probabilities,
        n_classes=n_classes,
        where=rows_from(row_offset),
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
        Also accept rows of probabilities that sum to one within
        :func:`row_sum_tolerance` (for metrics that only need the human
        distribution). Counts are always accepted.
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

    Examples
    --------
    >>> from sklearn_hcal._validation import check_label_histograms
    >>> check_label_histograms([[3, 1], [0, 2]])
    array([[3., 1.],
           [0., 2.]])
    >>> check_label_histograms([[3, 1], [0, 2.5]])
    Traceback (most recent call last):
    ...
    ValueError: y_true must hold non-negative integer label counts (a label \
histogram); row 1 holds the fractional value 2.5 (column 1). The number of \
annotations per item is needed here.
    """
    arr, _, _, cls = checked_histograms(
        Y,
        name=name,
        allow_probabilities=allow_probabilities,
        n_classes=n_classes,
        classes=classes,
    )
    if not (arr.dtype.kind == "f" and arr.dtype in dtype):
        arr = arr.astype(np.float64)
    return (arr, cls) if return_classes else arr


def scan_probabilities(
    P,
    *,
    name: str,
    n_classes: int | None = None,
    n_classes_from: str | None = None,
    where=None,
    column_names=None,
) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """Checked probabilities ``(arr, DataFrame columns or None, off)``.

    A binary 1-D input is kept 1-D (P(second class)). One chunked pass
    computes the row sums (float64), from which finiteness follows, and one
    min-reduction per block checks the sign. Rows within
    :func:`row_sum_tolerance` of 1 are accepted (developer guide §tolerances); ``off``
    says whether some row is further than :data:`ROW_SUM_TOL` from 1, i.e.
    whether the users of ``arr`` must renormalise (block by block, see
    :func:`normalised_block`). Errors come in the order of
    :func:`check_probabilities`. ``n_classes_from`` names where
    ``n_classes`` comes from, for the class-count message; ``where`` and
    ``column_names`` name rows and columns (see the module notes).
    """
    if (
        type(P) is np.ndarray
        and P.dtype == np.float64
        and P.ndim == 2
        and P.shape[0]
        and P.shape[1] > 1
        and (n_classes is None or P.shape[1] == n_classes)
    ):  # the common input: what follows converts nothing and names nothing
        off = _clean_probability_flag(P)
        if off is not None:
            return P, None, off
    rows, _ = _namers(where, column_names)
    arr, columns = to_array(P, name=name, allow_1d=True, keep_int=False)
    source = f" ({n_classes_from} has {n_classes})" if n_classes_from else ""
    if arr.ndim == 1:
        if not all_finite(arr):
            row = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise ValueError(
                f"{name} contains NaN or infinity ({rows(row)}: {arr[row].item()!r})."
            )
        if n_classes is not None and n_classes != 2:
            raise ValueError(
                f"{name} is 1-D, which means P(second class) of a binary problem, "
                f"but {n_classes} classes were expected{source}; pass an "
                f"(n_samples, {n_classes}) array."
            )
        for sl in row_blocks(arr.shape[0]):
            block = arr[sl]
            if block.min() < 0 or block.max() > 1:
                row = sl.start + int(np.flatnonzero((block < 0) | (block > 1))[0])
                raise ValueError(
                    f"{name} is 1-D (P(second class) of a binary problem), so its "
                    f"values must lie in [0, 1]; {rows(row)} is {arr[row].item()!r}."
                )
        return arr, columns, False
    n_rows, n_cols = arr.shape
    if n_cols == 1:
        raise ValueError(
            f"{name} has a single column (shape {arr.shape}), but class "
            "probabilities need one column per class, at least 2; for a binary "
            f"problem pass a 1-D {name} holding P(second class)."
        )
    if arr.dtype == np.float64 and (n_classes is None or n_cols == n_classes):
        off = _clean_probability_flag(arr)
        if off is not None:
            return arr, columns, off
    tol, neg_tol = row_sum_tolerance(n_cols, arr.dtype), negative_tolerance(arr.dtype)

    def scan(sl):
        # -> (non-finite cell, negative cell, (row, sum) of the first row
        # beyond the tolerance, whether some row needs renormalising)
        block = arr[sl]
        sums = row_sums(block)
        if not np.isfinite(sums.sum()):
            finite = np.isfinite(block)
            if not finite.all():
                return _first_cell(~finite, sl.start), None, None, False
        low = block.min()  # entries within neg_tol below 0 are clipped to 0
        negative = None if low >= -neg_tol else _first_cell(block < -neg_tol, sl.start)
        dev = np.abs(sums - 1.0)
        bad = dev > tol
        first = None
        if bad.any():
            local = int(np.flatnonzero(bad)[0])
            first = (sl.start + local, float(sums[local]))
        return None, negative, first, bool(low < 0 or (dev > ROW_SUM_TOL).any())

    flags = map_row_blocks(scan, n_rows, n_cols)
    nonfinite, negative, first_bad = _first_flags(flags, 3)
    _check_finite_and_width(
        arr, nonfinite, n_classes, name, where, column_names, source=source
    )
    if negative is not None:
        raise ValueError(
            f"{name} must be non-negative probabilities; "
            f"{_cell(arr, *negative, where, column_names)}."
        )
    if first_bad is not None:
        raise ValueError(
            f"{name} rows must sum to 1 (tolerance {tol:g} for {n_cols} classes: "
            f"rounding to 3 decimals passes); {rows(first_bad[0])} sums to "
            f"{first_bad[1]:.6g}."
        )
    return arr, columns, any(f[3] for f in flags)


def _probabilities(P, *, name: str, n_classes: int | None = None) -> np.ndarray:
    """Checked probabilities (as given: rows are *not* renormalised here).

    A binary 1-D input is kept 1-D (P(second class)). Callers read blocks
    through :func:`normalised_block` (or wrap the array in a
    :class:`._pair.Pair`), which renormalises rows off by rounding.
    """
    return scan_probabilities(P, name=name, n_classes=n_classes)[0]


def _probability_block(P: np.ndarray, sl: slice) -> np.ndarray:
    """Rows ``sl`` of checked probabilities as a float64 ``(rows, K)`` array.

    Not renormalised, and possibly a view of the caller's array: see
    :func:`normalised_block`.
    """
    block = np.asarray(P[sl], dtype=np.float64)
    if block.ndim == 1:
        return np.column_stack([1.0 - block, block])
    return block


def normalised_block(P, sl: slice, *, renormalise=None, order=None) -> np.ndarray:
    """Rows ``sl`` of checked probabilities: float64, reordered, renormalised.

    ``order`` (column positions, see :func:`._labels.column_order`) puts the columns in
    the human histograms' class order. ``renormalise``: False when no row of
    ``P`` is further than :data:`ROW_SUM_TOL` from 1 (known from the scan; the
    block is then used as it is), True or None (unknown) to clip entries a
    rounding error below 0 and divide the rows further off by their sums;
    exact probabilities are never touched (the same values as without them).
    """
    block = _probability_block(P, sl)
    owned = False
    if order is not None:
        block = block[:, order]  # fancy indexing: a copy of this block only
        owned = True
    if renormalise is False:
        return block
    if block.min() < 0:  # rounding errors, within negative_tolerance (scanned)
        block, owned = np.maximum(block, 0.0), True
    sums = row_sums(block)
    off = np.abs(sums - 1.0) > ROW_SUM_TOL
    if off.any():
        if not owned:  # the block may be a view of the caller's array
            block = block.copy()
        block[off] /= sums[off, None]
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
        Predicted class probabilities. Rows within
        :func:`row_sum_tolerance` of 1 (e.g. rounded to 3 decimals) are
        accepted and renormalised; rows further off raise.
    name : str, default="y_prob"
        Argument name used in error messages.
    n_classes : int, default=None
        Expected number of classes.
    dtype : tuple of dtypes, default=(float64, float32)
        Floating dtypes kept as they are.

    Returns
    -------
    P : ndarray of shape (n_samples, n_classes)
        The input itself when no row needs renormalising (and its dtype is
        in ``dtype``); else a float64 array with the rows renormalised.

    Examples
    --------
    >>> from sklearn_hcal._validation import check_probabilities
    >>> check_probabilities([[0.333, 0.333, 0.333]])  # rounded: renormalised
    array([[0.33333333, 0.33333333, 0.33333333]])
    >>> check_probabilities([0.25])  # binary: P(second class)
    array([[0.75, 0.25]])
    """
    arr, _, off = scan_probabilities(P, name=name, n_classes=n_classes)
    if off:
        out = np.empty((arr.shape[0], arr.shape[1]), dtype=np.float64)
        for sl in row_blocks(arr.shape[0], arr.shape[1]):
            out[sl] = normalised_block(arr, sl, renormalise=True)
        return out
    if arr.dtype not in dtype:
        arr = arr.astype(np.float64)
    if arr.ndim == 1:
        arr = np.column_stack([1 - arr, arr])
    return arr
