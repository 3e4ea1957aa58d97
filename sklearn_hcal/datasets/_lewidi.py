"""LeWiDi's harmonised JSON (2023 and 2025 editions) -> histograms + annotators.

Why one module: the reader of one file format (both editions), its
checks and tables; ``load_lewidi`` is its one public entry.

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
from ._lewidi_frame import lewidi_frame, split_ids

__all__ = ["load_lewidi"]

#: Largest difference tolerated between a shipped soft label and the share of
#: annotations behind it (the files round to 3 decimals, e.g. 0.667).
SOFT_LABEL_TOL = 1e-2


def _class_key(value):
    """A class name as the files mean it: ``"-5"`` -> -5, ``"0.0"`` -> 0."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if np.isfinite(number) and number.is_integer():
        return int(number)
    return number


def _sorted_classes(keys):
    keys = list(dict.fromkeys(keys))
    if all(isinstance(k, (int, float)) for k in keys):
        return sorted(keys)  # a numeric scale, in order
    return keys  # the files' order


def _read(path: Path) -> dict:
    data = read_json(
        path, repeats="an item id or an annotator given twice", trailing_commas=True
    )
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{path} is not a LeWiDi harmonised file: expected a non-empty JSON "
            "object mapping item ids to records."
        )
    return data


def _single_label(item_id, who, label) -> str:
    # A blank (``"1,,0"``) or null label is a malformed record; kept, it
    # became a class named "" (or "None") next to the real ones.
    text = "" if label is None else str(label).strip()
    if not text:
        raise ValueError(
            f"Item {item_id!r}: annotator {str(who).strip()!r} has an empty label."
        )
    return text


def _item_annotations(item_id, record, multilabel):
    """``(format, [(annotator, label or [labels])])`` of one record."""
    ann = record.get("annotations")
    if ann is None or ann == "" or ann == {}:
        return None, []
    if isinstance(ann, dict):
        pairs = []
        for who, label in ann.items():
            if multilabel:  # an empty string is the empty set of labels
                pairs.append((str(who).strip(), split_ids(label)))
            else:
                pairs.append((str(who).strip(), _single_label(item_id, who, label)))
        _check_unique_annotators(item_id, [who for who, _ in pairs])
        return "2025", pairs
    if isinstance(ann, str):
        who = split_ids(record.get("annotators", ""))
        parts = ann.split(",")
        if len(who) != len(parts):
            raise ValueError(
                f"Item {item_id!r}: {len(parts)} annotations but {len(who)} "
                "annotators; the 2023 format pairs them by position."
            )
        labels = [_single_label(item_id, w, part) for w, part in zip(who, parts)]
        _check_unique_annotators(item_id, who)
        return "2023", list(zip(who, labels))
    raise ValueError(
        f"Item {item_id!r}: annotations must be a string (2023) or an object "
        f"(2025), got {type(ann).__name__}."
    )


def _check_unique_annotators(item_id, who) -> None:
    seen = set()
    for name in who:
        name = str(name).strip()
        if name in seen:
            raise ValueError(
                f"Item {item_id!r}: annotator {name!r} is listed twice; each "
                "annotator gives one annotation per item."
            )
        seen.add(name)


def _probability(value, item_id, where="soft_label") -> float:
    try:
        prob = float(value)
    except (TypeError, ValueError):
        prob = np.nan
    # A NaN, a negative or a value above 1 is no probability: kept, a NaN
    # became 0 and a negative entry a distribution summing to 1 in name only.
    if isinstance(value, bool) or not (0.0 <= prob <= 1.0):
        raise ValueError(
            f"Item {item_id!r}: {where} holds {value!r}, not a probability in [0, 1]."
        )
    return prob


def _soft_label_rounding_tol(n_entries: int) -> float:
    """Largest ``|sum − 1|`` of a soft label whose entries were rounded.

    The published files round each entry to 2 or more decimals (CSC's test
    split: 0.99 and 1.01); each rounding moves the sum by at most 0.005.
    """
    return 0.005 * max(int(n_entries), 2)


def _check_sum(item_id, total, n_entries, where="soft_label") -> None:
    if abs(total - 1.0) > _soft_label_rounding_tol(n_entries):
        raise ValueError(
            f"Item {item_id!r}: {where} sums to {total:.6g}, not to 1 (beyond the "
            "rounding of its entries); it is not a distribution."
        )


def _binary_distribution(item_id, label, dist) -> float:
    """P(label applies) from a multi-label entry ``{"0": p0, "1": p1}``."""
    where = f"soft_label[{label!r}]"
    if not isinstance(dist, dict) or not dist:
        raise ValueError(
            f"Item {item_id!r}: {where} is {dist!r}; a multi-label soft label "
            'gives each label a distribution {"0": p, "1": 1 - p}.'
        )
    probs = {}
    for key, value in dist.items():
        k = _class_key(key)
        if k not in (0, 1):
            raise ValueError(
                f"Item {item_id!r}: {where} has the key {key!r}; a multi-label "
                'soft label gives each label a distribution keyed "0" (the label '
                'does not apply) and "1" (it applies), e.g. {"0": 0.25, "1": 0.75}.'
            )
        probs[k] = _probability(value, item_id, where)
    _check_sum(item_id, sum(probs.values()), 2, where)
    return probs[1] if 1 in probs else 1.0 - probs[0]


def _soft_label_table(ids, records, multilabel):
    """Soft labels as a DataFrame (None when no record has one).

    Every row is checked: entries in [0, 1] and (single-label) a sum within
    the rounding of its entries (:func:`_soft_label_rounding_tol`). The rows
    are returned as shipped; whoever uses them as the truth renormalises.
    """
    rows = [r.get("soft_label") or None for r in records]
    if all(row is None for row in rows):
        return None
    if any(row is None for row in rows):
        first = ids[next(i for i, row in enumerate(rows) if row is None)]
        raise ValueError(f"Item {first!r} has no soft_label while others have one.")
    for i, row in zip(ids, rows):
        if not isinstance(row, dict):
            raise ValueError(
                f"Item {i!r}: soft_label is {row!r}, expected an object "
                "{class: probability}."
            )
    if multilabel:
        table = [
            {
                str(lab).strip(): _binary_distribution(i, lab, dist)
                for lab, dist in row.items()
            }
            for i, row in zip(ids, rows)
        ]
        columns = list(dict.fromkeys(k for row in table for k in row))
    else:
        table = []
        for i, row in zip(ids, rows):
            probs = {_class_key(k): _probability(v, i) for k, v in row.items()}
            _check_sum(i, sum(probs.values()), len(probs))
            table.append(probs)
        columns = _sorted_classes(k for row in table for k in row)
    frame = pd.DataFrame.from_records(table, index=pd.Index(ids, name="item"))
    # a class absent from a row's soft label has probability 0 there
    return frame.reindex(columns=columns).fillna(0.0)


def _apply_label_map(labels: pd.Series, label_map) -> pd.Series:
    if label_map is None:
        return labels
    if callable(label_map):
        return labels.map(label_map)
    mapping = {_class_key(k): _class_key(v) for k, v in dict(label_map).items()}
    mapped = labels.map(mapping)
    unmapped = mapped.isna() & labels.notna()
    if unmapped.any():
        bad = list(dict.fromkeys(labels[unmapped].tolist()))[:5]
        raise ValueError(f"label_map does not map the labels {bad}.")
    return mapped


def _meta_path(path: Path, annotators_meta):
    if annotators_meta is None:
        return None
    if isinstance(annotators_meta, str) and annotators_meta == "auto":
        stem = path.stem.rsplit("_", 1)[0]
        candidate = path.with_name(f"{stem}_annotators_meta.json")
        return candidate if candidate.is_file() else None
    meta = Path(annotators_meta).expanduser()
    if not meta.is_file():
        raise FileNotFoundError(f"annotators_meta file {str(meta)!r} not found.")
    return meta


def _read_meta(path: Path, annotator_ids) -> pd.DataFrame:
    data = read_json(path, repeats="an annotator given twice", trailing_commas=True)
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{path} is not a LeWiDi annotator-metadata file: expected a non-empty "
            "JSON object mapping annotator ids to objects of their fields "
            f'({{"Ann1": {{"Gender": ..., "Age": ...}}, ...}}), got {_shown(data)} '
            f"(a JSON {type(data).__name__})."
        )
    for who, fields in data.items():
        if not isinstance(fields, dict):
            raise ValueError(
                f"{path}: annotator {who!r} is {_shown(fields)}; every annotator's "
                "metadata must be a JSON object of fields."
            )
    frame = pd.DataFrame.from_dict(data, orient="index")
    frame.index = [str(i).strip() for i in frame.index]
    known = set(annotator_ids)
    # MP's metadata says "0" where its data says "Ann0".
    if known and not known & set(frame.index):
        prefixed = [f"Ann{i}" for i in frame.index]
        if known <= set(prefixed):
            frame.index = prefixed
    frame.index.name = "annotator"
    return frame


#: The metadata value of annotators that are missing from the metadata file
#: (CSC's lacks 32 of the annotators of its data): an explicit group, so that
#: a report by a metadata field shows how many there are.
UNKNOWN_GROUP = "unknown"


def _with_unknown(frame: pd.DataFrame, annotator_ids):
    """``(frame with the missing annotators added, how many were missing)``.

    The added rows hold :data:`UNKNOWN_GROUP` in text columns and NaN in
    numeric ones (an age cannot be "unknown"); the column ``in_metadata``
    says which rows the file gave.
    """
    missing = [a for a in annotator_ids if a not in set(frame.index)]
    frame = frame.copy()
    frame["in_metadata"] = True
    if not missing:
        return frame, 0
    fill = {
        col: (np.nan if pd.api.types.is_numeric_dtype(frame[col]) else UNKNOWN_GROUP)
        for col in frame.columns
        if col != "in_metadata"
    }
    extra = pd.DataFrame(
        {**fill, "in_metadata": False}, index=pd.Index(missing, name=frame.index.name)
    )
    out = pd.concat([frame, extra.astype({"in_metadata": bool})])
    out.index.name = frame.index.name
    return out, len(missing)


def _shown(value, limit=60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
    multilabel = _is_multilabel(records)
    rows, fmt, soft = _parse_fields(path, ids, records, multilabel)
    long, classes = _long_table(rows, soft, multilabel, label_map)
    counts, classes = _counts(path, ids, long, soft, classes, multilabel)
    n_annotators = long.groupby("item", sort=False)["annotator"].nunique()
    n_annotators = n_annotators.reindex(ids, fill_value=0)
    gap = _soft_label_gap(path, counts, soft, n_annotators, multilabel)
    if soft is not None and not multilabel:
        annotated = n_annotators.to_numpy() > 0 if counts is not None else None
        soft = _renormalise_soft_only(path, soft, annotated)
    text = _text_table(ids, records)
    item_info = _item_info(ids, records, long, n_annotators, gap, multilabel)
    annotators, n_unknown = _annotator_table(path, annotators_meta, long)
    try:
        frame = lewidi_frame(path.name, ids, records, long, text, annotators)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc
    return _bunch(
        path,
        ids,
        records,
        fmt,
        multilabel,
        classes,
        counts=counts,
        soft_labels=soft,
        annotations=_wide_annotations(long, classes, multilabel),
        frame=frame,
        annotators=annotators,
        text=text,
        item_info=item_info,
        n_unknown=n_unknown,
    )


def _read_records(path: Path):
    """Read the file: ``(item ids, records)``, each record a JSON object."""
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
                f"{path}: item {item_id!r} is {_shown(record)} (a JSON "
                f"{type(record).__name__}); every item must be a JSON object of "
                "fields (text, annotators, annotations, soft_label, ...)."
            )
    return ids, records


def _is_multilabel(records) -> bool:
    """Whether a soft label gives a label a distribution of its own (VariErrNLI)."""
    return any(
        isinstance(r.get("soft_label"), dict)
        and any(isinstance(v, dict) for v in r["soft_label"].values())
        for r in records
    )


def _parse_fields(path, ids, records, multilabel):
    """Parse each record's annotations and soft label: ``(rows, format, soft)``."""
    formats, rows = {}, []
    try:
        for item_id, record in zip(ids, records):
            fmt, pairs = _item_annotations(item_id, record, multilabel)
            if fmt is not None:
                formats.setdefault(fmt, item_id)
            rows.extend((item_id, who, label) for who, label in pairs)
        soft = _soft_label_table(ids, records, multilabel)
    except ValueError as exc:
        # The record-level messages name the item; add the file.
        raise ValueError(f"{path}: {exc}") from exc
    if len(formats) > 1:
        raise ValueError(
            f"{path} mixes the 2023 and 2025 annotation formats: item "
            f"{formats['2023']!r} gives its annotations as a comma-separated "
            f"string (2023), item {formats['2025']!r} as an object "
            "{annotator: label} (2025)."
        )
    return rows, (next(iter(formats)) if formats else None), soft


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
    raw = long["label"].map(_class_key)
    long["label"] = _apply_label_map(raw, label_map)
    if label_map is not None:
        long["raw_label"] = raw
    return long, classes


def _counts(path, ids, long, soft, classes, multilabel):
    """Histograms of the long table per item: ``(counts or None, classes)``."""
    counts = None
    if multilabel:
        if len(long):
            counts = (
                _wide_annotations(long, classes, True)
                .groupby("item", sort=False)[classes]
                .sum()
            )
    else:
        extra = [c for c in pd.unique(long["label"]) if c not in set(classes)]
        if extra and soft is not None:
            warn_user(
                f"{path.name}: the annotations hold labels {extra[:5]} that are not "
                f"soft-label classes {classes}; counts is None. Pass label_map= to "
                "map annotations onto the classes (hcal evaluate: --label-map)."
            )
            return None, classes
        classes = _sorted_classes(classes + extra)
        if len(long):
            counts = annotations_to_histograms(
                long, annotator="annotator", classes=classes, duplicates="keep"
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
        n_annotations = [_n_annotations(r) for r in records]
    else:
        n_annotations = (
            long.groupby("item", sort=False).size().reindex(ids, fill_value=0)
        ).to_numpy()
    item_info = pd.DataFrame(
        {
            "split": [r.get("split") for r in records],
            "lang": [r.get("lang") for r in records],
            "n_annotators": n_annotators.to_numpy(),
            "n_annotations": n_annotations,
        },
        index=pd.Index(ids, name="item"),
    )
    if gap is not None:
        item_info["soft_label_gap"] = gap.to_numpy()
    if any("hard_label" in r for r in records):
        item_info["hard_label"] = [
            None if r.get("hard_label") is None else _class_key(r["hard_label"])
            for r in records
        ]
    return item_info


def _annotator_table(path, annotators_meta, long):
    """Attach the annotator metadata: ``(table or None, how many were unknown)``."""
    meta = _meta_path(path, annotators_meta)
    if meta is None:
        return None, 0
    who = long["annotator"].unique()
    return _with_unknown(_read_meta(meta, who), who)


def _bunch(path, ids, records, fmt, multilabel, classes, *, n_unknown, **tables):
    """The returned Bunch: the tables, ``other_info``, the task and a description."""
    tasks = {r.get("annotation task") for r in records} - {None}
    task = tasks.pop() if len(tasks) == 1 else None
    n_annotators = tables["annotations"]["annotator"].nunique()
    return Bunch(
        counts=tables["counts"],
        soft_labels=tables["soft_labels"],
        classes=np.array(classes, dtype=object),
        annotations=tables["annotations"],
        frame=tables["frame"],
        annotators=tables["annotators"],
        text=tables["text"],
        item_info=tables["item_info"],
        other_info=pd.Series(
            [r.get("other_info") for r in records],
            index=pd.Index(ids, name="item"),
            dtype=object,
        ),
        multilabel=multilabel,
        format=fmt,
        task=task,
        path=str(path),
        DESCR=(
            f"LeWiDi data set {path.name} ({fmt or 'no annotations'} format): "
            f"{len(ids)} items, {len(classes)} {'labels' if multilabel else 'classes'}"
            f", {n_annotators} annotators"
            + (
                f" ({n_unknown} not in the annotator metadata: group {UNKNOWN_GROUP!r})"
                if n_unknown
                else ""
            )
            + (f"; task: {task}" if task else "")
            + "."
        ),
    )


def _n_annotations(record) -> int:
    """The number of labels given (an annotator may give several)."""
    ann = record.get("annotations")
    if isinstance(ann, dict):
        return sum(len(split_ids(v)) for v in ann.values())
    return 0
