"""Both LeWiDi tracks from per-annotator probabilities, and their CV estimate.

Used by ``hcal lewidi`` (through :mod:`._shared`) and the benchmark: from
each row's predicted distribution ``P``, the perspectivist track scores the
Bayes decision of every row (the median on an ordinal scale, the mode
otherwise, per-label thresholds for multi-label data) with the official
metric functions, and the soft track scores each item's marginal (the mean
of its rows) against the share of its annotators' labels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import GroupKFold

from ..metrics import lewidi_scores
from ..metrics._shared import lewidi_truth
from ._decisions import median_decision, mode_decision, threshold_decision

__all__ = [
    "baseline_probabilities",
    "cross_val_tracks",
    "fold_track_scores",
    "item_distributions",
    "perspectivist_loss",
    "predict_tracks",
    "track_scores",
]


def _one_hot(target, classes, multilabel) -> np.ndarray:
    if multilabel:
        return np.asarray(target, dtype=np.float64)
    index = pd.Index(list(classes))
    out = np.zeros((len(target), len(classes)))
    out[np.arange(len(target)), index.get_indexer(list(target))] = 1.0
    return out


def item_distributions(items, rows, classes) -> pd.DataFrame:
    """The mean of ``rows`` over each item (items in order of appearance)."""
    frame = pd.DataFrame(np.asarray(rows, dtype=np.float64), columns=list(classes))
    return frame.groupby(np.asarray(items), sort=False).mean()


def decisions(P, classes, decision, threshold=0.5):
    """Each row's Bayes decision (module docstring): labels or 0/1 rows."""
    if decision == "threshold":
        return threshold_decision(P, threshold)
    if decision == "median":
        return median_decision(P, np.asarray(classes))
    return mode_decision(P, np.asarray(classes))


def predict_tracks(model, X):
    """``(soft, labels)`` of a fitted perspectivist model from one
    ``predict_proba``: each item's soft label (the mean of its rows, as
    ``predict_soft_labels``) and each row's Bayes decision (as ``predict``;
    multi-label: tuples of labels)."""
    P = model.predict_proba(X)
    soft = item_distributions(X[model.item], P, model.classes_)
    soft.columns = pd.Index(model.classes_)
    soft.index.name = model.item
    labels = decisions(P, model.classes_, model.decision_, model.threshold)
    if model.multilabel_:
        names = list(model.classes_)
        out = np.empty(len(labels), dtype=object)
        out[:] = [tuple(names[j] for j in np.flatnonzero(r)) for r in labels]
        labels = out
    return soft, labels


def track_scores(
    items, annotators, target, P, *, classes, ordinal, multilabel, decision=None
) -> dict:
    """``{metric: value}`` of both tracks for per-row probabilities ``P``.

    ``target`` holds each row's label (multi-label: 0/1 rows). Perspectivist
    metrics score the rows' decisions (``decision``; by default the Bayes
    decision of the track: threshold, median on an ordinal scale, else
    mode); soft metrics the items' marginals against the share of their
    annotators' labels. Scored by :func:`~sklearn_hcal.metrics.lewidi_scores`,
    as ``hcal evaluate`` scores the submission files.
    """
    if decision is None:
        decision = "threshold" if multilabel else "median" if ordinal else "mode"
    truth = lewidi_truth(
        items, annotators, target, classes=classes, multilabel=multilabel
    )
    pred = decisions(P, classes, decision)
    keys = truth.annotations[["item", "annotator"]]
    if multilabel:
        guess = pd.concat(
            [keys, pd.DataFrame(pred, columns=[str(c) for c in classes])], axis=1
        )
    else:
        guess = keys.assign(label=list(pred))
    return lewidi_scores(
        truth,
        soft=item_distributions(truth.annotations["item"], P, classes),
        perspectivist=guess,
        order=list(classes) if ordinal else None,
    )


def perspectivist_loss(model, X, target, pred) -> float:
    """The perspectivist track's metric of a fitted model's decisions ``pred``
    (multi-label: 0/1 rows) against ``target``, by
    :func:`~sklearn_hcal.metrics.lewidi_scores`: the absolute distance on an
    ordinal scale, the error rate otherwise (what ``score`` subtracts from 1).
    """
    n = len(pred)
    keyed = isinstance(X, pd.DataFrame)
    items = X[model.item].to_numpy() if keyed and model.item is not None else None
    who = (
        X[model.annotator].to_numpy() if keyed and model.annotator is not None else None
    )
    # rows without keys are told apart by position: each its own item, and
    # annotators of a pooled model one per row
    truth = lewidi_truth(
        np.arange(n) if items is None else items,
        np.arange(n) if who is None else who,
        target,
        classes=model.classes_,
        multilabel=model.multilabel_,
    )
    keys = truth.annotations[["item", "annotator"]]
    if model.multilabel_:
        names = [str(c) for c in model.classes_]
        guess = pd.concat([keys, pd.DataFrame(pred, columns=names)], axis=1)
    else:
        guess = keys.assign(label=list(pred))
    scores = lewidi_scores(
        truth,
        perspectivist=guess,
        order=list(model.classes_) if model.ordinal_ else None,
    )
    if model.ordinal_:
        return scores["perspectivist_absolute_distance"]
    return scores["perspectivist_error_rate"]


def baseline_probabilities(
    train_annotators, train_target, annotators, *, classes, multilabel
) -> dict:
    """The reference predictions of the targets, for the rows of a test fold.

    * ``"most frequent label"`` -- the training set's most frequent label
      (multi-label: every label chosen by at least half the rows) for every
      row, as a one-hot distribution;
    * ``"annotator's most frequent label"`` -- each annotator's own most
      frequent training label (the first of tied labels; the training set's
      for an annotator not seen in training);
    * ``"prior"`` -- the training distribution of labels, for every row (its
      marginal is the soft track's constant baseline).
    """
    T = _one_hot(train_target, classes, multilabel)
    prior = T.mean(axis=0)
    n = len(annotators)
    if multilabel:
        top = (prior >= 0.5).astype(np.float64)
    else:
        top = np.zeros(len(classes))
        top[int(np.argmax(prior))] = 1.0
    own = pd.DataFrame(T).groupby(np.asarray(train_annotators)).mean()
    if multilabel:
        own_top = (own >= 0.5).astype(np.float64)
    else:
        own_top = pd.DataFrame(
            np.eye(len(classes))[own.to_numpy().argmax(axis=1)], index=own.index
        )
    mine = own_top.reindex(np.asarray(annotators)).to_numpy(copy=True)
    unseen = np.isnan(mine).any(axis=1)
    mine[unseen] = top
    return {
        "most frequent label": np.tile(top, (n, 1)),
        "annotator's most frequent label": mine,
        "prior": np.tile(prior, (n, 1)),
    }


def cross_val_tracks(
    classifier,
    X,
    y,
    *,
    groups,
    n_splits=5,
    random_state=0,
    progress=None,
    item="item",
    annotator="annotator",
):
    """Item-grouped cross-validation of both tracks.

    Returns ``(scores, oof, model)``: a DataFrame with one row per (fold,
    model) -- the classifier (``"model"``) and the baselines of
    :func:`baseline_probabilities` -- and one column per metric; the
    out-of-fold probabilities of every row; the first fold's fitted
    classifier. ``progress(fold, n_splits)`` is called after each fold.
    ``item`` and ``annotator`` name the key columns of ``X`` (the
    classifier may pool annotators: ``annotator=None``).
    """
    cv = GroupKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    items = X[item].to_numpy()
    who = X[annotator].to_numpy()
    rows, oof, meta = [], None, None
    for fold, (train, test) in enumerate(cv.split(X, y, groups=groups)):
        model = clone(classifier).fit(X.iloc[train], _rows(y, train))
        P = model.predict_proba(X.iloc[test])
        if oof is None:
            oof = np.zeros((len(X), P.shape[1]))
            meta = model
        oof[test] = P
        scores = fold_track_scores(
            model, y, items, who, train, test, {"model": P}, decision=model.decision_
        )
        rows.extend({"fold": fold, "model": k, **v} for k, v in scores.items())
        if progress is not None:
            progress(fold + 1, n_splits)
    return pd.DataFrame(rows), oof, meta


def fold_track_scores(
    model, y, items, who, train, test, probabilities, *, decision=None
) -> dict:
    """Both tracks' scores of each named distribution of the ``test`` rows,
    and of the baselines of :func:`baseline_probabilities` fitted on the
    ``train`` rows: ``{name: {metric: score}}``. ``model`` is a fitted
    classifier (its ``classes_``, ``ordinal_``, ``multilabel_``);
    ``decision`` is used for the named distributions (None: each track's
    Bayes decision), the baselines always take each track's."""
    target = _target(model, y, test)
    kinds = dict(probabilities)
    baselines = baseline_probabilities(
        who[train],
        _target(model, y, train),
        who[test],
        classes=model.classes_,
        multilabel=model.multilabel_,
    )
    kinds.update(baselines)
    return {
        name: track_scores(
            items[test],
            who[test],
            target,
            probs,
            classes=model.classes_,
            ordinal=model.ordinal_,
            multilabel=model.multilabel_,
            decision=None if name in baselines else decision,
        )
        for name, probs in kinds.items()
    }


def _rows(y, index):
    return y.iloc[index] if hasattr(y, "iloc") else np.asarray(y)[index]


def _target(model, y, index):
    """The rows' labels as :func:`track_scores` takes them."""
    values = _rows(y, index)
    if not model.multilabel_:
        return list(values)
    if isinstance(values, pd.DataFrame) or np.ndim(values) == 2:
        return np.asarray(values, dtype=np.int64)
    labels = list(model.classes_)
    return np.array([[int(lab in row) for lab in labels] for row in values])
