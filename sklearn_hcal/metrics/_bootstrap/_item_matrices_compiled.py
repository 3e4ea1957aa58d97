"""The compiled kernels of the items' sparse matrix (the ``fast`` extra).

:func:`~._item_matrices._block_matrices` lists the entries of its sparse
matrix statistic by statistic (index arrays, masks and gathers per
statistic) and converts them to CSR with scipy's counting sort by row. The
kernels write the CSR arrays directly, in two passes over each binned
group: :func:`count_entries` counts each item's entries, and
:func:`fill_entries` writes them where the counting sort puts them (per
item, the groups in order, then the statistics, then the slots). The
entries are the same: a statistic's value where it is not 0 (NaN
included), in every cell (``direct``) or outside the slot's dominant cell.
Only numbers are moved, so the matrix is the numpy path's (tested equal).
"""

from __future__ import annotations

from ...utils._compiled import kernel


@kernel
def count_entries(values, in_dominant, stats, direct, n_slots, counts):
    """Add to ``counts[i]`` the entries item ``i`` has in one group.

    ``values`` is ``(n_items · n_slots, n_stats)`` (entry ``e``: item
    ``e // n_slots``, slot ``e % n_slots``); ``stats`` holds the statistics
    that have sparse entries, ``direct`` whether each one has them in the
    dominant cells too.
    """
    for i in range(counts.shape[0]):
        n = 0
        for e in range(i * n_slots, (i + 1) * n_slots):
            outside = not in_dominant[e]
            for t in range(stats.shape[0]):
                n += (direct[t] | outside) & (values[e, stats[t]] != 0)
        counts[i] += n


@kernel
def fill_entries(
    values, cells, in_dominant, stats, direct, offsets, n_slots, ends, indices, data
):
    """Write one group's entries of each item after the item's entries so
    far (``ends[i]``, advanced): column ``offsets[t] + cells[e]``, value
    ``values[e, stats[t]]``, the statistics in order, each over the slots.

    Without branches (whether a value is an entry is a coin toss for the
    branch predictor): every value is written, to the item's next position
    when it is an entry, else to the spare last element of ``indices`` and
    ``data`` (one longer than the entries).
    """
    spare = indices.shape[0] - 1
    n_items = values.shape[0] // n_slots
    for i in range(n_items):
        end = ends[i]
        for t in range(stats.shape[0]):
            s = stats[t]
            column = offsets[t]
            every = direct[t]
            for e in range(i * n_slots, (i + 1) * n_slots):
                v = values[e, s]
                outside = not in_dominant[e]
                keep = (every | outside) & (v != 0)
                at = end if keep else spare
                indices[at] = column + cells[e]
                data[at] = v
                end += keep
        ends[i] = end
