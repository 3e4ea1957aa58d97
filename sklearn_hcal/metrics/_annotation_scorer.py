"""Scoring annotator-level predictions on held-out annotations.

An aggregator (:mod:`sklearn_hcal.aggregation`) or a perspectivist
classifier predicts, for an (item, annotator) pair, the distribution of the
label that annotator gives that item. Held-out annotations are the honest
yardstick for such predictions: hold some annotations out (one per item, or
whole annotators: :mod:`sklearn_hcal.model_selection`), fit on the rest and
score the predicted distributions of the held-out labels with a proper
scoring rule. :func:`make_annotation_scorer` is that scorer.

The estimator is duck-typed: ``predict_annotator_proba(X)`` when it (or a
Pipeline's final step) has it, else ``predict_proba(X)``; its columns are
the estimator's ``classes_``. Nothing here imports the estimators (the
metrics layer sits below them, developer guide §layers).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import PROBA_FLOOR, check_binary, check_probabilities, refuse_first
from ..utils._compat import Scorer
from ..utils._pipeline import final_estimator, get_method

__all__ = [
    "annotation_loss",
    "held_out_label_sets",
    "held_out_labels",
    "make_annotation_scorer",
    "multilabel_annotation_loss",
]

#: The losses the scorer computes, by the name of scikit-learn's function.
ANNOTATION_LOSSES = ("log_loss", "brier_score_loss")


def annotation_loss(codes: np.ndarray, proba: np.ndarray, metric: str) -> float:
    """Mean loss of the predicted distributions ``proba`` of labels ``codes``.

    ``codes[n]`` is the column of ``proba`` of row ``n``'s label.
    ``"log_loss"`` is ``−mean log p`` (probabilities floored at
    ``PROBA_FLOOR``, developer guide §tolerances); ``"brier_score_loss"`` is
    ``mean Σ_k (p_k − 1[k = label])²``, halved for two classes, as
    :func:`sklearn.metrics.brier_score_loss` (``scale_by_half="auto"``).
    """
    rows = np.arange(len(codes))
    if metric == "log_loss":
        return float(-np.mean(np.log(np.maximum(proba[rows, codes], PROBA_FLOOR))))
    diff = proba.copy()
    diff[rows, codes] -= 1.0
    loss = float(np.mean(np.einsum("ij,ij->i", diff, diff)))
    return loss / 2 if proba.shape[1] == 2 else loss


def multilabel_annotation_loss(target: np.ndarray, proba: np.ndarray, metric: str):
    """Mean loss over annotations and labels of independent yes/no predictions.

    ``target[n, l]`` is 1 when annotation ``n`` chose label ``l``;
    ``proba[n, l]`` the predicted probability that it does. Each (annotation,
    label) cell is a binary prediction scored as scikit-learn scores one:
    ``"log_loss"`` ``−mean[y log p + (1 − y) log(1 − p)]`` (probabilities
    floored at ``PROBA_FLOOR`` from both ends), ``"brier_score_loss"``
    ``mean (p − y)²``. A sum of proper scores, so proper.
    """
    if metric == "log_loss":
        chosen = np.where(target == 1, proba, 1.0 - proba)
        return float(-np.mean(np.log(np.maximum(chosen, PROBA_FLOOR))))
    return float(np.mean((proba - target) ** 2))


def held_out_label_sets(X, y, *, label, classes, owner: str) -> np.ndarray:
    """The held-out labels of a multi-label estimator as a 0/1 matrix.

    The labels are a label set per row (tuples, lists, sets: a multi-label
    ``frame``'s ``label`` column) or a 0/1 indicator matrix whose columns are
    ``classes`` (a DataFrame's by name). Raises a ValueError naming the row
    of a single label, a missing value or a label outside ``classes``.
    """
    values, source = _label_values(X, y, label, owner)
    classes = np.asarray(classes)
    names = list(classes.tolist())
    if values.ndim == 2:
        if isinstance(y, pd.DataFrame) and not isinstance(y.columns, pd.RangeIndex):
            values = y.reindex(columns=names).to_numpy()
        if values.shape[1] != len(names):
            raise ValueError(
                f"{owner}: the held-out labels ({source}) have {values.shape[1]} "
                f"columns but the estimator has {len(names)} labels {names}."
            )
        target = pd.DataFrame(values).to_numpy(dtype=np.float64, na_value=np.nan)
        check_binary(
            target,
            lambda row, col: (
                f"{owner}: the held-out labels ({source}) at row {row}, label "
                f"{names[col]!r}"
            ),
        )
        return target
    is_set = np.fromiter(
        (isinstance(v, (list, tuple, set, frozenset, np.ndarray)) for v in values),
        dtype=bool,
        count=len(values),
    )
    refuse_first(
        ~is_set,
        lambda row: (
            f"{owner}: the estimator is multi-label (its classes_ {names} are "
            "labels an annotation chooses or not), so the held-out labels "
            f"({source}) must be label sets or a 0/1 matrix; row {row} holds "
            f"{values[row]!r}."
        ),
    )
    flat = pd.Series(values, dtype=object).explode().dropna()
    codes = pd.Index(classes).get_indexer(flat.to_numpy())
    refuse_first(
        codes < 0,
        lambda first: (
            f"{owner}: held-out label {flat.iloc[first]!r} at row "
            f"{int(flat.index[first])} ({source}) is not among the estimator's "
            f"labels {names}."
        ),
    )
    target = np.zeros((len(values), len(names)))
    target[flat.index.to_numpy(dtype=np.intp), codes] = 1.0
    return target


def _label_values(X, y, label, owner: str) -> tuple:
    """The held-out labels as given (from ``y``, else ``X[label]``), their source."""
    if y is None:
        if not isinstance(X, pd.DataFrame) or label not in X.columns:
            columns = list(X.columns) if isinstance(X, pd.DataFrame) else None
            raise ValueError(
                f"{owner}: y is None, so the held-out labels are read from X's "
                f"column {label!r}, which X lacks (columns: {columns}); pass y or "
                "label= (the name of X's label column)."
            )
        return X[label].to_numpy(), f"X's column {label!r}"
    values = y.to_numpy() if hasattr(y, "to_numpy") else y
    if isinstance(values, (list, tuple)):
        # a list of label sets stays one object per row (numpy would pad
        # equal-length tuples into a matrix of labels)
        values = np.asarray(list(values) + [None], dtype=object)[:-1]
    return np.asarray(values), "y"


def held_out_labels(X, y, *, label, classes, owner: str) -> np.ndarray:
    """The column of ``classes`` of each held-out label (from ``y`` or ``X``).

    Raises a ValueError naming the row of a missing label or of a label
    outside ``classes``.
    """
    values, source = _label_values(X, y, label, owner)
    if values.ndim != 1:
        raise ValueError(
            f"{owner}: the held-out labels ({source}) must be 1-D, got shape "
            f"{values.shape}."
        )
    missing = pd.isna(values)
    if missing.any():
        raise ValueError(
            f"{owner}: the held-out labels ({source}) hold a missing value at row "
            f"{int(np.flatnonzero(missing)[0])}."
        )
    codes = pd.Index(np.asarray(classes)).get_indexer(values)
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        value = (
            values[row].item() if isinstance(values[row], np.generic) else values[row]
        )
        raise ValueError(
            f"{owner}: held-out label {value!r} at row {row} ({source}) is "
            f"not among the estimator's classes_ {np.asarray(classes).tolist()}."
        )
    return codes


def _check_rows(owner: str, n_labels: int, proba: np.ndarray) -> None:
    if proba.shape[0] != n_labels:
        raise ValueError(
            f"{owner}: {n_labels} held-out labels but {proba.shape[0]} "
            "predicted distributions."
        )


class _AnnotationScorer(Scorer):
    """Negative log loss or Brier score of annotator-level predictions."""

    def __init__(self, metric: str, label):
        # both methods, in order of preference: scikit-learn's multimetric
        # scoring looks the response method up on the estimator before any
        # scorer runs, and a single name failed for a classifier of rows
        # (it has predict_proba only) as soon as two scorers were given
        super().__init__(
            annotation_loss, -1, {}, ["predict_annotator_proba", "predict_proba"]
        )
        self._metric = metric
        self._label = label

    def __call__(self, estimator, X, y_true=None, **kwargs):
        # y is optional: the labels may be a column of X
        return super().__call__(estimator, X, y_true, **kwargs)

    def _score(self, method_caller, estimator, X, y_true=None, **kwargs):
        owner = f"make_annotation_scorer({self._metric!r})"
        final = final_estimator(estimator)
        method = get_method(estimator, "predict_annotator_proba")
        if method is None:
            method = get_method(estimator, "predict_proba")
        if method is None:
            raise ValueError(
                f"{owner}: {type(final).__name__} has neither predict_annotator_proba "
                "nor predict_proba (looked up on the estimator and, through "
                "Pipelines, on the final step)."
            )
        classes = getattr(final, "classes_", None)
        if classes is None:
            raise ValueError(f"{owner}: {type(final).__name__} has no classes_.")
        label = (
            self._label if self._label is not None else getattr(final, "label", None)
        )
        label = "label" if label is None else label
        if getattr(final, "multilabel_", False):
            return self._sign * self._multilabel_loss(
                method, X, y_true, label, classes, owner
            )
        codes = held_out_labels(X, y_true, label=label, classes=classes, owner=owner)
        proba = check_probabilities(
            method(X),
            name="the predicted annotator distributions",
            n_classes=len(classes),
        )
        _check_rows(owner, len(codes), proba)
        return self._sign * annotation_loss(codes, proba, self._metric)

    def _multilabel_loss(self, method, X, y_true, label, classes, owner) -> float:
        # a multi-label estimator (a PerspectivistClassifier fitted on label
        # sets) predicts, per label, the probability that the annotator
        # chooses it: each label is scored as a yes/no prediction
        target = held_out_label_sets(
            X, y_true, label=label, classes=classes, owner=owner
        )
        proba = np.asarray(method(X), dtype=np.float64)
        if proba.ndim != 2 or proba.shape[1] != target.shape[1]:
            raise ValueError(
                f"{owner}: the estimator is multi-label with {target.shape[1]} "
                f"labels, but its predictions have shape {proba.shape}."
            )
        _check_rows(owner, len(target), proba)
        refuse_first(
            ~((proba >= 0.0) & (proba <= 1.0)),
            lambda row, col: (
                f"{owner}: the predicted probability of label "
                f"{np.asarray(classes).tolist()[col]!r} at row {row} is "
                f"{proba[row, col].item()!r}, not in [0, 1]."
            ),
        )
        return multilabel_annotation_loss(target, proba, self._metric)

    def __repr__(self):
        label = "" if self._label is None else f", label={self._label!r}"
        return f"make_annotation_scorer({self._metric!r}{label})"


def make_annotation_scorer(metric: str = "log_loss", *, label=None):
    """Scorer of annotator-level predictions on held-out annotations.

    For each held-out annotation (a row of ``X``: an item, an annotator and
    the label given) the estimator predicts the distribution of that
    annotator's label on that item: ``predict_annotator_proba(X)`` when the
    estimator (or a Pipeline's final step) has it (the aggregators of
    :mod:`sklearn_hcal.aggregation`), else ``predict_proba(X)`` (e.g. a
    classifier of (item, annotator) rows). The score is the mean over the
    held-out annotations of a proper scoring rule, negated so that greater
    is better, as scikit-learn's ``neg_log_loss`` and ``neg_brier_score``.

    A multi-label estimator (``multilabel_`` true: a
    :class:`~sklearn_hcal.perspectivist.PerspectivistClassifier` fitted on
    label sets) predicts, for each label, the probability that the annotator
    chooses it; its held-out labels are label sets (a multi-label
    ``frame``'s ``label`` column) or a 0/1 matrix, and each (annotation,
    label) pair is scored as a yes/no prediction: the mean over annotations
    and labels of the binary log loss or of ``(p − y)²``
    (:func:`sklearn.metrics.log_loss` and
    :func:`sklearn.metrics.brier_score_loss` of the flattened cells).

    Use it with a splitter that holds annotations out
    (:class:`~sklearn_hcal.model_selection.OneAnnotationPerItemSplit`,
    :class:`~sklearn_hcal.model_selection.AnnotatorKFold`) to choose an
    aggregator, its regularisation or a per-annotator classifier by the same
    yardstick.

    Parameters
    ----------
    metric : {"log_loss", "brier_score_loss"}, default="log_loss"
        ``log_loss``: ``−mean log p(label)`` (probabilities floored at
        1e-12); ``brier_score_loss``: ``mean Σ_k (p_k − 1[k = label])²``,
        halved for two classes, as :func:`sklearn.metrics.brier_score_loss`.
    label : hashable, default=None
        The column of ``X`` holding the held-out labels when the scorer is
        called with ``y=None``; None: the estimator's ``label`` parameter
        (the aggregators'), else ``"label"``. With ``y`` given, ``y`` holds
        the labels.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y=None)``: the negated mean loss.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn_hcal.aggregation import DawidSkene
    >>> from sklearn_hcal.metrics import make_annotation_scorer
    >>> from sklearn_hcal.model_selection import OneAnnotationPerItemSplit
    >>> X = pd.DataFrame({
    ...     "item": [i for i in range(20) for _ in range(4)],
    ...     "annotator": ["a", "b", "c", "d"] * 20,
    ...     "label": [0, 0, 0, 1, 1, 1, 1, 0] * 10})
    >>> scores = cross_validate(
    ...     DawidSkene(alpha=1.0), X, cv=OneAnnotationPerItemSplit(3, random_state=0),
    ...     scoring={"brier": make_annotation_scorer("brier_score_loss"),
    ...              "log": make_annotation_scorer("log_loss")})
    >>> bool((scores["test_brier"] < 0).all())
    True
    """
    if metric not in ANNOTATION_LOSSES:
        raise ValueError(
            f"metric={metric!r} is not an annotation loss; choose one of "
            f"{list(ANNOTATION_LOSSES)}."
        )
    return _AnnotationScorer(metric, label)
