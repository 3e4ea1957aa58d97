"""Writing a LeWiDi 2025 submission: ``<stem>_soft.tsv`` and ``<stem>_pe.tsv``.

:func:`write_lewidi_submission` builds each file's lines from a prediction
checked as the scorer checks it (:func:`._lewidi_layout.soft_matrix`; a
per-annotator label that is not a class is refused), so that a file written
is a file scored. The layout (developer guide §lewidi,
:ref:`lewidi_formats`) is described, and its names kept, in
:mod:`._lewidi_layout`; :mod:`._lewidi_read` reads it back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import refuse_first
from ._lewidi_layout import PERSPECTIVIST_ENDING, SOFT_ENDING, soft_matrix

__all__ = ["write_lewidi_submission"]


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
        texts["soft"] = (folder / f"{name}{SOFT_ENDING}.tsv", _soft_lines(test, soft))
    if perspectivist is not None:
        texts["perspectivist"] = (
            folder / f"{name}{PERSPECTIVIST_ENDING}.tsv",
            _perspectivist_lines(test, perspectivist),
        )
    for path, lines in texts.values():
        path.write_text("".join(lines), encoding="utf-8")
    return {track: path for track, (path, _) in texts.items()}
