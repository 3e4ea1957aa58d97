"""LeWiDi 2025 submission files: written, read, and training splits combined.

Why one module: the files' layouts are written and read here and nowhere
else, so a layout changes in one place for both directions.

The official submission of a data set is two files (developer guide
§lewidi, :ref:`lewidi_formats`):

* ``<stem>_soft.tsv`` -- ``item_id<TAB>[p, ...]``: each item's soft label in
  the class order of the data set (numeric scales increasing); multi-label
  sets (VariErrNLI) the nested ``[[1 - p, p], ...]`` pairs, one per label,
  that the evaluation notebook's ``multilabel_average_MD`` reads;
* ``<stem>_pe.tsv`` -- ``item_id<TAB>[label, ...]``: one label per distinct
  annotator of the item, in the order of its ``annotators`` field
  (multi-label: each annotator's list of labels).

:func:`read_lewidi_submission` reads these and every other layout ``hcal
evaluate`` accepts; :func:`~sklearn_hcal.metrics.lewidi_scores` scores
what it returns.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from .._validation import refuse_first
from ._base import read_json

__all__ = [
    "TWO_DECIMALS",
    "class_named",
    "combine_lewidi_splits",
    "read_lewidi_submission",
    "write_lewidi_submission",
]


#: How far a probability written with 2 decimals may be off, per entry:
#: the soft labels' rounding rule (developer guide §lewidi).
TWO_DECIMALS = 0.005


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


# --------------------------------------------------------------------------- #
# Writing
# --------------------------------------------------------------------------- #
def _stem(test, stem) -> str:
    if stem is not None:
        stem = str(stem)
        if not stem or Path(stem).name != stem or stem in (".", ".."):
            raise ValueError(
                f"stem must be a file name without a folder (e.g. "
                f"'Paraphrase_test'), got {stem!r}; the folder is out_dir."
            )
        return stem
    path = test.get("path") if isinstance(test, dict) else getattr(test, "path", None)
    if path is None:
        raise ValueError(
            "stem=None needs test.path (load_lewidi sets it); pass stem=, e.g. "
            "stem='Paraphrase_test'."
        )
    return Path(path).stem


def _label_value(value):
    """A label as JSON writes it: ``1`` for ``1.0``, lists for label sets."""
    if isinstance(value, (tuple, list, set, frozenset, np.ndarray)):
        return [str(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return int(value) if float(value).is_integer() else float(value)
    return str(value)


def _soft_lines(test, soft) -> list[str]:
    ids = [str(i) for i in test.item_info.index]
    # checked as the scorer checks it: a file written is a file it scores
    values = soft_matrix(soft, ids, test.classes)
    lines = []
    for item, row in zip(ids, values.tolist()):
        if test.multilabel:
            text = ", ".join(f"[{1.0 - p!r}, {p!r}]" for p in row)
        else:
            text = ", ".join(repr(p) for p in row)
        lines.append(f"{item}\t[{text}]\n")
    return lines


def _refuse_off_scale(rows, labels, test) -> None:
    """Refuse a label that is not a class of ``test`` (a missing one, NaN,
    among them), naming its item and annotator: the file would be scored
    as a wrong answer, or refused, later."""
    known = {str(_label_value(c)) for c in test.classes}
    multilabel = bool(test.multilabel)

    def off(value) -> bool:
        if multilabel:
            if not isinstance(value, (tuple, list, set, frozenset, np.ndarray)):
                return True
            return any(str(_label_value(v)) not in known for v in value)
        if isinstance(value, (tuple, list, set, frozenset, np.ndarray)):
            return True
        return str(_label_value(value)) not in known

    wrong = np.fromiter((off(v) for v in labels.tolist()), bool, len(labels))
    what = "a label set of the classes" if multilabel else "one of the classes"
    refuse_first(
        wrong,
        lambda row: (
            f"perspectivist: item {rows['item'].iat[row]!r}, annotator "
            f"{rows['annotator'].iat[row]!r}: the label {labels[row]!r} is not "
            f"{what} {[str(c) for c in test.classes]}."
        ),
    )


def _perspectivist_lines(test, perspectivist) -> list[str]:
    rows = test.frame[["item", "annotator"]].astype(str)
    if isinstance(perspectivist, pd.DataFrame):
        needed = {"item", "annotator", "label"}
        if not needed <= set(perspectivist.columns):
            raise ValueError(
                "perspectivist must have the columns item, annotator and label; "
                f"its columns are {list(perspectivist.columns)}."
            )
        keyed = perspectivist.assign(
            item=perspectivist["item"].astype(str),
            annotator=perspectivist["annotator"].astype(str),
        ).set_index(["item", "annotator"])["label"]
        if keyed.index.has_duplicates:
            raise ValueError(
                f"perspectivist: the pair {keyed.index[keyed.index.duplicated()][0]} "
                "appears twice."
            )
        index = pd.MultiIndex.from_frame(rows)
        position = keyed.index.get_indexer(index)
        if (position < 0).any():
            first = index[np.flatnonzero(position < 0)[0]]
            strangers = keyed.index.difference(index)
            stranger = (
                f"; it labels {len(strangers)} (item, annotator) pair(s) that test "
                f"does not annotate, e.g. {strangers[0]}"
                if len(strangers)
                else ""
            )
            raise ValueError(
                f"perspectivist: no label for (item, annotator) {first}; every "
                f"annotator listed by test needs one{stranger}."
            )
        labels = keyed.to_numpy()[position]
    else:
        labels = np.asarray(perspectivist, dtype=object)
        if labels.ndim != 1 or len(labels) != len(rows):
            raise ValueError(
                f"perspectivist: {len(labels)} labels for the {len(rows)} rows of "
                "test.frame; pass one label per row, in its order (predict's "
                "output), or a table with item, annotator and label."
            )
    _refuse_off_scale(rows, labels, test)
    per_item: dict = {}
    for item, value in zip(rows["item"].tolist(), labels.tolist()):
        per_item.setdefault(item, []).append(_label_value(value))
    return [f"{item}\t{json.dumps(values)}\n" for item, values in per_item.items()]


def write_lewidi_submission(
    out_dir: str | os.PathLike,
    test,
    *,
    soft: pd.DataFrame | None = None,
    perspectivist=None,
    stem: str | None = None,
) -> dict[str, Path]:
    """Write a LeWiDi 2025 submission: ``<stem>_soft.tsv``, ``<stem>_pe.tsv``.

    Parameters
    ----------
    out_dir : str or path-like
        The folder to write in, created (with its parents) when missing; a
        file of that name is refused.
    test : Bunch
        The file predicted, as :func:`load_lewidi` returns it: its items,
        classes and (per item) annotators give the files' rows and order.
    soft : DataFrame or None, default=None
        Each item's soft label, indexed by item id, one column per class
        (``PerspectivistClassifier.predict_soft_labels``); multi-label: the
        probability that each label applies, written as ``[1 - p, p]``.
    perspectivist : DataFrame, array-like or None, default=None
        Each annotator's label: a table with columns ``item``,
        ``annotator``, ``label``, or one label per row of ``test.frame``
        (``PerspectivistClassifier.predict`` on it); label sets for
        multi-label data.
    stem : str or None, default=None
        The files' stem; None: the stem of ``test.path``
        (``Paraphrase_test``).

    Returns
    -------
    paths : dict
        ``{"soft": path, "perspectivist": path}`` of the files written.

    See Also
    --------
    read_lewidi_submission : reads them back.
    sklearn_hcal.metrics.lewidi_scores : scores them.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> import pandas as pd
    >>> from sklearn_hcal.datasets import load_lewidi, write_lewidi_submission
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> records = {"7": {"annotators": "A,B", "annotations": {"A": "0", "B": "1"},
    ...                  "soft_label": {"0": 0.5, "1": 0.5}, "text": "t"}}
    >>> _ = (folder / "toy_test.json").write_text(json.dumps(records))
    >>> test = load_lewidi(folder / "toy_test.json")
    >>> soft = pd.DataFrame([[0.25, 0.75]], index=["7"], columns=[0, 1])
    >>> paths = write_lewidi_submission(folder, test, soft=soft,
    ...                                 perspectivist=[1, 1])
    >>> paths["soft"].read_text()
    '7\\t[0.25, 0.75]\\n'
    >>> paths["perspectivist"].read_text()
    '7\\t[1, 1]\\n'
    """
    if soft is None and perspectivist is None:
        raise ValueError("Pass soft=, perspectivist= or both: nothing to write.")
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"out_dir {str(out_dir)!r} exists and is not a folder.")
    folder.mkdir(parents=True, exist_ok=True)
    name = _stem(test, stem)
    texts = {}
    if soft is not None:
        texts["soft"] = (folder / f"{name}_soft.tsv", _soft_lines(test, soft))
    if perspectivist is not None:
        texts["perspectivist"] = (
            folder / f"{name}_pe.tsv",
            _perspectivist_lines(test, perspectivist),
        )
    for path, lines in texts.values():
        path.write_text("".join(lines), encoding="utf-8")
    return {track: path for track, (path, _) in texts.items()}


# --------------------------------------------------------------------------- #
# Reading
# --------------------------------------------------------------------------- #
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


def _label_set(value) -> tuple:
    """A multi-label prediction: a list of labels or ``"a,b"``."""
    parts = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return tuple(str(x).strip() for x in parts if str(x).strip())


def submission_track(path: str | os.PathLike) -> str:
    """The track of a submission file by its official name: ``"perspectivist"``
    for a stem ending ``_pe`` (``X_pe.tsv``), else ``"soft"``.

    >>> submission_track("out/Paraphrase_test_pe.tsv"), submission_track("a.tsv")
    ('perspectivist', 'soft')
    """
    return "perspectivist" if Path(path).stem.endswith("_pe") else "soft"


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


# --------------------------------------------------------------------------- #
# Training splits combined
# --------------------------------------------------------------------------- #
def combine_lewidi_splits(
    datasets: Sequence, *, names: Sequence[str] | None = None
) -> Bunch:
    """The long tables of several splits of one data set, as one.

    Item ids may repeat across splits for different items (VariErrNLI's
    train and dev files reuse 4 premise ids -- 111338, 129081, 32754, 84781
    -- for other statements): a plain ``pd.concat`` of the frames then holds
    an annotator labelling "one" item twice, and dropping the repeats would
    lose genuine annotations. Here an id already used by an earlier split
    is qualified with the split's name (``"dev:111338"``), every annotation
    is kept, and the original id is returned as the cross-validation group,
    so that items of one premise never sit on both sides of a fold.

    Parameters
    ----------
    datasets : sequence of Bunch
        Splits as :func:`load_lewidi` returns them (train, dev, ...).
    names : sequence of str or None, default=None
        The name each split qualifies its repeated ids with; None: each
        split's ``item_info["split"]`` (e.g. ``"dev"``), else its position.

    Returns
    -------
    combined : Bunch
        frame : DataFrame
            The splits' ``frame`` tables, one after the other, ids qualified.
        annotations : DataFrame
            The splits' ``annotations``, ids qualified the same way.
        groups : Series
            Each row of ``frame``'s original item id (for ``GroupKFold``).
        renamed : dict
            ``{qualified id: original id}``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from sklearn_hcal.datasets import load_lewidi, combine_lewidi_splits
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> def split(name, label):
    ...     record = {"annotators": "A", "annotations": {"A": label},
    ...               "soft_label": {"0": float(label == "0"),
    ...                              "1": float(label == "1")},
    ...               "text": "t", "split": name}
    ...     path = folder / f"toy_{name}.json"
    ...     _ = path.write_text(json.dumps({"1": record}))
    ...     return load_lewidi(path)
    >>> both = combine_lewidi_splits([split("train", "0"), split("dev", "1")])
    >>> both.frame[["item", "annotator", "label"]]
        item annotator  label
    0      1         A      0
    1  dev:1         A      1
    >>> both.groups.tolist()
    ['1', '1']
    """
    if isinstance(datasets, (str, bytes, os.PathLike, Mapping)):
        raise ValueError(
            "datasets must be a list of the splits load_lewidi returns (e.g. "
            f"[train, dev]), got a {type(datasets).__name__}."
        )
    datasets = list(datasets)
    if not datasets:
        raise ValueError("datasets is empty: pass the loaded splits.")
    _check_splits(datasets)
    if names is None:
        names = [_split_name(d, k) for k, d in enumerate(datasets)]
    names = [str(n) for n in names]
    if len(names) != len(datasets):
        raise ValueError(f"{len(names)} names for {len(datasets)} datasets.")
    frames, tables, groups, renamed, seen = [], [], [], {}, set()
    for name, data in zip(names, datasets):
        ids = [str(i) for i in data.item_info.index]
        mapping = {i: f"{name}:{i}" for i in ids if i in seen}
        taken = sorted(set(mapping.values()) & (seen | set(ids)))
        if taken:
            raise ValueError(
                f"split {name!r}: the qualified id {taken[0]!r} is already an item "
                "id; pass other names=."
            )
        renamed.update({v: k for k, v in mapping.items()})
        seen |= {mapping.get(i, i) for i in ids}
        frame = data.frame.assign(item=data.frame["item"].astype(str))
        groups.append(frame["item"].copy())
        frames.append(frame.assign(item=frame["item"].replace(mapping)))
        ann = data.annotations.assign(item=data.annotations["item"].astype(str))
        tables.append(ann.assign(item=ann["item"].replace(mapping)))
    frame = pd.concat(frames, ignore_index=True)
    return Bunch(
        frame=frame,
        annotations=pd.concat(tables, ignore_index=True),
        groups=pd.concat(groups, ignore_index=True).rename("group"),
        renamed=renamed,
    )


def _check_splits(datasets) -> None:
    """Refuse what is not a split of one data set: not a Bunch of
    :func:`load_lewidi`, or classes (or multi-label-ness) unlike the first's,
    whose annotations could not be one table."""
    fields = ("frame", "annotations", "item_info", "classes", "multilabel")
    for k, data in enumerate(datasets):
        lacking = [f for f in fields if not hasattr(data, f)]
        if lacking:
            raise ValueError(
                f"datasets[{k}] is a {type(data).__name__}, not a split as "
                f"load_lewidi returns it (it lacks {lacking})."
            )
    first = [str(c) for c in datasets[0].classes]
    for k, data in enumerate(datasets[1:], start=1):
        classes = [str(c) for c in data.classes]
        if classes != first or bool(data.multilabel) != bool(datasets[0].multilabel):
            raise ValueError(
                f"datasets[{k}] has the classes {classes}"
                f"{' (multi-label)' if data.multilabel else ''}, datasets[0] "
                f"{first}{' (multi-label)' if datasets[0].multilabel else ''}: "
                "splits of one data set share their classes; these are not "
                "splits of one data set."
            )


def _split_name(data, position) -> str:
    info = getattr(data, "item_info", None)
    if info is not None and "split" in info and info["split"].notna().any():
        values = info["split"].dropna().unique()
        if len(values) == 1:
            return str(values[0])
    return f"split{position}"
