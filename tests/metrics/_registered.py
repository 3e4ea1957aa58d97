"""The tests' lists of metrics, derived from the metric registry.

A test that runs against "every metric of a kind" takes its list from here,
so a metric declared in the registry is checked by it without another edit
(developer guide §registry). What a name must *mean* is stated
independently in ``tests/_tables.py``; these lists only say which metrics a
test covers.
"""

from sklearn_hcal.metrics._registry import metrics


def _as_tuple(value):
    return (value,) if isinstance(value, str) else tuple(value)


def metric_functions(*, requires=None, response=None, family=None) -> list:
    """Public metric functions of the registry, in declaration order.

    One entry per function (its declaration at the function's defaults; a
    variant with fixed ``kwargs`` such as ``epistemic_loss_plugin`` is the
    same function). ``requires`` (one requirement or several), ``response``
    (``"proba"`` or ``"disagreement"``) and ``family`` (the module, e.g.
    ``"_distribution"``) select among them.
    """
    chosen = []
    for metric in metrics().values():
        if metric.function is None or metric.kwargs:
            continue
        if requires is not None and metric.requires not in _as_tuple(requires):
            continue
        if response is not None and metric.response != response:
            continue
        module = metric.function.__module__.rsplit(".", 1)[-1]
        if family is not None and module not in _as_tuple(family):
            continue
        chosen.append(metric.function)
    return chosen


def requirement(function) -> str:
    """What the human labels must provide for ``function`` (its declaration)."""
    for metric in metrics().values():
        if metric.function is function and not metric.kwargs:
            return metric.requires
    raise KeyError(function.__name__)


#: Requirements that rows of human probabilities meet (no counts needed).
PROBABILITY_ROWS_OK = ("distribution", "ordered", "variation")
