"""Figures of the command line (``hcal evaluate --plots``, ``hcal demo``).

Drawn by :func:`sklearn_hcal.report._figures.draw_figures` (the figures of
the HTML report) with the displays of :mod:`sklearn_hcal.plotting`;
matplotlib is imported only when figures are asked for.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["plotting_unavailable", "save_figures"]


def plotting_unavailable() -> str | None:
    """Why figures cannot be drawn (None when they can)."""
    from ..report._shared import plotting_unavailable

    return plotting_unavailable()


def save_figures(
    folder,
    inputs,
    disagreement: dict | None = None,
    *,
    dotted=(),
) -> list[str]:
    """Save the diagnostic figures of several predictions on the same items.

    Draws, with the displays of :mod:`sklearn_hcal.plotting`:

    * ``disagreement_reliability.png`` -- predicted vs observed disagreement
      (Mimori et al. 2021, Figs. 1/5b), when some item has two labels;
    * ``calibration_dispersion.png`` -- the (CL, DL) map (Mimori Fig. 5a),
      for integer counts, one point per distinct probability matrix;
    * ``majority_reliability.png`` -- confidence vs majority accuracy (Baan
      et al. 2022, Fig. 1c-d);
    * ``instance_errors.png`` -- histograms of the per-item DistCE (Baan
      Figs. 1a-b).

    Parameters
    ----------
    folder : str or path
        Created if needed.
    inputs : CheckedInputs
        The label histograms (or human probabilities) and the predicted class
        probabilities by name, as the metrics validated them
        (``validate_predictions``, or the report's ``report_inputs``): the
        figures do not check them again.
    disagreement : dict of str to ndarray of shape (n_samples,), default=None
        Predicted disagreement ``φ`` by name; default ``1 − Σq²`` of each
        probability matrix.
    dotted : collection of str, default=()
        Names drawn dotted in the disagreement diagram (Mimori et al. draw the
        methods without α-calibration dotted).

    Returns
    -------
    paths : list of str
    """
    reason = plotting_unavailable()
    if reason is not None:
        raise ImportError(reason)
    from ..report._shared import draw_figures
    from ..utils._optional import import_optional

    plt = import_optional("matplotlib.pyplot")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem, fig in draw_figures(inputs, disagreement, dotted=dotted):
        path = folder / f"{stem}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(str(path))
    return paths
