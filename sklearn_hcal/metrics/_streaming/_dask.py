"""dask arrays and DataFrames in the metric functions and the report, chunk-wise.

Reached through the decorator of :mod:`sklearn_hcal.metrics._dispatch` when
an input is a dask collection: the inputs are aligned to the same row blocks
(whole rows per block), each block becomes a
:class:`~sklearn_hcal.metrics.MetricState` (a task), and the states are
merged in a tree (more tasks), on whatever scheduler dask uses: its threads,
or a ``dask.distributed`` client. Nothing but a block and the states is held
in memory at a time.

A dask DataFrame's columns name its classes exactly as a pandas DataFrame's
do (developer guide §class-names): each block is handed to its state as a
pandas DataFrame with those columns, so classes are aligned by name, never
read by position. Each block's state is told the position of its first row,
so an error names the row of the whole array, as the in-memory call does.

What is not a sum over items (the bootstrap, quantile bins, per-item
outputs) raises a ``ValueError`` naming the alternative.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd

from ...utils._compat import validate_parameter_constraints
from .. import _registry
from .._engine import as_prediction_dict
from .._pearson import _pearson_or_raise
from ._inputs import NOT_CHUNKWISE, host_array, is_dask_collection
from ._report import report_from_states
from ._state import MetricState

__all__ = ["dask_call"]

#: Rows per block of an input held in memory when no other input is a dask
#: array to take the blocks from.
_ROWS = 2**17


def _import_dask():
    from ...utils._optional import import_optional

    return import_optional("dask"), import_optional("dask.array")


def _fresh(template: MetricState, labels=None) -> MetricState:
    """An empty state of the template's metrics and parameters."""
    return MetricState(
        template.metrics,
        metric_params=template.metric_params,
        labels=template.labels if labels is None else labels,
    )


def _frame(block, names):
    """A block with its class names back (None: positional, as it is)."""
    if names is None or block is None:
        return block
    return pd.DataFrame(block, columns=pd.Index(names))


def _block_state(template, first_row, names, y_true, y_prob, counts, y_disagreement):
    """The state of one block of rows (a task of the dask graph)."""
    state = _fresh(template)
    rows = next(a for a in (counts, y_true) if a is not None).shape[0]
    if rows == 0:
        return state
    return state.update(
        _frame(y_true, names.get("y_true")),
        _frame(y_prob, names.get("y_prob")),
        counts=_frame(counts, names.get("counts")),
        y_disagreement=y_disagreement,
        first_row=first_row,
    )


def _merge_two(a: MetricState, b: MetricState) -> MetricState:
    return a.merge(b)


def _as_array(key, value, names: dict):
    """A dask DataFrame or Series as a dask array, a pandas one as numpy;
    the column names of either are kept in ``names[key]``."""
    if value is None:
        return None
    if hasattr(value, "columns"):
        columns = pd.Index(value.columns)
        if not isinstance(columns, pd.RangeIndex):  # a RangeIndex names nothing
            names[key] = np.asarray(columns)
    if is_dask_collection(value):
        if hasattr(value, "to_dask_array"):
            return value.to_dask_array(lengths=True)
        return value
    value = value.to_numpy() if hasattr(value, "to_numpy") else value
    return np.asarray(host_array(value))


def _as_row_blocks(arrays: dict, da):
    """The inputs as dask arrays with the same row chunks, whole rows per
    block, and ``{input: class names}`` of those that name their columns."""
    names = {}
    arrays = {k: _as_array(k, v, names) for k, v in arrays.items()}
    present = {k: v for k, v in arrays.items() if v is not None}
    if not any(map(is_dask_collection, present.values())):
        # a report's classifier held in memory next to others given as dask
        # arrays: its rows are read in blocks too
        key, value = next(iter(present.items()))
        present[key] = da.from_array(value, chunks=(_ROWS,) + value.shape[1:])
        arrays = {**arrays, key: present[key]}
    ref_name, ref = next((k, v) for k, v in present.items() if is_dask_collection(v))
    for key, value in present.items():
        # every input's rows must be known, not only the first's: a filtered
        # y_prob beside a known y_true was "100 and nan samples"
        if is_dask_collection(value) and any(np.isnan(c) for c in value.chunks[0]):
            raise ValueError(
                f"{key} has unknown chunk sizes (a dask array filtered by a "
                "boolean mask, or made from a dask DataFrame without lengths), "
                "so its rows cannot be counted or matched with the other "
                f"inputs'; call {key}.compute_chunk_sizes() first."
            )
    rows = ref.chunks[0]
    out = {}
    for key, value in arrays.items():
        if value is None:
            out[key] = None
            continue
        if value.ndim > 2:
            raise ValueError(
                f"{key} has {value.ndim} dimensions; with dask arrays pass 1-D or "
                "2-D arrays (for an ensemble, its predicted disagreement "
                "computed per block with dask.array.map_blocks)."
            )
        if value.shape[0] != ref.shape[0]:
            raise ValueError(
                f"{ref_name} and {key} have different numbers of samples: "
                f"{ref.shape[0]} and {value.shape[0]}."
            )
        chunks = (rows,) + tuple(value.shape[1:])
        if is_dask_collection(value):
            value = value.rechunk(chunks)
        else:
            value = da.from_array(value, chunks=chunks)
        out[key] = value
    return out, names


def _fix_label_classes(template: MetricState, human, y_prob, names, da):
    """With 1-D dask labels and no ``labels=`` (nor named columns), the
    sorted distinct labels of all the items are the classes (a block may
    miss one)."""
    if (
        template.labels is not None
        or human.ndim != 1
        or y_prob is None
        or names.get("y_prob") is not None
    ):
        return template
    classes = np.asarray(da.unique(human).compute())
    n_columns = 2 if y_prob.ndim == 1 else y_prob.shape[1]
    if classes.shape[0] != n_columns:
        raise ValueError(
            f"y_true holds {classes.shape[0]} distinct labels {classes.tolist()} "
            f"but y_prob has {n_columns} columns, so which column is which class "
            "is ambiguous; pass labels= (the class of each column of y_prob)."
        )
    return _fresh(template, labels=classes)


def _dask_state(template, y_true=None, y_prob=None, counts=None, y_disagreement=None):
    """A ``dask.delayed`` state of all the rows: block states merged in a tree."""
    dask, da = _import_dask()
    arrays, names = _as_row_blocks(
        {
            "y_true": y_true if counts is None else None,
            "counts": counts,
            "y_prob": y_prob,
            "y_disagreement": y_disagreement,
        },
        da,
    )
    human = arrays["counts"] if counts is not None else arrays["y_true"]
    template = _fix_label_classes(template, human, arrays["y_prob"], names, da)
    blocks = {
        k: None if v is None else list(v.to_delayed().ravel())
        for k, v in arrays.items()
    }
    starts = np.concatenate([[0], np.cumsum(human.chunks[0])[:-1]]).tolist()
    task = dask.delayed(_block_state, pure=True)
    merge = dask.delayed(_merge_two, pure=True)
    parts = [
        task(
            template,
            int(start),
            names,
            *(
                None if blocks[k] is None else blocks[k][i]
                for k in ("y_true", "y_prob", "counts", "y_disagreement")
            ),
        )
        for i, start in enumerate(starts)
    ]
    while len(parts) > 1:
        merged = [merge(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = merged + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def dask_call(function, args, kwargs):
    """A metric function (or the report) on dask arrays, chunk-wise."""
    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    params = dict(bound.arguments)
    constraints = getattr(function, "_skl_parameter_constraints", None)
    if constraints:
        validate_parameter_constraints(
            constraints, params, caller_name=function.__qualname__
        )
    if function.__name__ == "human_calibration_report":
        return _dask_report(**params)
    return _dask_metric(function, params)


def _base_metric(function):
    for m in _registry.metrics().values():
        if m.function is function and not m.kwargs:
            return m
    why = NOT_CHUNKWISE.get(
        function.__name__,
        "it is not a sum over items. Compute the arrays first (x.compute())",
    )
    raise ValueError(
        f"{function.__name__} cannot be computed chunk-wise on dask arrays: {why}."
    )


def _dask_metric(function, params: dict) -> float:
    dask, _ = _import_dask()
    metric = _base_metric(function)
    if params.pop("sample_weight", None) is not None:
        raise ValueError(
            f"{function.__name__}: sample_weight is not supported with dask "
            "arrays; weight the items by repeating them, or compute in memory."
        )
    y_true = params.pop("y_true")
    counts = params.pop("counts", None)
    labels = params.pop("labels", None)
    if metric.response == "disagreement":
        second = params.pop("y_disagreement")
        two_d = np.ndim(second) == 2 and np.shape(second)[1] > 1
        y_prob, phi = (second, None) if two_d else (None, second)
    else:
        y_prob, phi = params.pop("y_prob"), None
    template = MetricState(
        metric.column, metric_params={metric.column: params}, labels=labels
    )
    state = _dask_state(template, y_true, y_prob, counts, phi).compute()
    value = state.compute()[metric.column]
    if metric.stats is not None and metric.stats.name == "entropy_moments":
        # the function raises where the report's column is NaN
        _pearson_or_raise(state.sums_.cells_of(metric.column), "normalised entropies")
    return value


def _dask_report(
    y_true,
    predictions,
    *,
    counts=None,
    labels=None,
    metrics=None,
    metric_params=None,
    disagreement=None,
    n_bootstrap=0,
    return_bootstrap=False,
    **_,
):
    dask, _ = _import_dask()
    if n_bootstrap > 0:
        raise ValueError(
            "n_bootstrap > 0 with dask arrays: the bootstrap resamples the items "
            "of the whole set, which a chunk-wise evaluation never holds at once. "
            "Pass n_bootstrap=0 for the point estimates, or load the arrays "
            "(x.compute(), or a numpy memory map) for intervals."
        )
    preds = as_prediction_dict(predictions)
    disagreement = {str(k): v for k, v in dict(disagreement or {}).items()}
    unknown = [k for k in disagreement if k not in preds]
    if unknown:
        raise ValueError(
            f"disagreement has entries for {unknown}, which are not in "
            f"predictions ({list(preds)}); give each classifier's φ under its name."
        )
    template = MetricState(metrics, metric_params=metric_params, labels=labels)
    delayed = [
        _dask_state(template, y_true, value, counts, disagreement.get(name))
        for name, value in preds.items()
    ]
    states = dask.compute(*delayed)
    report = report_from_states(dict(zip(preds, states)))
    if not return_bootstrap:
        return report
    replicates = pd.DataFrame(
        np.empty((0, report.shape[1])),
        index=pd.MultiIndex.from_product(
            [[], list(preds)], names=["resample", "classifier"]
        ),
        columns=report.columns,
    )
    return report, replicates
