"""Shared machinery of the post-hoc calibrators (SPEC §3).

Every calibrator in :mod:`sklearn_hcal.calibration` works on *scores*: an
``(n_samples, n_classes)`` matrix of logits produced by a classifier. This
module resolves where those scores come from and what the training targets
are, so that a concrete calibrator only implements two hooks:

* ``_fit_logits(Z, Y, sample_weight)`` — fit on float64 scores ``Z`` and
  float64 label histograms ``Y`` (both ``(n, K)``);
* ``_transform_logits(Z)`` — map scores to calibrated logits.

The three ``estimator`` modes (SPEC §3)
---------------------------------------
``None``
    ``X`` *is* the classifier output. With ``input="auto"`` (default) a
    matrix whose entries all lie in ``[0, 1]`` and whose rows all sum to one
    (within ``1e-6``; ``1e-5`` for float32) is taken as probabilities and
    converted with ``log(max(p, 1e-12))``; anything else is taken as logits.
    The decision is made once, in ``fit``, and stored in ``input_type_``;
    ``input="logits"`` / ``input="proba"`` force it.
``FrozenEstimator(fitted_clf)``
    The fitted classifier is used as it is; its scores on ``X`` train the
    calibrator.
an unfitted classifier
    Cross-fitted like ``CalibratedClassifierCV(ensemble=False)``: out-of-fold
    scores from the ``cv`` splits (stratified for 1-D labels, plain
    ``KFold`` for histograms, see :func:`sklearn.model_selection.check_cv`)
    train the calibrator, then the classifier is refitted on all the data.
    With histogram targets the classifier is trained through
    :class:`sklearn_hcal.SoftLabelClassifier`.

Score order (:func:`_get_scores`): ``decision_function``, else a skorch net's
logits, else ``log(predict_proba)`` floored at ``1e-12``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    has_fit_parameter,
    indexable,
    validate_data,
)

from .._validation import (
    check_label_histograms,
    is_histogram_target,
    labels_to_histograms,
    looks_like_probabilities,
    probabilities_to_logits,
)
from ..utils._optional import is_skorch_net

__all__ = [
    "_BaseLogitCalibrator",
    "_get_scores",
    "_log_softmax",
    "_softmax",
]


def _log_softmax(Z: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax, stable for logits of any magnitude."""
    Z = np.asarray(Z, dtype=np.float64)
    shifted = Z - Z.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _softmax(Z: np.ndarray) -> np.ndarray:
    """Row-wise softmax, stable for logits of any magnitude."""
    Z = np.asarray(Z, dtype=np.float64)
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    E /= E.sum(axis=1, keepdims=True)
    return E


def _integer_codes(y, n_classes: int) -> bool:
    """Whether 1-D ``y`` holds integer codes ``0 .. n_classes - 1``.

    With ``estimator=None`` the columns of ``X`` are the classes; integer
    labels in that range name them by position.
    """
    y = np.asarray(y)
    return bool(
        y.ndim == 1
        and y.dtype.kind in "biuf"
        and np.all(np.isfinite(y))
        and np.all(np.mod(y, 1) == 0)
        and y.min() >= 0
        and y.max() < n_classes
    )


def _unwrap_frozen(estimator):
    return estimator.estimator if isinstance(estimator, FrozenEstimator) else estimator


def _skorch_scores(net, X) -> np.ndarray:
    """Logits of a fitted skorch net.

    Uses :func:`sklearn_hcal._skorch.skorch_logits` (which knows how the net's
    output relates to its criterion). Imported lazily so that torch is only
    loaded for skorch nets.
    """
    from .._skorch import skorch_logits

    return np.asarray(skorch_logits(net, X), dtype=np.float64)


def _get_scores(estimator, X) -> np.ndarray:
    """Scores (logits) of a fitted classifier, as an ``(n, K)`` float64 array.

    The order follows SPEC §3:

    1. ``decision_function``: a binary 1-D decision ``d`` becomes the two
       columns ``[0, d]``, so that their softmax is ``[1 - σ(d), σ(d)]`` (the
       probability a logistic model assigns). Note that scikit-learn's
       ``CalibratedClassifierCV(method="temperature")`` uses ``[-d, d]``
       instead, so its inverse temperature is half of ours on binary
       decisions.
    2. a skorch ``NeuralNet`` (possibly inside ``FrozenEstimator``): the
       module's logits through :func:`sklearn_hcal._skorch.skorch_logits`;
    3. ``log(predict_proba)``, with probabilities floored at
       :data:`PROBA_FLOOR` so that a zero probability gives a finite logit.

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
    >>> from sklearn_hcal.calibration._base import _get_scores
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> clf = LogisticRegression().fit(X, [0, 0, 1, 1])
    >>> _get_scores(clf, X).shape
    (4, 2)
    """
    inner = _unwrap_frozen(estimator)
    if hasattr(estimator, "decision_function") and not is_skorch_net(inner):
        scores = np.asarray(estimator.decision_function(X), dtype=np.float64)
        if scores.ndim == 1 or (scores.ndim == 2 and scores.shape[1] == 1):
            d = scores.reshape(-1)
            scores = np.column_stack([np.zeros_like(d), d])
    elif is_skorch_net(inner):
        scores = _skorch_scores(inner, X)
    elif hasattr(estimator, "predict_proba"):
        P = np.asarray(estimator.predict_proba(X), dtype=np.float64)
        if P.ndim == 1:
            P = np.column_stack([1.0 - P, P])
        scores = probabilities_to_logits(P)
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
    if not np.all(np.isfinite(scores)):
        raise ValueError(
            f"The scores of {type(inner).__name__} contain NaN or infinity."
        )
    return scores


class _BaseLogitCalibrator(ClassifierMixin, TransformerMixin, BaseEstimator):
    """Base class of calibrators that act on a classifier's logits.

    Subclasses define ``__init__`` (storing at least ``estimator``, ``cv`` and
    ``input``), extend ``_parameter_constraints``, and implement
    ``_fit_logits(Z, Y, sample_weight)`` and ``_transform_logits(Z)``.

    ``fit`` resolves the targets (``classes_``), the training scores of the
    chosen ``estimator`` mode (see the module docstring) and calls
    ``_fit_logits``. ``_calibration_scores(X)`` returns the uncalibrated scores
    at prediction time, for subclasses (e.g. α-calibration) that need them.

    Fitted attributes set here: ``classes_``, ``n_classes_``, ``input_type_``
    (``None`` unless ``estimator=None``), ``estimator_`` (the fitted
    classifier, ``None`` when ``estimator=None``), ``n_features_in_`` (and
    ``feature_names_in_``) when known.
    """

    _parameter_constraints: dict = {
        "estimator": [
            HasMethods(["fit", "decision_function"]),
            HasMethods(["fit", "predict_proba"]),
            HasMethods(["fit", "forward"]),  # skorch nets
            None,
        ],
        "cv": ["cv_object"],
        "input": [StrOptions({"auto", "logits", "proba"})],
    }

    # -- hooks ---------------------------------------------------------------
    def _fit_logits(self, Z, Y, sample_weight):  # pragma: no cover - abstract
        raise NotImplementedError

    def _transform_logits(self, Z):  # pragma: no cover - abstract
        raise NotImplementedError

    # -- score resolution ----------------------------------------------------
    def _mode(self) -> str:
        if self.estimator is None:
            return "logits"
        if isinstance(self.estimator, FrozenEstimator):
            return "frozen"
        return "crossfit"

    def _validate_logits_input(self, X, *, reset: bool) -> np.ndarray:
        """Validate ``X`` as the classifier output (``estimator=None``)."""
        X = validate_data(
            self,
            X,
            reset=reset,
            dtype=[np.float64, np.float32],
            ensure_min_samples=2 if reset else 1,
        )
        if X.shape[1] < 2:
            raise ValueError(
                f"With estimator=None, X must hold one score column per class "
                f"(at least 2); got n_features={X.shape[1]}. Pass the classifier "
                "itself (e.g. FrozenEstimator(clf)) for 1-D binary scores."
            )
        if reset:
            if self.input == "auto":
                self.input_type_ = "proba" if looks_like_probabilities(X) else "logits"
            else:
                self.input_type_ = self.input
        if self.input_type_ == "proba":
            if not looks_like_probabilities(X):
                raise ValueError(
                    "X must hold probabilities (entries in [0, 1], rows summing "
                    "to 1) because this calibrator was fitted on probabilities "
                    f"(input={self.input!r}); pass probabilities or refit with "
                    "input='logits'."
                )
            return probabilities_to_logits(X)
        return np.asarray(X, dtype=np.float64)

    def _calibration_scores(self, X) -> np.ndarray:
        """Uncalibrated scores of ``X`` at prediction time, ``(n, K)`` float64."""
        check_is_fitted(self)
        if self.estimator_ is None:
            Z = self._validate_logits_input(X, reset=False)
        else:
            Z = _get_scores(self.estimator_, X)
        if Z.shape[1] != self.n_classes_:
            raise ValueError(
                f"The scores have {Z.shape[1]} columns but the calibrator was "
                f"fitted with {self.n_classes_} classes (class-count mismatch)."
            )
        return Z

    def _resolve_targets(self, y, n_classes, estimator_classes=None):
        """Targets as a float64 histogram ``(n, K)`` and the ``classes_``."""
        if is_histogram_target(y):
            Y, classes = check_label_histograms(
                y,
                name="y",
                allow_probabilities=True,
                n_classes=n_classes,
                dtype=(np.float64,),
                return_classes=True,
            )
            if not hasattr(y, "columns") and estimator_classes is not None:
                classes = np.asarray(estimator_classes)
            return Y, classes
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise ValueError(
                "y must be 1-D class labels or an (n_samples, n_classes) label "
                f"histogram; got shape {y.shape}."
            )
        if estimator_classes is not None:
            return labels_to_histograms(y, classes=estimator_classes, name="y")
        if _integer_codes(y, n_classes):
            # X holds the scores themselves (estimator=None): integer labels
            # name the score columns 0 .. K-1.
            return labels_to_histograms(y, classes=np.arange(n_classes), name="y")
        return labels_to_histograms(y, n_classes=n_classes, name="y")

    def _crossfit_scores(self, X, y, is_hist, sample_weight):
        """Out-of-fold scores of clones of ``estimator``; refit on all data."""
        X, y = indexable(X, y)
        y_cv = np.asarray(y)
        cv = check_cv(self.cv, y_cv, classifier=not is_hist)
        n_samples = _num_samples(X)
        Z = None
        covered = np.zeros(n_samples, dtype=bool)
        supports_sw = sample_weight is not None and self._fit_accepts_sample_weight()
        if sample_weight is not None and not supports_sw:
            warnings.warn(
                f"{type(self.estimator).__name__}.fit does not accept "
                "sample_weight; the weights are used by the calibrator only.",
                UserWarning,
                stacklevel=3,
            )
        for train, test in cv.split(X, y_cv if not is_hist else None):
            model = self._fit_inner(
                _safe_indexing(X, train),
                _safe_indexing(y, train),
                is_hist,
                None if not supports_sw else sample_weight[train],
            )
            scores = _get_scores(model, _safe_indexing(X, test))
            if Z is None:
                Z = np.empty((n_samples, scores.shape[1]), dtype=np.float64)
            if scores.shape[1] != Z.shape[1] or (
                not is_hist and not np.array_equal(model.classes_, np.unique(y_cv))
            ):
                raise ValueError(
                    "A cross-validation fold's training part does not contain "
                    "every class, so its scores do not cover all classes; use "
                    "fewer folds (cv) or more data per class."
                )
            Z[test] = scores
            covered[test] = True
        if not np.all(covered):
            raise ValueError(
                "cv must be a partition: every sample needs an out-of-fold score."
            )
        self.estimator_ = self._fit_inner(
            X, y, is_hist, sample_weight if supports_sw else None
        )
        return Z

    def _fit_accepts_sample_weight(self) -> bool:
        try:
            return has_fit_parameter(self.estimator, "sample_weight")
        except Exception:  # pragma: no cover - exotic fit signatures
            return False

    def _fit_inner(self, X, y, is_hist, sample_weight):
        model = clone(self.estimator)
        if is_hist:
            from .._soft_label import SoftLabelClassifier

            model = SoftLabelClassifier(model)
        if sample_weight is None:
            return model.fit(X, y)
        return model.fit(X, y, sample_weight=sample_weight)

    # -- public API ------------------------------------------------------------
    def _fit(self, X, y, sample_weight=None):
        """Resolve scores and targets, then call ``_fit_logits``.

        Subclasses decorate their public ``fit`` with ``_fit_context`` and call
        this.
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None (pass class labels or label histograms)."
            )
        mode = self._mode()
        is_hist = is_histogram_target(y)
        if not is_hist:
            # scikit-learn's conventions for labels: an (n, 1) column warns,
            # continuous or unknown targets raise
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
        self.input_type_ = None
        if mode == "logits":
            Z = self._validate_logits_input(X, reset=True)
            check_consistent_length(Z, y)
            Y, classes = self._resolve_targets(y, n_classes=Z.shape[1])
            self.estimator_ = None
        else:
            check_consistent_length(X, y)
            if _num_samples(X) < 2:
                raise ValueError(
                    f"{type(self).__name__} needs at least 2 samples to fit, got "
                    f"n_samples={_num_samples(X)}."
                )
            if mode == "frozen":
                self.estimator_ = self.estimator
                Z = _get_scores(self.estimator_, X)
                est_classes = getattr(self.estimator_, "classes_", None)
                if est_classes is not None and len(est_classes) != Z.shape[1]:
                    est_classes = None
                Y, classes = self._resolve_targets(
                    y, n_classes=Z.shape[1], estimator_classes=est_classes
                )
            else:
                if sample_weight is not None:
                    sample_weight = _check_sample_weight(sample_weight, X)
                Z = self._crossfit_scores(X, y, is_hist, sample_weight)
                est_classes = getattr(self.estimator_, "classes_", None)
                if est_classes is not None and len(est_classes) != Z.shape[1]:
                    est_classes = None
                Y, classes = self._resolve_targets(
                    y, n_classes=Z.shape[1], estimator_classes=est_classes
                )
            for attr in ("n_features_in_", "feature_names_in_"):
                if hasattr(self.estimator_, attr):
                    setattr(self, attr, getattr(self.estimator_, attr))
        if Y.shape[1] != Z.shape[1]:
            raise ValueError(
                f"y has {Y.shape[1]} classes but the scores have {Z.shape[1]} "
                "columns (class-count mismatch)."
            )
        if Y.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 samples to fit, got "
                f"n_samples={Y.shape[0]}."
            )
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, Y, dtype=np.float64)
        self.classes_ = np.asarray(classes)
        self.n_classes_ = int(Z.shape[1])
        self._fit_logits(np.asarray(Z, dtype=np.float64), Y, sample_weight)
        return self

    def transform(self, X) -> np.ndarray:
        """Calibrated logits.

        Parameters
        ----------
        X : array-like
            Scores (``estimator=None``) or input of the wrapped classifier.

        Returns
        -------
        logits : ndarray of shape (n_samples, n_classes)
        """
        return self._transform_logits(self._calibration_scores(X))

    def predict_proba(self, X) -> np.ndarray:
        """Calibrated class probabilities, the softmax of :meth:`transform`.

        Parameters
        ----------
        X : array-like
            Scores (``estimator=None``) or input of the wrapped classifier.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return _softmax(self.transform(X))

    def predict_log_proba(self, X) -> np.ndarray:
        """Log of :meth:`predict_proba`, computed stably."""
        return _log_softmax(self.transform(X))

    def predict(self, X) -> np.ndarray:
        """Most probable class (first on ties), mapped to ``classes_``."""
        logits = self.transform(X)
        return self.classes_[np.argmax(logits, axis=1)]

    def score(self, X, y, sample_weight=None) -> float:
        """Majority accuracy for histograms, accuracy for 1-D labels.

        Parameters
        ----------
        X : array-like
            Scores (``estimator=None``) or input of the wrapped classifier.
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Labels or label histograms.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        if is_histogram_target(y):
            P = self.predict_proba(X)
            if sample_weight is None:
                from ..metrics import majority_accuracy_score

                return float(majority_accuracy_score(y, P))
            from ..metrics._majority import _majority_correct_per_item

            Y = check_label_histograms(
                y, name="y", allow_probabilities=True, n_classes=P.shape[1]
            )
            sample_weight = _check_sample_weight(sample_weight, Y)
            correct = _majority_correct_per_item(Y, P, "first")
            return float(np.average(correct, weights=sample_weight))
        return super().score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.estimator is not None:
            inner = _unwrap_frozen(self.estimator)
            try:
                inner_tags = inner.__sklearn_tags__()
            except AttributeError:  # pragma: no cover - non-sklearn objects
                inner_tags = None
            if inner_tags is not None:
                tags.input_tags = inner_tags.input_tags
        return tags
