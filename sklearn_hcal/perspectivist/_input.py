"""The input checks that only :class:`PerspectivistClassifier` needs.

The long table itself -- a DataFrame, its key columns, no missing or blank
item or annotator, no repeated pair, one label per row, the classes and a
label outside them -- is read by the estimators' one reader of long tables
(:func:`sklearn_hcal._validation.read_annotation_table` and its helpers,
developer guide §estimators), as the aggregators read it, so that one bad
table gets one error. ``sample_weight`` goes through the front end's first
level (``ItemWeightsMixin._item_weights``). What stays here is the
classifier's own:

* :func:`check_table` -- a plain feature matrix when ``item`` and
  ``annotator`` are None (every row its own item); no target column among
  the features (it would leak the label);
* :func:`check_labels` -- ``y``: 1-D labels (single-label), or the labels
  chosen by each annotator as tuples/lists/sets or a 0/1 indicator matrix
  (multi-label); the classes sorted (the scale's order);
* :func:`check_predict_table` -- ``X`` at prediction: the fitted columns,
  except those that may be missing (``optional_columns``), which send their
  rows to a model fitted without them;
* :func:`resolve_scale` -- whether the scale is ordinal and which Bayes
  decision ``predict`` makes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence, Set
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import check_classification_targets

from .._validation import (
    AnnotationTable,
    annotation_classes,
    annotation_labels,
    check_binary,
    frame_names,
    label_codes,
    read_annotation_table,
    rows_table,
    sorted_labels,
)
from ..metrics._shared import is_ordinal_scale
from ..utils._compat import num_samples

__all__ = [
    "FitInput",
    "as_sequence",
    "check_labels",
    "check_predict_table",
    "check_table",
    "require_frame",
    "resolve_scale",
    "seen_annotators",
]

#: Columns of :func:`~sklearn_hcal.datasets.load_lewidi`'s ``frame`` that
#: hold the target: as features they would leak it.
TARGET_COLUMNS = ("label", "raw_label")
OWNER = "PerspectivistClassifier"
_SHOW = 5


def check_table(X, *, item, annotator, y=None) -> AnnotationTable:
    """``X`` read as a long table (or the rows of a plain feature matrix).

    With ``item`` and ``annotator`` both None a non-DataFrame ``X`` is a
    plain feature matrix, every row its own item. A column holding the
    target (``label``, ``raw_label`` or ``y``'s name) is refused.
    """
    if item is None and annotator is None and not isinstance(X, pd.DataFrame):
        return rows_table(num_samples(X), owner=OWNER)
    table = read_annotation_table(X, item=item, annotator=annotator, owner=OWNER)
    leaked = [c for c in TARGET_COLUMNS if c in X.columns]
    target = getattr(y, "name", None)
    if isinstance(target, Hashable) and target is not None and target in X.columns:
        leaked.append(target)
    if leaked:
        raise ValueError(
            f"{OWNER}: X holds the target column {leaked[0]!r}: as a feature it "
            f"would leak the label. Drop it: X = frame.drop(columns={leaked[:1]!r})."
        )
    return table


def require_frame(X) -> None:
    """A ``TypeError`` unless ``X`` is a DataFrame (the estimators that read
    columns by name: the transformer, the ensemble)."""
    if not isinstance(X, pd.DataFrame):
        raise TypeError(
            f"X must be a DataFrame (the long table of annotations), got "
            f"{type(X).__name__}."
        )


def seen_annotators(X: pd.DataFrame, annotator) -> np.ndarray | None:
    """The annotators of ``X`` in order of appearance (``annotators_``);
    None without an annotator column."""
    if annotator is None:
        return None
    return np.asarray(pd.unique(X[annotator]), dtype=object)


@dataclass
class FitInput:
    """What :meth:`PerspectivistClassifier.fit` works with."""

    target: np.ndarray  # 1-D labels, or (n, n_labels) 0/1 indicators
    classes: np.ndarray
    multilabel: bool
    label_format: str  # "labels", "tuple" or "indicator"


def _is_label_set(value) -> bool:
    return isinstance(value, (list, tuple, Set, np.ndarray))


def check_labels(
    y, table: AnnotationTable, *, classes=None, fitted: bool = False
) -> FitInput:
    """The target of ``fit`` (or ``score``), its classes and its kind.

    Label sets are recognised in a Series or a 1-D object array (the
    ``label`` column of a multi-label ``frame``) and in a list of tuples or
    lists of labels; a 2-D array and a list of equal-length rows of numbers
    are 0/1 indicator matrices, as in scikit-learn. ``fitted``: ``classes``
    are the fitted ``classes_``.
    """
    if y is None:
        raise ValueError(
            f"{OWNER} requires y to be passed, but the target y is None (pass "
            "each row's label, e.g. frame['label'])."
        )
    names = frame_names(y, name="y") if isinstance(y, pd.DataFrame) else None
    values, source = annotation_labels(table, y, matrix=True)
    if values.ndim == 2:
        return _indicator_target(values, names, classes, table)
    is_set = np.fromiter(map(_is_label_set, values), dtype=bool, count=len(values))
    if is_set.all():
        return _set_target(values, classes, table, fitted)
    if is_set.any():
        # the first row of the other kind than row 0's, named with its value
        odd = int(np.flatnonzero(is_set != is_set[0])[0])
        kinds = ("a single label", "a label set")
        raise ValueError(
            f"{OWNER}: y mixes label sets and single labels: y at "
            f"{table.row(odd)} is {values[odd]!r} ({kinds[int(is_set[odd])]}) "
            f"while y at {table.row(0)} is {values[0]!r} "
            f"({kinds[int(is_set[0])]}); give every row a label set (a single label "
            "as a 1-tuple) or every row one label."
        )
    scale = annotation_classes(table, values, classes, source=source)
    if classes is None:
        check_classification_targets(values)  # "continuous" targets raise
    label_codes(table, values, scale, source=source, fitted=fitted)
    return FitInput(values, _in_order(scale), False, "labels")


def _in_order(classes) -> np.ndarray:
    """The classes in scikit-learn's ``classes_`` order (a scale's order)."""
    return np.asarray(sorted_labels(classes, owner=OWNER, source="classes"))


def _set_target(values, classes, table, fitted) -> FitInput:
    chosen = [list(v) for v in values]
    flat = np.empty(sum(len(r) for r in chosen), dtype=object)
    flat[:] = [lab for row in chosen for lab in row]
    rows = np.repeat(np.arange(len(chosen)), [len(r) for r in chosen])
    given = annotation_classes(table, flat, classes, source="y")
    codes = label_codes(table, flat, given, source="y", rows=rows, fitted=fitted)
    labels = np.asarray(_in_order(given).tolist(), dtype=object)
    to_sorted = pd.Index(labels).get_indexer(np.asarray(given, dtype=object))
    target = np.zeros((len(chosen), len(labels)), dtype=np.int64)
    target[rows, to_sorted[codes]] = 1
    return FitInput(target, labels, True, "tuple")


def _indicator_target(values, names, classes, table) -> FitInput:
    try:
        target = values.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{OWNER}: a 2-D y is a multi-label indicator matrix (one 0/1 column "
            f"per label); it holds non-numbers, e.g. {values.ravel()[0]!r}."
        ) from None
    check_binary(
        target,
        lambda pos, col: (
            f"{OWNER}: y (a multi-label indicator) at {table.row(pos)}, column {col}"
        ),
        raw=values,
    )
    labels = list(range(target.shape[1])) if names is None else list(names)
    if classes is not None:
        given = list(np.asarray(classes, dtype=object).ravel())
        if names is None and len(given) == target.shape[1]:
            labels = given  # the labels of the columns, in order
        elif sorted(map(str, given)) != sorted(map(str, labels)):
            raise ValueError(
                f"{OWNER}: classes {given} do not name the {target.shape[1]} "
                f"columns of y {labels}."
            )
    if len(labels) < 2:
        raise ValueError(f"{OWNER}: a multi-label y needs at least two label columns.")
    return FitInput(
        target.astype(np.int64), np.asarray(labels, dtype=object), True, "indicator"
    )


def check_predict_table(
    X, *, item, annotator, fitted_columns, optional
) -> AnnotationTable:
    """``X`` at prediction: keys checked, fitted columns present.

    Columns in ``optional`` may be absent; every other column the model was
    fitted on must be there.
    """
    table = check_table(X, item=item, annotator=annotator)
    if not isinstance(X, pd.DataFrame) or fitted_columns is None:
        return table
    absent = [c for c in fitted_columns if c not in X.columns and c not in optional]
    if absent:
        raise ValueError(
            f"{OWNER}: X lacks the columns {absent[:_SHOW]} the model was fitted "
            f"on; its columns are {list(X.columns)}. Only {list(optional)} may be "
            "missing (optional_columns=)."
        )
    return table


def resolve_scale(classes, multilabel: bool, ordinal, decision):
    """``(ordinal, decision)`` after ``"auto"`` (developer guide §perspectivist)."""
    numeric = all(
        isinstance(c, (int, float, np.integer, np.floating)) and not isinstance(c, bool)
        for c in classes
    )
    if multilabel:
        if ordinal is True:
            raise ValueError("ordinal=True does not apply to a multi-label target.")
        is_ordinal = False
    elif ordinal == "auto":
        is_ordinal = is_ordinal_scale(classes)
    else:
        is_ordinal = bool(ordinal)
        if is_ordinal and not numeric:
            raise ValueError(
                f"ordinal=True needs a numeric scale (its order); the classes are "
                f"{list(classes)[:_SHOW]}. Map them onto numbers in scale order."
            )
    if decision == "auto":
        decision = "threshold" if multilabel else "median" if is_ordinal else "mode"
    allowed = {"threshold"} if multilabel else {"mode", "median"}
    if decision not in allowed:
        reason = (
            "a multi-label target takes per-label thresholds"
            if multilabel
            else "per-label thresholds need a multi-label target"
        )
        raise ValueError(f"decision={decision!r}: {reason}; use one of {allowed}.")
    if decision == "median" and not is_ordinal:
        raise ValueError(
            "decision='median' needs an ordinal scale (numeric classes, more than "
            "two, or ordinal=True)."
        )
    return is_ordinal, decision


def as_sequence(columns) -> list:
    """``optional_columns`` as a list (a string is one column)."""
    if columns is None:
        return []
    if isinstance(columns, str) or not isinstance(columns, Sequence):
        return [columns]
    return list(columns)
