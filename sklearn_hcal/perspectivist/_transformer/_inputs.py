"""The rows as the network reads them, and each head's targets and outputs.

A row's input is its item's text fields joined by the tokenizer's
separator (``"text1 [SEP] text2"``), paired with the annotator's
explanation when that goes in (a tokenizer's sentence pair), cut at
``max_length`` tokens; its annotator is a code (``-1``: not seen in fit).
The heads (developer guide §perspectivist):

* ``"categorical"``: K logits, softmax, cross-entropy on the class code;
* ``"ordinal"``: K − 1 cumulative logits ``P(y > c_k)``, one sigmoid each,
  binary cross-entropy on the indicators ``y > c_k``; the class
  probabilities are differences of the cumulative ones, made monotone;
* ``"multilabel"``: one sigmoid per label, binary cross-entropy on the
  0/1 row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["head_kind", "head_probabilities", "head_targets", "row_texts"]


def head_kind(multilabel: bool, ordinal: bool) -> str:
    """The head of a target: multi-label, ordinal or categorical."""
    return "multilabel" if multilabel else "ordinal" if ordinal else "categorical"


def n_outputs(kind: str, n_classes: int) -> int:
    """Logits of a head over ``n_classes`` classes (or labels)."""
    return n_classes - 1 if kind == "ordinal" else n_classes


def row_texts(X: pd.DataFrame, columns, explanation, sep: str):
    """``(first, second)``: the joined text fields, the explanations (or None)."""
    fields = [X[c].astype(object).where(X[c].notna(), "").map(str) for c in columns]
    first = fields[0]
    for more in fields[1:]:
        first = first + f" {sep} " + more
    if explanation is None:
        return first.tolist(), None
    if explanation not in X.columns:  # a test file without explanations
        return first.tolist(), [""] * len(X)
    values = X[explanation]
    return first.tolist(), values.astype(object).where(values.notna(), "").map(
        str
    ).tolist()


def head_targets(kind: str, target, classes) -> np.ndarray:
    """The training targets of a head (codes, or float indicator rows)."""
    if kind == "multilabel":
        return np.asarray(target, dtype=np.float32)
    codes = pd.Index(list(classes)).get_indexer(list(target))
    if kind == "categorical":
        return codes.astype(np.int64)
    return (codes[:, None] > np.arange(len(classes) - 1)[None, :]).astype(np.float32)


def head_probabilities(kind: str, logits: np.ndarray) -> np.ndarray:
    """Each row's probabilities (multi-label: per label) from its logits."""
    z = np.asarray(logits, dtype=np.float64)
    if kind == "categorical":
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)
    s = 1.0 / (1.0 + np.exp(-z))
    if kind == "multilabel":
        return s
    # P(y > c_k) must not increase with k: the K − 1 sigmoids are separate
    # outputs, so take the running minimum before differencing
    above = np.minimum.accumulate(s, axis=1)
    n = len(z)
    cdf_above = np.hstack([np.ones((n, 1)), above, np.zeros((n, 1))])
    return cdf_above[:, :-1] - cdf_above[:, 1:]
