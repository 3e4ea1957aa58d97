"""Reliability diagram against the human majority label (Baan et al. 2022)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike

from ..metrics._shared import bin_index, column_value, top_class
from ..utils._compat import Interval, StrOptions, validate_params
from ..utils._docstrings import fill_doc
from ._base import (
    _check_matplotlib,
    _get_axes,
    _legend_label,
    _outside_legend,
    _plot_curve,
    _predict_proba,
    _reference_diagonal,
    _show_counts,
    _single_estimator,
    _validated,
)


def _majority_bins(Y: np.ndarray, P: np.ndarray, n_bins: int):
    """Per-bin counts, mean confidence and majority accuracy.

    The binning of :func:`~sklearn_hcal.metrics.expected_calibration_error`
    (Baan et al. 2022, eq. 3 and their code): confidence ``max_k q_ik``,
    ``n_bins`` equal-width right-closed bins ``(a, b]`` (a confidence of 0
    lies in no bin), prediction and majority both ``argmax`` with the first
    maximum on ties.
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    top, conf = top_class(P)
    correct = (top == np.argmax(Y, axis=1)).astype(np.float64)
    # The metric's own bin assignment; a confidence a rounding error above 1
    # (allowed by the row-sum tolerance) is drawn in the last bin.
    idx = np.minimum(bin_index(conf, n_bins), n_bins - 1)
    keep = idx >= 0
    counts = np.bincount(idx[keep], minlength=n_bins)
    conf_sum = np.bincount(idx[keep], weights=conf[keep], minlength=n_bins)
    hit_sum = np.bincount(idx[keep], weights=correct[keep], minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(counts > 0, conf_sum / counts, np.nan)
        accuracy = np.where(counts > 0, hit_sum / counts, np.nan)
    return edges, mean_conf, accuracy, counts


class MajorityReliabilityDisplay:
    """Reliability diagram against the human majority, with per-bin counts.

    Plots, in equal-width confidence bins, the accuracy of the model's top
    class against the **human majority** versus the mean confidence, with
    the number of items in each bin on a twin axis and the ECE in the legend
    (Baan et al. 2022, Fig. 1c-d and App. B, fourth row). It uses exactly the
    binning of :func:`~sklearn_hcal.metrics.expected_calibration_error`, so
    ``Σ_b counts_b / Σ counts · |accuracy_b − confidence_b|`` is the ECE
    shown. When humans disagree the majority is a poor target: an oracle that
    predicts the human distribution itself sits far from the diagonal (ECE
    ≈ 0.25 on ChaosNLI-SNLI) -- this display shows why.

    Use :meth:`from_predictions` or :meth:`from_estimator` to build it; all
    parameters are stored as attributes.

    Parameters
    ----------
    bin_edges : ndarray of shape (n_bins + 1,)
        Confidence bin edges; bins are right-closed ``(a, b]``.
    bin_confidence : ndarray of shape (n_bins,)
        Mean confidence ``max_k q_ik`` per bin (NaN for empty bins).
    bin_accuracy : ndarray of shape (n_bins,)
        Fraction of items whose predicted class is the human majority, per
        bin (NaN for empty bins).
    bin_counts : ndarray of shape (n_bins,)
        Items per bin.
    ece : float, default=None
        Expected calibration error shown in the legend.
    name : str, default=None
        Name of the classifier, used in the legend.

    Attributes
    ----------
    line_ : matplotlib Artist
        The reliability curve (a ``Line2D`` or, with ``kind="bar"``, a
        ``BarContainer``).
    counts_ : matplotlib Artist or None
        The per-bin counts on the twin axis.
    ax_ : matplotlib Axes
        Axes with the diagram.
    ax_counts_ : matplotlib Axes or None
        The twin axes with the counts.
    figure_ : matplotlib Figure
        Figure containing the diagram.

    See Also
    --------
    sklearn_hcal.metrics.expected_calibration_error : The ECE drawn here.
    InstanceErrorDisplay : What to look at instead when humans disagree.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.plotting import MajorityReliabilityDisplay
    >>> Y = np.array([[8, 2, 0], [5, 4, 1], [1, 2, 7], [3, 3, 4]])
    >>> oracle = Y / Y.sum(axis=1, keepdims=True)
    >>> disp = MajorityReliabilityDisplay.from_predictions(Y, oracle, name="oracle")
    >>> np.flatnonzero(disp.bin_counts)  # confidences 0.4, 0.5, 0.7, 0.8
    array([3, 4, 6, 7])
    >>> round(disp.ece, 3)
    0.4
    >>> import matplotlib.pyplot as plt
    >>> plt.close(disp.figure_)
    """

    def __init__(
        self,
        bin_edges,
        bin_confidence,
        bin_accuracy,
        bin_counts,
        *,
        ece: float | None = None,
        name: str | None = None,
    ):
        self.bin_edges = bin_edges
        self.bin_confidence = bin_confidence
        self.bin_accuracy = bin_accuracy
        self.bin_counts = bin_counts
        self.ece = ece
        self.name = name

    def plot(
        self,
        ax=None,
        *,
        name: str | None = None,
        kind: str = "line",
        ref_line: bool = True,
        show_counts: bool = True,
        **kwargs,
    ):
        """Draw the diagram.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None. Pass ``disp.ax_`` of
            another reliability display to compare classifiers: each curve
            gets its own colour and marker, and is drawn a few points off the
            previous ones (across the diagonal) so that equal points stay
            visible; ``line_.get_xydata()`` holds the exact values.
        name : str, default=None
            Legend name; defaults to :attr:`name`.
        kind : {"line", "bar"}, default="line"
            ``"line"``: mean confidence against accuracy, one marker per
            non-empty bin (best to overlay classifiers). ``"bar"``: accuracy
            bars over each bin, the classic single-model look of Baan et
            al.'s Fig. 1c-d.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration.
        show_counts : bool, default=True
            Draw the items per bin on a twin axis.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` (``kind="line"``) or
            :meth:`matplotlib.axes.Axes.bar`.

        Returns
        -------
        display : MajorityReliabilityDisplay
        """
        if kind not in ("line", "bar"):
            raise ValueError(f"kind must be 'line' or 'bar', got {kind!r}.")
        self.ax_, self.figure_ = _get_axes(ax)
        ax = self.ax_
        ece = None if self.ece is None else f"ECE = {self.ece:.3f}"
        label = _legend_label(self.name if name is None else name, ece)
        if ref_line:
            _reference_diagonal(ax)
        edges = np.asarray(self.bin_edges)
        conf = np.asarray(self.bin_confidence, dtype=np.float64)
        acc = np.asarray(self.bin_accuracy, dtype=np.float64)
        filled = np.asarray(self.bin_counts) > 0
        if kind == "line":
            self.line_ = _plot_curve(
                ax, conf[filled], acc[filled], label=label, **kwargs
            )
            color = self.line_.get_color()
        else:
            style = {"alpha": 0.6, "edgecolor": "black", "label": label, **kwargs}
            self.line_ = ax.bar(
                edges[:-1][filled],
                acc[filled],
                width=np.diff(edges)[filled],
                align="edge",
                **style,
            )
            # A dark outline: filled counts in the bar colour would vanish
            # behind the bars.
            color = "0.15"
        _show_counts(
            self,
            ax,
            edges,
            self.bin_counts,
            color,
            show=show_counts,
            fill=kind == "line",
        )
        ax.set(
            xlim=(0.0, 1.0),
            ylim=(0.0, 1.05),
            xlabel="Confidence (largest predicted probability)",
            ylabel="Accuracy against the human majority",
        )
        _outside_legend(ax)
        return self

    @classmethod
    @validate_params(
        {
            "y_true": ["array-like"],
            "y_prob": ["array-like"],
            "counts": ["array-like", None],
            "labels": ["array-like", None],
            "n_bins": [Interval(Integral, 1, None, closed="left")],
            "name": [str, None],
            "kind": [StrOptions({"line", "bar"})],
            "ref_line": ["boolean"],
            "show_counts": ["boolean"],
        },
        prefer_skip_nested_validation=True,
    )
    @fill_doc
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_prob: ArrayLike,
        *,
        counts: ArrayLike | None = None,
        labels: ArrayLike | None = None,
        n_bins: int = 10,
        name: str | None = None,
        ax=None,
        kind: str = "line",
        ref_line: bool = True,
        show_counts: bool = True,
        **kwargs,
    ):
        """Reliability diagram from human labels and predicted probabilities.

        Parameters
        ----------
        %(y_true)s
        %(y_prob)s
        %(counts)s
        labels : array-like of shape (n_classes,), default=None
            The class of each column of the predictions (default: a
            DataFrame's column names, else positional), matched by name with
            1-D labels and a DataFrame ``y_true``, as for the metric
            functions; see "Classes" in :mod:`sklearn_hcal.metrics`.
        n_bins : int, default=10
            Equal-width confidence bins (the ECE's default).
        name : str, default=None
            Legend name.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        kind, ref_line, show_counts, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : MajorityReliabilityDisplay
        """
        _check_matplotlib()
        inputs = _validated(y_true, {"_": y_prob}, counts, labels=labels)
        return majority_reliability(
            inputs.human,
            inputs.sources["_"],
            n_bins=n_bins,
            name=name,
            ax=ax,
            kind=kind,
            ref_line=ref_line,
            show_counts=show_counts,
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
        n_bins: int = 10,
        name: str | None = None,
        ax=None,
        kind: str = "line",
        ref_line: bool = True,
        show_counts: bool = True,
        **kwargs,
    ):
        """Reliability diagram of a fitted classifier's ``predict_proba(X)``.

        Parameters
        ----------
        estimator : fitted classifier
            Must have ``predict_proba``.
        X : array-like of shape (n_samples, n_features)
            Input of the classifier.
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Human label histograms (or labels, with ``counts``).
        counts : array-like of shape (n_samples, n_classes), default=None
            Replaces ``y`` as the human histograms when given.
        n_bins : int, default=10
            Equal-width confidence bins.
        name : str, default=None
            Legend name; the estimator's class name by default.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        kind, ref_line, show_counts, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : MajorityReliabilityDisplay
        """
        _check_matplotlib()
        name, est = _single_estimator(estimator, name, "MajorityReliabilityDisplay")
        y_prob = _predict_proba(est, X, name)
        return cls.from_predictions(
            y,
            y_prob,
            counts=counts,
            n_bins=n_bins,
            name=name,
            ax=ax,
            kind=kind,
            ref_line=ref_line,
            show_counts=show_counts,
            **kwargs,
        )


def majority_reliability(
    human, source, *, n_bins: int = 10, name=None, ax=None, display=None, **kw
):
    """:class:`MajorityReliabilityDisplay` of validated inputs.

    ``human`` and ``source`` as ``validate_predictions`` makes them (a report
    holds them): nothing is checked again (developer guide §checked-once).
    ``display`` is the class built (default: the Display; its
    ``from_predictions`` passes ``cls``); ``**kw`` are the arguments of
    :meth:`MajorityReliabilityDisplay.plot`.
    """
    display = MajorityReliabilityDisplay if display is None else display
    P = np.asarray(source.pair.probabilities(), dtype=np.float64)
    edges, conf, acc, bin_counts = _majority_bins(human.Y, P, n_bins)
    disp = display(
        edges,
        conf,
        acc,
        bin_counts,
        # the report's column: expected_calibration_error's binning
        ece=column_value(human, source, "ece", n_bins=n_bins),
        name=name,
    )
    return disp.plot(ax=ax, **kw)


__all__ = ["MajorityReliabilityDisplay", "majority_reliability"]
