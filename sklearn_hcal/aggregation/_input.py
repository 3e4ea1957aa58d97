"""Every input check of the aggregators, in one module.

The aggregators read a *long table* of annotations, one row per (item,
annotator) judgement, the layout of ``load_lewidi(...).annotations``
(developer guide §aggregation). This module turns such a table into integer
codes once, so that the EM loops see only arrays, and refuses bad tables
with the row named:

* :func:`read_annotations`: a table to fit on or to transform (the item,
  annotator and label columns; labels may come from ``y`` instead);
* :func:`read_pairs`: the (item, annotator) pairs of
  ``predict_annotator_proba``, mapped onto the fitted items and annotators
  (``-1`` for unseen ones);
* :func:`align_to_fitted`: a transformed table's items and annotators
  mapped onto the fitted ones;
* :func:`check_annotations_per_annotator`: models that cannot estimate an
  annotator from fewer annotations (GLAD) refuse them.

It is built on :mod:`sklearn_hcal._validation` only, so that it can move
onto the estimators' shared front end unchanged.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import check_class_names

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
    """

    item: np.ndarray
    annotator: np.ndarray
    label: np.ndarray
    items: pd.Index
    annotators: pd.Index
    classes: np.ndarray
    rows: pd.Index

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


def _plain(value):
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _row(rows: pd.Index, position: int) -> str:
    """A row as users see it: its position and, if different, its index label."""
    label = _plain(rows[position])
    if isinstance(rows, pd.RangeIndex) and label == position:
        return f"row {position}"
    return f"row {position} (index {label!r})"


def _frame(X, owner: str, what: str) -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        raise TypeError(
            f"{owner} takes {what} as a pandas DataFrame (a long table, one row "
            f"per annotation, as load_lewidi(...).annotations), got "
            f"{type(X).__name__}."
        )
    if len(X) == 0:
        raise ValueError(f"{owner}: X is empty: it has no {what}.")
    return X


def _column(X: pd.DataFrame, key, param: str, owner: str) -> np.ndarray:
    if not isinstance(key, Hashable) or key not in X.columns:
        raise ValueError(
            f"{owner}: {param}={key!r} is not a column of X; its columns are "
            f"{list(X.columns)} (set {param}= to the column's name)."
        )
    col = X[key]
    if isinstance(col, pd.DataFrame):
        raise ValueError(f"{owner}: {param}={key!r} names several columns of X.")
    return col.to_numpy()


def _check_missing(values: np.ndarray, rows: pd.Index, what: str, owner: str):
    missing = pd.isna(values)
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"{owner}: {int(missing.sum())} rows have a missing {what} (NaN or "
            f"None), first at {_row(rows, first)}; drop or fill them first."
        )


def _codes(values: np.ndarray) -> tuple[np.ndarray, pd.Index]:
    """Codes of ``values`` in sorted order of the distinct values.

    Ids of types that do not sort together are ordered by their text.
    """
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:
        codes, uniques = pd.factorize(values, sort=False)
        order = np.argsort([str(u) for u in uniques], kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        codes, uniques = rank[codes], uniques[order]
    return codes.astype(np.intp), pd.Index(uniques)


def _classes(labels: np.ndarray, classes, owner: str) -> np.ndarray:
    if classes is not None:
        classes = check_class_names(classes, param="classes", of="the posteriors")
    else:
        uniques = pd.unique(labels)
        try:
            classes = np.asarray(sorted(uniques.tolist()))
        except TypeError as exc:
            kinds = sorted({type(u).__name__ for u in uniques.tolist()})
            raise ValueError(
                f"{owner}: the labels mix types {kinds} that cannot be sorted "
                "into classes; pass classes= (the class of each posterior "
                "column)."
            ) from exc
    if len(classes) < 2:
        raise ValueError(
            f"{owner}: the labels hold {len(classes)} class(es) "
            f"{np.asarray(classes).tolist()}; aggregation needs at least two. "
            "Pass classes= naming every class of the scale, including those "
            "nobody chose."
        )
    return classes


def _label_codes(labels, classes, rows, owner: str, source: str) -> np.ndarray:
    codes = pd.Index(classes).get_indexer(labels)
    unknown = codes < 0
    if unknown.any():
        first = int(np.flatnonzero(unknown)[0])
        shown = list(dict.fromkeys(labels[unknown].tolist()))[:_SHOW]
        raise ValueError(
            f"{owner}: {int(unknown.sum())} labels of {source} are not among the "
            f"classes {np.asarray(classes).tolist()}, first "
            f"{_plain(labels[first])!r} at {_row(rows, first)} (unknown labels: "
            f"{shown})."
        )
    return codes.astype(np.intp)


def _check_unique_pairs(item, annotator, n_annotators, rows, X, keys, owner: str):
    pair = item.astype(np.int64) * n_annotators + annotator
    order = np.argsort(pair, kind="stable")
    repeated = np.flatnonzero(pair[order][1:] == pair[order][:-1])
    if repeated.size:
        first, second = sorted((int(order[repeated[0]]), int(order[repeated[0] + 1])))
        item_id = _plain(X[keys[0]].iloc[first])
        annotator_id = _plain(X[keys[1]].iloc[first])
        raise ValueError(
            f"{owner}: annotator {annotator_id!r} labels item {item_id!r} twice "
            f"({_row(rows, first)} and {_row(rows, second)}; {repeated.size} "
            "repeated (item, annotator) pairs in all). The models take one label "
            "per annotator and item: keep one, e.g. X.drop_duplicates(subset="
            f"[{keys[0]!r}, {keys[1]!r}], keep='last')."
        )


def read_annotations(
    X, y=None, *, item, annotator, label, classes=None, owner: str
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
    owner : str
        The estimator's name, for the messages.

    Returns
    -------
    Annotations
    """
    X = _frame(X, owner, "annotations")
    rows = X.index
    names = {"item": item, "annotator": annotator}
    if y is None:
        names["label"] = label
    if len({repr(v) for v in names.values()}) != len(names):
        raise ValueError(f"{owner}: {names} must name different columns of X.")
    items = _column(X, item, "item", owner)
    annotators = _column(X, annotator, "annotator", owner)
    if y is None:
        labels, source = _column(X, label, "label", owner), f"column {label!r}"
    else:
        labels = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
        if labels.ndim != 1 or labels.shape[0] != len(X):
            raise ValueError(
                f"{owner}: y must hold one label per row of X ({len(X)}), got "
                f"shape {labels.shape}."
            )
        source = "y"
    _check_missing(items, rows, f"item (column {item!r})", owner)
    _check_missing(annotators, rows, f"annotator (column {annotator!r})", owner)
    _check_missing(labels, rows, f"label ({source})", owner)
    classes = _classes(labels, classes, owner)
    label_codes = _label_codes(labels, classes, rows, owner, source)
    item_codes, item_index = _codes(items)
    annotator_codes, annotator_index = _codes(annotators)
    _check_unique_pairs(
        item_codes,
        annotator_codes,
        len(annotator_index),
        rows,
        X,
        (item, annotator),
        owner,
    )
    return Annotations(
        item=item_codes,
        annotator=annotator_codes,
        label=label_codes,
        items=item_index,
        annotators=annotator_index,
        classes=classes,
        rows=rows,
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
    X = _frame(X, owner, "(item, annotator) pairs")
    rows = X.index
    item_ids = _column(X, item, "item", owner)
    annotator_ids = _column(X, annotator, "annotator", owner)
    _check_missing(item_ids, rows, f"item (column {item!r})", owner)
    _check_missing(annotator_ids, rows, f"annotator (column {annotator!r})", owner)
    item_idx = pd.Index(items).get_indexer(item_ids).astype(np.intp)
    annotator_idx = pd.Index(annotators).get_indexer(annotator_ids).astype(np.intp)
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
        raise ValueError(
            f"{owner}: annotator {_plain(data.annotators[few[0]])!r} has "
            f"{int(counts[few[0]])} annotation(s) ({_row(data.rows, first_row)}); "
            f"the model needs at least {minimum} per annotator to estimate them "
            f"({few.size} such annotators, e.g. {shown}). Drop them first, e.g. "
            f"X[X[{annotator!r}].map(X[{annotator!r}].value_counts()) >= {minimum}]."
        )
