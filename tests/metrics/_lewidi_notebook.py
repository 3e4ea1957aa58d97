"""The LeWiDi 2025 evaluation notebook's functions, written again, and
submissions drawn where its arithmetic decides the last digit.

The notebook (``Evaluation_LeWiDi_2025_Metrics.ipynb``) works on plain
Python lists: each item's distance is a Python ``sum`` over the classes,
rounded with Python's ``round`` where the function rounds; ``average_MD``,
``average_WS`` and ``multilabel_average_MD`` average with ``sum(...) /
len(...)`` in file order, the error rates and the absolute distance with
``np.mean``; the Wasserstein distance of an item is POT's ``ot.emd2`` on
|i − j| costs. Written from those definitions, not copied.
"""

from __future__ import annotations

import json

import numpy as np


# --------------------------------------------------------------------------- #
# soft track
# --------------------------------------------------------------------------- #
def average_md(targets, predictions):
    distances = []
    for target, prediction in zip(targets, predictions):
        distance = sum(abs(p - t) for p, t in zip(prediction, target))
        distances.append(round(distance, 5))
    return round(sum(distances) / len(distances), 5)


def average_ws(targets, predictions):
    import ot

    distances = []
    for target, prediction in zip(targets, predictions):
        t, p = np.array(target, dtype=float), np.array(prediction, dtype=float)
        k = len(t)
        cost = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]).astype(float)
        distances.append(ot.emd2(t, p, cost))
    return round(sum(distances) / len(targets), 5)


def multilabel_average_md(targets, predictions):
    """``targets``/``predictions``: per item, per label, the pair [P0, P1]."""
    scores = [average_md(t, p) for t, p in zip(targets, predictions)]
    return round(sum(scores) / len(scores), 5)


# --------------------------------------------------------------------------- #
# perspectivist track
# --------------------------------------------------------------------------- #
def error_rate(targets, predictions):
    """``targets``/``predictions``: per item, one 0/1 entry per annotator
    (single-label: 1 = correct against all ones)."""
    scores = []
    for target, prediction in zip(targets, predictions):
        errors = sum(abs(t - p) for t, p in zip(target, prediction))
        scores.append(round(1 - ((len(target) - errors) / len(target)), 5))
    return float(np.mean(scores))


def multilabel_error_rate(targets, predictions):
    """Per item, per label, one 0/1 entry per annotator."""
    return float(np.mean([error_rate(t, p) for t, p in zip(targets, predictions)]))


def mean_absolute_distance(targets, predictions, scale):
    distances = []
    for target, prediction in zip(targets, predictions):
        total = sum(abs(t - p) for t, p in zip(target, prediction))
        distances.append(total / len(target) / scale)
    return float(np.mean(distances))


# --------------------------------------------------------------------------- #
# Files and submissions
# --------------------------------------------------------------------------- #
def subset(src, dest, n_items, start=0):
    """The JSON records of ``n_items`` items of ``src``, written to ``dest``."""
    records = json.loads(src.read_text(encoding="utf-8"))
    keep = dict(list(records.items())[start : start + n_items])
    dest.write_text(json.dumps(keep), encoding="utf-8")
    return keep


def annotators(record):
    """The notebook's annotators: the keys of ``annotations``."""
    return list(record["annotations"])


def decimal_rows(rng, n_rows, n_classes, decimals):
    """Rows of ``decimals``-decimal probabilities summing to 1 in decimal:
    ``(texts, values)``, the strings as a participant writes them and the
    floats they parse to."""
    unit = 10**decimals
    counts = rng.multinomial(unit, rng.dirichlet(np.ones(n_classes)), size=n_rows)
    texts = [[f"{c / unit:.{decimals}f}" for c in row] for row in counts]
    return texts, [[float(x) for x in row] for row in texts]


def decimal_probabilities(rng, n_rows, n_labels, decimals):
    """Per-label probabilities with ``decimals`` decimals, and the pairs
    ``[1 - p, p]`` written in decimal (``(texts, pair values)``)."""
    unit = 10**decimals
    counts = rng.integers(0, unit + 1, size=(n_rows, n_labels))
    texts = [
        [[f"{(unit - c) / unit:.{decimals}f}", f"{c / unit:.{decimals}f}"] for c in row]
        for row in counts
    ]
    values = [[[float(a), float(b)] for a, b in row] for row in texts]
    return texts, values
