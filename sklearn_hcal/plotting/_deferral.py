"""Risk–coverage curves of deferral to people."""

from __future__ import annotations

import numpy as np

from ..metrics import aurc_loss, deferral_score, risk_coverage_curve
from ..utils._docstrings import fill_doc
from ..utils._pipeline import disagreement_method, get_method
from ._base import _check_matplotlib, _get_axes

_RISK_LABELS = {
    "disagreement": "P(a random annotator disagrees with the model)",
    "kl": "KL(human ‖ model)",
}


class RiskCoverageDisplay:
    """Selective risk against the fraction of items the model keeps.

    The model keeps the items with the lowest deferral scores and defers
    the rest to people; the risk of the kept items is measured against
    their human label distributions (see
    :func:`~sklearn_hcal.metrics.risk_coverage_curve`). A better deferral
    score gives a lower curve and a smaller area (AURC). Draw several
    deferral scores on one axes with ``ax=disp.ax_``.

    Parameters
    ----------
    coverage, selective_risk : ndarray of shape (n_thresholds,)
    aurc : float
        Area under the curve (:func:`~sklearn_hcal.metrics.aurc_loss`).
    risk : {"disagreement", "kl"}, default="disagreement"
    name : str, default=None

    Attributes
    ----------
    line_ : matplotlib Line2D
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.plotting import RiskCoverageDisplay
    >>> Y = np.array([[4, 0], [2, 2], [0, 4]])
    >>> P = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]])
    >>> disp = RiskCoverageDisplay.from_predictions(Y, P, name="confidence")
    >>> round(disp.aurc, 4)
    0.0556
    >>> import matplotlib.pyplot as plt
    >>> plt.close(disp.figure_)
    """

    def __init__(
        self, coverage, selective_risk, aurc, *, risk="disagreement", name=None
    ):
        self.coverage = coverage
        self.selective_risk = selective_risk
        self.aurc = aurc
        self.risk = risk
        self.name = name

    def plot(self, ax=None, *, name=None, **kwargs):
        """Draw the curve, labelled with its AURC.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
        name : str, default=None
            Legend name (default: the display's ``name``).
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.step`.

        Returns
        -------
        display : RiskCoverageDisplay
        """
        self.ax_, self.figure_ = _get_axes(ax)
        name = self.name if name is None else name
        label = f"AURC = {self.aurc:.4f}"
        label = label if name is None else f"{name} ({label})"
        # start at the first kept item: a curve from coverage 0 would invent
        # a risk for an empty selection
        style = {"where": "post", "label": label, **kwargs}
        self.line_ = self.ax_.step(self.coverage, self.selective_risk, **style)[0]
        self.ax_.set(
            xlabel="Coverage (fraction of items the model keeps)",
            ylabel=f"Selective risk: {_RISK_LABELS.get(self.risk, self.risk)}",
            xlim=(0, 1.02),
        )
        self.ax_.legend(loc="upper left", fontsize="small")
        return self

    @classmethod
    @fill_doc
    def from_predictions(
        cls,
        y_true,
        y_prob,
        *,
        y_score=None,
        risk="disagreement",
        counts=None,
        labels=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Risk–coverage curve from human labels, probabilities and scores.

        Parameters
        ----------
        %(y_true)s
        y_prob : array-like of shape (n_samples, n_classes)
            Predicted probabilities.
        y_score : array-like of shape (n_samples,), default=None
            Deferral scores (higher: deferred first), e.g.
            :func:`~sklearn_hcal.metrics.deferral_score` or an
            ``AlphaCalibrator``'s ``predict_disagreement``; ``None``:
            ``1 − max_k q_k``.
        risk : {"disagreement", "kl"}, default="disagreement"
        counts, labels
            As for the metrics.
        name : str, default=None
        ax, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : RiskCoverageDisplay
        """
        _check_matplotlib()  # before any metric, as scikit-learn's displays
        kw = {"y_score": y_score, "risk": risk, "counts": counts, "labels": labels}
        coverage, sel, _ = risk_coverage_curve(y_true, y_prob, **kw)
        aurc = aurc_loss(y_true, y_prob, **kw)
        disp = cls(coverage, sel, aurc, risk=risk, name=name)
        return disp.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        deferral="confidence",
        risk="disagreement",
        counts=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Risk–coverage curve of a fitted classifier on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted classifier
        X : array-like
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Label histograms (matched to ``classes_`` by name) or labels.
        deferral : {"confidence", "entropy", "disagreement"}, default="confidence"
            The deferral score: ``1 − max_k q_k``, the entropy of ``q``, or the
            estimator's ``predict_disagreement`` (e.g. α-calibrated ``φ``).
        risk, counts, name, ax, **kwargs
            See :meth:`from_predictions`.

        Returns
        -------
        display : RiskCoverageDisplay
        """
        _check_matplotlib()
        label = type(estimator).__name__
        proba = get_method(estimator, "predict_proba")
        if proba is None:
            raise ValueError(f"{label} has no predict_proba.")
        P = proba(X)
        if deferral == "disagreement":
            method = disagreement_method(estimator, label=label, user=cls.__name__)
            if method is None:
                raise ValueError(
                    f"{label} has no predict_disagreement; use deferral="
                    "'confidence' or 'entropy'."
                )
            y_score = np.asarray(method(X), dtype=np.float64)
        elif deferral in ("confidence", "entropy"):
            y_score = deferral_score(P, method=deferral)
        else:
            raise ValueError(
                "deferral must be 'confidence', 'entropy' or 'disagreement', got "
                f"{deferral!r}."
            )
        return cls.from_predictions(
            y,
            P,
            y_score=y_score,
            risk=risk,
            counts=counts,
            labels=getattr(estimator, "classes_", None),
            name=f"{label}, {deferral}" if name is None else name,
            ax=ax,
            **kwargs,
        )
