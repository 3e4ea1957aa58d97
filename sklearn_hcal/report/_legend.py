"""The legend of a report, generated from the metric registry.

One row per metric column: its direction (``greater_is_better``, or no
better side for a metric without a scorer, e.g. a signed error), whether it
is a proper score (the registry's ``proper``, unknown when not declared),
what it measures (``description``) and where it comes from (``source``). A
metric added to the registry appears here without another edit.
"""

from __future__ import annotations

from ..metrics._shared import get_metric

__all__ = ["metric_of", "direction", "legend_rows"]

#: ``direction -> (arrow, words)``.
ARROWS = {
    "higher": ("↑", "higher is better"),
    "lower": ("↓", "lower is better"),
    None: ("–", "no better side"),
}
PROPER = {True: "yes", False: "no", None: "–"}


def metric_of(column: str, aliases=None):
    """The registry declaration a column reports, or None.

    ``column`` may be a short column name, a long name or a scorer name (the
    command line's ``--names long`` tables); ``aliases`` maps other columns
    to the metric they report (e.g. ``{"el_prior": "el"}``).
    """
    name = (aliases or {}).get(column, column)
    try:
        return get_metric(str(name))
    except ValueError:
        return None


def direction(metric) -> str | None:
    """``"higher"``, ``"lower"``, or None (no metric, or no better side)."""
    return None if metric is None else metric.direction


def legend_rows(columns, aliases=None) -> list[dict]:
    """One dict per column: ``column``, ``metric`` (its long name or None),
    ``arrow``, ``direction`` (words), ``proper`` (``"yes"``, ``"no"`` or
    ``"–"``), ``description`` and ``source``."""
    rows = []
    for column in columns:
        metric = metric_of(column, aliases)
        arrow, words = ARROWS[direction(metric)]
        if metric is None:
            description = "not a metric of the registry"
            source, proper, name = "", PROPER[None], None
        else:
            description, source, name = metric.description, metric.source, metric.name
            proper = PROPER[getattr(metric, "proper", None)]
            if column in (aliases or {}):
                description = f"{description} (as {metric.column})"
        rows.append(
            {
                "column": str(column),
                "metric": name,
                "arrow": arrow,
                "direction": words,
                "proper": proper,
                "description": description,
                "source": source,
            }
        )
    return rows
