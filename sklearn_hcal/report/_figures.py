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

__all__ = [
    "plotting_unavailable",
    "draw_figures",
    "figure_disagreement",
    "png_data_uri",
]

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
    inputs,
    disagreement: dict | None = None,
    *,
    dotted=(),
    marginals: bool = False,
    class_names=None,
):
    """Draw the figures of several predictions on the same items, one at a time.

    Parameters
    ----------
    inputs : CheckedInputs
        The labels and the predictions as the metrics validated them
        (``validate_predictions``; a report holds them): the figures take
        them as they are, nothing is checked again (developer guide
        §checked-once).
    disagreement : dict of str to array-like, default=None
        Predicted disagreement ``φ`` by name (checked against the labels
        when drawn); the others' is ``1 − Σq²``.
    dotted : collection of str, default=()
        Names drawn dotted in the disagreement diagram.
    marginals : bool, default=False
        Also draw the human-model marginals.
    class_names : list of str, default=None
        Class names for the marginals' titles (default: the inputs' classes).

    Yields
    ------
    stem : str
        The figure's name (a key of ``CAPTIONS``).
    figure : matplotlib Figure
        The caller saves and closes it.
    """
    from ..metrics._shared import CheckedInputs
    from ..plotting._shared import (
        calibration_dispersion,
        disagreement_reliability,
        human_model_marginals,
        instance_error_histograms,
        majority_reliability,
    )

    human, sources = inputs.human, inputs.sources
    pairs = human.is_counts and bool(np.any(human.valid))
    # Methods that share their class probabilities (α-calibration keeps f)
    # would draw the same curve twice in the class-probability figures.
    probabilities = inputs.probabilities()
    distinct = {}
    for name, P in probabilities.items():
        if not any(np.array_equal(P, probabilities[d]) for d in distinct):
            distinct[name] = sources[name]
    shown = CheckedInputs(human, distinct, inputs.items)
    # The reliability diagrams keep no title: their legend sits above the axes.
    with warnings.catch_warnings():
        # Single-annotation and similar notes were given with the tables.
        warnings.simplefilter("ignore", UserWarning)
        if pairs:
            ax = None
            for name, (mu, phi, valid) in figure_disagreement(
                inputs, disagreement
            ).items():
                disp = disagreement_reliability(
                    mu,
                    phi,
                    valid,
                    n_classes=human.n_classes,
                    name=name,
                    ax=ax,
                    show_counts=ax is None,
                    linestyle=":" if name in dotted else "-",
                )
                ax = disp.ax_
            yield "disagreement_reliability", disp.figure_
        if human.is_counts:
            disp = calibration_dispersion(shown)
            disp.ax_.set_title("Calibration-dispersion map (Mimori et al. 2021)")
            yield "calibration_dispersion", disp.figure_
        ax = None
        for name, source in distinct.items():
            disp = majority_reliability(
                human, source, name=name, ax=ax, show_counts=ax is None
            )
            ax = disp.ax_
        yield "majority_reliability", disp.figure_
        disp = instance_error_histograms(shown, kind="dist_ce")
        disp.ax_.set_title("Instance-level DistCE (Baan et al. 2022)")
        yield "instance_errors", disp.figure_
        if marginals:
            disp = human_model_marginals(shown, class_names=class_names)
            yield "marginals", disp.figure_


def figure_disagreement(inputs, disagreement: dict | None = None) -> dict:
    """``{name: (μ̂, φ, valid)}`` of the disagreement figure.

    ``φ`` is the classifier's own when ``disagreement`` has it (checked as
    the report's table checks it), else ``1 − Σ q²`` of its checked
    probabilities.
    """
    from ..metrics._shared import checked_disagreement

    human, disagreement = inputs.human, dict(disagreement or {})
    out = {}
    for name, source in inputs.sources.items():
        if name in disagreement:
            out[name] = checked_disagreement(inputs, name, disagreement[name])
        else:
            out[name] = (human.mu, source.disagreement(), human.valid)
    return out


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
