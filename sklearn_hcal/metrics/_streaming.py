"""Mergeable metric states: the registry's metrics chunk by chunk.

Every metric of the registry (:mod:`sklearn_hcal.metrics._registry`) is a
function of sums over items: a mean-type metric of ``Σ num`` and ``Σ den``
(its ``per_item`` hook), a binned one of per-cell sums (its :class:`Stats`
group, :mod:`sklearn_hcal.metrics._cells`), a correlation of six moments.
Sums add, so a :class:`MetricState` that holds them can be updated with one
chunk of items after another, merged with a state of other items, and read
at the end: the values are those of the whole set, whatever the chunking
(equal to the in-memory functions to rounding, ~1e-15 relative).

What cannot be a sum is not offered: the report's bootstrap resamples the
items of the whole set, and the ``"quantile"`` bins of
:func:`metrics_by_agreement` are quantiles of all items. Both raise a
``ValueError`` naming the alternative when given dask arrays.

:func:`_dask_call` computes the metric functions and
:func:`human_calibration_report` on :class:`dask.array.Array` inputs: one
state per block of rows, reduced by merging in a tree, on whatever scheduler
dask uses (threads, or a ``dask.distributed`` client). It is reached through
the decorator of :mod:`sklearn_hcal.metrics._dispatch`.
"""

from __future__ import annotations

import copy
import inspect
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._validation import (
    _check_pair,
    _map_row_blocks,
    _Pair,
    check_disagreement,
    column_order,
    frame_names,
)
from ..utils._compat import validate_parameter_constraints
from . import _engine, _registry
from ._cells import cell_sums
from ._dispatch import is_dask_array

__all__ = ["MetricState", "report_from_states"]

#: Columns whose debiased estimator skips items with a single annotation
#: (the report warns once about them, and so does :meth:`MetricState.compute`).
_DEBIASED = ("el", "dl", "il")
#: Elements (items × slots) per sub-block of a binned group's statistics.
_GROUP_ELEMENTS = 2**14


def _host(x):
    """A torch tensor (CPU or CUDA) as a numpy array; anything else as it is."""
    if x is None or not type(x).__module__.startswith("torch"):
        return x
    if not hasattr(x, "detach"):
        return x
    import torch

    t = x.detach()
    if t.is_floating_point() and t.dtype not in (torch.float32, torch.float64):
        t = t.to(torch.float64)  # float16 / bfloat16 have no exact numpy twin
    return t.cpu().numpy()


class MetricState:
    """Mergeable sufficient statistics of human-calibration metrics.

    A state accumulates, chunk by chunk, the sums that the metrics of
    :func:`human_calibration_report` are functions of: per-item sums for
    the mean-type metrics and per-bin sums for the binned ones (ECE, Mimori
    et al.'s CL/CE/DL, ...). :meth:`update` adds a chunk, :meth:`merge`
    combines two states (of disjoint items: another worker, another file),
    and :meth:`compute` gives the values of all the items seen, equal to
    the in-memory metric functions in any chunking (to rounding).

    Parameters
    ----------
    metrics : str or list of str, default=None
        Report column names, long names or scorer names (see
        :func:`human_calibration_report`). A single name makes
        :meth:`compute` return a float; a list or ``None`` a dict. ``None``
        = the report's default columns that the labels support (decided at
        :meth:`compute`, on all the items seen).
    metric_params : dict of str to dict, default=None
        Keyword arguments of the metric functions per column, as for
        :func:`human_calibration_report`.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob``, as for the metric functions.
        Without it the first :meth:`update` fixes the classes (a DataFrame's
        column names, the sorted distinct 1-D labels, else positional), and
        later chunks are matched to them by name; positional chunks are
        read in that order.

    Attributes
    ----------
    n_samples_ : int
        Number of items seen.
    classes_ : ndarray or None
        The class names fixed by the first update (None: positional).
    n_classes_ : int or None
        Number of classes (None before the first update).

    See Also
    --------
    human_calibration_report : The same values on data in memory, with
        bootstrap intervals.
    report_from_states : A report table from several states.

    Notes
    -----
    Every metric of the registry is a sum over items, so every one is
    mergeable; none needs the items at once. Requirements on the whole set
    (integer counts, items with two annotations, labels that are not all
    unanimous) are checked by :meth:`compute`, on all the items seen, as
    the report checks them: a metric asked for by name raises when the data
    do not provide them, a default one is left out.

    The state holds O(number of bins) floats, so it can travel between
    processes (it pickles) and be reduced in a tree by dask; the metric
    functions do exactly that for :class:`dask.array.Array` inputs.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics import MetricState, kl_divergence
    >>> Y = np.array([[3, 1], [0, 4], [2, 2], [1, 3]])
    >>> P = np.array([[0.7, 0.3], [0.1, 0.9], [0.5, 0.5], [0.2, 0.8]])
    >>> a = MetricState("kl").update(Y[:1], P[:1])
    >>> b = MetricState("kl").update(Y[1:], P[1:])
    >>> bool(np.isclose(a.merge(b).compute(), kl_divergence(Y, P)))
    True
    >>> both = MetricState(["kl", "ece"]).update(Y, P)
    >>> sorted(both.compute())
    ['ece', 'kl']
    """

    def __init__(self, metrics=None, *, metric_params=None, labels=None):
        if isinstance(metrics, str):
            self._names, self._single = [metrics], True
        elif metrics is None:
            self._names, self._single = None, False
        else:
            self._names, self._single = list(metrics), False
            if not self._names:
                raise ValueError(
                    "metrics is empty: at least one metric name is required."
                )
        if metric_params is not None and not isinstance(metric_params, Mapping):
            raise ValueError(
                "metric_params must be a dict of {column: {parameter: value}}, "
                f"got {type(metric_params).__name__}."
            )
        self._metric_params = dict(metric_params or {})
        self.labels = None if labels is None else np.asarray(labels)
        self._cols = None
        self._check_columns()
        self._reset()

    # ------------------------------------------------------------------ #
    # columns
    # ------------------------------------------------------------------ #
    @property
    def _columns(self) -> list:
        if self._cols is None:
            self._cols = self._resolve()
        return self._cols

    def _resolve(self) -> list:
        names = self._names
        if names is None:
            names = _registry.default_columns()
        chosen = [_registry.get_metric(name) for name in names]
        columns = [m.column for m in chosen]
        if len(set(columns)) != len(columns):
            raise ValueError(f"metrics names a column twice: {columns}.")
        by_column = {
            _registry.get_metric(k, argument="metric_params").column: v
            for k, v in self._metric_params.items()
        }
        for key in by_column:
            if key not in columns:
                raise ValueError(
                    f"metric_params has parameters for {key!r}, which is not "
                    f"among the state's metrics {columns}."
                )
        out = []
        for m in chosen:
            kwargs = m.resolve_kwargs(by_column.get(m.column))
            params = m.stats.params if m.stats is not None else ()
            out.append(_engine.Column(m, kwargs, {p: kwargs[p] for p in params}))
        return out

    def _check_columns(self) -> None:
        columns = self._columns  # validates names and parameters now
        self._means = [c.name for c in columns if c.metric.per_item is not None]
        self._group_keys = list(_engine.groups_of(columns))

    @property
    def _spec(self) -> tuple:
        """What two states must share to be merged (repr: params may be arrays)."""
        return (
            None if self._names is None else tuple(c.name for c in self._columns),
            repr([(c.name, sorted(c.kwargs.items())) for c in self._columns]),
        )

    def _reset(self) -> None:
        self.n_samples_ = 0
        self.n_classes_ = None
        self.classes_ = None
        self._num = np.zeros(len(self._means))
        self._den = np.zeros(len(self._means))
        self._groups = {}
        self._is_counts = True
        self._unanimous = True
        self._n_single = 0
        self._n_pairs = 0

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_cols"] = None  # registry hooks are found again by name
        return state

    def _empty(self) -> MetricState:
        """A state of the same metrics and no items."""
        out = copy.copy(self)
        out._reset()
        return out

    def _copy(self) -> MetricState:
        out = copy.copy(self)
        out._num, out._den = self._num.copy(), self._den.copy()
        out._groups = {k: v.copy() for k, v in self._groups.items()}
        return out

    # ------------------------------------------------------------------ #
    # update
    # ------------------------------------------------------------------ #
    def update(self, y_true=None, y_prob=None, *, counts=None, y_disagreement=None):
        """Add a chunk of items.

        Parameters
        ----------
        y_true : array-like of shape (n_chunk, n_classes) or (n_chunk,)
            Label histograms, rows of human probabilities, or 1-D labels; a
            numpy array, a DataFrame or a torch tensor (CPU or CUDA).
        y_prob : array-like of shape (n_chunk, n_classes) or (n_chunk,)
            Predicted probabilities (a torch tensor too). May be omitted
            when every metric of the state is a disagreement metric and
            ``y_disagreement`` is given.
        counts : array-like of shape (n_chunk, n_classes), default=None
            Replaces ``y_true`` as the human histograms when given.
        y_disagreement : array-like of shape (n_chunk,), default=None
            The classifier's own predicted disagreement ``φ`` for the
            disagreement metrics (default: ``1 − Σ_k q_k²`` of ``y_prob``).

        Returns
        -------
        self : MetricState
        """
        y_true, y_prob = _host(y_true), _host(y_prob)
        counts, y_disagreement = _host(counts), _host(y_disagreement)
        if y_true is None and counts is None:
            raise ValueError("y_true (or counts) is required: the human labels.")
        pair, phi = self._validate(y_true, y_prob, counts, y_disagreement)
        self._add_chunk(pair, phi)
        return self

    def _labels_for(self, y_prob):
        if self.labels is not None:
            return self.labels
        if self.classes_ is not None and (
            y_prob is None or frame_names(y_prob, name="y_prob") is None
        ):
            # the classes fixed by the first chunk name a positional chunk's
            # columns (a chunk of 1-D labels may miss a class)
            return self.classes_
        return None

    def _validate(self, y_true, y_prob, counts, y_disagreement):
        labels = self._labels_for(y_prob)
        needs_proba = any(c.metric.response == "proba" for c in self._columns)
        if y_prob is None:
            if needs_proba or y_disagreement is None:
                raise ValueError(
                    "y_prob is required: the state computes "
                    f"{[c.name for c in self._columns]}, which compare "
                    "predicted probabilities with the human labels (only the "
                    "disagreement metrics can do with y_disagreement alone)."
                )
            pair = _labels_only(y_true, counts, labels)
        else:
            pair = _check_pair(y_true, y_prob, counts=counts, labels=labels)
        phi = None
        if y_disagreement is not None:
            phi = check_disagreement(y_disagreement, name="y_disagreement")
            if phi.shape[0] != pair.n_samples:
                raise ValueError(
                    "y_true and y_disagreement have different numbers of "
                    f"samples: {pair.n_samples} and {phi.shape[0]}."
                )
        return self._aligned(pair), phi

    def _aligned(self, pair: _Pair) -> _Pair:
        """The chunk in the state's class order (fixing it on the first chunk)."""
        if self.n_classes_ is None:
            self.n_classes_ = pair.n_classes
            self.classes_ = None if pair.classes is None else np.asarray(pair.classes)
            return pair
        if pair.n_classes != self.n_classes_:
            raise ValueError(
                f"This chunk has {pair.n_classes} classes but the state has "
                f"{self.n_classes_} (fixed by its first chunk): every chunk needs "
                "one column per class, including classes it has no item of."
            )
        if self.classes_ is None or pair.classes is None:
            return pair
        order = column_order(
            pair.classes, self.classes_, name="this chunk", target_name="the state"
        )
        if order is None:
            return pair
        Y = np.asarray(pair.Y)[:, order]
        P = None if pair.P is None else pair.probabilities()[:, order]
        return _Pair(
            Y, P, pair.n, pair.is_counts, renormalise=False, classes=self.classes_
        )

    def _computable(self, column, is_counts: bool) -> bool:
        return is_counts or column.metric.requires not in ("counts", "pairs")

    def _add_chunk(self, pair: _Pair, phi) -> None:
        human = _engine.Human(pair)
        source = _engine.Source(pair, phi)
        columns = [c for c in self._columns if self._computable(c, pair.is_counts)]
        means = [c for c in columns if c.metric.per_item is not None]
        groups = _engine.groups_of(columns)
        n_cells = _engine.n_cells_of(columns, human)
        if any(c.metric.requires == "pairs" for c in columns):
            human.mu  # noqa: B018 -- computed once, before the threads need it

        def block_pass(sl):
            block = _engine.ReportBlock(human, source, sl)
            num, den = np.zeros(len(means)), np.zeros(len(means))
            for j, c in enumerate(means):
                n, d = _engine.per_item_values(c, block)
                num[j] = n.sum()
                den[j] = n.shape[0] if d is None else d.sum()
            sums = {}
            for key, (stats, params) in groups.items():
                n_slots, width = n_cells[key]
                step = max(256, _GROUP_ELEMENTS // n_slots)
                total = 0.0
                for start in range(sl.start, sl.stop, step):
                    sub = _engine.ReportBlock(
                        human, source, slice(start, min(start + step, sl.stop))
                    )
                    cell, values = stats.cells(sub, **params)
                    total = total + cell_sums(cell, values, n_slots * width)
                sums[key] = total
            return num, den, sums

        with warnings.catch_warnings():
            # the metric modules' warnings are given once, by compute()
            warnings.simplefilter("ignore", UserWarning)
            parts = _map_row_blocks(block_pass, human.n_samples, human.n_classes)
            unanimous = human.unanimous
        index = {name: j for j, name in enumerate(self._means)}
        for part in parts:
            for j, c in enumerate(means):
                self._num[index[c.name]] += part[0][j]
                self._den[index[c.name]] += part[1][j]
            for key, sums in part[2].items():
                self._groups[key] = self._groups.get(key, 0.0) + sums
        n = np.asarray(pair.n)
        self.n_samples_ += pair.n_samples
        self._is_counts = self._is_counts and pair.is_counts
        self._unanimous = self._unanimous and unanimous
        self._n_single += int(np.count_nonzero(n < 2))
        self._n_pairs += int(np.count_nonzero(n >= 2)) if pair.is_counts else 0

    # ------------------------------------------------------------------ #
    # merge and compute
    # ------------------------------------------------------------------ #
    def merge(self, other: MetricState) -> MetricState:
        """The state of the items of both (a new state; both stay as they are).

        Parameters
        ----------
        other : MetricState
            A state of the same metrics and parameters, on other items.

        Returns
        -------
        state : MetricState
        """
        if not isinstance(other, MetricState):
            raise TypeError(f"other must be a MetricState, got {type(other).__name__}.")
        if other._spec != self._spec:
            raise ValueError(
                "Only states of the same metrics with the same parameters can "
                f"be merged; got {[c.name for c in self._columns]} and "
                f"{[c.name for c in other._columns]} (or different metric_params)."
            )
        if other.n_samples_ == 0:
            return self._copy()
        if self.n_samples_ == 0:
            return other._copy()
        if other.n_classes_ != self.n_classes_:
            raise ValueError(
                f"The states have {self.n_classes_} and {other.n_classes_} classes."
            )
        out = self._copy()
        if self.classes_ is not None and other.classes_ is not None:
            if (
                column_order(
                    other.classes_, self.classes_, name="other", target_name="self"
                )
                is not None
            ):
                raise ValueError(
                    f"The states name their classes in different orders "
                    f"({other.classes_.tolist()} and {self.classes_.tolist()}); "
                    "give both labels= in the same order."
                )
        elif out.classes_ is None:
            out.classes_ = other.classes_
        out._num = self._num + other._num
        out._den = self._den + other._den
        for key, sums in other._groups.items():
            out._groups[key] = out._groups.get(key, 0.0) + sums
        out.n_samples_ = self.n_samples_ + other.n_samples_
        out._is_counts = self._is_counts and other._is_counts
        out._unanimous = self._unanimous and other._unanimous
        out._n_single = self._n_single + other._n_single
        out._n_pairs = self._n_pairs + other._n_pairs
        return out

    def _supports(self, requirement: str) -> bool:
        if requirement in ("distribution", "ordered"):
            return True
        if requirement == "counts":
            return self._is_counts
        if requirement == "variation":
            return not self._unanimous
        return self._is_counts and self._n_pairs > 0

    def _values(self) -> dict:
        if self.n_samples_ == 0:
            raise ValueError(
                "This MetricState has seen no items: call update() with a chunk first."
            )
        chosen = []
        for c in self._columns:
            if self._supports(c.metric.requires):
                chosen.append(c)
            elif self._names is not None:
                raise ValueError(
                    f"Metric {c.name!r} needs "
                    f"{_registry.REQUIREMENTS[c.metric.requires]}; the human "
                    "labels seen by this state do not provide them."
                )
        if self._n_single and any(
            c.name in _DEBIASED and c.kwargs.get("debiased", True) for c in chosen
        ):
            warnings.warn(
                f"{self._n_single} of {self.n_samples_} items have a single "
                "annotation; the bias correction of the debiased epistemic and "
                "dispersion losses needs n_i >= 2 and is skipped for them, so "
                "the estimate is biased upwards.",
                UserWarning,
                stacklevel=3,
            )
        index = {name: j for j, name in enumerate(self._means)}
        groups = _engine.groups_of(chosen)
        terms = {
            key: _engine.finish(stats, self._groups[key], self.n_samples_, params)
            for key, (stats, params) in groups.items()
        }
        values = {}
        for c in chosen:
            if c.group is not None:
                values[c.name] = float(c.value(terms[c.group]))
                continue
            j = index[c.name]
            values[c.name] = (
                float(self._num[j] / self._den[j]) if self._den[j] > 0 else np.nan
            )
        return values

    def compute(self):
        """The metrics of all the items seen.

        Returns
        -------
        value : float or dict of str to float
            A float for a state of one metric (``metrics`` a string), else
            ``{column: value}`` in the order of the metrics.
        """
        values = self._values()
        if self._single:
            return next(iter(values.values()))
        return values

    def _group_sums(self, column: str):
        """The sums of a binned column's group (for the functions' errors)."""
        c = next(c for c in self._columns if c.name == column)
        return self._groups[c.group]

    def __repr__(self) -> str:
        names = "default" if self._names is None else [c.name for c in self._columns]
        return f"MetricState({names}, n_samples_={self.n_samples_})"


def _labels_only(y_true, counts, labels) -> _Pair:
    """The human labels of a chunk without probabilities (φ given instead)."""
    from ._disagreement_kernels import _disagreement_histograms

    name = "y_true" if counts is None else "counts"
    human = y_true if counts is None else counts
    Y, n = _disagreement_histograms(human, name=name, labels=labels)
    classes = labels if labels is not None else frame_names(human, name=name)
    return _Pair(Y, None, n, True, classes=classes)


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
    from ._report import as_prediction_dict

    named = as_prediction_dict(states, name, what="states")
    for key, state in named.items():
        if not isinstance(state, MetricState):
            raise ValueError(
                f"states[{key!r}] must be a MetricState, got {type(state).__name__}."
            )
    values = {key: state._values() for key, state in named.items()}
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


# --------------------------------------------------------------------------- #
# dask arrays
# --------------------------------------------------------------------------- #
def _import_dask():
    from ..utils._optional import import_optional

    return import_optional("dask"), import_optional("dask.array")


def _block_state(template: MetricState, y_true, y_prob, counts, y_disagreement):
    """The state of one block of rows (a task of the dask graph)."""
    state = template._empty()
    rows = next(a for a in (counts, y_true) if a is not None).shape[0]
    if rows == 0:
        return state
    return state.update(y_true, y_prob, counts=counts, y_disagreement=y_disagreement)


def _merge_two(a: MetricState, b: MetricState) -> MetricState:
    return a.merge(b)


def _as_row_blocks(arrays: dict, da):
    """The inputs as dask arrays with the same row chunks, whole rows per block."""
    present = {k: v for k, v in arrays.items() if v is not None}
    ref_name, ref = next((k, v) for k, v in present.items() if is_dask_array(v))
    if any(np.isnan(c) for c in ref.chunks[0]):
        raise ValueError(
            f"{ref_name} has unknown chunk sizes (e.g. from a dask DataFrame); call "
            f"{ref_name}.compute_chunk_sizes() first."
        )
    rows = ref.chunks[0]
    out = {}
    for key, value in arrays.items():
        if value is None:
            out[key] = None
            continue
        if not is_dask_array(value):
            value = value.to_numpy() if hasattr(value, "to_numpy") else value
            value = np.asarray(_host(value))
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
        if is_dask_array(value):
            value = value.rechunk(chunks)
        else:
            value = da.from_array(value, chunks=chunks)
        out[key] = value
    return out


def _fix_label_classes(template: MetricState, human, y_prob, da) -> MetricState:
    """With 1-D dask labels and no ``labels=``, the sorted distinct labels of
    all the items are the classes (a block may miss one)."""
    if template.labels is not None or human.ndim != 1 or y_prob is None:
        return template
    classes = np.asarray(da.unique(human).compute())
    n_columns = 2 if y_prob.ndim == 1 else y_prob.shape[1]
    if classes.shape[0] != n_columns:
        raise ValueError(
            f"y_true holds {classes.shape[0]} distinct labels {classes.tolist()} "
            f"but y_prob has {n_columns} columns, so which column is which class "
            "is ambiguous; pass labels= (the class of each column of y_prob)."
        )
    out = template._empty()
    out.labels = classes
    return out


def _dask_state(template, y_true=None, y_prob=None, counts=None, y_disagreement=None):
    """A ``dask.delayed`` state of all the rows: block states merged in a tree."""
    dask, da = _import_dask()
    arrays = _as_row_blocks(
        {
            "y_true": y_true if counts is None else None,
            "counts": counts,
            "y_prob": y_prob,
            "y_disagreement": y_disagreement,
        },
        da,
    )
    human = arrays["counts"] if counts is not None else arrays["y_true"]
    template = _fix_label_classes(template, human, arrays["y_prob"], da)
    blocks = {
        k: None if v is None else list(v.to_delayed().ravel())
        for k, v in arrays.items()
    }
    n_blocks = len(blocks["counts"] if counts is not None else blocks["y_true"])
    task = dask.delayed(_block_state, pure=True)
    merge = dask.delayed(_merge_two, pure=True)
    parts = [
        task(
            template,
            *(
                None if blocks[k] is None else blocks[k][i]
                for k in ("y_true", "y_prob", "counts", "y_disagreement")
            ),
        )
        for i in range(n_blocks)
    ]
    while len(parts) > 1:
        merged = [merge(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = merged + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def _dask_call(function, args, kwargs):
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


#: Why the functions that are not registry metrics have no chunk-wise form,
#: and what to use instead.
_NOT_CHUNKWISE = {
    "metrics_by_agreement": "its agreement bins are quantiles (or the range) "
    "of the human entropies of all the items, which no sum over chunks "
    "gives. Compute the arrays (x.compute(), or a numpy memory map), or give "
    "each agreement bin its own MetricState",
    "instance_calibration_errors": "it returns one row per item, not a "
    "reduction. Apply it to each block with dask.array.map_blocks, or compute "
    "the arrays",
    "disagreement_probability": "it returns one value per item. Apply it to "
    "each block with dask.array.map_blocks",
    "predicted_disagreement": "it returns one value per item. Apply it to "
    "each block with dask.array.map_blocks",
    "loss_decomposition": "it is a table of registry metrics: "
    "human_calibration_report(y_true, y_prob, metrics=['sq_loss', 'el', "
    "'el_plugin', 'il', 'il_plugin', 'cl', 'cl_plugin', 'dl', 'dl_plugin', "
    "'ce', 'ce_plugin']) accepts dask arrays and gives the same terms",
}


def _base_metric(function):
    for m in _registry.metrics().values():
        if m.function is function and not m.kwargs:
            return m
    why = _NOT_CHUNKWISE.get(
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
    value = state.compute()
    if metric.stats is not None and metric.stats.name == "entropy_moments":
        from ._pearson import _pearson_or_raise

        # the function raises where the report's column is NaN
        _pearson_or_raise(state._group_sums(metric.column), "normalised entropies")
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
    from ._report import as_prediction_dict

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
