"""The metric registry: every metric declared once, next to its kernel.

Why one module: the declarations' types (``Stats``, ``OfficialRounding``,
``Metric``) and the one registry that holds them; some 200 lines are code,
the rest documents each field a metric module declares.

A metric module ends with ``register(Metric(...))`` declarations (see the end
of ``_distribution.py``). Everything that lists metrics derives from them:

* the scorers of :mod:`sklearn_hcal.metrics._scorer` (names, signs, which go
  into ``HUMAN_SCORERS``);
* the columns of :func:`~sklearn_hcal.metrics.human_calibration_report` and
  :func:`~sklearn_hcal.metrics.metrics_by_agreement` (names, default columns
  and their order, what the labels must provide), computed by the engine of
  :mod:`sklearn_hcal.metrics._engine` from the declared hooks;
* the ``hcal evaluate --metrics`` names and the command line's headers;
* the metric table of the documentation (``docs/conf.py`` writes it from
  :func:`metric_table`);
* how the official LeWiDi scorer rounds each of its metrics
  (:class:`OfficialRounding`, applied by ``hcal evaluate
  --official-rounding``): a field of the declaration, or, for the LeWiDi
  metrics that are plain functions rather than report columns (multi-label,
  per-annotator), :func:`declare_official_rounding` beside the function.

A metric is computed by one of two kinds of hooks, both written with the
kernels of its module:

``per_item(block, **kwargs)``
    For a mean over items: one value per item of a block of rows (a
    :class:`~sklearn_hcal._validation.Block` with ``Y``, ``n``, ``P``,
    ``p_hat``, and, in the report, ``mu``, ``valid`` and ``phi``), or a pair
    ``(numerator, denominator)`` for a ratio of sums (the metric is then
    ``Σ num / Σ den``).

``stats`` + ``value``
    For a binned metric: ``stats`` is a :class:`Stats`, a group of
    sufficient statistics shared by several metrics (e.g. Mimori et al.'s CL,
    CE and DL), and ``value(terms, **kwargs)`` reads the metric from the dict
    that the group's ``finish`` returns.

``kwargs`` are the metric function's keyword arguments (its defaults, the
declaration's fixed ``kwargs``, then the report's ``metric_params``), so a
hook never repeats a default.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ..utils._compat import get_parameter_constraints, validate_parameter_constraints

__all__ = [
    "Metric",
    "OfficialRounding",
    "Stats",
    "declare_official_rounding",
    "exact_round",
    "get_metric",
    "metric_table",
    "metrics",
    "official_rounding",
    "official_rounding_rules",
    "register",
]

#: Modules whose declarations fill the registry (a new metric module adds its
#: name here; a metric added to one of them needs nothing else).
METRIC_MODULES = (
    "_distribution",
    "_majority",
    "_mimori",
    "_disagreement",
    "_hlv",
    "_ordinal",
)

#: Modules declaring the official rounding of LeWiDi metrics that are plain
#: functions, not report columns (:func:`declare_official_rounding`).
ROUNDING_MODULES = ("_multilabel", "_annotators")

#: What a metric needs from the human labels, with the words used in errors.
#: Only metrics that any label histogram supports ("distribution", "counts")
#: are in ``HUMAN_SCORERS``: the others are undefined on some data
#: ("pairs", "variation") or meaningful only on some ("ordered").
REQUIREMENTS = {
    "distribution": "any human labels (counts or probability rows)",
    "counts": "integer label counts (it needs the number of annotations n_i)",
    "pairs": "integer label counts with at least one item of n_i >= 2 annotations",
    "ordered": "classes on an ordered scale (the column order, or order=)",
    "variation": "human labels that are not unanimous on every item (with one "
    "label per item every human entropy is 0)",
}

# Arguments of a metric function that are data, never metric parameters.
_DATA_ARGS = {"counts", "sample_weight", "labels"}


@dataclass(frozen=True)
class Stats:
    """A group of binned metrics that share their sufficient statistics.

    Parameters
    ----------
    name : str
        Identifies the group (metrics of the same group and the same
        ``params`` values are computed once).
    cells : callable
        ``cells(block, **params) -> (cell, values)``: the per-item cells and
        statistics of a block of rows (see :mod:`sklearn_hcal.metrics._cells`).
    n_cells : callable
        ``n_cells(n_classes, **params) -> (n_slots, width)``; the group has
        ``n_slots * width`` cells, slot-major.
    finish : callable
        ``finish(sums, n_samples, **params) -> dict``: the terms of the group
        from the ``(..., n_stats, n_cells)`` sums of all items; leading axes
        (bootstrap resamples) carry through, ``n_samples`` has their shape.
    params : tuple of str
        The keyword arguments that change the statistics (e.g. ``n_bins``).
    sums : callable, default=None
        ``sums(block, **params) -> ndarray of shape (n_stats, n_cells)``:
        the sums of ``cells`` over a block (unweighted) without writing out
        every entry's statistics, for a group whose kernel has a faster
        reduction (the class-wise squared-loss bins). The engine uses it for
        the report's sums; the bootstrap weights ``cells``. None: the
        engine reduces ``cells``.
    """

    name: str
    cells: Callable
    n_cells: Callable
    finish: Callable
    params: tuple[str, ...] = ()
    sums: Callable | None = None


#: The levels of a LeWiDi metric, innermost first: the value of one label of
#: an item (multi-label sets; per-annotator: the label's error rate over the
#: item's annotators), of one item, and the mean over the items.
ROUNDING_LEVELS = ("label", "item", "mean")


@dataclass(frozen=True)
class OfficialRounding:
    """How the official LeWiDi scorer rounds one metric.

    LeWiDi's metrics are nested means -- per label of an item (multi-label
    sets), per item, then over the items -- and each function of the LeWiDi
    2025 evaluation notebook (``Evaluation_LeWiDi_2025_Metrics.ipynb``)
    rounds some of those levels to 5 decimals and not others: ``average_MD``
    each item and the mean, ``average_WS`` only the mean, ``error_rate`` each
    item but not the mean. The leaderboard's numbers follow from these rules,
    so each metric declares its own.

    Parameters
    ----------
    function : str
        The official function (``"average_WS"``), for the documentation.
    rounds : tuple of {"label", "item", "mean"}
        The levels rounded (``ROUNDING_LEVELS``); ``()`` rounds nothing.
    multilabel : bool, default=False
        Whether the rule is that of the multi-label version of the metric
        (VariErrNLI), which has a ``"label"`` level.
    decimals : int, default=5
        Decimals of the rounded levels.

    Examples
    --------
    >>> from sklearn_hcal.metrics._registry import OfficialRounding
    >>> rule = OfficialRounding("average_WS", rounds=("mean",))
    >>> rule.apply("item", [0.123456]), rule.apply("mean", 0.123456)
    ([0.123456], 0.12346)
    """

    function: str
    rounds: tuple[str, ...] = ()
    multilabel: bool = False
    decimals: int = 5

    def __post_init__(self):
        unknown = sorted(set(self.rounds) - set(ROUNDING_LEVELS))
        if unknown:
            raise ValueError(f"{self.function}: unknown rounding levels {unknown}.")
        if "label" in self.rounds and not self.multilabel:
            raise ValueError(f"{self.function}: only multi-label metrics have labels.")

    def apply(self, level: str, values):
        """``values`` rounded to ``decimals`` when ``level`` is rounded, else
        returned unchanged (a float for the ``"mean"`` level)."""
        if level not in ROUNDING_LEVELS:
            raise ValueError(f"unknown rounding level {level!r}.")
        if level not in self.rounds:
            return values
        return exact_round(values, self.decimals)


def exact_round(values, decimals: int):
    """Python's ``round(v, decimals)`` of every value, vectorised.

    ``np.round`` scales by ``10**decimals`` and rounds the product, whose own
    rounding error moves values within one ulp of a half (``0.123455`` after
    a few additions) to the other side; Python's ``round`` is correctly
    rounded on the binary value, as the LeWiDi notebook rounds. The few
    values that close to a half are rounded by Python, the rest by numpy.

    Examples
    --------
    >>> from sklearn_hcal.metrics._registry import exact_round
    >>> x = 0.1 + 0.2 + 0.000005  # binary value just below 0.300005
    >>> float(exact_round([x], 5)[0]) == round(x, 5)
    True
    """
    if np.ndim(values) == 0:
        return round(float(values), decimals)
    x = np.asarray(values, dtype=np.float64)
    out = np.round(x, decimals)
    scaled = x * 10.0**decimals
    near = np.abs(np.abs(scaled - np.floor(scaled)) - 0.5) < 1e-6
    near &= np.isfinite(x)
    if near.any():
        out[near] = [round(float(v), decimals) for v in x[near]]
    return out


@dataclass(frozen=True)
class Metric:
    """The declaration of one metric (one report column, scorer, CLI name).

    Parameters
    ----------
    name : str
        Long name: the metric function's name, or for a variant with fixed
        ``kwargs`` a name of its own (e.g. ``"epistemic_loss_plugin"``).
    column : str
        Short name: the report column and the command line's header.
    function : callable or None
        The public metric function ``f(y_true, y_pred, *, counts=None, ...)``
        the column reproduces; None for a column without one (it then has no
        scorer).
    greater_is_better : bool
        Sign of the scorer; also shown in the documentation.
    description : str
        One line for tables.
    source : str
        Paper and equation.
    per_item, stats, value : callable, Stats, callable
        The hooks (see the module notes): exactly one of ``per_item`` and
        ``stats`` (with ``value``).
    kwargs : mapping
        Fixed keyword arguments of ``function`` (variants).
    requires : {"distribution", "counts", "pairs", "ordered", "variation"}
        What the human labels must provide (``REQUIREMENTS``). "ordered" is
        the user's word (asking for the metric declares the classes
        ordered); the others are checked on the labels.
    response : {"proba", "disagreement"}
        What the metric compares with the labels: class probabilities, or a
        predicted disagreement ``φ`` (1-D).
    scorer : str or None
        Scorer name; by default ``name`` for a score and ``"neg_" + name``
        otherwise. ``False`` for no scorer (a signed error has no better side).
    order : int or None
        Position among the report's default columns (sorted by it); None for
        a column computed only when asked for.
    bounds : tuple of (float or None, float or None), default=(None, None)
        The range every value lies in, whatever the data (e.g. ``(0, 1)`` for
        an accuracy, ``(0, None)`` for a divergence); the report clips
        bootstrap intervals to it. Left open for the debiased estimators,
        which can be negative.
    official_rounding : OfficialRounding or tuple of OfficialRounding, default=()
        How the official LeWiDi scorer rounds the metric (one rule, or one
        per variant: single-label and multi-label); empty for a metric no
        official scorer computes.
    proper : bool or None, default=None
        Whether the metric is a (strictly) proper scoring rule for the human
        distribution: its expected value over the annotations, drawn from
        the true label distribution ``q*`` of each item, is best only at the
        prediction ``q = q*`` (for ``response="disagreement"``: at the true
        disagreement probability). Only such a metric can be trusted to
        *select* models -- with a few labels per item, ``p̂`` is noisy, and a
        metric that is not proper (JSD, DistCE/TVD, EntCE, ...) prefers
        predictions sharper than ``q*``, e.g. it ranks hyperparameters
        wrongly in a grid search. False for metrics that are not proper;
        None where the notion does not apply (a signed error, a quantity
        that does not depend on the prediction).
    """

    name: str
    column: str
    function: Callable | None
    greater_is_better: bool
    description: str
    source: str
    per_item: Callable | None = None
    stats: Stats | None = None
    value: Callable | None = None
    kwargs: Mapping = field(default_factory=dict)
    requires: str = "distribution"
    response: str = "proba"
    scorer: str | bool | None = None
    order: int | None = None
    bounds: tuple = (None, None)
    proper: bool | None = None
    official_rounding: OfficialRounding | tuple = ()

    def __post_init__(self):
        if (self.per_item is None) == (self.stats is None):
            raise ValueError(f"{self.name}: declare exactly one of per_item, stats.")
        if self.stats is not None and self.value is None:
            raise ValueError(f"{self.name}: a stats metric needs value=.")
        if self.requires not in REQUIREMENTS:
            raise ValueError(f"{self.name}: unknown requirement {self.requires!r}.")
        if self.response not in ("proba", "disagreement"):
            raise ValueError(f"{self.name}: unknown response {self.response!r}.")
        object.__setattr__(self, "kwargs", MappingProxyType(dict(self.kwargs)))
        rules = self.official_rounding
        if isinstance(rules, OfficialRounding):
            rules = (rules,)
        object.__setattr__(self, "official_rounding", tuple(rules))

    @property
    def direction(self) -> str | None:
        """``"higher"`` or ``"lower"`` (which side is better), or None for a
        metric declared without a scorer (a signed error has no better side).

        The one rule that the command line's legend, the HTML report and the
        notebook display print."""
        if self.scorer is False:
            return None
        return "higher" if self.greater_is_better else "lower"

    @property
    def scorer_name(self) -> str | None:
        """The scorer's name, or None when the metric has no scorer."""
        if self.function is None or self.scorer is False:
            return None
        if self.scorer:
            return self.scorer
        return self.name if self.greater_is_better else f"neg_{self.name}"

    @property
    def in_human_scorers(self) -> bool:
        """Whether ``HUMAN_SCORERS`` holds it: a metric function at its
        defaults that any label histogram supports (not one that needs pairs
        of annotators, labels that are not all unanimous, or ordered
        classes)."""
        return (
            self.scorer_name is not None
            and not self.kwargs
            and self.requires in ("distribution", "counts")
        )

    def parameters(self) -> dict:
        """``{name: default}`` of the keyword arguments ``metric_params`` may set."""
        if self.function is None:
            return dict(self.kwargs)
        if self.function not in _SIGNATURES:
            _SIGNATURES[self.function] = inspect.signature(self.function)
        sig = _SIGNATURES[self.function]
        names = list(sig.parameters)[2:]
        out = {
            p: sig.parameters[p].default
            for p in names
            if p not in _DATA_ARGS
            and sig.parameters[p].default is not inspect.Parameter.empty
        }
        out.update(self.kwargs)
        return out

    def resolve_kwargs(self, params: Mapping | None = None) -> dict:
        """The keyword arguments of the hooks: defaults, fixed, then ``params``.

        Raises ValueError naming ``metric_params`` for an unknown or invalid
        parameter (validated with the metric function's own constraints).
        """
        kwargs = self.parameters()
        if not params:
            return kwargs
        unknown = sorted(set(params) - set(kwargs))
        if unknown:
            raise ValueError(
                f"metric_params[{self.column!r}] has unknown parameter(s) "
                f"{unknown}; {self.column!r} takes {sorted(kwargs) or 'none'}."
            )
        constraints = get_parameter_constraints(self.function)
        checked = {k: constraints[k] for k in params if k in constraints}
        if checked:
            validate_parameter_constraints(
                checked, dict(params), caller_name=f"metric_params[{self.column!r}]"
            )
        kwargs.update(params)
        return kwargs


_REGISTRY: dict[str, Metric] = {}
_ROUNDINGS: dict[tuple[str, bool], OfficialRounding] = {}
_LOADED = False
_SIGNATURES: dict = {}  # inspect.signature is slow; a report asks many times


def register(metric: Metric) -> Metric:
    """Add a declaration to the registry (names and columns must be new)."""
    for other in _REGISTRY.values():
        taken = {other.name, other.column}
        if metric.name in taken or metric.column in taken:
            raise ValueError(
                f"metric {metric.name!r} / {metric.column!r} clashes with "
                f"{other.name!r} / {other.column!r}."
            )
    _REGISTRY[metric.column] = metric
    declare_official_rounding(metric.name, *metric.official_rounding)
    return metric


def declare_official_rounding(name: str, *rules: OfficialRounding) -> None:
    """Declare how the official LeWiDi scorer rounds the metric ``name``.

    For metric functions that are not report columns (the multi-label and
    per-annotator LeWiDi metrics); a :class:`Metric` declares its rules in
    its ``official_rounding`` field. One rule per variant (single-label,
    multi-label).
    """
    for rule in rules:
        key = (name, rule.multilabel)
        if key in _ROUNDINGS and _ROUNDINGS[key] != rule:
            raise ValueError(f"{name}: two official rounding rules for one variant.")
        _ROUNDINGS[key] = rule


def official_rounding(name: str, *, multilabel: bool = False) -> OfficialRounding:
    """The official rounding rule of the metric function ``name``.

    Raises ValueError when no rule is declared for it (no official scorer
    computes that metric, or that variant).

    Examples
    --------
    >>> from sklearn_hcal.metrics._registry import official_rounding
    >>> official_rounding("wasserstein_distance").rounds
    ('mean',)
    >>> official_rounding("perspectivist_error_rate", multilabel=True).function
    'multilabel_error_rate'
    """
    _load()
    for module in ROUNDING_MODULES:
        importlib.import_module(f"{__package__}.{module}")
    try:
        return _ROUNDINGS[(name, bool(multilabel))]
    except KeyError:
        kind = "multi-label " if multilabel else ""
        raise ValueError(
            f"no official rounding is declared for the {kind}metric {name!r}."
        ) from None


def official_rounding_rules() -> list[tuple[str, OfficialRounding]]:
    """``[(metric function, rule), ...]`` of every declared rule (docs, tests)."""
    official_rounding("manhattan_distance")  # loads every declaring module
    return [(name, rule) for (name, _), rule in _ROUNDINGS.items()]


def _load() -> None:
    global _LOADED
    if not _LOADED:
        for module in METRIC_MODULES:
            importlib.import_module(f"{__package__}.{module}")
        _LOADED = True


def metrics() -> dict[str, Metric]:
    """``{column: Metric}`` of every declared metric, in declaration order."""
    _load()
    return dict(_REGISTRY)


def default_columns() -> list[str]:
    """The report's default columns, in their declared order."""
    ranked = [m for m in metrics().values() if m.order is not None]
    return [m.column for m in sorted(ranked, key=lambda m: m.order)]


def get_metric(name: str, *, argument: str = "metrics") -> Metric:
    """The declaration of ``name``: a column, a long name or a scorer name.

    Raises ValueError naming ``argument`` and listing the valid names.
    """
    registry = metrics()
    if isinstance(name, str):
        if name in registry:
            return registry[name]
        for metric in registry.values():
            if name in (metric.name, metric.scorer_name):
                return metric
    raise ValueError(
        f"{argument} contains {name!r}, which is not a report metric of "
        f"sklearn_hcal.metrics; valid names: {sorted(registry)} (their long "
        "names and scorer names are accepted too)."
    )


def metric_table() -> list[dict]:
    """One row per metric, for the documentation and ``hcal evaluate --help``.

    Returns
    -------
    rows : list of dict
        Keys ``column``, ``name``, ``function`` (the function's name or
        None), ``kwargs``, ``scorer``, ``greater_is_better``, ``requires``,
        ``default`` (a default report column), ``proper`` (a proper scoring
        rule for the human distribution: True, False or None, see
        :class:`Metric`), ``description``, ``source``.

    Examples
    --------
    >>> from sklearn_hcal.metrics._registry import metric_table
    >>> row = next(r for r in metric_table() if r["column"] == "kl")
    >>> row["name"], row["scorer"]
    ('kl_divergence', 'neg_kl_divergence')
    """
    defaults = set(default_columns())
    return [
        {
            "column": m.column,
            "name": m.name,
            "function": None if m.function is None else m.function.__name__,
            "kwargs": dict(m.kwargs),
            "scorer": m.scorer_name,
            "greater_is_better": m.greater_is_better,
            "requires": m.requires,
            "default": m.column in defaults,
            "proper": m.proper,
            "description": m.description,
            "source": m.source,
        }
        for m in metrics().values()
    ]
