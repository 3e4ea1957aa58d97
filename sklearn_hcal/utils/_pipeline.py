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

from ._warnings import warn_user

__all__ = [
    "labelled_proba",
    "predict_disagreement",
    "disagreement_method",
    "final_estimator",
    "get_method",
    "has_method",
    "hidden_owner",
    "warn_point_disagreement",
]


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


def labelled_proba(estimator, X, label: str):
    """``predict_proba(X)`` of a fitted classifier, its columns named by ``classes_``.

    ``predict_proba``'s columns follow ``classes_``; a DataFrame naming them
    lets the Displays' and the report's ``from_estimator`` match them with
    the human labels by name (1-D labels, a DataFrame's columns), as the
    scorers do by passing ``labels=classes_``. Looks through Pipelines;
    ``label`` names the estimator in the error when it has no
    ``predict_proba``.
    """
    import numpy as np

    method = get_method(estimator, "predict_proba")
    if method is None:
        raise ValueError(
            f"{label} has no predict_proba; a probabilistic classifier is required."
        )
    P = np.asarray(method(X))
    classes = getattr(estimator, "classes_", None)
    if classes is None or P.ndim != 2 or len(classes) != P.shape[1]:
        return P
    import pandas as pd

    return pd.DataFrame(P, columns=pd.Index(np.asarray(classes), dtype=object))


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


def hidden_owner(estimator, name: str, _depth: int = 0):
    """A component of ``estimator`` that has ``name`` although
    :func:`get_method` cannot reach it (None when there is none).

    So that a caller never silently uses a weaker prediction when the
    estimator holds a better one out of reach (developer guide §never-degrade).

    Looks through Pipeline steps, the estimators a wrapper holds as
    parameters (``estimator=``, ``base_estimator=``, ...) and its fitted
    estimators (``estimator_``, ``best_estimator_``, ``estimators_``...).
    """
    if _depth > 4:
        return None
    children = []
    steps = getattr(estimator, "steps", None)
    if isinstance(steps, list):
        children += [step for _, step in steps]
    if hasattr(estimator, "get_params"):
        try:
            children += list(estimator.get_params(deep=False).values())
        except Exception:  # an object whose get_params needs more
            pass
    for attr, value in (
        vars(estimator).items() if hasattr(estimator, "__dict__") else ()
    ):
        if attr.endswith("_") and not attr.startswith("_"):
            children += value if isinstance(value, (list, tuple)) else [value]
    for child in children:
        if not (hasattr(child, "get_params") or hasattr(child, "steps")):
            continue  # not an estimator
        if callable(getattr(type(child), name, None)):
            return child
        found = hidden_owner(child, name, _depth + 1)
        if found is not None:
            return found
    return None


# --------------------------------------------------------------------------- #
# developer guide §never-degrade for predicted disagreement: scorers and Displays alike
# --------------------------------------------------------------------------- #
def disagreement_method(estimator, *, label: str, user: str) -> Callable | None:
    """``predict_disagreement`` of ``estimator``, through Pipelines, or None.

    The one lookup of a model's own disagreement probabilities for the
    scorers and the Displays (developer guide §never-degrade): None when no component
    has the method (the caller may then use the point prediction's
    ``1 − Σ q²``, see :func:`warn_point_disagreement`); a ``ValueError``
    when a component has it but :func:`get_method` cannot reach it (e.g.
    behind ``GridSearchCV``), since ``1 − Σ q²`` would then evaluate
    another model.

    Parameters
    ----------
    estimator : estimator
        The fitted model.
    label : str
        How to name ``estimator`` in messages.
    user : str
        Who asks (e.g. "the disagreement scorer"), for messages.
    """
    method = get_method(estimator, "predict_disagreement")
    if method is not None:
        return method
    owner = hidden_owner(estimator, "predict_disagreement")
    if owner is not None:
        raise ValueError(
            f"{type(owner).__name__}, a component of {label}, has "
            f"predict_disagreement but {user} cannot reach it (only the final "
            "step of a Pipeline is looked through). Using the point "
            "prediction's 1 - sum(q**2) instead would evaluate another model: "
            "pass that component (e.g. the fitted step or best_estimator_), "
            "make it the final step, or ask for the point prediction with "
            "response_method='predict_proba'."
        )
    return None


def warn_point_disagreement(label: str, *, user: str) -> None:
    """The warning of a fallback to the point prediction's ``1 − Σ q²``.

    developer guide §never-degrade: used when ``predict_disagreement`` was asked for
    (the default) and no component has it; ``response_method="predict_proba"``
    asks for the point prediction and gets it without warning.
    The warning points at the user's line (:func:`~._warnings.warn_user`).
    """
    warn_user(
        f"{label} has no predict_disagreement: {user} uses the point "
        "prediction's 1 - sum(q**2) of predict_proba, which ignores any "
        "second-order uncertainty. Pass response_method='predict_proba' to "
        "ask for it explicitly."
    )


# --------------------------------------------------------------------------- #
# The public helper: a model's own φ, whether or not it sits in a Pipeline
# --------------------------------------------------------------------------- #
def predict_disagreement(estimator, X):
    """A model's predicted probability that two annotators disagree.

    ``estimator.predict_disagreement(X)``, also when ``estimator`` is a
    :class:`~sklearn.pipeline.Pipeline` (nested or not) whose final step has
    the method -- :class:`~sklearn_hcal.AlphaCalibrator`,
    :class:`~sklearn_hcal.MCDropoutClassifier`,
    :class:`~sklearn_hcal.TestTimeAugmentationClassifier` --: ``X`` goes
    through the earlier steps' ``transform`` first, as in the Pipeline's own
    ``predict_proba``. A Pipeline exposes only scikit-learn's standard
    methods, so ``pipe.predict_disagreement`` does not exist; this is what
    the disagreement scorers and Displays call.

    Parameters
    ----------
    estimator : fitted estimator
        A model with ``predict_disagreement``, or a Pipeline ending with one.
    X : array-like
        Items, as ``estimator.predict_proba`` takes them.

    Returns
    -------
    phi : ndarray of shape (n_samples,)
        ``α0/(α0+1)·(1 − Σ_k f_k²)`` for an α-calibrated model (Mimori et
        al. 2021, eq. 19), the members' mean ``1 − Σ_k f_k²`` for an
        ensemble (eq. 72).

    Raises
    ------
    ValueError
        When no component of ``estimator`` has ``predict_disagreement``
        (the point prediction's ``1 − Σ q²`` is
        :func:`~sklearn_hcal.metrics.predicted_disagreement` of
        ``predict_proba``), or when one has it out of reach (behind a
        ``GridSearchCV``, or in a Pipeline step that is not the last).

    See Also
    --------
    sklearn_hcal.metrics.predicted_disagreement : ``φ`` from probabilities.
    sklearn_hcal.metrics.disagreement_squared_loss : Scores ``φ``.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_hcal import AlphaCalibrator, predict_disagreement
    >>> from sklearn_hcal.datasets import make_label_histograms
    >>> X, Y, _ = make_label_histograms(300, 3, 5, n_features=4, random_state=0)
    >>> pipe = make_pipeline(
    ...     StandardScaler(), AlphaCalibrator(LogisticRegression(), random_state=0)
    ... ).fit(X, Y)
    >>> phi = predict_disagreement(pipe, X)
    >>> phi.shape
    (300,)
    >>> bool(((phi >= 0) & (phi <= 1)).all())
    True
    """
    label = type(estimator).__name__
    method = get_method(estimator, "predict_disagreement")
    if method is not None:
        return method(X)
    owner = hidden_owner(estimator, "predict_disagreement")
    if owner is not None:
        raise ValueError(
            f"estimator: {type(owner).__name__}, a component of {label}, has "
            "predict_disagreement but it is out of reach (only the final step "
            "of a Pipeline is looked through). Pass that component (e.g. the "
            "fitted step or best_estimator_), or make it the final step."
        )
    raise ValueError(
        f"estimator: {label} has no predict_disagreement (neither it nor the "
        "final step of its Pipeline): it predicts class probabilities only. "
        "Wrap it in AlphaCalibrator to learn its disagreement, or take the "
        "point prediction's 1 - sum(q**2) with "
        "sklearn_hcal.metrics.predicted_disagreement(estimator.predict_proba(X))."
    )
