"""Per-item kernels of the soft metrics of :mod:`._hlv`.

Validated float arrays in (``p_hat``: the human distribution, ``P``: the
predicted one), one value (or the parts of a ratio / a correlation) per item
out; the public functions and the registry's hooks in :mod:`._hlv` aggregate
them.
"""

from __future__ import annotations

import numpy as np

from .._validation import row_sums
from ._distribution_kernels import _block_entropies, _entropy, _jsd_per_item
from ._pearson import _pearson_cells


def soft_cross_entropy_per_item(p_hat, P, eps=1e-12, offset=1e-9):
    """``−Σ_k p̂_ik log(clip(q_ik, eps, 1 − eps) + offset)`` per item.

    LeWiDi 2023's scorer (and 2021's soft evaluation): natural log, ``q``
    clipped to ``[1e-12, 1 − 1e-12]`` and ``1e-9`` added inside the log, so a
    zero prediction costs ``−log(1.001e-9) ≈ 20.7`` per unit of human mass.
    """
    q = np.clip(np.asarray(P, dtype=np.float64), eps, 1.0 - eps)
    q += offset
    np.log(q, out=q)
    q *= p_hat
    return -row_sums(q)


def manhattan_per_item(p_hat, P):
    """``Σ_k |p̂_ik − q_ik|`` per item (twice the total variation)."""
    diff = np.subtract(p_hat, P, dtype=np.float64)
    return row_sums(np.abs(diff, out=diff))


def _soft_accuracy_per_item(p_hat, P):
    """``Σ_k min(p̂_ik, q_ik)``: the fuzzy-set overlap, ``1 − TVD`` per item."""
    return row_sums(np.minimum(p_hat, P, dtype=np.float64))


def _soft_micro_f1_parts_per_item(p_hat, P):
    """``(2 Σ_k min(p̂_ik, q_ik), Σ_k (p̂_ik + q_ik))`` per item.

    Soft micro-F1 is a ratio of sums over all items (Kurniawan et al., 2025):
    aggregate with ``Σ_i numerator_i / Σ_i denominator_i``.
    """
    num = 2.0 * row_sums(np.minimum(p_hat, P, dtype=np.float64))
    den = row_sums(np.add(p_hat, P, dtype=np.float64))
    return num, den


def _po_jsd_per_item(p_hat, P):
    """``1 − JSD(p̂_i, q_i)`` with the Jensen-Shannon *divergence* in bits."""
    return 1.0 - _jsd_per_item(p_hat, P, base=2, squared=True)


def _entropy_correlation_parts_per_item(p_hat, P, entropies=None):
    """``(H(p̂_i) / log K, H(q_i) / log K)`` per item: entropies on ``[0, 1]``.

    Entropy correlation is Pearson's r of these two columns across items
    (Kurniawan et al., 2025), not a mean: aggregate with a correlation.
    ``entropies`` are ``(H(p̂), H(q))`` in nats when already computed.
    """
    if entropies is None:
        entropies = _entropy(p_hat), _entropy(P)
    log_k = np.log(np.shape(P)[1])
    return entropies[0] / log_k, entropies[1] / log_k


def _block_entropy_correlation_cells(block):
    """:func:`_pearson_cells` of a block's normalised entropies (shared with
    the report's other entropy columns through the block's cache)."""
    parts = _entropy_correlation_parts_per_item(
        block.p_hat, block.P, _block_entropies(block)
    )
    return _pearson_cells(*parts)
