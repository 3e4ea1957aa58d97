"""Mergeable metric states: the registry's metrics chunk by chunk.

Every metric of the registry (:mod:`sklearn_hcal.metrics._registry`) is a
function of sums over items, held by the engine's
:class:`~sklearn_hcal.metrics._engine.Sums` (the report computes with the
same object). Sums add, so a :class:`MetricState` that holds them can be
updated with one chunk of items after another, merged with a state of other
items, and read at the end: the values are those of the whole set, whatever
the chunking (equal to the in-memory functions to rounding, ~1e-15
relative). The state adds what only chunks need: the classes fixed by the
first chunk, and what the labels seen provide (counts, pairs, variation).

What cannot be a sum is not offered: the report's bootstrap resamples the
items of the whole set, and the ``"quantile"`` bins of
:func:`metrics_by_agreement` are quantiles of all items. Both raise a
``ValueError`` naming the alternative when given dask arrays.

:mod:`sklearn_hcal.metrics._streaming._dask` computes the metric functions
and :func:`human_calibration_report` on :class:`dask.array.Array` inputs
with these states: one per block of rows, reduced by merging in a tree.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping

import numpy as np

from ..._validation import (
    Pair,
    check_disagreement,
    check_pair,
    column_order,
    frame_names,
)
from ...utils._docstrings import fill_doc
from .. import _registry
from .._engine import Human, Source, Sums, build_columns, supports, uses_debiased
from .._mimori_kernels import warn_single_annotations
from ._inputs import chunkwise_metric, host_array, labels_only

__all__ = ["MetricState"]


@fill_doc
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
        :func:`human_calibration_report`); a single name is a list of one.
        ``None`` = the report's default columns that the labels support
        (decided at :meth:`compute`, on all the items seen).
    metric_params : dict of str to dict, default=None
        Keyword arguments of the metric functions per column, as for
        :func:`human_calibration_report`.
    %(labels)s

    Attributes
    ----------
    n_samples_ : int
        Number of items seen.
    classes_ : ndarray or None
        The class names fixed by the first update (None: positional).
    n_classes_ : int or None
        Number of classes (None before the first update).
    sums_ : Sums
        The sums the metrics are computed from (``Σ num`` and ``Σ den`` of
        the mean-type metrics, per-cell sums of the binned ones): the
        engine's state, the same object the report computes with.

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
    >>> a.merge(b).compute()  # always a mapping, even of one metric
    {'kl': 0.0297...}
    >>> bool(np.isclose(a.merge(b).compute()["kl"], kl_divergence(Y, P)))
    True
    >>> both = MetricState(["kl", "ece"]).update(Y, P)
    >>> sorted(both.compute())
    ['ece', 'kl']
    """

    def __init__(self, metrics=None, *, metric_params=None, labels=None):
        self.metrics = metrics
        self.metric_params = metric_params
        self.labels = None if labels is None else np.asarray(labels)
        if isinstance(metrics, str):
            self._names = [metrics]
        elif metrics is None:
            self._names = None
        else:
            self._names = list(metrics)
            if not self._names:
                raise ValueError(
                    "metrics is empty: at least one metric name is required."
                )
        if metric_params is not None and not isinstance(metric_params, Mapping):
            raise ValueError(
                "metric_params must be a dict of {column: {parameter: value}}, "
                f"got {type(metric_params).__name__}."
            )
        self._columns = self._resolve()  # validates names and parameters now
        self.reset()

    def _resolve(self) -> list:
        names = self._names
        if names is None:
            names = _registry.default_columns()
        chosen = [chunkwise_metric(name) for name in names]
        return build_columns(
            chosen, dict(self.metric_params or {}), owner="the state's metrics"
        )

    @property
    def _spec(self) -> tuple:
        """What two states must share to be merged (repr: params may be arrays)."""
        return (
            None if self._names is None else tuple(c.name for c in self._columns),
            repr([(c.name, sorted(c.kwargs.items())) for c in self._columns]),
        )

    def reset(self) -> MetricState:
        """Forget the items seen; keep the metrics, parameters and ``labels``.

        Returns
        -------
        self : MetricState
        """
        self.n_samples_ = 0
        self.n_classes_ = None
        self.classes_ = None
        self.sums_ = Sums(self._columns)
        self._is_counts = True
        self._unanimous = True
        self._n_single = 0
        self._n_pairs = 0
        return self

    def __getstate__(self):
        # The columns hold the registry's hooks (lambdas): a state travels
        # by its metric names and parameters, and its sums as arrays.
        state = self.__dict__.copy()
        state["_columns"] = None
        sums = self.sums_
        state["sums_"] = (sums.num, sums.den, sums.cells, sums.n_samples)
        return state

    def __setstate__(self, state):
        num, den, cells, n_samples = state.pop("sums_")
        self.__dict__.update(state)
        self._columns = self._resolve()
        self.sums_ = Sums(
            self._columns, num=num, den=den, cells=cells, n_samples=n_samples
        )

    def _copy(self) -> MetricState:
        out = copy.copy(self)
        out.sums_ = self.sums_.merge(Sums(self._columns))  # arrays of its own
        return out

    # ------------------------------------------------------------------ #
    # update
    # ------------------------------------------------------------------ #
    def update(
        self,
        y_true=None,
        y_prob=None,
        *,
        counts=None,
        y_disagreement=None,
        first_row=None,
    ):
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
        first_row : int, default=None
            The position of the chunk's first item among all items, for
            the rows that error messages name (default: the number of items
            seen so far, so the chunks of one pass are numbered as one
            array).

        Returns
        -------
        self : MetricState
        """
        y_true, y_prob = host_array(y_true), host_array(y_prob)
        counts, y_disagreement = host_array(counts), host_array(y_disagreement)
        if y_true is None and counts is None:
            raise ValueError("y_true (or counts) is required: the human labels.")
        offset = self.n_samples_ if first_row is None else int(first_row)
        pair, phi = self._validate(y_true, y_prob, counts, y_disagreement, offset)
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

    def _validate(self, y_true, y_prob, counts, y_disagreement, offset):
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
            pair = labels_only(y_true, counts, labels)
        else:
            pair = check_pair(
                y_true, y_prob, counts=counts, labels=labels, row_offset=offset
            )
        phi = None
        if y_disagreement is not None:
            phi = check_disagreement(
                y_disagreement, name="y_disagreement", row_offset=offset
            )
            if phi.shape[0] != pair.n_samples:
                raise ValueError(
                    "y_true and y_disagreement have different numbers of "
                    f"samples: {pair.n_samples} and {phi.shape[0]}."
                )
        return self._aligned(pair), phi

    def _aligned(self, pair: Pair) -> Pair:
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
        return Pair(
            Y, P, pair.n, pair.is_counts, renormalise=False, classes=self.classes_
        )

    def _add_chunk(self, pair: Pair, phi) -> None:
        human = Human(pair)
        # a chunk of probability rows cannot give what needs counts
        skip = {
            c.name
            for c in self._columns
            if not pair.is_counts and c.metric.requires in ("counts", "pairs")
        }
        columns = [c for c in self._columns if c.name not in skip]
        if any(c.metric.requires == "pairs" for c in columns):
            human.mu  # noqa: B018 -- computed once, before the threads need it
        with warnings.catch_warnings():
            # the metric modules' warnings are given once, by compute()
            warnings.simplefilter("ignore", UserWarning)
            self.sums_.update(human, Source(pair, phi), skip=skip)
            variation = any(c.metric.requires == "variation" for c in columns)
            unanimous = human.unanimous if variation else True
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
        out = copy.copy(self)
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
        out.sums_ = self.sums_.merge(other.sums_)
        out.n_samples_ = self.n_samples_ + other.n_samples_
        out._is_counts = self._is_counts and other._is_counts
        out._unanimous = self._unanimous and other._unanimous
        out._n_single = self._n_single + other._n_single
        out._n_pairs = self._n_pairs + other._n_pairs
        return out

    def compute(self) -> dict:
        """The metrics of all the items seen.

        Returns
        -------
        values : dict of str to float
            ``{column: value}`` in the order of the metrics, also for a
            state of one metric (``MetricState("kl").compute()["kl"]``).
        """
        if self.n_samples_ == 0:
            raise ValueError(
                "This MetricState has seen no items: call update() with a chunk first."
            )
        chosen = []
        for c in self._columns:
            if supports(
                c.metric.requires,
                is_counts=self._is_counts,
                unanimous=self._unanimous,
                has_pairs=self._n_pairs > 0,
            ):
                chosen.append(c)
            elif self._names is not None:
                raise ValueError(
                    f"Metric {c.name!r} needs "
                    f"{_registry.REQUIREMENTS[c.metric.requires]}; the human "
                    "labels seen by this state do not provide them."
                )
        if uses_debiased(chosen):
            warn_single_annotations(
                self._n_single,
                self.n_samples_,
                "epistemic and dispersion losses",
            )
        return self.sums_.values(chosen)

    def __repr__(self) -> str:
        names = "default" if self._names is None else [c.name for c in self._columns]
        return f"MetricState({names}, n_samples_={self.n_samples_})"
