"""Binned metrics as sums over cells: the one reduction of their statistics.

Every binned metric of this package (ECE, classwise ECE, Mimori et al.'s
class-wise CL/DL, the disagreement CL) is a function of a few sums per bin,
its *sufficient statistics*. Its kernel describes each item by

* ``cell``, an ``(n_items, n_slots)`` integer array: the bin of the item in
  each *slot* (one slot per class for class-wise binning, else one), laid out
  slot-major so that slot ``l`` owns cells ``l * width ... (l + 1) * width - 1``;
* ``values``, an ``(n_stats, n_items, n_slots)`` float64 array: what the
  item adds to its cell, one value per statistic (1 for a count, ``p̂`` for
  a sum of ``p̂``, ...).

:func:`cell_sums` turns them into the ``(n_stats, n_cells)`` sums, weighted
by item multiplicities when given. The report's bootstrap
(:mod:`sklearn_hcal.metrics._bootstrap`) computes the same sums for many
weight vectors at once as matrix products, from the same ``cell`` and
``values``, so a metric's statistics are defined once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cell_sums"]


def cell_sums(cell, values, n_cells: int, weights=None) -> np.ndarray:
    """``sums[s, c] = Σ_{i, l: cell[i, l] = c} w_i · values[s, i, l]``.

    Parameters
    ----------
    cell : ndarray of shape (n_items, n_slots)
        Cell index of each item in each slot, in ``[0, n_cells)``.
    values : ndarray of shape (n_stats, n_items, n_slots)
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
    >>> values = np.array([[[1.0], [1.0], [1.0]], [[0.5], [0.2], [0.3]]])
    >>> cell_sums(cell, values, 2)
    array([[1. , 2. ],
           [0.5, 0.5]])
    """
    flat = np.asarray(cell).ravel()
    n_stats = values.shape[0]
    vals = values.reshape(n_stats, -1)
    if weights is not None:
        w = np.repeat(np.asarray(weights, dtype=np.float64), cell.shape[1])
        vals = vals * w
    out = np.empty((n_stats, n_cells))
    for s in range(n_stats):
        out[s] = np.bincount(flat, weights=vals[s], minlength=n_cells)
    return out
