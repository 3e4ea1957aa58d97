"""Prediction-set metrics against the human label distribution.

A prediction set is a boolean ``(n_samples, n_classes)`` array (what
:meth:`~sklearn_hcal.conformal.HumanConformalClassifier.predict_set`
returns). With ``p̂_i = Y_i / n_i`` the human distribution of item ``i``:

* :func:`aggregated_coverage_score` -- ``mean_i Σ_{k ∈ C_i} p̂_ik``, the
  probability that a random annotator's label lies in the set (the coverage
  of Stutz et al. 2023's aggregated distribution);
* :func:`majority_coverage_score` -- the fraction of sets holding the
  majority label (what standard conformal prediction guarantees);
* :func:`mean_set_size` -- ``mean_i |C_i|``;
* :func:`coverage_by_set_size` and :func:`size_stratified_coverage_score` --
  coverage per set size and its minimum (size-stratified coverage,
  Angelopoulos et al. 2021, "Uncertainty sets for image classifiers using
  conformal prediction", ICLR).

These are plain functions with their own scorers (:func:`make_set_scorer`),
not entries of the metric registry: the registry's metrics compare the human
labels with *probabilities* (or a predicted disagreement), which its engine
validates as probability rows, while a set is a boolean mask that no
probability check accepts and that a scorer gets from ``predict_set``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._frontend import check_target, resolve_targets, select_target
from .._validation import (
    check_binary,
    check_class_names,
    check_positional_classes,
    frame_names,
    match_rows,
)
from ..utils._compat import StrOptions, validate_params
from ..utils._docstrings import fill_doc
from ..utils._pipeline import get_method
from ._constraints import ARRAY, COUNTS_AND_LABELS, OPTIONAL_ARRAY
from ._scorer_objects import HumanScorer, func_name

__all__ = [
    "aggregated_coverage_score",
    "coverage_by_set_size",
    "majority_coverage_score",
    "make_set_scorer",
    "mean_set_size",
    "size_stratified_coverage_score",
]

_COMMON = {"y_true": OPTIONAL_ARRAY, "y_set": ARRAY, **COUNTS_AND_LABELS}


def check_sets(y_set, *, name: str = "y_set") -> tuple[np.ndarray, object]:
    """Boolean sets and the class names of their columns (or None)."""
    names = frame_names(y_set, name=name)  # says "the columns of" itself
    if isinstance(y_set, pd.DataFrame):
        y_set = y_set.to_numpy()
    S = np.asarray(y_set)
    if S.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D (n_samples, n_classes) boolean array of "
            f"prediction sets, got shape {S.shape}."
        )
    if S.shape[0] == 0:
        # as the other metrics: a mean over no item is no number
        raise ValueError(f"{name} is empty: at least one sample is required.")
    if S.dtype != bool:
        if not np.issubdtype(S.dtype, np.number):
            raise ValueError(f"{name} must be boolean (or 0/1), got dtype {S.dtype}.")
        check_binary(
            S,
            lambda row, col: (
                f"{name} must be boolean (or 0/1); row {row}, column {col}"
            ),
        )
        S = S.astype(bool)
    return S, names


def _human_and_sets(y_true, y_set, counts, labels):
    """``(p̂, S)``: human distributions in the sets' column order, sets."""
    y_set = match_rows(y_true, y_set, name="y_set", counts=counts)
    S, names = check_sets(y_set)
    if labels is None:
        labels = names
    else:
        # a class named twice could be either column
        labels = check_class_names(labels, n_columns=S.shape[1], of="y_set")
    y, target_name = select_target(y_true, counts)
    target_name = "y_true" if target_name == "y" else target_name  # the argument
    y, _ = check_target(y, name=target_name)
    human_names = frame_names(y, name=target_name)
    if labels is None and human_names is not None:
        # unnamed sets follow the classifier's sorted classes_, not the
        # truth's column order (developer guide §class-names)
        check_positional_classes(human_names, name="y_set", y_true_name=target_name)
    Y, _ = resolve_targets(
        y,
        n_classes=S.shape[1],
        reference=labels,
        name=target_name,
        reference_name="y_set's columns (labels=)",
    )
    if Y.shape[0] != S.shape[0]:
        raise ValueError(
            f"{target_name} and y_set have different numbers of samples: "
            f"{Y.shape[0]} and {S.shape[0]}."
        )
    return Y / Y.sum(axis=1, keepdims=True), S


@validate_params(_COMMON, prefer_skip_nested_validation=True)
@fill_doc
def aggregated_coverage_score(y_true, y_set, *, counts=None, labels=None) -> float:
    """Human probability mass inside the prediction sets, averaged over items.

    ``mean_i Σ_k p̂_ik 1[k ∈ C_i]``: the probability that the label of a
    random annotator of a random item lies in its set, i.e. the coverage of
    the aggregated human distribution that Monte Carlo conformal prediction
    guarantees (Stutz et al. 2023, §3). Higher is better, at equal set size.

    Parameters
    ----------
    %(y_true)s
    y_set : array-like of bool, shape (n_samples, n_classes)
        Prediction sets (a DataFrame's columns name the classes).
    %(counts)s
    %(set_labels)s

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import aggregated_coverage_score
    >>> Y = [[3, 1, 0], [1, 1, 2]]
    >>> sets = [[True, False, False], [True, False, True]]
    >>> float(aggregated_coverage_score(Y, sets))  # (0.75 + 0.75) / 2
    0.75
    """
    p_hat, S = _human_and_sets(y_true, y_set, counts, labels)
    return float(np.mean(np.sum(p_hat, axis=1, where=S)))


@validate_params(
    {**_COMMON, "ties": [StrOptions({"first", "any"})]},
    prefer_skip_nested_validation=True,
)
@fill_doc
def majority_coverage_score(
    y_true, y_set, *, counts=None, labels=None, ties: str = "first"
) -> float:
    """Fraction of prediction sets that hold the human majority label.

    What standard conformal prediction calibrated on majority labels
    guarantees. Higher is better, at equal set size.

    Parameters
    ----------
    %(y_true)s
    %(y_set)s
    %(counts)s
    %(set_labels)s
    ties : {"first", "any"}, default="first"
        With tied top classes: ``"first"`` the first of them is the
        majority; ``"any"`` a set covers when it holds any of them.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import majority_coverage_score
    >>> Y = [[3, 1, 0], [1, 1, 2]]
    >>> sets = [[True, False, False], [True, True, False]]
    >>> float(majority_coverage_score(Y, sets))
    0.5
    """
    p_hat, S = _human_and_sets(y_true, y_set, counts, labels)
    if ties == "first":
        return float(np.mean(S[np.arange(S.shape[0]), p_hat.argmax(axis=1)]))
    top = p_hat == p_hat.max(axis=1, keepdims=True)
    return float(np.mean(np.any(top & S, axis=1)))


@validate_params(_COMMON, prefer_skip_nested_validation=True)
@fill_doc
def mean_set_size(y_true, y_set, *, counts=None, labels=None) -> float:
    """Mean number of classes in the prediction sets (lower is better).

    ``y_true`` is not used (it may be None); the argument is there so that
    the function has the signature of a metric and works as a scorer.

    Parameters
    ----------
    y_true : array-like or None
        Ignored.
    %(y_set)s
    counts, labels : ignored
        Accepted for the scorers' metadata routing.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import mean_set_size
    >>> float(mean_set_size(None, [[True, False, False], [True, True, False]]))
    1.5
    """
    S, _ = check_sets(y_set)
    return float(S.sum(axis=1).mean())


@validate_params(_COMMON, prefer_skip_nested_validation=True)
@fill_doc
def coverage_by_set_size(y_true, y_set, *, counts=None, labels=None) -> pd.DataFrame:
    """Coverage of the items grouped by the size of their set.

    Parameters
    ----------
    %(y_true)s
    %(y_set)s
    %(counts)s
    %(set_labels)s

    Returns
    -------
    table : DataFrame
        Indexed by ``set_size`` (the sizes that occur, ascending), columns
        ``n_items``, ``aggregated_coverage``, ``majority_coverage`` (first
        majority on ties).

    Examples
    --------
    >>> from sklearn_hcal.metrics import coverage_by_set_size
    >>> Y = [[3, 1, 0], [1, 1, 2], [0, 4, 0]]
    >>> sets = [[True, False, False], [True, False, True], [False, False, True]]
    >>> coverage_by_set_size(Y, sets)["aggregated_coverage"].tolist()
    [0.375, 0.75]
    """
    p_hat, S = _human_and_sets(y_true, y_set, counts, labels)
    size = S.sum(axis=1)
    covered = np.sum(p_hat, axis=1, where=S)
    majority = S[np.arange(S.shape[0]), p_hat.argmax(axis=1)]
    sizes, group, n_items = np.unique(size, return_inverse=True, return_counts=True)
    return pd.DataFrame(
        {
            "n_items": n_items,
            "aggregated_coverage": np.bincount(group, covered) / n_items,
            "majority_coverage": np.bincount(group, majority) / n_items,
        },
        index=pd.Index(sizes, name="set_size"),
    )


@validate_params(_COMMON, prefer_skip_nested_validation=True)
@fill_doc
def size_stratified_coverage_score(y_true, y_set, *, counts=None, labels=None) -> float:
    """Smallest aggregated coverage over the groups of equal set size.

    Size-stratified coverage (Angelopoulos et al. 2021, §4) with the human
    distribution as the target: a method that reaches its level on average
    by over-covering large sets and under-covering small ones scores low.
    Higher is better.

    Parameters
    ----------
    %(y_true)s
    %(y_set)s
    %(counts)s
    %(set_labels)s

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import size_stratified_coverage_score
    >>> Y = [[3, 1, 0], [1, 1, 2], [0, 4, 0]]
    >>> sets = [[True, False, False], [True, False, True], [False, False, True]]
    >>> float(size_stratified_coverage_score(Y, sets))
    0.375
    """
    table = coverage_by_set_size(y_true, y_set, counts=counts, labels=labels)
    return float(table["aggregated_coverage"].min())


class _SetScorer(HumanScorer):
    """A scorer of prediction sets: calls ``predict_set``, passes ``classes_``.

    ``predict_set`` is looked up through Pipelines (their final step), which
    do not expose methods scikit-learn does not know.
    """

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        self._warn_overlap(
            message=(
                "There is an overlap between set kwargs of this scorer instance "
                "and passed metadata. Please pass them either as kwargs to "
                "`make_set_scorer` or metadata, but not both."
            ),
            kwargs=kwargs,
        )
        predict_set = get_method(estimator, "predict_set")  # through Pipelines
        if predict_set is None:
            raise AttributeError(
                f"{type(estimator).__name__} has no predict_set (neither itself "
                "nor the final step of a Pipeline)."
            )
        sets = predict_set(X)
        scoring_kwargs = {**self._kwargs, **kwargs}
        classes = getattr(estimator, "classes_", None)
        if classes is not None and "labels" not in scoring_kwargs:
            scoring_kwargs["labels"] = np.asarray(classes)
        return self._sign * self._score_func(y_true, sets, **scoring_kwargs)

    def __repr__(self):
        sign = "" if self._sign > 0 else ", greater_is_better=False"
        kwargs = "".join(f", {k}={v!r}" for k, v in self._kwargs.items())
        return f"make_set_scorer({func_name(self._score_func)}{sign}{kwargs})"


_SET_METRICS = {
    "aggregated_coverage_score": (aggregated_coverage_score, True),
    "majority_coverage_score": (majority_coverage_score, True),
    "mean_set_size": (mean_set_size, False),
    "size_stratified_coverage_score": (size_stratified_coverage_score, True),
}


def make_set_scorer(metric, *, greater_is_better=None, **kwargs):
    """A scikit-learn scorer of an estimator's ``predict_set``.

    Parameters
    ----------
    metric : str or callable
        ``"aggregated_coverage_score"``, ``"majority_coverage_score"``,
        ``"mean_set_size"``, ``"size_stratified_coverage_score"``, or a
        callable ``metric(y_true, y_set, **kw)``.
    greater_is_better : bool, default=None
        Needed for a callable; the named metrics know theirs (a scorer of
        ``mean_set_size`` returns its negative).
    **kwargs
        Fixed keyword arguments of the metric.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, **metadata)``; the estimator's
        ``classes_`` are passed as ``labels``. Supports
        ``set_score_request(counts=True)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.conformal import HumanConformalClassifier
    >>> from sklearn_hcal.metrics import make_set_scorer
    >>> P = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.1, 0.9]] * 10)
    >>> Y = np.array([[4, 1], [1, 4], [3, 2], [0, 5]] * 10)
    >>> cp = HumanConformalClassifier(calibration="exact").fit(P, Y)
    >>> scorer = make_set_scorer("mean_set_size")
    >>> bool(scorer(cp, P, Y) <= -1.0)
    True
    """
    if isinstance(metric, str):
        try:
            func, better = _SET_METRICS[metric]
        except KeyError:
            raise ValueError(
                f"metric={metric!r} is not a set metric; valid names: "
                f"{sorted(_SET_METRICS)}."
            ) from None
        if greater_is_better is None:
            greater_is_better = better
    else:
        func = metric
        if greater_is_better is None:
            raise ValueError(
                "Pass greater_is_better=True or False with a callable metric."
            )
    return _SetScorer(func, 1 if greater_is_better else -1, kwargs, "predict_set")
