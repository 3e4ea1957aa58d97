"""The compiled kernels of the resamples' table lookup (the ``fast`` extra).

:func:`table_block` does in one pass over a block of drawn 16-bit cells
what :func:`~._resamples._table_values` does with ``table.take`` (whose
index array is 8 times the size of the cells), a search for the
straddling cells and a converting copy into the weight matrix, and it adds
each resample's Poisson total on the way (the numpy path's
``Wt.sum(axis=0)`` afterwards); :func:`add_draws` adds the missing draws
(the numpy path's ``np.add.at``). Every value is a small integer, exact in
float32 and in the totals (float32 while they stay below ``2**24``)
whatever the order, so the matrix, the
straddling cells and the totals are the numpy path's to the bit (tested
equal); the random streams are drawn by numpy on both paths.
"""

from __future__ import annotations

import numpy as np

from ...utils._compiled import kernel


@kernel
def table_block(raw, cells, table, straddle, Wt, totals, found):
    """Look a block's cells up in ``table`` into ``Wt`` (``rows × chunk``,
    item-major, as ``cells``); return how many cells straddle.

    ``raw`` holds the block's 64-bit draws and ``cells`` their 16-bit
    pieces, little-endian (a whole row's cells are whole draws when
    ``chunk`` is a multiple of 4: they are then read four to a draw).
    ``totals`` (one per resample, a float type whose partial sums of the
    block's integers are exact) gets the values of the cells that do not
    straddle; ``found`` (at least ``rows × chunk`` long) gets the positions
    of the straddling ones, in order (each is refined with its own uniform).
    A straddling cell's entry of ``Wt`` is ``straddle``, as the numpy path
    writes it before it refines the cell.

    Each row is looked up, then summed and searched for a straddling cell
    in a second loop that vectorises; only a row that holds one (about one
    in a hundred) is searched again for their positions.
    """
    rows, chunk = Wt.shape
    n_found = 0
    for r in range(rows):
        base = r * chunk
        if chunk % 4 == 0:
            for q in range(chunk // 4):
                x = raw[base // 4 + q]
                Wt[r, 4 * q] = table[x & 0xFFFF]
                Wt[r, 4 * q + 1] = table[(x >> 16) & 0xFFFF]
                Wt[r, 4 * q + 2] = table[(x >> 32) & 0xFFFF]
                Wt[r, 4 * q + 3] = table[x >> 48]
        else:
            for c in range(chunk):
                Wt[r, c] = table[cells[base + c]]
        hit = False
        for c in range(chunk):
            x = Wt[r, c]
            totals[c] += x
            hit |= x == straddle
        if hit:
            for c in range(chunk):
                if Wt[r, c] == straddle:
                    found[n_found] = base + c
                    n_found += 1
                    totals[c] -= straddle
    return n_found


@kernel
def add_draws(Wt, missing, items):
    """Add one to ``Wt[items[j], b]`` for the ``missing[b]`` consecutive
    draws ``j`` of each resample ``b``, in the order of the resamples."""
    j = 0
    for b in range(missing.shape[0]):
        for _ in range(missing[b]):
            Wt[items[j], b] += np.float32(1.0)
            j += 1
