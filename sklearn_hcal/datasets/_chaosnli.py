"""ChaosNLI (Nie et al., 2020): 100 NLI labels per item."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._base import get_data_home

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


def _canonical_subset(subset: str) -> str:
    key = _ALIASES.get(str(subset).lower(), str(subset).lower())
    if key not in CHAOSNLI_SUBSETS:
        raise ValueError(
            f"subset must be one of {sorted(CHAOSNLI_SUBSETS)} (or the aliases "
            f"{sorted(_ALIASES)}), got {subset!r}."
        )
    return key


def _resolve_file(subset: str, path) -> Path:
    fname = CHAOSNLI_SUBSETS[subset][0]
    if path is None:
        path = get_data_home() / CHAOSNLI_FOLDER
    path = Path(path).expanduser()
    candidate = path / fname if path.is_dir() else path
    if not candidate.is_file():
        raise FileNotFoundError(
            f"ChaosNLI file {fname!r} not found at {str(path)!r}. Pass path= to the "
            "folder holding the official chaosNLI_*.jsonl files, or use "
            "sklearn_hcal.datasets.fetch_chaosnli to download them."
        )
    return candidate


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
    file = _resolve_file(subset, path)
    _, classes, fields = CHAOSNLI_SUBSETS[subset]
    records = []
    with open(file, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"{file}: line {lineno} is not valid JSON ({exc.msg})."
                ) from exc
    if not records:
        raise ValueError(f"{file} holds no items.")
    try:
        counts = np.array([r["label_count"] for r in records], dtype=np.int64)
        uid = np.array([r["uid"] for r in records], dtype=object)
    except (KeyError, ValueError) as exc:
        raise ValueError(
            f"{file} is not in the ChaosNLI format (fields uid, label_count): {exc}"
        ) from exc
    if counts.ndim != 2 or counts.shape[1] != len(classes):
        raise ValueError(
            f"{file}: label_count must have {len(classes)} entries per item."
        )
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
