"""LeWiDi's record fields, parsed and checked: annotations and soft labels.

The part of :func:`~sklearn_hcal.datasets.load_lewidi` that reads one
edition's fields of each record (the two editions' formats are described in
:mod:`sklearn_hcal.datasets._lewidi`): the ``(item, annotator, label)`` rows
of the annotations, the soft-label table (each entry a probability, each row
a distribution up to the rounding of its entries) and the class names as the
files mean them. Every message names the item and the value.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._lewidi_frame import split_ids

__all__ = [
    "apply_label_map",
    "class_key",
    "is_multilabel",
    "n_annotations",
    "parse_fields",
    "sorted_classes",
]


def class_key(value):
    """A class name as the files mean it: ``"-5"`` -> -5, ``"0.0"`` -> 0."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if np.isfinite(number) and number.is_integer():
        return int(number)
    return number


def sorted_classes(keys):
    """Distinct class names: a numeric scale in order, else the files' order."""
    keys = list(dict.fromkeys(keys))
    if all(isinstance(k, (int, float)) for k in keys):
        return sorted(keys)  # a numeric scale, in order
    return keys  # the files' order


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
        k = class_key(key)
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
            probs = {class_key(k): _probability(v, i) for k, v in row.items()}
            _check_sum(i, sum(probs.values()), len(probs))
            table.append(probs)
        columns = sorted_classes(k for row in table for k in row)
    frame = pd.DataFrame.from_records(table, index=pd.Index(ids, name="item"))
    # a class absent from a row's soft label has probability 0 there
    return frame.reindex(columns=columns).fillna(0.0)


def apply_label_map(labels: pd.Series, label_map) -> pd.Series:
    if label_map is None:
        return labels
    if callable(label_map):
        return labels.map(label_map)
    mapping = {class_key(k): class_key(v) for k, v in dict(label_map).items()}
    mapped = labels.map(mapping)
    unmapped = mapped.isna() & labels.notna()
    if unmapped.any():
        bad = list(dict.fromkeys(labels[unmapped].tolist()))[:5]
        raise ValueError(f"label_map does not map the labels {bad}.")
    return mapped


def is_multilabel(records) -> bool:
    """Whether a soft label gives a label a distribution of its own (VariErrNLI)."""
    return any(
        isinstance(r.get("soft_label"), dict)
        and any(isinstance(v, dict) for v in r["soft_label"].values())
        for r in records
    )


def parse_fields(path, ids, records, multilabel):
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


def n_annotations(record) -> int:
    """The number of labels given (an annotator may give several)."""
    ann = record.get("annotations")
    if isinstance(ann, dict):
        return sum(len(split_ids(v)) for v in ann.values())
    return 0
