"""A metric per bin of human agreement (Nie et al. 2020, ChaosNLI Figs. 4-5)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..metrics import metrics_by_agreement
from ..utils._compat import Interval, StrOptions, validate_params
from ..utils._docstrings import fill_doc
from ._base import (
    _check_matplotlib,
    _estimator_predictions,
    _get_axes,
    _validate_named_pairs,
)
from ._labels import declutter_xticklabels

_METRIC_LABELS = {
    "accuracy": "Accuracy against the human majority",
    "jsd": "Jensen-Shannon distance",
    "kl": "KL divergence (human ‖ model)",
    "dist_ce": "DistCE (TVD)",
    "ent_ce": "|EntCE| (nats)",
    "ece": "ECE (majority)",
    "rank_cs": "RankCS",
}


class AgreementBinDisplay:
    """A metric of several classifiers per bin of human agreement.

    Nie et al. (2020, ChaosNLI §5.4, Figs. 4-5) split the items at the
    quantiles of the entropy (base 2) of their human label distribution and
    show accuracy and JSD in each bin: models match the majority well where
    humans agree and poorly where they do not. The values are exactly those
    of :func:`~sklearn_hcal.metrics.metrics_by_agreement`; every classifier is
    evaluated on the same bins, which depend on the human labels only.

    Parameters
    ----------
    scores : DataFrame of shape (n_classifiers, n_bins)
        The metric, one row per classifier, one column per bin.
    bin_edges : ndarray of shape (n_bins + 1,)
        Entropy edges (bits); bins ``[a, b)``, the last closed.
    n_items : ndarray of shape (n_bins,)
        Items per bin.
    metric : str, default="jsd"
        Name of the metric (a report metric name of
        :func:`~sklearn_hcal.metrics.human_calibration_report`).

    Attributes
    ----------
    artists_ : dict of str to matplotlib Artist
        The bars (``BarContainer``) or line of each classifier.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.plotting import AgreementBinDisplay
    >>> Y = np.array([[4, 0], [3, 1], [1, 3], [4, 0]])
    >>> disp = AgreementBinDisplay.from_predictions(
    ...     Y, {"model": np.tile([0.9, 0.1], (4, 1))}, metric="accuracy",
    ...     n_bins=2)
    >>> disp.scores
    bin          0    1
    classifier
    model      1.0  0.5
    >>> disp.n_items
    array([2, 2])
    >>> import matplotlib.pyplot as plt
    >>> plt.close(disp.figure_)
    """

    def __init__(self, scores, bin_edges, n_items, *, metric: str = "jsd"):
        self.scores = scores
        self.bin_edges = bin_edges
        self.n_items = n_items
        self.metric = metric

    def _tick_labels(self) -> list:
        # Entropies are non-negative; rounding can give -0.0 at the low edge.
        edges = np.maximum(np.asarray(self.bin_edges, dtype=np.float64), 0.0)
        n_bins = edges.shape[0] - 1
        labels = []
        for b in range(n_bins):
            close = "]" if b == n_bins - 1 else ")"
            labels.append(
                f"[{edges[b]:.2f}, {edges[b + 1]:.2f}{close}\nn = {self.n_items[b]}"
            )
        return labels

    def plot(self, ax=None, *, kind: str = "bar", **kwargs):
        """Draw the metric per agreement bin.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        kind : {"bar", "line"}, default="bar"
            Grouped bars (one group per bin) or one line per classifier. To
            add classifiers to the axes of another display, use
            ``kind="line"``: bars are grouped within one call only.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.bar` or
            :meth:`matplotlib.axes.Axes.plot` for every classifier.

        Returns
        -------
        display : AgreementBinDisplay
        """
        if kind not in ("bar", "line"):
            raise ValueError(f"kind must be 'bar' or 'line', got {kind!r}.")
        self.ax_, self.figure_ = _get_axes(ax)
        ax = self.ax_
        scores = pd.DataFrame(self.scores)
        n_classifiers, n_bins = scores.shape
        x = np.arange(n_bins, dtype=np.float64)
        width = 0.8 / max(n_classifiers, 1)
        self.artists_ = {}
        for i, (name, row) in enumerate(scores.iterrows()):
            values = row.to_numpy(dtype=np.float64)
            if kind == "bar":
                offset = (i - (n_classifiers - 1) / 2) * width
                style = {"label": str(name), "edgecolor": "black", **kwargs}
                self.artists_[name] = ax.bar(x + offset, values, width, **style)
            else:
                style = {"marker": "o", "label": str(name), **kwargs}
                self.artists_[name] = ax.plot(x, values, **style)[0]
        ax.set_xticks(x, self._tick_labels(), fontsize="small")
        ax.set(
            xlabel="Human entropy bin (bits), most agreement on the left",
            ylabel=_METRIC_LABELS.get(self.metric, self.metric),
        )
        if kind == "bar":
            ax.set_ylim(bottom=min(0.0, float(np.nanmin(scores.to_numpy()))))
        ax.legend(loc="best", fontsize="small")
        # Many bins: turn (then shrink, then thin) the bin labels rather than
        # let them overprint.
        declutter_xticklabels(ax)
        return self

    @classmethod
    @validate_params(
        {
            "y_true": ["array-like"],
            "y_prob": ["array-like", dict],
            "counts": ["array-like", None],
            "labels": ["array-like", None],
            "metric": [str],
            "n_bins": [Interval(Integral, 1, None, closed="left")],
            "strategy": [StrOptions({"quantile", "uniform"})],
            "name": [str, None],
            "kind": [StrOptions({"bar", "line"})],
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
        metric: str = "jsd",
        n_bins: int = 5,
        strategy: str = "quantile",
        name: str | None = None,
        ax=None,
        kind: str = "bar",
        **kwargs,
    ):
        """Metric per agreement bin from labels and predicted probabilities.

        Parameters
        ----------
        y_true : array-like of shape (n_samples, n_classes)
            Label histograms (integer counts) or rows of human probabilities.
        y_prob : array-like of shape (n_samples, n_classes), or dict
            Predicted probabilities, or ``{name: probabilities}``.
        %(counts)s
        labels : array-like of shape (n_classes,), default=None
            The class of each column of the predictions (default: a
            DataFrame's column names, else positional), matched by name with
            1-D labels and a DataFrame ``y_true``, as for the metric
            functions; see "Classes" in :mod:`sklearn_hcal.metrics`.
        metric : str, default="jsd"
            A report metric name (``"accuracy"``, ``"jsd"``, ``"kl"``,
            ``"dist_ce"``, ... see
            :func:`~sklearn_hcal.metrics.human_calibration_report`).
        n_bins : int, default=5
            Number of agreement bins.
        strategy : {"quantile", "uniform"}, default="quantile"
            Entropy quantiles (ChaosNLI) or equal-width entropy bins.
        name : str, default=None
            Name of a single classifier (keys name a dict's).
        ax : matplotlib Axes, default=None
        kind, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : AgreementBinDisplay
        """
        _check_matplotlib()
        Y, preds, _ = _validate_named_pairs(
            y_true, y_prob, counts, name=name, labels=labels
        )
        rows, table = {}, None
        for clf, P in preds.items():
            table = metrics_by_agreement(
                Y, P, n_bins=n_bins, strategy=strategy, metrics=[metric]
            )
            rows[clf] = table[metric].to_numpy(dtype=np.float64)
        scores = pd.DataFrame.from_dict(rows, orient="index")
        scores.index.name = "classifier"
        scores.columns.name = "bin"
        edges = np.append(
            table["entropy_low"].to_numpy(), table["entropy_high"].to_numpy()[-1]
        )
        disp = cls(scores, edges, table["n_items"].to_numpy(), metric=metric)
        return disp.plot(ax=ax, kind=kind, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        counts: ArrayLike | None = None,
        metric: str = "jsd",
        n_bins: int = 5,
        strategy: str = "quantile",
        name: str | None = None,
        ax=None,
        kind: str = "bar",
        **kwargs,
    ):
        """Metric per agreement bin of fitted classifiers' ``predict_proba(X)``.

        Parameters
        ----------
        estimator : fitted classifier or dict of str to fitted classifier
            One classifier, or ``{name: classifier}`` for several.
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_classes)
            Human label histograms (or labels, with ``counts``).
        counts, metric, n_bins, strategy, name, ax, kind, **kwargs
            See :meth:`from_predictions`.

        Returns
        -------
        display : AgreementBinDisplay
        """
        _check_matplotlib()
        preds = _estimator_predictions(estimator, X, name)
        return cls.from_predictions(
            y,
            preds,
            counts=counts,
            metric=metric,
            n_bins=n_bins,
            strategy=strategy,
            ax=ax,
            kind=kind,
            **kwargs,
        )
