"""What MC dropout and test-time augmentation share: fitting and predicting.

Both ensembles are meta-estimators in scikit-learn's sense. ``fit(X, y)``
trains a clone of the wrapped model, so that ``clone``, ``GridSearchCV`` and
``cross_validate`` work; a model that is already fitted is used as it is only
inside :class:`sklearn.frozen.FrozenEstimator` (scikit-learn's rule for
prefit models, the same as for the calibrators).
"""

from __future__ import annotations

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._frontend import (
    HumanScoreMixin,
    check_new_labels,
    is_fitted,
    is_prefit,
    unwrap_frozen,
)
from ..utils._compat import validate_data
from ._crossfit import fit_clone, warn_fitted_not_frozen


def _known_input(X) -> bool:
    import scipy.sparse as sp

    return (
        isinstance(X, (np.ndarray, list, tuple, dict))
        or hasattr(X, "iloc")
        or hasattr(X, "detach")
        or sp.issparse(X)
    )


class _BaseEnsemble(HumanScoreMixin, ClassifierMixin, BaseEstimator):
    """Shared fit and prediction API of the prediction-time ensembles.

    Subclasses name their wrapped-model parameter in ``_model_param`` and
    implement ``predict_proba_samples`` and ``_validate_model``.
    """

    _model_param = "estimator"

    def _validate_model(self, model):  # pragma: no cover - abstract
        """Check the fitted (unwrapped) model; may set fitted attributes."""
        raise NotImplementedError

    def predict_proba_samples(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def _fit_model(self, X, y, fit_params):
        """The fitted model: the frozen one, or a clone fitted on ``(X, y)``.

        The calibration core's rules: only ``FrozenEstimator`` means prefit
        (:func:`sklearn_hcal._frontend.is_prefit`); anything else is cloned
        and fitted by :func:`._crossfit.fit_clone` (through ``SoftLabelClassifier`` when
        ``y`` is a histogram the model cannot take), with a warning when it
        was fitted already.
        """
        name = self._model_param
        model = getattr(self, name)
        if is_prefit(model):
            if not is_fitted(model.estimator):
                raise NotFittedError(
                    f"The {type(model.estimator).__name__} inside "
                    f"FrozenEstimator is not fitted; fit it before freezing, or "
                    f"pass it unfrozen so that {type(self).__name__}.fit trains "
                    "it."
                )
            return model.estimator
        if X is None or y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target "
                f"y is None{' (and so is X)' if X is None else ''}: fit(X, y) "
                f"trains a clone of {name}. To use an already fitted model as "
                f"it is, pass {name}=FrozenEstimator(model) and call fit() "
                "without data."
            )
        warn_fitted_not_frozen(
            model,
            owner=type(self).__name__,
            param=name,
            action=f"{type(self).__name__}.fit trains a clone of it on (X, y)",
        )
        return fit_clone(model, X, y, fit_params=fit_params)

    def _fit(self, X, y, fit_params):
        fitted = self._fit_model(X, y, fit_params)
        self._validate_model(fitted)
        setattr(self, f"{self._model_param}_", fitted)
        classes = getattr(fitted, "classes_", None)
        self.classes_ = None if classes is None else np.asarray(classes)
        if X is not None:
            # Records n_features_in_ (and feature names) for inputs that have
            # them; images, dicts and text lists pass through unchecked.
            validate_data(self, X, skip_check_array=True, reset=True)
        elif hasattr(fitted, "n_features_in_"):
            self.n_features_in_ = fitted.n_features_in_
        return self

    def _check_input(self, X):
        check_is_fitted(self)
        if hasattr(X, "__array__") and not _known_input(X):
            X = np.asarray(X)  # array-likes the wrapped models may not index
        if hasattr(self, "n_features_in_") and np.ndim(X) == 1:
            # fitted on 2-D features; a 1-D array is one row or one feature
            raise ValueError(
                f"Expected 2D array, got 1D array instead: {type(self).__name__} "
                f"was fitted on {self.n_features_in_} features. Reshape your "
                "data either using array.reshape(-1, 1) if your data has a "
                "single feature or array.reshape(1, -1) if it contains a single "
                "sample."
            )
        if hasattr(self, "n_features_in_") or hasattr(self, "feature_names_in_"):
            validate_data(self, X, skip_check_array=True, reset=False)
        return X

    def _classes_for(self, n_classes: int) -> np.ndarray:
        classes = self.classes_
        if classes is None or len(classes) != n_classes:
            return np.arange(n_classes)
        return classes

    def predict_proba(self, X):
        """Ensemble mean ``(1/S) Σ_s f^(s)(x)``.

        Parameters
        ----------
        X : input accepted by the wrapped model
            Items to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self.predict_proba_samples(X).mean(axis=0)

    def predict(self, X):
        """Class with the highest mean probability, an element of ``classes_``.

        Parameters
        ----------
        X : input accepted by the wrapped model
            Items to predict.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        P = self.predict_proba(X)
        return self._classes_for(P.shape[1])[np.argmax(P, axis=1)]

    def predict_disagreement(self, X):
        r"""Disagreement probability, eq. 72 of Mimori et al. (2021).

        :math:`\hat\varphi = \frac1S\sum_s\left(1 - \sum_k (f^{(s)}_k)^2\right)`.

        Parameters
        ----------
        X : input accepted by the wrapped model
            Items to predict.

        Returns
        -------
        phi : ndarray of shape (n_samples,)
        """
        F = self.predict_proba_samples(X)
        return (1.0 - np.sum(F**2, axis=-1)).mean(axis=0)

    def predict_posterior(self, X, Y_new):
        r"""Posterior class probabilities after new labels (eq. 80–81).

        Each member is re-weighted by the likelihood of the new labels,
        :math:`w_s \propto \prod_k (f^{(s)}_k)^{y_k}` (the product over classes;
        Mimori et al.'s released code sums over classes, which is not the
        likelihood), and the posterior mean is
        :math:`\sum_s w_s f^{(s)} / \sum_s w_s`. A zero row of ``Y_new`` gives
        the prior mean.

        Parameters
        ----------
        X : input accepted by the wrapped model
            Items to predict.
        Y_new : array-like of shape (n_samples, n_classes) or (n_samples,)
            New label counts or one new label per item.

        Returns
        -------
        posterior : ndarray of shape (n_samples, n_classes)
        """
        F = self.predict_proba_samples(X)
        Yn = check_new_labels(Y_new, F.shape[1], self._classes_for(F.shape[-1]))
        log_f = np.log(np.clip(F, 1e-300, None))
        # Members with f_k = 0 for an observed class get weight exp(-690·y):
        # effectively zero, without 0·log 0 = NaN for unobserved classes.
        log_w = np.einsum("snk,nk->sn", log_f, Yn)
        w = softmax(log_w, axis=0)
        return np.einsum("sn,snk->nk", w, F)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        model = unwrap_frozen(getattr(self, self._model_param))
        try:
            inner = model.__sklearn_tags__()
        except AttributeError:  # skorch nets and other non-sklearn models
            inner = None
        if inner is not None:
            tags.input_tags = inner.input_tags
        # y may be a label histogram (n, K) as well as 1-D labels
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags
