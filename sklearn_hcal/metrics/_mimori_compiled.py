"""The compiled kernel of the class-wise binned sums (the ``fast`` extra).

One pass over the entries of a block does what
:func:`~._mimori_kernels._cell_sums` does with a binning pass and up to
seven ``np.bincount`` passes: the equal-width bin of each ``q_ik``
(:func:`~._bins.bin_indices`' rule: the floor of ``q·B`` clipped to the
bins, the inner ``linspace`` edges searched where ``q·B`` is within
``1e-9`` of an integer) and the seven statistics of the cell. The sums are
the numpy path's to the bit: each cell adds the same products ``w·value`` in
the same order (items, then classes), sub-block by sub-block of the same
size, each sub-block's partial sums added to the running ones as
``sums[row] += np.bincount(...)`` adds them (tested equal).
"""

from __future__ import annotations

import numpy as np

from ..utils._compiled import kernel

#: The edge test of :func:`~._bins.edge_values`.
_NEAR_EDGE = 1e-9


@kernel
def class_bin_sums(
    p_hat, P, n, n_bins, inner, weights, weighted, dispersion, step, sums
):
    """Add the per-(class, bin) sums of a block into ``sums`` (7, K·B).

    ``inner`` holds the inner edges ``linspace(0, 1, B + 1)[1:-1]``;
    ``weights`` (float64, one per item) is read only when ``weighted``;
    ``step`` is the sub-block size in items.
    """
    n_items, n_classes = P.shape
    n_cells = sums.shape[1]
    top = n_bins - 1.0
    part = np.empty((7, n_cells))
    for start in range(0, n_items, step):
        part[:, :] = 0.0
        for i in range(start, min(start + step, n_items)):
            w = weights[i] if weighted else 1.0
            n_i = n[i]
            factor = 1.0 / (n_i - 1.0) if n_i >= 2 else 0.0
            for k in range(n_classes):
                q = P[i, k]
                scaled = q * n_bins
                if abs(np.rint(scaled) - scaled) < _NEAR_EDGE:
                    # the definition near an edge: searchsorted(side="right")
                    lo, hi = 0, inner.shape[0]
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if inner[mid] <= q:
                            lo = mid + 1
                        else:
                            hi = mid
                    b = lo
                else:
                    if not scaled >= 0.0:  # below 0 or NaN: bin 0
                        scaled = 0.0
                    elif scaled > top:
                        scaled = top
                    b = int(scaled)
                cell = k * n_bins + b
                value = p_hat[i, k]
                part[0, cell] += w
                part[2, cell] += value * w
                part[3, cell] += q * w
                part[4, cell] += (value * value) * w
                if dispersion:
                    resid = value - q
                    part[5, cell] += (resid * resid) * w
                    part[6, cell] += (((1.0 - value) * value) * factor) * w
                    if n_i >= 2:
                        part[1, cell] += w
        for row in range(7):
            for cell in range(n_cells):
                sums[row, cell] += part[row, cell]
