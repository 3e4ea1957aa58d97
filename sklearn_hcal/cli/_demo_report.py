"""``hcal demo``'s ``report.html``: its tables, legend, figures and notes in one file.

Written by :class:`~sklearn_hcal.report.CalibrationReport` from the report
the demo has computed (no second bootstrap).
"""

from __future__ import annotations

from pathlib import Path

from sklearn.utils import Bunch

__all__ = ["write_html_report"]


def write_html_report(out: Path, result: Bunch, figures: bool) -> str:
    """Write ``out / "report.html"`` and return its path.

    ``result`` is the Bunch of :func:`~sklearn_hcal.cli._demo.run_demo`
    (``report``, ``test_counts``, ``predictions`` as ``{name: (P, φ, ...)}``
    and ``notes``); the figures are drawn when ``figures`` is true and
    matplotlib is available.
    """
    from ..report import CalibrationReport
    from ._figures import plotting_unavailable

    path = out / "report.html"
    preds = result.predictions
    CalibrationReport(
        result.report,
        y_true=result.test_counts,
        predictions={name: p[0] for name, p in preds.items()},
        disagreement={name: p[1] for name, p in preds.items()},
        # EL of the prior and of the posterior on the remaining labels
        aliases={"el_prior": "el", "el_posterior": "el"},
        notes=result.notes,
        title="hcal demo: Mix-Digits, one training label per item",
    ).to_html(path, figures=figures and plotting_unavailable() is None)
    return str(path)
