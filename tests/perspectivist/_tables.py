"""Small long tables of annotations with a known structure, for fast tests.

Each item has a latent rating ``s`` on the scale −2..2 that its text gives
away (the word ``topic<s>``); each annotator adds an offset (A: +1, B: 0,
C: −1) and the label is ``clip(s + offset + noise)``. An annotator's
explanation says ``same`` for a positive label and ``different`` otherwise,
among filler words. Multi-label tables give each annotator one or two of
three NLI labels.
"""

import numpy as np
import pandas as pd

SCALE = [-2, -1, 0, 1, 2]
OFFSETS = {"A": 1, "B": 0, "C": -1}
FILLER = ["the", "question", "asks", "about", "this", "and", "that", "maybe"]
NLI = ["contradiction", "entailment", "neutral"]


def ordinal_table(n_items=60, annotators=("A", "B", "C"), seed=0):
    """``(X, y)``: the long table without its label, and the labels."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for i in range(n_items):
        s = int(rng.integers(-2, 3))
        text = " ".join(rng.choice(FILLER, 5)) + f" topic{s}"
        for who in annotators:
            noise = int(rng.choice([-1, 0, 0, 0, 1]))
            label = int(np.clip(s + OFFSETS.get(who, 0) + noise, -2, 2))
            reason = "same" if label > 0 else "different"
            rows.append(
                {
                    "item": f"i{i}",
                    "annotator": who,
                    "question": text,
                    "explanation": " ".join(rng.choice(FILLER, 3)) + f" {reason}",
                    "Gender": "F" if who == "A" else "M",
                }
            )
            labels.append(label)
    return pd.DataFrame(rows), pd.Series(labels, name="label")


def multilabel_table(n_items=60, annotators=("A", "B", "C"), seed=0):
    """``(X, y)`` with ``y`` a Series of label tuples (``frame['label']``)."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for i in range(n_items):
        base = int(rng.integers(0, 3))
        for who in annotators:
            chosen = {NLI[base]} if rng.uniform() < 0.8 else {NLI[int(rng.integers(3))]}
            if rng.uniform() < 0.15:
                chosen.add(NLI[(base + 1) % 3])
            rows.append(
                {
                    "item": f"i{i}",
                    "annotator": who,
                    "context": " ".join(rng.choice(FILLER, 6)),
                    "explanation": " ".join(
                        f"why{NLI.index(c)}" for c in sorted(chosen)
                    )
                    + " "
                    + " ".join(rng.choice(FILLER, 2)),
                }
            )
            labels.append(tuple(lab for lab in NLI if lab in chosen))
    return pd.DataFrame(rows), pd.Series(labels, name="label")
