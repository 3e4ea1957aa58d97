"""Per-row weights for any classifier, Pipelines included.

:class:`~sklearn_hcal.SoftLabelClassifier` turns label histograms into
weighted rows, and the cross-fitted calibrators pass the user's
``sample_weight`` on to the classifier they train. A
:class:`~sklearn.pipeline.Pipeline` has no ``sample_weight`` in its ``fit``
signature: it routes fit parameters by step name
(``<step>__sample_weight``). :func:`sample_weight_keys` finds those names,
through nested pipelines, and :func:`fit_with_sample_weight` uses them.
"""

from __future__ import annotations

from sklearn import config_context
from sklearn.utils.validation import has_fit_parameter

__all__ = ["fit_with_sample_weight", "sample_weight_key", "sample_weight_keys"]


def _accepts_sample_weight(estimator) -> bool:
    try:
        return has_fit_parameter(estimator, "sample_weight")
    except Exception:  # objects without an inspectable fit
        return False


def _is_step(step) -> bool:
    return step is not None and not (isinstance(step, str) and step == "passthrough")


def sample_weight_keys(estimator) -> list[str]:
    """Every ``fit`` keyword that carries per-row weights into ``estimator``.

    ``["sample_weight"]`` when ``estimator.fit`` accepts it. For a Pipeline
    (nested ones too): the step-routed names of all its steps whose ``fit``
    accepts ``sample_weight``, e.g. ``["standardscaler__sample_weight",
    "logisticregression__sample_weight"]``, provided the final step is one
    of them; ``[]`` otherwise.

    Weighting the transformers too matters when the weights stand for
    repeated rows (:class:`~sklearn_hcal.SoftLabelClassifier` repeats an item
    once per class it received): a scaler fitted unweighted on the repeated
    rows would count each item once per distinct class.
    """
    from sklearn.pipeline import Pipeline

    if _accepts_sample_weight(estimator):
        return ["sample_weight"]
    if not (isinstance(estimator, Pipeline) and estimator.steps):
        return []
    name, last = estimator.steps[-1]
    final = sample_weight_keys(last) if _is_step(last) else []
    if not final:
        return []
    keys = []
    for step_name, step in estimator.steps[:-1]:
        if _is_step(step):
            keys += [f"{step_name}__{k}" for k in sample_weight_keys(step)]
    return keys + [f"{name}__{k}" for k in final]


def sample_weight_key(estimator) -> str | None:
    """The keyword that carries per-row weights to the final estimator.

    ``"sample_weight"`` when ``estimator.fit`` accepts it; for a Pipeline
    (nested ones too) whose final step accepts it, the step-routed name
    (e.g. ``"logisticregression__sample_weight"``); None otherwise.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_hcal.utils._sample_weight import sample_weight_key
    >>> sample_weight_key(LogisticRegression())
    'sample_weight'
    >>> sample_weight_key(make_pipeline(StandardScaler(), LogisticRegression()))
    'logisticregression__sample_weight'
    >>> sample_weight_key(make_pipeline(StandardScaler(), KNeighborsClassifier()))
    """
    keys = sample_weight_keys(estimator)
    return keys[-1] if keys else None


def fit_with_sample_weight(estimator, X, y, sample_weight=None, **fit_params):
    """``estimator.fit(X, y)`` with per-row weights routed where they belong.

    Parameters
    ----------
    estimator : estimator
        Fitted in place (callers pass a clone).
    X, y : array-like
        Training data.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights; passed as ``sample_weight`` or, for a Pipeline, to its
        final step and every other step whose ``fit`` takes them (see
        :func:`sample_weight_keys`).
    **fit_params : dict
        Further fit parameters, passed unchanged.

    Returns
    -------
    estimator : the fitted estimator

    Raises
    ------
    ValueError
        When weights are given but no ``fit`` along the way accepts them.

    Notes
    -----
    Step-routed parameters (``step__sample_weight``) are how a Pipeline takes
    fit parameters without metadata routing; with routing enabled scikit-learn
    refuses them. These weights belong to the fitting algorithm (the rows of
    a histogram, or the item weights of the caller's ``fit``), not to user
    metadata, so the inner fit runs with routing disabled.
    """
    if sample_weight is None:
        return estimator.fit(X, y, **fit_params)
    keys = sample_weight_keys(estimator)
    if not keys:
        raise ValueError(
            f"{type(estimator).__name__}.fit does not accept sample_weight (nor "
            "does the final step of a Pipeline), so per-row weights cannot be "
            "passed to it."
        )
    if keys == ["sample_weight"]:
        return estimator.fit(X, y, sample_weight=sample_weight, **fit_params)
    with config_context(enable_metadata_routing=False):
        return estimator.fit(X, y, **dict.fromkeys(keys, sample_weight), **fit_params)
