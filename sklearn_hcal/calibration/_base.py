"""The one calibration core that every calibrator inherits (developer guide
§estimators).

:class:`_BaseCalibrator` resolves, once for all calibrators, *what* is
calibrated and *against what*:

* the three ``estimator`` modes -- ``None`` (``X`` is the classifier output),
  ``FrozenEstimator(fitted_clf)`` (prefit), an unfitted classifier
  (cross-fitted with :func:`._crossfit.cross_fit`, then refitted on all the
  data; histograms train it through ``SoftLabelClassifier``). Only
  ``FrozenEstimator`` means prefit (scikit-learn's rule): a fitted but not
  frozen classifier is cloned and cross-fitted afresh, with a warning. skorch
  nets and prediction-time ensembles are never cross-fitted (a clear error
  says why and what to do);
* the targets (:mod:`sklearn_hcal._validation._targets`): histograms or labels, classes
  matched by name with the wrapped classifier's ``classes_``, ``counts=``
  routed as metadata (convention B), ``sample_weight``;
* one ``score`` (majority accuracy for histograms, accuracy for labels),
  ``predict``, ``get_feature_names_out`` / ``set_output`` for ``transform``.

A concrete calibrator implements these hooks:

``_outputs(estimator, X)``
    What it needs from a fitted classifier on ``X``: an array, or a tuple of
    arrays, with one row per sample (default: the scores, :func:`get_scores`).
``_input_outputs(X)``
    The same from validated ``estimator=None`` input (default: the logits of
    ``X``, probabilities converted by ``probabilities_to_logits``).
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

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.validation import check_consistent_length, check_is_fitted

from .._validation import (
    HumanScoreMixin,
    check_item_weights,
    check_n_samples,
    check_target,
    frame_names,
    resolve_targets,
    select_target,
    sorted_names,
)
from ..utils._compat import (
    HasMethods,
    StrOptions,
    check_feature_names_in,
    num_samples,
    validate_data,
)
from ..utils._pipeline import final_estimator, get_method
from ..utils._sample_weight import sample_weight_key
from ._crossfit import cross_fit, fit_clone, warn_fitted_not_frozen
from ._scores import (
    contains_skorch_net,
    get_scores,
    is_prefit,
    log_softmax,
    read_input_type,
    scores_from_input,
    softmax,
    unwrap_frozen,
)

__all__ = ["_BaseCalibrator", "_BaseLogitCalibrator", "_get_scores"]

#: Kept under its historical name for callers of the private API.
_get_scores = get_scores
_softmax = softmax
_log_softmax = log_softmax

_SKORCH_CROSSFIT = (
    "{name} cannot cross-fit a skorch net: nets trained for a fixed number of "
    "epochs on a fraction of the data give out-of-fold logits on another "
    "scale than the net refitted on all of it (e.g. logit std 0.35 vs 1.8), "
    "so the calibrator would be fitted to the wrong scale (a cross-fitted "
    "AlphaCalibrator collapsed alpha0 to its clip bound this way). Fit the "
    "net first, then calibrate it on held-out data: "
    "{name}(FrozenEstimator(net)).fit(X_valid, y_valid)."
)


def _estimator_classes(estimator, n_classes):
    """``classes_`` of a fitted classifier when it names the score columns."""
    try:
        classes = getattr(estimator, "classes_", None)
    except Exception:  # properties of wrappers that raise when unfitted
        return None
    if classes is None or len(classes) != n_classes:
        return None
    return np.asarray(classes)


def _n_classes(outputs):
    """Number of classes (last axis) of the hooks' outputs."""
    first = outputs[0] if isinstance(outputs, tuple) else outputs
    return first.shape[-1]


def _prefix_cuts(names):
    """0, then the length of every ``"<prefix>_"`` that all ``names`` share."""
    yield 0
    for i, char in enumerate(names[0]):
        if char == "_" and all(n.startswith(names[0][: i + 1]) for n in names):
            yield i + 1


def _input_column_classes(x_names, y, is_hist, classes=None):
    """The class of each column of ``estimator=None`` input, or None.

    ``X``'s column names name the classes when they are the names of ``y``'s
    classes (the ``classes`` parameter, else a histogram's column names or
    the labels), as they are or behind one common ``"<prefix>_"`` -- the
    ``logit_<class>`` / ``alpha_<class>`` columns of a calibrator's
    ``transform`` under ``set_output(transform="pandas")``, so that
    calibrators chained in a Pipeline stay aligned. Names that match only in
    part raise (developer guide §class-names: nothing is matched by position when names
    disagree); names that share nothing with the classes (``x0, x1, ...``)
    leave the columns positional. Only string labels are matched
    (``feature_names_in_`` is always text); ``classes`` are matched by their
    text.
    """
    if classes is not None:
        # they name an array histogram's columns (or the labels' classes), so
        # X's names must be read even when y itself carries none
        targets = np.asarray(classes)
    elif is_hist:
        targets = frame_names(y)
    else:
        values = np.asarray(y)
        targets = None
        if values.dtype.kind in "OU" and all(isinstance(v, str) for v in values):
            targets = np.unique(values)
    if targets is None:
        return None
    by_text = {str(t): t for t in np.asarray(targets).tolist()}
    x_text = [str(n) for n in x_names]
    partial = None
    for cut in _prefix_cuts(x_text):
        names = [x[cut:] for x in x_text]
        if len(set(names)) != len(names):
            continue
        if set(by_text) <= set(names) and (not is_hist or len(names) == len(by_text)):
            return np.asarray([by_text.get(n, n) for n in names])
        if partial is None and set(by_text) & set(names):
            partial = names
    if partial is not None:
        what = "columns of y" if is_hist else "labels of y"
        if classes is not None:
            what = "classes"
        raise ValueError(
            f"With estimator=None the columns of X name the classes, but X's "
            f"columns {x_text[:10]} (read as {partial[:10]}) do not match the "
            f"{what} {sorted(by_text)[:10]}. Rename X's columns to the "
            "class names, or pass X as an array to match them by position."
        )
    return None


def check_positional_scores(y, owner: str) -> None:
    """Raise unless unnamed score columns may follow ``names`` by position.

    With ``estimator=None`` and ``X`` an array (no class names), ``X``'s
    columns are a classifier's scores, which follow its ``classes_``: the
    sorted class names. A histogram DataFrame whose columns are in another
    order would pair each class with another class's score without a word
    (developer guide §class-names), so the two orders are shown and
    ``classes=`` (or named columns of ``X``) is asked for.
    """
    try:
        names = frame_names(y)
    except ValueError:
        return  # repeated names: the targets' own check names the argument
    if names is None:
        return
    shown = np.asarray(names).tolist()
    in_order = sorted_names(names)
    if in_order == shown:
        return
    raise ValueError(
        f"{owner}(estimator=None): y names its classes {shown} (its columns) "
        "but X is an array without class names, so which column of X scores "
        f"which class is unknown: a classifier's scores follow its classes_ "
        f"(sorted: {in_order}), not y's column order. Pass classes= (the class "
        "of each column of X, e.g. classes=clf.classes_), or X as a DataFrame "
        "whose columns name the classes."
    )


class _BaseCalibrator(
    HumanScoreMixin, ClassifierMixin, TransformerMixin, BaseEstimator
):
    """Base of every calibrator; see the module docstring for the hooks.

    Fitted attributes set here: ``classes_``, ``n_classes_``, ``input_type_``
    (``None`` unless ``estimator=None``), ``estimator_`` (the classifier used
    at prediction time, ``None`` when ``estimator=None``),
    ``n_features_in_`` (and ``feature_names_in_``) when known.
    """

    #: fits on label histograms (so cross-fitting does not wrap it in a
    #: SoftLabelClassifier)
    _fits_histograms = True
    #: prefix of the names of ``transform``'s columns, one per class
    _feature_prefix = "logit"
    #: whether rows of probabilities are accepted as targets (soft labels);
    #: α-calibration needs counts
    _allow_probability_targets = True

    _parameter_constraints: dict = {
        "estimator": [
            HasMethods(["fit", "decision_function"]),
            HasMethods(["fit", "predict_proba"]),
            HasMethods(["fit", "forward"]),  # skorch nets
            None,
        ],
        "cv": ["cv_object"],
        "input": [StrOptions({"auto", "logits", "proba"})],
        "classes": ["array-like", None],
    }

    # -- hooks -----------------------------------------------------------------
    def _outputs(self, estimator, X):
        return get_scores(estimator, X)

    def _input_outputs(self, X):
        return scores_from_input(X, self.input_type_, fitted_input=self.input)

    def _fit_outputs(self, outputs, Y, sample_weight):  # pragma: no cover
        raise NotImplementedError

    def _check_crossfit_estimator(self):
        """Refuse what cannot be cross-fitted; warn about discarded fits."""
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
            stacklevel=5,
        )

    # -- modes -----------------------------------------------------------------
    def _mode(self) -> str:
        if self.estimator is None:
            return "input"
        if is_prefit(self.estimator):
            return "frozen"
        return "crossfit"

    def _validate_input(self, X, *, reset: bool):
        """Validate ``estimator=None`` input: one score column per class."""
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
            self.input_type_ = read_input_type(X, self.input)
        return X

    def _crossfit(self, X, y, is_hist, sample_weight):
        """Out-of-fold outputs; ``estimator_`` refitted on all the data."""
        inner_weight = sample_weight
        if sample_weight is not None and sample_weight_key(self.estimator) is None:
            warnings.warn(
                f"{type(self.estimator).__name__}.fit does not accept "
                "sample_weight (nor does a Pipeline's final step), so the "
                "weights are used by the calibrator only.",
                UserWarning,
                stacklevel=5,
            )
            inner_weight = None
        classes = None if self.classes is None else np.asarray(self.classes)
        outputs = cross_fit(
            self.estimator,
            X,
            y,
            cv=self.cv,
            outputs=self._outputs,
            sample_weight=inner_weight,
            classes=classes,
            require_classes=None if is_hist else np.unique(y),
        )
        self.estimator_ = fit_clone(
            self.estimator, X, y, sample_weight=inner_weight, classes=classes
        )
        return outputs

    def _outputs_and_reference(self, X, y, is_hist, sample_weight):
        """The training outputs of the chosen mode and the reference classes.

        Returns ``(outputs, reference, sample_weight)``: ``reference`` is the
        class of each output column when it is known by name (the wrapped
        classifier's ``classes_``, or ``X``'s column names when they carry
        ``y``'s), else None.
        """
        mode = self._mode()
        if mode == "input":
            X = self._validate_input(X, reset=True)
            check_consistent_length(X, y)
            self.estimator_ = None
            x_names = getattr(self, "feature_names_in_", None)
            reference = None
            if x_names is not None:
                reference = _input_column_classes(x_names, y, is_hist, self.classes)
            if reference is None and self.classes is None and is_hist:
                check_positional_scores(y, type(self).__name__)
            return self._input_outputs(X), reference, sample_weight
        check_consistent_length(X, y)
        n = num_samples(X)
        if n < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 samples to fit; got {n} "
                f"sample(s) (n_samples={n})."
            )
        sample_weight = check_item_weights(sample_weight, X)
        if mode == "frozen":
            self.estimator_ = self.estimator
            outputs = self._outputs(self.estimator_, X)
        else:
            self._check_crossfit_estimator()
            outputs = self._crossfit(X, y, is_hist, sample_weight)
        for attr in ("n_features_in_", "feature_names_in_"):
            value = getattr(unwrap_frozen(self.estimator_), attr, None)
            if value is not None:
                setattr(self, attr, value)
        reference = _estimator_classes(self.estimator_, _n_classes(outputs))
        return outputs, reference, sample_weight

    def _fit(self, X, y, sample_weight=None, counts=None):
        """Resolve outputs and targets, then call ``_fit_outputs``."""
        name = type(self).__name__
        y, target_name = select_target(y, counts, owner=name)
        y, is_hist = check_target(y, name=target_name)
        check_n_samples(X, y, "X", target_name)
        self.input_type_ = None
        for attr in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(attr, None)  # from an earlier fit in another mode
        outputs, reference, sample_weight = self._outputs_and_reference(
            X, y, is_hist, sample_weight
        )
        n_classes = _n_classes(outputs)
        Y, classes = resolve_targets(
            y,
            n_classes=n_classes,
            reference=reference,
            classes=self.classes,
            allow_probabilities=self._allow_probability_targets,
            name=target_name,
            reference_name=(
                "X's columns" if self.estimator is None else "the estimator's classes_"
            ),
        )
        if Y.shape[1] != n_classes:
            raise ValueError(
                f"{target_name} has {Y.shape[1]} classes but the scores have "
                f"{n_classes} columns (class-count mismatch)."
            )
        if Y.shape[0] < 2:
            raise ValueError(
                f"{name} needs at least 2 samples to fit; got {Y.shape[0]} "
                f"sample(s) (n_samples={Y.shape[0]})."
            )
        sample_weight = check_item_weights(sample_weight, Y)
        self.classes_ = np.asarray(classes)
        self.n_classes_ = int(n_classes)
        self._fit_outputs(outputs, Y, sample_weight)
        return self

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
                f"the calibrator was fitted with {self.n_classes_} classes "
                "(class-count mismatch)."
            )
        return outputs

    # -- shared public API --------------------------------------------------------
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = True
        if self.estimator is not None:
            try:
                inner = unwrap_frozen(self.estimator).__sklearn_tags__()
            except AttributeError:  # pragma: no cover - non-sklearn objects
                inner = None
            if inner is not None:
                tags.input_tags = inner.input_tags
        return tags


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
