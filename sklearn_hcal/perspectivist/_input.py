"""Every input check of :class:`PerspectivistClassifier`, in one module.

The estimator's front end: what a long table of annotations is, what its
target is, and how predictions are matched back to it. Kept in one module
(built on :mod:`sklearn_hcal._validation`) so that it can move onto the
estimators' shared front end without touching the model:

* :func:`check_table` -- ``X`` is one row per (item, annotator): a
  DataFrame with the ``item`` and ``annotator`` columns (an array-like only
  when both are None); no missing key, no repeated pair, no target column
  among the features; the row is named in every error (its position and
  index label, its item and annotator);
* :func:`check_labels` -- ``y``: 1-D labels (single-label), or the labels
  chosen by each annotator as tuples/lists/sets or a 0/1 indicator matrix
  (multi-label); a missing label or a label outside ``classes`` is refused
  naming its row;
* :func:`check_weights` -- ``sample_weight``, one weight per row;
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
from sklearn.utils.validation import column_or_1d

from .._validation import check_item_weights, frame_names
from ..utils._compat import num_samples

__all__ = [
    "FitInput",
    "as_sequence",
    "check_labels",
    "check_predict_table",
    "check_table",
    "check_weights",
    "is_missing",
    "resolve_scale",
]

#: Columns of :func:`~sklearn_hcal.datasets.load_lewidi`'s ``frame`` that
#: hold the target: as features they would leak it.
TARGET_COLUMNS = ("label", "raw_label")
_SHOW = 5


def _row(X, position: int, item=None, annotator=None) -> str:
    """``row 12 (index 40; item '7', annotator 'Ann2')``."""
    index = X.index[position] if isinstance(X, pd.DataFrame) else position
    text = f"row {position}"
    if index != position:
        text += f" (index {index!r}"
        text += "; " if item is not None or annotator is not None else ")"
    elif item is not None or annotator is not None:
        text += " ("
    keys = []
    if item is not None:
        keys.append(f"item {X[item].iloc[position]!r}")
    if annotator is not None:
        keys.append(f"annotator {X[annotator].iloc[position]!r}")
    if keys:
        text += ", ".join(keys) + ")"
    return text


def is_missing(values: pd.Series) -> np.ndarray:
    """Missing or blank entries of a column (NaN, None, ``""``, spaces)."""
    missing = values.isna().to_numpy(dtype=bool, copy=True)
    text = values.dtype == object or pd.api.types.is_string_dtype(values.dtype)
    if text:
        blank = values.astype(object).map(
            lambda v: isinstance(v, str) and not v.strip()
        )
        missing |= blank.to_numpy(dtype=bool)
    return missing


def check_table(X, *, item, annotator, y=None, name="X"):
    """``X`` as a DataFrame, its keys checked (see the module docstring)."""
    if item is None and annotator is None and not isinstance(X, pd.DataFrame):
        return X  # a plain feature matrix: every row its own item
    if not isinstance(X, pd.DataFrame):
        raise ValueError(
            f"{name} must be a DataFrame with one row per (item, annotator) and "
            f"the columns item={item!r} and annotator={annotator!r} (e.g. "
            f"load_lewidi(path).frame without its label), got "
            f"{type(X).__name__}."
        )
    if X.columns.duplicated().any():
        dup = X.columns[X.columns.duplicated()][0]
        raise ValueError(f"{name} has the column {dup!r} twice.")
    if len(X) == 0:
        raise ValueError(
            f"{name} has 0 rows (shape={X.shape}); a minimum of 1 is required."
        )
    keys = [k for k in (item, annotator) if k is not None]
    if item is not None and item == annotator:
        raise ValueError("item and annotator must name different columns.")
    missing = [k for k in keys if k not in X.columns]
    if missing:
        raise ValueError(
            f"{name} has no column {missing[0]!r} (the {_role(missing[0], item)} "
            f"column); its columns are {list(X.columns)}. Name yours with "
            f"{_role(missing[0], item)}=."
        )
    leaked = [c for c in TARGET_COLUMNS if c in X.columns]
    target = getattr(y, "name", None)
    if isinstance(target, Hashable) and target is not None and target in X.columns:
        leaked.append(target)
    if leaked:
        raise ValueError(
            f"{name} holds the target column {leaked[0]!r}: as a feature it would "
            f"leak the label. Drop it: X = frame.drop(columns={leaked[:1]!r})."
        )
    for key in keys:
        bad = is_missing(X[key])
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            what = "an item" if key == item else "an annotator"
            raise ValueError(
                f"{name} {_row(X, pos)} has no {_role(key, item)} (column "
                f"{key!r} is {X[key].iloc[pos]!r}); every row is {what}'s."
            )
    if len(keys) == 2:
        dup = X.duplicated(subset=keys, keep=False).to_numpy()
        if dup.any():
            pos = int(np.flatnonzero(dup)[0])
            raise ValueError(
                f"{name} has {int(dup.sum())} rows repeating an (item, annotator) "
                f"pair, first {_row(X, pos, item, annotator)}; one row per pair."
            )
    return X


def _role(key, item) -> str:
    return "item" if key == item else "annotator"


@dataclass
class FitInput:
    """What :meth:`PerspectivistClassifier.fit` works with."""

    target: np.ndarray  # 1-D labels, or (n, n_labels) 0/1 indicators
    classes: np.ndarray
    multilabel: bool
    label_format: str  # "labels", "tuple" or "indicator"


def _is_label_set(value) -> bool:
    return isinstance(value, (list, tuple, Set, np.ndarray))


def check_labels(y, X, *, item, annotator, classes=None) -> FitInput:
    """The target of ``fit``, its classes and its kind (module docstring).

    Label sets are recognised in a Series or a 1-D object array (the
    ``label`` column of a multi-label ``frame``) and in a ragged list; a 2-D
    array and a list of equal-length rows are 0/1 indicator matrices, as in
    scikit-learn.
    """
    if y is None:
        raise ValueError(
            "PerspectivistClassifier requires y to be passed, but the target y is "
            "None (pass each row's label, e.g. frame['label'])."
        )
    n = num_samples(X)
    frame = X if isinstance(X, pd.DataFrame) else None
    where = (
        (lambda pos: _row(frame, pos, item, annotator))
        if frame is not None
        else (lambda pos: f"row {pos}")
    )
    names = frame_names(y, name="y") if isinstance(y, pd.DataFrame) else None
    values = y.to_numpy() if hasattr(y, "to_numpy") else y
    if isinstance(values, (list, tuple)):
        # scikit-learn's convention: a list of equal-length rows is an
        # indicator matrix; only ragged rows are label sets
        try:
            values = np.asarray(values)
        except ValueError:
            values = np.asarray(list(values) + [None], dtype=object)[:-1]
    else:
        values = np.asarray(values)
    if values.ndim == 2 and values.shape[1] == 1 and names is None:
        values = column_or_1d(values, warn=True)  # scikit-learn's column rule
    if values.ndim not in (1, 2) or values.shape[0] != n:
        raise ValueError(
            f"y must hold one label per row of X ({n} rows), got shape {values.shape}."
        )
    if values.ndim == 2:
        return _indicator_target(values, names, classes, where)
    if len(values) and all(_is_label_set(v) for v in values):
        return _set_target(values, classes, where)
    sets = [i for i, v in enumerate(values) if _is_label_set(v)]
    if sets:
        raise ValueError(
            f"y mixes label sets and single labels: y at {where(sets[0])} is "
            f"{values[sets[0]]!r} while y at row 0 is {values[0]!r}."
        )
    missing = pd.isna(pd.Series(values, dtype=object)).to_numpy()
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"y at {where(pos)} is missing ({values[pos]!r}); every row of the "
            "training table needs its annotator's label (drop unlabelled rows, "
            "e.g. frame.dropna(subset=['label']))."
        )
    if classes is None:
        check_classification_targets(values)  # "continuous" targets raise
    observed = _sorted_unique(values)
    if len(observed) < 2 and classes is None:
        raise ValueError(
            f"y holds one class only ({observed[0]!r}); a classifier needs at "
            "least two (pass classes= to name the scale)."
        )
    scale = observed if classes is None else _check_scale(classes)
    _check_in_scale(values, scale, where)
    return FitInput(values, np.asarray(scale), False, "labels")


def _sorted_unique(values) -> list:
    unique = list(dict.fromkeys(values.tolist()))
    try:
        return sorted(unique)
    except TypeError:  # mixed types: strings and numbers
        raise ValueError(
            f"y mixes labels of different types, e.g. {unique[:_SHOW]}; give "
            "every label the same type."
        ) from None


def _check_scale(classes) -> list:
    scale = list(np.asarray(classes, dtype=object).ravel())
    if len(set(scale)) != len(scale):
        dup = next(c for c in scale if scale.count(c) > 1)
        raise ValueError(f"classes names {dup!r} twice: {scale}.")
    if len(scale) < 2:
        raise ValueError(f"classes must name at least two classes, got {scale}.")
    return _sorted_unique(np.asarray(scale, dtype=object))


def _check_in_scale(values, scale, where) -> None:
    known = set(scale)
    outside = np.array([v not in known for v in values.tolist()])
    if outside.any():
        pos = int(np.flatnonzero(outside)[0])
        raise ValueError(
            f"y at {where(pos)} is {values[pos]!r}, a label outside the scale "
            f"{list(scale)} (classes=)."
        )


def _set_target(values, classes, where) -> FitInput:
    chosen = [list(v) for v in values]
    seen = _sorted_unique(np.asarray([lab for row in chosen for lab in row], object))
    labels = seen if classes is None else _check_scale(classes)
    known = set(labels)
    for pos, row in enumerate(chosen):
        bad = [lab for lab in row if lab not in known]
        if bad:
            raise ValueError(
                f"y at {where(pos)} holds the label {bad[0]!r}, outside the "
                f"labels {list(labels)} (classes=)."
            )
    if len(labels) < 2:
        raise ValueError(
            f"y names {len(labels)} label(s) {list(labels)}; a multi-label "
            "target needs at least two (pass classes=)."
        )
    index = {lab: j for j, lab in enumerate(labels)}
    target = np.zeros((len(chosen), len(labels)), dtype=np.int64)
    rows = np.repeat(np.arange(len(chosen)), [len(r) for r in chosen])
    cols = np.array([index[lab] for row in chosen for lab in row], dtype=np.intp)
    target[rows, cols] = 1
    return FitInput(target, np.asarray(labels, dtype=object), True, "tuple")


def _indicator_target(values, names, classes, where) -> FitInput:
    try:
        target = values.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            "A 2-D y is a multi-label indicator matrix (one 0/1 column per "
            f"label); it holds non-numbers, e.g. {values.ravel()[0]!r}."
        ) from None
    bad = ~np.isin(target, (0.0, 1.0))
    if bad.any():
        pos, col = np.argwhere(bad)[0]
        raise ValueError(
            f"y at {where(int(pos))}, column {col}: {values[pos, col]!r} is not "
            "0 or 1 (a multi-label indicator)."
        )
    labels = list(range(target.shape[1])) if names is None else list(names)
    if classes is not None:
        given = list(np.asarray(classes, dtype=object).ravel())
        if names is None and len(given) == target.shape[1]:
            labels = given  # the labels of the columns, in order
        elif sorted(map(str, given)) != sorted(map(str, labels)):
            raise ValueError(
                f"classes {given} do not name the {target.shape[1]} columns of "
                f"y {labels}."
            )
    if len(labels) < 2:
        raise ValueError("A multi-label y needs at least two label columns.")
    return FitInput(
        target.astype(np.int64), np.asarray(labels, dtype=object), True, "indicator"
    )


def check_weights(sample_weight, X):
    """One non-negative finite weight per row (None passes)."""
    return check_item_weights(sample_weight, X)


def check_predict_table(X, *, item, annotator, fitted_columns, optional):
    """``X`` at prediction: keys checked, fitted columns present.

    Columns in ``optional`` may be absent; every other column the model was
    fitted on must be there.
    """
    X = check_table(X, item=item, annotator=annotator)
    if not isinstance(X, pd.DataFrame) or fitted_columns is None:
        return X
    absent = [c for c in fitted_columns if c not in X.columns and c not in optional]
    if absent:
        raise ValueError(
            f"X lacks the columns {absent[:_SHOW]} the model was fitted on; its "
            f"columns are {list(X.columns)}. Only {list(optional)} may be "
            "missing (optional_columns=)."
        )
    return X


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
        is_ordinal = numeric and len(classes) > 2
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
