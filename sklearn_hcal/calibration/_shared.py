"""The helpers of :mod:`sklearn_hcal.calibration` that other layers may use.

The layer's declared inside (developer guide §layers): other packages
import these names from here, never from the layer's private modules.
"""

from ._base import check_positional_scores
from ._crossfit import (
    cross_fit,
)
from ._scores import (
    class_columns,
    get_scores,
    is_prefit,
    read_input_type,
    scores_from_input,
    softmax,
    unwrap_frozen,
)

__all__ = [
    "check_positional_scores",
    "class_columns",
    "cross_fit",
    "get_scores",
    "is_prefit",
    "read_input_type",
    "scores_from_input",
    "softmax",
    "unwrap_frozen",
]
