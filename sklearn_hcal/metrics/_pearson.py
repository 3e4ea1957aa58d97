"""Pearson's r of two per-item quantities, from sums over items.

Entropy correlation (Kurniawan et al., 2025) is a correlation across items,
not a mean over them. Its public functions (:mod:`._hlv`, :mod:`._multilabel`)
and the report's column -- a binned-metric group of one cell, see
:mod:`._registry` -- share these sums, so all compute r the same way, block
by block, and the report's bootstrap resamples the sums like any binned
metric's (:mod:`._cells`).

Precision: one pass over shifted values loses what the centred sums cancel,
growing like ``E[(x − ½)²] / Var(x)``: over 200,000 items whose normalised
entropies have a standard deviation of 0.16, 0.003 and 0.0003, r differed
from scipy's two-pass ``pearsonr`` by 6e-14, 8e-11 and 7e-8 (relative).
"""

from __future__ import annotations

import numpy as np

__all__ = []

#: Values are shifted by this before their moments are summed: normalised
#: entropies lie in [0, 1], so the uncentred sums stay close to the centred
#: ones and ``Σx² − (Σx)²/n`` loses no more than a few ulps.
_PEARSON_SHIFT = 0.5
#: A side whose centred sum of squares is below this fraction of its
#: uncentred one is constant up to rounding, and r is undefined.
_PEARSON_RTOL = 1e-10


def _pearson_cells(x, y):
    """``(cell, values)`` of Pearson's r for :func:`~._cells.cell_sums`.

    ``x`` and ``y`` are ``(n_items,)`` or ``(n_items, n_slots)`` (one
    correlation per column, e.g. per label); slot ``l`` is cell ``l`` and the
    six statistics are ``1, x, y, x², y², xy`` of the shifted values.
    """
    x = np.asarray(x, dtype=np.float64) - _PEARSON_SHIFT
    y = np.asarray(y, dtype=np.float64) - _PEARSON_SHIFT
    if x.ndim == 1:
        x, y = x[:, None], y[:, None]
    values = np.stack([np.ones_like(x), x, y, x * x, y * y, x * y], axis=-1)
    cell = np.broadcast_to(np.arange(x.shape[1]), x.shape)
    return cell, values


def _pearson_terms(sums) -> dict:
    """Pearson's r per cell from ``(..., 6, n_cells)`` sums, NaN where undefined.

    ``r = C_xy / sqrt(C_xx C_yy)`` with the centred sums ``C_xy = Σxy −
    ΣxΣy/n``. Also returns ``n``, the means and whether each side is
    constant (to rounding), for the error messages of the public functions.
    """
    n, sx, sy, sxx, syy, sxy = np.moveaxis(np.asarray(sums, dtype=np.float64), -2, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        cxx = sxx - sx * sx / n
        cyy = syy - sy * sy / n
        cxy = sxy - sx * sy / n
        flat_x = ~(cxx > _PEARSON_RTOL * sxx)  # also True for NaN (no items)
        flat_y = ~(cyy > _PEARSON_RTOL * syy)
        r = np.clip(cxy / np.sqrt(cxx * cyy), -1.0, 1.0)  # rounding: 1 + 1e-16
        mean_x, mean_y = sx / n + _PEARSON_SHIFT, sy / n + _PEARSON_SHIFT
    undefined = flat_x | flat_y | ~(n >= 2)
    return {
        "r": np.where(undefined, np.nan, r),
        "n": n,
        "flat": (flat_x, flat_y),
        "mean": (mean_x, mean_y),
    }


def _pearson_or_raise(sums, what, *, x_name="y_true", y_name="y_prob"):
    """Pearson's r per cell; ValueError where it is undefined.

    ``what`` describes the correlated quantities, one string per cell (or
    one for all), e.g. ``"normalised entropies"``.
    """
    terms = _pearson_terms(sums)
    n_cells = terms["r"].shape[-1]
    whats = [what] * n_cells if isinstance(what, str) else list(what)
    n = int(terms["n"][0])
    if n < 2:
        raise ValueError(
            f"The correlation of {whats[0]} needs at least 2 items, got {n}."
        )
    for cell in range(n_cells):
        for flat, mean, arg in zip(terms["flat"], terms["mean"], (x_name, y_name)):
            if flat[cell]:
                raise ValueError(
                    f"The {whats[cell]} of {arg} are the same for every item "
                    f"({float(mean[cell]) + 0.0:.17g}), so their correlation is "
                    "undefined."
                )
    return terms["r"]
