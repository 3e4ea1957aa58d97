"""The arithmetic of the agreement coefficients, on per-item label counts.

Everything here takes checked integer counts ``Y`` of shape
``(n_items, n_values)`` (the values in scale order) and works on whole
arrays: Krippendorff's α is read off the *coincidence matrix* (Krippendorff
2011, "Computing Krippendorff's alpha-reliability", §C), which is a sum of
per-item terms,

``o = Σ_u (Y_u Y_uᵀ − diag Y_u) / (m_u − 1)``  (items with ``m_u ≥ 2``),

so it is one ``(K × N) @ (N × K)`` product, never the annotators × items
reliability matrix. With ``n_c = Σ_k o_ck``, ``n = Σ_c n_c`` and the
distance ``δ`` of the level of measurement,

``α = 1 − D_o / D_e = 1 − (n − 1) Σ o_ck δ_ck / Σ_{c≠k} n_c n_k δ_ck``.

The functions are vectorised over leading axes of ``o`` (bootstrap
replicates, one matrix per left-out annotator), the ordinal distance
depending on each matrix's own ``n_c``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "LEVELS",
    "alpha_from_coincidences",
    "annotator_coincidences",
    "coincidences",
    "distances",
    "fleiss_from_counts",
    "item_coincidences",
    "loo_majority_agreement",
    "pairwise_kappa",
]

#: Krippendorff's levels of measurement (his distance functions δ²).
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _weights(m: np.ndarray) -> np.ndarray:
    """``1 / (m − 1)`` for pairable items (``m ≥ 2``), 0 for the others."""
    out = np.zeros(m.shape, dtype=np.float64)
    np.divide(1.0, m - 1.0, out=out, where=m >= 2)
    return out


def coincidences(Y: np.ndarray) -> np.ndarray:
    """The coincidence matrix ``o`` (K × K) of counts ``Y`` (N × K).

    Items with fewer than two annotations contribute nothing (their weight
    is 0), as Krippendorff defines it.
    """
    Y = np.asarray(Y, dtype=np.float64)
    g = _weights(Y.sum(axis=1))
    Yg = Y * g[:, None]
    o = Yg.T @ Y
    o[np.diag_indices_from(o)] -= Yg.sum(axis=0)
    return o


def item_coincidences(Y: np.ndarray) -> np.ndarray:
    """Each item's coincidences, ``(N, K, K)``: ``coincidences`` summed over items."""
    Y = np.asarray(Y, dtype=np.float64)
    g = _weights(Y.sum(axis=1))
    out = Y[:, :, None] * Y[:, None, :]
    idx = np.arange(Y.shape[1])
    out[:, idx, idx] -= Y
    out *= g[:, None, None]
    return out


def distances(values: np.ndarray, level: str, n_v: np.ndarray) -> np.ndarray:
    """Krippendorff's squared distances δ²(c, k) between the scale's values.

    ``values`` (K,) are the values in scale order; ``n_v`` (..., K) the
    pairable values' totals (the ordinal distance counts the values between
    ``c`` and ``k``, Krippendorff 2011, §E). Returns ``(K, K)`` for the
    levels whose distance is fixed, ``(..., K, K)`` for ordinal.
    """
    K = len(values)
    if level == "nominal":
        return 1.0 - np.eye(K)
    if level == "ordinal":
        n_v = np.asarray(n_v, dtype=np.float64)
        i = np.arange(K)
        lo, hi = np.minimum.outer(i, i), np.maximum.outer(i, i)
        total = np.concatenate(
            [np.zeros(n_v.shape[:-1] + (1,)), np.cumsum(n_v, axis=-1)], axis=-1
        )
        between = total[..., hi + 1] - total[..., lo]
        return (between - (n_v[..., lo] + n_v[..., hi]) / 2) ** 2
    v = np.asarray(values, dtype=np.float64)
    diff = v[:, None] - v[None, :]
    if level == "interval":
        return diff**2
    # ratio: ((c − k) / (c + k))², 0 where c + k = 0
    total = v[:, None] + v[None, :]
    ratio = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0)
    return ratio**2


def alpha_from_coincidences(o: np.ndarray, values: np.ndarray, level: str):
    """α of coincidence matrices ``o`` (..., K, K); NaN where ``D_e = 0``."""
    o = np.asarray(o, dtype=np.float64)
    n_v = o.sum(axis=-2)
    n = n_v.sum(axis=-1)
    d = distances(values, level, n_v)
    observed = (o * d).sum(axis=(-2, -1))
    # Σ_{c,k} n_c n_k δ_ck: the diagonal of δ is 0 at every level
    expected = np.einsum("...c,...ck,...k->...", n_v, d, n_v)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    alpha = np.where((expected > 0) & (n > 1), alpha, np.nan)
    return alpha[()] if alpha.ndim == 0 else alpha


def fleiss_from_counts(Y: np.ndarray, method: str = "fleiss") -> float:
    """Fleiss' κ (1971, eqs. 2-9) of counts with equal row sums ``m``.

    ``method="randolph"``: the free-marginal κ of Randolph (2005), chance
    agreement ``1/K``.
    """
    Y = np.asarray(Y, dtype=np.float64)
    n_items, K = Y.shape
    m = Y[0].sum()
    p_class = Y.sum(axis=0) / (n_items * m)
    p_item = ((Y * Y).sum(axis=1) - m) / (m * (m - 1.0))
    p_mean = p_item.mean()
    chance = (p_class * p_class).sum() if method == "fleiss" else 1.0 / K
    if chance == 1.0:
        return float("nan")
    return float((p_mean - chance) / (1.0 - chance))


def annotator_coincidences(Y, item, annotator, code, n_annotators):
    """``(n_annotators, K, K)``: what each annotator's labels add to ``o``.

    Removing annotation ``r`` (label ``l`` on item ``u``, counts ``Y_u``,
    ``m_u`` annotations) changes the item's term by
    ``[g(m) − g(m − 1)] (Y_u Y_uᵀ − diag Y_u) + g(m − 1) (Y_u e_lᵀ + e_l Y_uᵀ
    − 2 e_l e_lᵀ)`` with ``g(m) = 1/(m − 1)`` (0 below 2). An annotator labels
    an item once, so the changes of its rows add up: the first term is one
    sparse (annotator × item) product of the items' ``Y_u Y_uᵀ − diag Y_u``,
    the second one of the rows' ``Y_u`` grouped by (annotator, label).
    ``o − annotator_coincidences(...)[a]`` is the table without ``a``.
    """
    Y = np.asarray(Y, dtype=np.float64)
    n_items, K = Y.shape
    m = Y.sum(axis=1)
    g_all, g_less = _weights(m), _weights(m - 1.0)
    incidence = sp.csr_matrix(
        ((g_all - g_less)[item], (annotator, item)), shape=(n_annotators, n_items)
    )
    q = Y[:, :, None] * Y[:, None, :]
    idx = np.arange(K)
    q[:, idx, idx] -= Y
    first = np.asarray(incidence @ q.reshape(n_items, K * K)).reshape(-1, K, K)
    by_label = sp.csr_matrix(
        (g_less[item], (annotator * K + code, np.arange(len(item)))),
        shape=(n_annotators * K, len(item)),
    )
    # cross[a, l, :] = Σ_{rows of a with label l} g(m − 1) Y_u
    cross = np.asarray(by_label @ Y[item]).reshape(n_annotators, K, K)
    second = cross + cross.transpose(0, 2, 1)
    weight = np.bincount(
        annotator * K + code, weights=g_less[item], minlength=n_annotators * K
    ).reshape(n_annotators, K)
    second[:, idx, idx] -= 2.0 * weight
    return first + second


def loo_majority_agreement(Y, item, code):
    """Each annotation's agreement with the majority of the item's other labels.

    1 when its label is the others' only most frequent label, ``1/t`` when it
    is one of ``t`` tied ones, 0 otherwise; NaN when the item has no other
    annotation.
    """
    others = np.asarray(Y, dtype=np.float64)[item]
    rows = np.arange(len(item))
    others[rows, code] -= 1.0
    top = others.max(axis=1)
    tied = others == top[:, None]
    n_tied = tied.sum(axis=1)
    out = tied[rows, code] / n_tied
    return np.where(top > 0, out, np.nan)


def pairwise_kappa(item, annotator, code, n_items, n_annotators, weights):
    """Cohen's κ of every pair of annotators on the items both labelled.

    ``weights`` is the ``(K, K)`` disagreement weight matrix (``1 − I``,
    ``|k − l|`` or ``(k − l)²``, scikit-learn's ``cohen_kappa_score``).
    Every pair's confusion matrix is a block of ``AᵀA``, ``A`` the sparse
    item × (annotator, label) indicator; the κ's are read from its entries
    with ``bincount``. Returns ``(kappa, n_common)``, both
    ``(n_annotators, n_annotators)``.
    """
    K = weights.shape[0]
    A = sp.csr_matrix(
        (np.ones(len(item)), (item, annotator * K + code)),
        shape=(n_items, n_annotators * K),
    )
    C = (A.T @ A).tocoo()
    a, k = np.divmod(C.row, K)
    b, j = np.divmod(C.col, K)
    pair = a * n_annotators + b
    size = n_annotators * n_annotators
    common = np.bincount(pair, weights=C.data, minlength=size)
    observed = np.bincount(pair, weights=C.data * weights[k, j], minlength=size)
    rows = np.bincount(pair * K + k, weights=C.data, minlength=size * K)
    rows = rows.reshape(n_annotators, n_annotators, K)
    cols = rows.transpose(1, 0, 2)  # b's label counts on the items shared with a
    expected = np.einsum("abk,kl,abl->ab", rows, weights, cols).reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1.0 - observed * common / expected
    kappa = np.where(expected > 0, kappa, np.nan)
    shape = (n_annotators, n_annotators)
    return kappa.reshape(shape), common.reshape(shape)
