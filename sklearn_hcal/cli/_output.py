"""Tables for people and programs: Markdown, CSV, JSON, wide, long, transposed.

The command line prints :func:`~sklearn_hcal.metrics.human_calibration_report`
tables (one row per prediction, a column per metric, ``m_low``/``m_high``
interval bounds after each metric ``m`` when bootstrapped) in the layout and
format asked for.
"""

from __future__ import annotations

import json
import math

import pandas as pd

__all__ = [
    "format_value",
    "markdown_table",
    "render",
]


def format_value(value, digits: int = 4) -> str:
    """A number for a table cell; ``NA`` for missing values."""
    if value is None:
        return "NA"
    if isinstance(value, str):
        return value
    value = float(value)
    if math.isnan(value):
        return "NA"
    return f"{value:.{digits}f}"


def markdown_table(frame, columns=None, *, digits: int = 4, index_name=None) -> str:
    """A GitHub-flavoured Markdown table of a report-like DataFrame.

    When a column ``m`` is followed by ``m_low`` and ``m_high`` (the layout of
    :func:`~sklearn_hcal.metrics.human_calibration_report` with a bootstrap),
    the cell reads ``value [low, high]``. No dependency beyond pandas (which
    ``DataFrame.to_markdown`` would add: ``tabulate``).

    Parameters
    ----------
    frame : DataFrame
        Rows are printed in order; the index is the first column.
    columns : list of (str, str), default=None
        ``(column, header)`` pairs to print; default: every column that is not
        an interval bound, with its own name as header.
    digits : int, default=4
        Decimals.
    index_name : str, default=None
        Header of the index column (default: the index name).

    Returns
    -------
    table : str
        Lines joined by ``\\n``, without a trailing newline.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.cli._output import markdown_table
    >>> df = pd.DataFrame({"jsd": [0.1234, 0.2], "jsd_low": [0.1, 0.15],
    ...                    "jsd_high": [0.15, 0.25]},
    ...                   index=pd.Index(["a", "b"], name="classifier"))
    >>> print(markdown_table(df, [("jsd", "JSD")], digits=2))
    | classifier | JSD |
    |---|---|
    | a | 0.12 [0.10, 0.15] |
    | b | 0.20 [0.15, 0.25] |
    """
    if columns is None:
        columns = [
            (c, c)
            for c in frame.columns
            if not (
                (str(c).endswith("_low") and str(c)[:-4] in frame.columns)
                or (str(c).endswith("_high") and str(c)[:-5] in frame.columns)
            )
        ]
    head = index_name or frame.index.name or ""
    lines = [
        "| " + " | ".join([head] + [h for _, h in columns]) + " |",
        "|" + "---|" * (len(columns) + 1),
    ]
    for label, row in frame.iterrows():
        cells = [str(label)]
        for col, _ in columns:
            value = row[col] if col in frame.columns else None
            cell = format_value(value, digits)
            lo, hi = f"{col}_low", f"{col}_high"
            if cell != "NA" and lo in frame.columns and hi in frame.columns:
                if not (math.isnan(float(row[lo])) or math.isnan(float(row[hi]))):
                    cell += (
                        f" [{format_value(row[lo], digits)}, "
                        f"{format_value(row[hi], digits)}]"
                    )
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _metrics_of(report) -> list[str]:
    return [
        c
        for c in report.columns
        if not (
            (str(c).endswith("_low") and str(c)[:-4] in report.columns)
            or (str(c).endswith("_high") and str(c)[:-5] in report.columns)
        )
    ]


def long_table(report) -> pd.DataFrame:
    """One row per (prediction, metric): ``value`` (and ``low``, ``high``)."""
    rows = []
    for name, row in report.iterrows():
        for m in _metrics_of(report):
            entry = {report.index.name or "prediction": name, "metric": m}
            entry["value"] = row[m]
            if f"{m}_low" in report.columns:
                entry["low"], entry["high"] = row[f"{m}_low"], row[f"{m}_high"]
            rows.append(entry)
    return pd.DataFrame(rows)


def transposed_table(report, columns=None, *, index_name: str = "metric"):
    """One row per metric, one column per prediction (and its bounds).

    ``columns`` are ``(column, header)`` pairs (default: every metric column,
    named as it is); the headers name the rows.
    """
    if columns is None:
        columns = [(m, str(m)) for m in _metrics_of(report)]
    names = [c for c, _ in columns]
    bounds = any(f"{c}_low" in report.columns for c in names)
    out = {}
    for name, row in report.iterrows():
        out[str(name)] = [row[c] for c in names]
        if bounds:
            for bound in ("low", "high"):
                out[f"{name}_{bound}"] = [row.get(f"{c}_{bound}") for c in names]
    return pd.DataFrame(out, index=pd.Index([h for _, h in columns], name=index_name))


def _json_number(value):
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def to_json(report) -> str:
    """``{prediction: {metric: value}}``; with intervals each value is
    ``{"value": v, "low": l, "high": h}``."""
    with_ci = any(str(c).endswith("_low") for c in report.columns)
    out = {}
    for row, values in report.iterrows():
        entry = {}
        for m in _metrics_of(report):
            if with_ci:
                entry[m] = {
                    "value": _json_number(values[m]),
                    "low": _json_number(values[f"{m}_low"]),
                    "high": _json_number(values[f"{m}_high"]),
                }
            else:
                entry[m] = _json_number(values[m])
        out[str(row)] = entry
    return json.dumps(out, indent=2, allow_nan=False)


def render(report, *, fmt: str = "markdown", layout: str = "wide", digits=4) -> str:
    """The report as text: ``fmt`` markdown, csv or json; ``layout`` wide
    (a row per prediction), long (a row per prediction and metric) or
    transposed (a row per metric). JSON is always nested by prediction.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.cli._output import render
    >>> df = pd.DataFrame({"jsd": [0.1, 0.2], "kl": [0.3, 0.4]},
    ...                   index=pd.Index(["a", "b"], name="prediction"))
    >>> print(render(df, layout="transposed", digits=1))
    | metric | a | b |
    |---|---|---|
    | jsd | 0.1 | 0.2 |
    | kl | 0.3 | 0.4 |
    >>> print(render(df, fmt="csv", layout="long"))
    prediction,metric,value
    a,jsd,0.1
    a,kl,0.3
    b,jsd,0.2
    b,kl,0.4
    """
    if fmt == "json":
        return to_json(report)
    if layout == "long":
        table = long_table(report)
        if fmt == "csv":
            return table.to_csv(index=False, float_format="%.10g").rstrip("\n")
        table = table.set_index(table.columns[0])
        cols = [("metric", "metric"), ("value", "value")]
        if "low" in table.columns:
            table = table.rename(columns={"low": "value_low", "high": "value_high"})
        return markdown_table(table, cols, digits=digits)
    if layout == "transposed":
        table = transposed_table(report)
        if fmt == "csv":
            return table.to_csv(float_format="%.10g").rstrip("\n")
        return markdown_table(table, digits=digits)
    if fmt == "csv":
        return report.to_csv(float_format="%.10g").rstrip("\n")
    return markdown_table(report, digits=digits)
