"""The LeWiDi 2025 submission layout: what both directions share.

The official submission of a data set is two files (developer guide
§lewidi, :ref:`lewidi_formats`):

* ``<stem>_soft.tsv`` -- ``item_id<TAB>[p, ...]``: each item's soft label in
  the class order of the data set (numeric scales increasing); multi-label
  sets (VariErrNLI) the nested ``[[1 - p, p], ...]`` pairs, one per label,
  that the evaluation notebook's ``multilabel_average_MD`` reads;
* ``<stem>_pe.tsv`` -- ``item_id<TAB>[label, ...]``: one label per distinct
  annotator of the item, in the order of its ``annotators`` field
  (multi-label: each annotator's list of labels).

The writer (:mod:`._lewidi_write`), the reader (:mod:`._lewidi_read`) and
the scorer (:func:`~sklearn_hcal.metrics.lewidi_scores`) take the files'
names, the rounding rule, the class a label names and the one check of a
soft prediction from here, so that a layout changes in one place for both
directions.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import refuse_first

__all__ = [
    "PERSPECTIVIST_ENDING",
    "SOFT_ENDING",
    "TWO_DECIMALS",
    "class_named",
    "soft_matrix",
    "submission_track",
]


#: How far a probability written with 2 decimals may be off, per entry:
#: the soft labels' rounding rule (developer guide §lewidi).
TWO_DECIMALS = 0.005

#: The end of each track's file stem: ``<stem>_soft.tsv``, ``<stem>_pe.tsv``.
SOFT_ENDING = "_soft"
PERSPECTIVIST_ENDING = "_pe"


def submission_track(path: str | os.PathLike) -> str:
    """The track of a submission file by its official name: ``"perspectivist"``
    for a stem ending ``_pe`` (``X_pe.tsv``), else ``"soft"``.

    >>> submission_track("out/Paraphrase_test_pe.tsv"), submission_track("a.tsv")
    ('perspectivist', 'soft')
    """
    return "perspectivist" if Path(path).stem.endswith(PERSPECTIVIST_ENDING) else "soft"


def class_named(value, classes):
    """The class of ``classes`` that ``value`` names, or None.

    By text (``"1"``), else by number (``1``, ``1.0`` and ``"1.0"`` name the
    class ``1``): files write labels as text, models predict numbers.
    """
    text = str(value).strip()
    for c in classes:
        if str(c) == text:
            return c
    try:
        number = float(text)
    except ValueError:
        return None
    for c in classes:
        try:
            if float(c) == number:
                return c
        except (TypeError, ValueError):
            continue
    return None


def _as_class(key, classes):
    """The class ``key`` names (text or number), else ``key`` as text."""
    c = class_named(key, classes)
    return str(key).strip() if c is None else c


def soft_matrix(soft, ids, classes) -> np.ndarray:
    """``soft`` (a DataFrame indexed by item) in ``ids`` and ``classes`` order.

    The one check of a soft-track prediction, for the scorer and the writer
    alike: one row per item of ``ids`` (no missing, extra or repeated item),
    one column per class, every value a probability in [0, 1].
    """
    if not isinstance(soft, pd.DataFrame):
        raise ValueError(
            "soft must be a DataFrame indexed by item id with one column per class "
            "(predict_soft_labels or read_lewidi_submission give one); got "
            f"{type(soft).__name__}."
        )
    index = pd.Index([str(i) for i in soft.index])
    if index.has_duplicates:
        raise ValueError(f"soft: item {index[index.duplicated()][0]!r} appears twice.")
    position = index.get_indexer(ids)
    if (position < 0).any():
        missing = [i for i, p in zip(ids, position) if p < 0]
        raise ValueError(
            f"soft: no prediction for {len(missing)} of the {len(ids)} items, e.g. "
            f"item {missing[0]!r}; every item of test needs one."
        )
    if len(index) > len(ids):
        extra = index.difference(pd.Index(ids))
        raise ValueError(f"soft: item {extra[0]!r} is not in test.")
    names = [str(c) for c in soft.columns]
    wanted = [str(c) for c in classes]
    if sorted(names) != sorted(wanted):
        raise ValueError(
            f"soft: the columns {names} are not the classes of test {wanted}."
        )
    ordered = soft.iloc[position, [names.index(c) for c in wanted]]
    numbers = ordered.apply(pd.to_numeric, errors="coerce").to_numpy(np.float64)
    refuse_first(
        np.isnan(numbers) & ordered.notna().to_numpy(),
        lambda i, j: (
            f"soft: item {ids[i]!r}, class {wanted[j]!r}: {ordered.iat[i, j]!r} is "
            "not a number."
        ),
    )
    refuse_first(
        ~np.isfinite(numbers) | (numbers < 0) | (numbers > 1),
        lambda i, j: (
            f"soft: item {ids[i]!r}, class {wanted[j]!r}: {float(numbers[i, j])!r} is "
            "not a probability in [0, 1]."
        ),
    )
    return numbers
