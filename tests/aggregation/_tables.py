"""Constructed crowds: long tables drawn from a Dawid–Skene model."""

from __future__ import annotations

import numpy as np
import pandas as pd


def crowd_table(
    n_items=40,
    n_annotators=8,
    classes=("a", "b", "c"),
    per_item=4,
    *,
    accuracy=(0.55, 0.95),
    seed=0,
):
    """``(X, truth)``: ``per_item`` distinct annotators label each item.

    Each annotator has a confusion matrix with diagonal ``accuracy`` (drawn
    uniformly in the range) and the rest of each row spread at random; every
    annotator labels at least two items.
    """
    rng = np.random.default_rng(seed)
    K = len(classes)
    truth = rng.integers(0, K, n_items)
    acc = rng.uniform(*accuracy, size=n_annotators)
    confusion = np.empty((n_annotators, K, K))
    for w in range(n_annotators):
        off = rng.dirichlet(np.ones(K - 1), size=K) * (1 - acc[w])
        for z in range(K):
            confusion[w, z] = np.insert(off[z], z, acc[w])
    rows = []
    for i in range(n_items):
        # round-robin first annotator: every annotator gets items
        who = {i % n_annotators}
        while len(who) < per_item:
            who.add(int(rng.integers(n_annotators)))
        for w in sorted(who):
            k = rng.choice(K, p=confusion[w, truth[i]])
            rows.append((f"item{i:03d}", f"w{w:02d}", classes[k]))
    X = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    X = X.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return X, pd.Series(
        np.asarray(classes)[truth], index=[f"item{i:03d}" for i in range(n_items)]
    )
