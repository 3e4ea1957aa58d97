"""The compiled kernels of a chunk's products (the ``fast`` extra).

:func:`sparse_product` computes ``A.T @ Wt`` for the items' sparse matrix
``A`` (CSR, items × sparse columns) and a chunk's float32 weights ``Wt``
(items × resamples) as scipy's ``csc_matvecs`` loop does on ``A.T``: for
each item in order, for each of its entries ``(k, v)``, the row ``k`` of
the result gets ``v·Wt[i]`` added, each product rounded to float32 and
then added in float32, with no fused multiply-add (numba's default). Each
output is therefore the same float32 sum of the same products in the same
order (the items in increasing order), the numpy path's bits (tested
equal); it is faster because the resamples of a chunk (64 but for the last
chunk) are a loop of known length that vectorises without a remainder, and
an item's weights are read once for two of its entries.
"""

from __future__ import annotations

from ...utils._compiled import kernel
from ._resamples import _MAX_CHUNK


@kernel
def sparse_product(indptr, indices, data, Wt, out):
    """Add ``A.T @ Wt`` into ``out`` (float32, sparse columns × resamples),
    ``A`` given by its CSR arrays.

    An item's entries are taken two at a time (each weight read once for
    both rows): an item has each column once, so every output still adds
    the items in order.
    """
    n_items, n_vecs = Wt.shape
    if n_vecs == _MAX_CHUNK:
        for i in range(n_items):
            e, stop = indptr[i], indptr[i + 1]
            while e + 1 < stop:
                k, v = indices[e], data[e]
                k2, v2 = indices[e + 1], data[e + 1]
                for b in range(_MAX_CHUNK):
                    w = Wt[i, b]
                    out[k, b] += v * w
                    out[k2, b] += v2 * w
                e += 2
            if e < stop:
                k, v = indices[e], data[e]
                for b in range(_MAX_CHUNK):
                    out[k, b] += v * Wt[i, b]
    else:
        for i in range(n_items):
            for e in range(indptr[i], indptr[i + 1]):
                k, v = indices[e], data[e]
                for b in range(n_vecs):
                    out[k, b] += v * Wt[i, b]


#: Statistic kinds of :func:`rebuild_cells` (``_stat_plan``'s, as numbers).
ALIAS, CONST, OWN, DIRECT = 0, 1, 2, 3
#: The longest slot whose cells :func:`rebuild_cells` adds as numpy does
#: (numpy's pairwise sum splits longer runs into halves recursively).
MAX_WIDTH = 128


@kernel
def rebuild_cells(sparse, dense, kinds, refs, offsets, dominant, width, T):
    """One group's cells of a chunk's resamples from the products, into
    ``T`` (``(n_res, n_stats, n_slots · width)``), as
    :func:`~._chunk_sums._reconstruct` writes them: each statistic's cells
    from its sparse columns (``offsets``), then (``CONST``, ``OWN``) the
    dominant cell of each slot as the slot's total (``refs[s]`` times the
    resample's weight, or the dense column ``refs[s] + slot``) minus the
    slot's cells, added as numpy adds them; an
    ``ALIAS`` copies statistic ``refs[s]``. One pass per resample instead
    of a dozen numpy calls per statistic; slots of at most
    :data:`MAX_WIDTH` cells.
    """
    n_res, n_stats, n_cols = T.shape
    n_slots = dominant.shape[0]
    for b in range(n_res):
        for s in range(n_stats):
            kind = kinds[s]
            if kind == ALIAS:
                ref = int(refs[s])
                for j in range(n_cols):
                    T[b, s, j] = T[b, ref, j]
                continue
            offset = offsets[s]
            for j in range(n_cols):
                T[b, s, j] = sparse[b, offset + j]
            if kind == DIRECT:
                continue
            for h in range(n_slots):
                if kind == CONST:
                    total = refs[s] * dense[b, 0]
                else:
                    total = dense[b, int(refs[s]) + h]
                # the slot's cells added as numpy's pairwise sum adds up to
                # 128 values: in order below 8, else eight running sums of
                # every eighth value added as a tree, then the rest in order;
                # after the reduction's start, 0
                start = h * width
                if width < 8:
                    cells = -0.0
                    for i in range(width):
                        cells += T[b, s, start + i]
                else:
                    r0, r1 = T[b, s, start], T[b, s, start + 1]
                    r2, r3 = T[b, s, start + 2], T[b, s, start + 3]
                    r4, r5 = T[b, s, start + 4], T[b, s, start + 5]
                    r6, r7 = T[b, s, start + 6], T[b, s, start + 7]
                    i = 8
                    while i < width - width % 8:
                        r0 += T[b, s, start + i]
                        r1 += T[b, s, start + i + 1]
                        r2 += T[b, s, start + i + 2]
                        r3 += T[b, s, start + i + 3]
                        r4 += T[b, s, start + i + 4]
                        r5 += T[b, s, start + i + 5]
                        r6 += T[b, s, start + i + 6]
                        r7 += T[b, s, start + i + 7]
                        i += 8
                    cells = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
                    while i < width:
                        cells += T[b, s, start + i]
                        i += 1
                T[b, s, start + dominant[h]] = total - (0.0 + cells)
