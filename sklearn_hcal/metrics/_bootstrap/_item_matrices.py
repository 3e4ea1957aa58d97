"""The items' contributions to the report's sums as a dense and a sparse matrix.

``W @ D`` with ``D`` dense, ``N × d``: the per-item values of the mean-type
metrics, and for each binned group the per-slot totals of its statistics;
``W @ A`` with ``A`` sparse: the statistics of the items that are *not* in
the most populated cell of their slot (that cell is the slot's total minus
the other cells). :func:`_block_matrices` builds both for a block of items,
:func:`_item_blocks` cuts the items into blocks within a memory budget.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import _engine
from ._item_matrices_compiled import count_entries, fill_entries

__all__ = ["_block_matrices", "_for_products", "_item_blocks"]

#: Bytes of per-item values kept for all chunks (else recomputed per chunk).
_FEATURE_BUDGET = 2**28


def _stat_plan(values, in_dominant) -> list:
    """How each statistic of a group enters the products.

    ``values`` is ``(n_entries, n_stats)`` (an entry: an item in a slot),
    ``in_dominant`` marks the entries in their slot's dominant cell.

    ``("alias", s)``: equal to statistic ``s`` for every entry (e.g. the
    count of items with two annotations when all have them), copied
    afterwards; ``("const", c)``: the same value ``c`` for every entry (a
    count), whose dominant cells are ``c`` times the resample's weight minus
    the others; ``("own", None)``: per-slot totals in the dense product, the
    dominant cell of each slot their difference with the other cells;
    ``("direct", None)``: every cell in the sparse product, when the
    dominant cells hold few non-zero values (``p̂`` where most items' human
    share of a class is 0): a dense column per slot costs more than those
    entries.
    """
    plan = []
    for s in range(values.shape[1]):
        v = values[:, s]
        same = None
        for t in range(s):  # a cheap look at the first entries, then all
            if plan[t][0] != "alias" and np.array_equal(v[:16], values[:16, t]):
                if np.array_equal(v, values[:, t]):
                    same = t
                    break
        if same is not None:
            plan.append(("alias", same))
        elif v.size and np.all(v[:16] == v[0]) and np.all(v == v[0]):
            plan.append(("const", float(v[0])))
        elif np.count_nonzero(np.logical_and(v, in_dominant)) < _DIRECT_SHARE * v.size:
            plan.append(("direct", None))
        else:
            plan.append(("own", None))
    return plan


#: A statistic goes wholly into the sparse product when its dominant cells
#: hold fewer non-zero values than this share of its entries: a sparse
#: entry costs about five times a dense one (scipy's loop against BLAS).
_DIRECT_SHARE = 0.2


def _item_of(n_rows: int, n_slots: int) -> np.ndarray:
    """The item of each entry of an ``(n_rows, n_slots)`` group."""
    if n_slots == 1:
        return np.arange(n_rows)
    return np.repeat(np.arange(n_rows), n_slots)


def _block_matrices(columns, human, sources, sl):
    """``(DT, A, layout)`` of the items ``sl`` for all classifiers.

    ``DT`` holds the dense columns as rows (``(n_dense, n_items)``, the
    layout of the product ``DT @ Wt``); ``DT[0]`` is 1 (the resample's
    weight of the block). ``layout[c]`` tells where classifier ``c``'s
    values are: ``num`` (dense indices of the mean-type numerators), ``den``
    (index or None per mean column), and per group the plan of each
    statistic with its dense totals (one per slot) and sparse offset, and
    the dominant cell of each slot.
    """
    n_rows = sl.stop - sl.start
    n_cells = _engine.n_cells_of(columns, human)
    dense, layout = [np.ones(n_rows)], []
    coo_rows, coo_cols, coo_data = [], [], []
    # With the compiled kernels each group's sparse statistics are listed
    # and written into the CSR arrays at the end instead.
    compiled = count_entries.get() is not None
    compiled_groups = []
    n_sparse = 0
    for source in sources:
        num, den, cells = _engine.contributions(columns, human, source, sl)
        entry = {"num": list(range(len(dense), len(dense) + len(num)))}
        dense.extend(num)
        entry["den"] = []
        for d in den:
            entry["den"].append(None if d is None else len(dense))
            if d is not None:
                dense.append(d)
        entry["groups"] = {}
        for key, (cell, values) in cells.items():
            n_slots, width = n_cells[key]
            n_stats = values.shape[-1]
            counts = np.bincount(cell.reshape(-1), minlength=n_slots * width)
            dominant = counts.reshape(n_slots, width).argmax(axis=1)
            in_dominant = (cell == dominant + np.arange(n_slots) * width).reshape(-1)
            # entry e: item e // n_slots, slot e % n_slots
            cell = cell.reshape(-1)
            values = values.reshape(-1, n_stats)
            if not compiled:
                item_of = _item_of(n_rows, n_slots)
                others = np.flatnonzero(~in_dominant)
                others_values = values[others]
            sparse_stats = []
            stats = []
            for s, (kind, ref) in enumerate(_stat_plan(values, in_dominant)):
                if kind == "alias":
                    stats.append((kind, ref, None))
                    continue
                total = None
                if kind == "own":
                    total = len(dense)
                    dense.extend(values[:, s].reshape(n_rows, n_slots).T)
                if compiled:
                    sparse_stats.append((s, kind == "direct", n_sparse))
                else:
                    if kind == "direct":
                        kept = np.flatnonzero(values[:, s])
                        data = values[kept, s]
                    else:
                        data = others_values[:, s]
                        nonzero = data != 0  # a zero adds nothing: not an entry
                        kept, data = others[nonzero], data[nonzero]
                    coo_rows.append(item_of[kept])
                    coo_cols.append(n_sparse + cell[kept])
                    coo_data.append(data)
                stats.append((kind, ref if kind == "const" else total, n_sparse))
                n_sparse += n_slots * width
            if sparse_stats:
                index, direct, offset = (np.array(x) for x in zip(*sparse_stats))
                compiled_groups.append(
                    (values, cell, in_dominant, index, direct, offset, n_slots)
                )
            entry["groups"][key] = (stats, dominant)
        layout.append(entry)
    DT = np.array(dense)
    if compiled:
        return DT, _compiled_csr(compiled_groups, (n_rows, n_sparse)), layout
    A = sp.coo_matrix(
        (
            np.concatenate(coo_data) if coo_data else np.empty(0),
            (
                np.concatenate(coo_rows) if coo_rows else np.empty(0, np.intp),
                np.concatenate(coo_cols) if coo_cols else np.empty(0, np.intp),
            ),
        ),
        shape=(n_rows, n_sparse),
    )
    # No (item, column) pair comes twice: the conversion need not sort the
    # rows' entries to add duplicates (a counting sort by row, in the order
    # the entries were made, instead of a sort per row).
    A.has_canonical_format = True
    return DT, A.tocsr(), layout


def _compiled_csr(groups, shape):
    """The CSR matrix of the groups' sparse statistics, written by the
    compiled kernels where scipy's counting sort by row puts the entries of
    the numpy path: per item, the groups in order, then their statistics,
    each over the slots (the same arrays, tested equal).

    ``groups`` holds ``(values, cell, in_dominant, stats, direct, offsets,
    n_slots)`` per group: its entries and, per sparse statistic, its index,
    whether it has entries in the dominant cells, and its first column.
    """
    n_rows = shape[0]
    counts = np.zeros(n_rows, np.intp)
    count, fill = count_entries.get(), fill_entries.get()
    for values, _, in_dominant, stats, direct, _, n_slots in groups:
        count(values, in_dominant, stats, direct, n_slots, counts)
    indptr = np.zeros(n_rows + 1, np.intp)
    np.cumsum(counts, out=indptr[1:])
    nnz = indptr[-1]
    # one spare element, where the kernel writes the values that are not entries
    indices = np.empty(nnz + 1, np.intp)
    data = np.empty(nnz + 1, np.float64)
    ends = indptr[:-1].copy()
    for group in groups:
        fill(*group, ends, indices, data)
    return sp.csr_matrix((data[:nnz], indices[:nnz], indptr), shape=shape)


def _for_products(matrices):
    """``(DT, A, layout)`` in float32, the precision of the products
    (developer guide §bootstrap-precision), ``DT`` aligned and C-ordered."""
    DT, A, layout = matrices
    return np.require(DT, np.float32, requirements="CA"), A.astype(np.float32), layout


def _item_blocks(columns, human, n_sources: int) -> list[slice]:
    """Blocks of items whose dense values stay within the feature budget."""
    slots = sum(h for h, _ in _engine.n_cells_of(columns, human).values())
    # Dense values and every statistic of every slot as a sparse entry (row,
    # column, value) per item: an upper bound of what the construction holds
    # (the kept matrices are a fraction of it). A further factor of 4 once
    # split a two-classifier report of CIFAR-10H's 10,000 items into two
    # blocks, whose per-item values were then recomputed for every chunk of
    # resamples (3.3× the bootstrap's CPU: 732 against 223 ms).
    per_item = 8 * n_sources * (2 * len(columns) + 7 * slots * 3)
    rows = max(1024, _FEATURE_BUDGET // max(per_item, 1))
    n = human.n_samples
    return [slice(s, min(s + rows, n)) for s in range(0, n, rows)]
