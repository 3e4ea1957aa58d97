"""Targets of the estimators, matched to classes by name.

Every estimator of the package (:class:`~sklearn_hcal.SoftLabelClassifier`,
the calibrators, the conformal classifier and whatever is fitted on human
labels) takes the same targets (developer guide §data-conventions) and
resolves them here:

* a label histogram ``(n_samples, n_classes)`` -- an array, a sparse matrix or
  a DataFrame whose columns name the classes;
* 1-D class labels (or an ``(n, 1)`` column), one annotation per item;
* ``counts=`` (developer guide §scorers, convention B): histograms routed as
  metadata, which replace ``y``.

Classes travel by name (developer guide §class-names): a DataFrame's columns are aligned
with the reference classes (a wrapped classifier's ``classes_``) -- reordered,
or a ``ValueError`` when the two sets of names differ; an array's columns are
positional, or named by the estimator's ``classes`` parameter; labels are
looked up by name. A DataFrame with the default ``RangeIndex`` columns
(``pd.DataFrame(array)``) carries no names and counts as an array.

:class:`HumanTargetMixin` is the first level of the estimators' front end
(developer guide §estimators): what any estimator fitted on human labels
does with its targets, without anything about scores or wrapped
classifiers. An estimator with a ``classes`` parameter inherits it and
calls, in ``fit``::

    targets = self._read_targets(X, y, counts)   # counts replaces y; checked
    sample_weight = self._item_weights(sample_weight, X)
    Y = self._resolve_targets(targets, reference=..., n_classes=...)
    # Y: float64 (n_samples, n_classes) in the order of classes_ (set here)

and gets ``score`` (:class:`HumanScoreMixin`). Estimators whose ``X`` is a
classifier's output build on it (:mod:`._classifier_output`); an estimator
that needs only the item weights inherits :class:`ItemWeightsMixin`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_is_fitted,
    column_or_1d,
)

from .._validation import (
    check_class_names,
    check_label_histograms,
    check_weight_values,
    column_order,
    frame_names,
    is_histogram_target,
    labels_to_histograms,
    match_rows,
)
from ..utils._compat import check_sample_weight, num_samples

__all__ = [
    "HumanScoreMixin",
    "HumanTargetMixin",
    "ItemWeightsMixin",
    "Targets",
    "check_item_weights",
    "check_min_samples",
    "check_n_samples",
    "check_new_labels",
    "check_target",
    "human_score",
    "resolve_targets",
    "select_target",
]


def select_target(y, counts, *, owner: str | None = None):
    """``(target, name)``: ``counts`` replaces ``y`` when given (convention B).

    developer guide §scorers: with metadata routing ``y`` may be 1-D labels (for
    stratified splits) while the histograms travel as ``counts``; both must then have
    one row per sample. With ``owner`` (an estimator's name, in ``fit``) a
    missing target raises scikit-learn's "requires y to be passed" error.
    """
    if y is None and counts is None and owner is not None:
        raise ValueError(
            f"{owner} requires y to be passed, but the target y is None (pass "
            "class labels or label histograms, or the histograms as counts=)."
        )
    if counts is None:
        return y, "y"
    if y is not None:
        check_n_samples(counts, y, "counts", "y")
    return counts, "counts"


def check_n_samples(a, b, a_name: str, b_name: str) -> None:
    """Raise, naming both arguments, unless ``a`` and ``b`` have as many rows.

    scikit-learn's ``check_consistent_length`` names neither ("Found input
    variables with inconsistent numbers of samples: [3, 4]"), which leaves a
    user who passed ``X``, ``y`` and ``counts=`` guessing.
    """
    n_a, n_b = num_samples(a), num_samples(b)
    if n_a != n_b:
        raise ValueError(
            f"{a_name} and {b_name} have different numbers of samples: {n_a} and "
            f"{n_b} (one row per item in each)."
        )


def check_min_samples(n_samples: int, owner: str, minimum: int = 2) -> None:
    """Raise unless an estimator has at least ``minimum`` items to fit on."""
    if n_samples < minimum:
        raise ValueError(
            f"{owner} needs at least {minimum} samples to fit; got {n_samples} "
            f"sample(s) (n_samples={n_samples})."
        )


def check_item_weights(sample_weight, X):
    """Item weights as non-negative float64, one per sample of ``X`` (or None).

    The one rule for ``sample_weight`` of the estimators' ``fit`` and
    ``score``: it weighs items, never the rows a histogram is expanded into.
    """
    if sample_weight is None:
        return None
    # the row and value of a bad weight first (scikit-learn names neither)
    sample_weight = check_weight_values(sample_weight, num_samples(X))
    return check_sample_weight(
        sample_weight, X, dtype=np.float64, ensure_non_negative=True
    )


def check_target(y, *, name: str = "y"):
    """``(y, is_histogram)``: a dense histogram, or validated 1-D labels.

    Sparse histograms are densified (they have few columns); DataFrames are
    kept (their columns name the classes). Labels follow scikit-learn: an
    ``(n, 1)`` column warns and is raveled, continuous targets raise.
    """
    if y is None:
        raise ValueError(
            f"{name} is None; pass class labels or label histograms (or the "
            "histograms as counts=)."
        )
    if sp.issparse(y):
        if y.ndim != 2:
            raise ValueError(f"{name} is a sparse matrix of shape {y.shape}.")
        y = y.toarray()
    if is_histogram_target(y):
        return y, True
    raw = y.to_numpy() if hasattr(y, "to_numpy") else y
    try:
        raw = np.asarray(raw)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(
            f"{name} could not be read as labels or a label histogram: its rows "
            f"have different lengths ({exc})."
        ) from exc
    if raw.dtype == object and raw.ndim == 1 and len(raw) and _ragged(raw):
        raise ValueError(
            f"{name} could not be read as labels or a label histogram: its rows "
            "have different lengths."
        )
    if raw.ndim == 0:
        raise ValueError(f"{name} must be 1-D labels or a 2-D histogram, got a scalar.")
    if raw.ndim > 2:
        raise ValueError(
            f"{name} must be 1-D labels or a 2-D histogram, got shape {raw.shape}."
        )
    labels = column_or_1d(raw, warn=True)
    check_classification_targets(labels)
    return labels, False


def _ragged(values) -> bool:
    return any(isinstance(v, (list, tuple, np.ndarray)) for v in values[:100])


def resolve_targets(
    y,
    *,
    n_classes: int | None = None,
    reference=None,
    classes=None,
    allow_probabilities: bool = True,
    name: str = "y",
    reference_name: str = "the wrapped estimator's classes_",
):
    """Targets as a float64 histogram in the order of ``reference``.

    Parameters
    ----------
    y : array-like, DataFrame or 1-D labels
        As returned by :func:`check_target`.
    n_classes : int, default=None
        Expected number of columns (e.g. of the scores).
    reference : array-like of shape (n_classes,), default=None
        The classes of the predicted columns, in order (a wrapped classifier's
        ``classes_``). The histogram is put in this order.
    classes : array-like of shape (n_classes,), default=None
        The estimator's ``classes`` parameter: the names of an array's
        columns, and the classes of 1-D labels when there is no reference.
    allow_probabilities : bool, default=True
        Also accept rows of probabilities as targets.
    name, reference_name : str
        Used in error messages.

    Returns
    -------
    Y : ndarray of shape (n_samples, n_classes)
    classes_ : ndarray of shape (n_classes,)
        ``reference`` when given, else the names of ``y``'s columns (or
        ``classes``, the sorted labels, ``arange(n_classes)``).
    """
    if classes is not None:
        classes = check_class_names(classes, param="classes", of=name)
    if reference is not None:
        reference = np.asarray(reference)
    if not is_histogram_target(y):
        lookup = reference if reference is not None else classes
        if classes is not None and reference is not None:
            column_order(classes, reference, name="classes", target_name=reference_name)
        if lookup is None:
            return labels_to_histograms(
                y, n_classes=n_classes, name=name, classes_param="classes"
            )
        Y, _ = labels_to_histograms(
            y, classes=lookup, name=name, classes_param="classes"
        )
        if n_classes is not None and Y.shape[1] != n_classes:
            raise ValueError(
                f"classes has {Y.shape[1]} classes but the scores have {n_classes} "
                "columns (class-count mismatch)."
            )
        return Y, lookup
    Y = check_label_histograms(
        y,
        name=name,
        allow_probabilities=allow_probabilities,
        n_classes=n_classes,
        dtype=(np.float64,),
    )
    names = frame_names(y, name=name)
    if names is not None and classes is not None:
        order = column_order(names, classes, name=name, target_name="classes")
        names = classes
        if order is not None:
            Y = Y[:, order]
    elif names is None and classes is not None:
        if len(classes) != Y.shape[1]:
            raise ValueError(
                f"classes names {len(classes)} classes but {name} has {Y.shape[1]} "
                "columns."
            )
        names = classes
    if reference is None:
        return Y, (names if names is not None else np.arange(Y.shape[1]))
    if names is not None:
        try:
            order = column_order(
                names, reference, name=name, target_name=reference_name
            )
        except ValueError as exc:
            raise ValueError(
                f"{exc} To match the columns by position instead, pass {name} as "
                "an array (without classes=)."
            ) from None
        if order is not None:
            Y = Y[:, order]
    elif len(reference) != Y.shape[1]:
        raise ValueError(
            f"{name} has {Y.shape[1]} classes (columns) but {reference_name} has "
            f"{len(reference)}."
        )
    return Y, reference


def check_new_labels(Y_new, n_samples: int, classes) -> np.ndarray:
    """New labels of the items, as an ``(n_samples, n_classes)`` count matrix.

    The one reader of ``predict_posterior``'s ``Y_new`` (α-calibration and
    the ensembles): 1-D labels (or an ``(n, 1)`` column) are looked up among
    ``classes``; a DataFrame of counts is matched to ``classes`` by name;
    rows of zeros (no new label) are allowed.
    """
    classes = np.asarray(classes)
    K = classes.shape[0]
    names = frame_names(Y_new)
    arr = Y_new.to_numpy() if hasattr(Y_new, "to_numpy") else np.asarray(Y_new)
    if arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 1 and K != 1):
        arr, _ = labels_to_histograms(arr, classes=classes, name="Y_new")
    arr = np.asarray(arr, dtype=np.float64)
    if arr.shape != (n_samples, K):
        raise ValueError(
            f"Y_new must be labels of shape ({n_samples},) or counts of shape "
            f"({n_samples}, {K}), got shape {arr.shape}."
        )
    if names is not None:
        order = column_order(names, classes, name="Y_new", target_name="classes_")
        if order is not None:
            arr = arr[:, order]
    with np.errstate(invalid="ignore"):  # inf % 1 is NaN: flagged below
        bad = ~np.isfinite(arr) | (arr < 0) | (arr % 1 != 0)
    if bad.any():
        row, col = divmod(int(np.argmax(bad)), K)
        raise ValueError(
            "Y_new must hold finite non-negative integer counts; row "
            f"{row}, class {classes.tolist()[col]!r} is {arr[row, col].item()!r}."
        )
    return arr


def human_score(estimator, X, y, sample_weight=None, counts=None) -> float:
    """The one ``score`` of the package's classifiers (developer guide §estimators).

    Accuracy against the human majority for histograms (the first tied class
    on ties, as ``majority_accuracy_score(ties="first")``), plain accuracy for
    1-D labels. Histogram columns are matched to ``estimator.classes_`` by
    name, as in ``fit``; ``counts`` replaces ``y`` (convention B).
    """
    from sklearn.metrics import accuracy_score

    y, name = select_target(y, counts)
    y = match_rows(X, y, name=name, y_true_name="X")
    y, is_hist = check_target(y, name=name)
    if not is_hist:
        return float(
            accuracy_score(y, estimator.predict(X), sample_weight=sample_weight)
        )
    P = np.asarray(estimator.predict_proba(X))
    Y, _ = resolve_targets(
        y,
        n_classes=P.shape[1],
        reference=getattr(estimator, "classes_", None),
        classes=getattr(estimator, "classes", None),
        name=name,
        reference_name=f"{type(estimator).__name__}.classes_",
    )
    if Y.shape[0] != P.shape[0]:
        raise ValueError(
            f"X and {name} have different numbers of samples: {P.shape[0]} and "
            f"{Y.shape[0]}."
        )
    correct = P.argmax(axis=1) == Y.argmax(axis=1)
    return float(np.average(correct, weights=check_item_weights(sample_weight, Y)))


class HumanScoreMixin:
    """``score``: majority accuracy for histograms, accuracy for labels."""

    def score(self, X, y, sample_weight=None, counts=None) -> float:
        """Majority accuracy for histograms, accuracy for 1-D labels.

        For a histogram ``y`` a prediction is correct when it is the most
        frequent class of the item, ties going to the first tied class
        (``majority_accuracy_score(..., ties="first")``). Histogram columns
        are matched to ``classes_`` by name, as in ``fit``.

        Parameters
        ----------
        X : array-like
            Input of the classifier (scores when a calibrator has
            ``estimator=None``).
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Labels or label histograms.
        sample_weight : array-like of shape (n_samples,), default=None
            Item weights.
        counts : array-like of shape (n_samples, n_classes), default=None
            Histograms routed as metadata; they replace ``y``.

        Returns
        -------
        score : float
        """
        check_is_fitted(self)
        return human_score(self, X, y, sample_weight=sample_weight, counts=counts)


@dataclass(frozen=True)
class Targets:
    """An estimator's targets as given, checked (:func:`check_target`).

    Attributes
    ----------
    y : array-like, DataFrame or ndarray
        A label histogram (a DataFrame keeps its column names) or validated
        1-D labels.
    is_histogram : bool
        Whether ``y`` is a histogram (else one label per item).
    name : str
        The argument it came from, ``"y"`` or ``"counts"`` (for messages).
    """

    y: object
    is_histogram: bool
    name: str


class ItemWeightsMixin:
    """``sample_weight`` read as item weights, the front end's one reading.

    The part of the first level that an estimator whose targets are not
    histograms needs (the perspectivist classifier: one label, or a label
    set, per annotation row); :class:`HumanTargetMixin` builds on it.
    """

    def _item_weights(self, sample_weight, X):
        """``sample_weight`` as float64 item weights (row and value named)."""
        return check_item_weights(sample_weight, X)


class HumanTargetMixin(ItemWeightsMixin, HumanScoreMixin):
    """The targets of an estimator fitted on human labels (the front end's
    first level; see the module docstring and developer guide §estimators).

    Reads the estimator's ``classes`` parameter when it has one. Sets
    ``classes_`` and ``n_classes_`` in :meth:`_resolve_targets`.
    """

    #: whether rows of probabilities are accepted as targets (soft labels);
    #: estimators whose likelihood needs counts set it to False
    _allow_probability_targets = True

    def _read_targets(self, X, y, counts=None) -> Targets:
        """``counts`` replaces ``y`` (convention B); checked; rows of ``X``.

        ``X=None`` skips the length check (an estimator without features).
        A missing target raises scikit-learn's "requires y to be passed".
        When ``X`` and the target are both pandas objects indexed by items
        (not a default ``RangeIndex``), the target's rows are taken in
        ``X``'s order, as the metrics match rows (developer guide §rows);
        otherwise rows pair by position, scikit-learn's rule.
        """
        y, name = select_target(y, counts, owner=type(self).__name__)
        if X is not None:
            y = match_rows(X, y, name=name, y_true_name="X")
        y, is_hist = check_target(y, name=name)
        if X is not None:
            check_n_samples(X, y, "X", name)
        return Targets(y, is_hist, name)

    def _resolve_targets(
        self,
        targets: Targets,
        *,
        n_classes: int | None = None,
        reference=None,
        reference_name: str = "the estimator's classes_",
    ) -> np.ndarray:
        """Float64 histograms in the order of ``classes_``, which it sets.

        ``reference`` is the class of each predicted column when names say it
        (a wrapped classifier's ``classes_``, a score DataFrame's columns):
        the histogram is aligned with it by name. ``n_classes`` is the number
        of predicted columns (the scores').
        """
        Y, classes = resolve_targets(
            targets.y,
            n_classes=n_classes,
            reference=reference,
            classes=getattr(self, "classes", None),
            allow_probabilities=self._allow_probability_targets,
            name=targets.name,
            reference_name=reference_name,
        )
        if n_classes is not None and Y.shape[1] != n_classes:
            raise ValueError(
                f"{targets.name} has {Y.shape[1]} classes but the scores have "
                f"{n_classes} columns (class-count mismatch)."
            )
        self.classes_ = np.asarray(classes)
        self.n_classes_ = int(Y.shape[1])
        return Y

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = True
        return tags
