"""Out-of-fold predictions for label histograms."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils._param_validation import HasMethods, validate_params
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _check_method_params

__all__ = ["cross_val_predict_proba"]


def _fit_and_predict_proba(estimator, X, y, train, test, params):
    fit_params = _check_method_params(X, params=params or {}, indices=train)
    estimator.fit(_safe_indexing(X, train), _safe_indexing(y, train), **fit_params)
    return estimator, estimator.predict_proba(_safe_indexing(X, test))


@validate_params(
    {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "cv": ["cv_object"],
        "groups": ["array-like", None],
        "n_jobs": [Integral, None],
        "params": [dict, None],
    },
    prefer_skip_nested_validation=False,
)
def cross_val_predict_proba(
    estimator, X, y, *, cv=None, groups=None, n_jobs: int | None = None, params=None
) -> np.ndarray:
    """Out-of-fold class probabilities for label histograms or labels.

    :func:`sklearn.model_selection.cross_val_predict` with
    ``method="predict_proba"`` *label-encodes* a 2-D ``y`` column by column
    before fitting (it takes it for a multi-output target). For a count
    matrix this silently rewrites the histograms whenever a column's counts
    are not the consecutive integers 0, 1, 2, …: counts {0, 1, 7} become
    {0, 1, 2}, so the folds are trained on the wrong human distributions.
    This function fits on ``y`` untouched.

    Parameters
    ----------
    estimator : estimator object
        Unfitted estimator with ``fit`` and ``predict_proba``; with a 2-D
        ``y`` it must accept histograms (e.g.
        :class:`sklearn_hcal.SoftLabelClassifier`). It is cloned per fold.
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

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
        Out-of-fold probabilities; columns in the order of ``y``'s columns
        (histograms) or of the sorted unique labels (1-D ``y``; a class
        absent from a training fold gets probability 0 there).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_hcal.model_selection import cross_val_predict_proba
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> proba = cross_val_predict_proba(LogisticRegression(), X, y, cv=4)
    >>> proba.shape
    (40, 2)
    """
    X, y, groups = indexable(X, y, groups)
    raw = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
    is_histogram = raw.ndim == 2 and raw.shape[1] > 1
    if is_histogram:
        classes = None
        n_classes = raw.shape[1]
    else:
        if raw.ndim == 2:
            raw = raw[:, 0]
        classes = np.unique(raw)
        n_classes = len(classes)
    cv = check_cv(cv, raw, classifier=is_classifier(estimator))
    splits = list(cv.split(X, raw, groups))
    test_indices = np.concatenate([test for _, test in splits])
    if np.sort(test_indices).tolist() != list(range(raw.shape[0])):
        raise ValueError(
            "cv must split the samples into test folds that partition them "
            "(each sample in exactly one test fold)."
        )
    results = Parallel(n_jobs=n_jobs)(
        delayed(_fit_and_predict_proba)(clone(estimator), X, y, train, test, params)
        for train, test in splits
    )
    proba = np.zeros((raw.shape[0], n_classes), dtype=np.float64)
    for (fitted, fold_proba), (_, test) in zip(results, splits):
        fold_proba = np.asarray(fold_proba, dtype=np.float64)
        if is_histogram:
            if fold_proba.shape != (len(test), n_classes):
                raise ValueError(
                    f"{type(fitted).__name__}.predict_proba returned shape "
                    f"{fold_proba.shape}, expected ({len(test)}, {n_classes}): "
                    "one column per histogram class."
                )
            proba[test] = fold_proba
        else:
            columns = np.searchsorted(classes, np.asarray(fitted.classes_))
            proba[np.ix_(test, columns)] = fold_proba
    return proba
