"""Per-row weights for any classifier, Pipelines included.

:class:`~sklearn_hcal.SoftLabelClassifier` turns label histograms into
weighted rows, and the cross-fitted calibrators pass the user's
``sample_weight`` on to the classifier they train. A
:class:`~sklearn.pipeline.Pipeline` has no ``sample_weight`` in its ``fit``
signature: it routes fit parameters by step name
(``<step>__sample_weight``). :func:`sample_weight_key` finds that name, through
nested pipelines, and :func:`fit_with_sample_weight` uses it.
"""

from __future__ import annotations

from sklearn import config_context
from sklearn.utils.validation import has_fit_parameter

__all__ = ["fit_with_sample_weight", "sample_weight_key"]


def _accepts_sample_weight(estimator) -> bool:
    try:
        return has_fit_parameter(estimator, "sample_weight")
    except Exception:  # objects without an inspectable fit
        return False


def sample_weight_key(estimator) -> str | None:
    """Name of the ``fit`` keyword that carries per-row weights, or None.

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
    from sklearn.pipeline import Pipeline

    if _accepts_sample_weight(estimator):
        return "sample_weight"
    if isinstance(estimator, Pipeline) and estimator.steps:
        name, last = estimator.steps[-1]
        if last is None or (isinstance(last, str) and last == "passthrough"):
            return None
        inner = sample_weight_key(last)
        return None if inner is None else f"{name}__{inner}"
    return None


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
        final step (see :func:`sample_weight_key`).
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
    key = sample_weight_key(estimator)
    if key is None:
        raise ValueError(
            f"{type(estimator).__name__}.fit does not accept sample_weight (nor "
            "does the final step of a Pipeline), so per-row weights cannot be "
            "passed to it."
        )
    if key == "sample_weight":
        return estimator.fit(X, y, sample_weight=sample_weight, **fit_params)
    with config_context(enable_metadata_routing=False):
        return estimator.fit(X, y, **{key: sample_weight}, **fit_params)
