"""From long-format annotation tables to label histograms."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd

from ..utils._compat import StrOptions, validate_params

_SHOW = 5  # how many offending values an error message lists


def _column(df: pd.DataFrame, key, what: str) -> pd.Series:
    if key not in df.columns:
        raise ValueError(
            f"{what}={key!r} is not a column of df; its columns are {list(df.columns)}."
        )
    col = df[key]
    if isinstance(col, pd.DataFrame):
        raise ValueError(f"{what}={key!r} names several columns of df.")
    return col


@validate_params(
    {
        "df": [pd.DataFrame],
        "item": [Hashable],
        "label": [Hashable],
        "annotator": [Hashable, None],
        "classes": ["array-like", None],
        "dropna": ["boolean"],
        "duplicates": [StrOptions({"raise", "first", "last", "keep"})],
    },
    prefer_skip_nested_validation=True,
)
def annotations_to_histograms(
    df: pd.DataFrame,
    *,
    item="item",
    label="label",
    annotator=None,
    classes=None,
    dropna: bool = False,
    duplicates: str = "raise",
) -> pd.DataFrame:
    """Count a long-format annotation table into label histograms.

    Crowdsourcing tools export one row per (item, annotator) judgement; the
    estimators and metrics of this package take one row per item with one
    count per class (developer guide §data-conventions). This function does the
    conversion.

    Parameters
    ----------
    df : DataFrame
        The annotation table, one row per annotation.
    item : hashable, default="item"
        Column identifying the item.
    label : hashable, default="label"
        Column holding the class label given.
    annotator : hashable, default=None
        Column identifying the annotator. When given, an annotator labelling
        the same item twice is handled by ``duplicates``; rows with a missing
        annotator follow ``dropna``.
    classes : array-like, default=None
        The classes, in the order of the output columns; a class nobody chose
        gets a column of zeros, and a label not in ``classes`` is an error.
        None means the categories of a categorical ``label`` column, or else
        the sorted unique labels.
    dropna : bool, default=False
        If False, a missing item, label (or annotator) is an error; if True,
        such rows are dropped (an item left with no annotation disappears).
    duplicates : {"raise", "first", "last", "keep"}, default="raise"
        With ``annotator`` given, what to do with repeated (item, annotator)
        rows: raise an error, keep the first or the last row of each group,
        or count every row. Ignored without ``annotator``.

    Returns
    -------
    histograms : DataFrame of shape (n_items, n_classes), dtype int64
        Counts, indexed by item (in order of first appearance, index named
        after ``item``), one column per class (columns named after
        ``label``).

    Raises
    ------
    ValueError
        For a missing column, missing values (with ``dropna=False``),
        duplicate (item, annotator) rows (with ``duplicates="raise"``),
        labels outside ``classes``, repeated ``classes`` or an empty table.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.datasets import annotations_to_histograms
    >>> df = pd.DataFrame({"item": ["a", "a", "a", "b", "b"],
    ...                    "worker": [1, 2, 3, 1, 2],
    ...                    "label": ["cat", "dog", "cat", "dog", "dog"]})
    >>> annotations_to_histograms(df, annotator="worker")
    label  cat  dog
    item
    a        2    1
    b        0    2
    >>> annotations_to_histograms(df, classes=["dog", "cat", "bird"])
    label  dog  cat  bird
    item
    a        1    2     0
    b        2    0     0
    """
    keys = {"item": item, "label": label}
    if annotator is not None:
        keys["annotator"] = annotator
    if len(set(keys.values())) != len(keys):
        raise ValueError(
            f"item, label and annotator must be different columns, got {keys}."
        )
    cols = {what: _column(df, key, what) for what, key in keys.items()}

    missing = pd.concat([c.isna() for c in cols.values()], axis=1).any(axis=1)
    if missing.any():
        if not dropna:
            which = [w for w, c in cols.items() if c.isna().any()]
            first = df.index[np.flatnonzero(missing.to_numpy())[0]]
            raise ValueError(
                f"df has {int(missing.sum())} rows with a missing {'/'.join(which)} "
                f"(first at index {first!r}); pass dropna=True to drop them."
            )
        keep_rows = ~missing.to_numpy()
        cols = {w: c[keep_rows] for w, c in cols.items()}
    if len(cols["item"]) == 0:
        raise ValueError("df has no annotations (no rows left to count).")

    if annotator is not None:
        pair = pd.DataFrame({"item": cols["item"], "annotator": cols["annotator"]})
        if duplicates == "raise":
            dup = pair.duplicated(keep=False).to_numpy()
            if dup.any():
                shown = pair[dup].drop_duplicates().head(_SHOW)
                raise ValueError(
                    f"df has {int(dup.sum())} rows that repeat an (item, annotator) "
                    f"pair, e.g. {list(shown.itertuples(index=False, name=None))}; "
                    "pass duplicates='first', 'last' or 'keep' to resolve them."
                )
        elif duplicates in ("first", "last"):
            keep_rows = ~pair.duplicated(keep=duplicates).to_numpy()
            cols = {w: c[keep_rows] for w, c in cols.items()}

    labels = cols["label"]
    if classes is not None:
        class_index = pd.Index(list(np.asarray(classes, dtype=object).ravel()))
        if len(class_index) == 0:
            raise ValueError("classes must not be empty.")
        if class_index.has_duplicates:
            raise ValueError(
                "classes must be unique; repeated: "
                f"{class_index[class_index.duplicated()].unique().tolist()}."
            )
    elif isinstance(labels.dtype, pd.CategoricalDtype):
        class_index = pd.Index(labels.cat.categories)
    else:
        uniques = pd.unique(labels.to_numpy())
        try:
            class_index = pd.Index(sorted(uniques))
        except TypeError as exc:
            raise ValueError(
                "The labels are of types that cannot be sorted "
                f"({sorted({type(u).__name__ for u in uniques})}); pass classes= "
                "to fix the column order."
            ) from exc

    label_codes = class_index.get_indexer(labels.to_numpy())
    unknown = label_codes < 0
    if unknown.any():
        bad = pd.unique(labels.to_numpy()[unknown])[:_SHOW]
        raise ValueError(
            f"label column {label!r} holds values not in classes: "
            f"{list(bad)} (classes: {class_index.tolist()})."
        )
    item_codes, items = pd.factorize(cols["item"], sort=False)
    n_classes = len(class_index)
    flat = np.bincount(
        item_codes * n_classes + label_codes, minlength=len(items) * n_classes
    )
    return pd.DataFrame(
        flat.reshape(len(items), n_classes).astype(np.int64),
        index=pd.Index(items, name=item),
        columns=pd.Index(class_index, name=label),
    )
