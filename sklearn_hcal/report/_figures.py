"""The diagnostic figures of a report, drawn with :mod:`sklearn_hcal.plotting`.

Shared by the command line (``hcal evaluate --plots`` and ``hcal demo`` save
them as PNG files) and by the HTML report (embedded PNG). matplotlib is
imported only when a figure is drawn.
"""

from __future__ import annotations

import base64
import io
import warnings

import numpy as np

__all__ = ["plotting_unavailable", "draw_figures", "png_data_uri"]

#: ``stem -> caption`` of every figure, in drawing order.
CAPTIONS = {
    "disagreement_reliability": (
        "Disagreement reliability: predicted probability φ that two annotators "
        "disagree against the observed one (Mimori et al. 2021, Figs. 1 and 5b)."
    ),
    "calibration_dispersion": (
        "Calibration-dispersion map: each model's (CL, DL), with iso-lines of "
        "EL = CL + DL (Mimori et al. 2021, Fig. 5a)."
    ),
    "majority_reliability": (
        "Reliability against the human majority: confidence against accuracy "
        "per bin, with the items per bin (Baan et al. 2022, Fig. 1c-d)."
    ),
    "instance_errors": (
        "Instance-level DistCE: histogram of the per-item total variation "
        "between model and human distributions (Baan et al. 2022, Figs. 1a-b)."
    ),
    "marginals": (
        "Human and model marginals: histograms over the items of each class's "
        "probability, the k-th largest probability, DistCE and the entropy "
        "(Baan et al. 2022, App. B)."
    ),
}


def plotting_unavailable() -> str | None:
    """Why figures cannot be drawn (None when they can)."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        return "matplotlib is not installed (pip install 'sklearn-hcal[plot]')"
    if importlib.util.find_spec("sklearn_hcal.plotting") is None:
        return "sklearn_hcal.plotting is not available"
    return None


def draw_figures(
    Y: np.ndarray,
    probabilities: dict,
    disagreement: dict | None = None,
    *,
    dotted=(),
    marginals: bool = False,
    class_names=None,
):
    """Draw the figures of several predictions on the same items, one at a time.

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_classes)
        Label histograms (or human probabilities), in the predictions' class
        order.
    probabilities : dict of str to ndarray of shape (n_samples, n_classes)
        Predicted class probabilities by name.
    disagreement : dict of str to ndarray of shape (n_samples,), default=None
        Predicted disagreement ``φ`` by name; default ``1 − Σq²``.
    dotted : collection of str, default=()
        Names drawn dotted in the disagreement diagram.
    marginals : bool, default=False
        Also draw the human-model marginals.
    class_names : list of str, default=None
        Class names for the marginals' titles.

    Yields
    ------
    stem : str
        The figure's name (a key of ``CAPTIONS``).
    figure : matplotlib Figure
        The caller saves and closes it.
    """
    from ..metrics import predicted_disagreement
    from ..plotting import (
        CalibrationDispersionDisplay,
        DisagreementReliabilityDisplay,
        HumanModelMarginalDisplay,
        InstanceErrorDisplay,
        MajorityReliabilityDisplay,
    )

    integer = bool(np.all(np.mod(Y, 1) == 0))
    pairs = integer and bool(np.any(Y.sum(axis=1) >= 2))
    if disagreement is None:
        # clipped to [0, 1]: a float32 one-hot row gives 1 - sum q^2 = -4e-16
        disagreement = {n: predicted_disagreement(P) for n, P in probabilities.items()}
    # Methods that share their class probabilities (α-calibration keeps f)
    # would draw the same curve twice in the class-probability figures.
    distinct = {}
    for name, P in probabilities.items():
        if not any(np.array_equal(P, Q) for Q in distinct.values()):
            distinct[name] = P
    # The reliability diagrams keep no title: their legend sits above the axes.
    with warnings.catch_warnings():
        # Single-annotation and similar notes were given with the tables.
        warnings.simplefilter("ignore", UserWarning)
        if pairs:
            ax = None
            for name, phi in disagreement.items():
                disp = DisagreementReliabilityDisplay.from_predictions(
                    Y,
                    phi,
                    name=name,
                    ax=ax,
                    show_counts=ax is None,
                    linestyle=":" if name in dotted else "-",
                )
                ax = disp.ax_
            yield "disagreement_reliability", disp.figure_
        if integer:
            disp = CalibrationDispersionDisplay.from_predictions(Y, distinct)
            disp.ax_.set_title("Calibration-dispersion map (Mimori et al. 2021)")
            yield "calibration_dispersion", disp.figure_
        ax = None
        for name, P in distinct.items():
            disp = MajorityReliabilityDisplay.from_predictions(
                Y, P, name=name, ax=ax, show_counts=ax is None
            )
            ax = disp.ax_
        yield "majority_reliability", disp.figure_
        disp = InstanceErrorDisplay.from_predictions(Y, distinct, kind="dist_ce")
        disp.ax_.set_title("Instance-level DistCE (Baan et al. 2022)")
        yield "instance_errors", disp.figure_
        if marginals:
            disp = HumanModelMarginalDisplay.from_predictions(
                Y, distinct, class_names=class_names
            )
            yield "marginals", disp.figure_


def png_data_uri(figure, dpi: int = 96) -> tuple[str, int, int]:
    """``(data URI, width, height)`` of a figure as an embedded PNG."""
    buffer = io.BytesIO()
    # No "Software" text chunk: the page names no other host, not even there.
    figure.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    data = buffer.getvalue()
    # IHDR: width and height are the big-endian words at bytes 16-24.
    width = int.from_bytes(data[16:20], "big")
    height = int.from_bytes(data[20:24], "big")
    uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return uri, width, height
