"""ChaosNLI (Nie et al., 2020): 100 NLI labels per item."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._base import local_file, read_json

#: subset name -> (file name, classes in ``label_count`` order, text fields)
CHAOSNLI_SUBSETS = {
    "snli": ("chaosNLI_snli.jsonl", ["e", "n", "c"], ["premise", "hypothesis"]),
    "mnli": ("chaosNLI_mnli_m.jsonl", ["e", "n", "c"], ["premise", "hypothesis"]),
    "alphanli": (
        "chaosNLI_alphanli.jsonl",
        [1, 2],
        ["obs1", "obs2", "hyp1", "hyp2"],
    ),
}
_ALIASES = {"mnli_m": "mnli", "abdnli": "alphanli", "alpha": "alphanli"}

CHAOSNLI_FOLDER = "chaosnli_v1.0"

#: Classes in ``label_count`` order by number of classes: ``["e", "n", "c"]``
#: for SNLI/MNLI, ``[1, 2]`` (integers, as the file's ``majority_label`` and
#: ``old_label`` of αNLI are) for αNLI. ``hcal evaluate`` matches class names
#: as text, so a CSV header ``1,2`` names the same classes.
CHAOSNLI_CLASSES = {len(c): list(c) for _, c, _ in CHAOSNLI_SUBSETS.values()}


def _canonical_subset(subset: str) -> str:
    key = _ALIASES.get(str(subset).lower(), str(subset).lower())
    if key not in CHAOSNLI_SUBSETS:
        raise ValueError(
            f"subset must be one of {sorted(CHAOSNLI_SUBSETS)} (or the aliases "
            f"{sorted(_ALIASES)}), got {subset!r}."
        )
    return key


def load_chaosnli(subset: str = "snli", *, path: str | os.PathLike | None = None):
    """Load a ChaosNLI subset from the official JSONL file.

    ChaosNLI (Nie et al., 2020) re-annotated SNLI, MNLI-matched and αNLI
    development items with 100 labels each.

    Parameters
    ----------
    subset : {"snli", "mnli", "alphanli"}, default="snli"
        Which subset (``"mnli_m"``, ``"abdnli"`` and ``"alpha"`` are aliases).
    path : str or path-like, default=None
        The folder holding ``chaosNLI_<subset>.jsonl`` or the file itself;
        defaults to ``<data home>/chaosnli_v1.0`` (see ``get_data_home``).

    Returns
    -------
    data : Bunch
        ``counts`` (n, K) int64 label histograms in the file's class order;
        ``classes`` (``["e", "n", "c"]`` for NLI, ``[1, 2]`` for αNLI);
        ``uid``; ``text``, a DataFrame of the example fields;
        ``majority_label``; ``old_label``; ``old_labels`` (the original
        annotators' labels, a list per item, empty where absent);
        ``entropy`` (base 2, as shipped); ``subset``; ``DESCR``.

    Examples
    --------
    >>> from sklearn_hcal.datasets import load_chaosnli
    >>> data = load_chaosnli("snli", path="../shared/data/chaosnli_v1.0")
    ... # doctest: +SKIP
    >>> data.counts.shape  # doctest: +SKIP
    (1514, 3)
    """
    subset = _canonical_subset(subset)
    file = local_file(
        path,
        CHAOSNLI_FOLDER,
        CHAOSNLI_SUBSETS[subset][0],
        what="ChaosNLI",
        how="Pass path= to the folder holding the official chaosNLI_*.jsonl "
        "files, or use sklearn_hcal.datasets.fetch_chaosnli to download them.",
    )
    _, classes, fields = CHAOSNLI_SUBSETS[subset]
    parsed = read_chaosnli_jsonl(file)
    records, counts = parsed.records, parsed.counts
    if counts.shape[1] != len(classes):
        raise ValueError(
            f"{file}: label_count must have {len(classes)} entries per item."
        )
    # Name the line, as the reader does: a count that is negative, fractional
    # or not finite cannot be a number of annotators.
    bad = ~(np.isfinite(counts) & (counts >= 0) & (np.floor(counts) == counts))
    if bad.any():
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        raise ValueError(
            f"{file}: line {parsed.lines[row]} (uid {parsed.uid[row]!r}): "
            f"label_count must hold non-negative integer counts, got "
            f"{parsed.records[row]['label_count']!r}."
        )
    # A repeated uid would make two rows of one item (``text`` is indexed
    # by uid); which one is right is for the user to decide.
    seen = {}
    for row, key in enumerate(parsed.uid):
        if key in seen:
            raise ValueError(
                f"{file}: line {parsed.lines[row]} repeats uid {key!r} of line "
                f"{parsed.lines[seen[key]]}."
            )
        seen[key] = row
    counts = counts.astype(np.int64)
    uid = np.array(parsed.uid, dtype=object)
    text = pd.DataFrame(
        {f: [r.get("example", {}).get(f) for r in records] for f in fields},
        index=pd.Index(uid, name="uid"),
    )
    return Bunch(
        counts=counts,
        classes=np.array(classes, dtype=object),
        uid=uid,
        text=text,
        majority_label=np.array(
            [r.get("majority_label") for r in records], dtype=object
        ),
        old_label=np.array([r.get("old_label") for r in records], dtype=object),
        old_labels=[list(r.get("old_labels") or []) for r in records],
        entropy=np.array([r.get("entropy", np.nan) for r in records], dtype=float),
        subset=subset,
        DESCR=(
            f"ChaosNLI v1.0 ({subset}): {len(records)} items with "
            f"{int(np.median(counts.sum(1)))} labels each (Nie et al., 2020). "
            "Licence CC BY-NC 4.0."
        ),
    )


def _number_row(values, rows, *, where: str, field: str, first: str) -> list:
    """``values`` if it is a list of numbers as long as the first row."""
    if not isinstance(values, list) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
    ):
        raise ValueError(f"{where}: {field} must be a list of numbers, got {values!r}.")
    if rows and len(values) != len(rows[0]):
        raise ValueError(
            f"{where} has {len(values)} classes in {field} but {first} has "
            f"{len(rows[0])}."
        )
    return values


def read_chaosnli_jsonl(file) -> Bunch:
    """Parse a ChaosNLI JSONL file: the one reader of the format.

    Used by :func:`load_chaosnli` and by ``hcal evaluate``. Every error is a
    ``ValueError`` naming the file and the line (and the item's uid).

    Parameters
    ----------
    file : str or path-like
        One JSON object per line with at least ``uid`` and ``label_count``
        (blank lines are skipped).

    Returns
    -------
    data : Bunch
        ``counts`` (n, K) float64 ``label_count`` rows; ``uid`` (list of
        str); ``lines`` (the line number of each item); ``classes``
        (:data:`CHAOSNLI_CLASSES` for K, else None); ``records`` (the parsed
        objects).

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_hcal.datasets._chaosnli import read_chaosnli_jsonl
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "a.jsonl")
    ...     with open(path, "w") as f:
    ...         _ = f.write('{"uid": "x", "label_count": [3, 1]}\\n')
    ...     data = read_chaosnli_jsonl(path)
    >>> data.counts, data.classes
    (array([[3., 1.]]), [1, 2])
    """
    try:
        text = Path(file).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{file}: not a UTF-8 text file.") from None
    uid, rows, lines, records = [], [], [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{file}: line {number} is not valid JSON ({exc.msg})."
            ) from None
        if not isinstance(obj, dict) or "uid" not in obj or "label_count" not in obj:
            raise ValueError(
                f"{file}: line {number} lacks 'uid' or 'label_count' (expected the "
                "ChaosNLI JSONL format)."
            )
        counts = _number_row(
            obj["label_count"],
            rows,
            where=f"{file}: line {number} (uid {obj['uid']!r})",
            field="label_count",
            first=f"line {lines[0]}" if lines else "",
        )
        uid.append(str(obj["uid"]))
        rows.append(counts)
        lines.append(number)
        records.append(obj)
    if not rows:
        raise ValueError(f"{file}: the file holds no items.")
    counts = np.asarray(rows, dtype=np.float64)
    return Bunch(
        counts=counts,
        uid=uid,
        lines=lines,
        classes=CHAOSNLI_CLASSES.get(counts.shape[1]),
        records=records,
    )


def read_chaosnli_predictions(file) -> dict:
    """Parse a ChaosNLI prediction file: ``{model: {uid: record}}``.

    The format of ChaosNLI's released predictions: each record has
    ``predicted_probabilities`` in ``label_count`` order (``[e, n, c]``, or
    ``[1, 2]`` for αNLI). A file holding only ``{uid: record}`` is one
    unnamed model (``""``). Every error is a ``ValueError`` naming the file,
    the model and the uid.

    Parameters
    ----------
    file : str or path-like
        The JSON file.

    Returns
    -------
    models : dict of str to Bunch
        Per model: ``uid`` (list of str), ``probabilities`` (n, K) float64,
        ``classes`` (:data:`CHAOSNLI_CLASSES` for K, else None).

    Examples
    --------
    >>> import json, os, tempfile
    >>> from sklearn_hcal.datasets._chaosnli import read_chaosnli_predictions
    >>> record = {"predicted_probabilities": [0.7, 0.2, 0.1]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "p.json")
    ...     with open(path, "w") as f:
    ...         json.dump({"roberta": {"u1": record}}, f)
    ...     models = read_chaosnli_predictions(path)
    >>> models["roberta"].probabilities, models["roberta"].classes
    (array([[0.7, 0.2, 0.1]]), ['e', 'n', 'c'])
    """
    data = read_json(file, repeats="a uid or model given twice")
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{file}: expected the ChaosNLI prediction format {{model: {{uid: "
            '{"predicted_probabilities": [...]}}}}, got an empty or non-object '
            "document."
        )
    first = next(iter(data.values()))
    if isinstance(first, dict) and "predicted_probabilities" in first:
        data = {"": data}  # {uid: record}: one unnamed model
    out = {}
    for model, records in data.items():
        if not isinstance(records, dict) or not records:
            raise ValueError(
                f"{file}: model {model!r} must map uids to records with "
                "'predicted_probabilities'."
            )
        ids, rows = [], []
        for uid, rec in records.items():
            if not isinstance(rec, dict) or "predicted_probabilities" not in rec:
                raise ValueError(
                    f"{file}: model {model!r}, uid {uid!r}: the record has no "
                    "'predicted_probabilities'."
                )
            if "uid" in rec and str(rec["uid"]) != str(uid):
                raise ValueError(
                    f"{file}: model {model!r}: the record under key {uid!r} has uid "
                    f"{rec['uid']!r}."
                )
            probs = _number_row(
                rec["predicted_probabilities"],
                rows,
                where=f"{file}: model {model!r}, uid {uid!r}",
                field="predicted_probabilities",
                first=f"uid {ids[0]!r}" if ids else "",
            )
            ids.append(str(uid))
            rows.append(probs)
        values = np.asarray(rows, dtype=np.float64)
        out[str(model)] = Bunch(
            uid=ids,
            probabilities=values,
            classes=CHAOSNLI_CLASSES.get(values.shape[1]),
        )
    return out
