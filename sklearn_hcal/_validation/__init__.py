"""Input validation shared by metrics, scorers and estimators.

The validation layer (developer guide §layers): every plain name below is
its declared inside, importable by the other layers from
``sklearn_hcal._validation``. :mod:`._core` holds the conventions, the
tolerances and the block machinery of the chunked passes; :mod:`._labels`
maps labels and class names to columns; :mod:`._scan` checks the values of
histograms and probabilities; :mod:`._pair` validates a (human labels,
model probabilities) pair for the metrics; :mod:`._annotations`
reads the long tables of annotations that the aggregators, the
perspectivist classifier and the annotation splitters take, and
:mod:`._annotation_labels` their labels and classes (the part of
the estimators' front end every such estimator shares; the targets of the
other estimators are read in :mod:`sklearn_hcal._frontend`, developer
guide §estimators); :mod:`._rows` matches the rows of pandas inputs by item.
"""

from ._annotation_labels import (
    annotation_classes,
    annotation_labels,
    label_codes,
    sorted_labels,
)
from ._annotations import (
    AnnotationTable,
    is_missing,
    read_annotation_table,
    rows_table,
    sorted_codes,
)
from ._core import (
    DISAGREEMENT_TOL,
    NEGATIVE_ROUNDING_TOL,
    PROBA_FLOOR,
    ROUNDING_TOL_PER_CLASS,
    ROW_SUM_TOL,
    all_finite,
    as_array,
    check_disagreement,
    check_logits,
    is_histogram_target,
    looks_like_probabilities,
    map_row_blocks,
    negative_tolerance,
    probabilities_to_logits,
    row_blocks,
    row_sum_tolerance,
    row_sums,
    rows_from,
    shape_of,
    to_array,
)
from ._labels import (
    check_class_names,
    check_positional_classes,
    column_order,
    frame_names,
    labels_to_histograms,
    sorted_names,
)
from ._pair import (
    Block,
    Pair,
    check_histograms_and_probabilities,
    check_labels,
    check_pair,
)
from ._refuse import check_binary, refuse_first
from ._rows import item_index, match_rows
from ._scan import (
    check_finite,
    check_label_histograms,
    check_probabilities,
    checked_histograms,
    normalised_block,
    scan_histograms,
    scan_probabilities,
)
from ._weights import (
    check_weight_values,
)

__all__ = [
    "AnnotationTable",
    "Block",
    "DISAGREEMENT_TOL",
    "NEGATIVE_ROUNDING_TOL",
    "PROBA_FLOOR",
    "Pair",
    "ROUNDING_TOL_PER_CLASS",
    "ROW_SUM_TOL",
    "all_finite",
    "annotation_classes",
    "annotation_labels",
    "as_array",
    "check_binary",
    "check_class_names",
    "check_disagreement",
    "check_finite",
    "check_histograms_and_probabilities",
    "check_label_histograms",
    "check_labels",
    "check_logits",
    "check_pair",
    "check_positional_classes",
    "check_probabilities",
    "check_weight_values",
    "checked_histograms",
    "column_order",
    "frame_names",
    "is_histogram_target",
    "is_missing",
    "item_index",
    "label_codes",
    "labels_to_histograms",
    "looks_like_probabilities",
    "map_row_blocks",
    "match_rows",
    "negative_tolerance",
    "normalised_block",
    "probabilities_to_logits",
    "read_annotation_table",
    "refuse_first",
    "row_blocks",
    "row_sum_tolerance",
    "row_sums",
    "rows_from",
    "rows_table",
    "scan_histograms",
    "scan_probabilities",
    "shape_of",
    "sorted_codes",
    "sorted_labels",
    "sorted_names",
    "to_array",
]
