"""Distributions of instance-level calibration errors (Baan et al. 2022)."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..metrics._shared import instance_errors_table
from ..utils._compat import Interval, StrOptions, validate_params
from ..utils._docstrings import fill_doc
from ._base import (
    _check_matplotlib,
    _estimator_predictions,
    _get_axes,
    _validated,
)

_KINDS = {"dist_ce", "ent_ce", "abs_ent_ce"}
_XLABELS = {
    "dist_ce": "DistCE: TVD between model and human distribution",
    "ent_ce": "EntCE: H(model) − H(human) (nats)",
    "abs_ent_ce": "|EntCE|: |H(model) − H(human)| (nats)",
}


def _check_errors(values, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-D array of per-item errors, got shape "
            f"{arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return arr


def _edges(bins, value_range) -> np.ndarray:
    if isinstance(bins, numbers.Integral):
        lo, hi = value_range
        if not lo < hi:
            raise ValueError(
                f"range must be (low, high) with low < high, got {value_range}."
            )
        return np.linspace(float(lo), float(hi), int(bins) + 1)
    edges = np.asarray(bins, dtype=np.float64)
    if edges.ndim != 1 or edges.shape[0] < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError(
            "bins must be a positive int or a 1-D array of at least two strictly "
            "increasing edges."
        )
    return edges


@validate_params(
    {
        "errors_a": ["array-like"],
        "errors_b": ["array-like"],
        "bins": [Interval(numbers.Integral, 1, None, closed="left"), "array-like"],
        "range": [tuple],
        "divergence": [StrOptions({"kl", "tvd"})],
    },
    prefer_skip_nested_validation=True,
)
def error_histogram_divergence(
    errors_a: ArrayLike,
    errors_b: ArrayLike,
    *,
    bins: int | ArrayLike = 30,
    range: tuple = (0.0, 1.0),
    divergence: str = "kl",
) -> float:
    """Divergence between the histograms of two sets of instance-level errors.

    Baan et al. (2022, Table 2) compare the *distribution* of DistCE errors
    of a classifier with that of an "as good as it realistically gets"
    classifier (sub-sampled humans): both error sets are binned with the same
    equal-width bins (:func:`numpy.histogram` with ``bins`` and ``range``, as
    in their code), each histogram is normalised to sum to 1 and

    * ``"kl"``: ``KL(a ‖ b) = Σ_j a_j log(a_j / b_j)`` (natural log; bins
      with ``a_j = 0`` add 0) -- asymmetric, bins that are improbable under
      the reference ``a`` weigh little;
    * ``"tvd"``: ``½ Σ_j |a_j − b_j|``.

    The default of 30 bins on ``[0, 1]`` is Baan et al.'s
    (``generate_figure2_and_table2(..., n_bins=30)`` in their released
    notebook; the paper does not state it). Their Table 2 is one draw: two
    disjoint 20-vote sub-samples H1 and H2 of ChaosNLI-SNLI, evaluated
    against the remaining 60 votes, KL 0.004 and TVD 0.022. Over 20 such
    draws we measure a mean TVD of 0.039, and a KL that is **infinite in 10
    of the 20** -- a sparse tail bin where H1 has an item and H2 none --
    with a mean of 0.009 over the finite ones (against all 100 votes: TVD
    0.032, KL infinite in 8 of 20). The TVD is the more stable of the two;
    the KL is the paper's choice because it is asymmetric.

    Parameters
    ----------
    errors_a : array-like of shape (n_samples_a,)
        Per-item errors of the reference classifier (``H1`` in Table 2).
    errors_b : array-like of shape (n_samples_b,)
        Per-item errors of the compared classifier.
    bins : int or array-like, default=30
        Number of equal-width bins over ``range``, or the bin edges (30 as in
        Baan et al.'s code). Errors
        outside the edges are not counted (:func:`numpy.histogram`).
    range : tuple of (float, float), default=(0.0, 1.0)
        Range of the equal-width bins; ``(0, 1)`` suits DistCE. Ignored when
        ``bins`` gives the edges.
    divergence : {"kl", "tvd"}, default="kl"
        Which divergence.

    Returns
    -------
    divergence : float
        ``inf`` for ``"kl"`` when ``b`` has an empty bin where ``a`` has
        items (absolute continuity fails).

    Examples
    --------
    >>> from sklearn_hcal.plotting import error_histogram_divergence
    >>> a = [0.05, 0.05, 0.15, 0.15]          # histogram [2, 2, 0, 0]
    >>> b = [0.05, 0.15, 0.15, 0.25]          # histogram [1, 2, 1, 0]
    >>> edges = [0.0, 0.1, 0.2, 0.3, 0.4]
    >>> float(error_histogram_divergence(a, b, bins=edges, divergence="tvd"))
    0.25
    >>> round(error_histogram_divergence(a, b, bins=edges), 4)  # ½log2 + ½log(2/2)
    0.3466
    """
    a = _check_errors(errors_a, "errors_a")
    b = _check_errors(errors_b, "errors_b")
    edges = _edges(bins, range)
    hist_a = np.histogram(a, bins=edges)[0].astype(np.float64)
    hist_b = np.histogram(b, bins=edges)[0].astype(np.float64)
    for hist, label in ((hist_a, "errors_a"), (hist_b, "errors_b")):
        if hist.sum() == 0:
            raise ValueError(f"No value of {label} falls inside the bins {edges}.")
    p = hist_a / hist_a.sum()
    q = hist_b / hist_b.sum()
    if divergence == "tvd":
        return float(0.5 * np.abs(p - q).sum())
    support = p > 0
    if np.any(q[support] == 0):
        return float("inf")
    return float(np.sum(p[support] * np.log(p[support] / q[support])))


def _instance_errors(human, source, kind: str) -> np.ndarray:
    frame = instance_errors_table(human, source)
    if kind == "dist_ce":
        return frame["dist_ce"].to_numpy(dtype=np.float64)
    values = frame["ent_ce"].to_numpy(dtype=np.float64)
    return np.abs(values) if kind == "abs_ent_ce" else values


def _default_range(kind: str, n_classes: int) -> tuple:
    if kind == "dist_ce":
        return (0.0, 1.0)
    top = float(np.log(n_classes))
    return (-top, top) if kind == "ent_ce" else (0.0, top)


class InstanceErrorDisplay:
    """Histograms of instance-level calibration errors of several classifiers.

    The view Baan et al. (2022, §4-5, Figs. 1a-b and 2, App. B) argue for:
    instead of one mean, the *distribution over items* of the error between
    the model's and the humans' distributions -- DistCE (total variation),
    signed EntCE ``H(q) − H(p̂)`` (positive: the model is less certain than the
    humans) or its absolute value. Each histogram shows the fraction of items
    per bin; the legend gives the mean, which is the aggregate metric
    (:func:`~sklearn_hcal.metrics.distribution_calibration_error`,
    :func:`~sklearn_hcal.metrics.entropy_calibration_error`).
    :meth:`divergence_table` quantifies how far apart two error distributions
    are (their Table 2).

    Parameters
    ----------
    errors : dict of str to ndarray of shape (n_samples,)
        Per-item errors of each classifier.
    bin_edges : ndarray of shape (n_bins + 1,)
        Histogram bin edges.
    kind : {"dist_ce", "ent_ce", "abs_ent_ce"}, default="dist_ce"
        Which error the values are (axis label).

    Attributes
    ----------
    histograms_ : dict of str to matplotlib Artist
        The step histogram of each classifier.
    mean_lines_ : dict of str to matplotlib Artist
        The vertical line at each classifier's mean (when drawn).
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    error_histogram_divergence : KL and TVD between two error histograms.
    sklearn_hcal.metrics.instance_calibration_errors : The per-item errors.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.plotting import InstanceErrorDisplay
    >>> Y = np.array([[8, 2, 0], [5, 4, 1], [1, 2, 7], [3, 3, 4]])
    >>> oracle = Y / Y.sum(axis=1, keepdims=True)
    >>> uniform = np.full((4, 3), 1 / 3)
    >>> disp = InstanceErrorDisplay.from_predictions(
    ...     Y, {"oracle": oracle, "uniform": uniform}, bins=10)
    >>> disp.errors["oracle"]
    array([0., 0., 0., 0.])
    >>> round(float(disp.errors["uniform"].mean()), 4)
    0.2833
    >>> disp.fractions()["uniform"][[0, 2, 3, 4]]
    array([0.25, 0.25, 0.25, 0.25])
    >>> import matplotlib.pyplot as plt
    >>> plt.close(disp.figure_)
    """

    def __init__(self, errors: dict, bin_edges, *, kind: str = "dist_ce"):
        self.errors = errors
        self.bin_edges = bin_edges
        self.kind = kind

    def fractions(self) -> dict:
        """Fraction of each classifier's items in each bin.

        Returns
        -------
        fractions : dict of str to ndarray of shape (n_bins,)
            ``numpy.histogram(errors, bin_edges)[0] / n_samples``.
        """
        return {
            name: np.histogram(values, bins=self.bin_edges)[0] / len(values)
            for name, values in self.errors.items()
        }

    def divergence_table(self, reference: str | None = None) -> pd.DataFrame:
        """KL and TVD from a reference classifier's error histogram to the others.

        Baan et al. (2022, Table 2) with this display's bins: ``KL(ref ‖ ·)``
        and ``TVD(ref, ·)`` between the normalised histograms, computed by
        :func:`error_histogram_divergence`.

        Parameters
        ----------
        reference : str, default=None
            Name of the reference classifier; the first one by default.

        Returns
        -------
        table : DataFrame of shape (n_classifiers - 1, 2)
            Index: the other classifiers; columns ``kl`` and ``tvd``.
        """
        names = list(self.errors)
        reference = names[0] if reference is None else reference
        if reference not in self.errors:
            raise ValueError(
                f"reference must be one of the classifiers {names}, got {reference!r}."
            )
        rows = {}
        for name in names:
            if name == reference:
                continue
            rows[name] = {
                div: error_histogram_divergence(
                    self.errors[reference],
                    self.errors[name],
                    bins=self.bin_edges,
                    divergence=div,
                )
                for div in ("kl", "tvd")
            }
        table = pd.DataFrame.from_dict(rows, orient="index", columns=["kl", "tvd"])
        table.index.name = f"vs {reference}"
        return table

    def plot(self, ax=None, *, show_mean: bool = True, fill: bool = True, **kwargs):
        """Draw one histogram per classifier.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        show_mean : bool, default=True
            Draw a dashed vertical line at each classifier's mean error.
        fill : bool, default=True
            Fill the histograms (translucently) under their outlines.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.stairs` for every
            classifier.

        Returns
        -------
        display : InstanceErrorDisplay
        """
        created = ax is None
        self.ax_, self.figure_ = _get_axes(ax)
        ax = self.ax_
        self.histograms_, self.mean_lines_ = {}, {}
        fractions = self.fractions()
        for name, frac in fractions.items():
            mean = float(np.mean(self.errors[name]))
            style = {"linewidth": 1.8, "label": f"{name} (mean = {mean:.3f})", **kwargs}
            outline = ax.stairs(frac, self.bin_edges, **style)
            color = outline.get_edgecolor()
            if fill:
                ax.stairs(frac, self.bin_edges, fill=True, color=color, alpha=0.15)
            self.histograms_[name] = outline
            if show_mean:
                self.mean_lines_[name] = ax.axvline(
                    mean, color=color, linestyle="--", linewidth=1.2
                )
        if self.kind == "ent_ce":
            ax.axvline(0.0, color="0.3", linewidth=0.8)
        ax.set(xlabel=_XLABELS.get(self.kind, self.kind), ylabel="Fraction of items")
        ax.set_ylim(bottom=0.0)
        if created:
            ax.set_xlim(*self._occupied_range(fractions))
            # Headroom above the tallest bar keeps the legend off the data.
            tallest = max((float(f.max()) for f in fractions.values()), default=0)
            ax.set_ylim(0.0, 1.1 * (1.0 + 0.1 * len(fractions)) * max(tallest, 0.01))
        ax.legend(loc="best")
        return self

    def _occupied_range(self, fractions: dict) -> tuple:
        # Errors usually fill a fraction of their theoretical range; show the
        # occupied bins plus one empty bin each side (0 stays in view for
        # non-negative errors, as in Baan et al.'s figures).
        edges = np.asarray(self.bin_edges, dtype=np.float64)
        filled = np.flatnonzero(np.sum(list(fractions.values()), axis=0) > 0)
        if filled.size == 0:
            return float(edges[0]), float(edges[-1])
        lo = 0 if self.kind != "ent_ce" else max(int(filled[0]) - 1, 0)
        hi = min(int(filled[-1]) + 2, edges.shape[0] - 1)
        return float(edges[lo]), float(edges[hi])

    @classmethod
    @validate_params(
        {
            "y_true": ["array-like"],
            "y_prob": ["array-like", dict],
            "counts": ["array-like", None],
            "labels": ["array-like", None],
            "kind": [StrOptions(_KINDS)],
            "bins": [Interval(numbers.Integral, 1, None, closed="left"), "array-like"],
            "name": [str, None],
            "show_mean": ["boolean"],
            "fill": ["boolean"],
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
        kind: str = "dist_ce",
        bins: int | ArrayLike = 30,
        name: str | None = None,
        ax=None,
        show_mean: bool = True,
        fill: bool = True,
        **kwargs,
    ):
        """Error histograms from human labels and predicted probabilities.

        Parameters
        ----------
        %(y_true)s
        y_prob : array-like of shape (n_samples, n_classes), or dict
            Predicted probabilities, or ``{name: probabilities}`` for several
            classifiers.
        %(counts)s
        labels : array-like of shape (n_classes,), default=None
            The class of each column of the predictions (default: a
            DataFrame's column names, else positional), matched by name with
            1-D labels and a DataFrame ``y_true``, as for the metric
            functions; see "Classes" in :mod:`sklearn_hcal.metrics`.
        kind : {"dist_ce", "ent_ce", "abs_ent_ce"}, default="dist_ce"
            DistCE (TVD, Baan eq. 7), signed EntCE (eq. 5) or ``|EntCE|``.
        bins : int or array-like, default=30
            Number of equal-width bins (30 as in Baan et al.'s code for their
            Fig. 2 and Table 2) over the error's whole range --
            ``[0, 1]`` for DistCE, ``[−log K, log K]`` for EntCE,
            ``[0, log K]`` for ``|EntCE|`` -- or the bin edges.
        name : str, default=None
            Legend name of a single classifier (keys name a dict's).
        ax : matplotlib Axes, default=None
            Axes to draw on.
        show_mean, fill, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : InstanceErrorDisplay
        """
        _check_matplotlib()
        inputs = _validated(y_true, y_prob, counts, name=name, labels=labels)
        return instance_error_histograms(
            inputs,
            kind=kind,
            bins=bins,
            ax=ax,
            show_mean=show_mean,
            fill=fill,
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
        kind: str = "dist_ce",
        bins: int | ArrayLike = 30,
        name: str | None = None,
        ax=None,
        show_mean: bool = True,
        fill: bool = True,
        **kwargs,
    ):
        """Error histograms of fitted classifiers' ``predict_proba(X)``.

        Parameters
        ----------
        estimator : fitted classifier or dict of str to fitted classifier
            One classifier, or ``{name: classifier}`` for several.
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Human label histograms (or labels, with ``counts``).
        counts : array-like of shape (n_samples, n_classes), default=None
            Replaces ``y`` as the human histograms when given.
        kind, bins, name, ax, show_mean, fill, **kwargs
            See :meth:`from_predictions`.

        Returns
        -------
        display : InstanceErrorDisplay
        """
        _check_matplotlib()
        preds = _estimator_predictions(estimator, X, name)
        return cls.from_predictions(
            y,
            preds,
            counts=counts,
            kind=kind,
            bins=bins,
            ax=ax,
            show_mean=show_mean,
            fill=fill,
            **kwargs,
        )


def instance_error_histograms(
    inputs, *, kind: str = "dist_ce", bins=30, ax=None, display=None, **kw
):
    """:class:`InstanceErrorDisplay` of validated inputs.

    ``inputs`` as ``validate_predictions`` makes them (a report holds
    them): nothing is checked again (developer guide §checked-once).
    ``display`` is the class built (default: the Display; its
    ``from_predictions`` passes ``cls``); ``**kw`` are the arguments of
    :meth:`InstanceErrorDisplay.plot`.
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)}, got {kind!r}.")
    display = InstanceErrorDisplay if display is None else display
    human = inputs.human
    lo, hi = _default_range(kind, human.n_classes)
    # The errors lie in this range mathematically, but a uniform model's
    # entropy comes out up to a few ulps above log K (K = 5, 12, 13, ...):
    # np.histogram would drop it from the last bin and a uniform model
    # would draw an empty histogram.
    errors = {
        n: np.clip(_instance_errors(human, source, kind), lo, hi)
        for n, source in inputs.sources.items()
    }
    edges = _edges(bins, (lo, hi))
    disp = display(errors, edges, kind=kind)
    return disp.plot(ax=ax, **kw)
