"""LeWiDi's harmonised JSON (2023 and 2025 editions) -> histograms + annotators.

``load_lewidi`` is a sequence of named steps over ONE long table of the
annotations (``item``, ``annotator``, ``label``; multi-label: the tuple of
labels chosen): read the records, parse their fields
(``_lewidi_fields.py``), build the long table, derive from it the counts,
the soft-label gap, the wide ``annotations`` (multi-label: one 0/1 column per
label) and the ``frame`` (``_lewidi_frame.py``, which also reads the
annotator metadata), then the Bunch.

The *Learning with Disagreements* shared tasks release every data set in one
"harmonised" JSON format: an object mapping item ids to records with the
fields ``text``, ``annotators``, ``annotations``, ``soft_label``, ``split``,
``lang`` and ``other_info`` (LeWiDi 2023 readme; LeWiDi 2025 readme,
Le-Wi-Di/le-wi-di.github.io). The two editions differ in

* ``annotations``: 2023 -- a comma-separated string in the order of the
  comma-separated ``annotators`` string (``"1,0,0"``); 2025 -- an object
  ``{"Ann1": "label", ...}``, where a multi-label annotation is a
  comma-separated string (VariErrNLI: ``"entailment,neutral"``);
* ``soft_label``: ``{"0": p0, "1": p1}`` (2023) and ``{class: p}`` (2025);
  multi-label sets have one binary distribution per label,
  ``{"entailment": {"0": 0.5, "1": 0.5}, ...}``;
* 2023 adds ``hard_label``; 2025 ships ``<Set>_annotators_meta.json`` with
  the annotators' demographics.

Class names are normalised so that the files' own spellings agree: numeric
names become numbers (MP's soft labels say ``"0.0"``, its annotations
``"0"``: both are ``0``) and annotator ids lose surrounding spaces (CSC has
``" Ann289"``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ..utils._warnings import warn_user
from ._annotations import annotations_to_histograms
from ._base import read_json
from ._lewidi_fields import (
    apply_label_map,
    class_key,
    is_multilabel,
    n_annotations,
    parse_fields,
    sorted_classes,
)
from ._lewidi_frame import UNKNOWN_GROUP, annotator_table, lewidi_frame, shown

__all__ = ["load_lewidi"]

#: Largest difference tolerated between a shipped soft label and the share of
#: annotations behind it (the files round to 3 decimals, e.g. 0.667).
SOFT_LABEL_TOL = 1e-2


def _read(path: Path) -> dict:
    """The file's JSON object ``{item id: record}``, refused when it is none."""
    data = read_json(
        path, repeats="an item id or an annotator given twice", trailing_commas=True
    )
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{path} is not a LeWiDi harmonised file: expected a non-empty JSON "
            "object mapping item ids to records."
        )
    return data


def _renormalise_soft_only(path, soft, annotated):
    """Divide the rounded soft labels of items without annotations by their sums.

    Items with annotations have counts, which are their truth; the soft labels
    of items without (a test split's) are the only truth there is, and are
    made distributions when rounding put their sum off 1 (a warning names the
    first item and its sum). Sums further off were refused on reading.
    """
    from .._validation import row_sum_tolerance

    sums = soft.sum(axis=1)
    off = (sums - 1.0).abs() > row_sum_tolerance(soft.shape[1])
    if annotated is not None:
        off &= ~annotated
    if not off.any():
        return soft
    first = off.index[off.to_numpy()][0]
    warn_user(
        f"{path.name}: {int(off.sum())} items have only a soft label, which does "
        f"not sum to 1 (rounded entries; first: item {first!r} sums to "
        f"{sums[first]:.6g}); they were divided by their sums."
    )
    soft = soft.copy()
    soft.loc[off] = soft.loc[off].div(sums[off], axis=0)
    return soft


def load_lewidi(
    path: str | os.PathLike,
    *,
    annotators_meta="auto",
    label_map=None,
) -> Bunch:
    """Load a LeWiDi data set from its harmonised JSON file (2023 or 2025).

    Parameters
    ----------
    path : str or path-like
        The JSON file (e.g. ``MP_dev.json``, ``HS-Brexit_train.json``).
    annotators_meta : "auto", str, path-like or None, default="auto"
        The 2025 annotator metadata. ``"auto"`` reads
        ``<Set>_annotators_meta.json`` beside ``path`` when it exists; None
        skips it.
    label_map : dict or callable, default=None
        Maps each annotation to a soft-label class when the two differ, e.g.
        ConvAbuse (2023), whose annotators rated severity −3..1 while its
        soft label is abusive (1: −3..−1) or not (0: 0..1):
        ``label_map={-3: 1, -2: 1, -1: 1, 0: 0, 1: 0}``.

    Returns
    -------
    data : Bunch
        counts : DataFrame of shape (n_items, n_classes), int64
            Histograms of the annotations, indexed by item id, one column per
            class (for multi-label data: the number of annotators who chose
            each label). None when the file has no annotations (an unlabelled
            test split) or when they do not map to the soft-label classes
            (a UserWarning names them; pass ``label_map``).
        soft_labels : DataFrame of shape (n_items, n_classes), float
            The shipped soft labels (multi-label: the probability that each
            label applies); None when absent. Kept as shipped where the item
            has annotations (the counts are the truth; the files round, e.g.
            CSC's test rows sum to 0.99 or 1.01); divided by their sums,
            with a warning, for items that have only a soft label.
        classes : ndarray
            The column classes; numeric scales in increasing order (CSC 1..6,
            Par −5..5), which is what the ordinal metrics read as the scale.
        annotations : DataFrame
            Long format, one row per (item, annotator): columns ``item``,
            ``annotator``, ``label`` (plus ``raw_label`` with ``label_map``);
            for multi-label data one 0/1 column per label instead of ``label``.
            The layout of the perspectivist metrics
            (:func:`~sklearn_hcal.metrics.perspectivist_error_rate`).
        frame : DataFrame
            The long table of everything known about each (item, annotator)
            pair, the input of per-annotator models: ``item``,
            ``annotator``, ``label`` (multi-label: the tuple of labels chosen,
            in the order of ``classes``; missing for a listed annotator
            without annotation, as in a test file), ``raw_label`` with
            ``label_map``, the item's text fields, ``explanation`` (the
            annotator's own explanation where the file ships
            ``other_info.explanations``; an annotator listed once per label
            gets its explanations joined by newlines) and the annotator's
            metadata columns. Rows follow the items and, within an item, its
            ``annotators`` field. See :ref:`lewidi_formats`.
        annotators : DataFrame or None
            Annotator metadata indexed by annotator id (2025), with a column
            ``in_metadata``; annotators of the data missing from the file are
            added with ``"unknown"`` in text fields (NaN in numeric ones), an
            explicit group for reports by a field.
        text : DataFrame
            The text fields of each item (2023: one ``text`` column).
        item_info : DataFrame
            Per item: ``split``, ``lang``, ``n_annotators``, ``n_annotations``,
            ``soft_label_gap`` (when there are counts and soft labels: the
            largest difference between the shipped soft label and the share
            of the annotations, NaN without annotations) and, in 2023 files,
            ``hard_label``.
        other_info : Series
            The data-set-specific ``other_info`` object of each item.
        multilabel : bool
            Whether each annotator may give several labels (VariErrNLI).
        format : {"2023", "2025"} or None
            The edition's annotation format (None without annotations).
        task : str or None
            The ``annotation task`` field.
        path : str
            The file read (its stem names the submission files,
            :func:`write_lewidi_submission`).
        DESCR : str
            A one-line description.

    Raises
    ------
    FileNotFoundError
        If ``path`` (or an explicit ``annotators_meta``) does not exist.
    ValueError
        If the file is not in the harmonised format, or a soft label is not
        a distribution (a negative or NaN entry, a sum further from 1 than
        the rounding of its entries, a multi-label entry keyed other than
        "0"/"1"); the message names the item and the value.

    Notes
    -----
    The published files are read as they are: a trailing comma before a
    closing ``}`` or ``]`` (the Paraphrase and VariErrNLI metadata) is
    accepted, and nothing else outside strict JSON.

    Examples
    --------
    >>> from sklearn_hcal.datasets import load_lewidi
    >>> data = load_lewidi("MP_dev.json")  # doctest: +SKIP
    >>> data.counts.head(2)  # doctest: +SKIP
    """
    path = Path(path).expanduser()
    ids, records = _read_records(path)
    multilabel = is_multilabel(records)
    rows, fmt, soft = parse_fields(path, ids, records, multilabel)
    long, classes = _long_table(rows, soft, multilabel, label_map)
    annotations = _wide_annotations(long, classes, multilabel)
    counts, classes = _counts(path, ids, annotations, soft, classes, multilabel)
    n_annotators = long.groupby("item", sort=False)["annotator"].nunique()
    n_annotators = n_annotators.reindex(ids, fill_value=0)
    gap = _soft_label_gap(path, counts, soft, n_annotators, multilabel)
    if soft is not None and not multilabel:
        annotated = n_annotators.to_numpy() > 0 if counts is not None else None
        soft = _renormalise_soft_only(path, soft, annotated)
    text = _text_table(ids, records)
    item_info = _item_info(ids, records, long, n_annotators, gap, multilabel)
    annotators, n_unknown = annotator_table(path, annotators_meta, long)
    try:
        frame = lewidi_frame(path.name, ids, records, long, text, annotators)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc
    task = _task(records)
    return Bunch(
        counts=counts,
        soft_labels=soft,
        classes=np.array(classes, dtype=object),
        annotations=annotations,
        frame=frame,
        annotators=annotators,
        text=text,
        item_info=item_info,
        other_info=pd.Series(
            [r.get("other_info") for r in records],
            index=pd.Index(ids, name="item"),
            dtype=object,
        ),
        multilabel=multilabel,
        format=fmt,
        task=task,
        path=str(path),
        DESCR=_description(path, fmt, ids, classes, multilabel, long, n_unknown, task),
    )


def _read_records(path: Path):
    """Read the file: ``(item ids, records)``, each record a JSON object."""
    if path.is_dir():
        raise ValueError(
            f"path {str(path)!r} is a folder; pass one harmonised JSON file of it "
            "(e.g. Paraphrase_train.json)."
        )
    if not path.is_file():
        raise FileNotFoundError(
            f"LeWiDi file {str(path)!r} not found. Pass the path of a harmonised "
            "JSON file, or use sklearn_hcal.datasets.fetch_lewidi to download one."
        )
    data = _read(path)
    ids = [str(k) for k in data]
    records = list(data.values())
    for item_id, record in zip(ids, records):
        if not isinstance(record, dict):
            raise ValueError(
                f"{path}: item {item_id!r} is {shown(record)} (a JSON "
                f"{type(record).__name__}); every item must be a JSON object of "
                "fields (text, annotators, annotations, soft_label, ...)."
            )
    fields = {"annotations", "soft_label", "annotators", "text"}
    if not any(fields & r.keys() for r in records):  # an unlabelled test split
        raise ValueError(  # has its annotators and texts
            f"{path} is not a LeWiDi harmonised file: no item has any of the "
            f"fields {sorted(fields)} (item {ids[0]!r} holds {sorted(records[0])}); "
            "an annotator-metadata file is passed as annotators_meta=."
        )
    return ids, records


def _long_table(rows, soft, multilabel, label_map):
    """The one long table of the annotations: ``(table, classes so far)``.

    Columns ``item``, ``annotator``, ``label`` -- a class key after
    ``label_map`` (then ``raw_label`` beside it), or for multi-label data
    the tuple of the labels chosen, in the order of the classes.
    """
    long = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    classes = list(soft.columns) if soft is not None else []
    if multilabel:
        classes += sorted({lab for row in long["label"] for lab in row} - set(classes))
        rank = {lab: j for j, lab in enumerate(classes)}
        long["label"] = pd.Series(
            [
                tuple(sorted(dict.fromkeys(row), key=rank.__getitem__))
                for row in long["label"]
            ],
            dtype=object,
        )
        return long, classes
    raw = long["label"].map(class_key)
    long["label"] = apply_label_map(raw, label_map)
    if label_map is not None:
        long["raw_label"] = raw
    return long, classes


def _counts(path, ids, annotations, soft, classes, multilabel):
    """Histograms per item of the wide annotations: ``(counts or None, classes)``."""
    counts = None
    if multilabel:
        if len(annotations):
            counts = annotations.groupby("item", sort=False)[classes].sum()
    else:
        extra = [c for c in pd.unique(annotations["label"]) if c not in set(classes)]
        if extra and soft is not None:
            warn_user(
                f"{path.name}: the annotations hold labels {extra[:5]} that are not "
                f"soft-label classes {classes}; counts is None. Pass label_map= to "
                "map annotations onto the classes (hcal evaluate: --label-map)."
            )
            return None, classes
        classes = sorted_classes(classes + extra)
        if len(annotations):
            counts = annotations_to_histograms(
                annotations, annotator="annotator", classes=classes, duplicates="keep"
            )
    if counts is not None:
        counts = counts.reindex(pd.Index(ids, name="item"), fill_value=0)
        counts.columns = pd.Index(classes)
        counts = counts.astype(np.int64)
    return counts, classes


def _wide_annotations(long, classes, multilabel) -> pd.DataFrame:
    """The ``annotations`` table: multi-label tuples as one 0/1 column per label."""
    if not multilabel:
        return long
    chosen = long["label"].explode().dropna()
    rank = {lab: j for j, lab in enumerate(classes)}
    indicators = np.zeros((len(long), len(classes)), dtype=np.int64)
    indicators[chosen.index.to_numpy(), chosen.map(rank).to_numpy(dtype=int)] = 1
    return pd.concat(
        [
            long[["item", "annotator"]],
            pd.DataFrame(indicators, columns=classes, index=long.index),
        ],
        axis=1,
    )


def _soft_label_gap(path, counts, soft, n_annotators, multilabel):
    """Per item, the largest |soft label - share of annotations| (None without both)."""
    if counts is None or soft is None:
        return None
    denom = n_annotators if multilabel else counts.sum(axis=1)
    share = counts.div(denom.replace(0, np.nan), axis=0).fillna(0.0)
    gap = (share - soft.reindex(columns=counts.columns, fill_value=0.0)).abs()
    # items without annotations have no share to compare with
    gap = gap.max(axis=1).where(denom > 0)
    bad = gap > SOFT_LABEL_TOL
    if bad.any():
        warn_user(
            f"{path.name}: for {int(bad.sum())} items the soft label differs "
            f"from the share of annotations by more than {SOFT_LABEL_TOL} "
            f"(first: item {bad.index[bad.to_numpy()][0]!r})."
        )
    return gap


def _text_table(ids, records) -> pd.DataFrame:
    """The text fields of each item (2023: one ``text`` column)."""
    texts = [r.get("text") for r in records]
    if all(isinstance(t, dict) for t in texts):
        return pd.DataFrame.from_records(texts, index=pd.Index(ids, name="item"))
    return pd.DataFrame({"text": texts}, index=pd.Index(ids, name="item"))


def _item_info(ids, records, long, n_annotators, gap, multilabel) -> pd.DataFrame:
    """Per item: split, lang, annotators, annotations, soft-label gap, hard label."""
    if multilabel:  # labels given, an annotator may give several
        given = [n_annotations(r) for r in records]
    else:
        given = (
            long.groupby("item", sort=False).size().reindex(ids, fill_value=0)
        ).to_numpy()
    item_info = pd.DataFrame(
        {
            "split": [r.get("split") for r in records],
            "lang": [r.get("lang") for r in records],
            "n_annotators": n_annotators.to_numpy(),
            "n_annotations": given,
        },
        index=pd.Index(ids, name="item"),
    )
    if gap is not None:
        item_info["soft_label_gap"] = gap.to_numpy()
    if any("hard_label" in r for r in records):
        item_info["hard_label"] = [
            None if r.get("hard_label") is None else class_key(r["hard_label"])
            for r in records
        ]
    return item_info


def _task(records):
    """The ``annotation task`` field when the records agree on one, else None."""
    tasks = {r.get("annotation task") for r in records} - {None}
    return tasks.pop() if len(tasks) == 1 else None


def _description(path, fmt, ids, classes, multilabel, long, n_unknown, task) -> str:
    """The Bunch's one-line ``DESCR``."""
    return (
        f"LeWiDi data set {path.name} ({fmt or 'no annotations'} format): "
        f"{len(ids)} items, {len(classes)} {'labels' if multilabel else 'classes'}"
        f", {long['annotator'].nunique()} annotators"
        + (
            f" ({n_unknown} not in the annotator metadata: group {UNKNOWN_GROUP!r})"
            if n_unknown
            else ""
        )
        + (f"; task: {task}" if task else "")
        + "."
    )
