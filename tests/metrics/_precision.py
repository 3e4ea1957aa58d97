"""The bootstrap's float32 products: the tolerance their replicates meet.

The replicates are sums over items of multiplicities times per-item values,
computed in float32 (developer guide §bootstrap-precision). A float32 sum of
``n`` terms, the terms themselves rounded to float32, errs by at most
``(n + 1)·u·Σ|terms|`` with ``u = 2**-24`` (Higham, *Accuracy and Stability
of Numerical Algorithms*, 2nd ed., §3.1, eq. 3.5, plus one rounding of each
term). The metrics are means, or bins, of such sums of values of order one
divided by exact counts, so a replicate agrees with its float64 computation
to ``(n + 1)·u`` in absolute and in relative terms (a dominant cell, a
slot's total minus its other cells, two such sums: ``assert_allclose``'s
``atol + rtol·|expected|`` gives that twice for values of order one); the
typical error is ``√n·u`` (observed: ≤ 6e-7 at n = 300, against the
bound's 1.8e-5).
"""

from __future__ import annotations


def float32_sums(n_samples: int) -> dict:
    """``rtol`` and ``atol`` of replicates of sums over ``n_samples`` items."""
    tol = (n_samples + 1) * 2.0**-24
    return {"rtol": tol, "atol": tol}
