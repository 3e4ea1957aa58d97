"""Kernels of Mimori et al.'s (2021) estimators: the class-wise binned sums.

The job split off :mod:`sklearn_hcal.metrics._mimori` (which keeps the
public, validated estimators and their registry declarations): the
equal-width binning, the class-wise binned sufficient statistics (by numpy,
or by the compiled kernels of :mod:`._mimori_compiled`) and the terms
``CL``, ``DL``, ``EL``, ``IL`` computed from them (with leading resample
axes for the bootstrap); the per-item terms are in :mod:`._mimori_items`. Import them
from here, where they are defined (developer guide §layers).

Why one module: the binning, the sums of the seven statistics and the
terms read from them are one pipeline over the same rows (the ``_COUNT``...
constants), each step with its numpy path beside its call of the compiled
kernel; about half the lines are the estimators' equations documented.
"""

from __future__ import annotations

import numpy as np

from .._validation import Pair, check_pair, row_blocks
from ..utils._warnings import warn_user
from ._bins import bin_indices, inner_edges
from ._mimori_compiled import binned_scalar_sums, cell_value_table, class_bin_sums

#: The weights the compiled kernel is given when there are none (unread).
_NO_WEIGHTS = np.zeros(0)


def _validate_counts(y_true, y_prob, counts, labels=None) -> Pair:
    """Validated inputs as a ``Pair``; integer counts are required."""
    return check_pair(
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


def _class_cells(P: np.ndarray, n_bins: int) -> np.ndarray:
    """The cell ``k * n_bins + bin(q_ik)`` of each entry (one slot per class)."""
    return bin_indices(P, n_bins, slot_width=n_bins)


def _value_stats(p_hat, P, n, out) -> None:
    """The statistics of the entries that are not counts, into ``out`` of
    shape ``(n_items, n_classes, width)``: ``p̂``, ``q``, ``p̂²`` and, for a
    width of 5, ``(p̂ − q)²`` and ``p̂(1 − p̂)/(n − 1)`` (0 where ``n_i < 2``)."""
    out[..., 0] = p_hat
    out[..., 1] = P
    np.multiply(p_hat, p_hat, out=out[..., 2])
    if out.shape[-1] == 3:
        return
    resid = p_hat - P
    np.multiply(resid, resid, out=out[..., 3])
    gini = np.subtract(1.0, p_hat, out=resid)
    gini *= p_hat
    np.multiply(gini, _correction_factor(n)[:, None], out=out[..., 4])


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
    values = np.empty((n_items, n_classes, 7))
    compiled = cell_value_table.get()
    if compiled is not None:  # the same values in one pass (the ``fast`` extra)
        compiled(p_hat, P, np.asarray(n), values)
        return _class_cells(P, n_bins), values
    values[..., _COUNT] = 1.0
    values[..., _COUNT_VALID] = (n >= 2)[:, None]
    _value_stats(p_hat, P, n, values[..., _SUM_TRUE:])
    return _class_cells(P, n_bins), values


#: Entries (items × classes) per sub-block of :func:`_cell_sums`: the values
#: of a sub-block (up to five statistics per entry) stay a few MB, and the
#: fixed cost of its dozen numpy calls is spread over many entries.
SUB_BLOCK_ELEMENTS = 2**15


def _cell_sums(
    p_hat: np.ndarray,
    P: np.ndarray,
    n: np.ndarray,
    n_bins: int,
    weights: np.ndarray | None = None,
    *,
    dispersion: bool = True,
) -> np.ndarray:
    """Per-(class, bin) partial sums of a block of items, shape (7, K * n_bins).

    Rows (see the ``_COUNT``... constants): item count ``|B|``, count of items
    with ``n_i >= 2``, ``Σ p̂``, ``Σ q``, ``Σ p̂²``, ``Σ (p̂ − q)²`` and
    ``Σ p̂(1 − p̂)/(n − 1)`` over items with ``n_i >= 2``, each weighted by
    ``weights`` (item multiplicities, for the bootstrap) when given. The sums
    of all blocks are sufficient statistics for every term of
    :func:`_terms_from_sums`, so the binned losses are computed in one
    chunked pass with ``O(K * n_bins)`` memory besides the block.
    ``dispersion=False`` leaves the rows only the dispersion terms read
    (``n_i >= 2`` counts, ``Σ (p̂ − q)²``, ``Σ p̂(1 − p̂)/(n − 1)``) at 0:
    the calibration loss needs the other four.

    The same sums as :func:`~._cells.cell_sums` of :func:`_cell_values`
    over sub-blocks of :data:`SUB_BLOCK_ELEMENTS` entries, to the bit: one
    ``bincount`` per statistic over the cells, reading the statistic where
    it already lies (``p̂``, ``q``) or as one contiguous temporary, adds the
    same products ``w·value`` in the same order as ``add_rows_at`` and
    writes no interleaved ``values`` (the strided writes cost more than the
    extra reads of the cells: 12% less time at N = 10⁵, K = 10).
    """
    compiled = class_bin_sums.get()
    if compiled is not None:  # the same sums in one pass (the ``fast`` extra)
        return _compiled_cell_sums(
            compiled, p_hat, False, P, n, n_bins, weights, dispersion
        )
    P = np.asarray(P, dtype=np.float64)
    p_hat = np.asarray(p_hat, dtype=np.float64)
    n_items, n_classes = P.shape
    n_cells = n_classes * n_bins
    step = max(1, SUB_BLOCK_ELEMENTS // n_classes)
    sums = np.zeros((7, n_cells))
    factor = _correction_factor(n) if dispersion else None
    # one number of labels for all items: a scalar factor (the same
    # products, without the slower broadcast of a column)
    same_n = dispersion and n.size > 0 and n.min() == n.max()
    for start in range(0, n_items, step):
        sl = slice(start, min(start + step, n_items))
        flat = _class_cells(P[sl], n_bins).reshape(-1)
        w = None
        if weights is not None:
            w = np.repeat(np.asarray(weights[sl], dtype=np.float64), n_classes)
        p_hat_sl, P_sl = p_hat[sl], P[sl]

        def add(row, stat, flat=flat, w=w):
            # w·value, the product add_rows_at forms, summed in the same order
            stat = stat.reshape(-1) if w is None else stat.reshape(-1) * w
            sums[row] += np.bincount(flat, weights=stat, minlength=n_cells)

        counts = np.bincount(flat, weights=w, minlength=n_cells)
        sums[_COUNT] += counts
        add(_SUM_TRUE, p_hat_sl)
        add(_SUM_PRED, P_sl)
        add(_SUM_TRUE2, p_hat_sl * p_hat_sl)
        if not dispersion:
            continue
        resid = p_hat_sl - P_sl
        add(_SUM_RESID2, np.multiply(resid, resid, out=resid))
        gini = np.subtract(1.0, p_hat_sl, out=resid)
        gini *= p_hat_sl
        gini *= factor[0] if same_n else factor[sl, None]
        add(_SUM_CORR, gini)
        valid = n[sl] >= 2
        if valid.all():
            counts_valid = counts
        else:
            rows = np.repeat(valid, n_classes)
            counts_valid = np.bincount(
                flat[rows], weights=None if w is None else w[rows], minlength=n_cells
            )
        sums[_COUNT_VALID] += counts_valid
    return sums


def _compiled_cell_sums(compiled, values, divide, P, n, n_bins, weights, dispersion):
    """:func:`_cell_sums` by the compiled kernel; ``values`` are ``p̂``, or
    the counts ``Y`` when ``divide`` (``p̂ = Y / n`` formed entry by entry)."""
    P = np.asarray(P, dtype=np.float64)
    n_classes = P.shape[1]
    sums = np.zeros((7, n_classes * n_bins))
    weighted = weights is not None
    compiled(
        np.asarray(values),
        divide,
        P,
        np.asarray(n, dtype=np.float64),
        n_bins,
        inner_edges(n_bins),
        np.asarray(weights if weighted else _NO_WEIGHTS, dtype=np.float64),
        weighted,
        dispersion,
        max(1, SUB_BLOCK_ELEMENTS // n_classes),
        sums,
    )
    return sums


def block_cell_sums(block, n_bins: int, weights=None, *, dispersion: bool = True):
    """:func:`_cell_sums` of a validated block (a ``Pair`` block): the
    compiled kernel reads the counts when ``p̂`` was not formed yet."""
    compiled = class_bin_sums.get()
    if compiled is not None and "p_hat" not in block.__dict__:
        return _compiled_cell_sums(
            compiled, block.Y, True, block.P, block.n, n_bins, weights, dispersion
        )
    return _cell_sums(
        block.p_hat, block.P, block.n, n_bins, weights, dispersion=dispersion
    )


def _terms_from_sums(
    sums: np.ndarray,
    n_samples,
    n_bins: int,
    *,
    tables: bool = True,
    dispersion: bool = True,
) -> dict:
    """Mimori et al.'s squared-loss terms from the per-cell sums of all items.

    See :func:`_binned_calibration_terms` for the keys; ``tables=False``
    gives the scalar terms only (what the metric functions, the report and
    the bootstrap read), without the per-class and per-bin tables;
    ``dispersion=False`` only the calibration terms (``cl``, ``cl_plugin``,
    ``ce``, ``ce_plugin``, from the sums :func:`_cell_sums` makes with
    ``dispersion=False``). With the bin means
    ``c̄ = Σp̂/|B|`` and ``z̄ = Σq/|B|``, the within-bin sums of squares are
    ``Σ (p̂ − c̄)² = Σp̂² − |B| c̄²`` and ``Σ ((p̂ − c̄) − (q − z̄))² =
    Σ (p̂ − q)² − |B| (c̄ − z̄)²`` (clipped at 0 against rounding).

    ``sums`` of shape ``(..., 7, n_cells)`` may carry leading axes (one set
    of sums per bootstrap resample, ``n_samples`` then of the leading shape):
    every term then has those axes, else the scalar terms are floats.
    """
    sums = np.asarray(sums, dtype=np.float64)
    batch = sums.shape[:-2]
    if not batch and not tables:
        return _scalar_terms(sums, float(n_samples), dispersion)
    if not tables and binned_scalar_sums.get() is not None:
        return _batch_scalar_terms(sums, n_samples, dispersion)
    N = np.asarray(n_samples, dtype=np.float64)
    n_per_cell = N[..., None]
    count = sums[..., _COUNT, :]
    n_cells = count.shape[-1]
    n_classes = n_cells // n_bins
    nonempty = count > 0
    safe_count = np.where(nonempty, count, 1.0)
    mean_true = sums[..., _SUM_TRUE, :] / safe_count
    mean_pred = sums[..., _SUM_PRED, :] / safe_count
    gap = mean_true - mean_pred
    ss_true = np.maximum(sums[..., _SUM_TRUE2, :] - count * mean_true**2, 0.0)
    multi = count >= 2
    var_true = np.where(multi, ss_true / np.where(multi, count - 1.0, 1.0), 0.0)

    # eq. 13 and Prop. 3: (|B|/N)(c̄ − z̄)² − (|B|/N) σ̄²/(|B| − 1), where
    # σ̄²|B|/(|B| − 1) is the ddof=1 variance, so the correction is var/N.
    cl_plugin_bins = count / n_per_cell * gap**2
    cl_bins = cl_plugin_bins - var_true / n_per_cell
    cl_plugin = cl_plugin_bins.sum(axis=-1)
    cl = cl_bins.sum(axis=-1)

    def scalar(x):
        return float(x) if not batch else x

    calibration = {
        "cl_plugin": scalar(cl_plugin),
        "cl": scalar(cl),
        "ce_plugin": scalar(np.sqrt(np.maximum(cl_plugin, 0.0))),
        "ce": scalar(np.sqrt(np.maximum(cl, 0.0))),
    }
    if not dispersion:
        return calibration

    count_valid = sums[..., _COUNT_VALID, :]
    ss_resid = np.maximum(sums[..., _SUM_RESID2, :] - count * gap**2, 0.0)
    # eq. 35–36; the correction is applied to bins with >= 2 items of which at
    # least one has n_i >= 2 (developer guide §metric-definitions, the reference
    # implementation's rule).
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

    terms = {
        "sq_loss": scalar(sq_loss),
        "el_plugin": scalar(el_plugin),
        "el": scalar(el),
        "il_plugin": scalar(il_plugin),
        "il": scalar(sq_loss - el),
        "cl_plugin": calibration["cl_plugin"],
        "cl": calibration["cl"],
        "dl_plugin": scalar(dl_plugin_bins.sum(axis=-1)),
        "dl": scalar(dl_bins.sum(axis=-1)),
        "ce_plugin": calibration["ce_plugin"],
        "ce": calibration["ce"],
    }
    if not tables:
        return terms
    shape = batch + (n_classes, n_bins)
    return {
        **terms,
        "n_samples": int(round(float(N))) if not batch else N,
        "n_bins": n_bins,
        "bin_edges": np.linspace(0.0, 1.0, n_bins + 1),
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


def _scalar_terms(sums: np.ndarray, N: float, dispersion: bool) -> dict:
    """The scalar terms of :func:`_terms_from_sums` for one set of sums.

    The same operations on the same numbers, element by element (so the
    same bits, tested), in about half the numpy calls: the fixed cost of a
    metric call at small N is mostly these calls on ``K·B`` cells.
    """
    compiled = binned_scalar_sums.get()
    if compiled is not None:  # the same sums in one call (the ``fast`` extra)
        out = np.empty(8)
        compiled(sums[None], np.array([N]), dispersion, out[None])
        per_bins, totals = out[:4].tolist(), out[4:].tolist()
    else:
        per_bins, totals = _scalar_sums(sums, N, dispersion)
    return _terms_of(per_bins, totals, N, dispersion, _float_root)


def _float_root(cl: float) -> float:
    """``CE`` from ``CL``: the root of its positive part, a float."""
    return float(np.sqrt(max(cl, 0.0)))


def _terms_of(per_bins, totals, N, dispersion: bool, root) -> dict:
    """The terms from the row sums of :func:`binned_scalar_sums` (``CL``'s
    and ``DL``'s per-bin sums, the totals), each a float or an array of
    sets; ``root`` makes ``CE`` of ``CL``."""
    cl_plugin, cl = per_bins[0], per_bins[1]
    terms = {"cl_plugin": cl_plugin, "cl": cl, "ce_plugin": root(cl_plugin)}
    terms["ce"] = root(cl)
    if not dispersion:
        return terms
    sum_true, sum_true2, sum_resid2, sum_corr = totals
    el_plugin = sum_resid2 / N
    el = el_plugin - sum_corr / N
    il_plugin = (sum_true - sum_true2) / N
    sq_loss = el_plugin + il_plugin
    return {
        "sq_loss": sq_loss,
        "el_plugin": el_plugin,
        "el": el,
        "il_plugin": il_plugin,
        "il": sq_loss - el,
        **terms,
        "dl_plugin": per_bins[2],
        "dl": per_bins[3],
    }


def _batch_scalar_terms(sums: np.ndarray, n_samples, dispersion: bool) -> dict:
    """The scalar terms of :func:`_terms_from_sums` for sums with leading
    axes (the bootstrap's resamples), from the compiled row sums of every
    set: the element-wise operations of the numpy path and its pairwise
    sums over the cells (numpy adds each set's cells on their own), so the
    same bits, without a dozen temporaries the size of all the sums."""
    batch = sums.shape[:-2]
    N = np.broadcast_to(np.asarray(n_samples, dtype=np.float64), batch)
    out = np.empty(batch + (8,))
    binned_scalar_sums.get()(
        np.ascontiguousarray(sums).reshape((-1,) + sums.shape[-2:]),
        np.ascontiguousarray(N).reshape(-1),
        dispersion,
        out.reshape(-1, 8),
    )
    per_bins = np.moveaxis(out[..., :4], -1, 0)
    totals = np.moveaxis(out[..., 4:], -1, 0)
    return _terms_of(per_bins, totals, N, dispersion, _array_root)


def _array_root(cl: np.ndarray) -> np.ndarray:
    """``CE`` from ``CL``, element-wise, as the numpy path takes it."""
    return np.sqrt(np.maximum(cl, 0.0))


def _scalar_sums(sums: np.ndarray, N: float, dispersion: bool):
    """The per-bin terms summed over the cells (``CL`` plug-in and debiased,
    then ``DL``'s) and the totals of ``Σ p̂``, ``Σ p̂²``, ``Σ (p̂ − q)²``,
    ``Σ p̂(1 − p̂)/(n − 1)``: the numpy path of :func:`binned_scalar_sums`."""
    count = sums[_COUNT]
    safe_count = np.where(count > 0, count, 1.0)
    means = sums[_SUM_TRUE : _SUM_PRED + 1] / safe_count
    mean_true, mean_pred = means
    gap = mean_true - mean_pred
    gap2 = gap * gap
    ss_true = np.multiply(mean_true, mean_true, out=means[1])
    ss_true *= count
    np.subtract(sums[_SUM_TRUE2], ss_true, out=ss_true)
    np.maximum(ss_true, 0.0, out=ss_true)
    multi = count >= 2
    var_true = np.where(multi, ss_true / np.where(multi, count - 1.0, 1.0), 0.0)
    bins = np.empty((4 if dispersion else 2, count.shape[0]))
    # eq. 13 and Prop. 3, as in _terms_from_sums
    np.divide(count, N, out=bins[0])
    bins[0] *= gap2
    np.divide(var_true, N, out=bins[1])
    np.subtract(bins[0], bins[1], out=bins[1])
    if dispersion:
        ss_resid = np.multiply(count, gap2, out=gap2)
        np.subtract(sums[_SUM_RESID2], ss_resid, out=ss_resid)
        np.maximum(ss_resid, 0.0, out=ss_resid)
        np.divide(ss_resid, N, out=bins[2])
        corrected = multi & (sums[_COUNT_VALID] > 0)
        correction = np.subtract(sums[_SUM_CORR], var_true, out=var_true)
        correction /= N
        np.subtract(bins[2], np.where(corrected, correction, 0.0), out=bins[3])
    per_bins = bins.sum(axis=-1).tolist()
    if not dispersion:
        return per_bins, None
    totals = sums[[_SUM_TRUE, _SUM_TRUE2, _SUM_RESID2, _SUM_CORR]].sum(axis=-1)
    return per_bins, totals.tolist()


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
        (eq. 13/14 summed), ``dl_plugin``/``dl`` (eq. 35/36, with the reference
        code's rule for which bins are corrected, developer guide
        §metric-definitions), ``ce_plugin``/``ce``
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
    for sl in row_blocks(n_samples, n_classes):
        sums = sums + _cell_sums(p_hat[sl], P[sl], n[sl], n_bins)
    return _terms_from_sums(sums, n_samples, n_bins)


def _pair_cell_sums(
    pair: Pair, n_bins: int, weights=None, *, dispersion: bool = True
) -> np.ndarray:
    """:func:`_cell_sums` of all items of a validated pair, block by block."""

    def block_sums(block):
        w = None if weights is None else weights[block.sl]
        return block_cell_sums(block, n_bins, w, dispersion=dispersion)

    sums = 0.0
    for partial in pair.map_blocks(block_sums):
        sums = sums + partial
    return sums


def _warn_single_annotations(n: np.ndarray, what: str) -> None:
    warn_single_annotations(int(np.count_nonzero(n < 2)), n.shape[0], what)


def warn_single_annotations(n_single: int, n_samples: int, what: str) -> None:
    """Say that ``n_single`` of ``n_samples`` items get no bias correction."""
    if n_single:
        warn_user(
            f"{n_single} of {n_samples} items have a single annotation; the "
            f"bias correction of the debiased {what} needs n_i >= 2 and is "
            "skipped for them, so the estimate is biased upwards."
        )
