"""The metric table as text cells and as HTML: value and interval in one cell.

A report table of :func:`~sklearn_hcal.metrics.human_calibration_report`
has a column per metric ``m``, followed by ``m_low`` and ``m_high`` when
bootstrapped; here each cell reads ``value [low, high]`` with a fixed number
of decimals (as the command line prints it), and the best value of each
column -- by the registry's direction -- is marked.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np
import pandas as pd

from ._legend import ARROWS, direction, metric_of

__all__ = ["metric_columns", "format_number", "cell_texts", "best_mask", "table_html"]


def metric_columns(table: pd.DataFrame) -> list:
    """The columns that are not interval bounds of another column."""
    cols = set(map(str, table.columns))
    return [
        c
        for c in table.columns
        if not (
            (str(c).endswith("_low") and str(c)[:-4] in cols)
            or (str(c).endswith("_high") and str(c)[:-5] in cols)
        )
    ]


def format_number(value, digits: int) -> str:
    """A number with ``digits`` decimals; ``NA`` when missing."""
    if value is None or value is pd.NA:
        return "NA"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(value):
        return "NA"
    return f"{value:.{digits}f}"


def _interval(table, column, row, digits):
    lo, hi = f"{column}_low", f"{column}_high"
    if lo not in table.columns or hi not in table.columns:
        return None
    low, high = table.at[row, lo], table.at[row, hi]
    if pd.isna(low) or pd.isna(high):
        return None
    return f"[{format_number(low, digits)}, {format_number(high, digits)}]"


def _cell_parts(table, columns, digits) -> list:
    """``[[(value, interval or None), ...] per column] per row]`` as text."""
    rows = []
    for i, row in enumerate(table.index):
        parts = []
        for column in columns:
            text = format_number(table.iloc[i, table.columns.get_loc(column)], digits)
            interval = _interval(table, column, row, digits) if text != "NA" else None
            parts.append((text, interval))
        rows.append(parts)
    return rows


def cell_texts(table: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """``value [low, high]`` per metric column (``value`` without a bootstrap).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.report._table import cell_texts
    >>> t = pd.DataFrame({"jsd": [0.12345], "jsd_low": [0.1], "jsd_high": [0.2]})
    >>> cell_texts(t, digits=3).iloc[0, 0]
    '0.123 [0.100, 0.200]'
    """
    columns = metric_columns(table)
    texts = [
        [value if ci is None else f"{value} {ci}" for value, ci in row]
        for row in _cell_parts(table, columns, digits)
    ]
    return pd.DataFrame(texts, index=table.index, columns=columns, dtype=object)


def best_mask(table: pd.DataFrame, aliases=None) -> pd.DataFrame:
    """Whether each value is the best of its column (ties all marked).

    Only columns with a direction and at least two defined values are
    marked: a single model is not "best" of anything.
    """
    columns = metric_columns(table)
    mask = pd.DataFrame(False, index=table.index, columns=columns)
    for column in columns:
        way = direction(metric_of(column, aliases))
        values = pd.to_numeric(table[column], errors="coerce").to_numpy(float)
        defined = ~np.isnan(values)
        if way is None or defined.sum() < 2:
            continue
        best = values[defined].max() if way == "higher" else values[defined].min()
        hit = defined & np.isclose(values, best, rtol=1e-12, atol=0.0)
        mask[column] = hit
    return mask


def table_html(
    table: pd.DataFrame,
    *,
    digits: int = 4,
    aliases=None,
    caption: str | None = None,
    links: bool = True,
) -> str:
    """The metric table as an HTML ``<table>`` (no script, no style attribute).

    Headers carry the direction arrow and the metric's description as a
    tooltip (and, with ``links``, a link to its legend row); the best cell of
    each column is bold with a ``★``.
    """
    columns = metric_columns(table)
    parts = _cell_parts(table, columns, digits)
    best = best_mask(table, aliases).to_numpy()
    index_name = table.index.name or ""
    head = [f'<th scope="col">{escape(str(index_name))}</th>']
    for column in columns:
        metric = metric_of(column, aliases)
        arrow, words = ARROWS[direction(metric)]
        name = escape(str(column))
        if links:
            name = f'<a href="#legend-{escape(str(column))}">{name}</a>'
        tip = words if metric is None else f"{metric.description} ({words})"
        head.append(
            f'<th scope="col" title="{escape(tip)}">{name}'
            f' <span class="arrow" aria-label="{words}">{arrow}</span></th>'
        )
    body = []
    for i, row in enumerate(table.index):
        cells = [f'<th scope="row">{escape(str(row))}</th>']
        for j, (value, interval) in enumerate(parts[i]):
            # The value, then its interval on a line of its own: one cell, and
            # a table of many metrics stays narrow enough to read.
            ci = "" if interval is None else f'<br><span class="ci">{interval}</span>'
            if best[i, j]:
                cells.append(
                    f'<td class="best" title="best of the column">'
                    f"<strong>{escape(value)}</strong> ★{ci}</td>"
                )
            else:
                cells.append(f"<td>{escape(value)}{ci}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return (
        f'<div class="scroll"><table class="metrics">{cap}'
        f"<thead><tr>{''.join(head)}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def plain_table_html(frame: pd.DataFrame, *, digits: int = 4) -> str:
    """Any small DataFrame (e.g. the per-annotator table) as an HTML table."""
    index_names = [n if n is not None else "" for n in frame.index.names]
    head = "".join(f'<th scope="col">{escape(str(n))}</th>' for n in index_names)
    head += "".join(f'<th scope="col">{escape(str(c))}</th>' for c in frame.columns)
    body = []
    for key, row in zip(frame.index, frame.itertuples(index=False)):
        keys = key if isinstance(key, tuple) else (key,)
        cells = "".join(f'<th scope="row">{escape(str(k))}</th>' for k in keys)
        cells += "".join(f"<td>{escape(format_number(v, digits))}</td>" for v in row)
        body.append(f"<tr>{cells}</tr>")
    return (
        f'<table class="plain"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )
