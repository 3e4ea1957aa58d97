"""Plumbing shared by the displays: lazy matplotlib, axes, named predictions."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validation import check_histograms_and_probabilities
from ..utils._optional import import_optional

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


def _named(values, name, *, default: str, what: str = "y_prob") -> dict:
    """``{name: value}`` from a single value or a mapping of named values."""
    if isinstance(values, Mapping):
        if name is not None:
            raise ValueError(
                f"name must be None when {what} is a dict: its keys name the "
                "classifiers."
            )
        if len(values) == 0:
            raise ValueError(
                f"{what} is an empty dict: pass at least one classifier, e.g. "
                "{'model': P}."
            )
        named = {str(key): value for key, value in values.items()}
        if len(named) != len(values):
            raise ValueError(
                f"{what} has keys that are equal as strings ({list(values)}); "
                "each classifier needs a distinct name."
            )
        return named
    return {default if name is None else str(name): values}


def _named_estimators(estimator, name) -> dict:
    """``{name: estimator}`` from one estimator or a dict of estimators."""
    if isinstance(estimator, Mapping):
        return _named(estimator, name, default="", what="estimator")
    return {_estimator_name(estimator) if name is None else str(name): estimator}


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
    if not hasattr(estimator, "predict_proba"):
        raise ValueError(
            f"estimator {name!r} ({_estimator_name(estimator)}) has no "
            "predict_proba; a probabilistic classifier is required."
        )
    return estimator.predict_proba(X)


def _validate_named_pairs(y_true, predictions: dict, counts, *, probabilities=True):
    """Validated histograms ``Y`` and ``{name: P}`` sharing them."""
    Y = None
    out = {}
    for name, y_prob in predictions.items():
        label = "y_prob" if len(predictions) == 1 else f"y_prob[{name!r}]"
        Y_i, P = check_histograms_and_probabilities(
            y_true,
            y_prob,
            counts=counts,
            allow_probabilities=probabilities,
            y_prob_name=label,
        )
        if Y is None:
            Y = np.asarray(Y_i, dtype=np.float64)
        out[name] = np.asarray(P, dtype=np.float64)
    return Y, out


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
    twin.set_ylabel("Items per bin")
    # Keep the curves above the count bars and visible through ax's patch.
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)
    return twin


def _draw_counts(ax, edges, counts, color, *, fill=True):
    """Draw per-bin counts on the twin axes of ``ax``; return the artist."""
    twin = _count_axes(ax)
    counts = np.asarray(counts, dtype=np.float64)
    if fill:
        artist = twin.stairs(counts, edges, fill=True, color=color, alpha=0.2)
    else:
        artist = twin.stairs(counts, edges, color=color, linewidth=1.5)
    tallest = max(
        (float(np.max(a.get_data().values)) for a in twin.patches if a is not None),
        default=0.0,
    )
    twin.set_ylim(0.0, _COUNT_HEADROOM * max(tallest, 1.0))
    return artist


def _has_label(ax, label: str) -> bool:
    return label in ax.get_legend_handles_labels()[1]


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
