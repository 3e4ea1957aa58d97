"""The front end of estimators whose ``X`` is a classifier's output.

:class:`ClassifierOutputMixin` is the second level of the estimators' front
end (developer guide §estimators). On top of the targets of
:class:`~sklearn_hcal._frontend.HumanTargetMixin` it resolves *what*
``X`` is:

* ``estimator=None``: ``X`` is the classifier output, one column per class,
  logits or probabilities (``input=``); a DataFrame's columns name the
  classes and are aligned with the target's by name; an unnamed array
  beside a histogram DataFrame in unsorted column order raises (the
  positional rule);
* ``FrozenEstimator(fitted_clf)``: the classifier is used as it is; its
  ``classes_`` name the columns;
* anything else is the subclass's business (:meth:`_unfrozen_outputs`): the
  calibrators cross-fit it, the default refuses it.

The hooks a subclass may override:

``_outputs(estimator, X)``
    What it needs from a fitted classifier on ``X``: an array, or a tuple of
    arrays, with one row per sample and classes on the last axis (default:
    the scores, :func:`._scores.get_scores`).
``_input_outputs(X)``
    The same from validated ``estimator=None`` input (default: logits,
    probabilities converted by a floored log).
``_unfrozen_outputs(X, targets, sample_weight)``
    The outputs for an estimator that is neither ``None`` nor frozen; it
    sets ``estimator_`` (default: a ``ValueError`` that gives
    ``_unfrozen_reason``).

``fit`` calls :meth:`_fit_front` and gets the training outputs, the float64
histograms in ``classes_`` order and the checked item weights; prediction
methods call :meth:`_predict_outputs`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._validation import all_finite, check_finite
from ..utils._compat import HasMethods, StrOptions, num_samples, validate_data
from ._columns import check_positional_scores, estimator_classes, input_column_classes
from ._scores import (
    get_scores,
    is_prefit,
    read_input_type,
    scores_from_input,
    unwrap_frozen,
)
from ._targets import HumanTargetMixin, Targets, check_min_samples

__all__ = ["ClassifierOutputMixin", "FrontEndFit"]


class FrontEndFit(NamedTuple):
    """What :meth:`ClassifierOutputMixin._fit_front` gives ``fit``."""

    #: the hooks' outputs on the training items (an array or a tuple)
    outputs: object
    #: float64 histograms (counts or probabilities) in ``classes_`` order
    Y: np.ndarray
    #: float64 item weights, or None
    sample_weight: np.ndarray | None


def _n_classes(outputs) -> int:
    """Number of classes (last axis) of the hooks' outputs."""
    first = outputs[0] if isinstance(outputs, tuple) else outputs
    return first.shape[-1]


class ClassifierOutputMixin(HumanTargetMixin):
    """Estimators fitted on a classifier's output and human labels.

    See the module docstring for the hooks. The estimator has the parameters
    ``estimator``, ``input`` and ``classes``. Fitted attributes set here:
    ``classes_``, ``n_classes_``, ``estimator_`` (``None`` when
    ``estimator=None``), ``input_type_`` (``None`` unless
    ``estimator=None``), ``n_features_in_`` and ``feature_names_in_`` when
    known.
    """

    #: why an estimator that is neither None nor frozen is refused (the
    #: default :meth:`_unfrozen_outputs`)
    _unfrozen_reason = "it needs a fitted classifier that it does not train"

    _parameter_constraints: dict = {
        "estimator": [
            HasMethods(["predict_proba"]),
            HasMethods(["decision_function"]),
            None,
        ],
        "input": [StrOptions({"auto", "logits", "proba"})],
        "classes": ["array-like", None],
    }

    # -- hooks -----------------------------------------------------------------
    def _outputs(self, estimator, X):
        return get_scores(estimator, X)

    def _input_outputs(self, X):
        return scores_from_input(X, self.input_type_, fitted_input=self.input)

    def _unfrozen_outputs(self, X, targets: Targets, sample_weight):
        name = type(self).__name__
        raise ValueError(
            f"{name} needs a fitted classifier wrapped in FrozenEstimator (got "
            f"{type(self.estimator).__name__}): {self._unfrozen_reason}. Fit the "
            f"classifier, then pass {name}(FrozenEstimator(clf))."
        )

    # -- input -------------------------------------------------------------------
    def _mode(self) -> str:
        """``"input"`` (estimator=None), ``"frozen"`` or ``"unfrozen"``."""
        if self.estimator is None:
            return "input"
        return "frozen" if is_prefit(self.estimator) else "unfrozen"

    def _validate_input(self, X, *, reset: bool):
        """Validate ``estimator=None`` input: one finite column per class."""
        X = validate_data(
            self,
            X,
            reset=reset,
            dtype=[np.float64, np.float32],
            ensure_min_samples=2 if reset else 1,
            # checked below, naming the row, the column and the value
            ensure_all_finite=False,
        )
        if not all_finite(X):
            check_finite(
                X, name="X", column_names=getattr(self, "feature_names_in_", None)
            )
        if X.shape[1] < 2:
            raise ValueError(
                f"With estimator=None, X must hold one score column per class "
                f"(at least 2); got n_features={X.shape[1]}. Pass the classifier "
                "itself (e.g. FrozenEstimator(clf)) for 1-D binary scores."
            )
        if reset:
            self.input_type_ = read_input_type(X, self.input)
        return X

    # -- fit and predict -----------------------------------------------------------
    def _fit_front(self, X, y, sample_weight=None, counts=None) -> FrontEndFit:
        """Resolve the training outputs, the targets and the item weights.

        Sets ``classes_``, ``n_classes_``, ``estimator_``, ``input_type_``
        and, when known, ``n_features_in_`` / ``feature_names_in_``.
        """
        name = type(self).__name__
        targets = self._read_targets(X, y, counts)
        self.input_type_ = None
        for attr in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(attr, None)  # from an earlier fit in another mode
        mode = self._mode()
        if mode == "input":
            X = self._validate_input(X, reset=True)
            self.estimator_ = None
            reference = None
            x_names = getattr(self, "feature_names_in_", None)
            if x_names is not None:
                reference = input_column_classes(
                    x_names, targets.y, targets.is_histogram, self.classes
                )
            if reference is None and self.classes is None and targets.is_histogram:
                check_positional_scores(targets.y, name)
            outputs = self._input_outputs(X)
        else:
            check_min_samples(num_samples(X), name)
            sample_weight = self._item_weights(sample_weight, X)
            if mode == "frozen":
                self.estimator_ = self.estimator
                outputs = self._outputs(self.estimator_, X)
            else:
                outputs = self._unfrozen_outputs(X, targets, sample_weight)
            for attr in ("n_features_in_", "feature_names_in_"):
                value = getattr(unwrap_frozen(self.estimator_), attr, None)
                if value is not None:
                    setattr(self, attr, value)
            reference = estimator_classes(self.estimator_, _n_classes(outputs))
        Y = self._resolve_targets(
            targets,
            n_classes=_n_classes(outputs),
            reference=reference,
            reference_name=(
                "X's columns" if mode == "input" else "the estimator's classes_"
            ),
        )
        check_min_samples(Y.shape[0], name)
        return FrontEndFit(outputs, Y, self._item_weights(sample_weight, Y))

    def _predict_outputs(self, X):
        """The hooks' outputs for ``X`` at prediction time."""
        check_is_fitted(self)
        if self.estimator_ is None:
            outputs = self._input_outputs(self._validate_input(X, reset=False))
        else:
            outputs = self._outputs(self.estimator_, X)
        if _n_classes(outputs) != self.n_classes_:
            raise ValueError(
                f"The scores have {_n_classes(outputs)} columns but "
                f"{type(self).__name__} was fitted with {self.n_classes_} classes "
                "(class-count mismatch)."
            )
        return outputs

    def predict(self, X) -> np.ndarray:
        """Most probable class (first on ties), mapped to ``classes_``.

        Parameters
        ----------
        X : array-like
            Scores (``estimator=None``) or input of the wrapped classifier.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)  # checks that self is fitted
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.estimator is not None:
            try:
                inner = unwrap_frozen(self.estimator).__sklearn_tags__()
            except AttributeError:  # pragma: no cover - non-sklearn objects
                inner = None
            if inner is not None:
                tags.input_tags = inner.input_tags
        return tags
