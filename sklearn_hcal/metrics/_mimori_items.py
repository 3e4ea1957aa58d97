"""Per-item terms of Mimori et al.'s (2021) squared loss (eq. 6, 9–10, Prop. 1).

The job split off :mod:`._mimori_kernels` (the binned sums): each item's
irreducible, epistemic and squared-loss terms, which the metric functions
average and the report reads as per-item columns.
"""

from __future__ import annotations

from .._validation import row_sums
from ._mimori_kernels import _correction_factor


def _gini_per_item(p_hat, n, debiased):
    """``Σ_k p̂_k(1 − p̂_k)``, times ``n/(n − 1)`` where ``n >= 2`` if debiased.

    The irreducible loss ``IL`` of an item (Mimori et al. 2021, eq. 6): the
    debiased version is the unbiased disagreement probability.
    """
    gini = row_sums(p_hat * (1.0 - p_hat))
    return gini * (1.0 + _correction_factor(n)) if debiased else gini


def _epistemic_per_item(block, debiased):
    """``Σ_k (p̂ − q)²`` minus, if debiased, ``Σ_k p̂(1 − p̂)/(n − 1)`` (eq. 9–10)."""
    resid = block.p_hat - block.P
    el = row_sums(resid * resid)
    if debiased:
        el -= _gini_per_item(block.p_hat, block.n, False) * _correction_factor(block.n)
    return el


def _squared_loss_per_item(block):
    """``Σ_k (p̂ − q)² + p̂(1 − p̂)`` per item: Prop. 1's unbiased squared loss."""
    return row_sums((block.p_hat - block.P) ** 2) + _gini_per_item(
        block.p_hat, block.n, False
    )
