"""Per-annotator ("perspectivist") evaluation: LeWiDi 2025's second track.

Why one module: the pairing of annotations with predictions and its checks
(keys, label kinds, label sets refused) serve every metric here alike.

When annotator ids are known, a model can predict the label *each*
annotator gives each item. LeWiDi 2025 scores those predictions per
(item, annotator) pair and averages first over the item's annotators, then
over the items (evaluation notebook, Le-Wi-Di/le-wi-di.github.io,
``LeWiDi_3-2025/Evaluation_LeWiDi_2025_Metrics.ipynb``):

* error rate (MP, VariErrNLI):
  ``ER = (1/N) Σ_i (1/a_i) Σ_k |t_ik − p_ik|`` for 0/1 labels, i.e. the
  fraction of the item's annotators whose label is missed; for categorical
  labels we count ``t ≠ p``; for multi-label data (``MER``) the per-label
  errors are averaged over the labels;
* normalised absolute distance (Par, CSC):
  ``ANAD = (1/N) Σ_i (1/a_i) Σ_k |t_ik − p_ik| / s``, where the official
  code takes ``s`` as the number of points on the scale ("11 for Par and 6
  for CSC", not the range 10 and 5); the notebook's formula shows ``· 100``
  but its code leaves it out, and so do we (a fraction, not a percentage).

:func:`annotator_report` breaks the same quantities down per annotator or
per annotator group (e.g. a demographic field of the annotator metadata).
Inputs are long tables, one row per (item, annotator), as
:func:`sklearn_hcal.datasets.load_lewidi` returns them.
"""

from __future__ import annotations

from collections.abc import Hashable
from numbers import Real

import numpy as np
import pandas as pd

from ..utils._compat import Interval, StrOptions, validate_params
from ._constraints import OPTIONAL_ARRAY

__all__ = [
    "perspectivist_error_rate",
    "perspectivist_absolute_distance",
    "annotator_report",
]

_SHOW = 5


def _label_columns(label):
    if isinstance(label, (list, tuple)):
        if not label:
            raise ValueError("label must name at least one column.")
        return list(label), True
    return [label], False


def _check_table(df, name, columns):
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(
            f"{name} lacks the columns {missing}; its columns are {list(df.columns)}."
        )
    sub = df[columns]
    na = sub.isna().to_numpy()
    if na.any():
        row, col = np.argwhere(na)[0]
        first = sub.iloc[row]
        where = ", ".join(f"{c} {first[c]!r}" for c in columns[:2] if c != columns[col])
        raise ValueError(
            f"{name} has {int(na.any(axis=1).sum())} rows with missing values in "
            f"{columns}; the first is row {int(row)} (index {df.index[row]!r}; "
            f"{where}), whose {columns[col]!r} is {first.iloc[col]!r}."
        )
    dup = sub.duplicated(subset=columns[:2], keep=False).to_numpy()
    if dup.any():
        shown = sub.loc[dup, columns[:2]].drop_duplicates().head(_SHOW)
        raise ValueError(
            f"{name} has {int(dup.sum())} rows repeating an (item, annotator) pair, "
            f"e.g. {list(shown.itertuples(index=False, name=None))}."
        )
    return sub


def _normalised(values: np.ndarray):
    """Labels as float64 when every one reads as a number, else as str.

    JSON data sets store labels as strings ("1", "0.0"), models predict
    numbers; both read as numbers compare equal.
    """
    try:
        return np.array([float(v) for v in values.tolist()], dtype=np.float64)
    except (TypeError, ValueError):
        return np.array([str(v).strip() for v in values.tolist()], dtype=object)


def annotator_pairs(annotations, predictions, item, annotator, label):
    """``(frame, t, p, multilabel)``: matched pairs, targets and predictions."""
    cols, multilabel = _label_columns(label)
    keys = [item, annotator]
    if item == annotator or any(c in keys for c in cols):
        raise ValueError("item, annotator and label must be different columns.")
    ann = _check_table(annotations, "annotations", keys + cols)
    pred = _check_table(predictions, "predictions", keys + cols)
    if len(ann) == 0:
        raise ValueError("annotations is empty.")
    merged = ann.merge(
        pred, on=keys, how="left", suffixes=("", "__pred"), indicator=True
    )
    lost = (merged["_merge"] == "left_only").to_numpy()
    if lost.any():
        shown = merged.loc[lost, keys].head(_SHOW)
        # a renamed annotator or item shows as a lost pair and a stranger
        strangers = pred[keys].merge(ann[keys], how="left", indicator=True)
        strangers = strangers.loc[strangers["_merge"] == "left_only", keys]
        stranger = (
            f"; predictions hold {len(strangers)} pair(s) nobody annotated, e.g. "
            f"{next(strangers.itertuples(index=False, name=None))}"
            if len(strangers)
            else ""
        )
        raise ValueError(
            f"predictions lack {int(lost.sum())} of the {len(merged)} annotated "
            f"(item, annotator) pairs, e.g. "
            f"{list(shown.itertuples(index=False, name=None))}; every annotation "
            f"needs a prediction{stranger}."
        )
    pred_cols = [f"{c}__pred" if c in ann.columns else c for c in cols]
    if multilabel:
        t = merged[cols].to_numpy()
        p = merged[pred_cols].to_numpy()
        try:
            t, p = t.astype(np.float64), p.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"Multi-label columns {cols} must hold 0/1 indicators: {exc}"
            ) from exc
        for arr, name in ((t, "annotations"), (p, "predictions")):
            bad = (arr < 0) | (arr > 1) | np.isnan(arr)
            if np.any(bad):
                i, j = np.argwhere(bad)[0]
                who, what = merged[item].tolist()[i], merged[annotator].tolist()[i]
                raise ValueError(
                    f"{name}' multi-label columns must hold 0/1 indicators: item "
                    f"{who!r}, annotator {what!r}, label {cols[j]!r} is "
                    f"{arr[i, j]:g}."
                )
    else:
        _refuse_label_sets(merged, [cols[0], pred_cols[0]], cols[0])
        t = _normalised(merged[cols[0]].to_numpy())
        p = _normalised(merged[pred_cols[0]].to_numpy())
        if t.dtype != p.dtype:
            raise ValueError(
                "annotations and predictions hold labels of different kinds (e.g. "
                f"{t[0]!r} and {p[0]!r}): one side is numeric and the other is not, "
                "so no label could match."
            )
    return merged[keys], t, p, multilabel


_SETS = (list, tuple, set, frozenset, np.ndarray)


def _refuse_label_sets(merged, columns, label) -> None:
    """Label sets compared whole give the exact-set error, not LeWiDi's rate."""
    for col, name in zip(columns, ("annotations", "predictions")):
        values = merged[col].to_numpy()
        sets = (
            [v for v in values if isinstance(v, _SETS)]
            if values.dtype == object
            else []
        )
        if sets:
            raise ValueError(
                f"{name}' column {label!r} holds label sets (e.g. {sets[0]!r}): "
                "compared whole they give the exact-set error, not LeWiDi's "
                "multi-label error rate. Pass one 0/1 column per label (label=[...], "
                "as in load_lewidi(...).annotations), or use "
                "sklearn_hcal.metrics.lewidi_scores, which reads label sets."
            )


def annotator_errors(t, p, multilabel):
    if multilabel:
        return np.abs(t - p).mean(axis=1)
    return (t != p).astype(np.float64)


def annotator_distances(t, p, multilabel, order, scale):
    """``|t − p| / s`` per pair (positions in ``order`` when it is given)."""
    if multilabel:
        raise ValueError(
            "The absolute distance needs an ordinal label, not multi-label columns."
        )
    if order is not None:
        order = _normalised(np.asarray(order, dtype=object).ravel())
        if len(set(order.tolist())) != len(order):
            raise ValueError("order must not repeat a class.")
        index = pd.Index(order)
        pos_t, pos_p = index.get_indexer(t), index.get_indexer(p)
        for pos, vals, name in ((pos_t, t, "annotations"), (pos_p, p, "predictions")):
            if np.any(pos < 0):
                bad = list(dict.fromkeys(vals[pos < 0].tolist()))[:_SHOW]
                raise ValueError(
                    f"{name} hold labels {bad} that are not in order {order.tolist()}."
                )
        t, p = pos_t.astype(np.float64), pos_p.astype(np.float64)
        if scale is None:
            scale = len(order)
    elif t.dtype == object:
        raise ValueError(
            "The labels are not numbers; pass order= (the classes in scale order) "
            "to measure distances on the scale."
        )
    if scale is None:
        raise ValueError(
            "Pass scale= (LeWiDi 2025 divides by the number of points on the "
            "scale: 11 for Par, 6 for CSC) or order= (the whole scale, whose "
            "length is then used)."
        )
    return np.abs(t - p) / float(scale)


def _item_mean(keys, values, item):
    """LeWiDi's aggregate: mean over each item's annotators, then over items."""
    per_item = pd.Series(values).groupby(keys[item].to_numpy(), sort=False).mean()
    return float(per_item.mean())


_TABLES = {
    "annotations": [pd.DataFrame],
    "predictions": [pd.DataFrame],
    "item": [Hashable],
    "annotator": [Hashable],
    "label": [Hashable, list, tuple],
}
_SCALE = {
    "order": OPTIONAL_ARRAY,
    "scale": [Interval(Real, 0, None, closed="neither"), None],
}


@validate_params(_TABLES, prefer_skip_nested_validation=True)
def perspectivist_error_rate(
    annotations, predictions, *, item="item", annotator="annotator", label="label"
) -> float:
    """LeWiDi 2025 error rate of per-annotator predictions (lower is better).

    ``ER = (1/N) Σ_i (1/a_i) Σ_{k ∈ annotators(i)} err_ik``, where
    ``err_ik = 1[t_ik ≠ p_ik]`` (``|t − p|`` for the 0/1 labels of MP) and,
    for multi-label data (``label`` a list of 0/1 indicator columns,
    VariErrNLI's MER), the mean of ``|t_ikl − p_ikl|`` over the labels.

    Parameters
    ----------
    annotations : DataFrame
        One row per (item, annotator) with the label given.
    predictions : DataFrame
        One row per (item, annotator) with the predicted label, in the same
        columns. Pairs nobody annotated are ignored; a missing pair raises.
    item, annotator : hashable, default="item", "annotator"
        The key columns.
    label : hashable or list of hashable, default="label"
        The label column, or the 0/1 indicator columns of a multi-label task.
        Labels that all read as numbers are compared as numbers (``"1"``
        equals ``1``).

    Returns
    -------
    float
        In ``[0, 1]``.

    References
    ----------
    LeWiDi 2025, the third Learning with Disagreements shared task
    (NLPerspectives workshop): the perspectivist track's evaluation, as in
    the task's official scoring code.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.metrics import perspectivist_error_rate
    >>> ann = pd.DataFrame({"item": [1, 1, 1, 2, 2],
    ...                     "annotator": ["A", "B", "C", "A", "B"],
    ...                     "label": ["0", "1", "1", "0", "0"]})
    >>> pred = ann.assign(label=[0, 1, 0, 1, 1])
    >>> perspectivist_error_rate(ann, pred)  # (1/3 + 2/2) / 2
    0.6666666666666666
    """
    keys, t, p, multilabel = annotator_pairs(
        annotations, predictions, item, annotator, label
    )
    return _item_mean(keys, annotator_errors(t, p, multilabel), item)


@validate_params({**_TABLES, **_SCALE}, prefer_skip_nested_validation=True)
def perspectivist_absolute_distance(
    annotations,
    predictions,
    *,
    item="item",
    annotator="annotator",
    label="label",
    order=None,
    scale=None,
) -> float:
    """LeWiDi 2025 normalised absolute distance (ANAD) on an ordinal scale.

    ``ANAD = (1/N) Σ_i (1/a_i) Σ_k |t_ik − p_ik| / s`` (Par, CSC): the mean
    distance between each annotator's rating and its prediction, as a
    fraction of the scale; lower is better.

    Parameters
    ----------
    annotations, predictions : DataFrame
        One row per (item, annotator), as for :func:`perspectivist_error_rate`.
    item, annotator, label : hashable, default="item", "annotator", "label"
        The key and label columns.
    order : array-like, default=None
        The whole scale in order. Distances are then counted in steps of the
        scale and ``s`` defaults to its number of points (LeWiDi: 11 for
        Par's −5..5, 6 for CSC's 1..6). Without it the labels must be numbers
        and ``scale`` is required.
    scale : float, default=None
        The normaliser ``s``.

    Returns
    -------
    float

    References
    ----------
    LeWiDi 2025, the third Learning with Disagreements shared task
    (NLPerspectives workshop): the perspectivist track's evaluation, as in
    the task's official scoring code.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.metrics import perspectivist_absolute_distance
    >>> ann = pd.DataFrame({"item": [1, 1, 2], "annotator": ["A", "B", "A"],
    ...                     "label": ["1", "6", "3"]})
    >>> pred = ann.assign(label=[2, 3, 3])
    >>> # item 1: (|1 - 2| + |6 - 3|) / 2 / 6 = 1/3 ; item 2: 0
    >>> perspectivist_absolute_distance(ann, pred, order=range(1, 7))
    0.16666666666666666
    """
    keys, t, p, multilabel = annotator_pairs(
        annotations, predictions, item, annotator, label
    )
    return _item_mean(keys, annotator_distances(t, p, multilabel, order, scale), item)


@validate_params(
    {
        **_TABLES,
        **_SCALE,
        "groups": [dict, pd.Series, pd.DataFrame, None],
        "by": [Hashable, list, None],
        "group_weighting": [StrOptions({"annotations", "annotators"})],
    },
    prefer_skip_nested_validation=True,
)
def annotator_report(
    annotations,
    predictions,
    *,
    item="item",
    annotator="annotator",
    label="label",
    order=None,
    scale=None,
    groups=None,
    by=None,
    group_weighting="annotations",
) -> pd.DataFrame:
    """Error rate and normalised distance per annotator or annotator group.

    The per-pair errors of :func:`perspectivist_error_rate` and (when
    ``order`` or ``scale`` is given) distances of
    :func:`perspectivist_absolute_distance`, averaged over the items of each
    annotator -- which annotators does the model represent badly? -- or over
    the annotators of each group of ``groups``.

    Parameters
    ----------
    annotations, predictions : DataFrame
        One row per (item, annotator), as for :func:`perspectivist_error_rate`.
    item, annotator, label : hashable, default="item", "annotator", "label"
        The key and label columns (``label`` may list 0/1 indicator columns).
    order, scale : default=None
        As for :func:`perspectivist_absolute_distance`; without both, the
        report has no ``absolute_distance`` column.
    groups : dict, Series or DataFrame, default=None
        The group of each annotator: a mapping annotator → group, or a
        DataFrame indexed by annotator (e.g. ``load_lewidi(...).annotators``)
        whose ``by`` column(s) define the groups. Every annotator must have a
        group (missing values in ``by`` are a group of their own).
    by : hashable or list, default=None
        The column(s) of a ``groups`` DataFrame.
    group_weighting : {"annotations", "annotators"}, default="annotations"
        How a group's rates are averaged: over all its (item, annotator)
        pairs, or as the mean of its annotators' rates (each annotator
        weighs the same however many items they labelled).

    Returns
    -------
    report : DataFrame
        One row per annotator (index named after ``annotator``) with columns
        ``n_items``, ``error_rate`` and, if available, ``absolute_distance``;
        or one row per group with ``n_annotators``, ``n_annotations``,
        ``n_items`` and the same rates.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.metrics import annotator_report
    >>> ann = pd.DataFrame({"item": [1, 1, 2, 2], "annotator": ["A", "B"] * 2,
    ...                     "label": [0, 1, 1, 1]})
    >>> pred = ann.assign(label=[0, 0, 1, 0])
    >>> annotator_report(ann, pred)
               n_items  error_rate
    annotator
    A                2         0.0
    B                2         1.0
    >>> annotator_report(ann, pred, groups={"A": "young", "B": "old"})
           n_annotators  n_annotations  n_items  error_rate
    group
    old               1              2        2         1.0
    young             1              2        2         0.0
    """
    keys, t, p, multilabel = annotator_pairs(
        annotations, predictions, item, annotator, label
    )
    frame = pd.DataFrame(
        {
            "item": keys[item].to_numpy(),
            "annotator": keys[annotator].to_numpy(),
            "error_rate": annotator_errors(t, p, multilabel),
        }
    )
    rates = ["error_rate"]
    if order is not None or scale is not None:
        frame["absolute_distance"] = annotator_distances(t, p, multilabel, order, scale)
        rates.append("absolute_distance")
    if groups is None:
        if by is not None:
            raise ValueError("by= selects columns of groups=; pass groups too.")
        per = frame.groupby("annotator", sort=True)
        report = per[rates].mean()
        report.insert(0, "n_items", per.size())
        report.index.name = annotator
        return report

    group_cols = _group_columns(frame["annotator"], groups, by)
    frame = pd.concat([frame, group_cols], axis=1)
    names = list(group_cols.columns)
    if group_weighting == "annotators":
        per_annotator = frame.groupby(["annotator", *names], dropna=False)[rates].mean()
        rate_table = per_annotator.groupby(level=names, dropna=False).mean()
    else:
        rate_table = frame.groupby(names, dropna=False)[rates].mean()
    per = frame.groupby(names, dropna=False)
    counts = pd.DataFrame(
        {
            "n_annotators": per["annotator"].nunique(),
            "n_annotations": per.size(),
            "n_items": per["item"].nunique(),
        }
    )
    return counts.join(rate_table)


def _group_columns(annotators: pd.Series, groups, by) -> pd.DataFrame:
    """The group column(s) of every pair, from the annotator → group mapping."""
    if isinstance(groups, pd.DataFrame):
        if by is None:
            if groups.shape[1] != 1:
                raise ValueError(
                    "groups is a DataFrame with several columns; pass by= (the "
                    f"column(s) that define the groups) among {list(groups.columns)}."
                )
            by = [groups.columns[0]]
        by = list(by) if isinstance(by, list) else [by]
        missing = [c for c in by if c not in groups.columns]
        if missing:
            raise ValueError(
                f"by={missing} are not columns of groups: {list(groups.columns)}."
            )
        table = groups[by]
    else:
        if by is not None:
            raise ValueError("by= needs groups to be a DataFrame.")
        table = pd.Series(groups, name="group").to_frame()
    if not table.index.is_unique:
        repeated = table.index[table.index.duplicated()].unique().tolist()
        rows = np.flatnonzero(table.index == repeated[0]).tolist()
        raise ValueError(
            f"groups lists the annotator {repeated[0]!r} {len(rows)} times (rows "
            f"{rows}; {len(repeated)} annotator(s) repeated in all); give one row "
            "per annotator, indexed by annotator id."
        )
    known = annotators.isin(table.index).to_numpy()
    if not known.all():
        unknown = list(dict.fromkeys(annotators[~known].tolist()))[:_SHOW]
        raise ValueError(
            f"{int((~known).sum())} annotations are by annotators without a group, "
            f"e.g. {unknown}."
        )
    return table.reindex(annotators.to_numpy()).reset_index(drop=True)


# --------------------------------------------------------------------------- #
# How the official scorer rounds (plain functions, not report columns)
# --------------------------------------------------------------------------- #
from ._registry import OfficialRounding, declare_official_rounding  # noqa: E402

declare_official_rounding(
    "perspectivist_error_rate",
    # error_rate: each item's rate over its annotators, not the mean
    OfficialRounding("error_rate", rounds=("item",)),
    # multilabel_error_rate: each label's rate over the item's annotators,
    # neither the item's mean over the labels nor the mean over items
    OfficialRounding("multilabel_error_rate", rounds=("label",), multilabel=True),
)
declare_official_rounding(
    "perspectivist_absolute_distance", OfficialRounding("mean_absolute_distance")
)
