"""The metric table as text cells and as HTML: value and interval in one cell.

A report table of :func:`~sklearn_hcal.metrics.human_calibration_report`
has a column per metric ``m``, followed by ``m_low`` and ``m_high`` when
bootstrapped; here each cell reads ``value [low, high]`` with a fixed number
of decimals (as the command line prints it), and the best value of each
column -- by the registry's direction -- is marked.

In HTML a table wider than a page is cut into blocks of consecutive columns,
each repeating the row names (as the command line does in a narrow
terminal): the page has no script to measure text, so each column's width
is estimated from its longest text in a wide font (:data:`CHAR_PX`) and the
blocks are sized for :data:`PAGE_PX`. Every text that reaches the page is
escaped.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np
import pandas as pd

from ._legend import ARROWS, direction, metric_of

__all__ = [
    "CHAR_PX",
    "PAGE_PX",
    "best_mask",
    "cell_texts",
    "column_blocks",
    "format_number",
    "metric_columns",
    "table_html",
]

#: The width a block of columns may take: a 1280-px window less the page's
#: margins and a scrollbar (1249 px), with room for fonts wider than measured.
PAGE_PX = 1150
#: Width of a character of the table at 16 px in DejaVu Sans, the widest of
#: the common sans-serif fonts (measured in Chromium: 8.5 px for digits,
#: 9 px for the letters of a header), and the padding and border of a cell.
CHAR_PX, CELL_PAD_PX = 9.0, 22.0
#: The interval's line is set at 0.85em.
_CI_SCALE = 0.85


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
    # read and filled as arrays: a DataFrame column at a time (each copying
    # the table's attrs) cost more than computing the report's table, 6 ms
    # for 16 columns
    try:
        numbers = table[columns].to_numpy(dtype=float)
    except (TypeError, ValueError):  # text in a column: no value there
        numbers = np.column_stack(
            [pd.to_numeric(table[c], errors="coerce").to_numpy(float) for c in columns]
        )
    mask = np.zeros((len(table), len(columns)), dtype=bool)
    for j, column in enumerate(columns):
        way = direction(metric_of(column, aliases))
        values = numbers[:, j]
        defined = ~np.isnan(values)
        if way is None or defined.sum() < 2:
            continue
        best = values[defined].max() if way == "higher" else values[defined].min()
        mask[:, j] = defined & np.isclose(values, best, rtol=1e-12, atol=0.0)
    return pd.DataFrame(mask, index=table.index, columns=columns)


def _longest_word(text: str) -> int:
    return max((len(word) for word in str(text).split()), default=0)


def _column_px(column, parts, best) -> float:
    """Estimated width of a metric column: its longest line, padded.

    The header breaks after each underscore (``<wbr>``) and keeps its arrow
    on the last piece; a best value carries `` ★``; the interval is smaller.
    """
    pieces = str(column).split("_")
    header = max(len(p) + 1 for p in pieces[:-1]) if len(pieces) > 1 else 0
    header = max(header, len(pieces[-1]) + 2)
    value = max((len(v) + 2 * b for (v, _), b in zip(parts, best)), default=0)
    interval = max((len(ci) for _, ci in parts if ci is not None), default=0)
    return CHAR_PX * max(header, value, _CI_SCALE * interval) + CELL_PAD_PX


def column_blocks(widths, first: float, page: float = PAGE_PX) -> list:
    """Consecutive columns in as few blocks as fit ``page``, evenly filled.

    ``widths`` are the columns' widths and ``first`` that of the row names,
    repeated in every block. The number of blocks is the fewest in which
    each block fits (a column wider than the page gets a block of its own);
    the blocks then share the columns so that the widest is as narrow as
    possible, rather than a full block and a last one of two columns.

    Examples
    --------
    >>> from sklearn_hcal.report._table import column_blocks
    >>> column_blocks([100] * 5, 50, page=400)  # 3 fit; 5 in two blocks
    [[0, 1, 2], [3, 4]]
    >>> column_blocks([100] * 16, 100, page=1150)  # 10 fit: 8 and 8
    [[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]
    """
    widths = [float(w) for w in widths]

    def split(limit: float) -> list:
        blocks, used = [[]], first
        for j, w in enumerate(widths):
            if blocks[-1] and used + w > limit:
                blocks.append([])
                used = first
            blocks[-1].append(j)
            used += w
        return blocks

    if not widths:
        return [[]]
    n_blocks = len(split(page))
    low, high = first + max(widths), max(page, first + max(widths))
    for _ in range(40):  # bisect the narrowest limit giving n_blocks blocks
        mid = (low + high) / 2
        if len(split(mid)) <= n_blocks:
            high = mid
        else:
            low = mid
    return split(high)


def _header_cell(column, aliases, links: bool) -> str:
    metric = metric_of(column, aliases)
    arrow, words = ARROWS[direction(metric)]
    # a long name may break after an underscore: disagreement_ / sq_loss
    name = escape(str(column)).replace("_", "_<wbr>")
    if links:
        name = f'<a href="#legend-{escape(str(column))}">{name}</a>'
    tip = words if metric is None else f"{metric.description} ({words})"
    return (
        f'<th scope="col" title="{escape(tip)}">{name}'
        f' <span class="arrow" aria-label="{escape(words)}">{escape(arrow)}</span>'
        "</th>"
    )


def _value_cell(value: str, interval, best: bool) -> str:
    # The value, then its interval on a line of its own: one cell, and a
    # table of many metrics stays narrow enough to read.
    ci = "" if interval is None else f'<br><span class="ci">{escape(interval)}</span>'
    if best:
        return (
            '<td class="best" title="best of the column">'
            f"<strong>{escape(value)}</strong> ★{ci}</td>"
        )
    return f"<td>{escape(value)}{ci}</td>"


def table_html(
    table: pd.DataFrame,
    *,
    digits: int = 4,
    aliases=None,
    caption: str | None = None,
    links: bool = True,
    page_px: float = PAGE_PX,
) -> str:
    """The metric table as HTML tables (no script, no style attribute).

    Headers carry the direction arrow and the metric's description as a
    tooltip (and, with ``links``, a link to its legend row); the best cell of
    each column is bold with a ``★``. A table wider than ``page_px`` is cut
    into blocks of consecutive columns (:func:`column_blocks`), each a
    ``<table class="metrics">`` repeating the row names; the blocks sit side
    by side where the window is wide enough. The caption follows the last.
    """
    columns = metric_columns(table)
    parts = _cell_parts(table, columns, digits)
    best = best_mask(table, aliases).to_numpy()
    index_name = table.index.name or ""
    rows = [escape(str(row)) for row in table.index]
    first = CHAR_PX * max(
        [_longest_word(index_name)] + [_longest_word(r) for r in table.index]
    )
    widths = [
        _column_px(c, [p[j] for p in parts], best[:, j]) for j, c in enumerate(columns)
    ]
    blocks = []
    for block in column_blocks(widths, first + CELL_PAD_PX, page_px):
        head = [f'<th scope="col">{escape(str(index_name))}</th>']
        head += [_header_cell(columns[j], aliases, links) for j in block]
        body = [
            f'<tr><th scope="row">{row}</th>'
            + "".join(_value_cell(*parts[i][j], best[i, j]) for j in block)
            + "</tr>"
            for i, row in enumerate(rows)
        ]
        blocks.append(
            f'<div class="scroll"><table class="metrics">'
            f"<thead><tr>{''.join(head)}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>"
        )
    cap = f'<p class="caption">{escape(caption)}</p>' if caption else ""
    return f'<div class="metric-blocks">{"".join(blocks)}</div>{cap}'


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
