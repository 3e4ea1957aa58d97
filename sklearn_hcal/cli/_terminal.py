"""Tables that fit the terminal, and a legend of the metric names.

What the command line prints for people: a Markdown table no wider than the
terminal (80 columns when the output is not a terminal), and one line per
metric name shown, with its description and whether lower or higher is
better, read from the metric registry (a new metric needs no edit here).
Files and machine formats (CSV, JSON) are never reshaped.

A table wider than the terminal is transposed (one row per metric), and
when that is still too wide, split into blocks of columns that each fit,
every block repeating the row names (as pandas wraps a wide frame).
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import unicodedata

from ._output import _metrics_of, markdown_table, render, transposed_table

__all__ = [
    "display_width",
    "fit_table",
    "legend_lines",
    "metric_legend",
    "render_for_terminal",
    "terminal_width",
]

#: Width when the output is not a terminal (a pipe, a file).
DEFAULT_WIDTH = 80
_NBSP = "\u00a0"


def terminal_width(stream=None) -> int:
    """Columns of the terminal ``stream`` (standard output) is; else 80.

    On a terminal, :func:`shutil.get_terminal_size` (the ``COLUMNS``
    environment variable first, then the terminal's size); otherwise
    (a pipe, a file, a captured stream) ``COLUMNS`` when set, else 80.
    """
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        tty = bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed stream
        tty = False
    if tty:
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else DEFAULT_WIDTH


def display_width(text: str) -> int:
    """Columns ``text`` takes on a terminal (its widest line).

    Combining marks (the hat of ``L̂``) take none, East Asian wide
    characters two.

    Examples
    --------
    >>> from sklearn_hcal.cli._terminal import display_width
    >>> display_width("L̂_sq"), len("L̂_sq")
    (4, 5)
    """

    def line_width(line):
        return sum(
            0
            if unicodedata.combining(c) or unicodedata.category(c) == "Cf"
            else 2
            if unicodedata.east_asian_width(c) in "WF"
            else 1
            for c in line
        )

    return max((line_width(line) for line in text.split("\n")), default=0)


def align_markdown(table: str) -> str:
    """Pad the cells of a Markdown table so its columns line up on a terminal.

    Still Markdown: the first column is left-aligned, the others (numbers)
    right-aligned (``---:``). A table whose rows do not all have the same
    number of cells (a ``|`` inside a name) is returned as it is.

    Examples
    --------
    >>> from sklearn_hcal.cli._terminal import align_markdown
    >>> print(align_markdown("| m | a |\\n|---|---|\\n| jsd | 0.1 |"))
    | m   |   a |
    |:----|----:|
    | jsd | 0.1 |
    """
    lines = table.split("\n")
    if len(lines) < 2 or any(
        not (ln.startswith("| ") and ln.endswith(" |")) for ln in lines[:1] + lines[2:]
    ):
        return table
    body = [line[2:-2].split(" | ") for line in lines[:1] + lines[2:]]
    if len({len(r) for r in body}) != 1 or lines[1].count("|") != len(body[0]) + 1:
        return table
    n = len(body[0])
    widths = [max(3, *(display_width(r[j]) for r in body)) for j in range(n)]

    def pad(cell, j):
        fill = " " * (widths[j] - display_width(cell))
        return cell + fill if j == 0 else fill + cell

    lines = ["| " + " | ".join(pad(c, j) for j, c in enumerate(r)) + " |" for r in body]
    rule = (
        "|"
        + "|".join(
            (":" + "-" * (w + 1)) if j == 0 else ("-" * (w + 1) + ":")
            for j, w in enumerate(widths)
        )
        + "|"
    )
    return "\n".join([lines[0], rule] + lines[1:])


def _table(frame, columns, digits, index_name) -> str:
    return align_markdown(
        markdown_table(frame, columns, digits=digits, index_name=index_name)
    )


def _metric_columns(frame) -> list[tuple[str, str]]:
    return [(str(c), str(c)) for c in _metrics_of(frame)]


def _blocks(frame, columns, width, digits, index_name) -> list[str]:
    """Greedy groups of consecutive columns whose tables fit ``width``."""
    tables, current = [], []
    for col in columns:
        trial = current + [col]
        text = _table(frame, trial, digits, index_name)
        if current and display_width(text) > width:
            tables.append(_table(frame, current, digits, index_name))
            current = [col]
        else:
            current = trial
    tables.append(_table(frame, current, digits, index_name))
    return tables


def fit_table(
    frame,
    columns=None,
    *,
    width: int | None,
    digits: int = 4,
    index_name=None,
    layout: str = "auto",
    transposed_name: str = "metric",
) -> str:
    """A Markdown table of a report-like frame, no wider than ``width``.

    Parameters
    ----------
    frame : DataFrame
        One row per prediction, a column per metric (with ``m_low`` and
        ``m_high`` after ``m`` when bootstrapped).
    columns : list of (str, str), default=None
        ``(column, header)`` pairs; default: every metric column.
    width : int or None
        Maximum line width in terminal columns; None or 0: no limit (the
        table as it is).
    digits : int, default=4
    index_name : str, default=None
        Header of the row names (default: the index name).
    layout : {"auto", "transposed"}, default="auto"
        "auto": as it is when it fits, else transposed when that fits;
        "transposed": one row per metric. Either is then split into blocks
        of columns when still too wide (with "auto", the orientation that
        needs fewer blocks).
    transposed_name : str, default="metric"
        Header of the row names of the transposed table.

    Returns
    -------
    text : str
        One Markdown table, or several separated by a blank line.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.cli._terminal import fit_table
    >>> df = pd.DataFrame({"jsd": [0.1, 0.2], "kl": [0.3, 0.4]},
    ...                   index=pd.Index(["a", "b"], name="prediction"))
    >>> print(fit_table(df, width=80, digits=1))
    | prediction | jsd |  kl |
    |:-----------|----:|----:|
    | a          | 0.1 | 0.3 |
    | b          | 0.2 | 0.4 |
    >>> print(fit_table(df, width=24, digits=1))  # transposed
    | metric |   a |   b |
    |:-------|----:|----:|
    | jsd    | 0.1 | 0.2 |
    | kl     | 0.3 | 0.4 |
    >>> print(fit_table(df, width=16, digits=1))  # and split
    | metric |   a |
    |:-------|----:|
    | jsd    | 0.1 |
    | kl     | 0.3 |
    <BLANKLINE>
    | metric |   b |
    |:-------|----:|
    | jsd    | 0.2 |
    | kl     | 0.4 |
    """
    columns = _metric_columns(frame) if columns is None else list(columns)
    index_name = index_name or frame.index.name or ""
    if layout == "auto":
        wide = _table(frame, columns, digits, index_name)
        if not width or display_width(wide) <= width:
            return wide
    tframe = transposed_table(frame, columns, index_name=transposed_name)
    tcols = [(str(name), str(name)) for name in frame.index]
    tall = _table(tframe, tcols, digits, transposed_name)
    if not width or display_width(tall) <= width:
        return tall
    candidates = [_blocks(tframe, tcols, width, digits, transposed_name)]
    if layout == "auto":
        candidates.append(_blocks(frame, columns, width, digits, index_name))
    best = min(candidates, key=len)  # transposed first: kept on a tie
    return "\n\n".join(best)


def metric_legend(name: str) -> str | None:
    """``"description; lower is better"`` of a registered metric name.

    None for a name the registry does not know (e.g. a column the caller
    computed itself). The words come from the declaration
    (``Metric.description``, ``Metric.greater_is_better``; "no better side"
    for a metric declared without a scorer's sign, a signed error).

    Examples
    --------
    >>> from sklearn_hcal.cli._terminal import metric_legend
    >>> metric_legend("el")
    'epistemic loss (debiased); lower is better'
    >>> metric_legend("jensen_shannon_distance")
    'mean Jensen-Shannon distance (natural log); lower is better'
    >>> metric_legend("ent_ce_signed")
    'signed EntCE: mean H(q) − H(p̂), > 0 under-confident; no better side'
    """
    from ..metrics._shared import get_metric

    try:
        metric = get_metric(name)
    except ValueError:
        return None
    if metric.direction is None:  # a signed error: neither side is better
        return f"{metric.description}; no better side"
    return f"{metric.description}; {metric.direction} is better"


def legend_lines(entries, width: int | None) -> list[str]:
    """``* name: text`` lines (a Markdown list), wrapped to ``width``.

    ``entries`` are ``(name, text)`` pairs (a name None gives ``* text``);
    a line longer than ``width`` goes on, indented, on the next (None or 0:
    no wrapping).
    """
    lines = []
    for name, text in entries:
        if name is None:
            line = f"* {text}"
        else:
            # "lower is better" stays on one line: no-break spaces meanwhile
            head, sep, tail = text.rpartition("; ")
            if sep:
                text = head + sep + tail.replace(" ", _NBSP)
            line = f"* {name}: {text}"
        if width:
            wrapped = textwrap.wrap(
                line, width=width, subsequent_indent="  ", break_on_hyphens=False
            )
        else:
            wrapped = [line]
        lines += [part.replace(_NBSP, " ") for part in wrapped]
    return lines


def render_for_terminal(
    report,
    *,
    fmt: str = "markdown",
    layout: str = "wide",
    digits: int = 4,
    width: int | None = None,
    confidence_level: float = 0.95,
) -> str:
    """What ``hcal evaluate`` prints: :func:`~sklearn_hcal.cli._output.render`,
    with a Markdown table fitted to ``width`` and a legend of its metrics.

    CSV and JSON are machine formats: returned as
    :func:`~sklearn_hcal.cli._output.render` writes them. ``width`` None is
    the terminal's width (:func:`terminal_width`), 0 no limit (a wide
    table stays one line per prediction).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.cli._terminal import render_for_terminal
    >>> df = pd.DataFrame({"jsd": [0.1], "rank_cs": [0.5]},
    ...                   index=pd.Index(["a"], name="prediction"))
    >>> print(render_for_terminal(df, digits=1, width=60))
    | prediction | jsd | rank_cs |
    |:-----------|----:|--------:|
    | a          | 0.1 |     0.5 |
    <BLANKLINE>
    * jsd: mean Jensen-Shannon distance (natural log);
      lower is better
    * rank_cs: RankCS: fraction of items whose class ranking
      matches; higher is better
    """
    if fmt != "markdown":
        return render(report, fmt=fmt, layout=layout, digits=digits)
    if width is None:
        width = terminal_width()
    if layout == "long":
        table = align_markdown(render(report, fmt=fmt, layout=layout, digits=digits))
    else:
        table = fit_table(
            report,
            width=width,
            digits=digits,
            layout="transposed" if layout == "transposed" else "auto",
        )
    entries = []
    for name, _ in _metric_columns(report):
        text = metric_legend(name)
        if text is not None:
            entries.append((name, text))
    if any(str(c).endswith("_low") for c in report.columns):
        entries.append(
            (
                "[low, high]",
                f"{confidence_level:.0%} bootstrap interval (bias-corrected, "
                "paired across predictions)",
            )
        )
    if not entries:
        return table
    return table + "\n\n" + "\n".join(legend_lines(entries, width))
