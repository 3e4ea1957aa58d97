"""What the agreement coefficients read: a counts table or a long table.

Two layouts hold the same information for the coefficients of
:mod:`sklearn_hcal.metrics._agreement`:

* a **counts table** (items × classes): a label histogram as every metric
  takes it, a DataFrame's columns being the classes (developer guide
  §class-names), ``labels=`` the class of each column;
* a **long table**, one row per (item, annotator) -- the layout of
  ``load_lewidi(...).frame`` and of the aggregators -- read by the library's
  one reader of long tables (``_validation.read_annotation_table``), so a
  bad table gets the aggregators' message. A label that is a tuple (or
  list, set) is a label *set*: multi-label data, one binary variable per
  label.

Both become :class:`Ratings`: integer counts in the order of the scale,
with the scale's values where the level of measurement needs them.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._validation import (
    AnnotationTable,
    annotation_labels,
    check_class_names,
    check_finite,
    column_order,
    frame_names,
    label_codes,
    read_annotation_table,
    refuse_first,
    sorted_labels,
    to_array,
)
from ...utils._compat import StrOptions
from .._constraints import OPTIONAL_ARRAY
from ._kernels import LEVELS

__all__ = [
    "ANNOTATOR_PARAMS",
    "KEYS",
    "LEVEL",
    "LONG_KEYS",
    "Ratings",
    "is_long_table",
    "plain",
    "read_label_sets",
    "read_ratings",
    "with_model",
]

#: The columns of a long table, or None where a counts table is accepted.
KEYS = {
    "item": [Hashable, None],
    "annotator": [Hashable, None],
    "label": [Hashable, None],
}
#: The columns of a long table, where only a long table is accepted.
LONG_KEYS = {"item": [Hashable], "annotator": [Hashable], "label": [Hashable]}
#: Krippendorff's level of measurement.
LEVEL = [StrOptions(set(LEVELS))]


@dataclass
class Ratings:
    """Checked annotations as per-item counts in scale order.

    Attributes
    ----------
    Y : ndarray of shape (n_items, n_values)
        Counts (float64, integral), columns in scale order.
    classes : ndarray of shape (n_values,)
        The class of each column.
    values : ndarray of shape (n_values,)
        The numbers the scale's classes stand for (ordinal and nominal
        words: positions).
    items : Index or None
        The items of the rows (a long table's sorted ids, a pandas counts
        table's index), None for an array.
    table : AnnotationTable or None
        The long table, with ``item``, ``annotator`` and ``code`` (each
        row's item, annotator and class position) and ``annotators``.
    """

    Y: np.ndarray
    classes: np.ndarray
    values: np.ndarray
    items: pd.Index | None = None
    table: AnnotationTable | None = None
    item: np.ndarray | None = None
    annotator: np.ndarray | None = None
    code: np.ndarray | None = None
    annotators: pd.Index | None = None


def is_long_table(y, item, label) -> bool:
    """A DataFrame holding both the ``item`` and ``label`` columns."""
    return (
        isinstance(y, pd.DataFrame)
        and item is not None
        and label is not None
        and item in y.columns
        and label in y.columns
    )


def _numeric(classes: np.ndarray) -> np.ndarray | None:
    """The classes as float64 numbers, or None when they are not all numbers."""
    if np.asarray(classes).dtype.kind == "b":
        return None
    try:
        values = np.asarray(classes, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return values if np.isfinite(values).all() else None


def scale(classes, level: str, *, ordered: bool, owner: str):
    """``(permutation, values)`` putting the classes in scale order.

    Numeric class names are their own values, sorted (the library's rule for
    ordinal metrics). Other names: nominal data needs no order; an ordinal
    scale takes the order of ``labels=`` (or of the counts' columns) when
    ``ordered``, else raises; interval and ratio need numbers.
    """
    classes = np.asarray(classes)
    if level == "nominal":  # positions: the distance reads none
        return np.arange(len(classes)), np.arange(len(classes), dtype=np.float64)
    values = _numeric(classes)
    if values is not None:
        perm = np.argsort(values, kind="stable")
        return perm, values[perm]
    shown = classes.tolist()
    try:
        infinite = [c for c in shown if np.isinf(float(c))]
    except (TypeError, ValueError):
        infinite = []
    if infinite:
        raise ValueError(
            f"{owner}: level={level!r} needs finite values, and the class "
            f"{plain(infinite[0])!r} of {shown} is not finite."
        )
    if level == "ordinal" and ordered:
        return np.arange(len(classes)), np.arange(len(classes), dtype=np.float64)
    if level == "ordinal":
        raise ValueError(
            f"{owner}: level='ordinal' needs the scale's order, and the classes "
            f"{shown} are not numbers; pass labels= listing them in scale order."
        )
    raise ValueError(
        f"{owner}: level={level!r} needs numeric values, and the classes {shown} "
        "are not numbers; name the classes by their values (e.g. rename the "
        "columns) or use level='ordinal' with labels= in scale order."
    )


def _counts(y, labels, owner: str):
    """``(Y, classes, items, ordered)`` of a counts table, values checked."""
    try:
        arr, names, labels = _counts_array(y, labels)
    except ValueError as exc:
        raise ValueError(f"{owner}: {exc}") from None
    items = y.index if isinstance(y, pd.DataFrame) else None
    if items is not None and isinstance(items, pd.RangeIndex):
        items = None
    if labels is not None:
        classes, ordered = labels, True
    elif names is not None:
        classes, ordered = names, True
    else:
        classes, ordered = np.arange(arr.shape[1]), True
    Y = np.asarray(arr, dtype=np.float64)

    def holds(row, col):
        value, name = arr[row, col].item(), np.asarray(classes)[col].item()
        return f"row {row} holds {value!r} (class {name!r})."

    refuse_first(
        Y < 0,
        lambda *cell: f"{owner}: y must hold non-negative label counts; {holds(*cell)}",
    )
    refuse_first(
        np.floor(Y) != Y,
        lambda *cell: (
            f"{owner}: y must hold integer label counts (the coefficients count "
            f"pairs of annotations); {holds(*cell)}"
        ),
    )
    return Y, np.asarray(classes), items, ordered


def _counts_array(y, labels):
    """The counts as an array in the order of ``labels`` (if given), with
    the DataFrame's class names and the checked ``labels``."""
    names = frame_names(y, name="y")
    # a 3-D array's shape is named as a 1-D one's, before it is read
    shape = np.shape(y) if getattr(y, "ndim", 2) not in (1, 2) else None
    if shape is None:
        arr, _ = to_array(y, name="y", allow_1d=True, keep_int=True)
        shape = None if arr.ndim == 2 else arr.shape
    if shape is not None:
        raise ValueError(
            "y must be a counts table (n_items, n_classes) or a long table (a "
            "DataFrame with item and label columns, as load_lewidi(...).frame), "
            f"got an array of shape {shape}."
        )
    check_finite(arr, name="y")
    if labels is not None:
        labels = check_class_names(labels, n_columns=arr.shape[1], of="y")
        if names is not None:
            order = column_order(names, labels, name="y", target_name="labels")
            if order is not None:
                arr = arr[:, order]
    return arr, names, labels


def _is_label_set(values) -> bool:
    """Whether the first label is a label set (tuple, list or set)."""
    return len(values) > 0 and isinstance(values[0], (tuple, list, set, frozenset))


def read_ratings(y, *, labels, item, annotator, label, level, owner, label_sets=False):
    """The :class:`Ratings` of a counts or long table, read once.

    A long table of label sets gives ``{label: Ratings}`` when
    ``label_sets`` (:func:`read_label_sets`), else raises.
    """
    if not is_long_table(y, item, label):
        Y, classes, items, ordered = _counts(y, labels, owner)
        perm, values = scale(classes, level, ordered=ordered, owner=owner)
        return Ratings(Y[:, perm], classes[perm], values, items)
    table = read_annotation_table(
        y, item=item, annotator=annotator, label=label, owner=owner
    )
    # matrix=: label sets are read here (one α per label), not refused
    raw, source = annotation_labels(table, label=label, matrix=label_sets)
    if _is_label_set(raw):
        if label_sets:
            return read_label_sets(table, raw, source, labels)
        raise ValueError(
            f"{owner}: {source} holds label sets (multi-label data); "
            "krippendorff_alpha gives one α per label for them, the other "
            "coefficients take one label per annotation."
        )
    classes = _classes(table, raw, labels, source)
    if level != "nominal":  # an infinite value has no distance to the others
        numbers = pd.to_numeric(pd.Series(raw, dtype=object), errors="coerce")
        refuse_first(
            np.isinf(numbers.to_numpy(dtype=np.float64)),
            lambda row: (
                f"{owner}: {source} at {table.row(row)} holds {plain(raw[row])!r}; "
                f"level={level!r} needs finite values."
            ),
        )
    perm, values = scale(classes, level, ordered=labels is not None, owner=owner)
    classes = classes[perm]
    code = label_codes(table, raw, classes, source=source)
    return _from_codes(table, code, classes, values)


def _classes(table, raw, labels, source) -> np.ndarray:
    if labels is not None:
        return check_class_names(labels, param="labels", of="the annotations")
    return np.asarray(
        sorted_labels(raw, owner=table.owner, source=source, where=table.row)
    )


def _from_codes(table: AnnotationTable, code, classes, values) -> Ratings:
    item, items = table.item_codes
    if table.annotator is not None:
        annotator, annotators = table.annotator_codes
    else:
        annotator, annotators = None, None
    K = len(classes)
    Y = np.bincount(item * K + code, minlength=len(items) * K)
    return Ratings(
        Y.reshape(len(items), K).astype(np.float64),
        np.asarray(classes),
        values,
        items,
        table,
        item,
        annotator,
        code,
        annotators,
    )


def read_label_sets(table: AnnotationTable, raw, source: str, labels) -> dict:
    """``{label: Ratings}``: each label of a multi-label long table as a
    binary variable (absent 0, present 1)."""
    owner = table.owner
    sets = pd.Series(raw, dtype=object)
    kinds = sets.map(type)
    bad = ~kinds.isin([tuple, list, set, frozenset]).to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{owner}: {source} at {table.row(row)} holds {raw[row]!r}, not a "
            "label set, among label sets: give every annotation a tuple of labels."
        )
    exploded = sets.reset_index(drop=True).explode()
    kept = exploded.notna().to_numpy()
    flat = exploded.to_numpy()[kept]
    rows = exploded.index.to_numpy()[kept]
    if labels is None:
        if flat.size == 0:
            raise ValueError(f"{owner}: {source} holds only empty label sets.")
        names = np.asarray(sorted_labels(flat, owner=owner, source=source))
    else:
        names = check_class_names(labels, param="labels", of="the label sets")
    codes = label_codes(table, flat, names, source=source, rows=rows)
    present = np.zeros((len(raw), len(names)), dtype=np.intp)
    present[rows, codes] = 1
    binary = np.array([0, 1])
    return {
        name: _from_codes(table, present[:, j], binary, binary.astype(np.float64))
        for j, name in enumerate(names.tolist())
    }


def plain(value):
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


#: The parameters of the per-annotator table and of the model's view.
ANNOTATOR_PARAMS = {
    "X": [pd.DataFrame],
    "y_pred": [pd.Series, None],
    "level": LEVEL,
    "labels": OPTIONAL_ARRAY,
    "model_name": [Hashable],
    **LONG_KEYS,
}


def with_model(ratings: Ratings, y_pred, *, item, model_name, owner) -> Ratings:
    """The annotators' :class:`Ratings` with the model's labels as one more
    annotator's (its last code), without reading the table again."""
    if isinstance(y_pred.index, pd.RangeIndex):
        raise ValueError(
            f"{owner}: y_pred must be indexed by item (the items of X's column "
            f"{item!r}), got a RangeIndex: its rows cannot be matched to items."
        )
    if y_pred.index.duplicated().any():
        dup = plain(y_pred.index[y_pred.index.duplicated()][0])
        raise ValueError(f"{owner}: y_pred names item {dup!r} twice.")
    position = y_pred.index.get_indexer(ratings.items)
    extra = y_pred.index.difference(ratings.items)
    if (position < 0).any() or len(extra):
        missing = ratings.items[position < 0]
        what = (
            f"lacks the item {plain(missing[0])!r} ({len(missing)} missing)"
            if len(missing)
            else f"holds the item {plain(extra[0])!r} not in X ({len(extra)} extra)"
        )
        raise ValueError(f"{owner}: y_pred {what}; it needs one label per item of X.")
    if model_name in ratings.annotators:
        raise ValueError(
            f"{owner}: X already has an annotator named {model_name!r}; pass "
            "another model_name."
        )
    values = y_pred.to_numpy()[position]  # in the order of ratings.items
    code = pd.Index(ratings.classes).get_indexer(values)
    refuse_first(
        code < 0,
        lambda first: (
            f"{owner}: y_pred holds {plain(values[first])!r} for item "
            f"{plain(ratings.items[first])!r}, not among the classes "
            f"{ratings.classes.tolist()} of the annotations."
        ),
    )
    n_items = len(ratings.items)
    Y = ratings.Y.copy()
    Y[np.arange(n_items), code] += 1.0
    annotators = ratings.annotators.append(pd.Index([model_name]))
    return Ratings(
        Y,
        ratings.classes,
        ratings.values,
        ratings.items,
        ratings.table,
        np.concatenate([ratings.item, np.arange(n_items)]),
        np.concatenate([ratings.annotator, np.full(n_items, len(annotators) - 1)]),
        np.concatenate([ratings.code, code]),
        annotators,
    )
