"""Reports people look at: a rich notebook display and one self-contained HTML file.

:class:`CalibrationReport` wraps the table of
:func:`~sklearn_hcal.metrics.human_calibration_report` (and, when it has
them, the human labels and the predictions): in a notebook it renders the
metric table with each bootstrap interval in the value's cell, the best
model of each column marked, direction arrows and a legend generated from
the metric registry; :meth:`CalibrationReport.to_html` writes the same with
a summary of the data and the diagnostic figures as one HTML file that
needs no network, no script and no other file (``hcal evaluate --html``).
"""

from .._lazy import attach

_PUBLIC = {
    "CalibrationReport": "._calibration_report",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
