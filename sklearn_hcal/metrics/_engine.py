"""The report engine: registry metrics of several classifiers in one pass.

:func:`resolve` turns column names (and ``metric_params``) into
:class:`Column` objects, checking what the human labels provide;
:func:`evaluate` computes them for one classifier in a single chunked pass
over the rows, computing each block's shared arrays (``p̂``, entropies, the
top class, ``φ``) once for all columns; :func:`block_features` gives the
per-item values and per-cell statistics the bootstrap resamples
(:mod:`sklearn_hcal.metrics._bootstrap`). Every number comes from the hooks
declared in the metric modules (:mod:`sklearn_hcal.metrics._registry`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .._validation import Block, Pair, map_row_blocks
from . import _registry
from ._cells import cell_sums
from ._disagreement_kernels import _pair_disagreement, _phi_rows
from ._mimori_kernels import _warn_single_annotations

__all__ = [
    "Column",
    "Human",
    "Source",
    "build_columns",
    "resolve",
    "evaluate",
    "block_features",
]

#: Columns whose debiased estimator skips items with a single annotation.
_DEBIASED = ("el", "dl", "il")


class Human:
    """The validated human labels, shared by every classifier of a report."""

    def __init__(self, pair: Pair, *, y_true_name: str = "y_true") -> None:
        self.pair = pair
        # The pair further classifiers are checked against (see
        # ._report.check_prediction), and the labels' name in messages.
        self.reference = pair
        self.y_true_name = y_true_name
        self.Y, self.n = pair.Y, pair.n
        self.is_counts = pair.is_counts
        self.n_samples, self.n_classes = pair.n_samples, pair.n_classes

    @cached_property
    def mu(self) -> np.ndarray:
        """Unbiased disagreement probability per item (NaN where ``n < 2``)."""
        return _pair_disagreement(self.Y, self.n)[0]

    @cached_property
    def valid(self) -> np.ndarray:
        return self.n >= 2

    @cached_property
    def unanimous(self) -> bool:
        """Whether every item's labels agree (e.g. one label per item)."""
        parts = self.pair.map_blocks(lambda b: bool(np.all(b.p_hat.max(axis=1) == 1)))
        return all(parts)

    def supports(self, requirement: str) -> bool:
        if requirement in ("distribution", "ordered"):
            return True
        if requirement == "counts":
            return self.is_counts
        if requirement == "variation":
            return not self.unanimous
        return self.is_counts and bool(self.valid.any())

    def take(self, idx) -> Human:
        return Human(self.pair.take(idx))


@dataclass
class Source:
    """One classifier: its checked probabilities and, optionally, its own ``φ``.

    ``pair`` is the human labels' :class:`~sklearn_hcal._validation.Pair`
    with this classifier's probabilities (from ``check_pair`` or
    ``Pair.with_probabilities``): it carries the column order that puts
    them in the labels' class order and the renormalisation of rows off by
    rounding, both applied block by block.
    """

    pair: Pair
    phi: np.ndarray | None = None

    def take(self, idx) -> Source:
        return Source(self.pair.take(idx), None if self.phi is None else self.phi[idx])


class ReportBlock(Block):
    """A block of rows with the report's per-item quantities of both sides."""

    def __init__(self, human: Human, source: Source, sl: slice) -> None:
        super().__init__(source.pair, sl)
        self._human, self._source = human, source

    @property
    def classes(self):
        """Class names of the columns (None: positional), for ``order=``."""
        return self._human.pair.classes

    @cached_property
    def mu(self) -> np.ndarray:
        return self._human.mu[self.sl]

    @cached_property
    def valid(self) -> np.ndarray:
        return self._human.valid[self.sl]

    @cached_property
    def phi(self) -> np.ndarray:
        """The classifier's own ``φ`` if given, else ``1 − Σ_k q_k²`` in [0, 1]."""
        if self._source.phi is not None:
            return self._source.phi[self.sl]
        return np.clip(_phi_rows(self.P), 0.0, 1.0)


@dataclass
class Column:
    """A report column: a registry metric with its resolved keyword arguments."""

    metric: _registry.Metric
    kwargs: dict
    stats_params: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.metric.column

    @property
    def group(self) -> tuple | None:
        """Columns of one group with the same parameters share their sums."""
        stats = self.metric.stats
        if stats is None:
            return None
        return (stats.name, tuple(sorted(self.stats_params.items())))

    def value(self, terms: dict):
        rest = {k: v for k, v in self.kwargs.items() if k not in self.stats_params}
        return self.metric.value(terms, **rest)


def resolve(names, human: Human, metric_params=None, *, default=None) -> list:
    """``[Column, ...]`` for ``names``; ``None`` = ``default`` minus what the
    labels cannot give (explicitly asked for, that raises a ValueError)."""
    metric_params = dict(metric_params or {})
    if names is None:
        chosen = [
            m
            for m in (_registry.get_metric(c) for c in default)
            if human.supports(m.requires)
        ]
    else:
        if isinstance(names, str):
            names = [names]
        chosen = [_registry.get_metric(name) for name in names]
        if not chosen:
            raise ValueError("metrics is empty: at least one metric name is required.")
        for m in chosen:
            if not human.supports(m.requires):
                raise ValueError(
                    f"Metric {m.column!r} needs {_registry.REQUIREMENTS[m.requires]}"
                    "; the given human labels do not provide them."
                )
    return build_columns(chosen, metric_params, owner="the report's columns")


def build_columns(chosen, metric_params, *, owner: str) -> list:
    """``[Column, ...]`` of the declarations ``chosen`` with ``metric_params``.

    Shared by the report and :class:`~sklearn_hcal.metrics.MetricState`
    (``owner`` names what holds the columns in errors): a column named twice
    raises, and ``metric_params`` keys (long, short or scorer names) must be
    among the chosen columns.
    """
    columns = [c.column for c in chosen]
    if len(set(columns)) != len(columns):
        raise ValueError(f"metrics names a column twice: {columns}.")
    by_column = {
        _registry.get_metric(k, argument="metric_params").column: v
        for k, v in dict(metric_params or {}).items()
    }
    for key in by_column:
        if key not in columns:
            raise ValueError(
                f"metric_params has parameters for {key!r}, which is not among "
                f"{owner} {columns}."
            )
    out = []
    for m in chosen:
        kwargs = m.resolve_kwargs(by_column.get(m.column))
        params = m.stats.params if m.stats is not None else ()
        out.append(Column(m, kwargs, {p: kwargs[p] for p in params}))
    return out


def warn_debiased(columns, human: Human) -> None:
    """One warning when a debiased column skips items with one annotation."""
    if any(c.name in _DEBIASED and c.kwargs.get("debiased", True) for c in columns):
        _warn_single_annotations(human.n, "epistemic and dispersion losses")


def _groups(columns) -> dict:
    """``{group key: (Stats, params)}`` of the binned columns, in order."""
    groups = {}
    for c in columns:
        if c.group is not None and c.group not in groups:
            groups[c.group] = (c.metric.stats, c.stats_params)
    return groups


def per_item_values(column: Column, block) -> tuple[np.ndarray, np.ndarray | None]:
    """``(num, den)`` of a mean-type column for a block (``den`` None: a mean)."""
    out = column.metric.per_item(block, **column.kwargs)
    if isinstance(out, tuple):
        num, den = out
        return np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    return np.asarray(out, dtype=np.float64), None


def evaluate(columns, human: Human, source: Source) -> np.ndarray:
    """The columns' values for one classifier, shape ``(n_columns,)``.

    Mean-type columns accumulate ``Σ num`` and ``Σ den`` block by block;
    binned ones their per-cell sums (:func:`~._cells.cell_sums`), finished
    once. Blocks run on threads; their partial sums are added in block order,
    so the result does not depend on the number of threads.
    """
    means = [c for c in columns if c.metric.per_item is not None]
    groups = _groups(columns)

    def block_pass(sl):
        block = ReportBlock(human, source, sl)
        num, den = np.zeros(len(means)), np.zeros(len(means))
        for j, c in enumerate(means):
            n, d = per_item_values(c, block)
            num[j] = n.sum()
            den[j] = n.shape[0] if d is None else d.sum()
        sums = {
            key: _group_sums(stats, params, human, source, block)
            for key, (stats, params) in groups.items()
        }
        return num, den, sums

    parts = map_row_blocks(block_pass, human.n_samples, human.n_classes)
    num = sum(p[0] for p in parts)
    den = sum(p[1] for p in parts)
    terms = {}
    for key, (stats, params) in groups.items():
        sums = sum(p[2][key] for p in parts)
        terms[key] = finish(stats, sums, human.n_samples, params)
    values = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for j, c in enumerate(means):
            values[c.name] = num[j] / den[j] if den[j] > 0 else np.nan
    for c in columns:
        if c.group is not None:
            values[c.name] = c.value(terms[c.group])
    return np.array([float(values[c.name]) for c in columns])


#: Elements (items × slots) per sub-block of a binned group: its values hold
#: several statistics per element, so they are summed a sub-block at a time.
_GROUP_ELEMENTS = 2**14


def _group_sums(stats, params, human, source, block) -> np.ndarray:
    """:func:`~._cells.cell_sums` of a group over a block, in sub-blocks."""
    n_slots, width = stats.n_cells(human.n_classes, **params)
    step = max(256, _GROUP_ELEMENTS // n_slots)
    sl = block.sl
    if sl.stop - sl.start <= step:
        return cell_sums(*stats.cells(block, **params), n_slots * width)
    sums = 0.0
    for start in range(sl.start, sl.stop, step):
        sub = ReportBlock(human, source, slice(start, min(start + step, sl.stop)))
        sums = sums + cell_sums(*stats.cells(sub, **params), n_slots * width)
    return sums


def finish(stats, sums, n_samples, params: dict) -> dict:
    """The group's terms from its sums (leading axes: resamples)."""
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return stats.finish(sums, n_samples, **params)


def block_features(columns, human: Human, source: Source, sl: slice):
    """Per-item values of a block of rows, for the bootstrap.

    Returns ``(num, den, cells)``: ``num`` of shape ``(n_means, n_rows)``,
    ``den`` a list (None for a plain mean, else an array of shape
    ``(n_rows,)``), and ``cells`` ``{group key: (cell, values)}``.
    """
    block = ReportBlock(human, source, sl)
    means = [c for c in columns if c.metric.per_item is not None]
    num = np.empty((len(means), sl.stop - sl.start))
    den = []
    for j, c in enumerate(means):
        num[j], d = per_item_values(c, block)
        den.append(d)
    cells = {
        key: stats.cells(block, **params)
        for key, (stats, params) in _groups(columns).items()
    }
    return num, den, cells


def n_cells_of(columns, human: Human) -> dict:
    """``{group key: (n_slots, width)}`` of the binned columns."""
    return {
        key: stats.n_cells(human.n_classes, **params)
        for key, (stats, params) in _groups(columns).items()
    }


def groups_of(columns) -> dict:
    """``{group key: (Stats, params)}`` (see :func:`finish`)."""
    return _groups(columns)
