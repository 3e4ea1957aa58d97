"""The engine's fast paths equal what they replace, to the bit (no timings here).

Each fast path is compared with the plain definition or the previous code:
the pairwise stable-order comparison with ``argsort(kind="stable")``
(few items and many), the one-pass reduction of the binned
statistics with one ``bincount`` per statistic (and its fallback without
scipy's loop), the metric functions' class-wise sums (counts by
``bincount``) with the report's seven-statistic cells, the calibration
terms alone with all the terms, the report's kernel reduction of a group
with its cells, the bins by ``floor`` with the binary search, and the
validation's fast paths with the chunked scans (same values, same errors).
"""

from __future__ import annotations

import dataclasses

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
from sklearn_hcal.metrics._mimori_terms import _terms_from_sums
from sklearn_hcal.utils._compat import add_rows_at


@pytest.mark.parametrize("n_items", [60, 3000])  # few items, many
@pytest.mark.parametrize("n_classes", [2, 3, 5, 10, 16, 20])
@pytest.mark.parametrize("integer", [True, False])
def test_pairwise_stable_order_equals_argsort(n_items, n_classes, integer):
    rng = np.random.default_rng(n_classes)
    P = rng.dirichlet(np.ones(n_classes), size=n_items)
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


@pytest.mark.parametrize("weighted", [False, True])
def test_classwise_ece_sums_equal_its_cells(weighted):
    # The metric's class-wise ECE sums come from a bincount per statistic;
    # the bootstrap reads the written-out cells: both must be the same bits.
    from sklearn_hcal.metrics._majority import _classwise_cells, _classwise_sums

    rng = np.random.default_rng(4)
    n_items, n_classes, n_bins = 5000, 5, 10
    P = rng.dirichlet(np.ones(n_classes), size=n_items)
    P[::7] = np.round(P[::7] * n_bins) / n_bins  # confidences on bin edges
    P[::13, 0] = 0.0  # unbinned (index -1)
    P /= P.sum(axis=1, keepdims=True)
    majority = rng.integers(0, n_classes, size=n_items)
    w = rng.integers(0, 4, size=n_items).astype(float) if weighted else None
    expected = cell_sums(
        *_classwise_cells(majority, P, n_bins), n_classes * (n_bins + 2), w
    ).reshape(2, n_classes, n_bins + 2)
    np.testing.assert_array_equal(_classwise_sums(majority, P, n_bins, w), expected)


@pytest.mark.parametrize("weighted", [False, True])
def test_calibration_only_sums_equal_the_cells(weighted):
    # dispersion=False reduces four statistics by bincount: those four rows
    # are the cells' sums to the bit.
    rng = np.random.default_rng(5)
    Y = rng.multinomial(3, np.ones(4) / 4, size=3000)
    n = Y.sum(axis=1).astype(float)
    p_hat = Y / n[:, None]
    P = rng.dirichlet(np.ones(4), size=len(Y))
    w = rng.integers(0, 4, size=len(Y)).astype(float) if weighted else None
    expected = cell_sums(*_cell_values(p_hat, P, n, 15), 4 * 15, w)
    got = _cell_sums(p_hat, P, n, 15, w, dispersion=False)
    rows = [0, 2, 3, 4]  # the count, Σ p̂, Σ q, Σ p̂²
    np.testing.assert_array_equal(got[rows], expected[rows])


def test_calibration_terms_alone_equal_all_terms_to_the_bit():
    # calibration_loss/error form four of the seven statistics
    # (dispersion=False); the terms they read are the same numbers.
    rng = np.random.default_rng(2)
    Y = rng.multinomial(6, np.ones(5) / 5, size=70_000)
    n = Y.sum(axis=1).astype(float)
    p_hat = Y / n[:, None]
    P = rng.dirichlet(np.ones(5), size=len(Y))
    full = _terms_from_sums(_cell_sums(p_hat, P, n, 15), len(Y), 15, tables=False)
    part = _terms_from_sums(
        _cell_sums(p_hat, P, n, 15, dispersion=False),
        len(Y),
        15,
        tables=False,
        dispersion=False,
    )
    assert set(part) == {"cl", "cl_plugin", "ce", "ce_plugin"}
    for key, value in part.items():
        assert value == full[key], key


@pytest.mark.parametrize("dispersion", [True, False])
def test_scalar_terms_equal_the_batched_terms_to_the_bit(dispersion):
    # One set of sums takes a shorter path (fewer numpy calls on the cells);
    # a batch of one takes the general path: the same operations, the same
    # bits, with empty, singleton and single-annotation cells present.
    rng = np.random.default_rng(6)
    for n_items, n_classes, n_bins in [(300, 4, 15), (40, 10, 15), (7, 3, 50)]:
        n_labels = rng.integers(1, 6, size=n_items)
        p = rng.dirichlet(np.ones(n_classes), size=n_items)
        Y = np.array([rng.multinomial(k, q) for k, q in zip(n_labels, p)])
        n = Y.sum(axis=1).astype(float)
        P = rng.dirichlet(np.full(n_classes, 0.3), size=n_items)
        sums = _cell_sums(Y / n[:, None], P, n, n_bins, dispersion=dispersion)
        one = _terms_from_sums(
            sums, n_items, n_bins, tables=False, dispersion=dispersion
        )
        batch = _terms_from_sums(
            sums[None],
            np.array([n_items]),
            n_bins,
            tables=False,
            dispersion=dispersion,
        )
        assert set(one) == set(batch)
        for key, value in one.items():
            assert value == batch[key][0], key
            assert isinstance(value, float)


def test_report_group_sums_through_the_kernel_equal_the_cells():
    # The class-wise squared-loss group declares sums(): the report reduces
    # it with _cell_sums instead of writing out every entry's statistics.
    from sklearn_hcal.metrics import _engine, _registry
    from sklearn_hcal.metrics._report_inputs import validate_human

    rng = np.random.default_rng(3)
    Y = rng.multinomial(4, np.ones(6) / 6, size=20_000)
    P = rng.dirichlet(np.ones(6), size=len(Y))
    human, source = validate_human(Y, P)
    columns = _engine.resolve(["cl", "dl", "el"], human, None, default=None)
    ((key, (stats, params)),) = _engine.groups_of(columns).items()
    assert stats.sums is not None
    plain = dataclasses.replace(stats, sums=None)
    block = _engine.ReportBlock(human, source, slice(0, len(Y)))
    np.testing.assert_allclose(
        _engine._group_sums(stats, params, human, block),
        _engine._group_sums(plain, params, human, block),
        rtol=1e-12,
        atol=1e-12,
    )
    assert _registry.get_metric("cl").stats is stats


def _values_or_error(func, *args, **kwargs):
    try:
        out = func(*args, **kwargs)
    except ValueError as exc:
        return ("error", str(exc))
    return ("value", out)


def _histogram_cases():
    rng = np.random.default_rng(4)
    Y = rng.multinomial(5, np.ones(4) / 4, size=300)
    negative, empty, huge = Y.copy(), Y.copy(), Y.copy()
    negative[170, 2] = -1
    empty[41] = 0
    huge[3, 0] = 2**61
    return {
        "int64": Y,
        "int32": Y.astype(np.int32),
        "uint8": Y.astype(np.uint8),
        "uint64": Y.astype(np.uint64),
        "float counts": Y.astype(float),
        "negative": negative,
        "empty row": empty,
        "counts beyond 2**53": huge,
    }


@pytest.mark.parametrize("case", list(_histogram_cases()))
@pytest.mark.parametrize("chunk_rows", [None, 7])
def test_clean_histogram_fast_path_equals_the_scan(case, chunk_rows, monkeypatch):
    # The fast path returns only for clean integer counts, with the scan's
    # exact row sums; anything else is the scan's (same error, same row).
    import sklearn_hcal._validation._core as core
    import sklearn_hcal._validation._scan as scan

    Y = _histogram_cases()[case]
    monkeypatch.setattr(core, "_CHUNK_ROWS", chunk_rows)
    fast = _values_or_error(scan.scan_histograms, Y, name="y", allow_probabilities=True)
    monkeypatch.setattr(scan, "_clean_count_sums", lambda arr: None)
    slow = _values_or_error(scan.scan_histograms, Y, name="y", allow_probabilities=True)
    assert fast[0] == slow[0]
    if fast[0] == "error":
        assert fast[1] == slow[1]
    else:
        np.testing.assert_array_equal(fast[1][0], slow[1][0])
        assert fast[1][1] == slow[1][1]


def _probability_cases():
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(4), size=300)
    cases = {"clean": P, "rounded": np.round(P, 3)}
    tol = 4 * 5e-4  # row_sum_tolerance(4)
    at_tolerance, past, nan, inf, negative, tiny_negative, off = (
        P.copy() for _ in range(7)
    )
    at_tolerance[9] *= 1 + tol
    past[9] *= 1 + 1.01 * tol
    nan[120, 1] = np.nan
    inf[33, 0] = np.inf
    negative[50, 2] = -0.1
    tiny_negative[50, 2] -= P[50, 2] + 1e-12
    off[200] *= 1 + 2e-6  # renormalised, not refused
    cases.update(
        {
            "at tolerance": at_tolerance,
            "past tolerance": past,
            "nan": nan,
            "inf": inf,
            "negative": negative,
            "rounding below 0": tiny_negative,
            "off by 2e-6": off,
        }
    )
    return cases


@pytest.mark.parametrize("case", list(_probability_cases()))
@pytest.mark.parametrize("size", [300, 30_000])  # BLAS sums, the scan's sums
def test_clean_probability_fast_path_equals_the_scan(case, size, monkeypatch):
    import sklearn_hcal._validation._scan as scan

    P = np.tile(_probability_cases()[case], (size // 300, 1))
    fast = _values_or_error(scan.scan_probabilities, P, name="p", n_classes=4)
    monkeypatch.setattr(scan, "_clean_probability_flag", lambda arr: None)
    slow = _values_or_error(scan.scan_probabilities, P, name="p", n_classes=4)
    assert fast[0] == slow[0]
    if fast[0] == "error":
        assert fast[1] == slow[1]
    else:
        assert fast[1][0] is slow[1][0] and fast[1][2] == slow[1][2]


def test_bins_by_floor_equal_the_binary_search_below_and_above_the_range():
    from sklearn_hcal.metrics._bins import bin_index, bin_indices

    for n_bins in (1, 10, 15):
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        values = np.concatenate(
            [
                -edges,
                np.nextafter(-edges, 1),
                [-2.5, -1.0, -1e-12, 1e-300, 1.0 + 1e-9, 1.7, 3.0],
                np.random.default_rng(n_bins).uniform(-0.5, 1.5, size=500),
            ]
        )
        np.testing.assert_array_equal(
            bin_indices(values, n_bins),
            np.searchsorted(edges[1:-1], values, side="right"),
        )
        np.testing.assert_array_equal(
            bin_index(values, n_bins),
            np.clip(np.searchsorted(edges, values, side="left") - 1, -1, n_bins),
        )


@pytest.mark.parametrize("slot_width", [7, 2**21])  # float and integer offsets
def test_slot_cells_equal_the_bins_plus_the_slot_offsets(slot_width):
    # The class-wise cells add each column's offset to the float products
    # before the cast; values near an edge, NaN and values outside [0, 1]
    # must land where the bins of the column plus its offset say.
    from sklearn_hcal.metrics._bins import bin_index, bin_indices

    rng = np.random.default_rng(7)
    n_bins = 5
    values = rng.uniform(-0.2, 1.2, size=(400, 6))
    values[::3] = rng.integers(0, n_bins + 1, size=values[::3].shape) / n_bins
    values[1, 2] = np.nan
    values[2, 4] = np.nextafter(0.4, 0.0)
    for start in (0, 1):
        offsets = start + slot_width * np.arange(values.shape[1])
        with np.errstate(invalid="ignore"):  # NaN: the reference's cast
            right = np.where(np.isnan(values), -1, bin_index(values, n_bins))
        np.testing.assert_array_equal(
            bin_index(values, n_bins, slot_width=slot_width, start=start),
            right + offsets,
        )
    np.testing.assert_array_equal(
        bin_indices(values, n_bins, slot_width=slot_width),
        bin_indices(values, n_bins) + slot_width * np.arange(values.shape[1]),
    )


@pytest.mark.parametrize("squared", [False, True])
def test_log_terms_without_the_zero_guard_equal_the_guarded_ones(squared, monkeypatch):
    # With q > 0 everywhere the Jensen-Shannon and entropy kernels skip the
    # guard of log 0 on the q side: the guarded computation gives the same
    # bits (forced here by declaring q not all positive).
    from sklearn_hcal.metrics import _distribution_kernels as kernels

    rng = np.random.default_rng(8)
    Y = rng.multinomial(5, np.ones(10) / 10, size=2000)  # many zero counts
    p_hat = Y / 5.0
    P = rng.dirichlet(np.full(10, 0.5), size=2000)
    assert P.min() > 0
    fast_jsd = kernels._jsd_per_item(p_hat, P, squared=squared)
    fast_entropy = kernels._entropy(P, base=2)
    monkeypatch.setattr(kernels, "_all_positive", lambda P: False)
    np.testing.assert_array_equal(
        kernels._jsd_per_item(p_hat, P, squared=squared), fast_jsd
    )
    np.testing.assert_array_equal(kernels._entropy(P, base=2), fast_entropy)


def test_report_binned_columns_equal_the_metric_functions_to_the_bit():
    # The report reduces the ECE, class-wise ECE and class-wise squared-loss
    # groups with the metric functions' own block reductions (sums hooks):
    # the same numbers, not merely close ones.
    import warnings

    import sklearn_hcal.metrics as M

    rng = np.random.default_rng(9)
    Y = rng.multinomial(5, np.ones(10) / 10, size=30_000)
    P = rng.dirichlet(np.ones(10), size=len(Y))
    P[::50] = np.round(P[::50] * 10) / 10  # confidences on bin edges
    P /= P.sum(axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = M.human_calibration_report(Y, {"m": P}).iloc[0]
    for column, function in [
        ("ece", M.expected_calibration_error),
        ("classwise_ece", M.classwise_expected_calibration_error),
        ("cl", M.calibration_loss),
        ("ce", M.calibration_error),
        ("dl", M.dispersion_loss),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert row[column] == function(Y, P), column
