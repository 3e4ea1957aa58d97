"""Issue 30's speed-ups equal what they replace, to the bit (no timings here).

Each fast path is compared with the plain definition or the previous code:
the pairwise stable-order comparison with ``argsort(kind="stable")``, the
one-pass reduction of the binned statistics with one ``bincount`` per
statistic (and its fallback without scipy's loop), and the metric
functions' class-wise sums (counts by ``bincount``) with the report's
seven-statistic cells.
"""

from __future__ import annotations

import numpy as np
import pytest

import sklearn_hcal.utils._compat as compat
from sklearn_hcal.metrics._cells import cell_sums
from sklearn_hcal.metrics._distribution_kernels import (
    _rank_match_per_item,
    _same_stable_order,
)
from sklearn_hcal.metrics._mimori_kernels import (
    SUB_BLOCK_ELEMENTS,
    _cell_sums,
    _cell_values,
)
from sklearn_hcal.utils._compat import add_rows_at


@pytest.mark.parametrize("n_classes", [2, 3, 5, 10, 16, 20])
@pytest.mark.parametrize("integer", [True, False])
def test_pairwise_stable_order_equals_argsort(n_classes, integer):
    rng = np.random.default_rng(n_classes)
    P = rng.dirichlet(np.ones(n_classes), size=3000)
    Y = rng.multinomial(4, P)  # many human ties
    P[::5, 0] = P[::5, 1]  # model ties
    # a third of the rows ranked exactly as the model ranks them
    Y[::3] = np.argsort(np.argsort(P[::3], kind="stable"), kind="stable")
    if not integer:
        Y = Y / Y.sum(axis=1, keepdims=True)
    expected = np.all(
        np.argsort(Y, axis=1, kind="stable") == np.argsort(P, axis=1, kind="stable"),
        axis=1,
    )
    assert 0 < expected.mean() < 1  # both outcomes occur
    np.testing.assert_array_equal(_same_stable_order(Y, P), expected)
    np.testing.assert_array_equal(_rank_match_per_item(Y, P), expected)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("scipy_loop", [True, False])
def test_one_pass_reduction_equals_a_bincount_per_statistic(
    weighted, scipy_loop, monkeypatch
):
    if not scipy_loop:
        monkeypatch.setattr(compat, "_csc_matvecs", None)
    rng = np.random.default_rng(0)
    index = rng.integers(0, 37, size=20_000)
    rows = rng.normal(size=(20_000, 7))
    w = rng.integers(0, 5, size=20_000).astype(float) if weighted else None
    out = np.zeros((37, 7))
    add_rows_at(out, index, rows, w)
    expected = np.column_stack(
        [
            np.bincount(
                index, weights=rows[:, s] * (1.0 if w is None else w), minlength=37
            )
            for s in range(7)
        ]
    )
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("weighted", [False, True])
def test_class_wise_sums_equal_the_seven_statistic_cells(weighted):
    rng = np.random.default_rng(1)
    n_items, n_classes, n_bins = 4000, 4, 15
    Y = rng.multinomial(5, np.ones(n_classes) / n_classes, size=n_items)
    Y[::9] = np.eye(n_classes, dtype=int)[rng.integers(0, n_classes, size=len(Y[::9]))]
    n = Y.sum(axis=1).astype(float)
    p_hat = Y / n[:, None]
    P = rng.dirichlet(np.ones(n_classes), size=n_items)
    P[::11] = np.round(P[::11] * n_bins) / n_bins  # values on bin edges
    P /= P.sum(axis=1, keepdims=True)
    w = rng.integers(0, 4, size=n_items).astype(float) if weighted else None
    step = SUB_BLOCK_ELEMENTS // n_classes
    expected = 0.0
    for start in range(0, n_items, step):
        sl = slice(start, start + step)
        expected = expected + cell_sums(
            *_cell_values(p_hat[sl], P[sl], n[sl], n_bins),
            n_classes * n_bins,
            None if w is None else w[sl],
        )
    np.testing.assert_array_equal(_cell_sums(p_hat, P, n, n_bins, w), expected)
