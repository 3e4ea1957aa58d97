"""``hcal evaluate`` on a LeWiDi file: the official tracks' scores.

When ``COUNTS`` is a LeWiDi harmonised ``.json`` file (2023 or 2025 format,
read by :func:`sklearn_hcal.datasets.load_lewidi`), the truth is that file
and every prediction file is keyed by item id. The printed metrics are the
track's official ones (LeWiDi 2025 evaluation notebook, LeWiDi 2023
starting kit):

* soft track (``--track soft``, the default): Manhattan distance; the
  Wasserstein distance for ordinal sets (numeric scales of more than two
  points: Paraphrase −5..5, CSC 1..6, or any set given ``--order``); the
  soft cross-entropy for files in the 2023 format; for multi-label sets
  (VariErrNLI) the multi-label Manhattan distance;
* perspectivist track (``--track perspectivist``): the error rate and, for
  ordinal sets, the normalised absolute distance (divided by the number of
  points of the scale).

The truth of an item is the share of its annotations (the counts); an item
without annotations (a test split) uses its shipped soft label. With
``--official-rounding`` each item's value and the mean are rounded to 5
decimals, the convention of the LeWiDi 2025 scorer (its leaderboard's
numbers).

Prediction files (every item of the truth, matched by id):

* soft, ``.json``: ``{item_id: {class: p, ...}}`` or ``{item_id: [p, ...]}``
  (a list in the class order of the truth file, as printed by ``--help``'s
  notes: numeric classes in increasing order, others in the file's order);
  multi-label: ``{item_id: {label: P(label applies)}}`` or a list;
* soft, ``.tsv`` (the official submission layout, no header): ``item_id``,
  a tab, then the list ``[p, ...]`` in class order;
* soft, ``.csv``: a header ``id,<class>,<class>...`` (the id column named
  ``id``, ``uid`` or ``--id-column``);
* perspectivist, ``.json``: ``{item_id: {annotator: label}}`` (multi-label:
  a list of labels or a comma-separated string); ``.tsv``: ``item_id``, a
  tab, the list of labels in the order of the item's ``annotators``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd

from ._errors import InputError

__all__ = ["is_lewidi_truth", "lewidi_report"]

#: Decimals of the LeWiDi 2025 scorer (each item's value, then the mean).
OFFICIAL_DECIMALS = 5


def is_lewidi_truth(path) -> bool:
    """Whether ``COUNTS`` names a LeWiDi harmonised JSON file."""
    return Path(path).suffix.lower() == ".json"


def load_truth(path, order=None):
    """``(data, truth, classes, ordinal)`` of a LeWiDi file.

    ``truth`` is (n_items, n_classes): shares of the annotations, or the
    soft label of items without annotations. ``order`` (class names as
    text) reorders the columns and makes the set ordinal.
    """
    from ..datasets import load_lewidi

    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file.")
    try:
        data = load_lewidi(p, annotators_meta=None)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    classes = [str(c) for c in data.classes]
    if data.multilabel:
        if data.counts is None:
            raise InputError(
                f"{path}: a multi-label file without annotations has no truth "
                "per label to score against."
            )
        n = data.item_info["n_annotators"].to_numpy(dtype=np.float64)
        truth = data.counts.to_numpy(dtype=np.float64) / np.maximum(n, 1)[:, None]
    else:
        truth = _single_label_truth(path, data)
    ordinal = (
        not data.multilabel
        and len(classes) > 2
        and all(isinstance(c, (int, float)) for c in data.classes)
    )
    if order is not None:
        if data.multilabel:
            raise InputError("--order does not apply to a multi-label file.")
        perm = order_positions(classes, order, path)
        truth, classes, ordinal = truth[:, perm], [classes[j] for j in perm], True
    return data, truth, classes, ordinal


def _single_label_truth(path, data):
    soft = data.soft_labels
    if data.counts is None:
        if soft is None:
            raise InputError(
                f"{path}: the file has neither annotations nor soft labels."
            )
        return soft.to_numpy(dtype=np.float64)
    counts = data.counts.to_numpy(dtype=np.float64)
    totals = counts.sum(axis=1)
    truth = counts / np.maximum(totals, 1.0)[:, None]
    empty = totals == 0
    if empty.any():
        if soft is None:
            item = data.counts.index[np.flatnonzero(empty)[0]]
            raise InputError(
                f"{path}: item {item!r} has no annotations and no soft label."
            )
        truth[empty] = soft.reindex(columns=data.counts.columns).to_numpy()[empty]
    return truth


def order_positions(classes, order, where) -> list[int]:
    """Column positions of ``order`` (class names, compared as text)."""
    names = [str(c).strip() for c in order]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"--order names the class {dup!r} twice: {names}.")
    if sorted(names) != sorted(classes):
        raise InputError(
            f"--order {names} does not name the classes of {where}: {list(classes)}."
        )
    return [list(classes).index(n) for n in names]


# --------------------------------------------------------------------------- #
# Prediction files
# --------------------------------------------------------------------------- #
def _read_json_predictions(p: Path):
    from ..datasets._shared import read_json

    try:
        data = read_json(p, repeats="an item id given twice")
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(data, dict) or not data:
        raise InputError(
            f"{p}: expected a JSON object mapping item ids to predictions, got "
            f"a JSON {type(data).__name__}."
        )
    return {str(k).strip(): v for k, v in data.items()}


def _read_tsv_predictions(p: Path):
    rows = {}
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p}: not a UTF-8 text file.") from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        item, sep, value = line.partition("\t")
        if not sep:
            raise InputError(
                f"{p}: line {lineno}: expected 'item_id<TAB>[values]', got {line!r}."
            )
        try:
            parsed = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            raise InputError(
                f"{p}: line {lineno} (item {item.strip()!r}): {value.strip()!r} is "
                "not a list."
            ) from None
        item = item.strip()
        if item in rows:
            raise InputError(f"{p}: line {lineno}: item {item!r} appears twice.")
        rows[item] = parsed
    if not rows:
        raise InputError(f"{p}: the file has no predictions.")
    return rows


def _soft_row(p, item, value, classes):
    if isinstance(value, dict):
        row = {str(k).strip(): v for k, v in value.items()}
        # "1.0" and "1" name the same numeric class
        row = {_as_class(k, classes): v for k, v in row.items()}
        unknown = [k for k in row if k not in classes]
        if unknown:
            raise InputError(
                f"{p}: item {item!r} predicts the classes {unknown}, not among "
                f"the classes {classes} of the truth."
            )
        value = [row.get(c, 0.0) for c in classes]
    if not isinstance(value, (list, tuple)) or len(value) != len(classes):
        raise InputError(
            f"{p}: item {item!r}: expected {len(classes)} probabilities (classes "
            f"{classes}), got {value!r}."
        )
    try:
        return [float(v) for v in value]
    except (TypeError, ValueError):
        raise InputError(f"{p}: item {item!r}: {value!r} holds a non-number.") from None


def _as_class(key, classes):
    if key in classes:
        return key
    try:
        number = float(key)
    except ValueError:
        return key
    for c in classes:
        try:
            if float(c) == number:
                return c
        except ValueError:
            continue
    return key


def _check_items(p, rows, ids):
    missing = [i for i in ids if i not in rows]
    if missing:
        raise InputError(
            f"{p}: no prediction for {len(missing)} of the {len(ids)} items, e.g. "
            f"item {missing[0]!r}; every item of the truth needs one."
        )
    extra = [i for i in rows if i not in set(ids)]
    if extra:
        raise InputError(
            f"{p}: item {extra[0]!r} (and {len(extra) - 1} more) is not in the "
            "truth file."
        )


def read_soft_predictions(path, ids, classes, *, multilabel, id_column=None):
    """(n_items, n_classes) predictions in the truth's item and class order."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file.")
    suffix = p.suffix.lower()
    if suffix == ".csv":
        from ._files import _read_csv

        table = _read_csv(p, id_column)
        if table.ids is None:
            raise InputError(
                f"{p}: a CSV prediction file needs an id column (id or uid)."
            )
        rows = {
            str(i).strip(): dict(zip(table.classes, row))
            for i, row in zip(table.ids, table.values)
        }
    elif suffix == ".tsv":
        rows = _read_tsv_predictions(p)
    elif suffix == ".json":
        rows = _read_json_predictions(p)
    else:
        raise InputError(
            f"{p}: unsupported prediction file type {suffix or '(none)'!r} for a "
            "LeWiDi truth; expected .json, .tsv or .csv."
        )
    _check_items(p, rows, ids)
    values = np.array([_soft_row(p, i, rows[i], classes) for i in ids])
    bad = ~np.isfinite(values) | (values < 0) | (values > 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(
            f"{p}: item {ids[i]!r}, class {classes[j]!r}: {values[i, j]!r} is not a "
            "probability in [0, 1]."
        )
    if not multilabel:
        from .._validation import row_sum_tolerance

        sums = values.sum(axis=1)
        off = np.abs(sums - 1.0) > row_sum_tolerance(len(classes))
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise InputError(
                f"{p}: item {ids[i]!r}: the probabilities sum to {sums[i]:.6g}, not 1."
            )
    return values


def read_perspectivist_predictions(path, data):
    """The predictions as a long table like ``data.annotations``."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file.")
    suffix = p.suffix.lower()
    if suffix == ".json":
        rows = _read_json_predictions(p)
    elif suffix == ".tsv":
        rows = _read_tsv_predictions(p)
    else:
        raise InputError(
            f"{p}: unsupported file type {suffix or '(none)'!r} for per-annotator "
            "predictions; expected .json or .tsv."
        )
    ann = data.annotations
    ids = list(dict.fromkeys(ann["item"]))
    _check_items(p, rows, ids)
    who = ann.groupby("item", sort=False)["annotator"].agg(list)
    records = []
    for item in ids:
        value = rows[item]
        if isinstance(value, (list, tuple)):
            if len(value) != len(who[item]):
                raise InputError(
                    f"{p}: item {item!r}: {len(value)} labels for its "
                    f"{len(who[item])} annotators {who[item]}."
                )
            value = dict(zip(who[item], value))
        if not isinstance(value, dict):
            raise InputError(
                f"{p}: item {item!r}: expected {{annotator: label}} or a list of "
                f"labels, got {value!r}."
            )
        value = {str(k).strip(): v for k, v in value.items()}
        for annotator in who[item]:
            if annotator not in value:
                raise InputError(
                    f"{p}: item {item!r}: no prediction for annotator {annotator!r}."
                )
            records.append((item, annotator, value[annotator]))
    pred = pd.DataFrame(records, columns=["item", "annotator", "label"])
    if data.multilabel:
        labels = [str(c) for c in data.classes]

        def split(v):
            parts = v if isinstance(v, (list, tuple)) else str(v).split(",")
            return {str(x).strip() for x in parts if str(x).strip()}

        sets = pred["label"].map(split)
        for row, chosen in zip(pred.itertuples(), sets):
            unknown = chosen - set(labels)
            if unknown:
                raise InputError(
                    f"{p}: item {row.item!r}, annotator {row.annotator!r}: labels "
                    f"{sorted(unknown)} are not among {labels}."
                )
        indicators = pd.DataFrame(
            [[int(lab in s) for lab in labels] for s in sets], columns=labels
        )
        pred = pd.concat([pred[["item", "annotator"]], indicators], axis=1)
    return pred


# --------------------------------------------------------------------------- #
# Scores
# --------------------------------------------------------------------------- #
def _mean(per_item, rounding):
    if not rounding:
        return float(np.mean(per_item))
    per_item = np.round(per_item, OFFICIAL_DECIMALS)
    return float(np.round(np.mean(per_item), OFFICIAL_DECIMALS))


def soft_scores(truth, pred, *, ordinal, fmt, multilabel, rounding=False):
    """``{metric: value}`` of the soft track (per-item means)."""
    from ..metrics._shared import (
        manhattan_per_item,
        multilabel_manhattan_per_item,
        soft_cross_entropy_per_item,
        wasserstein_per_item,
    )

    if multilabel:
        per_item = multilabel_manhattan_per_item(truth, pred)
        return {"multilabel_manhattan_distance": _mean(per_item, rounding)}
    out = {"manhattan_distance": _mean(manhattan_per_item(truth, pred), rounding)}
    if ordinal:
        out["wasserstein_distance"] = _mean(wasserstein_per_item(truth, pred), rounding)
    if fmt == "2023":
        per_item = soft_cross_entropy_per_item(truth, pred)
        out["soft_cross_entropy"] = _mean(per_item, rounding)
    return out


def perspectivist_scores(data, pred, *, ordinal, classes, rounding=False):
    """``{metric: value}`` of the perspectivist track."""
    from ..metrics._shared import annotator_distances, annotator_errors, annotator_pairs

    label = [str(c) for c in data.classes] if data.multilabel else "label"
    ann = data.annotations
    if data.multilabel:
        ann = ann.rename(columns={c: str(c) for c in data.classes})
    try:
        keys, t, p, multilabel = annotator_pairs(ann, pred, "item", "annotator", label)
    except ValueError as exc:
        raise InputError(f"perspectivist predictions: {exc}") from None

    def item_mean(values):
        per_item = pd.Series(values).groupby(keys["item"].to_numpy(), sort=False).mean()
        return _mean(per_item.to_numpy(), rounding)

    out = {"perspectivist_error_rate": item_mean(annotator_errors(t, p, multilabel))}
    if ordinal:
        try:
            dist = annotator_distances(t, p, multilabel, classes, None)
        except ValueError as exc:
            raise InputError(f"perspectivist predictions: {exc}") from None
        out["perspectivist_absolute_distance"] = item_mean(dist)
    return out


def lewidi_report(args) -> pd.DataFrame:
    """The report of ``hcal evaluate`` with a LeWiDi truth file."""
    order = None
    if args.order is not None:
        order = [t.strip() for t in args.order.split(",") if t.strip()]
    data, truth, classes, ordinal = load_truth(args.counts, order)
    ids = [str(i) for i in data.item_info.index]
    rounding = args.official_rounding
    rows = {}
    for name, path in args.preds:
        if name in rows:
            raise InputError(f"--pred {name}={path}: the name {name!r} is used twice.")
        if args.track == "perspectivist":
            if data.counts is None or not len(data.annotations):
                raise InputError(
                    f"{args.counts}: no annotations, so no per-annotator truth."
                )
            pred = read_perspectivist_predictions(path, data)
            rows[name] = perspectivist_scores(
                data, pred, ordinal=ordinal, classes=classes, rounding=rounding
            )
        else:
            pred = read_soft_predictions(
                path,
                ids,
                classes,
                multilabel=data.multilabel,
                id_column=args.id_column,
            )
            rows[name] = soft_scores(
                truth,
                pred,
                ordinal=ordinal,
                fmt=data.format,
                multilabel=data.multilabel,
                rounding=rounding,
            )
    report = pd.DataFrame.from_dict(rows, orient="index")
    report.index.name = "prediction"
    return report
