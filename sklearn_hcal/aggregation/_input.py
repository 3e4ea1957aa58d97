"""The aggregators' view of a long table: integer codes for EM.

The aggregators read a *long table* of annotations, one row per (item,
annotator) judgement, the layout of ``load_lewidi(...).annotations``
(developer guide §aggregation), through the estimators' one reader of such
tables (:func:`sklearn_hcal._validation.read_annotation_table`, developer
guide §estimators), which refuses bad tables with the row named. This
module turns a checked table into integer codes once, so that the EM loops
see only arrays:

* :func:`read_annotations`: a table to fit on or to transform (the item,
  annotator and label columns; labels may come from ``y`` instead);
* :func:`read_pairs`: the (item, annotator) pairs of
  ``predict_annotator_proba``, mapped onto the fitted items and annotators
  (``-1`` for unseen ones);
* :func:`align_to_fitted`: a transformed table's items and annotators
  mapped onto the fitted ones;
* :func:`check_annotations_per_annotator`: models that cannot estimate an
  annotator from fewer annotations (GLAD) refuse them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import (
    AnnotationTable,
    annotation_classes,
    annotation_labels,
    label_codes,
    read_annotation_table,
)

__all__ = [
    "Annotations",
    "align_to_fitted",
    "check_annotations_per_annotator",
    "read_annotations",
    "read_pairs",
]

_SHOW = 5  # how many offending values a message lists


@dataclass(frozen=True)
class Annotations:
    """A validated long table as integer codes.

    ``item``, ``annotator`` and ``label`` are one code per row: positions in
    ``items``, ``annotators`` and ``classes``. Items and annotators are
    coded in sorted order of their ids, so that nothing computed from the
    codes (sums, random starts) depends on the order of the rows.
    ``table`` is the checked table (its rows, for messages).
    """

    item: np.ndarray
    annotator: np.ndarray
    label: np.ndarray
    items: pd.Index
    annotators: pd.Index
    classes: np.ndarray
    table: AnnotationTable

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_annotators(self) -> int:
        return len(self.annotators)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def __len__(self) -> int:
        return len(self.item)


def read_annotations(
    X, y=None, *, item, annotator, label, classes=None, fitted=False, owner: str
) -> Annotations:
    """Validate a long table of annotations and code it.

    Parameters
    ----------
    X : DataFrame
        One row per annotation, with the ``item`` and ``annotator`` columns
        and, unless ``y`` is given, the ``label`` column.
    y : array-like of shape (n_rows,), default=None
        The labels, when they are not a column of ``X``.
    item, annotator, label : hashable
        Column names.
    classes : array-like, default=None
        The classes (posterior columns), in order; None: the sorted labels.
        A label outside ``classes`` is an error.
    fitted : bool, default=False
        Whether ``classes`` are the fitted ``classes_`` (for the message).
    owner : str
        The estimator's name, for the messages.

    Returns
    -------
    Annotations
    """
    table = read_annotation_table(
        X,
        item=item,
        annotator=annotator,
        label=label if y is None else None,
        owner=owner,
    )
    labels, source = annotation_labels(table, y, label=label)
    classes = annotation_classes(table, labels, classes, source=source)
    codes = label_codes(table, labels, classes, source=source, fitted=fitted)
    item_codes, items = table.item_codes
    annotator_codes, annotators = table.annotator_codes
    return Annotations(
        item=item_codes,
        annotator=annotator_codes,
        label=codes,
        items=items,
        annotators=annotators,
        classes=classes,
        table=table,
    )


def align_to_fitted(data: Annotations, items, annotators):
    """Fitted positions of a table's items and annotators (``-1``: unseen).

    Returns ``(item_map, annotator_map)``: ``item_map[c]`` is the position
    in ``items`` of the table's item coded ``c``.
    """
    item_map = pd.Index(items).get_indexer(data.items).astype(np.intp)
    annotator_map = pd.Index(annotators).get_indexer(data.annotators).astype(np.intp)
    return item_map, annotator_map


def read_pairs(X, *, item, annotator, items, annotators, owner: str):
    """(item, annotator) pairs as fitted positions (``-1``: unseen).

    Parameters
    ----------
    X : DataFrame
        One row per pair, with the ``item`` and ``annotator`` columns (a
        label column, if any, is ignored; repeated pairs are allowed).
    items, annotators : Index
        The fitted items and annotators.

    Returns
    -------
    item_idx, annotator_idx : ndarray of shape (n_rows,)
    """
    table = read_annotation_table(
        X, item=item, annotator=annotator, owner=owner, unique_pairs=False
    )
    item_idx = pd.Index(items).get_indexer(table.item).astype(np.intp)
    annotator_idx = pd.Index(annotators).get_indexer(table.annotator).astype(np.intp)
    return item_idx, annotator_idx


def check_annotations_per_annotator(
    data: Annotations, minimum: int, *, annotator, owner: str
):
    """Refuse annotators with fewer than ``minimum`` annotations, naming one."""
    counts = np.bincount(data.annotator, minlength=data.n_annotators)
    few = np.flatnonzero(counts < minimum)
    if few.size:
        first_row = int(np.flatnonzero(data.annotator == few[0])[0])
        shown = data.annotators[few[:_SHOW]].tolist()
        name = data.annotators[few[0]]
        name = name.item() if isinstance(name, np.generic) else name
        raise ValueError(
            f"{owner}: annotator {name!r} has {int(counts[few[0]])} annotation(s) "
            f"({data.table.row(first_row, keys=False)}); the model needs at least "
            f"{minimum} per annotator to estimate them ({few.size} such "
            f"annotators, e.g. {shown}). Drop them first, e.g. "
            f"X[X[{annotator!r}].map(X[{annotator!r}].value_counts()) >= {minimum}]."
        )
