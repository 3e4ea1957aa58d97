"""Each annotator's agreement with the others, and a model among them."""

from __future__ import annotations

from collections.abc import Hashable
from numbers import Integral

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..metrics import annotator_agreement
from ..utils._compat import Interval, validate_params
from ._base import _get_axes

_COLUMNS = ("n_annotations", "alpha_change", "majority_agreement")


class AnnotatorAgreementDisplay:
    """Each annotator's agreement with the others (and a model's).

    One point per annotator: its agreement with the majority of the other
    annotators of its items (x) against what it changes in Krippendorff's α
    (y: α − α without the annotator; below 0 it lowers the agreement), the
    area growing with its number of annotations. The values are those of
    :func:`~sklearn_hcal.metrics.annotator_agreement`; annotators at the
    bottom left disagree most (outliers, or another perspective worth a
    look). A model scored as one more annotator is a star: within the
    cloud, it agrees with people as an annotator does.

    Parameters
    ----------
    table : DataFrame
        :func:`~sklearn_hcal.metrics.annotator_agreement`'s table (its
        ``n_annotations``, ``alpha_change`` and ``majority_agreement``
        columns).
    model_name : hashable, default=None
        The model's row, if the table has one.

    Attributes
    ----------
    artists_ : dict of str to matplotlib Artist
        ``"annotators"`` (the scatter), ``"model"`` when drawn.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.plotting import AnnotatorAgreementDisplay
    >>> X = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
    ...                   "annotator": ["a", "b", "c"] * 4,
    ...                   "label": [0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1]})
    >>> disp = AnnotatorAgreementDisplay.from_annotations(
    ...     X, pd.Series([0, 1, 0, 1], index=[1, 2, 3, 4]))
    >>> disp.table.index.tolist()
    ['a', 'b', 'c', 'model']
    >>> sorted(disp.artists_)
    ['annotators', 'model']
    >>> import matplotlib.pyplot as plt
    >>> plt.close(disp.figure_)
    """

    def __init__(self, table: pd.DataFrame, *, model_name: Hashable | None = None):
        self.table = table
        self.model_name = model_name

    def plot(self, ax=None, *, annotate: int = 5, **kwargs):
        """Draw the annotators (and the model).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        annotate : int, default=5
            Name the annotators with the lowest α change.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.scatter` for the annotators.

        Returns
        -------
        display : AnnotatorAgreementDisplay
        """
        missing = [c for c in _COLUMNS if c not in self.table.columns]
        if missing:
            raise ValueError(
                f"table lacks the columns {missing} of annotator_agreement's table."
            )
        self.ax_, self.figure_ = _get_axes(ax)
        ax = self.ax_
        table = self.table
        model = None
        if self.model_name is not None and self.model_name in table.index:
            model = table.loc[self.model_name]
            table = table.drop(index=self.model_name)
        size = 12.0 * np.sqrt(table["n_annotations"].to_numpy(dtype=np.float64))
        style = {"alpha": 0.6, "edgecolor": "black", "linewidth": 0.3, **kwargs}
        self.artists_ = {
            "annotators": ax.scatter(
                table["majority_agreement"],
                table["alpha_change"],
                s=size,
                label=f"annotators ({len(table)})",
                **style,
            )
        }
        ax.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
        lowest = table["alpha_change"].dropna().nsmallest(annotate)
        for name, change in lowest.items():
            ax.annotate(
                str(name),
                (table.loc[name, "majority_agreement"], change),
                fontsize="x-small",
                xytext=(3, -3),
                textcoords="offset points",
            )
        if model is not None:
            self.artists_["model"] = ax.scatter(
                [model["majority_agreement"]],
                [model["alpha_change"]],
                marker="*",
                s=250,
                color="crimson",
                edgecolor="black",
                label=str(self.model_name),
                zorder=3,
            )
        alpha = self.table.attrs.get("alpha")
        title = "Agreement of each annotator with the others"
        if alpha is not None:
            title += f" (α = {alpha:.3f})"
        ax.set(
            xlabel="Agreement with the majority of the other annotators",
            ylabel="α − α without the annotator",
            title=title,
        )
        ax.legend(loc="best", fontsize="small")
        return self

    @classmethod
    # the data and the coefficient's parameters are validated once, by
    # annotator_agreement; the figure's own here
    @validate_params(
        {"annotate": [Interval(Integral, 0, None, closed="left")]},
        prefer_skip_nested_validation=True,
    )
    def from_annotations(
        cls,
        X: pd.DataFrame,
        y_pred: pd.Series | None = None,
        *,
        level: str = "nominal",
        labels: ArrayLike | None = None,
        item: Hashable = "item",
        annotator: Hashable = "annotator",
        label: Hashable = "label",
        model_name: Hashable = "model",
        ax=None,
        annotate: int = 5,
        **kwargs,
    ):
        """The display of a long table of annotations (and a model's labels).

        Parameters
        ----------
        X : DataFrame
            One row per (item, annotator), as ``load_lewidi(...).frame``.
        y_pred : Series, default=None
            A model's label of every item, indexed by item: drawn as one
            more annotator.
        level, labels, item, annotator, label, model_name
            As for :func:`~sklearn_hcal.metrics.annotator_agreement`.
        ax : matplotlib Axes, default=None
        annotate : int, default=5
            Name the annotators with the lowest α change.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : AnnotatorAgreementDisplay
        """
        table = annotator_agreement(
            X,
            y_pred,
            level=level,
            labels=labels,
            item=item,
            annotator=annotator,
            label=label,
            model_name=model_name,
        )
        display = cls(table, model_name=None if y_pred is None else model_name)
        return display.plot(ax=ax, annotate=annotate, **kwargs)
