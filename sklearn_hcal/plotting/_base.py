"""Plumbing shared by the displays: lazy matplotlib, axes, named predictions."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..metrics._shared import (
    CheckedInputs,
    as_prediction_dict,
    validate_predictions,
)
from ..utils._optional import import_optional
from ..utils._pipeline import (
    disagreement_method,
    labelled_proba,
    warn_point_disagreement,
)

# Label of the twin axes that holds per-bin counts, so that a second display
# drawn on the same axes finds and reuses it instead of stacking twins.
_COUNT_AXES_LABEL = "hcal-bin-counts"
# Counts occupy the lower third of the axes, below most reliability curves.
_COUNT_HEADROOM = 3.0


def _pyplot():
    """``matplotlib.pyplot``, or an ImportError naming the ``plot`` extra."""
    import_optional("matplotlib")
    return import_optional("matplotlib.pyplot")


def _check_matplotlib() -> None:
    # Fail before any metric is computed, as scikit-learn's displays do.
    import_optional("matplotlib")


def _get_axes(ax):
    """``(ax, figure)``; a new figure and axes when ``ax`` is None."""
    if ax is None:
        plt = _pyplot()
        _, ax = plt.subplots(layout="constrained")
    else:
        _check_matplotlib()
    return ax, ax.figure


def _estimator_name(estimator) -> str:
    return type(estimator).__name__


def _named_estimators(estimator, name) -> dict:
    """``{name: estimator}`` from one estimator or a dict of estimators."""
    default = "" if isinstance(estimator, Mapping) else _estimator_name(estimator)
    return as_prediction_dict(estimator, name, default=default, what="estimator")


def _estimator_predictions(estimator, X, name) -> dict:
    """``{name: predict_proba(X)}`` of one fitted classifier or a dict of them.

    Each as a DataFrame named by the classifier's ``classes_`` (see
    :func:`_predict_proba`).
    """
    estimators = _named_estimators(estimator, name)
    return {n: _predict_proba(e, X, n) for n, e in estimators.items()}


def _single_estimator(estimator, name, display: str) -> tuple:
    """``(name, estimator)`` for displays that draw one classifier per call."""
    if isinstance(estimator, Mapping):
        raise ValueError(
            f"{display}.from_estimator takes one estimator, got a dict; to "
            "compare classifiers, call it again with ax=disp.ax_."
        )
    ((name, estimator),) = _named_estimators(estimator, name).items()
    return name, estimator


def _predict_proba(estimator, X, name: str):
    """``predict_proba(X)`` named by ``classes_`` (:func:`labelled_proba`)."""
    return labelled_proba(
        estimator, X, f"estimator {name!r} ({_estimator_name(estimator)})"
    )


def _disagreement_source(estimator, X, response_method: str, name: str):
    """``(values, source)`` for a disagreement display's ``from_estimator``.

    ``predict_disagreement`` is looked up as the scorers look it up
    (:func:`~sklearn_hcal.utils._pipeline.disagreement_method`: through
    Pipelines, an error when a component hides it). Without it, the class
    probabilities are returned, to become the point prediction's
    ``φ = 1 − Σq²`` -- with a UserWarning unless
    ``response_method="predict_proba"`` asked for exactly that (developer
    guide §never-degrade).
    """
    label = f"estimator {name!r} ({_estimator_name(estimator)})"
    if response_method in ("auto", "predict_disagreement"):
        method = disagreement_method(estimator, label=label, user="the display")
        if method is not None:
            return method(X), "predict_disagreement"
        if response_method == "predict_disagreement":
            raise ValueError(f"{label} has no predict_disagreement.")
        # the caller of from_estimator (behind validate_params)
        warn_point_disagreement(label, user="the display")
    return _predict_proba(estimator, X, name), "predict_proba"


def _validated(
    y_true, y_prob, counts, *, name=None, probabilities=True, labels=None
) -> CheckedInputs:
    """The validated labels and ``{name: probabilities}`` of a Display.

    ``y_prob`` is one classifier's probabilities (named ``name``, default
    ``"Classifier"``) or ``{name: probabilities}``. Validated and aligned by
    class name exactly as :func:`~sklearn_hcal.metrics.human_calibration_report`
    does (the same function), once: the Display's inner function takes the
    result as it is (developer guide §checked-once).
    """
    predictions = as_prediction_dict(y_prob, name, default="Classifier", what="y_prob")
    return validate_predictions(
        y_true,
        predictions,
        counts,
        labels,
        what="y_prob",
        allow_probabilities=probabilities,
        keyed=isinstance(y_prob, Mapping),
    )


def _validate_named_pairs(
    y_true, y_prob, counts, *, name=None, probabilities=True, labels=None
) -> tuple:
    """``(Y, {name: P}, classes)`` of :func:`_validated`, as float64 arrays.

    Every ``P`` is in ``Y``'s class order; ``classes`` (None: positional)
    names ``Y``'s columns.
    """
    inputs = _validated(
        y_true, y_prob, counts, name=name, probabilities=probabilities, labels=labels
    )
    Y = np.asarray(inputs.human.Y, dtype=np.float64)
    return Y, inputs.probabilities(), inputs.classes


def _count_axes(ax):
    """The twin axes holding per-bin counts of ``ax``, created on first use."""
    for other in ax.figure.axes:
        if (
            other is not ax
            and other.get_label() == _COUNT_AXES_LABEL
            and ax.get_shared_x_axes().joined(ax, other)
        ):
            return other
    twin = ax.twinx()
    twin.set_label(_COUNT_AXES_LABEL)
    twin.set_ylabel("Items per bin", loc="bottom")  # beside the count ticks
    # Keep the curves above the count bars and visible through ax's patch.
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)
    return twin


def _draw_counts(ax, edges, counts, color, *, fill=True):
    """Draw per-bin counts on the twin axes of ``ax``; return the artist.

    The first histogram on the axes is filled (translucent); later ones are
    outlines in their curve's colour, so that several stay legible. The bars
    keep to the lower part of the axes, below most curves, but the count
    axis is labelled only over the range of the counts.
    """
    twin = _count_axes(ax)
    counts = np.asarray(counts, dtype=np.float64)
    if fill and not twin.patches:
        artist = twin.stairs(counts, edges, fill=True, color=color, alpha=0.2)
    else:
        artist = twin.stairs(counts, edges, color=color, linewidth=1.2, alpha=0.8)
    tallest = max(
        (float(np.max(a.get_data().values)) for a in twin.patches if a is not None),
        default=0.0,
    )
    tallest = max(tallest, 1.0)
    twin.set_ylim(0.0, _COUNT_HEADROOM * tallest)
    ticker = import_optional("matplotlib.ticker")
    ticks = ticker.MaxNLocator(nbins=3, integer=True).tick_values(0.0, tallest)
    twin.yaxis.set_major_locator(ticker.FixedLocator(ticks[ticks <= tallest]))
    twin.spines["right"].set_bounds(0.0, tallest)
    return artist


# Markers cycled with the colours, so that curves stay distinct beyond the
# ten colours of the default cycle and in grey-scale print.
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">")
_CURVE_GID = "hcal-curve"
# Successive curves are drawn this many points apart, across the diagonal,
# so that equal points (e.g. accuracy 1 in every bin) do not hide each other.
_DODGE_POINTS = 2.5


def _plot_curve(ax, x, y, *, label, **kwargs):
    """One reliability curve with its own marker, dodged from earlier ones.

    The k-th curve on ``ax`` is drawn offset by ``k·2.5`` points (alternating
    sides) perpendicular to the diagonal; the line's data stay the exact
    values (``get_xydata``).
    """
    transforms = import_optional("matplotlib.transforms")
    index = sum(line.get_gid() == _CURVE_GID for line in ax.get_lines())
    style = {
        "marker": _MARKERS[index % len(_MARKERS)],
        "markeredgecolor": "white",
        "markeredgewidth": 0.7,
        "label": label,
        **kwargs,
    }
    line = ax.plot(x, y, **style)[0]
    line.set_gid(_CURVE_GID)
    step = (index + 1) // 2 * (1 if index % 2 else -1)  # 0, 1, -1, 2, -2, ...
    if step:
        d = step * _DODGE_POINTS / np.sqrt(2.0)
        line.set_transform(
            transforms.offset_copy(
                ax.transData, fig=ax.figure, x=d, y=-d, units="points"
            )
        )
    return line


def _has_label(ax, label: str) -> bool:
    return label in ax.get_legend_handles_labels()[1]


#: Legend entry of the diagonal of perfect calibration (drawn once per axes).
_REF_LABEL = "Perfectly calibrated"


def _reference_diagonal(ax, top: float = 1.0) -> None:
    """The dashed diagonal of perfect calibration up to ``top``, once per axes."""
    if not _has_label(ax, _REF_LABEL):
        ax.plot([0, top], [0, top], linestyle="--", color="0.4", label=_REF_LABEL)


def _legend_label(name, statistic: str | None) -> str | None:
    """``"name (statistic)"``, or whichever of the two is given."""
    if statistic is None:
        return name
    return statistic if name is None else f"{name} ({statistic})"


def _show_counts(display, ax, edges, counts, color, *, show: bool, fill=True):
    """Draw per-bin counts (:func:`_draw_counts`) and record them on ``display``.

    Sets ``display.counts_`` (the artist) and ``display.ax_counts_`` (its twin
    axes), both None when ``show`` is False.
    """
    display.counts_ = display.ax_counts_ = None
    if show:
        display.counts_ = _draw_counts(ax, edges, counts, color, fill=fill)
        display.ax_counts_ = display.counts_.axes


def _outside_legend(ax):
    """Legend above the axes: curves and counts can fill any corner inside."""
    n_entries = len(ax.get_legend_handles_labels()[1])
    return ax.legend(
        loc="lower left",
        bbox_to_anchor=(0.0, 1.01),
        ncols=1 if n_entries <= 2 else 2,
        fontsize="small",
        frameon=False,
        borderaxespad=0.0,
    )
