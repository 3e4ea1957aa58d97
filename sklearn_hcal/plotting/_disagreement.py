"""Reliability diagram of disagreement probability estimates (Mimori et al.)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike

from ..metrics._shared import (
    bin_indices,
    check_disagreement_inputs,
    disagreement_calibration_terms,
)
from ..utils._compat import Interval, StrOptions, validate_params
from ..utils._docstrings import fill_doc
from ._base import (
    _CURVE_GID,
    _check_matplotlib,
    _disagreement_source,
    _get_axes,
    _legend_label,
    _outside_legend,
    _plot_curve,
    _reference_diagonal,
    _show_counts,
    _single_estimator,
)


def _disagreement_bins(mu, phi, n_bins: int):
    """Per-bin counts, mean predicted ``φ`` and mean observed ``μ̂``.

    The binning of :func:`~sklearn_hcal.metrics.disagreement_calibration_loss`
    (Mimori et al. 2021, eq. 42-45): equal-width bins ``[j/B, (j+1)/B)`` on
    ``φ``, the last closed; ``mean φ`` and the counts over all items, ``mean
    μ̂`` over the items with two annotations or more (``μ̂`` not NaN).
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = bin_indices(phi, n_bins)  # the metric's own bin assignment
    valid = ~np.isnan(mu)
    counts = np.bincount(idx, minlength=n_bins)
    counts_valid = np.bincount(idx[valid], minlength=n_bins)
    phi_sum = np.bincount(idx, weights=phi, minlength=n_bins)
    mu_sum = np.bincount(idx[valid], weights=mu[valid], minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        predicted = np.where(counts > 0, phi_sum / counts, np.nan)
        observed = np.where(counts_valid > 0, mu_sum / counts_valid, np.nan)
    return edges, predicted, observed, counts, counts_valid


class DisagreementReliabilityDisplay:
    """Reliability diagram of predicted disagreement probabilities.

    Mimori et al. (2021, Figs. 1 and 5b): items are binned by their predicted
    probability ``φ`` that two annotators disagree (a DPE) into equal-width
    bins, and the mean ``φ`` of each bin is plotted against the mean unbiased
    empirical disagreement ``μ̂ = 1 − Σ_k Y_k(Y_k − 1)/(n(n − 1))``
    (:func:`~sklearn_hcal.metrics.disagreement_probability`, eq. 16), with the
    items per bin on a twin axis. The binning is that of
    :func:`~sklearn_hcal.metrics.disagreement_calibration_loss`, so
    ``Σ_b (counts_b / N)(observed_b − predicted_b)²`` over the bins with an
    observation is its plug-in value; the legend shows the debiased
    calibration error ``CE_φD`` (their Tables 1-2).

    Parameters
    ----------
    bin_edges : ndarray of shape (n_bins + 1,)
        Bin edges on ``φ``; bins ``[a, b)``, the last closed.
    bin_predicted : ndarray of shape (n_bins,)
        Mean ``φ`` per bin over all its items (NaN when empty).
    bin_observed : ndarray of shape (n_bins,)
        Mean ``μ̂`` per bin over its items with at least two annotations
        (NaN when there is none).
    bin_counts : ndarray of shape (n_bins,)
        Items per bin.
    bin_counts_valid : ndarray of shape (n_bins,), default=None
        Items per bin with at least two annotations.
    calibration_loss : float, default=None
        Debiased ``CL_φD`` (:func:`disagreement_calibration_loss`).
    calibration_error : float, default=None
        Debiased ``CE_φD`` (:func:`disagreement_calibration_error`), shown in
        the legend.
    name : str, default=None
        Legend name.
    disagreement_source : str, default=None
        Where ``φ`` came from: ``"predict_disagreement"``,
        ``"predict_proba"`` (``1 − Σ q²``) or ``"y_disagreement"``.
    n_classes : int, default=None
        Number of classes ``K``: the axes span ``[0, 1 − 1/K]``, the largest
        disagreement probability of ``K`` classes (``[0, 1]`` when None).

    Attributes
    ----------
    line_ : matplotlib Line2D
    counts_ : matplotlib Artist or None
    ax_ : matplotlib Axes
    ax_counts_ : matplotlib Axes or None
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.plotting import DisagreementReliabilityDisplay
    >>> Y = np.array([[5, 5], [10, 0], [9, 1], [4, 6]])
    >>> disp = DisagreementReliabilityDisplay.from_predictions(
    ...     Y, [0.5, 0.0, 0.2, 0.5], n_bins=5)
    >>> disp.bin_counts
    array([1, 1, 2, 0, 0])
    >>> disp.bin_observed.round(3)        # μ̂ = 5/9, 0, 0.2, 48/90
    array([0.   , 0.2  , 0.544,   nan,   nan])
    >>> import matplotlib.pyplot as plt
    >>> plt.close(disp.figure_)
    """

    def __init__(
        self,
        bin_edges,
        bin_predicted,
        bin_observed,
        bin_counts,
        bin_counts_valid=None,
        *,
        calibration_loss: float | None = None,
        calibration_error: float | None = None,
        name: str | None = None,
        disagreement_source: str | None = None,
        n_classes: int | None = None,
    ):
        self.bin_edges = bin_edges
        self.bin_predicted = bin_predicted
        self.bin_observed = bin_observed
        self.bin_counts = bin_counts
        self.bin_counts_valid = bin_counts_valid
        self.calibration_loss = calibration_loss
        self.calibration_error = calibration_error
        self.name = name
        self.disagreement_source = disagreement_source
        self.n_classes = n_classes

    def plot(
        self,
        ax=None,
        *,
        name: str | None = None,
        ref_line: bool = True,
        show_counts: bool = True,
        **kwargs,
    ):
        """Draw the diagram.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None. Pass ``disp.ax_`` of
            another display to compare methods (Mimori et al. draw the
            α-calibrated ones solid and the originals dotted:
            ``linestyle=":"``). Each curve gets its own colour and marker
            and is drawn a few points off the previous ones so that equal
            points stay visible (``line_.get_xydata()`` is exact); the axes
            span ``[0, 1 − 1/K]``.
        name : str, default=None
            Legend name; defaults to :attr:`name`.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration.
        show_counts : bool, default=True
            Draw the items per bin on a twin axis.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot`.

        Returns
        -------
        display : DisagreementReliabilityDisplay
        """
        self.ax_, self.figure_ = _get_axes(ax)
        ax = self.ax_
        ce = None
        if self.calibration_error is not None:
            ce = f"CE$_{{\\varphi D}}$ = {self.calibration_error:.3f}"
        label = _legend_label(self.name if name is None else name, ce)
        # φ = 1 − Σq² is at most 1 − 1/K (the uniform prediction)
        top = 1.0 if not self.n_classes else 1.0 - 1.0 / self.n_classes
        first = not any(line.get_gid() == _CURVE_GID for line in ax.get_lines())
        if ref_line:
            _reference_diagonal(ax, top)
        pred = np.asarray(self.bin_predicted, dtype=np.float64)
        obs = np.asarray(self.bin_observed, dtype=np.float64)
        shown = ~np.isnan(obs) & ~np.isnan(pred)
        self.line_ = _plot_curve(ax, pred[shown], obs[shown], label=label, **kwargs)
        _show_counts(
            self,
            ax,
            np.asarray(self.bin_edges),
            self.bin_counts,
            self.line_.get_color(),
            show=show_counts,
        )
        # The unbiased μ̂ of an item with few labels can exceed 1 − 1/K.
        high = max(top, float(np.max(obs[shown], initial=0.0)))
        if not first:  # keep what earlier curves on these axes needed
            high = max(high, ax.get_ylim()[1] / 1.03, ax.get_xlim()[1] / 1.03)
            top = max(top, ax.get_xlim()[1] / 1.03)
        pad = 0.03 * top
        ax.set(
            xlim=(-pad, top + pad),
            ylim=(-pad, 1.03 * high),
            xlabel="Predicted disagreement probability φ",
            ylabel="Observed disagreement μ̂ (unbiased)",
        )
        _outside_legend(ax)
        return self

    @classmethod
    @validate_params(
        {
            "y_true": ["array-like"],
            "y_disagreement": ["array-like"],
            "counts": ["array-like", None],
            "n_bins": [Interval(Integral, 1, None, closed="left")],
            "name": [str, None],
            "ref_line": ["boolean"],
            "show_counts": ["boolean"],
        },
        prefer_skip_nested_validation=True,
    )
    @fill_doc
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_disagreement: ArrayLike,
        *,
        counts: ArrayLike | None = None,
        n_bins: int = 15,
        name: str | None = None,
        ax=None,
        ref_line: bool = True,
        show_counts: bool = True,
        **kwargs,
    ):
        """Diagram from label histograms and predicted disagreements.

        Parameters
        ----------
        y_true : array-like of shape (n_samples, n_classes)
            Label histograms (integer counts); items with one annotation
            count in the bins but have no observed disagreement.
        y_disagreement : array-like of shape (n_samples,) or \
                (n_samples, n_classes)
            Predicted disagreement ``φ`` in [0, 1] (a 1-D array is always
            ``φ``), or class probabilities, turned into ``φ = 1 − Σ_k q_k²``
            (a 3-D ensemble ``(n_members, n_samples, n_classes)`` into the
            member mean), as
            :func:`~sklearn_hcal.metrics.disagreement_calibration_loss` does.
        %(counts)s
        n_bins : int, default=15
            Equal-width bins on ``φ`` (the calibration loss's default).
        name : str, default=None
            Legend name.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        ref_line, show_counts, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : DisagreementReliabilityDisplay
        """
        return cls._from_phi(
            y_true,
            y_disagreement,
            counts=counts,
            n_bins=n_bins,
            name=name,
            ax=ax,
            source="y_disagreement",
            ref_line=ref_line,
            show_counts=show_counts,
            **kwargs,
        )

    @classmethod
    def _from_phi(
        cls,
        y_true,
        y_disagreement,
        *,
        counts,
        n_bins,
        name,
        ax,
        source,
        ref_line,
        show_counts,
        **kwargs,
    ):
        _check_matplotlib()
        # The metrics' own validation: φ given or computed from probabilities
        # (1 − Σq², member means for ensembles) in one place, with the same
        # tolerance for values a rounding error outside [0, 1].
        mu, phi, valid = check_disagreement_inputs(y_true, y_disagreement, counts)
        human = y_true if counts is None else counts
        n_classes = np.shape(human)[1] if np.ndim(human) == 2 else None
        return disagreement_reliability(
            mu,
            phi,
            valid,
            n_classes=n_classes,
            n_bins=n_bins,
            name=name,
            ax=ax,
            source=source,
            ref_line=ref_line,
            show_counts=show_counts,
            display=cls,
            **kwargs,
        )

    @classmethod
    @validate_params(
        {
            "y": ["array-like"],
            "counts": ["array-like", None],
            "response_method": [
                StrOptions({"auto", "predict_disagreement", "predict_proba"})
            ],
            "n_bins": [Interval(Integral, 1, None, closed="left")],
            "name": [str, None],
            "ref_line": ["boolean"],
            "show_counts": ["boolean"],
        },
        prefer_skip_nested_validation=True,
    )
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        counts: ArrayLike | None = None,
        response_method: str = "auto",
        n_bins: int = 15,
        name: str | None = None,
        ax=None,
        ref_line: bool = True,
        show_counts: bool = True,
        **kwargs,
    ):
        """Diagram of a fitted estimator's predicted disagreement on ``X``.

        ``φ`` comes from ``predict_disagreement(X)`` -- of the estimator, or
        of the last step of a Pipeline (α-calibration, MC dropout, test-time
        augmentation: their second-order predictions). Without it, ``φ`` is
        the point prediction's ``1 − Σ_k q_k²`` with ``q =
        predict_proba(X)``, and a UserWarning says so (pass
        ``response_method="predict_proba"`` to ask for exactly that). An
        estimator that hides a component's ``predict_disagreement`` (e.g. a
        ``GridSearchCV``: use its ``best_estimator_``) is an error.

        Parameters
        ----------
        estimator : fitted estimator or Pipeline
            Has ``predict_disagreement`` or ``predict_proba``.
        X : array-like of shape (n_samples, n_features)
            Input of the estimator.
        y : array-like of shape (n_samples, n_classes)
            Human label histograms (or labels, with ``counts``).
        counts : array-like of shape (n_samples, n_classes), default=None
            Replaces ``y`` as the human histograms when given.
        response_method : {"auto", "predict_disagreement", "predict_proba"}, \
                default="auto"
            Where ``φ`` comes from; ``"auto"`` prefers
            ``predict_disagreement``.
        n_bins : int, default=15
            Equal-width bins on ``φ``.
        name : str, default=None
            Legend name; the estimator's class name by default.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        ref_line, show_counts, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : DisagreementReliabilityDisplay
        """
        _check_matplotlib()
        name, est = _single_estimator(estimator, name, "DisagreementReliabilityDisplay")
        values, source = _disagreement_source(est, X, response_method, name)
        return cls._from_phi(
            y,
            values,
            counts=counts,
            n_bins=n_bins,
            name=name,
            ax=ax,
            source=source,
            ref_line=ref_line,
            show_counts=show_counts,
            **kwargs,
        )


def disagreement_reliability(
    mu,
    phi,
    valid,
    *,
    n_classes=None,
    n_bins: int = 15,
    name=None,
    ax=None,
    source: str = "y_disagreement",
    display=None,
    **kw,
):
    """:class:`DisagreementReliabilityDisplay` of validated ``(μ̂, φ, valid)``.

    As ``check_disagreement_inputs`` returns them, also for labels a report
    holds (not scanned again, developer guide §checked-once). ``source`` is
    the Display's ``disagreement_source``; ``display`` the class built
    (default: the Display; its ``from_predictions`` passes ``cls``);
    ``**kw`` are the arguments of :meth:`DisagreementReliabilityDisplay.plot`.
    """
    display = DisagreementReliabilityDisplay if display is None else display
    # the numbers of the metric functions, from the same kernel
    cl, ce = disagreement_calibration_terms(mu, phi, valid, n_bins)
    edges, predicted, observed, bin_counts, valid_counts = _disagreement_bins(
        mu, phi, n_bins
    )
    disp = display(
        edges,
        predicted,
        observed,
        bin_counts,
        valid_counts,
        calibration_loss=cl,
        calibration_error=ce,
        name=name,
        disagreement_source=source,
        n_classes=n_classes,
    )
    return disp.plot(ax=ax, **kw)


__all__ = ["DisagreementReliabilityDisplay", "disagreement_reliability"]
