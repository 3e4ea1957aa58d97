"""The weighted sums of one chunk of resamples, and the values they give.

The two float32 products of a chunk (:func:`_dense_product`,
:func:`_sparse_product`) are read back into the engine's sums
(:func:`_reconstruct`) and, once every chunk is in, into the metrics'
values (:func:`_replicates`); with every weight 1 the same matrices give
the report's own values (:func:`_point`).
"""

from __future__ import annotations

import numpy as np

from ...utils._threads import one_blas_thread
from .. import _engine
from ._chunk_sums_compiled import (
    ALIAS,
    CONST,
    DIRECT,
    MAX_WIDTH,
    OWN,
    rebuild_cells,
    sparse_product,
)
from ._item_matrices import _block_matrices, _for_products

__all__ = [
    "_Stacked",
    "_chunk_sums",
    "_chunk_task",
    "_dense_product",
    "_point",
    "_reconstruct",
    "_replicates",
    "_sparse_product",
    "_stack",
]


def _point(columns, human, matrices) -> np.ndarray:
    """The report's values of every classifier, ``(n_classifiers, n_columns)``,
    from the float64 matrices of all items: the weighted sums with every
    weight 1, read by the engine as the report's own sums are."""
    DT, A, layout = matrices
    n_cells = _engine.n_cells_of(columns, human)
    dense = DT.sum(axis=1)[None, :]
    sparse = np.asarray(A.sum(axis=0))
    point = np.empty((len(layout), len(columns)))
    for c, entry in enumerate(layout):
        num, den, cells = _reconstruct(entry, dense, sparse, n_cells, 1)
        values = _engine.Sums(
            columns,
            num=num[0],
            den=den[0],
            cells={key: value[0] for key, value in cells.items()},
            n_samples=human.n_samples,
        ).values()
        point[c] = [values[col.name] for col in columns]
    return point


def _chunk_task(columns, human, sources, blocks, cached, weights, limit_threads):
    """The weighted sums of a chunk of resamples (a worker's task).

    Run with one BLAS thread: the products are small, a second thread only
    waits on a busy machine, and the sums then do not depend on the number
    of threads of the process that computes them.
    """
    if not limit_threads:
        return _chunk_sums(columns, human, sources, blocks, cached, weights)
    with one_blas_thread():
        return _chunk_sums(columns, human, sources, blocks, cached, weights)


def _chunk_sums(columns, human, sources, blocks, cached, weights, helper=None):
    """``[(num, den, cells)]`` per classifier: the chunk's weighted sums.

    With a ``helper`` executor the sparse product runs on it while this
    thread computes the dense one (BLAS and scipy's loop, both without the
    GIL; two dense products at once would wait on BLAS's lock).
    """
    n_res = weights.shape[1]
    n_cells = _engine.n_cells_of(columns, human)
    sums = [None] * len(sources)
    for b, sl in enumerate(blocks):
        DT, A, layout = (
            cached[b]
            if cached is not None
            else _for_products(_block_matrices(columns, human, sources, sl))
        )
        # Arrays that come through pickling (a worker's) may be unaligned,
        # where numpy's product leaves BLAS for a loop that rounds otherwise:
        # aligned, every process computes the same bits.
        DT = np.require(DT, requirements="CA")
        Wt = np.require(weights[sl], requirements="CA")
        if helper is None:
            sparse = _sparse_product(A, Wt)
        else:
            pending = helper.submit(_sparse_product, A, Wt)
        dense = _dense_product(DT, Wt)
        if helper is not None:
            sparse = pending.result()
        for c, entry in enumerate(layout):
            part = _reconstruct(entry, dense, sparse, n_cells, n_res)
            sums[c] = part if sums[c] is None else _add(sums[c], part)
    return sums


def _sparse_product(A, Wt) -> np.ndarray:
    """``(B, n_sparse)`` float64 sums from the float32 product (scipy's
    loop, or the compiled kernel that adds the same products in its order),
    C-ordered: each resample's sums in a row, as the cells are rebuilt
    (a transposing copy on the sparse product's thread, not strided reads
    on this one)."""
    compiled = sparse_product.get()
    if compiled is None or not _kernel_operands(A, Wt):
        return np.ascontiguousarray((A.T @ Wt).T, dtype=np.float64)
    out = np.zeros((A.shape[1], Wt.shape[1]), np.float32)
    compiled(A.indptr, A.indices, A.data, Wt, out)
    return np.ascontiguousarray(out.T, dtype=np.float64)


def _kernel_operands(A, Wt) -> bool:
    """Whether the kernel computes scipy's float32 product: both operands
    float32 (scipy would upcast otherwise), the weights C-ordered."""
    return (
        A.dtype == np.float32
        and Wt.dtype == np.float32
        and Wt.ndim == 2
        and Wt.flags.c_contiguous
    )


def _dense_product(DT, Wt) -> np.ndarray:
    """``(B, n_dense)`` float64 sums from the float32 product."""
    return (DT @ Wt).T.astype(np.float64)


def _stack(parts) -> list:
    """The chunks' ``[(num, den, cells)]`` as one, resamples stacked in order."""
    stacked = []
    for c in range(len(parts[0])):
        nums, dens, cells = zip(*(part[c] for part in parts))
        stacked.append(
            (
                np.concatenate(nums),
                np.concatenate(dens),
                {k: np.concatenate([p[k] for p in cells]) for k in cells[0]},
            )
        )
    return stacked


#: Resamples whose columns are read at once: the groups' terms then work
#: on arrays of a few hundred KB (a MB or more comes from the system's fresh
#: pages on every temporary, several times slower).
_VALUES_BATCH = 128


def _replicates(columns, sums, n_samples: int, out=None, start=0, stop=None):
    """The columns of weighted sums: a :class:`~._engine.Sums` with a
    leading resample axis per classifier, read as the report's own sums,
    :data:`_VALUES_BATCH` resamples at a time (each is read on its own: the
    batches change no number).

    ``(n_resamples, n_classifiers, n_columns)``; with ``out``, only the
    resamples ``start:stop`` (``start`` a multiple of the batch) into it.
    """
    n_res = sums[0][0].shape[0]
    if out is None:
        out = np.empty((n_res, len(sums), len(columns)))
    stop = n_res if stop is None else stop
    for c, (num, den, cells) in enumerate(sums):
        for first in range(start, stop, _VALUES_BATCH):
            part = slice(first, min(first + _VALUES_BATCH, stop))
            values = _engine.Sums(
                columns,
                num=num[part],
                den=den[part],
                cells={key: value[part] for key, value in cells.items()},
                n_samples=float(n_samples),
            ).values()
            for j, col in enumerate(columns):
                out[part, c, j] = values[col.name]
    return out


def _reconstruct(entry, dense, sparse, n_cells, n_res, out=None):
    """``(num, den, {group: sums})`` of one classifier from the products.

    ``num`` and ``den`` of shape ``(B, n_means)``: a plain mean's
    denominator is the resample's weight of the block (its number of items).
    Written into ``out`` (C-ordered arrays of :func:`_empty_sums`' shapes)
    when given, else into new arrays.
    """
    num, den, cells = _empty_sums(entry, n_cells, n_res) if out is None else out
    num[...] = dense[:, entry["num"]]
    for m, j in enumerate(entry["den"]):
        den[:, m] = dense[:, 0 if j is None else j]
    rebuild = rebuild_cells.get()
    for key, (stats, dominant) in entry["groups"].items():
        n_slots, width = n_cells[key]
        if rebuild is not None and width <= MAX_WIDTH:
            # the plan's arrays made once per layout, not once per chunk
            plans = entry.setdefault("kernel_plans", {})
            if key not in plans:
                plans[key] = _kernel_plan(stats)
            kinds, refs, offsets = plans[key]
            rebuild(sparse, dense, kinds, refs, offsets, dominant, width, cells[key])
            continue
        T = cells[key].reshape(n_res, len(stats), n_slots, width)
        slots = np.arange(n_slots)
        for s, (kind, ref, offset) in enumerate(stats):
            if kind == "alias":
                T[:, s] = T[:, ref]
                continue
            T[:, s] = sparse[:, offset : offset + n_slots * width].reshape(
                n_res, n_slots, width
            )
            if kind == "direct":  # every cell is in the sparse product
                continue
            if kind == "const":
                total = ref * dense[:, :1]  # c times the weight of the block
            else:
                total = dense[:, ref : ref + n_slots]
            # The dominant cell of each slot holds what the others do not.
            T[:, s, slots, dominant] = total - T[:, s].sum(axis=-1)
    return num, den, cells


_KINDS = {"alias": ALIAS, "const": CONST, "own": OWN, "direct": DIRECT}


def _kernel_plan(stats):
    """A group's ``(kind, ref, offset)`` per statistic as the arrays of
    :func:`~._chunk_sums_compiled.rebuild_cells`: the kinds as numbers, the
    references (a statistic, a constant, a dense column) as float64 (a
    column index is exact), the sparse offsets (0 for an alias)."""
    kinds = np.array([_KINDS[kind] for kind, _, _ in stats], np.int64)
    refs = np.array([0.0 if ref is None else ref for _, ref, _ in stats])
    offsets = np.array([0 if off is None else off for _, _, off in stats], np.int64)
    return kinds, refs, offsets


def _empty_sums(entry, n_cells, n_res):
    """New C-ordered ``(num, den, {group: sums})`` for ``n_res`` resamples."""
    cells = {
        key: np.empty((n_res, len(stats), n_cells[key][0] * n_cells[key][1]))
        for key, (stats, _) in entry["groups"].items()
    }
    return (
        np.empty((n_res, len(entry["num"]))),
        np.empty((n_res, len(entry["den"]))),
        cells,
    )


class _Stacked:
    """The chunks' sums written in place, resamples in order: what
    :func:`_stack` makes of the chunks' own arrays, without them and the
    copy (the same operations on the same numbers, so the same bits)."""

    def __init__(self, n_resamples: int) -> None:
        self.n_resamples = n_resamples
        self.sums = None
        self.done = 0
        self.values = None
        self.read = 0

    def read_columns(self, columns, n_samples: int, final: bool = False) -> None:
        """:func:`_replicates` of the whole batches written so far (every
        resample once ``final``) into :attr:`values`: between chunks, while
        the other threads draw and multiply, not all at the end."""
        stop = self.done if final else self.done - self.done % _VALUES_BATCH
        if self.sums is None or stop <= self.read:
            return
        if self.values is None:
            shape = (self.n_resamples, len(self.sums), len(columns))
            self.values = np.empty(shape)
        _replicates(columns, self.sums, n_samples, self.values, self.read, stop)
        self.read = stop

    def reconstruct(self, layout, dense, sparse, n_cells) -> list:
        """:func:`_reconstruct` of every classifier into the next rows."""
        if self.sums is None:
            self.sums = [_empty_sums(e, n_cells, self.n_resamples) for e in layout]
        n_res = dense.shape[0]
        rows = slice(self.done, self.done + n_res)
        self.done += n_res
        return [
            _reconstruct(
                entry,
                dense,
                sparse,
                n_cells,
                n_res,
                out=(num[rows], den[rows], {k: v[rows] for k, v in cells.items()}),
            )
            for entry, (num, den, cells) in zip(layout, self.sums)
        ]


def _add(a, b):
    return a[0] + b[0], a[1] + b[1], {k: a[2][k] + b[2][k] for k in a[2]}
