"""Out-of-fold predictions for label histograms."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import is_classifier

from .._frontend import check_target, class_columns
from .._validation import column_order, frame_names
from ..calibration._shared import cross_fit
from ..utils._compat import HasMethods, num_samples, validate_params
from ..utils._pipeline import final_estimator, get_method

__all__ = ["cross_val_predict_proba"]

#: Methods whose columns are the fitted model's ``classes_`` (a class absent
#: from a training fold needs a filler column).
_CLASS_COLUMN_METHODS = ("predict_proba", "predict_log_proba", "decision_function")


def _fold_method(method, classes, columns=None):
    """``outputs`` callback of the cross-fitting core for ``method``.

    ``columns`` (the class names of a DataFrame histogram ``y``): a fold
    model's class columns are put in that order by name, since a model's
    ``classes_`` need not follow ``y`` (a calibrator of a frozen classifier
    predicts in the classifier's order).
    """

    def outputs(model, X_test):
        call = get_method(model, method)
        if call is None:
            raise ValueError(
                f"{type(final_estimator(model)).__name__} has no method {method!r} "
                "(looked up on the estimator and, through Pipelines, on the final "
                "step)."
            )
        out = np.asarray(call(X_test))
        if columns is not None and method in _CLASS_COLUMN_METHODS:
            fitted = getattr(final_estimator(model), "classes_", None)
            if fitted is None or len(fitted) != len(columns):
                return out  # positional; the column count is checked below
            order = column_order(
                fitted,
                columns,
                name=f"{type(final_estimator(model)).__name__}.classes_",
                target_name="y's columns",
            )
            if order is None:
                return out
            if out.ndim == 1:  # a binary decision: the score of classes_[1]
                return -out
            return out[:, order]
        if classes is None or method not in _CLASS_COLUMN_METHODS:
            return out
        fitted = np.asarray(final_estimator(model).classes_)
        if np.array_equal(fitted, classes):
            return out
        extra = [c for c in fitted.tolist() if c not in set(classes.tolist())]
        if extra:
            # the columns are y's labels: a class the model predicts but y
            # never holds has no column (searchsorted would put its
            # probability in a neighbour's column, or past the last one)
            raise ValueError(
                f"{type(final_estimator(model)).__name__} predicts class(es) "
                f"{extra[:10]} that the labels y never hold (y holds "
                f"{classes.tolist()[:10]}), and the output has one column per "
                "label of y. Pass y as a DataFrame of label histograms with one "
                "column per class, e.g. pd.get_dummies(y).reindex(columns="
                "classes, fill_value=0)."
            )
        if method != "predict_proba":
            missing = [c for c in classes.tolist() if c not in set(fitted.tolist())]
            raise ValueError(
                f"A training fold lacks class(es) {missing[:10]}, so its "
                f"{method} has no column for them; use a stratified cv or "
                "method='predict_proba' (absent classes get probability 0)."
            )
        out = class_columns(out)  # a binary fold may give P(second class)
        full = np.zeros((out.shape[0], len(classes)), dtype=np.float64)
        full[:, np.searchsorted(classes, fitted)] = out
        return full

    return outputs


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like", "sparse matrix"],
        "cv": ["cv_object"],
        "groups": ["array-like", None],
        "n_jobs": [Integral, None],
        "params": [dict, None],
        "method": [str],
    },
    prefer_skip_nested_validation=False,
)
def cross_val_predict_proba(
    estimator,
    X,
    y,
    *,
    cv=None,
    groups=None,
    n_jobs: int | None = None,
    params=None,
    method: str = "predict_proba",
) -> np.ndarray:
    """Out-of-fold class probabilities (or another method) for histograms.

    :func:`sklearn.model_selection.cross_val_predict` with
    ``method="predict_proba"`` *label-encodes* a 2-D ``y`` column by column
    before fitting (it takes it for a multi-output target). For a count
    matrix this silently rewrites the histograms whenever a column's counts
    are not the consecutive integers 0, 1, 2, …: counts {0, 1, 7} become
    {0, 1, 2}, so the folds are trained on the wrong human distributions.
    This function fits on ``y`` untouched, with the cross-fitting of the
    calibrators (:mod:`sklearn_hcal.calibration._crossfit`).

    Parameters
    ----------
    estimator : estimator object
        Unfitted estimator; with a 2-D ``y`` it must accept histograms (e.g.
        :class:`sklearn_hcal.SoftLabelClassifier`, a calibrator, or a Pipeline
        ending in one). It is cloned per fold.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (a DataFrame keeps its column names) or labels.
    cv : int, cross-validation generator or iterable, default=None
        As in scikit-learn; an integer (default 5) gives ``KFold`` for
        histograms and ``StratifiedKFold`` for labels of a classifier. The
        test folds must partition the samples.
    groups : array-like of shape (n_samples,), default=None
        Group labels for group splitters.
    n_jobs : int, default=None
        Folds fitted in parallel (joblib).
    params : dict, default=None
        Fit parameters (e.g. ``sample_weight``), indexed per fold.
    method : str, default="predict_proba"
        The method whose out-of-fold output is returned, looked up on the
        estimator or, through (nested) Pipelines, on the final step --
        e.g. ``"predict_disagreement"`` or ``"predict_concentration"`` of an
        :class:`~sklearn_hcal.AlphaCalibrator` at the end of a Pipeline.

    Returns
    -------
    predictions : ndarray of shape (n_samples, n_classes) or (n_samples, ...)
        Out-of-fold outputs. For ``predict_proba``: columns in the order of
        ``y``'s columns (histograms) or of the sorted unique labels (1-D
        ``y``; a class absent from a training fold gets probability 0 there).

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_hcal import SoftLabelClassifier
    >>> from sklearn_hcal.datasets import make_label_histograms
    >>> from sklearn_hcal.model_selection import cross_val_predict_proba
    >>> X, Y, _ = make_label_histograms(60, 3, 5, n_features=2, random_state=0)
    >>> model = SoftLabelClassifier(LogisticRegression())
    >>> proba = cross_val_predict_proba(model, X, Y, cv=4)
    >>> proba.shape  # one column per histogram class
    (60, 3)
    >>> # 1-D labels: columns in the order of the sorted labels
    >>> cross_val_predict_proba(LogisticRegression(), X, Y.argmax(1), cv=4).shape
    (60, 3)
    """
    y, is_hist = check_target(y, name="y")
    if num_samples(X) != num_samples(y):
        raise ValueError(
            f"X and y have different numbers of samples: {num_samples(X)} and "
            f"{num_samples(y)}."
        )
    classes = None if is_hist else np.unique(y)
    columns = frame_names(y) if is_hist else None
    out = cross_fit(
        estimator,
        X,
        y,
        cv=cv,
        outputs=_fold_method(method, classes, columns),
        fit_params=params,
        groups=groups,
        n_jobs=n_jobs,
        wrap_histograms=False,
        classifier=is_classifier(estimator),
    )
    if is_hist and method == "predict_proba" and out.shape[1] != y.shape[1]:
        raise ValueError(
            f"{type(estimator).__name__}.predict_proba returned "
            f"{out.shape[1]} columns, expected {y.shape[1]}: one column per "
            "histogram class."
        )
    return out
