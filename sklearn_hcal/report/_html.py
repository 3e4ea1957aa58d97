"""HTML pieces of a report: the style, the data summary, the legend, the page.

Everything is written here by hand (no template engine, no script): the
notebook display is :func:`fragment`, the file is :func:`document` -- the
same fragment with the figures, in a page whose only style is inline.
"""

from __future__ import annotations

from html import escape

__all__ = ["STYLE", "summary_html", "legend_html", "fragment", "document"]

#: Scoped to ``.hcal-report`` so that a notebook's own style is left alone.
STYLE = """
.hcal-report { font-family: system-ui, -apple-system, "Segoe UI", Roboto,
  "DejaVu Sans", sans-serif; color: #1b1b1b; line-height: 1.4; }
.hcal-report h1 { font-size: 1.5em; margin: 0.2em 0 0.6em; }
.hcal-report h2 { font-size: 1.2em; margin: 1.2em 0 0.4em;
  border-bottom: 1px solid #ccc; }
.hcal-report table { border-collapse: collapse; margin: 0.4em 0; }
.hcal-report th, .hcal-report td { border: 1px solid #d0d0d0;
  padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
.hcal-report table.metrics td, .hcal-report table.plain td {
  text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.hcal-report thead th { background: #f0f0f0; }
.hcal-report td.best { background: #e3f4e1; }
.hcal-report p.caption { font-size: 0.9em; color: #444; margin: 0.3em 0 0.8em; }
.hcal-report .arrow { font-weight: bold; }
.hcal-report table.legend td:nth-child(2),
.hcal-report table.legend td:nth-child(3) { white-space: nowrap; }
.hcal-report .ci { font-size: 0.85em; color: #555; }
.hcal-report div.scroll { overflow-x: auto; max-width: 100%; }
.hcal-report div.metric-blocks { display: flex; flex-wrap: wrap;
  gap: 0 1.5em; align-items: flex-start; }
.hcal-report div.figures { display: flex; flex-wrap: wrap; gap: 0 1.5em; }
.hcal-report figure { flex: 0 1 auto; max-width: 100%; }
.hcal-report figure.wide { flex-basis: 100%; }
.hcal-report dl.summary { display: grid; grid-template-columns: max-content auto;
  gap: 0.15em 1em; margin: 0.4em 0; }
.hcal-report dl.summary dt { font-weight: bold; }
.hcal-report dl.summary dd { margin: 0; }
.hcal-report figure { margin: 1em 0; }
.hcal-report figure img { max-width: 100%; height: auto;
  border: 1px solid #e0e0e0; }
.hcal-report figcaption { font-size: 0.9em; color: #444; max-width: 60em; }
.hcal-report footer { margin-top: 2em; font-size: 0.85em; color: #666; }
"""


def summary_html(items: list) -> str:
    """``[(term, text), ...]`` as a definition list."""
    rows = "".join(
        f"<dt>{escape(term)}</dt><dd>{escape(text)}</dd>" for term, text in items
    )
    return f'<dl class="summary">{rows}</dl>'


def legend_html(rows: list, *, anchors: bool = True) -> str:
    """The legend table: one line per metric (see ``_legend.legend_rows``)."""
    head = (
        "<thead><tr><th scope='col'>column</th><th scope='col'>direction</th>"
        "<th scope='col'>proper score</th><th scope='col'>what it measures</th>"
        "<th scope='col'>source</th></tr></thead>"
    )
    body = []
    for row in rows:
        ident = f' id="legend-{escape(row["column"])}"' if anchors else ""
        body.append(
            f'<tr class="legend"{ident}><th scope="row"><code>'
            f"{escape(row['column'])}</code></th>"
            f"<td>{escape(row['arrow'])} {escape(row['direction'])}</td>"
            f"<td>proper score: {escape(row['proper'])}</td>"
            f"<td>{escape(row['description'])}</td>"
            f"<td>{escape(row['source'])}</td></tr>"
        )
    return f'<table class="legend">{head}<tbody>{"".join(body)}</tbody></table>'


def fragment(
    *,
    title: str | None,
    summary: list,
    table: str,
    legend: str,
    figures: list = (),
    figures_note: str | None = None,
    annotators: str | None = None,
    notes: list = (),
    heading: str = "h2",
) -> str:
    """The report's body inside ``<div class="hcal-report">``.

    ``figures`` are ``(stem, data URI, width, height, caption)``.
    """
    h = heading
    parts = ['<div class="hcal-report">', f"<style>{STYLE}</style>"]
    if title:
        parts.append(f"<h1>{escape(title)}</h1>")
    if summary:
        parts += [f'<{h} id="data">Data</{h}>', summary_html(summary)]
    parts += [f'<{h} id="metrics">Metrics</{h}>', table]
    parts += [f'<{h} id="legend">Legend</{h}>', legend]
    if annotators:
        parts += [f'<{h} id="annotators">Annotators</{h}>', annotators]
    if figures or figures_note:
        parts.append(f'<{h} id="figures">Figures</{h}>')
        if figures_note:
            parts.append(f"<p>{escape(figures_note)}</p>")
        parts.append('<div class="figures">')
        for stem, uri, width, height, caption in figures:
            # Figures are drawn to fit a 1280-px page (the marginals wrap
            # their panels); a wide one takes a line of its own, and any
            # shrinks with a narrower window instead of overflowing it.
            wide = ' class="wide"' if width > 700 else ""
            parts.append(
                f'<figure id="figure-{escape(stem)}"{wide}><img src="{escape(uri)}" '
                f'width="{int(width)}" height="{int(height)}" alt="{escape(caption)}">'
                f"<figcaption>{escape(caption)}</figcaption></figure>"
            )
        parts.append("</div>")
    if notes:
        parts.append(f'<{h} id="notes">Notes</{h}>')
        parts.append("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    parts.append("</div>")
    return "\n".join(parts)


def document(body: str, *, title: str, footer: str) -> str:
    """A complete page around ``body``: no script, no link to another file."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        # Nothing may be fetched: the page is a file sent to co-authors.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">\n"
        f"<title>{escape(title)}</title>\n</head>\n<body>\n<main>\n{body}\n"
        f'<footer class="hcal-report">{escape(footer)}</footer>\n'
        "</main>\n</body>\n</html>\n"
    )
