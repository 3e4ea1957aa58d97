"""LeWiDi's two tracks, scored as the organisers score them.

Why one module: one entry (:func:`lewidi_scores`) and the arithmetic it
must keep in one place -- the soft and perspectivist tracks, the
notebook's rounding, summation order and ``ot.emd2`` -- so that every
caller prints the same digits.

:func:`lewidi_scores` is the one place where a LeWiDi submission is scored:
``hcal evaluate`` with a LeWiDi truth, ``hcal lewidi``'s cross-validation,
:meth:`~sklearn_hcal.perspectivist.PerspectivistClassifier.score` and the
user's Python all call it (developer guide §lewidi).

* soft track: the Manhattan distance; the Wasserstein distance on an
  ordinal scale (:func:`is_ordinal_scale`); the soft cross-entropy for the
  2023 format; the multi-label Manhattan distance for multi-label sets
  (VariErrNLI);
* perspectivist track: the error rate (multi-label: the mean over labels
  of each label's error rate) and, on an ordinal scale, the absolute
  distance divided by the number of points of the scale.

With ``official_rounding=True`` the arithmetic is the LeWiDi 2025
evaluation notebook's (``Evaluation_LeWiDi_2025_Metrics.ipynb``): the soft
truth is the shipped soft label, the predictions are used as written (not
divided by their sums), each metric rounds the levels its
:class:`~sklearn_hcal.metrics._registry.OfficialRounding` rule names with
Python's ``round`` (correctly rounded, ties to even on the binary value),
the means the notebook takes with ``sum(...) / len(...)`` add the items
left to right in file order and those it takes with ``np.mean`` use
``np.mean``; the per-item Wasserstein distance is POT's ``ot.emd2`` when
POT is installed (``pip install sklearn-hcal[lewidi]``), whose float noise
decides exact ties, and the closed form ``Σ_k |F_t(k) − F_p(k)|`` otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

import numpy as np
import pandas as pd

from .._validation import normalised_block, row_sum_tolerance
from ..datasets._shared import TWO_DECIMALS, class_named, soft_matrix
from ..utils._warnings import warn_user
from ._annotators import annotator_pairs
from ._hlv_kernels import manhattan_per_item, soft_cross_entropy_per_item
from ._ordinal import wasserstein_per_item
from ._registry import exact_round, official_rounding

__all__ = [
    "is_ordinal_scale",
    "lewidi_scores",
    "order_positions",
]

#: How the notebook averages each metric over the items: ``"sum"`` is
#: ``sum(values) / len(values)`` (left to right, file order), ``"mean"``
#: is ``np.mean`` (pairwise summation).
NOTEBOOK_MEAN = {
    "manhattan_distance": "sum",
    "wasserstein_distance": "sum",
    "multilabel_manhattan_distance": "sum",
    "soft_cross_entropy": "mean",
    "perspectivist_error_rate": "mean",
    "perspectivist_absolute_distance": "mean",
}

#: ``ot.emd2`` refuses marginals whose sums differ beyond this (its
#: ``assert_almost_equal(..., decimal=6)``).
EMD_MASS_TOL = 1.5e-6


def is_ordinal_scale(classes, *, multilabel: bool = False) -> bool:
    """Whether a set of classes is an ordered scale (the one rule).

    Numeric classes, more than two of them, single-label: LeWiDi's Likert
    scales (Paraphrase −5..5, CSC 1..6). Two classes need no order (every
    ordinal metric gives the same value either way).

    Parameters
    ----------
    classes : array-like
        The classes (numbers, or names).
    multilabel : bool, default=False
        A multi-label set is never a scale.

    Returns
    -------
    bool

    Examples
    --------
    >>> from sklearn_hcal.metrics._lewidi import is_ordinal_scale
    >>> is_ordinal_scale([1, 2, 3, 4, 5, 6]), is_ordinal_scale([0, 1])
    (True, False)
    >>> is_ordinal_scale(["contradiction", "entailment", "neutral"])
    False
    """
    values = list(classes)
    numeric = all(
        isinstance(c, (int, float, np.integer, np.floating))
        and not isinstance(c, (bool, np.bool_))
        for c in values
    )
    return (not multilabel) and numeric and len(values) > 2


def order_positions(classes, order, where="the truth") -> list[int]:
    """Column positions of ``order`` (class names, compared as text)."""
    names = [str(c).strip() for c in order]
    text = [str(c) for c in classes]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ValueError(f"order names the class {dup!r} twice: {names}.")
    if sorted(names) != sorted(text):
        raise ValueError(f"order {names} does not name the classes of {where}: {text}.")
    return [text.index(n) for n in names]


# --------------------------------------------------------------------------- #
# The truth
# --------------------------------------------------------------------------- #
def _check_truth(test) -> None:
    needed = ("classes", "multilabel", "item_info", "annotations", "counts")
    absent = [a for a in needed if not hasattr(test, a)]
    if absent:
        raise ValueError(
            "test must be a LeWiDi data set as load_lewidi returns it (a Bunch "
            f"with {list(needed)}); got {type(test).__name__} without {absent}."
        )


def _soft_truth(test, shipped: bool) -> np.ndarray:
    """(n_items, n_classes) truth of the soft track in ``test.classes``."""
    soft = test.soft_labels
    classes = list(test.classes)
    if shipped and soft is not None and not soft.isna().to_numpy().any():
        return soft.reindex(columns=classes).to_numpy(dtype=np.float64)
    if test.multilabel:
        if test.counts is None:
            raise ValueError(
                "test: a multi-label file without annotations has no truth per "
                "label to score against."
            )
        n = test.item_info["n_annotators"].to_numpy(dtype=np.float64)
        return test.counts.to_numpy(dtype=np.float64) / np.maximum(n, 1)[:, None]
    if test.counts is None:
        if soft is None:
            raise ValueError("test has neither annotations nor soft labels.")
        return soft.reindex(columns=classes).to_numpy(dtype=np.float64)
    counts = test.counts.reindex(columns=classes).to_numpy(dtype=np.float64)
    totals = counts.sum(axis=1)
    truth = counts / np.maximum(totals, 1.0)[:, None]
    empty = totals == 0
    if empty.any():
        if soft is None:
            item = test.counts.index[np.flatnonzero(empty)[0]]
            raise ValueError(
                f"test: item {item!r} has no annotations and no soft label."
            )
        truth[empty] = soft.reindex(columns=classes).to_numpy()[empty]
    return truth


# --------------------------------------------------------------------------- #
# The soft predictions
# --------------------------------------------------------------------------- #
def _checked_rows(values, ids, *, renormalize, official):
    """Single-label rows: sums checked; divided by them unless ``official``."""
    n_classes = values.shape[1]
    sums = np.sum(values, axis=1)
    gap = np.abs(sums - 1.0)
    beyond = gap > row_sum_tolerance(n_classes)
    rounded = beyond & (gap <= TWO_DECIMALS * n_classes)
    refused = beyond & ~rounded & ~(renormalize & (sums > 0))
    if refused.any():
        i = int(np.flatnonzero(refused)[0])
        hint = "" if renormalize else " (renormalize=True divides rows by their sums)"
        raise ValueError(
            f"soft: item {ids[i]!r}: the probabilities sum to {sums[i]:.6g}, not 1"
            f"{hint}."
        )
    if beyond.any():
        i = int(np.flatnonzero(beyond)[0])
        count = int(beyond.sum())
        rows = "one row" if count == 1 else f"{count} rows"
        why = "rounded to 2 decimals" if rounded.all() else "renormalize=True"
        done = (
            "were scored as written, as the official notebook does"
            if official
            else "were divided by their sums"
        )
        warn_user(
            f"soft: {rows} of probabilities did not sum to 1 and {done} ({why}; "
            f"first: item {ids[i]!r} summed to {sums[i]:.6g}).",
        )
    if official:
        return values
    # the library's own renormalisation: the metric functions' numbers
    return normalised_block(values, slice(None))


# --------------------------------------------------------------------------- #
# The notebook's arithmetic
# --------------------------------------------------------------------------- #
def _rule(name, official, multilabel=False):
    return official_rounding(name, multilabel=multilabel) if official else None


def _at(rule, level, values):
    """``values`` rounded as ``rule`` says at ``level`` (unchanged without)."""
    if rule is None or level not in rule.rounds:
        return values
    return exact_round(values, rule.decimals)


def _mean(name, values, official) -> float:
    """The mean over items, taken as the notebook takes it."""
    values = np.asarray(values, dtype=np.float64)
    if official and NOTEBOOK_MEAN[name] == "sum":
        return float(np.cumsum(values)[-1] / len(values))
    return float(np.mean(values))


def _row_sums(values) -> np.ndarray:
    """Each row's sum left to right (Python's ``sum`` of the row)."""
    return np.cumsum(values, axis=1)[:, -1]


def _score(name, per_item, official, multilabel=False) -> float:
    rule = _rule(name, official, multilabel)
    mean = _mean(name, _at(rule, "item", per_item), official)
    return float(_at(rule, "mean", mean))


def _official_wasserstein(truth, pred, ids) -> np.ndarray:
    """Per item, as the notebook: ``ot.emd2`` on |i − j| costs, else closed form.

    Gold rows that do not sum to 1 (``ot.emd2`` raises on them: CSC's test
    file rounds its soft labels) are divided by their sums, with a warning
    that counts them; prediction rows are brought to the gold row's mass as
    ``ot.emd2`` itself does.
    """
    sums = _row_sums(truth)
    off = np.abs(sums - 1.0) > EMD_MASS_TOL
    if off.any():
        i = int(np.flatnonzero(off)[0])
        warn_user(
            f"test: the shipped soft labels of {int(off.sum())} of {len(ids)} items "
            f"do not sum to 1 (first: item {ids[i]!r}, {sums[i]:.6g}); the official "
            "notebook's ot.emd2 cannot score them (it raises). Their Wasserstein "
            "distance is computed against the soft label divided by its sum.",
        )
        truth = truth.copy()
        truth[off] /= sums[off, None]
    try:
        import ot
    except ImportError:
        return _row_sums(np.abs(np.cumsum(truth - pred, axis=1)[:, :-1]))
    k = truth.shape[1]
    cost = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]).astype(np.float64)
    # one linear programme per item: the notebook's own float noise decides
    # exact ties, which no closed form reproduces
    return np.array(
        [float(ot.emd2(t, p, cost)) for t, p in zip(truth, pred)], dtype=np.float64
    )


def _soft_scores(truth, pred, ids, *, ordinal, fmt, multilabel, official) -> dict:
    if multilabel:
        name = "multilabel_manhattan_distance"
        rule = _rule(name, official, multilabel=True)
        if official:
            # each label's [1 - p, p] pair against [1 - t, t]: |Δ0| + |Δ1|,
            # added as the notebook adds them
            per_label = np.abs((1.0 - pred) - (1.0 - truth)) + np.abs(pred - truth)
        else:  # multilabel_manhattan_distance's own arithmetic
            per_label = 2.0 * np.abs(truth - pred)
        per_label = _at(rule, "label", per_label)
        per_item = _row_sums(per_label) / per_label.shape[1]
        return {name: _score(name, per_item, official, multilabel=True)}
    if official:
        md = _row_sums(np.abs(pred - truth))
    else:
        md = manhattan_per_item(truth, pred)
    out = {"manhattan_distance": _score("manhattan_distance", md, official)}
    if ordinal:
        ws = (
            _official_wasserstein(truth, pred, ids)
            if official
            else wasserstein_per_item(truth, pred)
        )
        out["wasserstein_distance"] = _score("wasserstein_distance", ws, official)
    if fmt == "2023":
        ce = soft_cross_entropy_per_item(truth, pred)
        out["soft_cross_entropy"] = _score("soft_cross_entropy", ce, official)
    return out


# --------------------------------------------------------------------------- #
# The perspectivist predictions
# --------------------------------------------------------------------------- #
def _is_label_set(value) -> bool:
    return isinstance(value, (list, tuple, Set, np.ndarray))


def _indicator_table(table, labels, name) -> pd.DataFrame:
    """A multi-label long table with one 0/1 column per label."""
    if all(lab in table.columns for lab in labels):
        return table
    if "label" not in table.columns:
        raise ValueError(
            f"{name} needs a 'label' column of label sets or one 0/1 column per "
            f"label {labels}; its columns are {list(table.columns)}."
        )
    sets = []
    for row, value in zip(table.itertuples(index=False), table["label"].tolist()):
        parts = value if _is_label_set(value) else str(value).split(",")
        chosen = {str(x).strip() for x in parts if str(x).strip()}
        unknown = chosen - set(labels)
        if unknown:
            raise ValueError(
                f"{name}: item {row.item!r}, annotator {row.annotator!r}: the labels "
                f"{sorted(unknown)} are not among {labels}."
            )
        sets.append(chosen)
    indicators = pd.DataFrame(
        np.array(
            [[int(lab in s) for lab in labels] for s in sets], dtype=np.int64
        ).reshape(len(sets), len(labels)),
        columns=labels,
        index=table.index,
    )
    return pd.concat([table[["item", "annotator"]], indicators], axis=1)


def _perspectivist_scores(test, pred, *, ordinal, scale, official) -> dict:
    if not isinstance(pred, pd.DataFrame):
        raise ValueError(
            "perspectivist must be a long table (DataFrame) with columns item, "
            f"annotator and label; got {type(pred).__name__}."
        )
    ann = test.annotations
    if test.counts is None or not len(ann):
        raise ValueError("test has no annotations, so no per-annotator truth.")
    pred = pred.assign(item=pred["item"].astype(str)) if "item" in pred else pred
    ann = ann.assign(item=ann["item"].astype(str))
    if test.multilabel:
        label = [str(c) for c in test.classes]
        ann = ann.rename(columns={c: str(c) for c in test.classes})
        pred = _indicator_table(pred, label, "perspectivist")
    else:
        label = "label"
    keys, t, p, multilabel = annotator_pairs(ann, pred, "item", "annotator", label)
    items = keys["item"].to_numpy()

    def per_item_sums(values):
        return pd.DataFrame(values).groupby(items, sort=False).sum().to_numpy()

    n = pd.Series(items).groupby(items, sort=False).size().to_numpy(np.float64)
    name = "perspectivist_error_rate"
    errors = np.abs(t - p) if multilabel else (t != p).astype(np.float64)[:, None]
    wrong = per_item_sums(errors)  # integers: exact in any order
    if official:
        # the notebook: round(1 - ((n - errors) / n), 5), per label
        rates = 1.0 - (n[:, None] - wrong) / n[:, None]
    else:
        rates = wrong / n[:, None]
    if multilabel:
        rule = _rule(name, official, multilabel=True)
        rates = _at(rule, "label", rates)
        per_item = _at(rule, "item", np.mean(rates, axis=1))
        out = {name: float(_at(rule, "mean", _mean(name, per_item, official)))}
    else:
        out = {name: _score(name, rates[:, 0], official)}
    if ordinal:
        index = pd.Index([str(c) for c in scale])
        pos_t = index.get_indexer([_class_text(v, scale) for v in t])
        pos_p = index.get_indexer([_class_text(v, scale) for v in p])
        if (pos_p < 0).any():
            row = np.flatnonzero(pos_p < 0)[0]
            bad = p[row].item() if isinstance(p[row], np.generic) else p[row]
            raise ValueError(
                f"perspectivist: item {items[row]!r}, annotator "
                f"{keys['annotator'].iat[row]!r}: the label {bad!r} is not on the "
                f"scale {[str(c) for c in scale]}."
            )
        total = per_item_sums(np.abs(pos_t - pos_p).astype(np.float64))[:, 0]
        name = "perspectivist_absolute_distance"
        out[name] = _score(name, total / n / len(scale), official)
    return out


def _class_text(value, scale) -> str:
    """A label as the text of its class on ``scale`` (itself when none)."""
    c = class_named(value, scale)
    return str(value).strip() if c is None else str(c)


# --------------------------------------------------------------------------- #
# The public function
# --------------------------------------------------------------------------- #
def lewidi_scores(
    test,
    *,
    soft: pd.DataFrame | None = None,
    perspectivist: pd.DataFrame | None = None,
    official_rounding: bool = False,
    order: Sequence | None = None,
    renormalize: bool = False,
) -> dict[str, float]:
    """The official LeWiDi metrics of a submission, track by track.

    Parameters
    ----------
    test : Bunch
        The truth, as :func:`~sklearn_hcal.datasets.load_lewidi` returns it.
    soft : DataFrame or None, default=None
        The soft track's prediction: one row per item of ``test`` (indexed by
        item id, any order), one column per class of ``test`` (matched by
        name; multi-label: the probability that each label applies), as
        :meth:`~sklearn_hcal.perspectivist.PerspectivistClassifier.predict_soft_labels`
        and :func:`~sklearn_hcal.datasets.read_lewidi_submission` give it.
    perspectivist : DataFrame or None, default=None
        The perspectivist track's prediction: a long table with columns
        ``item``, ``annotator`` and ``label`` (multi-label: a label set per
        row, or one 0/1 column per label), a row for every annotation of
        ``test``.
    official_rounding : bool, default=False
        The LeWiDi 2025 evaluation notebook's arithmetic (module notes): the
        shipped soft labels as truth, predictions as written, each metric's
        official rounding, file-order sums, ``ot.emd2`` when POT is
        installed. False: the counts' shares as truth, rows divided by their
        sums, nothing rounded (the metric functions' numbers).
    order : sequence or None, default=None
        The classes in scale order (names compared as text): makes the set
        ordinal. None: :func:`is_ordinal_scale` decides, in the class order
        of ``test``.
    renormalize : bool, default=False
        Divide soft rows further from 1 than 2-decimal rounding by their
        sums instead of refusing them.

    Returns
    -------
    scores : dict
        ``{metric name: value}`` for each track given (all lower is better):
        ``manhattan_distance``, ``wasserstein_distance`` (ordinal),
        ``soft_cross_entropy`` (2023 format),
        ``multilabel_manhattan_distance`` (multi-label);
        ``perspectivist_error_rate``, ``perspectivist_absolute_distance``
        (ordinal).

    Raises
    ------
    ValueError
        A missing, extra or repeated item or annotation, a value that is
        not a probability, a row far from summing to 1, a label off the
        scale.

    Warns
    -----
    UserWarning
        Soft rows off 1 by 2-decimal rounding (counted); under
        ``official_rounding``, gold soft labels that do not sum to 1, which
        the notebook's ``ot.emd2`` cannot score (counted; scored against the
        row divided by its sum).

    See Also
    --------
    sklearn_hcal.datasets.read_lewidi_submission : reads submission files.
    sklearn_hcal.datasets.write_lewidi_submission : writes them.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> import pandas as pd
    >>> from sklearn_hcal.datasets import load_lewidi
    >>> from sklearn_hcal.metrics import lewidi_scores
    >>> records = {
    ...     "1": {"annotators": "A,B", "annotations": {"A": "1", "B": "3"},
    ...           "soft_label": {"1": 0.5, "2": 0.0, "3": 0.5}, "text": "t"},
    ...     "2": {"annotators": "A,B", "annotations": {"A": "2", "B": "2"},
    ...           "soft_label": {"1": 0.0, "2": 1.0, "3": 0.0}, "text": "u"},
    ... }
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "toy_dev.json"
    >>> _ = path.write_text(json.dumps(records))
    >>> test = load_lewidi(path)
    >>> soft = pd.DataFrame([[0.5, 0.0, 0.5], [0.0, 0.5, 0.5]],
    ...                     index=["1", "2"], columns=[1, 2, 3])
    >>> lewidi_scores(test, soft=soft)  # (0 + 1) / 2 and (0 + 0.5) / 2
    {'manhattan_distance': 0.5, 'wasserstein_distance': 0.25}
    >>> pe = test.annotations.assign(label=[1, 3, 2, 3])
    >>> scores = lewidi_scores(test, perspectivist=pe)  # item 2: one wrong by 1
    >>> scores["perspectivist_error_rate"], scores["perspectivist_absolute_distance"]
    (0.25, 0.08333333333333333)
    """
    _check_truth(test)
    if soft is None and perspectivist is None:
        raise ValueError("Pass soft=, perspectivist= or both: nothing to score.")
    classes = list(test.classes)
    ordinal = is_ordinal_scale(classes, multilabel=test.multilabel)
    perm = None
    if order is not None:
        if test.multilabel:
            raise ValueError("order does not apply to a multi-label set.")
        perm, ordinal = order_positions(classes, order), True
    scale = classes if perm is None else [classes[j] for j in perm]
    official = bool(official_rounding)
    out = {}
    if soft is not None:
        ids = [str(i) for i in test.item_info.index]
        truth = _soft_truth(test, shipped=official)
        pred = soft_matrix(soft, ids, classes)
        if not test.multilabel:
            pred = _checked_rows(pred, ids, renormalize=renormalize, official=official)
        if perm is not None:
            truth, pred = truth[:, perm], pred[:, perm]
        out.update(
            _soft_scores(
                truth,
                pred,
                ids,
                ordinal=ordinal,
                fmt=getattr(test, "format", None),
                multilabel=test.multilabel,
                official=official,
            )
        )
    if perspectivist is not None:
        out.update(
            _perspectivist_scores(
                test, perspectivist, ordinal=ordinal, scale=scale, official=official
            )
        )
    return out


def lewidi_truth(items, annotators, labels, *, classes, multilabel) -> Mapping:
    """A LeWiDi truth (the fields :func:`lewidi_scores` reads) from rows.

    ``labels``: each row's label, or (multi-label) its 0/1 indicator row in
    the order of ``classes``. Items keep their order of first appearance.
    Used by the cross-validation, which scores held-out rows of a long
    table rather than a file.
    """
    from sklearn.utils import Bunch

    items = np.asarray([str(i) for i in items], dtype=object)
    keys = pd.DataFrame({"item": items, "annotator": np.asarray(annotators)})
    names = [str(c) for c in classes]
    if multilabel:
        onehot = np.asarray(labels, dtype=np.int64)
        ann = pd.concat([keys, pd.DataFrame(onehot, columns=names)], axis=1)
    else:
        lookup = pd.Index(list(classes)).get_indexer(list(labels))
        onehot = np.zeros((len(items), len(names)), dtype=np.int64)
        onehot[np.arange(len(items)), lookup] = 1
        ann = keys.assign(label=list(labels))
    grouped = pd.DataFrame(onehot, columns=list(classes)).groupby(items, sort=False)
    counts = grouped.sum()
    counts.index.name = "item"
    n = grouped.size()
    return Bunch(
        classes=np.asarray(list(classes), dtype=object),
        multilabel=bool(multilabel),
        annotations=ann,
        counts=counts,
        soft_labels=None,
        item_info=pd.DataFrame({"n_annotators": n.to_numpy()}, index=counts.index),
        format="2025",
    )
