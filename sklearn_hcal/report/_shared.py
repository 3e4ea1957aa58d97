"""The helpers of :mod:`sklearn_hcal.report` that other layers may use.

The layer's declared inside (developer guide §layers): other packages
import these names from here, never from the layer's private modules.
"""

from ._calibration_report import (
    report_inputs,
)
from ._figures import (
    draw_figures,
    plotting_unavailable,
)

__all__ = [
    "draw_figures",
    "plotting_unavailable",
    "report_inputs",
]
