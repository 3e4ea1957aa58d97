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

The values are checked by :mod:`sklearn_hcal.cli._values`, i.e. by the
library's own checks (:mod:`sklearn_hcal._validation`) told how this file
names its rows and columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..datasets._shared import read_chaosnli_jsonl, read_chaosnli_predictions
from ._errors import InputError
from ._values import check_histogram_values, check_prediction_values

__all__ = [
    "InputError",
    "LabeledArray",
    "read_histograms",
    "read_predictions",
]

#: Column names recognised as item ids when no ``id_column`` is given.
DEFAULT_ID_COLUMNS = ("uid", "id")

#: The first bytes of every ``.npy`` file (NumPy's format specification).
_NPY_MAGIC = b"\x93NUMPY"


@dataclass
class LabeledArray:
    """A 2-D array read from a file, with optional item ids and class names.

    ``where(i)`` describes row ``i`` for error messages in the file's own
    terms (a text line, an array row, a uid); ``column_names`` (None: ``column
    j``) the columns.
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
    column_names: list[str] | None = None

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
def _check_file(path, *, option: str = "") -> Path:
    """``path`` as a readable file, else one clear InputError (``option``:
    the flag that named it, e.g. ``"--predict "``)."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{option}{path}: no such file.")
    if p.is_dir():
        raise InputError(f"{option}{path}: is a directory, expected a file.")
    try:
        with open(p, "rb"):
            pass
    except OSError as exc:
        raise InputError(
            f"{option}{path}: cannot be read ({exc.strerror or exc})."
        ) from None
    return p


def _suffix(p: Path, allowed: tuple[str, ...], what: str) -> str:
    suffix = p.suffix.lower()
    if suffix not in allowed:
        raise InputError(
            f"{p}: unsupported file type {suffix or '(none)'!r} for {what}; "
            f"expected one of {', '.join(allowed)}."
        )
    return suffix


def _not_npy(p: Path, head: bytes) -> InputError:
    """Why a file without NumPy's header is not a ``.npy`` array.

    Without the header ``np.load`` would try to unpickle the bytes (and
    advise loading unsafely); a file that is not an array is never loaded.
    """
    if not head:
        why = "the file is empty"
    elif head.startswith(b"PK"):
        why = "it is a zip archive (an .npz file?); save a single array with numpy.save"
    else:
        why = (
            "it does not start with the NumPy header (\\x93NUMPY), so it was not "
            "written by numpy.save"
        )
    return InputError(f"{p}: not a valid .npy array: {why}.")


def _read_npy(p: Path) -> LabeledArray:
    fmt = np.lib.format
    with open(p, "rb") as f:
        head = f.read(len(_NPY_MAGIC))
        if head != _NPY_MAGIC:
            raise _not_npy(p, head)
        f.seek(0)
        try:
            version = fmt.read_magic(f)
            if version == (1, 0):
                shape, _, dtype = fmt.read_array_header_1_0(f)
            else:  # 2.0; 3.0 only differs by utf-8 field names
                shape, _, dtype = fmt.read_array_header_2_0(f)
        except (ValueError, TypeError, SyntaxError, EOFError, UnicodeDecodeError):
            raise InputError(
                f"{p}: not a valid .npy array: its header is damaged."
            ) from None
    if dtype.hasobject or dtype.kind not in "biuf":
        raise InputError(
            f"{p}: expected an array of numbers, got dtype {dtype} (hcal reads "
            "numeric arrays only, never Python objects)."
        )
    if len(shape) not in (1, 2):
        raise InputError(
            f"{p}: expected a 2-D array (n_items, n_classes), got shape {shape}."
        )
    if shape[0] == 0:
        raise InputError(f"{p}: the array has no rows.")
    try:
        arr = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError):
        raise InputError(
            f"{p}: not a valid .npy array: the data is truncated (the header "
            f"announces shape {shape} of {dtype})."
        ) from None
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
        column_names=[f"column {c!r}" for c in df.columns],
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
        column_names=[f"label_count[{j}]" for j in range(data.counts.shape[1])],
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


def read_histograms(
    path, *, id_column: str | None = None, renormalize: bool = False
) -> LabeledArray:
    """Read label histograms (counts or human probabilities) from a file.

    Parameters
    ----------
    path : str or path-like
        A ``.npy``, ``.csv`` or ChaosNLI ``.jsonl`` file (see the module notes).
    id_column : str, default=None
        Name of the CSV column holding item ids; by default a column named
        ``uid`` or ``id`` is used when present.
    renormalize : bool, default=False
        For a file of human distributions (non-integer entries): divide rows
        that do not sum to 1 by their sums, with a warning (rows within
        :func:`~sklearn_hcal._validation.row_sum_tolerance` are accepted
        anyway). Integer counts are never changed.

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
    check_histogram_values(table, renormalize=renormalize)
    _check_unique_ids(table)
    return table


def _read_chaosnli_predictions(p: Path) -> dict[str, LabeledArray]:
    return {
        model: LabeledArray(
            data.probabilities,
            str(p),
            np.asarray(data.uid),
            classes=data.classes,
            row_kind="uid",
            column_names=[
                f"predicted_probabilities[{j}]"
                for j in range(data.probabilities.shape[1])
            ],
        )
        for model, data in read_chaosnli_predictions(p).items()
    }


def read_predictions(
    path,
    *,
    id_column: str | None = None,
    logits: bool = False,
    renormalize: bool = False,
    n_classes: int | None = None,
    n_classes_from: str | None = None,
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
    renormalize : bool, default=False
        Divide rows of non-negative values that do not sum to 1 by their sums,
        with a warning (rows within
        :func:`~sklearn_hcal._validation.row_sum_tolerance`, e.g. rounded to
        3 decimals, are accepted anyway).
    n_classes : int, default=None
        The number of classes of the histograms (a different count, or a 1-D
        file when it is not 2, is an error naming ``n_classes_from``).
    n_classes_from : str, default=None
        Where ``n_classes`` comes from (the histogram file), for messages.

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
        tables = {"": table}
    for model, table in tables.items():
        _check_unique_ids(table)
        table.values = check_prediction_values(
            table,
            f"{p} (model {model!r})" if model else str(p),
            logits=logits,
            renormalize=renormalize,
            n_classes=n_classes,
            n_classes_from=n_classes_from,
        )
    return tables
