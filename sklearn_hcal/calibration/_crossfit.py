"""Cross-fitting: out-of-fold outputs of clones of an unfitted classifier.

The one implementation behind the calibrators' third ``estimator`` mode
(developer guide §estimators, like ``CalibratedClassifierCV(ensemble=False)``) and
behind :func:`sklearn_hcal.model_selection.cross_val_predict_proba`. What is taken
from each fold's model is a callback, so the scalers collect logits,
α-calibration collects probabilities and features, and
``cross_val_predict_proba`` any method reachable through a Pipeline.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import check_cv
from sklearn.utils import indexable
from sklearn.utils.parallel import Parallel, delayed

from .._frontend import is_fitted
from .._validation import is_histogram_target
from ..utils._compat import check_method_params, num_samples, safe_indexing
from ..utils._pipeline import final_estimator
from ..utils._sample_weight import fit_with_sample_weight
from ..utils._warnings import warn_user

__all__ = ["accepts_histograms", "cross_fit", "fit_clone", "warn_fitted_not_frozen"]


def accepts_histograms(estimator) -> bool:
    """Whether ``estimator`` (or a Pipeline's final step) fits on histograms.

    True for the package's estimators (``SoftLabelClassifier`` and the
    calibrators set ``_fits_histograms = True``); anything else is wrapped in
    a :class:`~sklearn_hcal.SoftLabelClassifier` by :func:`fit_clone`.
    """
    final = final_estimator(estimator)
    return bool(getattr(type(final), "_fits_histograms", False))


def warn_fitted_not_frozen(estimator, *, owner: str, param: str, action: str) -> None:
    """Warn when a fitted estimator is trained afresh (developer guide §prefit).

    Under the prefit rule (:func:`sklearn_hcal._frontend.is_prefit`) a fitted estimator
    that is not frozen is cloned and trained again; the fitted one is not
    used, which a user who meant it to be is told.

    Parameters
    ----------
    estimator : estimator
        The estimator that will be cloned.
    owner, param : str
        The class that clones it and the name of its parameter.
    action : str
        What ``owner`` does with the clone (e.g. "it is cloned and
        cross-fitted afresh on cv folds").
    """
    if is_fitted(estimator):
        warn_user(
            f"{param} ({type(estimator).__name__}) is already fitted but not "
            f"wrapped in FrozenEstimator. As in scikit-learn, only "
            f"FrozenEstimator means prefit: {action}. To use the fitted model "
            f"as it is, pass {owner}({param}=FrozenEstimator({param}))."
        )


def fit_clone(
    estimator,
    X,
    y,
    *,
    sample_weight=None,
    fit_params=None,
    wrap_histograms: bool = True,
    classes=None,
):
    """A fitted clone of ``estimator`` on ``(X, y)``.

    With a histogram ``y`` and ``wrap_histograms``, an estimator that does not
    fit on histograms itself is trained through
    ``SoftLabelClassifier(estimator, classes=classes)``. ``sample_weight``
    goes wherever the estimator takes row weights (a Pipeline's final step
    included, see :func:`~sklearn_hcal.utils._sample_weight.sample_weight_key`).
    """
    fit_params = dict(fit_params or {})
    if sample_weight is None and "sample_weight" in fit_params:
        # routed like the calibrators' weights (a Pipeline's final step too)
        sample_weight = fit_params.pop("sample_weight")
    model = clone(estimator)
    if wrap_histograms and is_histogram_target(y) and not accepts_histograms(model):
        from .._training import SoftLabelClassifier

        model = SoftLabelClassifier(model, classes=classes)
    return fit_with_sample_weight(model, X, y, sample_weight, **fit_params)


def _fit_fold(estimator, X, y, train, test, sample_weight, fit_params, outputs, kw):
    params = check_method_params(X, params=fit_params or {}, indices=train)
    model = fit_clone(
        estimator,
        safe_indexing(X, train),
        safe_indexing(y, train),
        sample_weight=None if sample_weight is None else sample_weight[train],
        fit_params=params,
        **kw,
    )
    result = outputs(model, safe_indexing(X, test))
    return model, result if isinstance(result, tuple) else (result,)


def _missing_class_message(i, missing, classes):
    missing = np.asarray(missing).tolist()[:10]
    return (
        f"The training part of cross-validation fold {i} lacks class(es) "
        f"{missing} of {np.asarray(classes).tolist()[:10]}, so its model cannot "
        "score every class; use fewer folds (cv), a stratified splitter, or "
        "more items per class."
    )


def cross_fit(
    estimator,
    X,
    y,
    *,
    cv,
    outputs,
    sample_weight=None,
    fit_params=None,
    groups=None,
    n_jobs=None,
    classes=None,
    wrap_histograms: bool = True,
    require_classes=None,
    classifier: bool = True,
):
    """Out-of-fold outputs of clones of ``estimator``.

    Parameters
    ----------
    estimator : unfitted estimator
        Cloned and fitted once per fold with :func:`fit_clone`.
    X, y : array-like
        Data; ``y`` is 1-D labels or a histogram (a DataFrame is indexed by
        position).
    cv : int, cross-validation generator or iterable
        As in scikit-learn (:func:`~sklearn.model_selection.check_cv` with
        ``classifier``: stratified for 1-D labels of a classifier, ``KFold``
        for histograms). The test folds must partition the samples.
    outputs : callable
        ``outputs(fitted_model, X_test)`` returns an array, or a tuple of
        arrays, with one row per test sample.
    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights for the folds' fits (indexed per fold).
    fit_params : dict, default=None
        Further fit parameters, indexed per fold where they have one entry
        per sample.
    groups : array-like, default=None
        Group labels for group splitters.
    n_jobs : int, default=None
        Folds fitted in parallel (joblib).
    classes, wrap_histograms
        Passed to :func:`fit_clone`.
    require_classes : array-like, default=None
        When given (1-D labels), every fold's model must have these
        ``classes_``; a fold missing one raises a ``ValueError`` naming it.
    classifier : bool, default=True
        Whether an integer ``cv`` stratifies 1-D labels.

    Returns
    -------
    outputs : ndarray or tuple of ndarray
        Like the callback's, for all samples in their original order.
    """
    X, y, groups = indexable(X, y, groups)
    n_samples = num_samples(X)
    splitter = check_cv(
        cv, y if not is_histogram_target(y) else None, classifier=classifier
    )
    splits = list(splitter.split(X, y, groups))
    tests = np.concatenate([test for _, test in splits]) if splits else np.array([])
    times = np.bincount(tests.astype(np.intp), minlength=n_samples)
    if times.shape[0] != n_samples or np.any(times != 1):
        bad = np.flatnonzero(times[:n_samples] != 1)
        raise ValueError(
            "cv must split the samples into test folds that partition them (each "
            f"sample in exactly one test fold); sample {int(bad[0])} is in "
            f"{int(times[bad[0]])} test folds."
        )
    kw = {"classes": classes, "wrap_histograms": wrap_histograms}
    results = Parallel(n_jobs=n_jobs)(
        delayed(_fit_fold)(
            estimator, X, y, train, test, sample_weight, fit_params, outputs, kw
        )
        for train, test in splits
    )
    if require_classes is not None:
        for i, (model, _) in enumerate(results):
            seen = np.asarray(getattr(model, "classes_", require_classes))
            if seen.shape != np.shape(require_classes) or not np.array_equal(
                seen, require_classes
            ):
                missing = [c for c in require_classes if c not in set(seen.tolist())]
                raise ValueError(_missing_class_message(i, missing, require_classes))
    first = results[0][1]
    assembled = []
    for j, part in enumerate(first):
        part = np.asarray(part)
        full = np.empty((n_samples,) + part.shape[1:], dtype=part.dtype)
        for i, ((_, out), (_, test)) in enumerate(zip(results, splits)):
            block = np.asarray(out[j])
            if block.shape[1:] != part.shape[1:] or block.shape[0] != len(test):
                raise ValueError(
                    f"Cross-validation fold {i} gave outputs of shape "
                    f"{block.shape}, fold 0 of shape {part.shape}: the folds' "
                    "models do not predict the same columns (a fold missing a "
                    "class?)."
                )
            full[test] = block
        assembled.append(full)
    return assembled[0] if len(assembled) == 1 else tuple(assembled)
