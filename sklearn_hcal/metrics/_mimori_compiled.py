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

:func:`binned_scalar_sums` then reduces those sums to the per-bin terms
and totals that :func:`~._mimori_terms._scalar_terms` sums: the same
element-wise operations, and each row summed in numpy's pairwise order
(``np.add.reduce``: eight accumulators up to 128 values, halves above,
tested against numpy for every length up to 2,000).
"""

from __future__ import annotations

import numpy as np

from ..utils._compiled import kernel

#: The edge test of :func:`~._bins.edge_values`.
_NEAR_EDGE = 1e-9


@kernel
def class_bin_sums(
    values, divide, P, n, n_bins, inner, weights, weighted, dispersion, step, sums
):
    """Add the per-(class, bin) sums of a block into ``sums`` (7, K·B).

    ``values`` holds ``p̂``, or the counts ``Y`` when ``divide`` (then
    ``p̂_ik = Y_ik / n_i``, the quotient numpy's ``Y / n`` gives, without a
    ``p̂`` array); ``inner`` the inner edges ``linspace(0, 1, B + 1)[1:-1]``;
    ``weights`` (float64, one per item) is read only when ``weighted``;
    ``step`` is the sub-block size in items. Each item's cells and ``p̂``
    are found first, then its statistics added (short loops run faster than
    one with the edge search inside).
    """
    n_items, n_classes = P.shape
    n_cells = sums.shape[1]
    top = n_bins - 1.0
    part = np.empty((7, n_cells))
    cells = np.empty(n_classes, np.intp)
    item = np.empty(n_classes)
    for start in range(0, n_items, step):
        part[:, :] = 0.0
        for i in range(start, min(start + step, n_items)):
            n_i = n[i]
            for k in range(n_classes):
                item[k] = values[i, k] / n_i if divide else values[i, k]
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
                    cells[k] = k * n_bins + lo
                else:
                    if not scaled >= 0.0:  # below 0 or NaN: bin 0
                        scaled = 0.0
                    elif scaled > top:
                        scaled = top
                    cells[k] = k * n_bins + int(scaled)
            w = weights[i] if weighted else 1.0
            for k in range(n_classes):
                cell = cells[k]
                q = P[i, k]
                value = item[k]
                part[0, cell] += w
                part[2, cell] += value * w
                part[3, cell] += q * w
                part[4, cell] += (value * value) * w
            if dispersion:
                factor = 1.0 / (n_i - 1.0) if n_i >= 2 else 0.0
                for k in range(n_classes):
                    cell = cells[k]
                    q = P[i, k]
                    value = item[k]
                    resid = value - q
                    part[5, cell] += (resid * resid) * w
                    part[6, cell] += (((1.0 - value) * value) * factor) * w
                    if n_i >= 2:
                        part[1, cell] += w
        for row in range(7):
            for cell in range(n_cells):
                sums[row, cell] += part[row, cell]


#: numpy's pairwise summation: blocks of at most this many values are summed
#: with eight accumulators; longer runs are split in two halves.
_PAIRWISE_BLOCK = 128


@kernel
def binned_scalar_sums(all_sums, all_n, dispersion, all_out):
    """The row sums :func:`~._mimori_terms._scalar_terms` takes, into
    ``all_out[b]`` for each set of sums ``all_sums[b]`` (one per bootstrap
    resample, or one) of ``all_n[b]`` items:

    ``out[0:4]``: ``Σ`` over the cells of the plug-in and debiased ``CL``
    bins and (``dispersion``) of the plug-in and debiased ``DL`` bins;
    ``out[4:8]`` (``dispersion``): the totals of ``Σ p̂``, ``Σ p̂²``,
    ``Σ (p̂ − q)²`` and ``Σ p̂(1 − p̂)/(n − 1)``.
    """
    n_cells = all_sums.shape[2]
    rows = np.empty((8 if dispersion else 2, n_cells))
    # numpy's pairwise order, without recursion: a stack of (start, length,
    # halves done) and one of partial sums, left before right
    starts = np.empty(64, np.int64)
    lengths = np.empty(64, np.int64)
    stages = np.empty(64, np.int64)
    partial = np.empty(64)
    for b in range(all_sums.shape[0]):
        sums, n_samples, out = all_sums[b], all_n[b], all_out[b]
        for c in range(n_cells):
            count = sums[0, c]
            safe = count if count > 0 else 1.0
            mean_true = sums[2, c] / safe
            gap = mean_true - sums[3, c] / safe
            gap2 = gap * gap
            ss_true = sums[4, c] - (mean_true * mean_true) * count
            if not (ss_true >= 0.0 or ss_true != ss_true):  # np.maximum(x, 0.0)
                ss_true = 0.0
            multi = count >= 2
            var_true = ss_true / (count - 1.0) if multi else 0.0
            rows[0, c] = (count / n_samples) * gap2
            rows[1, c] = rows[0, c] - var_true / n_samples
            if dispersion:
                ss_resid = sums[5, c] - count * gap2
                if not (ss_resid >= 0.0 or ss_resid != ss_resid):
                    ss_resid = 0.0
                rows[2, c] = ss_resid / n_samples
                if multi and sums[1, c] > 0:
                    rows[3, c] = rows[2, c] - (sums[6, c] - var_true) / n_samples
                else:
                    rows[3, c] = rows[2, c] - 0.0
                rows[4, c] = sums[2, c]
                rows[5, c] = sums[4, c]
                rows[6, c] = sums[5, c]
                rows[7, c] = sums[6, c]
        for r in range(rows.shape[0]):
            a = rows[r]
            top = 0
            n_partial = 0
            starts[0], lengths[0], stages[0] = 0, n_cells, 0
            top = 1
            while top > 0:
                top -= 1
                lo, m, stage = starts[top], lengths[top], stages[top]
                if stage == 1:  # both halves done: left + right
                    n_partial -= 1
                    partial[n_partial - 1] = partial[n_partial - 1] + partial[n_partial]
                elif m > _PAIRWISE_BLOCK:
                    half = m // 2
                    half -= half % 8
                    starts[top], lengths[top], stages[top] = lo, m, 1
                    starts[top + 1], lengths[top + 1], stages[top + 1] = (
                        lo + half,
                        m - half,
                        0,
                    )
                    starts[top + 2], lengths[top + 2], stages[top + 2] = lo, half, 0
                    top += 3
                elif m < 8:
                    res = 0.0
                    for i in range(lo, lo + m):
                        res += a[i]
                    partial[n_partial] = res
                    n_partial += 1
                else:
                    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
                    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
                    i = 8
                    while i < m - m % 8:
                        r0 += a[lo + i]
                        r1 += a[lo + i + 1]
                        r2 += a[lo + i + 2]
                        r3 += a[lo + i + 3]
                        r4 += a[lo + i + 4]
                        r5 += a[lo + i + 5]
                        r6 += a[lo + i + 6]
                        r7 += a[lo + i + 7]
                        i += 8
                    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
                    while i < m:
                        res += a[lo + i]
                        i += 1
                    partial[n_partial] = res
                    n_partial += 1
            out[r] = 0.0 + partial[0]


@kernel
def cell_value_table(p_hat, P, n, values):
    """The seven statistics of every entry of a block into ``values``
    (``(n_items, n_classes, 7)``), as :func:`~._mimori_kernels._cell_values`
    writes them with seven strided passes: 1, ``1[n_i >= 2]``, ``p̂``,
    ``q``, ``p̂²``, ``(p̂ − q)²`` and ``(1 − p̂)·p̂·1/(n_i − 1)`` (0 where
    ``n_i < 2``), the same operations in the same order, in one pass."""
    n_items, n_classes = P.shape
    for i in range(n_items):
        valid = n[i] >= 2
        factor = 1.0 / (n[i] - 1.0) if valid else 0.0
        for k in range(n_classes):
            p, q = p_hat[i, k], P[i, k]
            resid = p - q
            values[i, k, 0] = 1.0
            values[i, k, 1] = 1.0 if valid else 0.0
            values[i, k, 2] = p
            values[i, k, 3] = q
            values[i, k, 4] = p * p
            values[i, k, 5] = resid * resid
            values[i, k, 6] = ((1.0 - p) * p) * factor
