"""The helpers of :mod:`sklearn_hcal.plotting` that other layers may use.

The layer's declared inside (developer guide §layers): other packages
import these names from here, never from the layer's private modules. Each
draws a Display from inputs the metrics validated already (developer guide
§checked-once), as the report's figures need them.
"""

from ._calibration_map import calibration_dispersion
from ._disagreement import disagreement_reliability
from ._instance_errors import instance_error_histograms
from ._marginals import human_model_marginals
from ._reliability import majority_reliability

__all__ = [
    "calibration_dispersion",
    "disagreement_reliability",
    "human_model_marginals",
    "instance_error_histograms",
    "majority_reliability",
]
