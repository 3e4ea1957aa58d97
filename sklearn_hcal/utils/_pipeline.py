"""Reach a final step's methods through scikit-learn Pipelines.

A :class:`~sklearn.pipeline.Pipeline` exposes only scikit-learn's standard
methods (``predict_proba``, ``decision_function``, ``transform``, ...). The
higher-order predictions of this package -- ``predict_disagreement``,
``predict_posterior``, ``predict_concentration``, ``predict_proba_samples`` --
live on the final step, so scorers, displays and model-selection helpers look
them up with :func:`get_method` instead of ``getattr``: for a Pipeline (nested
or not) whose last step has the method, it returns a function that transforms
``X`` through the earlier steps and calls the method of the last step.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["final_estimator", "get_method", "has_method"]


def _final_step(pipeline):
    step = pipeline.steps[-1][1]
    return None if step is None or step == "passthrough" else step


def get_method(estimator, name: str) -> Callable | None:
    """The method ``name`` of ``estimator``, looking through Pipelines.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator, possibly a :class:`~sklearn.pipeline.Pipeline`
        (nested pipelines are searched too).
    name : str
        Method name, e.g. ``"predict_disagreement"``.

    Returns
    -------
    method : callable or None
        ``estimator.name`` when it exists; for a Pipeline whose final step has
        the method, ``lambda X, *args, **kwargs:
        final.name(pipeline[:-1].transform(X), *args, **kwargs)``; else None.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_hcal.utils._pipeline import get_method
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> pipe = make_pipeline(StandardScaler(), LogisticRegression())
    >>> pipe = pipe.fit(X, [0, 0, 1, 1])
    >>> get_method(pipe, "predict_proba") == pipe.predict_proba
    True
    >>> get_method(pipe, "predict_disagreement") is None
    True
    """
    from sklearn.pipeline import Pipeline

    if hasattr(estimator, name):
        return getattr(estimator, name)
    if not isinstance(estimator, Pipeline) or len(estimator.steps) == 0:
        return None
    final = _final_step(estimator)
    if final is None:
        return None
    inner = get_method(final, name)
    if inner is None:
        return None
    head = estimator[:-1] if len(estimator.steps) > 1 else None

    def method(X, *args, **kwargs):
        Xt = X if head is None else head.transform(X)
        return inner(Xt, *args, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"{type(estimator).__name__}[-1].{name}"
    return method


def has_method(estimator, name: str) -> bool:
    """Whether :func:`get_method` finds ``name`` on ``estimator``."""
    return get_method(estimator, name) is not None


def final_estimator(estimator):
    """The last step of (possibly nested) Pipelines, else ``estimator`` itself."""
    from sklearn.pipeline import Pipeline

    while isinstance(estimator, Pipeline) and estimator.steps:
        last = _final_step(estimator)
        if last is None:
            return None
        estimator = last
    return estimator
