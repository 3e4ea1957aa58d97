"""Human-versus-model histograms of instance statistics (Baan et al., App. B)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike

from ..metrics._shared import instance_errors_table
from ..utils._compat import Interval, StrOptions, validate_params
from ..utils._docstrings import fill_doc
from ._base import (
    _check_matplotlib,
    _estimator_predictions,
    _has_label,
    _pyplot,
    _validated,
)

_VIEWS = ("marginal", "error", "absolute_error")
_HUMAN = "Human"
#: Panels per row by default: four 3-inch panels are 1152 px at 96 dpi, within
#: a 1280-px page; ten classes in one row were 3072 px and hid the legend.
_MAX_COLS = 4
_PANEL_WIDTH, _PANEL_HEIGHT, _MAX_WIDTH = 3.2, 8.0 / 3, 12.0


def _ordinal(k: int) -> str:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(k if k < 20 else k % 10, "th")
    return f"{k}{suffix}"


def _panel_title(stat: str, index: int, view: str, class_names) -> str:
    wrap = {"marginal": "{}", "error": "{} error", "absolute_error": "|{} error|"}
    if stat == "class":
        return wrap[view].format(f"P({class_names[index]})")
    if stat == "rank":
        return wrap[view].format(f"{_ordinal(index + 1)} guess")
    if stat == "dist_ce":
        return "DistCE (TVD)"
    return {
        "marginal": "Entropy (nats)",
        "error": "EntCE = H(model) − H(human)",
        "absolute_error": "|EntCE| (nats)",
    }[view]


def _panel_range(stat: str, view: str, n_classes: int) -> tuple:
    top = 1.0 if stat in ("class", "rank", "dist_ce") else float(np.log(n_classes))
    if stat != "dist_ce" and view == "error":
        return (-top, top)
    return (0.0, top)


def _statistics(p_hat: np.ndarray, P: np.ndarray, frame, view: str) -> dict:
    """Per-panel values of one classifier (and of the humans, marginal view)."""
    model = {
        "class": P,
        "rank": -np.sort(-P, axis=1),
        "entropy": frame["model_entropy"].to_numpy(dtype=np.float64),
    }
    human = {
        "class": p_hat,
        "rank": -np.sort(-p_hat, axis=1),
        "entropy": frame["human_entropy"].to_numpy(dtype=np.float64),
    }
    if view == "marginal":
        return model, human
    diff = {stat: model[stat] - human[stat] for stat in model}
    # EntCE as the metric computes it, so that its mean is the reported value.
    diff["entropy"] = frame["ent_ce"].to_numpy(dtype=np.float64)
    if view == "absolute_error":
        diff = {stat: np.abs(value) for stat, value in diff.items()}
    return diff, None


class HumanModelMarginalDisplay:
    """Histograms of human and model statistics, the figures of Baan et al.'s App. B.

    Baan et al. (2022, App. B, Figs. 4-15) compare humans and a model through
    three rows of histograms over the items: the probability of each class
    (first row), the k-th largest probability -- the first, second, ... guess,
    whatever its class (second row) -- and DistCE and the entropy (third row).
    Three views:

    * ``"marginal"``: the human statistic and the model statistic as two
      histograms (dataset-level distributions; their Figs. 4-5);
    * ``"error"``: one histogram of the per-item difference model − human
      (signed, e.g. EntCE; Figs. 8-9);
    * ``"absolute_error"``: the absolute differences (Figs. 6-7).

    With more classes than ``n_cols`` (4 by default) the class and guess
    rows wrap onto several rows of panels, so that the figure keeps the width
    of a page (1152 px at 96 dpi) whatever the number of classes.

    DistCE is the same in every view. The entropy values are
    :func:`~sklearn_hcal.metrics.instance_calibration_errors`'
    ``human_entropy``, ``model_entropy`` and ``ent_ce`` (natural log). The
    fourth row of their figures is :class:`MajorityReliabilityDisplay`.

    Parameters
    ----------
    panels : dict of tuple to dict of str to ndarray of shape (n_samples,)
        ``{(statistic, index): {series: values}}`` with statistic in
        ``"class"``, ``"rank"`` (index = class or rank, from 0),
        ``"dist_ce"`` and ``"entropy"`` (index 0); series are the classifier
        names and, in the marginal view, ``"Human"``.
    bin_edges : dict of tuple to ndarray
        Histogram edges of each panel.
    view : {"marginal", "error", "absolute_error"}, default="marginal"
    class_names : list of str, default=None
        Class names for the titles (``0, 1, ...`` by default).

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes of shape (2 * n_rows + 1, n_cols)
        The panels, ``n_cols = min(max(n_classes, 2), 4)`` by default and
        ``n_rows = ceil(n_classes / n_cols)``: the class panels, then the
        guess panels, row by row, then DistCE and the entropy ((3, 3) for 3
        classes; (7, 4) for 10). Unused ones are switched off.
    histograms_ : dict of tuple to dict of str to matplotlib Artist
        The step histogram of every series in every panel.
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.plotting import HumanModelMarginalDisplay
    >>> Y = np.array([[8, 2, 0], [5, 4, 1], [1, 2, 7], [3, 3, 4]])
    >>> P = np.array([[.6, .3, .1], [.4, .4, .2], [.2, .2, .6], [.3, .3, .4]])
    >>> disp = HumanModelMarginalDisplay.from_predictions(
    ...     Y, {"model": P}, class_names=["e", "n", "c"])
    >>> disp.panels[("rank", 0)]["Human"]      # the humans' first guess
    array([0.8, 0.5, 0.7, 0.4])
    >>> err = HumanModelMarginalDisplay.from_predictions(Y, P, view="error")
    >>> err.panels[("class", 0)]["Classifier"].round(2)
    array([-0.2, -0.1,  0.1,  0. ])
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """

    def __init__(
        self,
        panels: dict,
        bin_edges: dict,
        *,
        view: str = "marginal",
        class_names=None,
    ):
        self.panels = panels
        self.bin_edges = bin_edges
        self.view = view
        self.class_names = class_names

    def _n_classes(self) -> int:
        return 1 + max(index for stat, index in self.panels if stat == "class")

    @staticmethod
    def _position(key, n_cols: int, n_rows: int) -> tuple:
        """The (row, column) of a panel in the wrapped grid."""
        stat, index = key
        if stat == "class":
            return divmod(index, n_cols)
        if stat == "rank":
            row, col = divmod(index, n_cols)
            return n_rows + row, col
        return 2 * n_rows, {"dist_ce": 0, "entropy": 1}[stat]

    def plot(
        self, ax=None, *, fill_human: bool = True, n_cols: int | None = None, **kwargs
    ):
        """Draw the panels.

        Parameters
        ----------
        ax : array-like of matplotlib Axes of shape (2 * n_rows + 1, n_cols), \
                default=None
            Grid of axes to draw on (e.g. ``disp.axes_`` of another display
            to add classifiers); a new figure when None.
        fill_human : bool, default=True
            Draw the human histograms filled in grey (marginal view).
        n_cols : int, default=None
            Panels per row, at least 2; by default ``min(max(n_classes, 2),
            4)``: more classes wrap onto further rows.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.stairs` for the models.

        Returns
        -------
        display : HumanModelMarginalDisplay
        """
        if self.view not in _VIEWS:
            raise ValueError(f"view must be one of {_VIEWS}, got {self.view!r}.")
        n_classes = self._n_classes()
        width = None  # a page's width by default; n_cols panels when asked
        if n_cols is None:
            n_cols = min(max(n_classes, 2), _MAX_COLS)
            width = min(_PANEL_WIDTH * n_cols, _MAX_WIDTH)
        elif isinstance(n_cols, bool) or not isinstance(n_cols, Integral) or n_cols < 2:
            raise ValueError(
                "n_cols must be an integer >= 2 (DistCE and the entropy share "
                f"the last row), got {n_cols!r}."
            )
        n_rows = -(-n_classes // n_cols)
        shape = (2 * n_rows + 1, n_cols)
        created = ax is None
        if created:
            plt = _pyplot()
            fig, axes = plt.subplots(
                *shape,
                figsize=(width or _PANEL_WIDTH * n_cols, _PANEL_HEIGHT * shape[0]),
                layout="constrained",
                squeeze=False,
            )
        else:
            _check_matplotlib()
            axes = np.asarray(ax, dtype=object)
            if axes.shape != shape:
                raise ValueError(
                    f"ax must be a {shape} grid of Axes for {n_classes} classes "
                    f"in {n_cols} columns, got shape {axes.shape}."
                )
            fig = axes[0, 0].figure
        self.axes_, self.figure_ = axes, fig
        class_names = self.class_names
        if class_names is None:
            class_names = [str(k) for k in range(n_classes)]
        used = set()
        self.histograms_ = {}
        for key, series in self.panels.items():
            row, col = self._position(key, n_cols, n_rows)
            used.add((row, col))
            panel = axes[row, col]
            edges = self.bin_edges[key]
            artists = {}
            for name, values in series.items():
                frac = np.histogram(values, bins=edges)[0] / len(values)
                if name == _HUMAN:
                    if _has_label(panel, _HUMAN):
                        continue
                    artists[name] = panel.stairs(
                        frac,
                        edges,
                        fill=fill_human,
                        color="0.55",
                        alpha=0.6,
                        label=_HUMAN,
                    )
                else:
                    style = {"linewidth": 1.6, "label": name, **kwargs}
                    artists[name] = panel.stairs(frac, edges, **style)
            self.histograms_[key] = artists
            panel.set_title(
                _panel_title(key[0], key[1], self.view, class_names), fontsize="medium"
            )
            if key[0] != "dist_ce" and self.view == "error":
                panel.axvline(0.0, color="0.3", linewidth=0.8)
            panel.set_ylim(bottom=0.0)
            if col == 0:
                panel.set_ylabel("Fraction of items")
        for r in range(shape[0]):
            for c in range(n_cols):
                if (r, c) not in used:
                    axes[r, c].set_axis_off()
        handles, labels = axes[0, 0].get_legend_handles_labels()
        if created:
            # at most as many entries per line as panels: the legend stays
            # within the figure's width
            fig.legend(
                handles,
                labels,
                loc="outside upper center",
                ncols=max(1, min(len(labels), n_cols)),
            )
        else:
            axes[0, 0].legend(fontsize="small")
        return self

    @classmethod
    @validate_params(
        {
            "y_true": ["array-like"],
            "y_prob": ["array-like", dict],
            "counts": ["array-like", None],
            "labels": ["array-like", None],
            "view": [StrOptions(set(_VIEWS))],
            "bins": [Interval(Integral, 1, None, closed="left")],
            "class_names": ["array-like", None],
            "name": [str, None],
            "fill_human": ["boolean"],
            "n_cols": [Interval(Integral, 2, None, closed="left"), None],
        },
        prefer_skip_nested_validation=True,
    )
    @fill_doc
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_prob,
        *,
        counts: ArrayLike | None = None,
        labels: ArrayLike | None = None,
        view: str = "marginal",
        bins: int = 20,
        class_names: ArrayLike | None = None,
        name: str | None = None,
        ax=None,
        fill_human: bool = True,
        n_cols: int | None = None,
        **kwargs,
    ):
        """Panels from human labels and predicted probabilities.

        Parameters
        ----------
        y_true : array-like of shape (n_samples, n_classes)
            Label histograms or rows of human probabilities (a DataFrame's
            columns name the classes).
        y_prob : array-like of shape (n_samples, n_classes), or dict
            Predicted probabilities, or ``{name: probabilities}``.
        %(counts)s
        labels : array-like of shape (n_classes,), default=None
            The class of each column of the predictions (default: a
            DataFrame's column names, else positional), matched by name with
            1-D labels and a DataFrame ``y_true``, as for the metric
            functions; see "Classes" in :mod:`sklearn_hcal.metrics`.
        view : {"marginal", "error", "absolute_error"}, default="marginal"
            See the class description.
        bins : int, default=20
            Equal-width bins of every panel over the statistic's whole range,
            ``[0, 1]`` for probabilities and DistCE, ``[0, log K]`` for
            entropies; the signed errors of ``view="error"`` span ``[−1, 1]``
            or ``[−log K, log K]`` with ``2 * bins`` bins (the same width).
        class_names : array-like of str, default=None
            Class names for the titles; by default the classes of the columns
            (``y_true``'s DataFrame columns, ``labels``, or the predictions'
            names), else their positions.
        name : str, default=None
            Name of a single classifier (keys name a dict's).
        ax : array-like of matplotlib Axes, default=None
            See :meth:`plot`.
        fill_human, n_cols, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : HumanModelMarginalDisplay
        """
        _check_matplotlib()
        inputs = _validated(y_true, y_prob, counts, name=name, labels=labels)
        return human_model_marginals(
            inputs,
            view=view,
            bins=bins,
            class_names=class_names,
            ax=ax,
            fill_human=fill_human,
            n_cols=n_cols,
            display=cls,
            **kwargs,
        )

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        counts: ArrayLike | None = None,
        view: str = "marginal",
        bins: int = 20,
        class_names: ArrayLike | None = None,
        name: str | None = None,
        ax=None,
        fill_human: bool = True,
        n_cols: int | None = None,
        **kwargs,
    ):
        """Panels of fitted classifiers' ``predict_proba(X)``.

        Parameters
        ----------
        estimator : fitted classifier or dict of str to fitted classifier
            One classifier, or ``{name: classifier}`` for several.
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_classes)
            Human label histograms (or labels, with ``counts``).
        counts, view, bins, class_names, name, ax, fill_human, n_cols, **kwargs
            See :meth:`from_predictions`. Each estimator's columns are named
            by its ``classes_`` and matched by name with 1-D labels and a
            DataFrame ``y``; ``class_names`` defaults to ``y``'s DataFrame
            columns, else the estimators' ``classes_``.

        Returns
        -------
        display : HumanModelMarginalDisplay
        """
        _check_matplotlib()
        preds = _estimator_predictions(estimator, X, name)
        return cls.from_predictions(
            y,
            preds,
            counts=counts,
            view=view,
            bins=bins,
            class_names=class_names,
            ax=ax,
            fill_human=fill_human,
            n_cols=n_cols,
            **kwargs,
        )


def human_model_marginals(
    inputs,
    *,
    view: str = "marginal",
    bins: int = 20,
    class_names=None,
    ax=None,
    display=None,
    **kw,
):
    """:class:`HumanModelMarginalDisplay` of validated inputs.

    ``inputs`` as ``validate_predictions`` makes them (a report holds
    them): nothing is checked again (developer guide §checked-once);
    ``class_names`` default to their classes. ``display`` is the class
    built (default: the Display; its ``from_predictions`` passes ``cls``);
    ``**kw`` are the arguments of :meth:`HumanModelMarginalDisplay.plot`.
    """
    display = HumanModelMarginalDisplay if display is None else display
    human = inputs.human
    if class_names is None and inputs.classes is not None:
        class_names = [str(c) for c in inputs.classes]
    n_classes = human.n_classes
    if class_names is not None:
        class_names = [str(c) for c in class_names]
        if len(class_names) != n_classes:
            raise ValueError(
                f"class_names has {len(class_names)} entries but there are "
                f"{n_classes} classes."
            )
    p_hat = np.asarray(human.Y, dtype=np.float64) / human.n[:, None]
    keys = [("class", k) for k in range(n_classes)]
    keys += [("rank", k) for k in range(n_classes)]
    keys += [("dist_ce", 0), ("entropy", 0)]
    panels = {key: {} for key in keys}
    probabilities = inputs.probabilities()
    for clf, source in inputs.sources.items():
        frame = instance_errors_table(human, source)
        model, humans = _statistics(p_hat, probabilities[clf], frame, view)
        for stat, k in keys:
            if stat == "dist_ce":
                panels[(stat, k)][clf] = frame["dist_ce"].to_numpy(np.float64)
                continue
            value = model[stat]
            panels[(stat, k)][clf] = value if value.ndim == 1 else value[:, k]
            if humans is not None and _HUMAN not in panels[(stat, k)]:
                h = humans[stat]
                panels[(stat, k)][_HUMAN] = h if h.ndim == 1 else h[:, k]
    # The human histogram first, so that it is drawn below the models.
    # Values are clipped to their panel's (mathematical) range: an
    # entropy of a uniform row is up to a few ulps above log K, which
    # np.histogram would drop from the last bin.
    panels = {
        key: {
            clf: np.clip(values, *_panel_range(key[0], view, n_classes))
            for clf, values in sorted(
                series.items(), key=lambda item: item[0] != _HUMAN
            )
        }
        for key, series in panels.items()
    }
    edges = {}
    for key in keys:
        lo, hi = _panel_range(key[0], view, n_classes)
        # A symmetric range gets twice the bins: the same bin width.
        n_edges = (2 * bins if lo < 0 else bins) + 1
        edges[key] = np.linspace(lo, hi, n_edges)
    disp = display(panels, edges, view=view, class_names=class_names)
    return disp.plot(ax=ax, **kw)
