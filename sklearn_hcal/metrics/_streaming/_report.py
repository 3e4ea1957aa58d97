"""A report table from :class:`~sklearn_hcal.metrics.MetricState` objects."""

from __future__ import annotations

import pandas as pd

from .._engine import as_prediction_dict
from ._state import MetricState

__all__ = ["report_from_states"]


def report_from_states(states, name=None) -> pd.DataFrame:
    """A report table from the states of several classifiers.

    Parameters
    ----------
    states : MetricState or dict of str to MetricState
        One state per classifier, updated with the same items (the same
        human labels); a single state is reported under ``name``.
    name : str, default=None
        The row name of a single state (default ``"model"``).

    Returns
    -------
    report : DataFrame of shape (n_classifiers, n_metrics)
        As :func:`human_calibration_report` without bootstrap: index
        ``"classifier"``, one column per metric, ``attrs["n_samples"]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics import MetricState, report_from_states
    >>> Y = np.array([[8, 2], [5, 5], [1, 9], [7, 3]])
    >>> states = {
    ...     "oracle": MetricState(["accuracy", "dist_ce"]),
    ...     "uniform": MetricState(["accuracy", "dist_ce"]),
    ... }
    >>> for chunk in (slice(0, 2), slice(2, 4)):
    ...     _ = states["oracle"].update(Y[chunk], Y[chunk] / 10)
    ...     _ = states["uniform"].update(Y[chunk], np.full((2, 2), 0.5))
    >>> report_from_states(states).round(3)
                accuracy  dist_ce
    classifier
    oracle          1.00    0.000
    uniform         0.75    0.225
    """
    named = as_prediction_dict(states, name, what="states")
    for key, state in named.items():
        if not isinstance(state, MetricState):
            raise ValueError(
                f"states[{key!r}] must be a MetricState, got {type(state).__name__}."
            )
    values = {key: state.compute() for key, state in named.items()}
    first = next(iter(named))
    n_samples = {key: state.n_samples_ for key, state in named.items()}
    if len(set(n_samples.values())) > 1:
        raise ValueError(
            "The states have seen different numbers of items "
            f"({n_samples}); a report compares classifiers on the same items."
        )
    columns = list(values[first])
    for key, vals in values.items():
        if list(vals) != columns:
            raise ValueError(
                f"states[{key!r}] computes {list(vals)} but states[{first!r}] "
                f"computes {columns}; give every classifier the same metrics."
            )
    report = pd.DataFrame(
        [[vals[c] for c in columns] for vals in values.values()],
        index=pd.Index(list(values), name="classifier"),
        columns=columns,
    )
    report.attrs.update(
        n_samples=n_samples[first],
        n_bootstrap=0,
        confidence_level=None,
        ci_method=None,
    )
    return report
