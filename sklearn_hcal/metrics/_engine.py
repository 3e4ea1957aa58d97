"""The engine: the sums every registry metric is computed from.

Why one module: the engine's sums and the objects they are read from
(``Human``, ``Source``, ``ReportBlock``, ``Column``, ``Sums``) are one job;
about 300 lines are code, the rest their documentation.

Every registry metric (:mod:`sklearn_hcal.metrics._registry`) is a function
of sums over items: ``Σ num`` and ``Σ den`` (a ``per_item`` hook), per-cell
sums (a :class:`Stats` group, :mod:`sklearn_hcal.metrics._cells`), six
moments (a correlation). :class:`Sums` holds them for one classifier, like a
torchmetrics ``Metric`` state: :meth:`Sums.update` adds items (one chunked
pass, each block's shared arrays computed once for all columns),
:meth:`Sums.merge` adds other items' sums, :meth:`Sums.values` reads the
columns. The one engine of the report (:func:`evaluate`), of
:class:`~sklearn_hcal.metrics.MetricState` (hence the dask path and the
skorch callback) and of the bootstrap (:mod:`sklearn_hcal.metrics._bootstrap`:
a ``Sums`` with a leading resample axis, weighting the per-item
:func:`contributions` by each resample's multiplicities).

:func:`resolve` turns column names (and ``metric_params``) into
:class:`Column` objects, checking what the labels provide. :class:`Human`
and :class:`Source` are the validated inputs (the labels; a classifier's
probabilities and ``φ``), built once by the public entry points and passed
down as they are.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
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
    "Sums",
    "as_prediction_dict",
    "build_columns",
    "contributions",
    "evaluate",
    "resolve",
]


def supports(requirement: str, *, is_counts: bool, unanimous, has_pairs) -> bool:
    """Whether labels with these properties give a metric that needs
    ``requirement`` (see ``_registry.REQUIREMENTS``).

    ``unanimous`` and ``has_pairs`` are callables (computed only when the
    requirement needs them) or booleans. The one rule of the report
    (:meth:`Human.supports`, on the labels) and of
    :class:`~sklearn_hcal.metrics.MetricState` (on all the chunks seen).
    """
    if requirement in ("distribution", "ordered"):
        return True
    if requirement == "counts":
        return bool(is_counts)
    if requirement == "variation":
        return not (unanimous() if callable(unanimous) else unanimous)
    return bool(is_counts) and bool(has_pairs() if callable(has_pairs) else has_pairs)


#: Columns whose debiased estimator skips items with a single annotation.
DEBIASED = ("el", "dl", "il")


def uses_debiased(columns) -> bool:
    """Whether a column's debiased estimator skips single-annotation items."""
    return any(c.name in DEBIASED and c.kwargs.get("debiased", True) for c in columns)


class Human:
    """The validated human labels, shared by every classifier of a report."""

    def __init__(self, pair: Pair, *, y_true_name: str = "y_true") -> None:
        self.pair = pair
        # The pair further classifiers are checked against (see
        # ._report_inputs.check_prediction), and the labels' name in messages.
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
        return supports(
            requirement,
            is_counts=self.is_counts,
            unanimous=lambda: self.unanimous,
            has_pairs=lambda: bool(self.valid.any()),
        )

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

    def disagreement(self) -> np.ndarray:
        """``φ`` per item: the classifier's own, else ``1 − Σ_k q_k²`` in [0, 1].

        The report's rule (:attr:`ReportBlock.phi`), for the whole array: the
        figures read it without checking the probabilities again.
        """
        if self.phi is not None:
            return self.phi
        phi = np.empty(self.pair.n_samples)
        for block in self.pair.blocks():
            phi[block.sl] = np.clip(_phi_rows(block.P), 0.0, 1.0)
        return phi


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

    def part(self, start: int, stop: int) -> ReportBlock:
        """Rows ``start:stop`` of this block (relative), sharing what it has
        computed: the per-row arrays already made (``P``, ``p̂``, the cached
        top class, ...) are sliced, not computed again."""
        sub = ReportBlock(
            self._human,
            self._source,
            slice(self.sl.start + start, self.sl.start + stop),
        )
        for name, value in self.__dict__.items():
            if name in _PER_ROW:
                sub.__dict__[name] = value[start:stop]
        for key, value in self.cache.items():
            if isinstance(value, tuple):
                sub.cache[key] = tuple(v[start:stop] for v in value)
            else:
                sub.cache[key] = value[start:stop]
        return sub


#: The per-row arrays a block computes on first use (``cached_property``).
_PER_ROW = frozenset({"P", "p_hat", "Yf", "mu", "valid", "phi"})


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
    if uses_debiased(columns):
        _warn_single_annotations(human.n, "epistemic and dispersion losses")


def groups_of(columns) -> dict:
    """``{group key: (Stats, params)}`` of the binned columns, in order."""
    groups = {}
    for c in columns:
        if c.group is not None and c.group not in groups:
            groups[c.group] = (c.metric.stats, c.stats_params)
    return groups


def n_cells_of(columns, human: Human) -> dict:
    """``{group key: (n_slots, width)}`` of the binned columns."""
    return {
        key: stats.n_cells(human.n_classes, **params)
        for key, (stats, params) in groups_of(columns).items()
    }


def per_item_values(column: Column, block) -> tuple[np.ndarray, np.ndarray | None]:
    """``(num, den)`` of a mean-type column for a block (``den`` None: a mean)."""
    out = column.metric.per_item(block, **column.kwargs)
    if isinstance(out, tuple):
        num, den = out
        return np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    return np.asarray(out, dtype=np.float64), None


def finish(stats, sums, n_samples, params: dict) -> dict:
    """The group's terms from its sums (leading axes: resamples)."""
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return stats.finish(sums, n_samples, **params)


#: Elements (items × slots) per sub-block of a binned group: its values hold
#: several statistics per element, so they are summed a sub-block at a time.
_GROUP_ELEMENTS = 2**14


def _group_sums(stats, params, human, block) -> np.ndarray:
    """:func:`~._cells.cell_sums` of a group over a block, in sub-blocks
    (each sharing the block's arrays: :meth:`ReportBlock.part`)."""
    if stats.sums is not None:  # the group's own one-pass reduction
        return stats.sums(block, **params)
    n_slots, width = stats.n_cells(human.n_classes, **params)
    step = max(256, _GROUP_ELEMENTS // n_slots)
    n_rows = block.sl.stop - block.sl.start
    if n_rows <= step:
        return cell_sums(*stats.cells(block, **params), n_slots * width)
    sums = 0.0
    for start in range(0, n_rows, step):
        sub = block.part(start, min(start + step, n_rows))
        sums = sums + cell_sums(*stats.cells(sub, **params), n_slots * width)
    return sums


class Sums:
    """The sums a list of columns is computed from: the one metric state.

    For one classifier: ``num`` and ``den`` hold ``Σ num`` and ``Σ den`` of
    the mean-type columns (a plain mean's ``den`` counts the items),
    ``cells`` the per-cell sums of each binned group, ``n_samples`` the
    number of items. Every array may carry leading axes (the bootstrap's
    resamples: ``n_samples`` then has their shape, and :meth:`values` gives
    arrays).

    Parameters
    ----------
    columns : list of Column
    num, den : ndarray of shape (..., n_means), default=None
        Zeros when None.
    cells : dict, default=None
        ``{group key: ndarray of shape (..., n_stats, n_cells)}``.
    n_samples : int, float or ndarray, default=0
    """

    def __init__(self, columns, *, num=None, den=None, cells=None, n_samples=0):
        self.columns = list(columns)
        self.means = [c for c in self.columns if c.metric.per_item is not None]
        self.groups = groups_of(self.columns)
        self.num = np.zeros(len(self.means)) if num is None else num
        self.den = np.zeros(len(self.means)) if den is None else den
        self.cells = {} if cells is None else dict(cells)
        self.n_samples = n_samples

    def update(self, human: Human, source: Source, *, skip=()) -> Sums:
        """Add the items of ``human`` and ``source`` (one chunked pass).

        Blocks run on threads; their partial sums are added in block order,
        so the result does not depend on the number of threads. Columns
        named in ``skip`` are left as they are (a chunk that cannot give
        them: probability rows for a metric that needs counts).

        Returns
        -------
        self : Sums
        """
        means = [(j, c) for j, c in enumerate(self.means) if c.name not in skip]
        groups = groups_of(c for c in self.columns if c.name not in skip)
        n_means = len(self.means)

        def block_pass(sl):
            block = ReportBlock(human, source, sl)
            num, den = np.zeros(n_means), np.zeros(n_means)
            for j, c in means:
                n, d = per_item_values(c, block)
                num[j] = n.sum()
                den[j] = n.shape[0] if d is None else d.sum()
            sums = {
                key: _group_sums(stats, params, human, block)
                for key, (stats, params) in groups.items()
            }
            return num, den, sums

        parts = map_row_blocks(block_pass, human.n_samples, human.n_classes)
        for num, den, sums in parts:
            self.num = self.num + num
            self.den = self.den + den
            for key, part in sums.items():
                self.cells[key] = self.cells.get(key, 0.0) + part
        self.n_samples = self.n_samples + human.n_samples
        return self

    def merge(self, other: Sums) -> Sums:
        """The sums of the items of both (a new object)."""
        cells = dict(self.cells)
        for key, part in other.cells.items():
            cells[key] = cells.get(key, 0.0) + part
        return Sums(
            self.columns,
            num=self.num + other.num,
            den=self.den + other.den,
            cells=cells,
            n_samples=self.n_samples + other.n_samples,
        )

    def cells_of(self, column: str) -> np.ndarray:
        """The per-cell sums of the group of the binned column ``column``."""
        return self.cells[next(c.group for c in self.columns if c.name == column)]

    def values(self, columns=None) -> dict:
        """``{column: value}`` of ``columns`` (default: all), in their order.

        Floats, or arrays of the leading shape. A mean-type column whose
        denominator is 0 (no item, or a ratio of sums with none) is NaN.
        """
        columns = self.columns if columns is None else columns
        terms = {
            key: finish(stats, self.cells[key], self.n_samples, params)
            for key, (stats, params) in groups_of(columns).items()
        }
        index = {c.name: j for j, c in enumerate(self.means)}
        out = {}
        with np.errstate(invalid="ignore", divide="ignore"):
            for c in columns:
                if c.group is not None:
                    value = c.value(terms[c.group])
                else:
                    num = self.num[..., index[c.name]]
                    den = self.den[..., index[c.name]]
                    value = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
                out[c.name] = float(value) if np.ndim(value) == 0 else value
        return out


def evaluate(columns, human: Human, source: Source) -> np.ndarray:
    """The columns' values for one classifier, shape ``(n_columns,)``."""
    values = Sums(columns).update(human, source).values()
    return np.array([values[c.name] for c in columns], dtype=np.float64)


def contributions(columns, human: Human, source: Source, sl: slice):
    """What each item of the rows ``sl`` adds to the :class:`Sums`.

    Returns ``(num, den, cells)``: ``num`` of shape ``(n_means, n_rows)``,
    ``den`` a list (None for a plain mean, whose denominator is the number
    of items, else an array of shape ``(n_rows,)``), and ``cells``
    ``{group key: (cell, values)}`` as the groups' ``cells`` hooks give them
    (:mod:`sklearn_hcal.metrics._cells`). The bootstrap weights them by the
    resamples' item multiplicities.
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
        for key, (stats, params) in groups_of(columns).items()
    }
    return num, den, cells


def as_prediction_dict(
    predictions, name=None, *, default: str = "model", what: str = "predictions"
) -> dict:
    """``{str name: value}`` of one classifier or a dict of named classifiers.

    The one reader of "one classifier or ``{name: classifier}``" arguments
    (the report's ``predictions``, :func:`report_from_states`' states, the
    Displays' ``y_prob`` and ``estimator``): a dict's keys, as strings, name
    the classifiers (then ``name`` must be None); a single value is named
    ``name``, else ``default``.
    """
    if isinstance(predictions, Mapping):
        if name is not None:
            raise ValueError(
                f"name must be None when {what} is a dict: its keys name the "
                "classifiers."
            )
        if len(predictions) == 0:
            raise ValueError(
                f"{what} is an empty dict: pass at least one classifier, e.g. "
                "{'model': P}."
            )
        named = {str(key): value for key, value in predictions.items()}
        if len(named) != len(predictions):
            raise ValueError(
                f"{what} has keys that are equal as strings ({list(predictions)}); "
                "each classifier needs a distinct name (unique names index the "
                "results)."
            )
        return named
    return {default if name is None else str(name): predictions}
