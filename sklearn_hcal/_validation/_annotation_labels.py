"""The labels of a long table of annotations: one per row, and their classes.

The second half of the one reader of long tables (:mod:`._annotations`
reads the table itself): the aggregators, the perspectivist classifier, the
annotation splitters and the agreement coefficients read each row's label
and its class here, so that a bad label gets one message, naming the
estimator, the argument, the row and the value (developer guide
§estimators).

* :func:`annotation_labels` -- each row's label, from ``y`` or from a label
  column: one per row, none missing; label sets (multi-label data) refused
  where one label is due;
* :func:`sorted_labels` -- the distinct labels in scikit-learn's
  ``classes_`` order;
* :func:`annotation_classes` -- the classes: ``classes=`` checked, or the
  sorted labels; at least two;
* :func:`label_codes` -- each label's class, a label outside the classes
  named by row.
"""

from __future__ import annotations

from numbers import Number

import numpy as np
import pandas as pd
from sklearn.utils.validation import column_or_1d

from ._annotations import SHOW, AnnotationTable, check_present, plain
from ._labels import check_class_names, frame_names

__all__ = ["annotation_classes", "annotation_labels", "label_codes", "sorted_labels"]


def _as_labels(y) -> np.ndarray:
    values = y.to_numpy() if hasattr(y, "to_numpy") else y
    if isinstance(values, (list, tuple)):
        # scikit-learn's convention: a list of equal-length rows is a matrix;
        # only ragged rows are label sets, one per row
        try:
            array = np.asarray(values)
        except ValueError:
            return np.asarray(list(values) + [None], dtype=object)[:-1]
        kind = pd.api.types.infer_dtype(values, skipna=True)
        if array.dtype.kind in "US" and kind not in ("string", "bytes"):
            # numpy turns ["yes", 1] into ["yes", "1"]: keep what was given
            return np.asarray(list(values) + [None], dtype=object)[:-1]
        return array
    values = np.asarray(values)
    if values.ndim == 2 and values.shape[1] == 1 and frame_names(y, name="y") is None:
        values = column_or_1d(values, warn=True)  # scikit-learn's column rule
    return values


def annotation_labels(
    table: AnnotationTable, y=None, *, label=None, matrix: bool = False
) -> tuple[np.ndarray, str]:
    """Each row's label and where it came from (``"y"`` or ``X``'s column).

    ``y`` (when given) holds one label per row of ``X`` (an unnamed
    ``(n, 1)`` column is raveled with scikit-learn's warning; a ragged
    list is one label set per row); else the labels are ``X``'s ``label``
    column. ``matrix=True`` also accepts multi-label targets: a 2-D ``y``
    (a 0/1 indicator) and label sets (tuples, lists, sets), which are
    refused otherwise, naming the row. A missing label is refused, naming
    its row.

    Returns
    -------
    values : ndarray of shape (n_rows,) or (n_rows, n_labels)
    source : str
        ``"y"`` or ``"X's column 'label'"``, for messages.
    """
    if y is None:
        values, source = table.frame[label].to_numpy(), f"X's column {label!r}"
    else:
        values, source = _as_labels(y), "y"
    if values.ndim not in ((1, 2) if matrix else (1,)) or values.shape[0] != len(table):
        raise ValueError(
            f"{table.owner}: y must hold one label per row of X ({len(table)} "
            f"rows), got shape {values.shape}."
        )
    if not matrix:
        _refuse_label_sets(table, values, source)
    if values.ndim == 1:
        check_present(table, values, source, "label")
    return values, source


def _refuse_label_sets(table: AnnotationTable, values, source: str) -> None:
    """Refuse label sets (a multi-label ``frame``'s tuples) where one label is due.

    ``load_lewidi(...).frame`` of a multi-label data set (VariErrNLI) holds
    the tuple of labels each annotator chose; read as one label each, the
    tuples crashed in numpy ("inhomogeneous shape"). The advice is the wide
    table's (``_annotations._multilabel_hint``): one yes/no question per
    label.
    """
    if values.dtype != object or pd.api.types.infer_dtype(values, skipna=True) != (
        "mixed"
    ):
        return
    is_set = np.fromiter(
        (isinstance(v, (list, tuple, set, frozenset, np.ndarray)) for v in values),
        dtype=bool,
        count=len(values),
    )
    if not is_set.any():
        return
    row = int(np.flatnonzero(is_set)[0])
    first = next(iter(values[row]), "<a label>")
    raise ValueError(
        f"{table.owner}: {source} at {table.row(row)} holds the label set "
        f"{values[row]!r} ({int(is_set.sum())} row(s) hold label sets: a "
        "multi-label table); this estimator takes one label per annotation. "
        "Model each label as a yes/no question: fit on the table with one 0/1 "
        "column per label (load_lewidi(...).annotations) with "
        f"label={plain(first)!r}, one fit per label."
    )


def sorted_labels(values, *, owner: str, source: str, where=None) -> list:
    """The distinct ``values`` in scikit-learn's ``classes_`` order.

    Labels of types that do not sort together (``1`` beside ``"1"``) raise,
    naming the first label of another type than the first label's and where
    it is: ``where(position)`` (a table's :meth:`AnnotationTable.row`), else
    its position in ``values``.
    """
    flat = np.asarray(values).ravel()
    unique = pd.unique(flat).tolist()
    try:
        return sorted(unique)
    except TypeError:  # e.g. str and int labels
        kinds = sorted({type(v).__name__ for v in unique})
        labels = flat.tolist()

        def kind(v):  # numbers sort together, whatever their type
            return Number if isinstance(v, Number) else type(v)

        odd = next(i for i, v in enumerate(labels) if kind(v) is not kind(labels[0]))
        at = where(odd) if where is not None else f"position {odd}"
        raise ValueError(
            f"{owner}: {source} mixes labels of types {kinds} that cannot be "
            f"sorted into classes: {at} holds {labels[odd]!r} "
            f"({type(labels[odd]).__name__}) where the first label is "
            f"{labels[0]!r} ({type(labels[0]).__name__}); give every label one "
            "type, or pass classes= (the classes in order)."
        ) from None


def annotation_classes(
    table: AnnotationTable, values, classes=None, *, source: str
) -> np.ndarray:
    """The classes: ``classes`` checked (in its order), else the sorted labels.

    Raises unless there are at least two (a class nobody chose must be
    named by ``classes=``).
    """
    owner = table.owner
    if classes is not None:
        try:
            classes = check_class_names(
                classes, param="classes", of="the predicted distributions"
            )
        except ValueError as exc:
            raise ValueError(f"{owner}: {exc}") from None
        if len(classes) < 2:
            raise ValueError(
                f"{owner}: classes={classes.tolist()} names {len(classes)} "
                "class(es); at least two are needed (every class of the scale, "
                "including those nobody chose)."
            )
        return classes
    observed = sorted_labels(values, owner=owner, source=source, where=table.row)
    if len(observed) < 2:
        raise ValueError(
            f"{owner}: {source} holds {len(observed)} class(es) {observed}; at "
            "least two are needed. Pass classes= naming every class of the "
            "scale, including those nobody chose."
        )
    return np.asarray(observed)


def label_codes(
    table: AnnotationTable,
    values,
    classes,
    *,
    source: str,
    rows=None,
    fitted: bool = False,
) -> np.ndarray:
    """The position in ``classes`` of each label; one outside them raises.

    ``rows`` gives each value's row of the table when there are not one
    per row (the labels of label sets, flattened). ``fitted`` says that
    ``classes`` are the fitted ``classes_`` rather than ``classes=``.
    """
    values = np.asarray(values)
    codes = pd.Index(classes).get_indexer(values)
    unknown = codes < 0
    if unknown.any():
        first = int(np.flatnonzero(unknown)[0])
        row = first if rows is None else int(rows[first])
        shown = list(dict.fromkeys(plain(v) for v in values[unknown].tolist()))
        origin = "the fitted classes_" if fitted else "classes="
        raise ValueError(
            f"{table.owner}: {source} at {table.row(row)} holds "
            f"{plain(values[first])!r}, not among the classes "
            f"{np.asarray(classes).tolist()} ({origin}); {int(unknown.sum())} "
            f"label(s) outside them in all: {shown[:SHOW]}."
        )
    return codes.astype(np.intp)
