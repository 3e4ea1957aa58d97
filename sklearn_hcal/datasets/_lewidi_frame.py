"""LeWiDi's long table: one row per (item, annotator), with everything known.

:func:`~sklearn_hcal.datasets.load_lewidi` returns it as ``frame``: the input
of per-annotator models (:class:`~sklearn_hcal.perspectivist.PerspectivistClassifier`)
and of aggregation. Each row joins what the file says about one annotator's
judgement of one item:

* ``item``, ``annotator`` -- the keys; the annotators of an item are its
  ``annotators`` field (in its order, each once), or the keys of its
  ``annotations`` when the field is absent. A test file without annotations
  still gives one row per listed annotator, with a missing label: those are
  the pairs a perspectivist submission predicts;
* ``label`` -- the annotation as :func:`load_lewidi` reads it (numeric scales
  as numbers, ``label_map`` applied; ``raw_label`` beside it with
  ``label_map``); for multi-label data the *tuple* of the labels chosen, in
  the order of ``classes`` (``("contradiction", "neutral")``, ``()`` for
  none): a tuple is hashable, prints and saves as it reads, and one order
  makes equal sets equal tuples;
* the item's text fields (2025: ``Question1``/``Question2``,
  ``context``/``statement``, ...; 2023: ``text``);
* ``explanation`` -- the annotator's own explanation, when the file ships
  ``other_info.explanations`` (Paraphrase, VariErrNLI): a list aligned with
  the ``annotators`` field, which VariErrNLI repeats once per label an
  annotator gave; an annotator's explanations are joined with a newline, in
  the file's order;
* the annotator's metadata columns (2025), with the explicit ``"unknown"``
  group (and ``in_metadata`` False) for annotators the metadata lacks.

A text or metadata field whose name is taken (``label``, ``item``, ...) is
prefixed (``text_``, ``annotator_``). The annotator metadata table itself
(``<Set>_annotators_meta.json``, :func:`annotator_table`) is read here too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..utils._warnings import warn_user
from ._base import read_json

__all__ = [
    "UNKNOWN_GROUP",
    "annotator_table",
    "lewidi_frame",
    "shown",
    "split_ids",
]

#: The columns the long table always starts with, and the explanation's.
KEY_COLUMNS = ("item", "annotator", "label")
EXPLANATION = "explanation"


def split_ids(text) -> list[str]:
    """``"Ann1, Ann2,"`` -> ``["Ann1", "Ann2"]`` (a list passes through)."""
    if isinstance(text, (list, tuple)):
        return [str(part).strip() for part in text if str(part).strip()]
    return [part.strip() for part in str(text).split(",") if part.strip()]


def _listed_annotators(item_id, record, annotated):
    """The item's annotators: its ``annotators`` field, once each, in order."""
    field = record.get("annotators")
    listed = split_ids(field) if field not in (None, "") else []
    if not listed:
        return list(annotated), None
    unique = list(dict.fromkeys(listed))
    if annotated and set(unique) != set(annotated):
        only_field = [a for a in unique if a not in annotated]
        only_ann = [a for a in annotated if a not in set(unique)]
        raise ValueError(
            f"Item {item_id!r}: the annotators field lists {unique} but the "
            f"annotations come from {list(annotated)} (only in the field: "
            f"{only_field}; only in the annotations: {only_ann})."
        )
    return unique, listed


def _explanations(item_id, record, listed, path_name):
    """``{annotator: explanation}`` of one item (empty without explanations)."""
    info = record.get("other_info")
    texts = info.get("explanations") if isinstance(info, dict) else None
    if texts is None or (isinstance(texts, list) and not texts):
        return {}  # none shipped (an empty list included)
    if not isinstance(texts, list) or listed is None or len(texts) != len(listed):
        n_texts = len(texts) if isinstance(texts, list) else type(texts).__name__
        n_listed = "no" if listed is None else len(listed)
        warn_user(
            f"{path_name}: item {item_id!r} has {n_texts} explanations for "
            f"{n_listed} entries of its annotators field; explanations are "
            "aligned with that field, so this item's are left out (missing)."
        )
        return {}
    out: dict[str, list[str]] = {}
    for who, text in zip(listed, texts):
        if text is not None and str(text).strip():
            out.setdefault(who, []).append(str(text))
    return {who: "\n".join(parts) for who, parts in out.items()}


def _free_name(name, taken, prefix):
    while name in taken:
        name = f"{prefix}{name}"
    return name


def _by_item(items, annotators, labels) -> dict:
    """``{item: {annotator: label}}`` in the table's order."""
    out: dict = {}
    for item, who, label in zip(items, annotators, labels):
        out.setdefault(item, {})[who] = label
    return out


def lewidi_frame(
    path_name,
    ids,
    records,
    annotations: pd.DataFrame,
    text: pd.DataFrame,
    annotators: pd.DataFrame | None,
) -> pd.DataFrame:
    """The long table of one file (see the module docstring).

    ``annotations`` is the loader's one long table of the annotations read:
    ``item``, ``annotator``, ``label`` (final: class keys, mapped,
    multi-label tuples) and, with ``label_map``, ``raw_label``.
    """
    keys = annotations["item"], annotations["annotator"]
    labels_by_item = _by_item(*keys, annotations["label"])
    has_raw = "raw_label" in annotations
    raw_by_item = _by_item(*keys, annotations["raw_label"]) if has_raw else None
    rows_item, rows_who, rows_label, rows_raw, rows_expl = [], [], [], [], []
    any_explanations = False
    for item_id, record in zip(ids, records):
        annotated = labels_by_item.get(item_id, {})
        who, listed = _listed_annotators(item_id, record, annotated)
        explained = _explanations(item_id, record, listed, path_name)
        info = record.get("other_info")
        any_explanations |= isinstance(info, dict) and "explanations" in info
        raw = raw_by_item.get(item_id, {}) if raw_by_item is not None else {}
        for name in who:
            rows_item.append(item_id)
            rows_who.append(name)
            rows_label.append(annotated.get(name))
            rows_raw.append(raw.get(name))
            rows_expl.append(explained.get(name))
    frame = pd.DataFrame({"item": rows_item, "annotator": rows_who})
    labels = pd.Series(rows_label, dtype=object)
    if len(labels) and labels.notna().all() and not isinstance(labels[0], tuple):
        labels = pd.Series(labels.tolist())  # the dtype of the labels (int64 ...)
    frame["label"] = labels
    if raw_by_item is not None:
        frame["raw_label"] = pd.Series(rows_raw, dtype=object)
    taken = set(frame.columns) | {EXPLANATION}
    fields = {c: _free_name(str(c), taken, "text_") for c in text.columns}
    taken |= set(fields.values())
    texts = text.rename(columns=fields)
    frame = frame.join(texts, on="item")
    if any_explanations:
        frame[EXPLANATION] = pd.Series(rows_expl)  # text; missing where absent
    if annotators is not None:
        meta = {c: _free_name(str(c), taken, "annotator_") for c in annotators.columns}
        frame = frame.join(annotators.rename(columns=meta), on="annotator")
    return frame


#: The metadata value of annotators that are missing from the metadata file
#: (CSC's lacks 32 of the annotators of its data): an explicit group, so that
#: a report by a metadata field shows how many there are.
UNKNOWN_GROUP = "unknown"


def shown(value, limit=60) -> str:
    """``repr(value)``, cut to ``limit`` characters for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _meta_path(path: Path, annotators_meta):
    """The metadata file to read (None: none), ``"auto"`` looking beside ``path``."""
    if annotators_meta is None:
        return None
    if isinstance(annotators_meta, str) and annotators_meta == "auto":
        stem = path.stem.rsplit("_", 1)[0]
        candidate = path.with_name(f"{stem}_annotators_meta.json")
        return candidate if candidate.is_file() else None
    meta = Path(annotators_meta).expanduser()
    if meta.is_dir():
        raise ValueError(
            f"annotators_meta {str(meta)!r} is a folder; pass the metadata file "
            "(<Set>_annotators_meta.json) or 'auto'."
        )
    if not meta.is_file():
        raise FileNotFoundError(f"annotators_meta file {str(meta)!r} not found.")
    return meta


def _read_meta(path: Path, annotator_ids) -> pd.DataFrame:
    """The metadata file as a table indexed by the data's annotator ids."""
    data = read_json(path, repeats="an annotator given twice", trailing_commas=True)
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{path} is not a LeWiDi annotator-metadata file: expected a non-empty "
            "JSON object mapping annotator ids to objects of their fields "
            f'({{"Ann1": {{"Gender": ..., "Age": ...}}, ...}}), got {shown(data)} '
            f"(a JSON {type(data).__name__})."
        )
    for who, fields in data.items():
        if not isinstance(fields, dict):
            raise ValueError(
                f"{path}: annotator {who!r} is {shown(fields)}; every annotator's "
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
    if known and not known & set(frame.index):
        raise ValueError(
            f"{path} names none of the data's {len(known)} annotators (e.g. "
            f"{sorted(known)[0]!r}; it names {str(frame.index[0])!r}, ...): it is "
            "not the annotator metadata of this data set."
        )
    frame.index.name = "annotator"
    return frame


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


def annotator_table(path, annotators_meta, long):
    """Attach the annotator metadata: ``(table or None, how many were unknown)``."""
    meta = _meta_path(path, annotators_meta)
    if meta is None:
        return None, 0
    who = long["annotator"].unique()
    return _with_unknown(_read_meta(meta, who), who)
