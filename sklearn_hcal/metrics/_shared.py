"""The helpers of :mod:`sklearn_hcal.metrics` that other layers may use.

The layer's declared inside (developer guide §layers): other packages
import these names from here, never from the layer's private modules.
"""

from ._annotators import (
    annotator_distances,
    annotator_errors,
    annotator_pairs,
)
from ._bins import bin_index, bin_indices
from ._disagreement_kernels import check_disagreement_inputs
from ._engine import as_prediction_dict
from ._hlv_kernels import (
    manhattan_per_item,
    soft_cross_entropy_per_item,
)
from ._lewidi import (
    is_ordinal_scale,
    lewidi_truth,
    order_positions,
)
from ._majority import top_class
from ._multilabel import (
    multilabel_manhattan_per_item,
)
from ._ordinal import (
    scale_permutation,
    wasserstein_per_item,
)
from ._registry import (
    get_metric,
    metric_table,
    metrics,
    official_rounding,
)
from ._report import report_table
from ._report_inputs import (
    CheckedInputs,
    check_prediction,
    checked_disagreement,
    column_value,
    validate_human,
    validate_predictions,
)
from ._sets import (
    check_sets,
)
from ._tables import (
    decomposition_table,
    disagreement_calibration_terms,
    instance_errors_table,
)

__all__ = [
    "is_ordinal_scale",
    "lewidi_truth",
    "order_positions",
    "CheckedInputs",
    "checked_disagreement",
    "check_sets",
    "annotator_distances",
    "annotator_errors",
    "annotator_pairs",
    "as_prediction_dict",
    "bin_index",
    "bin_indices",
    "check_disagreement_inputs",
    "check_prediction",
    "column_value",
    "decomposition_table",
    "disagreement_calibration_terms",
    "get_metric",
    "instance_errors_table",
    "manhattan_per_item",
    "metric_table",
    "metrics",
    "multilabel_manhattan_per_item",
    "official_rounding",
    "report_table",
    "scale_permutation",
    "soft_cross_entropy_per_item",
    "top_class",
    "validate_human",
    "validate_predictions",
    "wasserstein_per_item",
]
