"""The helpers of :mod:`sklearn_hcal.datasets` that other layers may use.

The layer's declared inside (developer guide §layers): other packages
import these names from here, never from the layer's private modules.
"""

from ._base import (
    read_json,
)
from ._chaosnli import (
    read_chaosnli_jsonl,
    read_chaosnli_predictions,
)
from ._lewidi_layout import (
    TWO_DECIMALS,
    class_named,
    soft_matrix,
    submission_track,
)
from ._sampling import (
    draw_annotation,
)

__all__ = [
    "TWO_DECIMALS",
    "class_named",
    "draw_annotation",
    "read_chaosnli_jsonl",
    "read_chaosnli_predictions",
    "read_json",
    "soft_matrix",
    "submission_track",
]
