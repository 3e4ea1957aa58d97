"""Scikit-learn scorers for the human-calibration metrics (developer guide §scorers).

The scorers are :class:`sklearn.metrics.make_scorer` objects (subclasses of
scikit-learn's private ``_Scorer``), so they plug into ``cross_validate``,
``GridSearchCV`` and metadata routing like any built-in scorer. Two things
set them apart:

* **The estimator's** ``classes_`` **are passed as** ``labels=`` to the
  metric (when it takes ``labels``), so 1-D labels and named histogram
  columns are matched to the ``predict_proba`` columns by name, by the
  metric's own validation, even when a test fold lacks a class or the
  labels are strings.
* **Disagreement scorers** (Mimori et al. 2021, §4) call
  ``predict_disagreement`` when the estimator, or the final step of a
  Pipeline, has it. Otherwise they derive the predicted disagreement
  φ = 1 − Σ_k q_k² (Mimori eq. 16 applied to the point prediction) from
  ``predict_proba``, with a ``UserWarning`` unless asked for with
  ``response_method="predict_proba"``; when some component has
  ``predict_disagreement`` but it cannot be reached, they raise. The scorer
  knows which method produced the values, so a binary classifier's 1-D
  probability column is never mistaken for φ.

Every metric of the registry (:mod:`sklearn_hcal.metrics._registry`) with a
metric function has a scorer: the function's name, ``neg_`` for losses.

Two target conventions work (developer guide §scorers):

A. ``y`` is the ``(n_samples, n_classes)`` count matrix; scikit-learn then
   splits with ``KFold`` and our estimators accept 2-D ``y``.
B. ``y`` is a 1-D label vector (e.g. the majority) and the histograms travel
   as metadata: enable metadata routing, create the scorers with
   ``.set_score_request(counts=True)`` and pass ``params={"counts": Y}``.

Do not use ``cross_val_predict(..., method="predict_proba")`` with a count
matrix: it label-encodes 2-D ``y`` column by column and so trains on altered
histograms; use :func:`sklearn_hcal.model_selection.cross_val_predict_proba` instead.

Examples
--------
>>> from sklearn.linear_model import LogisticRegression
>>> from sklearn.model_selection import KFold, cross_validate
>>> from sklearn_hcal import SoftLabelClassifier
>>> from sklearn_hcal.datasets import make_label_histograms
>>> from sklearn_hcal.metrics import HUMAN_SCORERS
>>> X, Y, _ = make_label_histograms(60, 3, 5, n_features=3, random_state=0)
>>> res = cross_validate(SoftLabelClassifier(LogisticRegression()), X, Y,
...                      cv=KFold(3), scoring=HUMAN_SCORERS)
>>> bool(res["test_neg_kl_divergence"].max() < 0)
True
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from sklearn.metrics import make_scorer

from ..utils._compat import (
    StrOptions,
    validate_params,
)
from . import _registry
from ._scorer_objects import (
    HumanScorer,
    _as_tuple,
    _DisagreementScorer,
    _unwrap,
    func_name,
)

__all__ = [
    "HUMAN_SCORERS",
    "get_human_scorer",
    "get_human_scorer_names",
    "make_human_scorer",
]


def _metric_functions() -> dict[str, Callable]:
    """``{name: function}`` of the registry's metric functions."""
    entries = _registry.metrics().values()
    return {m.function.__name__: m.function for m in entries if m.function}


def _declaration(func) -> _registry.Metric | None:
    """The registry's declaration of a metric function (first: its defaults)."""
    entries = _registry.metrics().values()
    return next((m for m in entries if m.function is _unwrap(func)), None)


_HIGHER_IS_BETTER_SUFFIXES = ("_score",)
_LOWER_IS_BETTER_SUFFIXES = ("_error", "_loss", "_distance", "_divergence")
_DISAGREEMENT_RESPONSE = ("predict_disagreement", "predict_proba")


def _default_greater_is_better(func) -> bool:
    declared = _declaration(func)
    if declared is not None:
        return declared.greater_is_better
    name = func_name(func)
    if name.endswith(_HIGHER_IS_BETTER_SUFFIXES):
        return True
    if name.endswith(_LOWER_IS_BETTER_SUFFIXES):
        return False
    raise ValueError(
        f"Cannot infer greater_is_better from the metric name {name!r}: it ends "
        f"in none of {_HIGHER_IS_BETTER_SUFFIXES + _LOWER_IS_BETTER_SUFFIXES}. "
        "Pass greater_is_better=True or False."
    )


@validate_params(
    {
        "metric": [str, callable],
        "greater_is_better": ["boolean", None],
        "response_method": [
            None,
            list,
            tuple,
            StrOptions(
                {
                    "predict_proba",
                    "predict_disagreement",
                    "decision_function",
                    "predict",
                }
            ),
        ],
    },
    prefer_skip_nested_validation=True,
)
def make_human_scorer(
    metric: str | Callable,
    *,
    greater_is_better: bool | None = None,
    response_method: str | list | tuple | None = None,
    **kwargs,
):
    """Make a scikit-learn scorer from a human-calibration metric.

    The result is a genuine scikit-learn scorer (built with
    :func:`sklearn.metrics.make_scorer`): it is accepted wherever ``scoring=``
    is, supports ``set_score_request(counts=True)`` for metadata routing,
    receives ``sample_weight`` when the metric accepts it, and pickles.

    Parameters
    ----------
    metric : str or callable
        A metric of :mod:`sklearn_hcal.metrics` by name (e.g.
        ``"kl_divergence"``), or a callable ``metric(y_true, y_pred, **kw)``
        where ``y_true`` holds label histograms (or labels) and ``y_pred``
        probabilities (or, for disagreement metrics, φ).
    greater_is_better : bool, default=None
        Whether higher metric values are better. ``None`` infers it from the
        metric's name: ``*_score`` → True; ``*_error``, ``*_loss``,
        ``*_distance``, ``*_divergence`` → False (the scorer then returns
        −metric). Other names require it explicitly.
    response_method : str, list or tuple, default=None
        Estimator method(s) to call, in order of preference. ``None`` means
        ``("predict_disagreement", "predict_proba")`` for the disagreement
        metrics and ``"predict_proba"`` otherwise. Any response method that
        lists ``"predict_disagreement"``, and every disagreement metric, gives a
        disagreement scorer: values from ``predict_proba`` are converted to
        φ = 1 − Σ_k q_k² before the metric sees them.
    **kwargs
        Fixed keyword arguments of the metric (e.g. ``n_bins=15``).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y_true, **metadata)`` returning a float;
        greater is better.

    See Also
    --------
    get_human_scorer : A ready-made scorer by name.

    Notes
    -----
    With two classes scikit-learn passes only ``predict_proba[:, 1]``; every
    metric of this package rebuilds ``[1 − p, p]`` (developer guide §scorers). A metric
    that takes ``labels=`` receives ``estimator.classes_`` as ``labels`` (unless
    fixed in ``kwargs``), so that 1-D labels and named histogram columns
    (``y_true`` or ``counts``) are matched to the probability columns by
    name; other callables get ``y_true`` as scikit-learn passes it.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_hcal.metrics import kl_divergence, make_human_scorer
    >>> X = np.array([[-2.0], [-1.0], [0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0, 0, 1, 0, 1, 1])
    >>> clf = LogisticRegression().fit(X, y)
    >>> scorer = make_human_scorer("kl_divergence")
    >>> scorer
    make_human_scorer(kl_divergence, greater_is_better=False,
                      response_method='predict_proba')
    >>> bool(np.isclose(scorer(clf, X, y), -kl_divergence(y, clf.predict_proba(X))))
    True
    """
    if isinstance(metric, str):
        functions = _metric_functions()
        try:
            func = functions[metric]
        except KeyError:
            raise ValueError(
                f"metric={metric!r} is not a metric of sklearn_hcal.metrics that "
                f"a scorer can use; valid names: {sorted(functions)}."
            ) from None
    else:
        func = metric
    if greater_is_better is None:
        greater_is_better = _default_greater_is_better(func)
    declared = _declaration(func)
    is_disagreement = declared is not None and declared.response == "disagreement"
    if response_method is None:
        response_method = _DISAGREEMENT_RESPONSE if is_disagreement else "predict_proba"
    if isinstance(response_method, list):
        response_method = tuple(response_method)
    if not isinstance(response_method, str) and (
        len(response_method) == 0
        or not all(isinstance(m, str) for m in response_method)
    ):
        raise ValueError(
            "response_method must be a method name or a non-empty list/tuple of "
            f"method names, got {response_method!r}."
        )
    # make_scorer validates and builds the plain scikit-learn scorer; we keep
    # its state and only change the class.
    base = make_scorer(
        func,
        greater_is_better=greater_is_better,
        response_method=(
            response_method
            if not isinstance(response_method, str)
            else (response_method,)
        ),
        **kwargs,
    )
    cls = (
        _DisagreementScorer
        if is_disagreement or "predict_disagreement" in _as_tuple(response_method)
        else HumanScorer
    )
    return cls(base._score_func, base._sign, base._kwargs, response_method)


# Scorers of the registry's metrics (names: neg_ for losses, as scikit-learn).
_SCORERS = {
    m.scorer_name: make_human_scorer(m.function, **m.kwargs)
    for m in _registry.metrics().values()
    if m.scorer_name is not None
}

#: Scorers (name → scorer) for every metric defined on any label histogram,
#: including one label per item: pass the dict itself as ``scoring=`` to
#: ``cross_validate`` or ``GridSearchCV`` (multi-metric scoring).
#:
#: The disagreement scorers (``neg_disagreement_squared_loss``,
#: ``neg_disagreement_calibration_loss``, ``neg_disagreement_calibration_error``)
#: are *not* included: they only use items with n_i ≥ 2 annotations, so with
#: 1-D labels (one annotation per item) or a fold without such items they
#: raise, and ``cross_validate(..., scoring=HUMAN_SCORERS,
#: error_score="raise")`` would fail on ordinary labelled data. Get them with
#: :func:`get_human_scorer`; all names are in :func:`get_human_scorer_names`.
#:
#: These objects are shared: call ``set_score_request`` on copies from
#: :func:`get_human_scorer`, e.g.
#: ``{name: get_human_scorer(name).set_score_request(counts=True) for name in
#: HUMAN_SCORERS}`` for convention B.
HUMAN_SCORERS: dict = {
    m.scorer_name: _SCORERS[m.scorer_name]
    for m in _registry.metrics().values()
    if m.in_human_scorers
}


def get_human_scorer_names() -> list[str]:
    """Names of all human scorers, sorted.

    Includes the disagreement scorers, which are not in :data:`HUMAN_SCORERS`.

    Returns
    -------
    names : list of str

    Examples
    --------
    >>> from sklearn_hcal.metrics import get_human_scorer_names
    >>> "neg_kl_divergence" in get_human_scorer_names()
    True
    """
    return sorted(_SCORERS)


@validate_params({"scoring": [str, callable]}, prefer_skip_nested_validation=True)
def get_human_scorer(scoring: str | Callable):
    """Get a human scorer by name.

    Parameters
    ----------
    scoring : str or callable
        A name from :func:`get_human_scorer_names`, or a scorer/callable,
        returned as is.

    Returns
    -------
    scorer : callable
        For a name, a fresh copy (like :func:`sklearn.metrics.get_scorer`), so
        ``set_score_request`` does not change the shared registry.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_hcal.metrics import get_human_scorer
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> Y = np.array([[3, 1], [2, 2], [1, 3], [0, 4]])
    >>> clf = LogisticRegression().fit(X, Y.argmax(axis=1))
    >>> scorer = get_human_scorer("neg_distribution_calibration_error")
    >>> float(scorer(clf, X, Y)) <= 0
    True
    """
    if isinstance(scoring, str):
        try:
            return copy.deepcopy(_SCORERS[scoring])
        except KeyError:
            raise ValueError(
                f"{scoring!r} is not a valid human scorer name; valid names: "
                f"{get_human_scorer_names()}."
            ) from None
    return scoring
