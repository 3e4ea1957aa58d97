"""Reading a LeWiDi 2025 submission file, in every layout ``hcal evaluate`` reads.

:func:`read_lewidi_submission` reads the official files (``.tsv``, the
layout of :mod:`._lewidi_layout`) and the JSON and CSV layouts
participants write, refusing an item missing, extra or given twice and a
value that is not a number or a label, with the file, line and item named;
:func:`~sklearn_hcal.metrics.lewidi_scores` scores what it returns.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ._base import read_json
from ._lewidi_layout import TWO_DECIMALS, _as_class, submission_track

__all__ = ["read_lewidi_submission"]


#: numpy 2 prints a list of its scalars as ``[np.float64(0.1), ...]``.
_NUMPY_SCALAR = re.compile(r"\bnp\.(?:float|int)(?:16|32|64)\(([^()]*)\)")
_NOT_A_NUMBER = re.compile(r"\b(?:nan|inf|infinity)\b", re.IGNORECASE)


def _parse_tsv_value(p: Path, lineno: int, item: str, value: str):
    value = _NUMPY_SCALAR.sub(r"\1", value.strip())
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        pass
    where = f"{p}: line {lineno} (item {item!r})"
    found = _NOT_A_NUMBER.search(value)
    if found:
        raise ValueError(
            f"{where}: the list holds {found.group(0)!r}, not a number: every "
            "entry must be a finite number (a probability, or a label)."
        )
    raise ValueError(f"{where}: {value!r} is not a list.")


def _read_tsv(p: Path) -> dict:
    rows = {}
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{p}: not a UTF-8 text file.") from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        item, sep, value = line.partition("\t")
        if not sep:
            raise ValueError(
                f"{p}: line {lineno}: expected 'item_id<TAB>[values]', got {line!r}."
            )
        item = item.strip()
        parsed = _parse_tsv_value(p, lineno, item, value)
        if item in rows:
            raise ValueError(f"{p}: line {lineno}: item {item!r} appears twice.")
        rows[item] = parsed
    if not rows:
        raise ValueError(f"{p}: the file has no predictions.")
    return rows


def _read_json_rows(p: Path) -> dict:
    data = read_json(p, repeats="an item id given twice")
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{p}: expected a JSON object mapping item ids to predictions, got "
            f"a JSON {type(data).__name__}."
        )
    return {str(k).strip(): v for k, v in data.items()}


def _read_csv_rows(p: Path, id_column) -> dict:
    table = pd.read_csv(p, dtype=str, keep_default_na=False)
    names = [id_column] if id_column is not None else ["id", "uid"]
    found = [c for c in names if c in table.columns]
    if not found:
        raise ValueError(
            f"{p}: a CSV prediction file needs an id column ({' or '.join(names)}); "
            f"its columns are {list(table.columns)}."
        )
    ids = table.pop(found[0]).str.strip()
    repeated = ids.duplicated(keep=False).to_numpy()
    if repeated.any():
        first = ids.iloc[int(np.flatnonzero(repeated)[0])]
        lines = (np.flatnonzero((ids == first).to_numpy()) + 2).tolist()
        raise ValueError(
            f"{p}: uid {first!r} appears {len(lines)} times (line {lines[0]} of "
            f"{p.name} and line {lines[1]}); an item's prediction is given once."
        )
    return {i: dict(zip(table.columns, row)) for i, row in zip(ids, table.to_numpy())}


def _rows(p: Path, suffixes, id_column=None) -> dict:
    suffix = p.suffix.lower()
    if suffix not in suffixes:
        raise ValueError(
            f"{p}: unsupported file type {suffix or '(none)'!r}; expected "
            f"{', '.join(suffixes)}."
        )
    if suffix == ".tsv":
        return _read_tsv(p)
    if suffix == ".json":
        return _read_json_rows(p)
    return _read_csv_rows(p, id_column)


def _check_items(p, rows, ids) -> None:
    missing = [i for i in ids if i not in rows]
    if missing:
        raise ValueError(
            f"{p}: no prediction for {len(missing)} of the {len(ids)} items, e.g. "
            f"item {missing[0]!r}; every item of the truth needs one."
        )
    known = set(ids)
    extra = [i for i in rows if i not in known]
    if extra:
        raise ValueError(
            f"{p}: item {extra[0]!r} (and {len(extra) - 1} more) is not in the "
            "truth file."
        )


def _number(p, item, value, what) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{p}: item {item!r}: {what} is {value!r}, not a number.")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{p}: item {item!r}: {what} is {value!r}, not a number."
        ) from None


def _label_probability(p, item, label, value) -> float:
    """P(label applies): a number, a pair ``[1 − p, p]`` or ``{"0": 1 − p,
    "1": p}`` (the truth file's soft-label layout)."""
    what = f"label {label!r}"
    if isinstance(value, dict):
        keys = {str(k).strip(): v for k, v in value.items()}
        if set(keys) != {"0", "1"}:
            raise ValueError(
                f"{p}: item {item!r}, {what}: expected {{'0': 1 - p, '1': p}}, got "
                f"{value!r}."
            )
        value = [keys["0"], keys["1"]]
    if not isinstance(value, (list, tuple)):
        return _number(p, item, value, what)
    if len(value) != 2:
        raise ValueError(
            f"{p}: item {item!r}, {what}: expected P(applies) or the pair "
            f"[1 - p, p], got {value!r}."
        )
    no, yes = (_number(p, item, v, what) for v in value)
    total = no + yes
    # a pair rounded to 2 decimals may miss 1 by 0.01 (developer guide §lewidi)
    if not (np.isfinite(total) and abs(total - 1.0) <= TWO_DECIMALS * 2):
        raise ValueError(
            f"{p}: item {item!r}, {what}: the pair {list(value)!r} sums to "
            f"{total:.6g}, not 1; it is not a distribution [1 - p, p]."
        )
    if abs(total - 1.0) <= 1e-12 or not (0 <= no and 0 <= yes):
        return yes  # as written: [1 - p, p] computed in floats
    return yes / total


def _soft_row(p, item, value, classes, multilabel) -> list:
    if isinstance(value, dict):
        row = {_as_class(k, classes): v for k, v in value.items()}
        unknown = [k for k in row if k not in classes]
        if unknown:
            raise ValueError(
                f"{p}: item {item!r} predicts the classes {unknown}, not among "
                f"the classes {classes} of the truth."
            )
        value = [row.get(c, 0.0) for c in classes]
    if not isinstance(value, (list, tuple)) or len(value) != len(classes):
        layout = (
            "per-label probabilities or [1 - p, p] pairs"
            if multilabel
            else "probabilities"
        )
        raise ValueError(
            f"{p}: item {item!r}: expected {len(classes)} {layout} (classes "
            f"{classes}), got {value!r}."
        )
    if multilabel:
        return [_label_probability(p, item, c, v) for c, v in zip(classes, value)]
    return [_number(p, item, v, f"class {c!r}") for c, v in zip(classes, value)]


def _read_soft(p: Path, test, id_column) -> pd.DataFrame:
    rows = _rows(p, (".json", ".tsv", ".csv"), id_column)
    ids = [str(i) for i in test.item_info.index]
    _check_items(p, rows, ids)
    classes = [str(c) for c in test.classes]
    values = np.array(
        [_soft_row(p, i, rows[i], classes, test.multilabel) for i in ids],
        dtype=np.float64,
    ).reshape(len(ids), len(classes))
    # as written: lewidi_scores checks that they are probabilities
    return pd.DataFrame(
        values,
        index=pd.Index(ids, name="item"),
        columns=pd.Index(list(test.classes)),
    )


def _read_perspectivist(p: Path, test) -> pd.DataFrame:
    rows = _rows(p, (".json", ".tsv"))
    ann = test.frame[["item", "annotator"]].astype(str)
    ids = list(dict.fromkeys(ann["item"]))
    _check_items(p, rows, ids)
    who = ann.groupby("item", sort=False)["annotator"].agg(list)
    records = []
    for item in ids:
        value = rows[item]
        if isinstance(value, (list, tuple)):
            if len(value) != len(who[item]):
                raise ValueError(
                    f"{p}: item {item!r}: {len(value)} labels for its "
                    f"{len(who[item])} annotators {who[item]}."
                )
            value = dict(zip(who[item], value))
        if not isinstance(value, dict):
            raise ValueError(
                f"{p}: item {item!r}: expected {{annotator: label}} or a list of "
                f"labels, got {value!r}."
            )
        value = {str(k).strip(): v for k, v in value.items()}
        for annotator in who[item]:
            if annotator not in value:
                raise ValueError(
                    f"{p}: item {item!r}: no prediction for annotator {annotator!r}."
                )
            label = value[annotator]
            if test.multilabel:
                parts = (
                    label if isinstance(label, (list, tuple)) else str(label).split(",")
                )
                label = tuple(str(x).strip() for x in parts if str(x).strip())
            records.append((item, annotator, label))
    return pd.DataFrame(records, columns=["item", "annotator", "label"])


def read_lewidi_submission(
    path: str | os.PathLike,
    test,
    *,
    track: str | None = None,
    id_column: str | None = None,
) -> pd.DataFrame:
    """Read one file of a LeWiDi submission, in any layout ``hcal evaluate`` reads.

    Parameters
    ----------
    path : str or path-like
        The file. Soft track: ``.tsv`` (``item_id<TAB>[p, ...]``, class order
        of the data set; multi-label: probabilities or ``[1 - p, p]``
        pairs), ``.json`` (``{item: {class: p}}`` or ``{item: [p, ...]}``),
        ``.csv`` (a header ``id,<class>,...``). Perspectivist track:
        ``.tsv`` (``item_id<TAB>[label, ...]``, one per distinct annotator
        in the order of the item's ``annotators`` field) or ``.json``
        (``{item: {annotator: label}}``).
    test : Bunch
        The truth, as :func:`load_lewidi` returns it: its items and classes
        (and annotators) are the ones the file must cover, each once.
    track : {"soft", "perspectivist"} or None, default=None
        None: ``"perspectivist"`` for a name ending ``_pe`` (``X_pe.tsv``),
        else ``"soft"``.
    id_column : str or None, default=None
        The id column of a CSV file (default ``id`` or ``uid``).

    Returns
    -------
    DataFrame
        Soft: indexed by item id in ``test``'s order, one column per class of
        ``test`` (multi-label: P(label applies)), as written (rows are not
        divided by their sums; :func:`~sklearn_hcal.metrics.lewidi_scores`
        checks them). Perspectivist: the long table ``item``,
        ``annotator``, ``label`` (multi-label: a tuple of labels) in the
        order of ``test.frame``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from sklearn_hcal.datasets import load_lewidi, read_lewidi_submission
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> records = {"7": {"annotators": "A,B", "annotations": {"A": "0", "B": "1"},
    ...                  "soft_label": {"0": 0.5, "1": 0.5}, "text": "t"}}
    >>> _ = (folder / "toy_test.json").write_text(json.dumps(records))
    >>> _ = (folder / "toy_test_pe.tsv").write_text("7\\t[1, 0]\\n")
    >>> test = load_lewidi(folder / "toy_test.json")
    >>> read_lewidi_submission(folder / "toy_test_pe.tsv", test)
      item annotator  label
    0    7         A      1
    1    7         B      0
    """
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{path}: is a folder; pass one submission file of it.")
    if not p.is_file():
        raise ValueError(f"{path}: no such file.")
    if track is None:
        track = submission_track(p)
    if track == "soft":
        return _read_soft(p, test, id_column)
    if track == "perspectivist":
        return _read_perspectivist(p, test)
    raise ValueError(f"track must be 'soft' or 'perspectivist', got {track!r}.")
