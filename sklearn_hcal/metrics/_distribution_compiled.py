"""Compiled kernels of the distribution metrics' per-item terms (``fast`` extra).

:func:`~._distribution_kernels._jsd_per_item`,
:func:`~._distribution_kernels.kl_per_item`
and the stable-order comparison of the ranking score, each in a few passes
instead of a dozen numpy calls, to the numpy path's bits:

* the logarithms stay numpy's: a kernel writes the ratios (both sides of
  the Jensen-Shannon terms in one buffer), ``np.log`` takes the buffer in
  one call, and the next kernels finish the products and the row sums
  (numba's ``log`` is not numpy's SIMD one: the last bit differs on some
  values);
* ``p̂ = Y / n`` is formed entry by entry (the quotients of the numpy
  path's table and division);
* each row is summed in the order of :func:`~sklearn_hcal._validation.row_sums`
  (``np.einsum("ij->i")``: two lanes, four pairs a step, the odd value
  added to the first lane, then the lanes): :func:`kernels_ready`
  checks it against the installed numpy once, and the callers take the
  numpy path where it does not hold (another build's vector width).

Flat loops with selects, not branches, are vectorised (the divisions
dominate); a kernel per pass, as a call of a compiled helper per row costs
more than the row's sum.
"""

from __future__ import annotations

import numpy as np

from ..utils._compiled import compiled_available, fall_back, kernel

__all__ = [
    "jsd_distance",
    "jsd_ratios",
    "jsd_terms",
    "kernels_ready",
    "kl_floor",
    "kl_ratios",
    "kl_terms",
    "row_sums",
    "same_stable_order",
]


@kernel
def row_sums(A, out):
    """``np.einsum("ij->i", A)``'s sums, ``A`` C-ordered float64.

    Two lanes: four pairs of values a step (the first of each pair to lane
    0), then single pairs, the odd last value to lane 0, then lane 0 + lane
    1. Written out here, not called per row: a call per row costs more
    than the sum.
    """
    n_cols = A.shape[1]
    n_steps = n_cols >> 3
    for i in range(A.shape[0]):
        acc0 = 0.0
        acc1 = 0.0
        for b in range(n_steps):
            j = 8 * b
            acc0 = ((A[i, j] + A[i, j + 2]) + (A[i, j + 4] + A[i, j + 6])) + acc0
            acc1 = ((A[i, j + 1] + A[i, j + 3]) + (A[i, j + 5] + A[i, j + 7])) + acc1
        for j in range(8 * n_steps, n_cols - 1, 2):
            acc0 = A[i, j] + acc0
            acc1 = A[i, j + 1] + acc1
        if n_cols & 1:
            acc0 = A[i, n_cols - 1] + acc0
        out[i] = acc0 + acc1


_STATE: dict = {"ready": None}


def kernels_ready() -> bool:
    """Whether the kernels run and :func:`row_sums` is ``np.einsum``'s here.

    False when numba is missing or switched off (asked at every call).
    Else checked once, on rows of 1 to 40 values of mixed magnitudes: a
    numpy build of another vector width sums in another order, and the
    callers then keep the numpy path.
    """
    if not compiled_available():
        return False
    if _STATE["ready"] is None:
        compiled = row_sums.get()
        rng = np.random.default_rng(0)
        holds = True
        for m in range(1, 41):
            A = rng.random((64, m)) * rng.choice([1.0, 1e-9, 1e9], (64, m))
            out = np.empty(64)
            compiled(A, out)
            holds = holds and bool(np.array_equal(out, np.einsum("ij->i", A)))
        _STATE["ready"] = holds
        if not holds:
            fall_back(
                "this numpy build sums rows in another order than the "
                "distribution kernels reproduce (np.einsum('ij->i'))"
            )
    return _STATE["ready"]


@kernel
def jsd_ratios(values, divisor, q, p_hat, left, right):
    """``left = 2p̂/(p̂ + q)``, ``right = 2q/(p̂ + q)``, zeros made 1.

    Flat C-ordered rows; ``p̂ = values / divisor`` (the counts over their
    one number of labels, or ``p̂`` itself over 1.0: the same quotients),
    kept in ``p_hat`` for :func:`jsd_terms`. ``p̂ + q = 0`` is made 1 first
    (both ratios are then 0, made 1: their terms are 0). Selects, not
    branches, over flat arrays: vectorised.
    """
    for j in range(q.shape[0]):
        p = values[j] / divisor
        p_hat[j] = p
        b = q[j]
        total = p + b
        total = total if total != 0 else 1.0
        ratio = (p + p) / total
        left[j] = ratio if ratio != 0 else 1.0
        ratio = (b + b) / total
        right[j] = ratio if ratio != 0 else 1.0


@kernel
def jsd_terms(p_hat, q, left, right):
    """``left = log(left ratio)·p̂ + log(right ratio)·q`` (in place)."""
    for j in range(q.shape[0]):
        left[j] = left[j] * p_hat[j] + right[j] * q[j]


@kernel
def jsd_distance(sums, log_base, squared):
    """``½ Σ`` of the terms (``sums``, in place) made the distance (or the
    divergence), floored at 0 against rounding, in ``log_base`` units."""
    for i in range(sums.shape[0]):
        div = 0.5 * sums[i]
        div = 0.0 if div < 0.0 else div  # np.maximum(div, 0.0)
        div = div / log_base
        sums[i] = div if squared else np.sqrt(div)


@kernel
def kl_floor(q, eps, floored):
    """``floored = max(q, eps)`` (flat)."""
    for j in range(q.shape[0]):
        b = q[j]
        floored[j] = b if b >= eps else eps


@kernel
def kl_ratios(values, divisor, totals, p_hat, ratios):
    """``ratios = p̂ / (q' / Σ q')`` in place of ``q'`` (the flat
    :func:`kl_floor` rows; ``totals`` their :func:`row_sums`), zeros made
    1; ``p̂ = values / divisor`` kept in ``p_hat``. The totals are spread
    over ``p_hat`` first, so that the divisions run over flat arrays."""
    n_classes = ratios.shape[0] // totals.shape[0]
    for i in range(totals.shape[0]):
        for j in range(i * n_classes, (i + 1) * n_classes):
            p_hat[j] = totals[i]
    for j in range(ratios.shape[0]):
        p = values[j] / divisor
        ratio = p / (ratios[j] / p_hat[j])
        p_hat[j] = p
        ratios[j] = ratio if ratio != 0 else 1.0


@kernel
def kl_terms(p_hat, logs):
    """``logs = log(ratio)·p̂`` (flat, in place)."""
    for j in range(logs.shape[0]):
        logs[j] = logs[j] * p_hat[j]


@kernel
def same_stable_order(Y, P, out):
    """``out_i``: every pair ``j < k`` compares alike, ``Y_ij <= Y_ik`` iff
    ``q_ij <= q_ik`` (the stable argsorts of both rows are equal)."""
    n_items, n_classes = P.shape
    for i in range(n_items):
        same = True
        for j in range(n_classes - 1):
            y_j = Y[i, j]
            q_j = P[i, j]
            for k in range(j + 1, n_classes):
                if (y_j <= Y[i, k]) != (q_j <= P[i, k]):
                    same = False
                    break
            if not same:
                break
        out[i] = same
