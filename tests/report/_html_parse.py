"""A small HTML reader for the report tests (the standard library's parser)."""

from __future__ import annotations

from html.parser import HTMLParser


class TableReader(HTMLParser):
    """Rows of cell texts of every ``<table>``, by the table's class.

    ``tables[cls]`` is a list of rows; a row is a list of ``(text, classes)``
    for its ``th``/``td`` cells, text with whitespace collapsed.
    ``blocks[cls]`` holds the same rows table by table.
    """

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list] = {}
        self.blocks: dict[str, list] = {}
        self.images: list[dict] = []
        self.tags: list[tuple[str, dict]] = []
        self._table = None
        self._row = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("class", ""), [])
            self._class = attrs.get("class", "")
            self.blocks.setdefault(self._class, []).append([])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ([], attrs.get("class", ""))
        elif tag == "img":
            self.images.append(attrs)
        elif tag == "br" and self._cell is not None:
            self._cell[0].append(" ")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            text = " ".join("".join(self._cell[0]).split())
            self._row.append((text, self._cell[1]))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                self._table.append(self._row)
                self.blocks[self._class][-1].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[0].append(data)


def read_tables(html: str) -> TableReader:
    reader = TableReader()
    reader.feed(html)
    reader.close()
    return reader


def metric_table(html: str) -> tuple:
    """``(header, {row name: cells})`` of the metric table, its blocks joined.

    The report cuts a wide table into blocks of columns that repeat the row
    names; ``header`` is the row names' header then every metric's, ``cells``
    every metric cell ``(text, classes)`` of a row, in column order.
    """
    blocks = read_tables(html).blocks["metrics"]
    header = [blocks[0][0][0][0]]
    body: dict = {}
    for block in blocks:
        assert block[0][0][0] == header[0]  # each block repeats the row names
        header += [text for text, _ in block[0][1:]]
        for row in block[1:]:
            body.setdefault(row[0][0], []).extend(row[1:])
    return header, body
