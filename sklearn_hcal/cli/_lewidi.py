"""``hcal evaluate`` on a LeWiDi file: the official tracks' scores.

Why one module: one pipeline, ``hcal evaluate`` on a LeWiDi truth: the
truth, the three prediction formats (read with one error wording) and the
official scores.

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
``--official-rounding`` each metric is rounded as the LeWiDi 2025
evaluation notebook rounds it -- the rule each metric declares
(``OfficialRounding`` in :mod:`sklearn_hcal.metrics._registry`) -- and, as
in the notebook, the soft track's truth is the shipped soft label.

Prediction files (every item of the truth, matched by id; an item given
twice is refused):

* soft, ``.json``: ``{item_id: {class: p, ...}}`` or ``{item_id: [p, ...]}``
  (a list in the class order of the truth file, whatever ``--order`` says);
  multi-label: ``{item_id: {label: P(label applies)}}`` or a list, each
  entry a probability or a pair ``[1 − p, p]`` (VariErrNLI's layout);
* soft, ``.tsv`` (the official submission layout, no header): ``item_id``,
  a tab, then the list ``[p, ...]`` in class order;
* soft, ``.csv``: a header ``id,<class>,<class>...`` (the id column named
  ``id``, ``uid`` or ``--id-column``);
* perspectivist, ``.json``: ``{item_id: {annotator: label}}`` (multi-label:
  a list of labels or a comma-separated string); ``.tsv``: ``item_id``, a
  tab, the list of labels in the order of the item's annotators (one entry
  per distinct annotator).

Single-label soft rows are divided by their sums as the metric functions do
(rows rounded to 2 decimals with a warning; rows further off need
``--renormalize``).
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ._errors import InputError

__all__ = ["is_lewidi_truth", "lewidi_report"]


def is_lewidi_truth(path) -> bool:
    """Whether ``COUNTS`` names a LeWiDi harmonised JSON file."""
    return Path(path).suffix.lower() == ".json"


def load_truth(path, order=None, label_map=None, shipped=False):
    """``(data, truth, classes, ordinal, perm)`` of a LeWiDi file.

    ``truth`` is (n_items, n_classes): shares of the annotations, or the
    soft label of items without annotations, in the file's class order
    ``classes`` -- the order of the lists of prediction files. ``order``
    (class names as text) makes the set ordinal: ``perm`` (None without it)
    are the column positions in scale order, applied to the truth and the
    predictions alike once both are read. ``label_map`` is
    :func:`~sklearn_hcal.datasets.load_lewidi`'s. ``shipped``: the truth is
    the file's ``soft_label`` as shipped, where every item has one (the
    official notebook's targets, rounded in some files: VariErrNLI writes
    1/3 as 0.333).
    """
    from ..datasets import load_lewidi

    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file.")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data = load_lewidi(p, annotators_meta=None, label_map=label_map)
    except ValueError as exc:
        prefix = "--label-map: " if "label_map" in str(exc) else ""
        raise InputError(f"{prefix}{exc}") from None
    if label_map is not None:
        _check_label_map_targets(p, data, label_map)
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
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
    soft = data.soft_labels
    if shipped and soft is not None and not soft.isna().to_numpy().any():
        truth = soft.reindex(columns=data.classes).to_numpy(dtype=np.float64)
    ordinal = (
        not data.multilabel
        and len(classes) > 2
        and all(isinstance(c, (int, float)) for c in data.classes)
    )
    perm = None
    if order is not None:
        if data.multilabel:
            raise InputError("--order does not apply to a multi-label file.")
        perm, ordinal = order_positions(classes, order, path), True
    return data, truth, classes, ordinal, perm


def _check_label_map_targets(path, data, label_map) -> None:
    """Refuse a ``--label-map`` onto labels that are not the truth's classes.

    ``load_lewidi`` then drops the counts (with a warning) and the truth
    falls back to the file's soft labels: the map was silently ignored.
    """
    if data.multilabel or data.soft_labels is None or data.counts is not None:
        return
    classes = data.soft_labels.columns.tolist()
    mapped = pd.unique(data.annotations["label"])
    outside = [c for c in mapped.tolist() if c not in set(classes)]
    if not outside:
        return
    target = outside[0]
    pairs = [f"{k}:{v}" for k, v in label_map.items() if str(v) == str(target)]
    raise InputError(
        f"--label-map: the target {target!r} ({', '.join(pairs[:3])}) is not a "
        f"class of {path.name} (its soft labels' classes are {classes}); map each "
        "annotation onto one of those classes."
    )


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
        raise InputError(
            f"{where}: the list holds {found.group(0)!r}, not a number: every "
            "entry must be a finite number (a probability, or a label)."
        )
    raise InputError(f"{where}: {value!r} is not a list.")


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
        item = item.strip()
        parsed = _parse_tsv_value(p, lineno, item, value)
        if item in rows:
            raise InputError(f"{p}: line {lineno}: item {item!r} appears twice.")
        rows[item] = parsed
    if not rows:
        raise InputError(f"{p}: the file has no predictions.")
    return rows


def _read_csv_predictions(p: Path, id_column):
    from ._files import _check_unique_ids, _read_csv

    table = _read_csv(p, id_column)
    if table.ids is None:
        raise InputError(f"{p}: a CSV prediction file needs an id column (id or uid).")
    # a repeated id would silently keep its last row (JSON and TSV refuse it)
    table.ids = np.array([str(i).strip() for i in table.ids])
    _check_unique_ids(table)
    return {i: dict(zip(table.classes, row)) for i, row in zip(table.ids, table.values)}


def _number(p, item, value, what):
    if isinstance(value, bool):
        raise InputError(f"{p}: item {item!r}: {what} is {value!r}, not a number.")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(
            f"{p}: item {item!r}: {what} is {value!r}, not a number."
        ) from None


def _label_probability(p, item, label, value):
    """P(label applies): a number, a pair ``[1 − p, p]`` or ``{"0": 1 − p,
    "1": p}`` (the truth file's soft-label layout)."""
    what = f"label {label!r}"
    if isinstance(value, dict):
        keys = {str(k).strip(): v for k, v in value.items()}
        if set(keys) != {"0", "1"}:
            raise InputError(
                f"{p}: item {item!r}, {what}: expected {{'0': 1 - p, '1': p}}, got "
                f"{value!r}."
            )
        value = [keys["0"], keys["1"]]
    if not isinstance(value, (list, tuple)):
        return _number(p, item, value, what)
    if len(value) != 2:
        raise InputError(
            f"{p}: item {item!r}, {what}: expected P(applies) or the pair "
            f"[1 - p, p], got {value!r}."
        )
    no, yes = (_number(p, item, v, what) for v in value)
    total = no + yes
    # a pair rounded to 2 decimals may miss 1 by 0.01 (developer guide §lewidi)
    if not (np.isfinite(total) and abs(total - 1.0) <= TWO_DECIMALS * 2):
        raise InputError(
            f"{p}: item {item!r}, {what}: the pair {list(value)!r} sums to "
            f"{total:.6g}, not 1; it is not a distribution [1 - p, p]."
        )
    return yes / total if 0 <= no and 0 <= yes else yes


def _soft_row(p, item, value, classes, multilabel):
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
        layout = (
            "per-label probabilities or [1 - p, p] pairs"
            if multilabel
            else ("probabilities")
        )
        raise InputError(
            f"{p}: item {item!r}: expected {len(classes)} {layout} (classes "
            f"{classes}), got {value!r}."
        )
    if multilabel:
        return [_label_probability(p, item, c, v) for c, v in zip(classes, value)]
    return [_number(p, item, v, f"class {c!r}") for c, v in zip(classes, value)]


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


#: How far a probability written with 2 decimals may be off, per entry:
#: the soft labels' rounding rule (developer guide §lewidi).
TWO_DECIMALS = 0.005


def read_soft_predictions(
    path, ids, classes, *, multilabel, id_column=None, renormalize=False
):
    """(n_items, n_classes) predictions in the truth's item and class order.

    ``classes`` are the truth file's classes in its order: lists in the
    prediction file follow it. Single-label rows are checked and divided by
    their sums as the library's metrics do (rows within
    :func:`~sklearn_hcal._validation.row_sum_tolerance` of 1 silently); rows
    rounded to 2 decimals (within ``0.005`` per class of 1, e.g. 0.97-1.03
    for 6 classes) are divided by their sums with a warning that counts
    them; rows further off are refused unless ``renormalize``.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file.")
    suffix = p.suffix.lower()
    if suffix == ".csv":
        rows = _read_csv_predictions(p, id_column)
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
    values = np.array(
        [_soft_row(p, i, rows[i], classes, multilabel) for i in ids], dtype=np.float64
    )
    bad = ~np.isfinite(values) | (values < 0) | (values > 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(
            f"{p}: item {ids[i]!r}, class {classes[j]!r}: {values[i, j]!r} is not a "
            "probability in [0, 1]."
        )
    if multilabel:
        return values
    return _normalised_rows(p, ids, values, renormalize)


def _normalised_rows(p, ids, values, renormalize):
    from .._validation import normalised_block, row_sum_tolerance

    n_classes = values.shape[1]
    sums = values.sum(axis=1)
    gap = np.abs(sums - 1.0)
    beyond = gap > row_sum_tolerance(n_classes)
    rounded = beyond & (gap <= TWO_DECIMALS * n_classes)
    refused = beyond & ~rounded & ~(renormalize & (sums > 0))
    if refused.any():
        i = int(np.flatnonzero(refused)[0])
        hint = "" if renormalize else " (--renormalize divides rows by their sums)"
        raise InputError(
            f"{p}: item {ids[i]!r}: the probabilities sum to {sums[i]:.6g}, not 1"
            f"{hint}."
        )
    if beyond.any():
        i = int(np.flatnonzero(beyond)[0])
        count = int(beyond.sum())
        rows = "one row" if count == 1 else f"{count} rows"
        why = "rounded to 2 decimals" if rounded.all() else "--renormalize"
        warnings.warn(
            f"{p}: {rows} of probabilities did not sum to 1 and were divided by "
            f"their sums ({why}; first: item {ids[i]!r} summed to {sums[i]:.6g}).",
            UserWarning,
            stacklevel=2,
        )
    # the library's own renormalisation of rows off by rounding: the same
    # numbers as the metric functions on the same rows
    return normalised_block(values, slice(None))


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
def _rule(name, rounding, multilabel=False):
    """The metric's official rounding rule (developer guide §lewidi), or None."""
    if not rounding:
        return None
    from ..metrics._shared import official_rounding

    return official_rounding(name, multilabel=multilabel)


def _at(rule, level, values):
    return values if rule is None else rule.apply(level, values)


def _item_mean(name, per_item, rounding):
    """The mean over items of a metric, rounded as its official rule says."""
    rule = _rule(name, rounding)
    return float(_at(rule, "mean", float(np.mean(_at(rule, "item", per_item)))))


def soft_scores(truth, pred, *, ordinal, fmt, multilabel, rounding=False):
    """``{metric: value}`` of the soft track (per-item means)."""
    from ..metrics._shared import (
        manhattan_per_item,
        soft_cross_entropy_per_item,
        wasserstein_per_item,
    )

    if multilabel:
        name = "multilabel_manhattan_distance"
        rule = _rule(name, rounding, multilabel=True)
        # each label's distance |t − q| + |(1 − t) − (1 − q)|, as
        # multilabel_manhattan_distance averages them
        per_label = _at(rule, "label", 2.0 * np.abs(truth - pred))
        per_item = _at(rule, "item", per_label.mean(axis=1))
        return {name: float(_at(rule, "mean", float(np.mean(per_item))))}
    out = {
        "manhattan_distance": _item_mean(
            "manhattan_distance", manhattan_per_item(truth, pred), rounding
        )
    }
    if ordinal:
        out["wasserstein_distance"] = _item_mean(
            "wasserstein_distance", wasserstein_per_item(truth, pred), rounding
        )
    if fmt == "2023":
        out["soft_cross_entropy"] = _item_mean(
            "soft_cross_entropy", soft_cross_entropy_per_item(truth, pred), rounding
        )
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
    items = keys["item"].to_numpy()

    def per_item(values):
        grouped = pd.DataFrame(values).groupby(items, sort=False).mean()
        return grouped.to_numpy()

    name = "perspectivist_error_rate"
    if multilabel:
        # each label's error rate over the item's annotators, then the mean
        # over the labels (the mean over annotators of their label-averaged
        # errors, as perspectivist_error_rate computes it)
        rule = _rule(name, rounding, multilabel=True)
        errors = _at(rule, "label", per_item(np.abs(t - p).astype(np.float64)))
        errors = _at(rule, "item", errors.mean(axis=1))
        out = {name: float(_at(rule, "mean", float(np.mean(errors))))}
    else:
        errors = per_item(annotator_errors(t, p, multilabel))[:, 0]
        out = {name: _item_mean(name, errors, rounding)}
    if ordinal:
        try:
            dist = annotator_distances(t, p, multilabel, classes, None)
        except ValueError as exc:
            raise InputError(f"perspectivist predictions: {exc}") from None
        name = "perspectivist_absolute_distance"
        out[name] = _item_mean(name, per_item(dist)[:, 0], rounding)
    return out


def lewidi_report(args) -> pd.DataFrame:
    """The report of ``hcal evaluate`` with a LeWiDi truth file."""
    order = None
    if args.order is not None:
        order = [t.strip() for t in args.order.split(",") if t.strip()]
    # the notebook scores soft predictions against the shipped soft labels
    shipped = args.official_rounding and args.track == "soft"
    data, truth, classes, ordinal, perm = load_truth(
        args.counts, order, label_map=args.label_map, shipped=shipped
    )
    scale = classes if perm is None else [classes[j] for j in perm]
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
                data, pred, ordinal=ordinal, classes=scale, rounding=rounding
            )
            continue
        # lists follow the truth file's class order, whatever --order says
        pred = read_soft_predictions(
            path,
            ids,
            classes,
            multilabel=data.multilabel,
            id_column=args.id_column,
            renormalize=args.renormalize,
        )
        both = (truth, pred) if perm is None else (truth[:, perm], pred[:, perm])
        rows[name] = soft_scores(
            *both,
            ordinal=ordinal,
            fmt=data.format,
            multilabel=data.multilabel,
            rounding=rounding,
        )
    report = pd.DataFrame.from_dict(rows, orient="index")
    report.index.name = "prediction"
    return report
