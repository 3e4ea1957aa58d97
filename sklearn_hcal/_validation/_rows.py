"""Rows matched by item: pandas inputs indexed by the items they describe.

Classes travel by name (developer guide §class-names); so do items. The
tables this library returns are indexed by item (``load_lewidi(...).counts``
in file order, an aggregator's ``posteriors_`` sorted, a perspectivist
model's soft labels in order of appearance), so the plainest call,
``kl_divergence(data.counts, model.fit_transform(data.annotations))``, pairs
two tables whose rows hold the same items in different orders. Read by
position, each item would be compared with another item's prediction
without a word (developer guide §rows).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["item_index", "match_rows"]


def item_index(X) -> pd.Index | None:
    """The items naming ``X``'s rows: a pandas object's index, or ``X`` itself.

    ``X`` may be an index already (the items kept from labels validated
    earlier). A default ``RangeIndex`` names no item (a frame built from an
    array), so such an input is positional, like an array: ``None``.
    """
    index = X.index if isinstance(X, (pd.DataFrame, pd.Series)) else X
    if not isinstance(index, pd.Index) or isinstance(index, pd.RangeIndex):
        return None
    return index


def _repeated(index: pd.Index):
    return index[index.duplicated()][0]


def match_rows(y_true, other, *, name: str, counts=None, y_true_name: str = "y_true"):
    """``other`` with its rows in the order of the human labels' items.

    When both are pandas objects indexed by items (any index but the default
    ``RangeIndex``), ``other``'s rows are taken in ``y_true``'s order, as
    its columns are by class name; both must then index the same items, each
    once. Otherwise (an array, or a ``RangeIndex`` on either side) rows
    match by position and ``other`` is returned as it is.

    Parameters
    ----------
    y_true : array-like or pandas.Index
        The human labels, or their items (:func:`item_index`).
    other : array-like
        A prediction of the same items (probabilities, sets, scores).
    name : str
        ``other``'s argument name, for error messages.
    counts : array-like, default=None
        When given, the human labels in place of ``y_true`` (as the metrics
        read them).
    y_true_name : str, default="y_true"
        ``y_true``'s argument name, for error messages.

    Returns
    -------
    other : array-like
        ``other`` itself when its rows already follow ``reference``'s, else
        ``other`` reordered (a new pandas object).

    Raises
    ------
    ValueError
        When the two indexes hold different items, or one repeats an item.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal._validation import match_rows
    >>> Y = pd.DataFrame({"a": [3, 0], "b": [1, 4]}, index=["x", "y"])
    >>> P = pd.DataFrame({"a": [0.1, 0.7], "b": [0.9, 0.3]}, index=["y", "x"])
    >>> match_rows(Y, P, name="y_prob")
         a    b
    x  0.7  0.3
    y  0.1  0.9
    """
    if counts is not None:
        y_true, y_true_name = counts, "counts"
    reference_name, other_name = y_true_name, name
    items, own = item_index(y_true), item_index(other)
    if items is None or own is None or items.equals(own):
        return other
    for index, name in ((items, reference_name), (own, other_name)):
        if not index.is_unique:
            raise ValueError(
                f"{name} repeats item {_repeated(index)!r} in its index, and "
                f"{reference_name} and {other_name} are indexed by items in "
                "different orders: their rows cannot be matched by item. Give "
                "each item once, or pass arrays to match rows by position."
            )
    position = own.get_indexer(items)
    missing = np.flatnonzero(position < 0)
    if missing.size:
        row = int(missing[0])
        raise ValueError(
            f"{reference_name} and {other_name} are indexed by different items: "
            f"item {items[row]!r} (row {row} of {reference_name}) is not in the "
            f"index of {other_name} ({missing.size} of its {len(items)} items are "
            "not). Rows of two "
            "pandas objects indexed by items are matched by item; pass arrays "
            "(.to_numpy()) to match them by position."
        )
    if len(own) != len(items):
        extra = own[~own.isin(items)][0]
        raise ValueError(
            f"{other_name} has item {extra!r} in its index, which {reference_name} "
            f"does not have ({len(own)} rows against {len(items)}); select the "
            f"items of {reference_name}, e.g. {other_name}.loc[{reference_name}"
            ".index]."
        )
    return other.iloc[position]
