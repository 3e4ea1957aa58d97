"""The dense block of a pretrained sentence encoder's vectors.

:class:`AnnotationVectorizer`'s ``encoder`` block: each free-text column's
vectors (each distinct text encoded once, :func:`._encoders.encode_texts`),
for an item's two texts ``[u, v, |u − v|, u ⊙ v]`` (Conneau et al. 2017),
weighted as one block, and optionally the cosine of the two texts' vectors
as one more column; with the block's feature names.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.pipeline import Pipeline

from ._encoders import encode_texts

__all__ = ["encoded_block", "encoded_names", "text_cosine"]


def encoded_block(
    encoder, prepared, columns, *, pair: bool, weight: float, similarity_weight
) -> sp.csr_matrix:
    """The encoded block: the texts' rows (a pair's four), the explanation's.

    ``columns`` of ``prepared`` are encoded by the fitted ``encoder``; with a
    ``pair`` (the first two columns an item's two texts) ``|u − v|`` and
    ``u ⊙ v`` follow them. The block is multiplied by ``weight``; unless
    ``similarity_weight`` is None (it needs a ``pair``), the two texts'
    cosine (:func:`text_cosine`) times it is the last column: of the
    vectors already encoded, or of the first step's when ``encoder`` is a
    :class:`~sklearn.pipeline.Pipeline` (before a reduction).
    """
    cols = columns
    n = len(prepared)
    rows = encode_texts(encoder, np.concatenate([prepared[c].to_numpy() for c in cols]))
    parts = [rows[j * n : (j + 1) * n] for j in range(len(cols))]
    if pair:
        u, v = parts[:2]
        product = u.multiply(v) if sp.issparse(u) else u * v
        parts[2:2] = [abs(u - v), product]
    block = sp.hstack(parts) if sp.issparse(rows) else np.hstack(parts)
    block = sp.csr_matrix(block * float(weight))
    if similarity_weight is None:
        return block
    if isinstance(encoder, Pipeline):
        # the sentence vectors before the reduction: the first step's
        first = np.concatenate([prepared[c].to_numpy() for c in cols[:2]])
        raw = encode_texts(encoder[0], first)
        u, v = raw[:n], raw[n:]
    cosine = text_cosine(u, v)
    weighted = sp.csr_matrix(cosine[:, None] * float(similarity_weight))
    return sp.hstack([block, weighted], format="csr")


def text_cosine(u, v) -> np.ndarray:
    """The cosine of each row of ``u`` with the same row of ``v`` (0 where
    a vector is 0); dense or sparse rows."""
    u = u.toarray() if sp.issparse(u) else np.asarray(u, dtype=np.float64)
    v = v.toarray() if sp.issparse(v) else np.asarray(v, dtype=np.float64)
    norms = np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1)
    dots = np.einsum("ij,ij->i", u, v)
    return np.divide(dots, norms, out=np.zeros(len(u)), where=norms > 0)


def encoded_names(
    columns, n_features: int, *, pair: bool, similarity: bool
) -> np.ndarray:
    """The block's feature names: ``encoder__<column><k>`` (a pair's
    ``absdiff`` and ``product`` after its two texts), ``encoder__cosine``."""
    if not n_features:
        return np.array([], dtype=object)
    cols = [str(c) for c in columns]
    if pair:
        cols[2:2] = ["absdiff", "product"]
    similarity = ["encoder__cosine"] if similarity else []
    width = (n_features - len(similarity)) // len(cols)
    names = [f"encoder__{c}{k}" for c in cols for k in range(width)]
    return np.array(names + similarity, dtype=object)
