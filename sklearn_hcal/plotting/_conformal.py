"""Coverage and set size of conformal prediction sets against the level."""

from __future__ import annotations

import numpy as np

from ..conformal._shared import alpha_of_level, pvalues_above_alpha
from ..metrics import aggregated_coverage_score, majority_coverage_score, mean_set_size
from ..metrics._shared import check_sets
from ..utils._docstrings import fill_doc
from ..utils._pipeline import get_method
from ._base import _check_matplotlib, _pyplot

_TARGET_LABEL = "Target (confidence level)"


def _levels(levels) -> np.ndarray:
    if levels is None:
        return np.round(np.linspace(0.5, 0.98, 25), 3)
    levels = np.asarray(levels, dtype=np.float64).ravel()
    if levels.size == 0 or np.any((levels <= 0) | (levels >= 1)):
        raise ValueError(
            f"levels must be confidence levels in (0, 1), got {levels.tolist()}."
        )
    return np.sort(levels)


class ConformalCoverageDisplay:
    """Coverage of the human distribution and set size against the level.

    For each confidence level ``1 − α`` the sets ``{k : p_k > α}`` of a
    conformal classifier's p-values are scored against the human labels:
    aggregated coverage (the human mass inside the set, Stutz et al. 2023)
    and majority-label coverage on the left, against the target diagonal;
    mean set size on the right. Calibrated on majority labels, a classifier
    sits on the diagonal by majority coverage but below it by aggregated
    coverage; Monte Carlo calibration brings the latter onto it.

    Parameters
    ----------
    levels : ndarray of shape (n_levels,)
    aggregated_coverage, majority_coverage, mean_set_size : ndarray of shape (n_levels,)
    name : str, default=None

    Attributes
    ----------
    lines_ : dict of str to matplotlib Line2D
        ``"aggregated"``, ``"majority"``, ``"size"``.
    ax_ : ndarray of two matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.conformal import HumanConformalClassifier
    >>> from sklearn_hcal.plotting import ConformalCoverageDisplay
    >>> rng = np.random.default_rng(0)
    >>> Q = rng.dirichlet([1, 1, 1], size=400)
    >>> Y = rng.multinomial(5, Q)
    >>> cp = HumanConformalClassifier(calibration="exact").fit(Q[:200], Y[:200])
    >>> disp = ConformalCoverageDisplay.from_estimator(
    ...     cp, Q[200:], Y[200:], levels=[0.8, 0.9])
    >>> disp.levels.tolist()
    [0.8, 0.9]
    >>> import matplotlib.pyplot as plt
    >>> plt.close(disp.figure_)
    """

    def __init__(
        self,
        levels,
        aggregated_coverage,
        majority_coverage,
        mean_set_size,
        *,
        name=None,
    ):
        self.levels = levels
        self.aggregated_coverage = aggregated_coverage
        self.majority_coverage = majority_coverage
        self.mean_set_size = mean_set_size
        self.name = name

    def plot(self, ax=None, *, name=None, **kwargs):
        """Draw coverage (left) and mean set size (right) against the level.

        Parameters
        ----------
        ax : array of two matplotlib Axes, default=None
            The coverage and the size axes (e.g. another display's ``ax_``);
            a new figure with two axes when None.
        name : str, default=None
            Legend name (default: the display's ``name``).
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for every line.

        Returns
        -------
        display : ConformalCoverageDisplay
        """
        if ax is None:
            plt = _pyplot()
            _, ax = plt.subplots(1, 2, figsize=(9, 3.8), layout="constrained")
        else:
            _check_matplotlib()
            ax = np.asarray(ax, dtype=object).ravel()
            if ax.size != 2:
                raise ValueError(
                    "ax must hold two Axes (coverage, set size), e.g. another "
                    f"display's ax_; got {ax.size}."
                )
        self.ax_, self.figure_ = np.asarray(ax, dtype=object), ax[0].figure
        cov_ax, size_ax = self.ax_
        name = self.name if name is None else name
        prefix = "" if name is None else f"{name}: "
        levels = np.asarray(self.levels)
        if _TARGET_LABEL not in cov_ax.get_legend_handles_labels()[1]:
            lo = float(levels.min())
            cov_ax.plot([lo, 1], [lo, 1], "--", color="0.4", label=_TARGET_LABEL)
        agg = cov_ax.plot(
            levels,
            self.aggregated_coverage,
            marker="o",
            markersize=3,
            label=f"{prefix}human distribution",
            **kwargs,
        )[0]
        maj = cov_ax.plot(
            levels,
            self.majority_coverage,
            linestyle=":",
            color=agg.get_color(),
            label=f"{prefix}majority label",
            **kwargs,
        )[0]
        size = size_ax.plot(
            levels,
            self.mean_set_size,
            marker="o",
            markersize=3,
            color=agg.get_color(),
            label=name,
            **kwargs,
        )[0]
        cov_ax.set(xlabel="Confidence level 1 − α", ylabel="Coverage")
        size_ax.set(xlabel="Confidence level 1 − α", ylabel="Mean set size")
        cov_ax.legend(loc="upper left", fontsize="small")
        if name is not None:
            size_ax.legend(loc="upper left", fontsize="small")
        self.lines_ = {"aggregated": agg, "majority": maj, "size": size}
        return self

    @classmethod
    @fill_doc
    def from_predictions(
        cls,
        y_true,
        pvalues,
        *,
        levels=None,
        counts=None,
        labels=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Coverage and size from conformal p-values.

        Parameters
        ----------
        %(y_true)s
        pvalues : array-like of shape (n_samples, n_classes)
            Conformal p-values of every class (e.g.
            :meth:`~sklearn_hcal.conformal.HumanConformalClassifier.predict_pvalues`);
            the set at level ``1 − α`` is ``pvalues > α`` (``α`` exactly:
            a p-value equal to it is out).
        levels : array-like of float, default=None
            Confidence levels (default: 25 levels from 0.5 to 0.98).
        counts, labels
            As for the set metrics.
        name : str, default=None
        ax, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : ConformalCoverageDisplay
        """
        _check_matplotlib()
        levels = _levels(levels)
        pv = np.asarray(pvalues, dtype=np.float64)
        if pv.ndim != 2 or not np.all((pv >= 0) & (pv <= 1)):
            raise ValueError(
                "pvalues must be a 2-D (n_samples, n_classes) array of values in "
                "[0, 1]."
            )
        agg, maj, size = [], [], []
        for level in levels:
            # α exactly: 1 − 0.9 in floating point would keep p = α
            sets, _ = check_sets(pvalues_above_alpha(pv, alpha_of_level(level)))
            agg.append(
                aggregated_coverage_score(y_true, sets, counts=counts, labels=labels)
            )
            maj.append(
                majority_coverage_score(y_true, sets, counts=counts, labels=labels)
            )
            size.append(mean_set_size(None, sets))
        disp = cls(levels, np.array(agg), np.array(maj), np.array(size), name=name)
        return disp.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        levels=None,
        counts=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Coverage and size of a fitted conformal classifier on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted estimator with ``predict_pvalues``
            E.g. a :class:`~sklearn_hcal.conformal.HumanConformalClassifier`,
            also as the final step of a Pipeline.
        X : array-like
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Label histograms (matched to ``classes_`` by name) or labels.
        levels, counts, name, ax, **kwargs
            See :meth:`from_predictions`.

        Returns
        -------
        display : ConformalCoverageDisplay
        """
        _check_matplotlib()
        method = get_method(estimator, "predict_pvalues")
        if method is None:
            raise ValueError(
                f"{type(estimator).__name__} has no predict_pvalues (neither "
                "itself nor the final step of a Pipeline); pass a fitted "
                "HumanConformalClassifier."
            )
        return cls.from_predictions(
            y,
            method(X),
            levels=levels,
            counts=counts,
            labels=getattr(estimator, "classes_", None),
            name=type(estimator).__name__ if name is None else name,
            ax=ax,
            **kwargs,
        )
