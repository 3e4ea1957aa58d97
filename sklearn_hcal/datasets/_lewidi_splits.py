"""Training splits of one LeWiDi data set combined into one long table.

:func:`combine_lewidi_splits` keeps every annotation of splits that reuse an
item id for other items, qualifying the repeated ids and returning the
original ones as cross-validation groups.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pandas as pd
from sklearn.utils import Bunch

__all__ = ["combine_lewidi_splits"]


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
