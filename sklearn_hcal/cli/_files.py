"""Reading label histograms and predictions from files (``hcal evaluate``).

Every problem with a user's file raises :class:`InputError`, a ``ValueError``
whose message names the file and, where it applies, the row (``line N`` of a
text file, ``row N`` of an array, or the item's ``uid``), so that the command
line can print it on one line.

Formats
-------
Label histograms (``COUNTS``):

* ``.npy`` -- an ``(n_items, n_classes)`` array of counts (or of human
  probabilities); rows are matched to predictions by position.
* ``.csv`` -- a header row of class names, one row per item. A column named
  ``uid`` or ``id`` (or the one given as ``id_column``) holds item ids; every
  other column is a class.
* ``.jsonl`` -- the official ChaosNLI files, read by
  :func:`sklearn_hcal.datasets._chaosnli.read_chaosnli_jsonl` (the one parser
  of the format, shared with :func:`~sklearn_hcal.datasets.load_chaosnli`):
  one JSON object per line with ``uid`` and ``label_count``; the classes are
  ``[e, n, c]`` for three classes (the ``label_count`` order of
  ChaosNLI-SNLI/MNLI) and ``[1, 2]`` for two (ChaosNLI-αNLI; class names are
  compared as text, so a CSV header ``1,2`` matches).

Predictions:

* ``.npy`` -- ``(n_items, n_classes)`` probabilities or logits (a 1-D array is
  P(second class), or its logit, for two classes); matched by position.
* ``.csv`` -- as for histograms: class-name header, optional id column.
* ``.json`` -- the official ChaosNLI prediction format, read by
  :func:`sklearn_hcal.datasets._chaosnli.read_chaosnli_predictions`
  (``predicted_probabilities`` in ``label_count`` order; several models).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..datasets._chaosnli import read_chaosnli_jsonl, read_chaosnli_predictions

__all__ = [
    "InputError",
    "LabeledArray",
    "read_histograms",
    "read_predictions",
    "align_predictions",
]

#: Long class names used by ChaosNLI's ``predicted_label`` and ``old_labels``.
_CLASS_ALIASES = {"entailment": "e", "neutral": "n", "contradiction": "c"}

#: Column names recognised as item ids when no ``id_column`` is given.
DEFAULT_ID_COLUMNS = ("uid", "id")

#: Tolerance on ``|row sum - 1|`` of probability rows (as in ``_validation``).
_ROW_SUM_TOL = 1e-6


class InputError(ValueError):
    """A problem with a user's file or argument; the message is one line."""


@dataclass
class LabeledArray:
    """A 2-D array read from a file, with optional item ids and class names.

    ``where(i)`` describes row ``i`` for error messages in the file's own
    terms (a text line, an array row, a uid).
    """

    values: np.ndarray
    path: str
    ids: np.ndarray | None = None
    classes: list[str] | None = None
    # "line" (text line numbers from first_line), "row" (0-based array rows)
    # or "uid" (records keyed by uid)
    row_kind: str = "row"
    first_line: int = 0
    extra: dict = field(default_factory=dict)

    def where(self, i: int) -> str:
        if self.row_kind == "uid" and self.ids is not None:
            return f"uid {str(self.ids[i])!r}"
        if self.row_kind == "line":
            lines = self.extra.get("lines")
            pos = f"line {lines[i] if lines is not None else i + self.first_line}"
        else:
            pos = f"row {i}"
        if self.ids is not None:
            return f"{pos} (uid {str(self.ids[i])!r})"
        return pos


# --------------------------------------------------------------------------- #
# readers
# --------------------------------------------------------------------------- #
def _check_file(path) -> Path:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{path}: no such file.")
    if p.is_dir():
        raise InputError(f"{path}: is a directory, expected a file.")
    return p


def _suffix(p: Path, allowed: tuple[str, ...], what: str) -> str:
    suffix = p.suffix.lower()
    if suffix not in allowed:
        raise InputError(
            f"{p}: unsupported file type {suffix or '(none)'!r} for {what}; "
            f"expected one of {', '.join(allowed)}."
        )
    return suffix


def _read_npy(p: Path) -> LabeledArray:
    try:
        arr = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(f"{p}: not a readable .npy array ({exc}).") from None
    if arr.dtype.kind not in "biuf":
        raise InputError(f"{p}: expected a numeric array, got dtype {arr.dtype}.")
    if arr.ndim not in (1, 2):
        raise InputError(
            f"{p}: expected a 2-D array (n_items, n_classes), got shape {arr.shape}."
        )
    if arr.shape[0] == 0:
        raise InputError(f"{p}: the array has no rows.")
    return LabeledArray(np.asarray(arr, dtype=np.float64), str(p))


def _read_csv(p: Path, id_column: str | None) -> LabeledArray:
    import pandas as pd

    try:
        df = pd.read_csv(p, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else "empty file"
        raise InputError(f"{p}: not a readable CSV file ({msg}).") from None
    df.columns = [str(c).strip() for c in df.columns]
    if len(set(df.columns)) != len(df.columns):
        raise InputError(f"{p}: the header repeats a column name: {list(df.columns)}.")
    ids = None
    if id_column is not None:
        if id_column not in df.columns:
            raise InputError(
                f"{p}: no id column {id_column!r}; the header is {list(df.columns)}."
            )
        ids = df.pop(id_column).to_numpy(dtype=str)
    else:
        for name in DEFAULT_ID_COLUMNS:
            if name in df.columns:
                ids = df.pop(name).to_numpy(dtype=str)
                break
    if df.shape[1] == 0:
        raise InputError(f"{p}: no class columns besides the id column.")
    if df.shape[0] == 0:
        raise InputError(f"{p}: the file has a header but no data rows.")
    values = np.empty(df.shape, dtype=np.float64)
    for j, col in enumerate(df.columns):
        cells = df[col].str.strip()
        numeric = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64)
        bad = np.isnan(numeric)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            table = LabeledArray(values, str(p), ids, row_kind="line", first_line=2)
            raise InputError(
                f"{p}: {table.where(i)}, column {col!r}: {cells.iloc[i]!r} is not a "
                "number (every column but the id column must hold numbers; pass "
                "--id-column to name the id column)."
            )
        values[:, j] = numeric
    return LabeledArray(
        values,
        str(p),
        ids,
        classes=list(df.columns),
        row_kind="line",
        first_line=2,
    )


def _read_chaosnli_jsonl(p: Path) -> LabeledArray:
    data = read_chaosnli_jsonl(p)
    table = LabeledArray(
        data.counts,
        str(p),
        np.asarray(data.uid),
        classes=data.classes,
        row_kind="line",
        first_line=1,
    )
    table.extra["lines"] = data.lines  # blank lines are skipped
    return table


def _check_unique_ids(table: LabeledArray) -> None:
    if table.ids is None:
        return
    uniq, first, counts = np.unique(table.ids, return_index=True, return_counts=True)
    if np.any(counts > 1):
        dup = uniq[counts > 1][0]
        rows = np.flatnonzero(table.ids == dup)
        raise InputError(
            f"{table.path}: uid {str(dup)!r} appears {counts[counts > 1][0]} times "
            f"({table.where(int(rows[0]))} and {table.where(int(rows[1]))})."
        )


def read_histograms(path, *, id_column: str | None = None) -> LabeledArray:
    """Read label histograms (counts or human probabilities) from a file.

    Parameters
    ----------
    path : str or path-like
        A ``.npy``, ``.csv`` or ChaosNLI ``.jsonl`` file (see the module notes).
    id_column : str, default=None
        Name of the CSV column holding item ids; by default a column named
        ``uid`` or ``id`` is used when present.

    Returns
    -------
    table : LabeledArray
        ``values`` of shape (n_items, n_classes), with ``ids`` and ``classes``
        when the format has them.

    Raises
    ------
    InputError
        When the file is missing, unreadable, or not a valid histogram (the
        message names the file and the row).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from sklearn_hcal.cli._files import read_histograms
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "counts.csv")
    ...     with open(path, "w") as f:
    ...         _ = f.write("uid,cat,dog\\na,3,1\\nb,0,4\\n")
    ...     table = read_histograms(path)
    >>> table.values
    array([[3., 1.],
           [0., 4.]])
    >>> table.classes, table.ids.tolist()
    (['cat', 'dog'], ['a', 'b'])
    """
    p = _check_file(path)
    suffix = _suffix(p, (".npy", ".csv", ".jsonl"), "label histograms")
    if suffix == ".npy":
        table = _read_npy(p)
        if table.values.ndim == 1:
            raise InputError(
                f"{p}: label histograms must be 2-D (n_items, n_classes), got a 1-D "
                f"array of shape {table.values.shape}."
            )
    elif suffix == ".csv":
        table = _read_csv(p, id_column)
    else:
        table = _read_chaosnli_jsonl(p)
    _check_histogram_rows(table)
    _check_unique_ids(table)
    return table


def _check_histogram_rows(table: LabeledArray) -> None:
    Y = table.values
    if Y.shape[1] < 2:
        raise InputError(
            f"{table.path}: label histograms need at least 2 classes (columns), "
            f"got {Y.shape[1]}."
        )
    bad = ~np.all(np.isfinite(Y), axis=1)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{table.path}: {table.where(i)} contains NaN or infinity.")
    bad = np.any(Y < 0, axis=1)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{table.path}: {table.where(i)} has a negative count.")
    integer = np.all(np.mod(Y, 1) == 0, axis=1)
    sums = Y.sum(axis=1)
    if np.all(integer):
        bad = sums == 0
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"{table.path}: {table.where(i)} has no annotations (all counts "
                "are 0); every item needs at least one label."
            )
        return
    # Fractional entries: the rows must be human probabilities.
    bad = np.abs(sums - 1.0) > _ROW_SUM_TOL
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{table.path}: {table.where(i)} is neither integer counts nor "
            f"probabilities summing to 1 (it sums to {sums[i]:.6g})."
        )


def _read_chaosnli_predictions(p: Path) -> dict[str, LabeledArray]:
    return {
        model: LabeledArray(
            data.probabilities,
            str(p),
            np.asarray(data.uid),
            classes=data.classes,
            row_kind="uid",
        )
        for model, data in read_chaosnli_predictions(p).items()
    }


def _softmax_rows(Z: np.ndarray) -> np.ndarray:
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


def read_predictions(
    path, *, id_column: str | None = None, logits: bool = False
) -> dict[str, LabeledArray]:
    """Read predicted class probabilities (or logits) from a file.

    Parameters
    ----------
    path : str or path-like
        A ``.npy``, ``.csv`` or ChaosNLI prediction ``.json`` file.
    id_column : str, default=None
        Name of the CSV column holding item ids (default: ``uid`` or ``id``
        when present).
    logits : bool, default=False
        The values are logits (unnormalised scores): return their softmax. A
        1-D array is then the logit of the second class. Not allowed for
        ChaosNLI ``.json`` files, whose ``predicted_probabilities`` are
        probabilities.

    Returns
    -------
    predictions : dict of str to LabeledArray
        One entry per model: the model names of a ChaosNLI file, ``""`` for
        the single model of any other file. ``values`` are probabilities of
        shape (n_items, n_classes).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from sklearn_hcal.cli._files import read_predictions
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "z.npy")
    ...     np.save(path, np.array([[0.0, 0.0], [0.0, np.log(3.0)]]))
    ...     pred = read_predictions(path, logits=True)
    >>> pred[""].values
    array([[0.5 , 0.5 ],
           [0.25, 0.75]])
    """
    p = _check_file(path)
    suffix = _suffix(p, (".npy", ".csv", ".json"), "predictions")
    if suffix == ".json":
        if logits:
            raise InputError(
                f"{p}: --logits does not apply to a ChaosNLI prediction file, whose "
                "'predicted_probabilities' are probabilities."
            )
        tables = _read_chaosnli_predictions(p)
    else:
        table = _read_npy(p) if suffix == ".npy" else _read_csv(p, id_column)
        V = table.values
        if V.ndim == 1:
            if logits:
                V = np.column_stack([np.zeros_like(V), V])
            else:
                V = np.column_stack([1.0 - V, V])
                table.extra["binary_1d"] = True
            table.values = V
        tables = {"": table}
    for table in tables.values():
        _check_unique_ids(table)
        _check_prediction_rows(table, logits and suffix != ".json")
        if logits and suffix != ".json":
            table.values = _softmax_rows(table.values)
    return tables


def _check_prediction_rows(table: LabeledArray, logits: bool) -> None:
    V = table.values
    where = table.where
    bad = ~np.all(np.isfinite(V), axis=1)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{table.path}: {where(i)} contains NaN or infinity.")
    if logits:
        return
    bad = np.any((V < 0) | (V > 1), axis=1)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{table.path}: {where(i)} has values outside [0, 1], so these are not "
            "probabilities; pass --logits if they are scores."
        )
    sums = V.sum(axis=1)
    bad = np.abs(sums - 1.0) > _ROW_SUM_TOL
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{table.path}: {where(i)}: the probabilities sum to {sums[i]:.6g}, not "
            "1; pass --logits if these are scores."
        )


# --------------------------------------------------------------------------- #
# matching predictions to histograms
# --------------------------------------------------------------------------- #
def _normalise_class(name) -> str:
    s = str(name).strip()
    return _CLASS_ALIASES.get(s.lower(), s)


def align_predictions(
    hist: LabeledArray, pred: LabeledArray, *, name: str = "predictions"
) -> np.ndarray:
    """Predictions reordered to the items and classes of the histograms.

    Items are matched by uid when both files have ids, else by position.
    Classes are matched by name when both files name them (ChaosNLI's long
    names ``entailment``/``neutral``/``contradiction`` equal ``e``/``n``/``c``),
    else by position.

    Parameters
    ----------
    hist : LabeledArray
        From :func:`read_histograms`.
    pred : LabeledArray
        One model of :func:`read_predictions`.
    name : str, default="predictions"
        The prediction's name, used in messages.

    Returns
    -------
    P : ndarray of shape (n_items, n_classes)
        Row ``i`` is the prediction for item ``i`` of ``hist``.

    Raises
    ------
    InputError
        On a uid present in one file only, a duplicate uid, a different number
        of rows or classes, or different class names.
    """
    n_items, n_classes = hist.values.shape
    P = pred.values
    label = f"{pred.path} ({name})" if name else pred.path
    if P.shape[1] != n_classes:
        raise InputError(
            f"{label}: the predictions have {P.shape[1]} classes (columns) but "
            f"{hist.path} has {n_classes}."
        )
    if hist.classes is not None and pred.classes is not None:
        h = [_normalise_class(c) for c in hist.classes]
        q = [_normalise_class(c) for c in pred.classes]
        if h != q:
            if sorted(h) != sorted(q):
                raise InputError(
                    f"{label}: the class names {pred.classes} differ from those of "
                    f"{hist.path}, {hist.classes}."
                )
            P = P[:, [q.index(c) for c in h]]
    if hist.ids is not None and pred.ids is not None:
        index = {uid: i for i, uid in enumerate(pred.ids)}
        known = set(hist.ids)
        unknown = [uid for uid in pred.ids if uid not in known]
        if unknown:
            raise InputError(
                f"{label}: unknown uid {str(unknown[0])!r} (not in {hist.path}); "
                f"{len(unknown)} such uid(s)."
            )
        missing = [uid for uid in hist.ids if uid not in index]
        if missing:
            raise InputError(
                f"{label}: no prediction for uid {str(missing[0])!r} of {hist.path}; "
                f"{len(missing)} item(s) missing."
            )
        return P[[index[uid] for uid in hist.ids]]
    if hist.ids is None and pred.ids is not None:
        raise InputError(
            f"{label}: the predictions are keyed by uid but {hist.path} has no "
            "item ids, so they cannot be matched; give the histograms an id "
            "column (--id-column) or use a ChaosNLI .jsonl file."
        )
    if P.shape[0] != n_items:
        raise InputError(
            f"{label}: {P.shape[0]} rows of predictions but {hist.path} has "
            f"{n_items} items (rows are matched by position)."
        )
    return P
