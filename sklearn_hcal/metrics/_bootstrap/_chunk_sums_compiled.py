"""The compiled kernel of a chunk's sparse product (the ``fast`` extra).

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
