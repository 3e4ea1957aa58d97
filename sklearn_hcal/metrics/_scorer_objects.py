"""The scorer objects behind :func:`~sklearn_hcal.metrics.make_human_scorer`.

``HumanScorer`` (scikit-learn's ``_Scorer`` passing the estimator's
``classes_`` as ``labels=`` and refusing metadata its metric does not take)
and ``_DisagreementScorer`` (``predict_disagreement`` through Pipelines, or
φ = 1 − Σ_k q_k² with a warning); see :mod:`._scorer` for how they are made
and named.
"""

from __future__ import annotations

from functools import partial
from inspect import signature

import numpy as np
from sklearn.utils.metadata_routing import MetadataRequest, get_routing_for_object

from .._validation import check_disagreement
from ..utils._compat import (
    MethodMetadataRequest,
    Scorer,
    check_response_method,
    get_response_method_name,
)
from ..utils._pipeline import disagreement_method, warn_point_disagreement
from ._disagreement_kernels import _disagreement_from_probabilities


def _unwrap(func):
    while isinstance(func, partial):
        func = func.func
    return func


def func_name(func) -> str:
    func = _unwrap(func)
    return getattr(func, "__name__", type(func).__name__)


def _accepts_labels(func) -> bool:
    """Whether the metric takes ``labels=`` (not bound by a ``partial``)."""
    bound = isinstance(func, partial) and "labels" in func.keywords
    return not bound and "labels" in signature(_unwrap(func)).parameters


def _check_class_count(classes, y_true, counts) -> None:
    """Raise when the human histograms have another number of classes.

    The metric would raise too, but about the ``predict_proba`` output it was
    handed: for a binary estimator scikit-learn passes ``P(classes_[-1])``,
    and the message spoke of a 1-D ``y_prob`` the user never passed.
    """
    name, target = ("y_true", y_true) if counts is None else ("counts", counts)
    if np.ndim(target) == 2 and np.shape(target)[1] not in (1, len(classes)):
        raise ValueError(
            f"The estimator predicts {len(classes)} classes (classes_ "
            f"{np.asarray(classes).tolist()}) but {name} has {np.shape(target)[1]} "
            "columns, one per class; was the estimator fitted on data lacking "
            "a class?"
        )


class HumanScorer(Scorer):
    """A ``make_scorer`` scorer whose metric takes label histograms.

    Identical to scikit-learn's scorer except that, when the metric receives
    ``predict_proba`` and takes ``labels=``, the estimator's ``classes_``
    (the classes of the ``predict_proba`` columns) are passed as ``labels``:
    the metric's own validation then maps 1-D labels and matches named
    histogram columns, the one alignment path of the package.
    """

    #: whether the metric receives the columns of ``classes_``
    _gets_class_columns = True

    def _response(self, method_caller, estimator, X):
        """``(prediction, method name)`` of the first available method."""
        method = check_response_method(estimator, self._response_method)
        method_name = get_response_method_name(method)
        # pos_label=None: scikit-learn then hands binary classifiers'
        # P(classes_[-1]), i.e. P(second class), which every metric expands
        # back to [1 - p, p] (developer guide §scorers).
        return method_caller(estimator, method_name, X, pos_label=None), method_name

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        self._warn_overlap(
            message=(
                "There is an overlap between set kwargs of this scorer instance and"
                " passed metadata. Please pass them either as kwargs to"
                " `make_human_scorer` or metadata, but not both."
            ),
            kwargs=kwargs,
        )
        y_pred, method_name = self._response(method_caller, estimator, X)
        scoring_kwargs = {**self._kwargs, **kwargs}
        classes = getattr(estimator, "classes_", None)
        if (
            self._gets_class_columns
            and method_name == "predict_proba"
            and classes is not None
            and "labels" not in scoring_kwargs
            and _accepts_labels(self._score_func)
        ):
            scoring_kwargs["labels"] = np.asarray(classes)
            _check_class_count(classes, y_true, scoring_kwargs.get("counts"))
        return self._sign * self._score_func(y_true, y_pred, **scoring_kwargs)

    def __repr__(self):
        sign = "" if self._sign > 0 else ", greater_is_better=False"
        kwargs = "".join(f", {k}={v!r}" for k, v in self._kwargs.items())
        return (
            f"make_human_scorer({func_name(self._score_func)}{sign}, "
            f"response_method={self._response_method!r}{kwargs})"
        )

    def set_score_request(self, **kwargs):
        """Request metadata for the metric, as scikit-learn's scorers do.

        Unlike scikit-learn's (which accept any name and let every fold's
        score fail), a parameter that the metric does not take is refused
        here: e.g. ``sample_weight`` for a metric without item weights.
        """
        params = signature(self._score_func).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        accepted = list(params)[2:]
        unknown = [
            key
            for key, alias in kwargs.items()
            if alias not in (False, None) and key not in accepted
        ]
        if unknown and not takes_any:
            raise ValueError(
                f"{func_name(self._score_func)} does not take "
                f"{', '.join(map(repr, unknown))}, so this scorer cannot request "
                f"it; its metadata are {accepted}."
            )
        return super().set_score_request(**kwargs)

    def _get_metadata_request(self):
        if hasattr(self, "_metadata_request"):
            return get_routing_for_object(self._metadata_request)
        # scikit-learn's default only knows its own names for the prediction
        # argument (y_prob, y_pred, ...); ours may be called y_disagreement, and
        # it is never metadata: skip the first two positional parameters.
        params = list(signature(self._score_func).parameters)
        requests = MetadataRequest(owner=self)
        requests.score = MethodMetadataRequest(
            owner=self,
            method="score",
            requests=self._get_class_level_metadata_request_values(
                method_name="score",
                method=self._score_func,
                ignore_params=set(params[:2]),
            ),
        )
        return requests


class _DisagreementScorer(HumanScorer):
    """Scorer for metrics of a predicted disagreement φ (Mimori et al. §4).

    ``predict_disagreement`` is looked up on the estimator or, through
    Pipelines, on its final step. When it is listed in the response methods
    but no component has it, φ = 1 − Σ_k q_k² from ``predict_proba`` is used
    with a ``UserWarning`` (``response_method="predict_proba"`` asks for that
    φ and gets it silently); when a component has it but it cannot be
    reached, a ValueError says so rather than scoring the point prediction.
    """

    _gets_class_columns = False  # φ, one value per item, whatever the order

    def _response(self, method_caller, estimator, X):
        methods = _as_tuple(self._response_method)
        label, user = type(estimator).__name__, "the disagreement scorer"
        if "predict_disagreement" in methods:
            method = disagreement_method(estimator, label=label, user=user)
            if method is not None:
                phi = check_disagreement(
                    method(X), name=f"{label}.predict_disagreement output"
                )
                return phi, "predict_disagreement"
        rest = tuple(m for m in methods if m != "predict_disagreement")
        if not rest:
            raise AttributeError(
                f"{label} has no predict_disagreement (neither itself nor the "
                "final step of a Pipeline)."
            )
        method_name = get_response_method_name(check_response_method(estimator, rest))
        if method_name != "predict_proba":
            raise ValueError(
                "A disagreement scorer needs predict_disagreement or predict_proba; "
                f"the response method resolved to {method_name!r}."
            )
        if "predict_disagreement" in methods:
            warn_point_disagreement(label, user=user)
        # A 1-D array here can only be a binary classifier's P(second class):
        # we asked predict_proba, never predict_disagreement. φ = 1 − Σq² as
        # the metrics compute it (rows off by rounding renormalised).
        values = method_caller(estimator, "predict_proba", X, pos_label=None)
        phi = _disagreement_from_probabilities(values, name="predict_proba output")
        return phi, "predict_proba"


def _as_tuple(methods) -> tuple:
    return (methods,) if isinstance(methods, str) else tuple(methods)
