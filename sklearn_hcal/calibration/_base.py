"""The one calibration core that every calibrator inherits (developer guide
§estimators).

The front end -- targets and their classes by name, ``counts=`` routing,
``sample_weight``, ``estimator=None`` input and ``FrozenEstimator`` -- is
:class:`sklearn_hcal._frontend.ClassifierOutputMixin`, shared with the
conformal classifier. :class:`_BaseCalibrator` adds what only calibrators
do:

* the third ``estimator`` mode: an unfitted classifier is cross-fitted with
  :func:`._crossfit.cross_fit` and then refitted on all the data
  (histograms train it through ``SoftLabelClassifier``). Only
  ``FrozenEstimator`` means prefit (scikit-learn's rule): a fitted but not
  frozen classifier is cloned and cross-fitted afresh, with a warning.
  skorch nets and prediction-time ensembles are never cross-fitted (a clear
  error says why and what to do);
* ``transform`` names (``get_feature_names_out``, ``set_output``).

A concrete calibrator implements the front end's hooks (``_outputs``,
``_input_outputs``, see :mod:`sklearn_hcal._frontend`) where the scores are
not what it needs, and

``_fit_outputs(outputs, Y, sample_weight)``
    Fit on those outputs and the float64 histograms ``Y`` (in ``classes_``
    order).

and calls ``self._fit(X, y, sample_weight, counts)`` from a ``fit``
decorated with ``fit_context``; ``self._predict_outputs(X)`` gives the
outputs at prediction time. :class:`_BaseLogitCalibrator` adds the logit
scalers' ``transform`` / ``predict_proba`` on top of ``_fit_logits`` and
``_transform_logits``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._frontend import (
    ClassifierOutputMixin,
    contains_skorch_net,
    log_softmax,
    softmax,
)
from ..utils._compat import HasMethods, check_feature_names_in
from ..utils._pipeline import final_estimator, get_method
from ..utils._sample_weight import sample_weight_key
from ..utils._warnings import warn_user
from ._crossfit import cross_fit, fit_clone, warn_fitted_not_frozen

__all__ = ["_BaseCalibrator", "_BaseLogitCalibrator"]

_SKORCH_CROSSFIT = (
    "{name} cannot cross-fit a skorch net: nets trained for a fixed number of "
    "epochs on a fraction of the data give out-of-fold logits on another "
    "scale than the net refitted on all of it (e.g. logit std 0.35 vs 1.8), "
    "so the calibrator would be fitted to the wrong scale (a cross-fitted "
    "AlphaCalibrator collapsed alpha0 to its clip bound this way). Fit the "
    "net first, then calibrate it on held-out data: "
    "{name}(FrozenEstimator(net)).fit(X_valid, y_valid)."
)


class _BaseCalibrator(
    ClassifierOutputMixin, ClassifierMixin, TransformerMixin, BaseEstimator
):
    """Base of every calibrator; see the module docstring for the hooks.

    Fitted attributes: those of the front end (``classes_``, ``n_classes_``,
    ``input_type_``, ``estimator_``, ``n_features_in_`` and
    ``feature_names_in_`` when known).
    """

    #: fits on label histograms (so cross-fitting does not wrap it in a
    #: SoftLabelClassifier)
    _fits_histograms = True
    #: prefix of the names of ``transform``'s columns, one per class
    _feature_prefix = "logit"

    _parameter_constraints: dict = {
        **ClassifierOutputMixin._parameter_constraints,
        "estimator": [
            HasMethods(["fit", "decision_function"]),
            HasMethods(["fit", "predict_proba"]),
            HasMethods(["fit", "forward"]),  # skorch nets
            None,
        ],
        "cv": ["cv_object"],
    }

    # -- hooks -----------------------------------------------------------------
    def _fit_outputs(self, outputs, Y, sample_weight):  # pragma: no cover
        raise NotImplementedError

    def _unfrozen_outputs(self, X, targets, sample_weight):
        """Out-of-fold outputs; ``estimator_`` refitted on all the data."""
        name = type(self).__name__
        if contains_skorch_net(self.estimator):
            raise ValueError(_SKORCH_CROSSFIT.format(name=name))
        # through Pipelines too: Pipeline(scaler, ensemble) was cross-fitted
        # as a plain classifier, its members averaged away
        if get_method(self.estimator, "predict_proba_samples") is not None:
            ens = type(final_estimator(self.estimator)).__name__
            raise ValueError(
                f"{ens} is a prediction-time ensemble around a fitted model and "
                f"trains nothing itself, so {name} cannot cross-fit it; fit it, "
                f"then pass FrozenEstimator({type(self.estimator).__name__}(...))."
            )
        warn_fitted_not_frozen(
            self.estimator,
            owner=name,
            param="estimator",
            action="it is cloned and cross-fitted afresh on cv folds",
        )
        inner_weight = sample_weight
        if sample_weight is not None and sample_weight_key(self.estimator) is None:
            warn_user(
                f"{type(self.estimator).__name__}.fit does not accept "
                "sample_weight (nor does a Pipeline's final step), so the "
                "weights are used by the calibrator only."
            )
            inner_weight = None
        y = targets.y
        classes = None if self.classes is None else np.asarray(self.classes)
        outputs = cross_fit(
            self.estimator,
            X,
            y,
            cv=self.cv,
            outputs=self._outputs,
            sample_weight=inner_weight,
            classes=classes,
            require_classes=None if targets.is_histogram else np.unique(y),
        )
        self.estimator_ = fit_clone(
            self.estimator, X, y, sample_weight=inner_weight, classes=classes
        )
        return outputs

    def _fit(self, X, y, sample_weight=None, counts=None):
        """Resolve outputs and targets (the front end), then ``_fit_outputs``."""
        self._fit_outputs(*self._fit_front(X, y, sample_weight, counts))
        return self

    # -- shared public API --------------------------------------------------------
    def get_feature_names_out(self, input_features=None):
        """Names of ``transform``'s columns: ``"<prefix>_<class>"`` per class.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Checked against ``feature_names_in_`` when given.

        Returns
        -------
        names : ndarray of str objects
        """
        check_is_fitted(self)
        if input_features is not None and hasattr(self, "n_features_in_"):
            check_feature_names_in(self, input_features)
        prefix = self._feature_prefix
        return np.asarray([f"{prefix}_{c}" for c in self.classes_], dtype=object)


class _BaseLogitCalibrator(_BaseCalibrator):
    """Calibrators that map scores to calibrated logits.

    Subclasses implement ``_fit_logits(Z, Y, sample_weight)`` (on float64
    scores ``Z`` and histograms ``Y``) and ``_transform_logits(Z)``.
    """

    def _fit_logits(self, Z, Y, sample_weight):  # pragma: no cover - abstract
        raise NotImplementedError

    def _transform_logits(self, Z):  # pragma: no cover - abstract
        raise NotImplementedError

    def _fit_outputs(self, outputs, Y, sample_weight):
        self._fit_logits(np.asarray(outputs, dtype=np.float64), Y, sample_weight)

    def transform(self, X) -> np.ndarray:
        """Calibrated logits, one column per class of ``classes_``.

        Parameters
        ----------
        X : array-like
            Scores (``estimator=None``) or input of the wrapped classifier.

        Returns
        -------
        logits : ndarray of shape (n_samples, n_classes)
        """
        return self._transform_logits(self._predict_outputs(X))

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
        return softmax(self._transform_logits(self._predict_outputs(X)))

    def predict_log_proba(self, X) -> np.ndarray:
        """Log of :meth:`predict_proba`, computed stably.

        Parameters
        ----------
        X : array-like
            Scores (``estimator=None``) or input of the wrapped classifier.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        return log_softmax(self._transform_logits(self._predict_outputs(X)))
