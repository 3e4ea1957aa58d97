"""Binned metrics as sums over cells: the one reduction of their statistics.

Every binned metric of this package (ECE, classwise ECE, Mimori et al.'s
class-wise CL/DL, the disagreement CL) is a function of a few sums per bin,
its *sufficient statistics*. Its kernel describes each item by

* ``cell``, an ``(n_items, n_slots)`` integer array: the bin of the item in
  each *slot* (one slot per class for class-wise binning, else one), laid out
  slot-major so that slot ``l`` owns cells ``l * width ... (l + 1) * width - 1``;
* ``values``, an ``(n_items, n_slots, n_stats)`` float64 C-contiguous array:
  what the item adds to its cell, one value per statistic (1 for a count,
  ``p̂`` for a sum of ``p̂``, ...), the statistics of an entry side by side.

:func:`cell_sums` turns them into the ``(n_stats, n_cells)`` sums, weighted
by item multiplicities when given, in **one pass over the entries for all
the statistics** (``utils._compat.add_rows_at``: each entry's row of
statistics is added to its cell's; seven ``bincount`` calls read the cells
seven times). The report's bootstrap
(:mod:`sklearn_hcal.metrics._bootstrap`) computes the same sums for many
weight vectors at once as matrix products, from the same ``cell`` and
``values``, so a metric's statistics are defined once.
"""

from __future__ import annotations

import numpy as np

from ..utils._compat import add_rows_at

__all__ = ["cell_sums"]


def cell_sums(cell, values, n_cells: int, weights=None) -> np.ndarray:
    """``sums[s, c] = Σ_{i, l: cell[i, l] = c} w_i · values[i, l, s]``.

    Parameters
    ----------
    cell : ndarray of shape (n_items, n_slots)
        Cell index of each item in each slot, in ``[0, n_cells)``.
    values : ndarray of shape (n_items, n_slots, n_stats)
        Contribution of each item to its cell, per statistic.
    n_cells : int
        Number of cells.
    weights : ndarray of shape (n_items,), default=None
        Item multiplicities (a bootstrap resample); 1 when None.

    Returns
    -------
    sums : ndarray of shape (n_stats, n_cells)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics._cells import cell_sums
    >>> cell = np.array([[0], [1], [1]])
    >>> values = np.array([[[1.0, 0.5]], [[1.0, 0.2]], [[1.0, 0.3]]])
    >>> cell_sums(cell, values, 2)
    array([[1. , 2. ],
           [0.5, 0.5]])
    """
    cell = np.asarray(cell)
    n_stats = values.shape[-1]
    w = None
    if weights is not None:
        w = np.repeat(np.asarray(weights, dtype=np.float64), cell.shape[1])
    out = np.zeros((n_cells, n_stats))
    add_rows_at(out, cell.reshape(-1), values.reshape(-1, n_stats), w)
    return np.ascontiguousarray(out.T)
