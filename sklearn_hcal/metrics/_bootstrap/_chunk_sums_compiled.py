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
chunk) are a loop of known length that vectorises without a remainder.
"""

from __future__ import annotations

from ...utils._compiled import kernel
from ._resamples import _MAX_CHUNK


@kernel
def sparse_product(indptr, indices, data, Wt, out):
    """Add ``A.T @ Wt`` into ``out`` (float32, sparse columns × resamples),
    ``A`` given by its CSR arrays."""
    n_items, n_vecs = Wt.shape
    if n_vecs == _MAX_CHUNK:
        for i in range(n_items):
            for e in range(indptr[i], indptr[i + 1]):
                k = indices[e]
                v = data[e]
                for b in range(_MAX_CHUNK):
                    out[k, b] += v * Wt[i, b]
    else:
        for i in range(n_items):
            for e in range(indptr[i], indptr[i + 1]):
                k = indices[e]
                v = data[e]
                for b in range(n_vecs):
                    out[k, b] += v * Wt[i, b]
