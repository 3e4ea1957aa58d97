"""Figures of the command line (``hcal evaluate --plots``, ``hcal demo``).

Drawn with the displays of :mod:`sklearn_hcal.plotting`; matplotlib is
imported only here, when figures are asked for.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

__all__ = ["plotting_unavailable", "save_figures"]


def plotting_unavailable() -> str | None:
    """Why figures cannot be drawn (None when they can)."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        return "matplotlib is not installed (pip install 'sklearn-hcal[plot]')"
    if importlib.util.find_spec("sklearn_hcal.plotting") is None:
        return "sklearn_hcal.plotting is not available"
    return None


def save_figures(
    folder,
    Y: np.ndarray,
    probabilities: dict,
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
    Y : ndarray of shape (n_samples, n_classes)
        Label histograms (or human probabilities).
    probabilities : dict of str to ndarray of shape (n_samples, n_classes)
        Predicted class probabilities by name.
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
    from ..metrics import predicted_disagreement
    from ..plotting import (
        CalibrationDispersionDisplay,
        DisagreementReliabilityDisplay,
        InstanceErrorDisplay,
        MajorityReliabilityDisplay,
    )
    from ..utils._optional import import_optional

    plt = import_optional("matplotlib.pyplot")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
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
    paths = []

    def save(fig, stem):
        path = folder / f"{stem}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(str(path))

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
            save(disp.figure_, "disagreement_reliability")
        if integer:
            disp = CalibrationDispersionDisplay.from_predictions(Y, distinct)
            disp.ax_.set_title("Calibration-dispersion map (Mimori et al. 2021)")
            save(disp.figure_, "calibration_dispersion")
        ax = None
        for name, P in distinct.items():
            disp = MajorityReliabilityDisplay.from_predictions(
                Y, P, name=name, ax=ax, show_counts=ax is None
            )
            ax = disp.ax_
        save(disp.figure_, "majority_reliability")
        disp = InstanceErrorDisplay.from_predictions(Y, distinct, kind="dist_ce")
        disp.ax_.set_title("Instance-level DistCE (Baan et al. 2022)")
        save(disp.figure_, "instance_errors")
    return paths
