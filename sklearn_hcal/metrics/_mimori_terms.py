"""Mimori et al.'s (2021) squared-loss terms from the class-wise binned sums.

The job split off :mod:`._mimori_kernels` (the binning and the sums): the
plug-in and debiased ``CL`` (eq. 12–14), ``DL`` (eq. 35–36), ``EL``
(eq. 9–10), ``IL`` and ``CE`` read from the seven per-cell sums of all
items, with their per-class and per-bin tables, or as scalars only (the
metric functions; one set of sums, or a leading axis of sets for the
bootstrap), the scalars' row sums by the compiled kernel of
:mod:`._mimori_compiled` when it runs (numpy's pairwise order, the same
bits).
"""

from __future__ import annotations

import numpy as np

from ._mimori_compiled import binned_scalar_sums

#: Rows of the per-cell partial sums of :func:`~._mimori_kernels._cell_sums`.
_COUNT, _COUNT_VALID, _SUM_TRUE, _SUM_PRED, _SUM_TRUE2, _SUM_RESID2, _SUM_CORR = range(
    7
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

    See :func:`~._mimori_kernels._binned_calibration_terms` for the keys;
    ``tables=False`` gives the scalar terms only (what the metric functions,
    the report and the bootstrap read), without the per-class and per-bin
    tables;
    ``dispersion=False`` only the calibration terms (``cl``, ``cl_plugin``,
    ``ce``, ``ce_plugin``, from the sums :func:`~._mimori_kernels._cell_sums` makes with
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
