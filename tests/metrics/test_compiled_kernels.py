"""The compiled kernels (the ``fast`` extra) equal their numpy paths to the bit.

Results must not depend on whether numba is installed: each kernel is run
against the numpy path it replaces on problems built to reach every branch
(values on bin edges and exactly 0 or 1, items with one annotation, empty
rows of weights, one bin, several sub-blocks), and the public metrics that
read it are compared through both paths.
"""

from __future__ import annotations

import numpy as np
import pytest

import sklearn_hcal.metrics as M
from sklearn_hcal.metrics._mimori_kernels import SUB_BLOCK_ELEMENTS, _cell_sums
from sklearn_hcal.utils._compiled import use_compiled

pytest.importorskip("numba")

#: the compiled side of each comparison runs compiled (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("kernels_on")


def _problem(seed, n_items, n_classes, n_bins, on_edges):
    rng = np.random.default_rng(seed)
    Y = rng.multinomial(rng.integers(1, 6), np.ones(n_classes) / n_classes, n_items)
    Y[::7] = 0
    Y[::7, 0] = 1  # items with a single annotation
    n = Y.sum(axis=1).astype(float)
    P = rng.dirichlet(np.ones(n_classes), size=n_items)
    if on_edges:  # q·B on an integer: the definition's search decides
        P = np.round(P * n_bins * 2) / (n_bins * 2)
        P[:, 0] = 1.0 - P[:, 1:].sum(axis=1)
        P[::5] = np.eye(n_classes)[rng.integers(0, n_classes, len(P[::5]))]
    return Y / n[:, None], P, n


@pytest.mark.parametrize("n_bins", [1, 2, 10, 15])
@pytest.mark.parametrize("on_edges", [False, True])
@pytest.mark.parametrize("weights", [None, "poisson", "integer"])
@pytest.mark.parametrize("dispersion", [True, False])
def test_class_bin_sums_equal_the_bincount_path(n_bins, on_edges, weights, dispersion):
    n_classes = 3
    # several sub-blocks, the last one partial
    n_items = 2 * SUB_BLOCK_ELEMENTS // n_classes + 17
    p_hat, P, n = _problem(n_bins, n_items, n_classes, n_bins, on_edges)
    rng = np.random.default_rng(7)
    w = {
        None: None,
        "poisson": rng.poisson(1.0, n_items).astype(float),
        "integer": rng.integers(0, 3, n_items),
    }[weights]
    got = _cell_sums(p_hat, P, n, n_bins, w, dispersion=dispersion)
    with use_compiled(False):
        expected = _cell_sums(p_hat, P, n, n_bins, w, dispersion=dispersion)
    np.testing.assert_array_equal(got, expected)
    assert got[0].sum() == (n_items * n_classes if w is None else n_classes * w.sum())


@pytest.mark.parametrize(
    "name", ["calibration_loss", "calibration_error", "dispersion_loss"]
)
@pytest.mark.parametrize("debiased", [True, False])
@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.float32])
def test_binned_losses_are_the_same_bits_through_both_paths(name, debiased, dtype):
    # the kernel divides the counts itself (no p̂ array): Y / n's quotients
    # whatever the counts' dtype, items with different n included
    rng = np.random.default_rng(3)
    Y = rng.multinomial(5, np.ones(10) / 10, size=20_000)
    Y[::3] += rng.multinomial(2, np.ones(10) / 10, size=len(Y[::3]))
    Y = Y.astype(dtype)
    P = rng.dirichlet(np.ones(10), size=20_000)
    P[::9] = np.round(P[::9], 1)
    P /= P.sum(axis=1, keepdims=True)
    f = getattr(M, name)
    got = f(Y, P, debiased=debiased, n_bins=12)
    with use_compiled(False):
        expected = f(Y, P, debiased=debiased, n_bins=12)
    assert got == expected


@pytest.mark.parametrize("n_cells", [1, 5, 8, 9, 127, 128, 129, 150, 300, 1000, 2051])
@pytest.mark.parametrize("dispersion", [True, False])
def test_scalar_terms_equal_numpys_pairwise_sums(n_cells, dispersion):
    # the compiled terms sum each row in np.add.reduce's pairwise order:
    # every split of the recursion (8 accumulators, halves past 128) is hit
    from sklearn_hcal.metrics._mimori_terms import _terms_from_sums

    rng = np.random.default_rng(n_cells)
    sums = np.zeros((7, n_cells))
    count = rng.integers(0, 4, n_cells).astype(float)  # empty, single, several
    sums[0] = count
    sums[1] = np.minimum(count, rng.integers(0, 3, n_cells))
    scale = 10.0 ** rng.uniform(-6, 2, size=(5, n_cells))  # wide magnitudes
    sums[2:] = rng.random((5, n_cells)) * scale * count
    n_samples = float(count.sum() + 1)
    args = (sums, n_samples, 15)
    got = _terms_from_sums(*args, tables=False, dispersion=dispersion)
    with use_compiled(False):
        expected = _terms_from_sums(*args, tables=False, dispersion=dispersion)
    assert got == expected


@pytest.mark.parametrize("n_cells", [1, 7, 9, 150, 300])
@pytest.mark.parametrize("dispersion", [True, False])
@pytest.mark.parametrize("per_set_n", [False, True])
def test_batched_scalar_terms_are_numpys_per_set(n_cells, dispersion, per_set_n):
    # the bootstrap's sums (leading axes, one set per resample): numpy adds
    # each set's cells on their own in the pairwise order, and the compiled
    # row sums of every set must give those bits; the number of items one
    # for all sets (the report's) or one per set
    from sklearn_hcal.metrics._mimori_terms import _terms_from_sums

    rng = np.random.default_rng(n_cells)
    batch = (3, 5)
    sums = np.zeros(batch + (7, n_cells))
    count = rng.integers(0, 4, batch + (n_cells,)).astype(float)
    sums[..., 0, :] = count
    sums[..., 1, :] = np.minimum(count, rng.integers(0, 3, count.shape))
    scale = 10.0 ** rng.uniform(-6, 2, size=batch + (5, n_cells))
    sums[..., 2:, :] = rng.random(scale.shape) * scale * count[..., None, :]
    sums[0, 0, 4] = -1.0  # a negative within-bin sum of squares, clipped
    n_samples = count.sum(axis=-1) + 1 if per_set_n else float(count.sum() + 1)
    args = (sums, n_samples, 15)
    got = _terms_from_sums(*args, tables=False, dispersion=dispersion)
    with use_compiled(False):
        expected = _terms_from_sums(*args, tables=False, dispersion=dispersion)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert np.shape(got[key]) == batch
        assert np.asarray(got[key]).tobytes() == np.asarray(value).tobytes(), key
