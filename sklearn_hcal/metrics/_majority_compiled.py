"""Compiled kernels of the majority-label ECEs' binned sums (``fast`` extra).

One pass over the rows of a block does what
:func:`~._majority._binned_gap_sums` and :func:`~._majority._classwise_sums`
do with a first-maximum pass over ``Y`` (the majority), one over ``q`` (the
top class), a binning pass and two ``np.bincount`` passes. The same bits:

* the first maximum of a row is :func:`~._majority.first_max`'s (a strict
  ``>`` scan: validated rows hold no NaN);
* the bin of a value is :func:`~._bins.bin_index`'s, right-closed
  ``(j/B, (j+1)/B]``: the floor of ``v·B`` clipped to ``[-1, B]``, and
  where ``v·B`` is within ``1e-9`` of an integer the definition's search
  of the ``linspace`` edges (``searchsorted(side="left") − 1``, the inner
  edges searched and the end points 0 and 1 compared);
* each cell adds the same values in the same order as ``np.bincount``
  (items, then classes, from 0.0); the counts are exact.
"""

from __future__ import annotations

import numpy as np

from ..utils._compiled import compiled_available, kernel
from ._bins import inner_edges

__all__ = ["binned_sums", "gap_sums", "kernels_ready"]

#: The edge test of :func:`~._bins.edge_values`.
_NEAR_EDGE = 1e-9


@kernel
def gap_sums(Y, P, n_bins, inner, classwise, sums):
    """Add ``[Σ (1[hit] − value), count]`` per bin of each value.

    ``classwise``: the values are every ``q_ik``, a hit the majority's
    class ``k``, and class ``k``'s cells are laid out from ``k·(B + 2)``
    (``sums`` (2, K·(B + 2))); else the value is the confidence ``max q``,
    a hit the top class being the majority (``sums`` (2, B + 2)). Cells as
    in :func:`~._majority._binned_gap_cells`: cell 0 for the value 0,
    cells ``1..B`` the bins, ``B + 1`` above 1; ``inner`` the inner edges
    ``linspace(0, 1, B + 1)[1:-1]``; ``sums`` zeroed by the caller. The
    gap ``−value (+ 1.0 on a hit)`` is the numpy path's ``−q`` with 1.0
    added at the majority (and ``1[correct] − conf``: the same bits, a
    confidence is never 0).
    """
    n_items, n_classes = P.shape
    width = n_bins + 2
    n_values = n_classes if classwise else 1
    cells = np.empty(n_values, np.intp)
    gaps = np.empty(n_values)
    counts, gap_sums = sums[1], sums[0]
    for i in range(n_items):
        majority = 0
        top_y = Y[i, 0]
        top = 0
        conf = P[i, 0]
        for k in range(1, n_classes):
            if Y[i, k] > top_y:
                top_y = Y[i, k]
                majority = k
            if not classwise and P[i, k] > conf:  # the top class
                conf = P[i, k]
                top = k
        # the cells by the floor first (short loops without the search run
        # faster), then the search where a value is near an edge
        near = False
        for slot in range(n_values):
            value = P[i, slot] if classwise else conf
            scaled = value * n_bins
            near |= abs(np.rint(scaled) - scaled) < _NEAR_EDGE
            # floor(v·B) clipped to [-1, B], below 0 and NaN to -1 (no bin)
            pos = np.floor(scaled)
            pos = pos if pos >= -1.0 else -1.0
            pos = pos if pos <= n_bins else n_bins
            cells[slot] = int(pos) + 1 + slot * width
            gaps[slot] = -value
        if near:
            for slot in range(n_values):
                value = P[i, slot] if classwise else conf
                scaled = value * n_bins
                if abs(np.rint(scaled) - scaled) < _NEAR_EDGE:
                    cells[slot] = _search_left(inner, value) + slot * width
        if classwise:
            gaps[majority] = gaps[majority] + 1.0
        elif top == majority:
            gaps[0] = gaps[0] + 1.0
        for slot in range(n_values):
            gap_sums[cells[slot]] += gaps[slot]
            counts[cells[slot]] += 1.0


def _search_left_impl(inner, value):
    """``searchsorted(linspace(0, 1, B + 1), value, side="left")``: the
    number of edges below ``value`` (the end points 0 and 1 compared, the
    inner edges searched)."""
    lo, hi = 0, inner.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if inner[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo + (1 if value > 0.0 else 0) + (1 if value > 1.0 else 0)


#: What the kernel calls near an edge: replaced by its numba version
#: (:func:`kernels_ready`) before the kernel is compiled.
_search_left = _search_left_impl


def kernels_ready() -> bool:
    """Whether the kernels run (numba installed and not switched off); the
    edge search they call is compiled first."""
    if not compiled_available():
        return False
    if _search_left is _search_left_impl:
        import numba

        globals()["_search_left"] = numba.njit(cache=True, nogil=True)(
            _search_left_impl
        )
    return True


def binned_sums(block, n_bins, classwise, weights=None):
    """:func:`gap_sums` over a block's rows, ``(2, n_slots, B + 2)`` (one
    slot per class when ``classwise``, else one); None when the kernels do
    not run or there are ``weights`` (the caller's numpy path then runs)."""
    Y, P = block.Y, block.P
    if weights is not None or not kernels_ready() or Y.ndim != 2 or P.ndim != 2:
        return None
    n_slots = Y.shape[1] if classwise else 1
    sums = np.zeros((2, n_slots * (n_bins + 2)))
    gap_sums.get()(Y, P, n_bins, inner_edges(n_bins), classwise, sums)
    return sums.reshape(2, n_slots, n_bins + 2)
