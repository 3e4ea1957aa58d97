"""Long tables of annotations: the one reader every estimator on them uses.

The aggregators (:mod:`sklearn_hcal.aggregation`), the perspectivist
classifier (:mod:`sklearn_hcal.perspectivist`) and the annotation splitters
(:mod:`sklearn_hcal.model_selection`) read the same input: a *long table*, one
row per (item, annotator) judgement, the layout of
``load_lewidi(...).annotations`` and ``load_lewidi(...).frame``. They read it
here, so that one bad table gets one error whichever estimator reads it
(developer guide §estimators): the estimator, the argument, the row (its
position, its index label where that differs, its item and annotator) and
the value are named.

* :func:`read_annotation_table` -- ``X`` itself: a DataFrame, each column
  named once, the key columns distinct and present, not empty, no missing
  or blank item or annotator, and (unless allowed) no repeated (item,
  annotator) pair, which is named with both rows;
* :func:`is_missing`, :func:`sorted_codes` -- the column helpers both
  the table and its labels use.

The table's labels (one per row, the classes, each label's class) are read
by :mod:`._annotation_labels`, with this table's messages.

What only one family needs stays with it (GLAD's two annotations per
annotator, the perspectivist's refusal of a label column among its
features, multi-label targets).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ._refuse import refuse_first

__all__ = [
    "SHOW",
    "AnnotationTable",
    "check_present",
    "is_missing",
    "plain",
    "read_annotation_table",
    "rows_table",
    "sorted_codes",
]

SHOW = 5  # how many offending values a message lists
_KEYS = ("item", "annotator")


def plain(value):
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _blank(uniques) -> np.ndarray:
    """Positions of the blank strings (``""``, spaces) among ``uniques``."""
    try:
        blank = pd.Series(uniques, dtype=object).str.strip().eq("")
    except AttributeError:  # no strings among the values
        return np.empty(0, dtype=np.intp)
    return np.flatnonzero(blank.to_numpy(dtype=bool, na_value=False))


def _missing_codes(codes: np.ndarray, uniques) -> np.ndarray:
    """Missing rows from factorized codes: NaN/None (code -1) or blank."""
    missing = codes < 0
    blank = _blank(uniques)
    if blank.size:
        missing |= np.isin(codes, blank)
    return missing


def is_missing(values) -> np.ndarray:
    """Missing or blank entries (NaN, None, ``""``, spaces) of a column.

    A blank string is no id and no explanation: read as missing. Blanks
    are looked for among the distinct values only.
    """
    if not isinstance(values, (pd.Series, pd.Index, np.ndarray)):
        values = pd.Series(list(values), dtype=object)  # label sets stay whole
    try:
        codes, uniques = pd.factorize(values)
    except TypeError:  # unhashable entries (label sets given as lists)
        series = pd.Series(values, dtype=object)
        return series.isna().to_numpy(dtype=bool) | np.isin(
            np.arange(len(series)), _blank(series)
        )
    return _missing_codes(codes, uniques)


def sorted_codes(values) -> tuple[np.ndarray, pd.Index]:
    """Codes of ``values`` in sorted order of the distinct values.

    Nothing computed from the codes (sums, random starts) then depends on
    the order of the rows. Ids of types that do not sort together are
    ordered by their text. A missing value (NaN, None) has code -1.
    """
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:
        codes, uniques = pd.factorize(values, sort=False)
        order = np.argsort([str(u) for u in uniques], kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        codes = np.where(codes < 0, codes, rank[codes])
        uniques = uniques[order]
    return codes.astype(np.intp), pd.Index(uniques)


@dataclass(frozen=True)
class AnnotationTable:
    """A checked long table: its rows, and its item and annotator ids.

    Attributes
    ----------
    frame : DataFrame
        The table as given.
    item, annotator : ndarray or None
        Each row's item and annotator id (None where the estimator has no
        such column).
    item_column, annotator_column : hashable or None
        Their columns.
    owner : str
        The estimator (or splitter) reading it, for messages.
    """

    frame: pd.DataFrame
    item: np.ndarray | None
    annotator: np.ndarray | None
    item_column: Hashable | None
    annotator_column: Hashable | None
    owner: str

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def index(self) -> pd.Index:
        return self.frame.index

    @cached_property
    def item_codes(self) -> tuple[np.ndarray, pd.Index]:
        """``(codes, items)``: each row's item as a position in sorted ``items``."""
        return sorted_codes(self.item)

    @cached_property
    def annotator_codes(self) -> tuple[np.ndarray, pd.Index]:
        """``(codes, annotators)``, as :attr:`item_codes`."""
        return sorted_codes(self.annotator)

    def row(self, position: int, *, keys: bool = True) -> str:
        """A row as users find it: ``row 3 (index 13; item 'q2', annotator 'ann')``.

        The index label is shown where it differs from the position, and
        (with ``keys``) the row's item and annotator where it has them.
        """
        parts = []
        label = plain(self.index[position])
        if not (isinstance(label, int) and label == position):
            parts.append(f"index {label!r}")
        ids = []
        for name, values in (("item", self.item), ("annotator", self.annotator)):
            if keys and values is not None and not is_missing(values[[position]])[0]:
                ids.append(f"{name} {plain(values[position])!r}")
        if ids:
            parts.append(", ".join(ids))
        return f"row {position} ({'; '.join(parts)})" if parts else f"row {position}"


def rows_table(n_rows: int, *, owner: str) -> AnnotationTable:
    """The rows of a plain feature matrix as a table without keys.

    For an estimator that also takes arrays (every row its own item), so
    that its labels are read and named by row like a long table's.
    """
    return AnnotationTable(
        frame=pd.DataFrame(index=pd.RangeIndex(n_rows)),
        item=None,
        annotator=None,
        item_column=None,
        annotator_column=None,
        owner=owner,
    )


def _frame(X, keys: dict, owner: str) -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        named = " and ".join(f"{k}={v!r}" for k, v in keys.items() if v is not None)
        columns = f" and the columns {named}" if named else ""
        raise ValueError(
            f"{owner}: X must be a pandas DataFrame with one row per (item, "
            f"annotator){columns} (the layout of load_lewidi(path).frame), got "
            f"{type(X).__name__}."
        )
    if X.columns.duplicated().any():
        dup = plain(X.columns[X.columns.duplicated()][0])
        raise ValueError(
            f"{owner}: X has the column {dup!r} twice; a long table names each "
            "column once."
        )
    return X


def _check_columns(X: pd.DataFrame, keys: dict, owner: str) -> None:
    named = [(p, c) for p, c in keys.items() if c is not None]
    for i, (param, column) in enumerate(named):
        for other, other_column in named[:i]:
            if repr(other_column) == repr(column):
                raise ValueError(
                    f"{owner}: {other}={other_column!r} and {param}={column!r} name "
                    "the same column of X; each must name its own."
                )
    for param, column in named:
        if not isinstance(column, Hashable) or column not in X.columns:
            raise ValueError(
                f"{owner}: {param}={column!r} is not a column of X; its columns "
                f"are {list(X.columns)} (name yours with {param}=)."
                + _multilabel_hint(X, keys, param)
            )


def _multilabel_hint(X: pd.DataFrame, keys: dict, param: str) -> str:
    """The advice for a wide multi-label table given where a label column is due.

    ``load_lewidi(...).annotations`` of a multi-label data set (VariErrNLI)
    has one 0/1 column per label instead of a ``label`` column.
    """
    if param != "label":
        return ""
    others = [c for c in X.columns if c not in {v for v in keys.values()}]
    if len(others) < 2:
        return ""
    values = X[others]
    if not all(pd.api.types.is_numeric_dtype(t) for t in values.dtypes):
        return ""
    if not values.isin([0, 1]).all().all():
        return ""
    return (
        f" X looks like multi-label annotations, one 0/1 column per label "
        f"({[plain(c) for c in others]}); this estimator takes one label per "
        f"annotation: model each label as a yes/no question, e.g. "
        f"label={plain(others[0])!r}."
    )


def check_present(
    table: AnnotationTable, values, source: str, role: str, missing=None
) -> None:
    missing = is_missing(values) if missing is None else missing
    refuse_first(
        missing,
        lambda first: (
            f"{table.owner}: {source} at {table.row(first)} is missing "
            f"({plain(values[first])!r}): every row needs its {role}; "
            f"{int(missing.sum())} row(s) lack one. Drop or fill them first."
        ),
    )


def _check_unique_pairs(table: AnnotationTable) -> None:
    item, _ = table.item_codes
    annotator, annotators = table.annotator_codes
    pair = item.astype(np.int64) * len(annotators) + annotator
    if len(pd.unique(pair)) == len(pair):
        return
    order = np.argsort(pair, kind="stable")
    repeated = np.flatnonzero(pair[order][1:] == pair[order][:-1])
    first, second = sorted((int(order[repeated[0]]), int(order[repeated[0] + 1])))
    raise ValueError(
        f"{table.owner}: annotator {plain(table.annotator[first])!r} labels item "
        f"{plain(table.item[first])!r} twice ({table.row(first, keys=False)} and "
        f"{table.row(second, keys=False)}); {repeated.size} row(s) repeat an "
        "earlier (item, annotator) pair. One row per annotator and item: rows "
        "of several files (splits) that reuse item ids are different items, "
        "kept apart by sklearn_hcal.datasets.combine_lewidi_splits; dropping "
        "the repeats would lose their annotations."
    )


def read_annotation_table(
    X,
    *,
    item,
    annotator,
    label=None,
    owner: str,
    unique_pairs: bool = True,
) -> AnnotationTable:
    """Check a long table of annotations and read its item and annotator ids.

    Parameters
    ----------
    X : DataFrame
        One row per (item, annotator).
    item, annotator : hashable or None
        The key columns (None: the estimator has no such column).
    label : hashable or None, default=None
        The label column, when the labels are read from ``X``: checked to be
        present and distinct from the keys.
    owner : str
        The estimator or splitter reading it, named by every message.
    unique_pairs : bool, default=True
        Refuse a repeated (item, annotator) pair, naming both rows (a table
        of pairs to predict may repeat them).

    Returns
    -------
    AnnotationTable

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal._validation import read_annotation_table
    >>> X = pd.DataFrame({"item": ["q1", "q1", "q2"],
    ...                   "annotator": ["ann", "bob", "ann"]}, index=[10, 11, 12])
    >>> read_annotation_table(X, item="item", annotator="annotator",
    ...                       owner="DawidSkene").row(1)
    "row 1 (index 11; item 'q1', annotator 'bob')"
    >>> read_annotation_table(X.assign(annotator="ann"), item="item",
    ...                       annotator="annotator", owner="DawidSkene")
    Traceback (most recent call last):
    ...
    ValueError: DawidSkene: annotator 'ann' labels item 'q1' twice (row 0 (index 10) \
and row 1 (index 11)); 1 row(s) repeat an earlier (item, annotator) pair. One row \
per annotator and item: rows of several files (splits) that reuse item ids are \
different items, kept apart by sklearn_hcal.datasets.combine_lewidi_splits; \
dropping the repeats would lose their annotations.
    """
    keys = {"item": item, "annotator": annotator, "label": label}
    X = _frame(X, {"item": item, "annotator": annotator}, owner)
    _check_columns(X, keys, owner)
    if len(X) == 0:
        raise ValueError(
            f"{owner}: X is empty (0 rows): a long table has one row per annotation."
        )
    values = {k: None if keys[k] is None else X[keys[k]].to_numpy() for k in _KEYS}
    table = AnnotationTable(
        frame=X,
        item=values["item"],
        annotator=values["annotator"],
        item_column=item,
        annotator_column=annotator,
        owner=owner,
    )
    for role in _KEYS:
        if values[role] is not None:
            codes, uniques = getattr(table, f"{role}_codes")
            check_present(
                table,
                values[role],
                f"X's column {keys[role]!r}",
                role,
                missing=_missing_codes(codes, uniques),
            )
    if unique_pairs and item is not None and annotator is not None:
        _check_unique_pairs(table)
    return table
