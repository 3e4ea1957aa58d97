"""What an estimator of the front end reads from a classifier (developer guide
§estimators, §prefit).

Scores are an ``(n_samples, n_classes)`` float64 matrix of logits. A fitted
classifier gives them through :func:`get_scores`, its probabilities through
:func:`get_probabilities`; with ``estimator=None`` the input ``X`` is the
classifier output, logits or probabilities (:func:`read_input_type`,
:func:`scores_from_input`, :func:`probabilities_from_input`). The prefit
rule (:func:`is_prefit`, :func:`unwrap_frozen`, :func:`is_fitted`) says what
a wrapped classifier is.
"""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    all_finite,
    check_finite,
    looks_like_probabilities,
    negative_tolerance,
    probabilities_to_logits,
    row_sum_tolerance,
)
from ..utils._optional import is_skorch_net
from ._logits import skorch_logits

__all__ = [
    "class_columns",
    "contains_skorch_net",
    "get_probabilities",
    "get_scores",
    "is_fitted",
    "is_prefit",
    "log_softmax",
    "probabilities_from_input",
    "read_input_type",
    "scores_from_input",
    "softmax",
    "unwrap_frozen",
]


def log_softmax(Z: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax, stable for logits of any magnitude."""
    Z = np.asarray(Z, dtype=np.float64)
    shifted = Z - Z.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def softmax(Z: np.ndarray) -> np.ndarray:
    """Row-wise softmax, stable for logits of any magnitude."""
    Z = np.asarray(Z, dtype=np.float64)
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    E /= E.sum(axis=1, keepdims=True)
    return E


def is_prefit(estimator) -> bool:
    """The prefit rule (scikit-learn's, developer guide §prefit).

    Only a :class:`~sklearn.frozen.FrozenEstimator` is used as it is; any
    other estimator, fitted or not, is trained afresh by the calibrators and
    the ensembles (with a warning when it was fitted, see
    ``calibration/_crossfit.py``) or refused by the conformal classifier.
    """
    return isinstance(estimator, FrozenEstimator)


def unwrap_frozen(estimator):
    """The estimator inside a :class:`~sklearn.frozen.FrozenEstimator`."""
    return estimator.estimator if is_prefit(estimator) else estimator


def class_columns(P, *, ndim: int = 2) -> np.ndarray:
    """Class probabilities as float64 with a last axis of classes.

    A binary classifier's ``predict_proba`` may give P(second class) only
    (one axis fewer than ``ndim``); it becomes the two columns
    ``[1 − p, p]`` (developer guide §data-conventions).
    """
    P = np.asarray(P, dtype=np.float64)
    if P.ndim == ndim - 1:
        P = np.stack([1.0 - P, P], axis=-1)
    return P


def is_fitted(estimator) -> bool:
    """Whether ``estimator`` (not frozen) is already fitted."""
    if is_skorch_net(estimator):
        return bool(getattr(estimator, "initialized_", False))
    try:
        check_is_fitted(estimator)
    except (NotFittedError, TypeError, AttributeError):
        return False
    return True


def contains_skorch_net(estimator) -> bool:
    """Whether ``estimator`` is, or contains as a parameter, a skorch net."""
    if is_skorch_net(estimator):
        return True
    try:
        params = estimator.get_params(deep=True)
    except Exception:  # not a scikit-learn estimator
        return False
    return any(is_skorch_net(value) for value in params.values())


def get_scores(estimator, X) -> np.ndarray:
    """Scores (logits) of a fitted classifier, as an ``(n, K)`` float64 array.

    The order follows developer guide §estimators:

    1. ``decision_function``: a binary 1-D decision ``d`` becomes the two
       columns ``[0, d]``, so that their softmax is ``[1 - σ(d), σ(d)]`` (the
       probability a logistic model assigns). scikit-learn's
       ``CalibratedClassifierCV(method="temperature")`` uses ``[-d, d]``
       instead, so its inverse temperature is half of ours on binary
       decisions.
    2. a skorch ``NeuralNet`` (possibly inside ``FrozenEstimator``, or the
       last step of a Pipeline, whose earlier steps transform ``X``): the
       module's logits through :func:`sklearn_hcal.skorch_logits`;
    3. ``log(predict_proba)`` through
       :func:`~sklearn_hcal._validation.probabilities_to_logits` (rows
       renormalised, probabilities floored at ``PROBA_FLOOR``).

    Parameters
    ----------
    estimator : fitted classifier
        Any object with ``decision_function`` or ``predict_proba`` (or a skorch
        net).
    X : array-like
        Input of the classifier.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)

    Raises
    ------
    ValueError
        If the estimator has none of these methods, or returns non-finite
        scores.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_hcal._frontend import get_scores
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> clf = LogisticRegression().fit(X, [0, 0, 1, 1])
    >>> get_scores(clf, X).shape
    (4, 2)
    """
    inner = unwrap_frozen(estimator)
    net, X_net = _final_skorch_net(inner, X)
    if net is not None:
        scores = np.asarray(skorch_logits(net, X_net), dtype=np.float64)
    elif hasattr(estimator, "decision_function"):
        scores = np.asarray(estimator.decision_function(X), dtype=np.float64)
        if scores.ndim == 1 or (scores.ndim == 2 and scores.shape[1] == 1):
            d = scores.reshape(-1)
            scores = np.column_stack([np.zeros_like(d), d])
    elif hasattr(estimator, "predict_proba"):
        scores = probabilities_to_logits(class_columns(estimator.predict_proba(X)))
    else:
        raise ValueError(
            f"estimator {type(inner).__name__} provides neither decision_function "
            "nor predict_proba (nor is it a skorch net), so it gives no scores to "
            "calibrate."
        )
    if scores.ndim != 2:
        raise ValueError(
            f"The scores of {type(inner).__name__} must be 2-D, got shape "
            f"{scores.shape}."
        )
    if not all_finite(scores):
        check_finite(scores, name=f"The scores of {type(inner).__name__}")
    return scores


def get_probabilities(estimator, X) -> np.ndarray:
    """Class probabilities of a fitted classifier, rows renormalised.

    ``predict_proba`` when the classifier has it (a 1-D binary output is
    P(second class), see :func:`class_columns`), else the softmax of
    :func:`get_scores`. A non-finite entry raises, naming its row, column
    and value.
    """
    if not hasattr(estimator, "predict_proba"):
        return softmax(get_scores(estimator, X))
    P = class_columns(estimator.predict_proba(X))
    if not all_finite(P):
        name = type(unwrap_frozen(estimator)).__name__
        check_finite(P, name=f"{name}.predict_proba")
    return P / P.sum(axis=1, keepdims=True)


def _final_skorch_net(estimator, X):
    """``(net, X_net)``: the skorch net ending ``estimator`` and its input.

    Through (nested) Pipelines, so that a net behind a scaler gives its logits,
    as it does alone: ``log(predict_proba)`` differs from them by a per-row
    constant, which changes the features of α-calibration and vector or
    matrix scaling. ``(None, X)`` when the estimator does not end in a net.
    """
    from sklearn.pipeline import Pipeline

    from ..utils._pipeline import final_estimator

    if not is_skorch_net(unwrap_frozen(final_estimator(estimator))):
        return None, X
    while isinstance(estimator, Pipeline):
        X = estimator[:-1].transform(X)
        estimator = unwrap_frozen(estimator.steps[-1][1])
    return estimator, X


def read_input_type(X, input_param: str) -> str:
    """``"proba"`` or ``"logits"``: how ``estimator=None`` input is read.

    ``input="auto"`` reads ``X`` as probabilities when
    :func:`~sklearn_hcal._validation.looks_like_probabilities` says so
    (entries in [0, 1], rows summing to 1 within the rounding tolerance).
    """
    if input_param == "auto":
        return "proba" if looks_like_probabilities(X) else "logits"
    return input_param


def _require_probabilities(X, fitted_input: str) -> None:
    """Raise, naming the first bad row, unless ``X`` holds probabilities."""
    if looks_like_probabilities(X):
        return
    X = np.asarray(X)
    bad = (X < -negative_tolerance(X.dtype)).any(axis=1) | (
        np.abs(X.sum(axis=1) - 1.0) > row_sum_tolerance(X.shape[1], X.dtype)
    )
    row = int(np.flatnonzero(bad)[0]) if bad.any() else 0
    raise ValueError(
        "X must hold probabilities (entries in [0, 1], rows summing to 1) "
        f"because this estimator reads its input as probabilities "
        f"(input={fitted_input!r}); row {row} is "
        f"{np.array2string(X[row], precision=6, threshold=10)}. Pass "
        "probabilities, or logits with input='logits'."
    )


def scores_from_input(X: np.ndarray, input_type: str, *, fitted_input: str):
    """Logits from validated ``estimator=None`` input ``X``.

    Probabilities go through
    :func:`~sklearn_hcal._validation.probabilities_to_logits`; a matrix that
    must be probabilities but is not raises, naming the first bad row.
    """
    if input_type != "proba":
        return np.asarray(X, dtype=np.float64)
    _require_probabilities(X, fitted_input)
    return probabilities_to_logits(X)


def probabilities_from_input(X: np.ndarray, input_type: str, *, fitted_input: str):
    """Class probabilities from validated ``estimator=None`` input ``X``.

    Probabilities are returned as they are (entries a rounding error below 0
    read as 0, rows renormalised), never passed through a log and a softmax,
    whose round trip moves them by rounding errors; logits go through a
    softmax. Input that must be probabilities but is not raises as in
    :func:`scores_from_input`.
    """
    if input_type != "proba":
        return softmax(X)
    _require_probabilities(X, fitted_input)
    P = np.maximum(np.asarray(X, dtype=np.float64), 0.0)
    return P / P.sum(axis=1, keepdims=True)
