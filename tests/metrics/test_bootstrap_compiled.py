"""The bootstrap's compiled kernels (the ``fast`` extra) equal their numpy paths.

A replicate must not depend on whether numba is installed: the resamples'
multiplicities (the table lookup, the totals, the missing draws), the
items' sparse matrix and a chunk's sparse product are compared with the
numpy path, byte for byte, on problems built to reach every branch (a last
chunk shorter than the others, several lookup blocks, straddling cells,
totals above ``N``, float64 totals; every kind of statistic, no sparse
entry at all; chunks of 64 resamples and of other sizes), and the report's
replicates through both paths.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import sklearn_hcal.metrics._bootstrap._item_matrices as matrices
import sklearn_hcal.metrics._bootstrap._resamples as B
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import _engine, human_calibration_report
from sklearn_hcal.metrics._bootstrap._chunk_sums import _reconstruct, _sparse_product
from sklearn_hcal.metrics._mimori_kernels import _cell_values
from sklearn_hcal.metrics._registry import default_columns, metrics
from sklearn_hcal.metrics._report_inputs import validate_human
from sklearn_hcal.utils._compiled import use_compiled

pytest.importorskip("numba")

#: the compiled side of each comparison runs compiled (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("kernels_on")


def _both_paths(function, *args):
    got = function(*args)
    with use_compiled(False):
        expected = function(*args)
    return got, expected


def _assert_same_bits(got, expected):
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize(
    "n, n_resamples",
    # one item; fewer items than a draw's four cells; a last, shorter chunk
    # (its dropped resamples still draw their cells); several lookup blocks
    # with a shorter last one; chunks of 41 resamples (an odd number of cells
    # per item)
    [(1, 3), (3, 70), (17, 40), (2500, 130), (10_000, 64), (200_003, 30)],
)
def test_chunk_weights_are_the_numpy_paths(n, n_resamples, monkeypatch):
    monkeypatch.setattr(B, "_LOOKUP_ROWS", 1000)
    sizes = B._chunk_sizes(n, n_resamples)
    seeds = B.seed_sequence(n).spawn(len(sizes))
    for seed, size in zip(seeds, sizes):
        got, expected = _both_paths(B._chunk_weights, seed, n, size)
        _assert_same_bits(got, expected)
        np.testing.assert_array_equal(got.sum(axis=0), n)


@pytest.mark.parametrize("n_resamples", [64, 23])
def test_straddling_cells_are_found_in_the_numpy_paths_order(n_resamples):
    # the positions and cells of the straddling cells (each refined by its
    # own uniform, in this order), those of the resamples a last chunk does
    # not keep among them; the kernel's totals are the matrix's
    n = 5000
    table, _ = B._poisson_cells(n)

    def lookup():
        bits = np.random.PCG64(B.seed_sequence(3).spawn(1)[0])
        return B._table_values(bits, table, n, 64, n_resamples, None)

    (W, straddle, cells, total), (W0, straddle0, cells0, total0) = _both_paths(lookup)
    assert total0 is None and straddle.size > 10
    assert np.any(straddle % 64 >= n_resamples) == (n_resamples < 64)
    _assert_same_bits(W, W0)
    _assert_same_bits(straddle, straddle0)
    _assert_same_bits(cells, cells0)
    plain = W != B._STRADDLE
    np.testing.assert_array_equal(total, (W * plain).sum(axis=0))


def test_totals_above_n_and_float64_totals_are_the_numpy_paths(monkeypatch):
    # λ = 1: half the Poisson totals exceed N and take the plain draw; and
    # the totals summed in float64, as for more than 2**22 items
    monkeypatch.setattr(B, "_POISSON_CELLS", {})
    monkeypatch.setattr(B, "_poisson_rate", lambda n: 1.0)
    for float32_totals in (B._FLOAT32_TOTALS, 1):
        monkeypatch.setattr(B, "_FLOAT32_TOTALS", float32_totals)
        seed = B.seed_sequence(5).spawn(1)[0]
        got, expected = _both_paths(B._chunk_weights, seed, 400, 64)
        _assert_same_bits(got, expected)


def test_a_spare_matrix_is_written_over_as_the_numpy_path_writes_a_new_one():
    from collections import deque

    seed = B.seed_sequence(11).spawn(1)[0]
    garbage = np.full((500, 64), np.nan, dtype=np.float32)
    got = B._chunk_weights(seed, 500, 64, deque([garbage]))
    with use_compiled(False):
        expected = B._chunk_weights(seed, 500, 64)
    assert got is garbage
    _assert_same_bits(got, expected)


#: Every column of the registry but the ordinal scale's.
_ALL = [c for c in metrics() if metrics()[c].requires != "ordered"]


@pytest.mark.parametrize(
    "names, share",
    # the defaults (constant, alias, own and direct statistics), every
    # column, every statistic through dense totals or wholly sparse, and
    # mean-type columns only (no sparse entry)
    [(None, None), (_ALL, None), (_ALL, 0.0), (_ALL, 1.1), (["kl", "jsd"], None)],
)
def test_item_matrices_are_the_numpy_paths(names, share, monkeypatch):
    if share is not None:
        monkeypatch.setattr(matrices, "_DIRECT_SHARE", share)
    _, Y, _ = make_label_histograms(3000, 6, 7, random_state=0)
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.full(6, 0.3), size=len(Y))
    P[::13] = np.round(P[::13], 1)  # values on bin edges
    P /= P.sum(axis=1, keepdims=True)
    human, source = validate_human(Y, P)
    _, other = validate_human(Y, np.roll(P, 1, axis=1))
    columns = _engine.resolve(names, human, None, default=default_columns())
    block = slice(500, 2700)  # a block that does not start at the first item
    got, expected = _both_paths(
        matrices._block_matrices, columns, human, [source, other], block
    )
    _assert_same_bits(got[0], expected[0])
    A, A0 = got[1], expected[1]
    assert type(A) is type(A0) and A.shape == A0.shape
    for name in ("indptr", "indices", "data"):
        _assert_same_bits(getattr(A, name), getattr(A0, name))
    for entry, entry0 in zip(got[2], expected[2], strict=True):
        assert (entry["num"], entry["den"]) == (entry0["num"], entry0["den"])
        assert entry["groups"].keys() == entry0["groups"].keys()
        for key, (stats, dominant) in entry["groups"].items():
            assert stats == entry0["groups"][key][0]
            _assert_same_bits(dominant, entry0["groups"][key][1])
    if names == ["kl", "jsd"]:
        assert A.nnz == 0
    else:
        assert A.nnz > 0


def _sparse_problem(seed, n_items, n_columns, density):
    rng = np.random.default_rng(seed)
    A = sp.random(n_items, n_columns, density=density, format="csr", rng=rng)
    A.data = rng.normal(size=A.nnz) * 10.0 ** rng.integers(-3, 3, size=A.nnz)
    A.data[::11] = -A.data[::11]
    A.data[A.indptr[3] : A.indptr[4]] = 0  # an item without entries
    A.eliminate_zeros()
    A = A.astype(np.float32)
    return A


@pytest.mark.parametrize("n_resamples", [1, 7, 40, 64])
def test_sparse_product_is_scipys(n_resamples):
    # scipy's loop adds each item's products v·w in float32, items in order:
    # the kernel's sums must be the same bits, for a full chunk of 64
    # resamples (the kernel's fixed-length loop) and for any other size
    A = _sparse_problem(n_resamples, 3000, 257, 0.02)
    rng = np.random.default_rng(1)
    Wt = rng.poisson(1.0, size=(3000, n_resamples)).astype(np.float32)
    got, expected = _both_paths(_sparse_product, A, Wt)
    _assert_same_bits(got, expected)
    assert got.flags.f_contiguous == expected.flags.f_contiguous


def test_sparse_product_of_other_dtypes_stays_scipys():
    # float64 operands are upcast by scipy: the kernel is not asked
    A = _sparse_problem(0, 500, 31, 0.1)
    Wt = np.random.default_rng(2).poisson(1.0, size=(500, 64))
    for a, w in ((A.astype(np.float64), Wt.astype(np.float32)), (A, Wt * 1.0)):
        got = _sparse_product(a, w)
        expected = (a.T @ w).T.astype(np.float64)
        _assert_same_bits(got, expected)


def test_report_replicates_are_the_same_bits_through_both_paths():
    # 300 items: 16 chunks of 64 resamples and a last one of 40, drawn ahead
    # into recycled matrices, both products, every default column
    _, Y, F = make_label_histograms(300, 4, 5, random_state=2)
    G = np.roll(F, 1, axis=1)

    def report():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return human_calibration_report(
                Y,
                {"a": F, "b": G},
                n_bootstrap=1000,
                random_state=5,
                return_bootstrap=True,
            )

    (point, got), (point_expected, expected) = _both_paths(report)
    _assert_same_bits(got.to_numpy(), expected.to_numpy())
    _assert_same_bits(point.to_numpy(), point_expected.to_numpy())


@pytest.mark.parametrize("width", [1, 5, 8, 12, 15, 23, 128, 130])
def test_cells_rebuilt_are_the_numpy_paths(width):
    # every kind of statistic (an alias of an earlier one, a constant, dense
    # totals, wholly sparse); slots narrower than numpy's 8 running sums,
    # of whole and partial rounds of 8, and wider than the kernel's 128
    # (the numpy path then runs); cells of both signs, zeros and magnitudes
    # far apart, where the order of the additions shows in the bits
    rng = np.random.default_rng(width)
    n_res, n_slots = 23, 3
    stats = [
        ("const", 1.0, 0),
        ("alias", 0, None),
        ("own", 3, n_slots * width),
        ("direct", None, 2 * n_slots * width),
        ("const", 0.5, 3 * n_slots * width),
    ]
    dominant = rng.integers(0, width, size=n_slots)
    sparse = rng.normal(size=(n_res, 4 * n_slots * width))
    sparse *= 10.0 ** rng.integers(-6, 6, size=sparse.shape)
    sparse[:, ::5] = 0.0
    for region in (0, 1, 3):  # no entries in the dominant cells but direct
        cols = region * n_slots * width + np.arange(n_slots) * width
        sparse[:, cols + dominant] = 0.0
    dense = rng.normal(size=(n_res, 3 + n_slots)) * 1e3
    entry = {"num": [1], "den": [None], "groups": {"g": (stats, dominant)}}
    n_cells = {"g": (n_slots, width)}

    def rebuilt():
        return _reconstruct(entry, dense, sparse, n_cells, n_res)[2]["g"]

    got, expected = _both_paths(rebuilt)
    _assert_same_bits(got, expected)


def test_squared_bins_cell_values_are_the_numpy_paths():
    # the per-item statistics of the class-wise squared loss (the report's
    # largest group): items with one label (no dispersion term) or none,
    # integer and float label counts, human shares of 0 and 1
    _, Y, P = make_label_histograms(500, 5, 4, random_state=3)
    Y[::7] = 0
    Y[::7, 1] = 1  # one label
    Y[3] = 0  # none
    n = Y.sum(axis=1)
    p_hat = Y / np.maximum(n, 1)[:, None]
    for counts in (n, n.astype(np.float64)):
        got, expected = _both_paths(_cell_values, p_hat, P, counts, 15)
        _assert_same_bits(got[0], expected[0])
        _assert_same_bits(got[1], expected[1])
