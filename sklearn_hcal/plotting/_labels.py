"""Point labels that do not overprint each other or the markers."""

from __future__ import annotations

import numpy as np

from ..utils._optional import import_optional

_GID = "hcal-label"
# Candidate offsets from the point, in points: nearest first, then the
# diagonals and sides at growing distance.
_RADII = (6.0, 12.0, 20.0, 30.0, 42.0, 56.0)
_ANGLES = (45, -45, 0, 135, -135, 180, 90, -90, 22, -22, 158, -158, 68, -68, 112, -112)
_PAD = 1.5  # pixels of clearance between boxes


def _alignment(dx: float, dy: float) -> tuple:
    ha = "left" if dx > 1e-9 else "right" if dx < -1e-9 else "center"
    va = "bottom" if dy > 1e-9 else "top" if dy < -1e-9 else "center"
    return ha, va


def _overlap(a, b) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0) + _PAD
    h = min(a.y1, b.y1) - max(a.y0, b.y0) + _PAD
    return max(w, 0.0) * max(h, 0.0)


def _marker_boxes(ax, radius_px: float) -> list:
    transforms = import_optional("matplotlib.transforms")
    boxes = []
    for coll in ax.collections:
        offsets = np.asarray(coll.get_offsets(), dtype=np.float64)
        if offsets.size == 0:
            continue
        for x, y in ax.transData.transform(offsets):
            boxes.append(
                transforms.Bbox.from_extents(
                    x - radius_px, y - radius_px, x + radius_px, y + radius_px
                )
            )
    return boxes


def place_labels(ax, points: list, *, fontsize="small", marker_points: float = 4.0):
    """Label points with text that overlaps no other label and no marker.

    Parameters
    ----------
    ax : matplotlib Axes
        Axes holding the points (as scatter collections).
    points : list of (str, (float, float), color)
        New labels: text, data position and colour (the marker's, so that a
        label far from its point still reads as its own).
    fontsize : str or float
    marker_points : float
        Marker radius in points, kept clear of text.

    Returns
    -------
    annotations : list of matplotlib Annotation
        One per new label. Labels placed on ``ax`` by earlier calls are
        placed again together with the new ones (new points can move them).

    Notes
    -----
    Greedy placement in display space after the figure's layout is applied
    (``Figure.draw_without_rendering``): each label takes the first
    candidate offset whose text box lies inside the axes and clear of the
    labels placed so far and of every marker; when none is clear, the
    candidate with the least overlap. Resizing the figure afterwards keeps
    the offsets (in points), not the guarantee.
    """
    fig = ax.figure
    old = [t for t in ax.texts if t.get_gid() == _GID]
    items = [(t.get_text(), t.xy, t.get_color()) for t in old]
    for t in old:
        t.remove()
    items += list(points)
    fig.draw_without_rendering()
    frame = ax.get_window_extent()
    px = fig.dpi / 72.0
    markers = _marker_boxes(ax, marker_points * px)
    placed, out = [], []
    for text, xy, color in items:
        best, best_cost = None, np.inf
        for r in _RADII:
            for angle in _ANGLES:
                dx = r * np.cos(np.radians(angle))
                dy = r * np.sin(np.radians(angle))
                ha, va = _alignment(dx, dy)
                ann = ax.annotate(
                    text,
                    xy,
                    xytext=(dx, dy),
                    textcoords="offset points",
                    ha=ha,
                    va=va,
                    fontsize=fontsize,
                    color=color,
                    annotation_clip=False,
                )
                box = ann.get_window_extent()
                outside = (
                    max(frame.x0 - box.x0, 0)
                    + max(box.x1 - frame.x1, 0)
                    + max(frame.y0 - box.y0, 0)
                    + max(box.y1 - frame.y1, 0)
                )
                cost = sum(_overlap(box, b) for b in placed)
                cost += sum(_overlap(box, b) for b in markers) + 1e3 * outside
                if cost < best_cost:
                    if best is not None:
                        best[0].remove()
                    best, best_cost = (ann, box), cost
                else:
                    ann.remove()
                if best_cost == 0:
                    break
            if best_cost == 0:
                break
        ann, box = best
        ann.set_gid(_GID)
        ann.set_in_layout(False)
        placed.append(box)
        out.append(ann)
    return out[len(old) :]


def _overprinted(labels) -> bool:
    boxes = [t.get_window_extent() for t in labels if t.get_text()]
    return any(
        _overlap(a, b) > _PAD * _PAD
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
    )


def declutter_xticklabels(ax) -> None:
    """Turn, shrink, then thin the x tick labels until none overprints another."""
    fig = ax.figure
    fig.draw_without_rendering()
    labels = ax.get_xticklabels()
    if not _overprinted(labels):
        return
    for t in labels:
        t.set_rotation(90)  # the box of a vertical label is as wide as its lines
    fig.draw_without_rendering()
    if not _overprinted(labels):
        return
    for t in labels:
        t.set_fontsize("x-small")
    fig.draw_without_rendering()
    step = 1
    while _overprinted([t for i, t in enumerate(labels) if i % step == 0]):
        step += 1
    for i, t in enumerate(labels):
        t.set_visible(i % step == 0)
