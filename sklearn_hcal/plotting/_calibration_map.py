"""Calibration-dispersion map (Mimori et al. 2021, Fig. 5a)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike

from ..metrics._shared import decomposition_table
from ..utils._compat import Interval, validate_params
from ..utils._docstrings import fill_doc
from ..utils._optional import import_optional
from ..utils._warnings import warn_user
from ._base import (
    _MARKERS,
    _check_matplotlib,
    _estimator_predictions,
    _get_axes,
    _has_label,
    _validated,
)
from ._labels import place_labels

_ISO_LABEL = "EL = CL + DL (constant)"
_POINT_GID = "hcal-method"


class CalibrationDispersionDisplay:
    """Calibration-dispersion map: one point per method at ``(CL, DL)``.

    Mimori et al. (2021, App. F.3, Figs. 5a and 6a) split the epistemic loss
    of class probability estimates, ``EL = E‖Q − q‖²``, into a calibration
    loss ``CL`` and a dispersion loss ``DL`` (``EL = CL + DL``, App. B.4) and
    place each method on the plane ``(CL, DL)``: calibration methods move a
    point left, better features move it down, and points on a line of slope
    −1 have the same epistemic loss (the grey iso-lines). The coordinates are
    those of :func:`~sklearn_hcal.metrics.loss_decomposition`, i.e.
    :func:`~sklearn_hcal.metrics.calibration_loss` and
    :func:`~sklearn_hcal.metrics.dispersion_loss` with ``n_bins`` class-wise
    bins, debiased by default (then slightly negative values are possible).

    Parameters
    ----------
    calibration_loss : ndarray of shape (n_methods,)
        ``CL`` of each method (x coordinates).
    dispersion_loss : ndarray of shape (n_methods,)
        ``DL`` of each method (y coordinates).
    names : list of str
        Method names, in the same order.
    debiased : bool, default=True
        Whether the coordinates are the debiased estimators (axis labels).
    n_bins : int, default=15
        Class-wise bins used (recorded for reference).

    Attributes
    ----------
    points_ : dict of str to matplotlib PathCollection
        The marker of each method.
    iso_lines_ : list of matplotlib Line2D
        Lines of constant ``EL``.
    labels_ : list of matplotlib Annotation
        The method names written beside the markers (``annotate=True``).
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.plotting import CalibrationDispersionDisplay
    >>> Y = np.array([[8, 2], [5, 5], [1, 9], [7, 3]])
    >>> oracle = Y / Y.sum(axis=1, keepdims=True)
    >>> disp = CalibrationDispersionDisplay.from_predictions(
    ...     Y, {"oracle": oracle, "uniform": np.full((4, 2), 0.5)},
    ...     debiased=False)
    >>> # oracle: 0; uniform: one bin per class, 2 * (0.525 - 0.5)**2
    >>> disp.calibration_loss.round(6)
    array([0.     , 0.00125])
    >>> import matplotlib.pyplot as plt
    >>> plt.close(disp.figure_)
    """

    def __init__(
        self,
        calibration_loss,
        dispersion_loss,
        names,
        *,
        debiased: bool = True,
        n_bins: int = 15,
    ):
        self.calibration_loss = calibration_loss
        self.dispersion_loss = dispersion_loss
        self.names = names
        self.debiased = debiased
        self.n_bins = n_bins

    def plot(
        self, ax=None, *, iso_lines: bool = True, annotate: bool = False, **kwargs
    ):
        """Draw the map.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None. Pass ``disp.ax_`` of
            another map to add its methods.
        iso_lines : bool, default=True
            Draw grey lines of constant ``EL = CL + DL`` (once per axes).
        annotate : bool, default=False
            Also write each method's name, in its colour, beside its marker;
            labels are placed so that none overprints another label or a
            marker (labels of earlier displays on the same axes are placed
            again with the new ones), and the legend moves beside the axes.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.scatter` for every method.

        Returns
        -------
        display : CalibrationDispersionDisplay
        """
        self.ax_, self.figure_ = _get_axes(ax)
        ax = self.ax_
        cl = np.asarray(self.calibration_loss, dtype=np.float64)
        dl = np.asarray(self.dispersion_loss, dtype=np.float64)
        if not (cl.shape == dl.shape == (len(self.names),)):
            raise ValueError(
                "calibration_loss, dispersion_loss and names must have one entry "
                f"per method; got shapes {cl.shape}, {dl.shape} and "
                f"{len(self.names)} names."
            )
        self.points_ = {}
        first = sum(c.get_gid() == _POINT_GID for c in ax.collections)
        for i, (name, x, y) in enumerate(zip(self.names, cl, dl), start=first):
            # markers cycle with the colours: distinct beyond ten methods
            style = {
                "s": 60,
                "zorder": 3,
                "label": name,
                "marker": _MARKERS[i % len(_MARKERS)],
                "edgecolors": "white",
                "linewidths": 0.7,
                **kwargs,
            }
            self.points_[name] = ax.scatter([x], [y], **style)
            self.points_[name].set_gid(_POINT_GID)
        # Keep the origin in view: it is the perfect predictor, and debiased
        # estimates can sit a little below it.
        ax.update_datalim([(0.0, 0.0)])
        ax.autoscale_view()
        ax.margins(0.15)
        self.iso_lines_ = []
        if iso_lines and not _has_label(ax, _ISO_LABEL):
            self.iso_lines_ = self._draw_iso_lines(ax, cl + dl)
        kind = "debiased" if self.debiased else "plug-in"
        ax.set(
            xlabel=f"Calibration loss CL ({kind})",
            ylabel=f"Dispersion loss DL ({kind})",
        )
        ax.axhline(0.0, color="0.6", linewidth=0.6, zorder=0)
        ax.axvline(0.0, color="0.6", linewidth=0.6, zorder=0)
        self.labels_ = []
        if annotate:
            # The legend goes beside the axes so that it covers no label;
            # labels are placed last, once the layout is known.
            ax.legend(
                loc="upper left",
                bbox_to_anchor=(1.02, 1.0),
                fontsize="small",
                frameon=False,
                borderaxespad=0.0,
            )
            self.labels_ = place_labels(
                ax,
                [
                    (name, (x, y), point.get_facecolor()[0])
                    for (name, point), x, y in zip(self.points_.items(), cl, dl)
                ],
            )
        else:
            ax.legend(loc="best", fontsize="small")
        return self

    @staticmethod
    def _draw_iso_lines(ax, el):
        ticker = import_optional("matplotlib.ticker")
        top = float(np.nanmax(el)) if np.isfinite(el).any() else 1.0
        top = top if top > 0 else 1.0
        levels = ticker.MaxNLocator(nbins=4).tick_values(0.0, top * 1.2)
        lines = []
        for i, level in enumerate(levels[levels > 0]):
            lines.append(
                ax.axline(
                    (float(level), 0.0),
                    slope=-1.0,
                    color="0.75",
                    linestyle=":",
                    linewidth=1.0,
                    zorder=1,
                    label=_ISO_LABEL if i == 0 else None,
                )
            )
        return lines

    @classmethod
    @validate_params(
        {
            "y_true": ["array-like"],
            "y_prob": ["array-like", dict],
            "counts": ["array-like", None],
            "labels": ["array-like", None],
            "n_bins": [Interval(Integral, 1, None, closed="left")],
            "debiased": ["boolean"],
            "name": [str, None],
            "iso_lines": ["boolean"],
            "annotate": ["boolean"],
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
        n_bins: int = 15,
        debiased: bool = True,
        name: str | None = None,
        ax=None,
        iso_lines: bool = True,
        annotate: bool = False,
        **kwargs,
    ):
        """Map from label histograms and the probabilities of several methods.

        Parameters
        ----------
        y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
            Label histograms (integer counts) or 1-D labels.
        y_prob : array-like of shape (n_samples, n_classes), or dict
            Predicted probabilities, or ``{name: probabilities}``.
        %(counts)s
        labels : array-like of shape (n_classes,), default=None
            The class of each column of the predictions (default: a
            DataFrame's column names, else positional), matched by name with
            1-D labels and a DataFrame ``y_true``, as for the metric
            functions; see "Classes" in :mod:`sklearn_hcal.metrics`.
        n_bins : int, default=15
            Class-wise equal-width bins of ``CL`` and ``DL``.
        debiased : bool, default=True
            Use the debiased estimators (eq. 14, 36) rather than the plug-in.
        name : str, default=None
            Name of a single method (keys name a dict's).
        ax : matplotlib Axes, default=None
        iso_lines, annotate, **kwargs
            See :meth:`plot`.

        Returns
        -------
        display : CalibrationDispersionDisplay
        """
        _check_matplotlib()
        inputs = _validated(
            y_true, y_prob, counts, name=name, probabilities=False, labels=labels
        )
        return calibration_dispersion(
            inputs,
            n_bins=n_bins,
            debiased=debiased,
            ax=ax,
            iso_lines=iso_lines,
            annotate=annotate,
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
        n_bins: int = 15,
        debiased: bool = True,
        name: str | None = None,
        ax=None,
        iso_lines: bool = True,
        annotate: bool = False,
        **kwargs,
    ):
        """Map of fitted classifiers' ``predict_proba(X)``.

        Parameters
        ----------
        estimator : fitted classifier or dict of str to fitted classifier
            One method, or ``{name: classifier}`` for several.
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_classes)
            Human label histograms (or labels, with ``counts``).
        counts, n_bins, debiased, name, ax, iso_lines, annotate, **kwargs
            See :meth:`from_predictions`.

        Returns
        -------
        display : CalibrationDispersionDisplay
        """
        _check_matplotlib()
        preds = _estimator_predictions(estimator, X, name)
        return cls.from_predictions(
            y,
            preds,
            counts=counts,
            n_bins=n_bins,
            debiased=debiased,
            ax=ax,
            iso_lines=iso_lines,
            annotate=annotate,
            **kwargs,
        )


def calibration_dispersion(
    inputs, *, n_bins: int = 15, debiased: bool = True, ax=None, display=None, **kw
):
    """:class:`CalibrationDispersionDisplay` of validated inputs.

    ``inputs`` as ``validate_predictions`` makes them (integer counts; a
    report holds them): nothing is checked again (developer guide
    §checked-once). ``display`` is the class built (default: the Display;
    its ``from_predictions`` passes ``cls``); ``**kw`` are the arguments of
    :meth:`CalibrationDispersionDisplay.plot`.
    """
    display = CalibrationDispersionDisplay if display is None else display
    column = "debiased" if debiased else "plugin"
    cl, dl = [], []
    for source in inputs.sources.values():
        terms = decomposition_table(source.pair, n_bins)[column]
        cl.append(terms["CL"])
        dl.append(terms["DL"])
    if debiased and np.any(inputs.human.n < 2):
        warn_user(
            "Some items have a single annotation; the debiased dispersion "
            "loss cannot correct them and is biased upwards."
        )
    disp = display(
        np.array(cl),
        np.array(dl),
        list(inputs.sources),
        debiased=debiased,
        n_bins=n_bins,
    )
    return disp.plot(ax=ax, **kw)
