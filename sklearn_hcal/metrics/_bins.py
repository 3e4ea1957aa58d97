"""Equal-width bins of the binned metrics, exactly as their definitions say.

Every binned metric bins values in [0, 1] into ``B`` equal-width bins whose
edges are ``np.linspace(0, 1, B + 1)``: left-closed ``[j/B, (j+1)/B)`` for
Mimori et al.'s class-wise terms and the disagreement calibration
(:func:`bin_indices`), right-closed ``(j/B, (j+1)/B]`` for the ECE family
(:func:`bin_index`, Baan et al.'s code). Both are computed as the floor of
``value × B`` clipped to the bins, and only the values within rounding of
an edge are looked up with the binary search of the definition
(:func:`edge_values`). With ``slot_width`` a 2-D array's columns get
consecutive ranges of cells (one slot per class, :mod:`._cells`), added to
the float products before the one integer cast.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bin_index", "bin_indices", "edge_values", "inner_edges", "slot_offsets"]


def bin_indices(
    values: np.ndarray, n_bins: int, slot_width: int | None = None
) -> np.ndarray:
    """Equal-width bin of each value in [0, 1]: ``[j/B, (j+1)/B)``, last closed.

    The inner edges come from ``np.linspace`` so that a value equal to an edge
    ``j/B`` (as computed in floating point) falls in bin ``j``; values at or
    above the last inner edge, including exactly 1, fall in bin ``B - 1``.

    This is ``searchsorted(edges[1:-1], values, side="right")``, computed as
    ``floor(value * B)`` clipped to ``[0, B - 1]``: the two can only differ
    where ``value * B`` is within rounding of an integer (an edge), so those
    values -- and only those -- are looked up with the binary search (a
    search per element is several times slower).

    ``slot_width`` (2-D ``values``): column ``l``'s bins are numbered from
    ``l * slot_width`` (the cells of one slot per column, :mod:`._cells`).
    The clipping and these offsets are applied to the float products before
    the one integer cast (float passes, no broadcast integer add).
    """
    values = np.asarray(values, dtype=np.float64)
    scaled = values * n_bins
    near = edge_values(scaled)
    # fmax/fmin: NaN goes to bin 0, as the integer cast and clip gave
    np.fmax(scaled, 0.0, out=scaled)
    np.fmin(scaled, n_bins - 1, out=scaled)
    return _cast_cells(scaled, values, near, slot_width, _bins_right(n_bins))


def _bins_right(n_bins):
    """The definition, for the values near an edge: a search of the inner
    ``linspace`` edges (made only when some value needs it)."""
    return lambda v: np.searchsorted(inner_edges(n_bins), v, side="right")


_INNER_EDGES: dict = {}


def inner_edges(n_bins: int) -> np.ndarray:
    """The inner edges ``linspace(0, 1, B + 1)[1:-1]`` of :func:`bin_indices`
    (kept per ``B``; read-only)."""
    edges = _INNER_EDGES.get(n_bins)
    if edges is None:
        edges = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
        edges.flags.writeable = False
        if len(_INNER_EDGES) > 64:
            _INNER_EDGES.clear()
        _INNER_EDGES[n_bins] = edges
    return edges


#: Cell offsets up to this are added to the float products before the cast:
#: a sum below 2**20 is exact to 2**-32, far inside the edge test's 1e-9, so
#: the truncation of every value not near an edge keeps its bin.
_FLOAT_OFFSETS_MAX = 2**20

_OFFSETS: dict = {}


def slot_offsets(n_rows: int, n_slots: int, width: int, start: int = 0):
    """``start + l * width`` at every ``(row, l)``, float64, C-contiguous.

    A view of a kept array (the binned metrics bin many sub-blocks of the
    same shape); arrays past 4 MB are made for the call.
    """
    key = (n_slots, width, start)
    kept = _OFFSETS.get(key)
    if kept is None or kept.shape[0] < n_rows:
        row = start + width * np.arange(n_slots, dtype=np.float64)
        rows = max(n_rows, 2**15 // n_slots + 1)
        kept = np.empty((rows, n_slots))
        kept[:] = row
        if rows * n_slots > 2**19:
            return kept[:n_rows]
        if len(_OFFSETS) > 32:
            _OFFSETS.clear()
        _OFFSETS[key] = kept
    return kept[:n_rows]


def _cast_cells(clipped, values, near, slot_width, search, start=0):
    """The integer cells of clipped float bins, ``start`` added (and
    ``l * slot_width`` for column ``l`` when ``slot_width`` is given); the
    values ``near`` an edge (a mask, or None) are binned by ``search``."""
    offsets = None
    if slot_width is not None:
        n_rows, n_slots = clipped.shape
        if start + n_slots * slot_width < _FLOAT_OFFSETS_MAX:
            offsets = slot_offsets(n_rows, n_slots, slot_width, start)
            clipped += offsets
    elif start:
        clipped += start
    pos = clipped.astype(np.intp)
    if slot_width is not None and offsets is None:
        pos += np.arange(start, start + pos.shape[1] * slot_width, slot_width)
    if near is not None:
        fixed = search(values[near]) + start
        if slot_width is not None:
            fixed += slot_width * np.nonzero(near)[1]
        pos[near] = fixed
    return pos


#: ``value * B`` within this of an integer may be an edge: at most 1e-12 off
#: from the exact product for ``B`` up to 1e4 bins, so 1e-9 leaves a margin.
_NEAR_EDGE = 1e-9


def edge_values(scaled: np.ndarray):
    """Where ``scaled`` (a value times the number of bins) lies within
    rounding of an integer, i.e. of a bin edge; None when nowhere.

    Elsewhere the floor of ``scaled`` is the bin (clipped to the bins'
    range): no edge lies between the value and its rounded product.
    """
    dist = np.rint(scaled)
    dist -= scaled
    np.abs(dist, out=dist)
    near = dist < _NEAR_EDGE
    return near if near.any() else None


def bin_index(conf, n_bins, slot_width=None, start=0):
    """Right-closed equal-width bin ``(j/M, (j+1)/M]`` of each confidence.

    The edges are ``np.linspace(0, 1, n_bins + 1)`` and membership is
    ``lower < conf <= upper`` (Baan et al.'s code), so a confidence exactly on
    an edge such as 0.3 goes to the bin below it. A confidence of 0 lies in no
    bin and gets index -1 (and one above 1, possible within the row-sum
    tolerance, gets ``n_bins``).

    This is ``searchsorted(edges, conf, side="left") - 1``, computed as
    ``floor(conf * M)``: the two can only differ where ``conf * M`` is within
    rounding of an integer (an edge, where ``ceil - 1`` and ``floor``
    differ too), so those confidences -- and only those -- are looked up
    with the binary search (a search per element is several times slower).

    ``slot_width`` (2-D ``conf``): ``start + l * slot_width`` is added to the
    bins of column ``l`` (the cells of :func:`_classwise_cells`).
    """
    conf = np.asarray(conf, dtype=np.float64)
    scaled = conf * n_bins
    near = edge_values(scaled)
    pos = np.floor(scaled, out=scaled)
    # below 0: no bin, as the search says; fmax/fmin send NaN to -1, as the
    # integer cast and clip did
    np.fmax(pos, -1.0, out=pos)
    np.fmin(pos, n_bins, out=pos)
    return _cast_cells(
        pos,
        conf,
        near,
        slot_width,
        lambda v: np.searchsorted(np.linspace(0.0, 1.0, n_bins + 1), v) - 1,
        start,
    )
