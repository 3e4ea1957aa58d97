"""The bootstrap's multiplicities and products, against their definitions.

The resamples' item counts are drawn as Poisson counts completed to a
multinomial (``metrics/_bootstrap/_resamples.py::_chunk_weights``); a resample is
multinomial (``N`` draws with equal probabilities) whichever path it takes,
so the counts are compared with the multinomial's exact probabilities
(chi-square on fixed seeds, so nothing is flaky), also when the rare path
(a Poisson total above ``N``) is forced. The products' representations of a
statistic (dense totals or wholly sparse) give the same replicates.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import sklearn_hcal.metrics._bootstrap._chunk_sums as chunk_sums
import sklearn_hcal.metrics._bootstrap._item_matrices as matrices
import sklearn_hcal.metrics._bootstrap._resamples as B
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import human_calibration_report
from sklearn_hcal.metrics._bootstrap import resample_weights
from sklearn_hcal.metrics._registry import metrics
from tests.metrics._precision import float32_sums


def _binomial_fit(counts, n):
    """Chi-square p-value of counts of one item against Binomial(n, 1/n)."""
    top = min(5, n)
    observed = np.bincount(np.minimum(counts, top).astype(int), minlength=top + 1)
    pmf = [math.comb(n, k) * (1 / n) ** k * (1 - 1 / n) ** (n - k) for k in range(top)]
    expected = np.append(pmf, 1 - sum(pmf)) * len(counts)
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("n", [3, 50, 400, 20_000])
def test_counts_are_multinomial(n):
    W = resample_weights(1, n, max(300, 60_000 // n))
    np.testing.assert_array_equal(W.sum(axis=1), n)
    assert W.min() >= 0 and np.all(W == np.round(W))
    # each item's count is Binomial(n, 1/n); items are exchangeable
    pooled = W[:, : min(n, 50)].ravel()
    assert _binomial_fit(pooled, n) > 1e-3
    # negative covariance -1/n between two items, averaged over the pairs of
    # the first k items: one pair's sample covariance errs ~1/sqrt(R) (0.06
    # at R = 300, as large as the tolerance this check once had), the mean
    # of k(k-1)/2 nearly independent pairs ~1/sqrt(R k(k-1)/2); 4 of those
    C = np.cov(W[:, : min(n, 50)].T)
    k = len(C)
    pairs = C[~np.eye(k, dtype=bool)]
    se = 1 / np.sqrt(len(W) * k * (k - 1) / 2)
    assert pairs.mean() == pytest.approx(-1 / n, abs=4 * se)


def test_three_items_have_the_exact_multinomial_law():
    W = resample_weights(2, 3, 30_000).astype(int)
    outcomes = {}
    for row in map(tuple, W):
        outcomes[row] = outcomes.get(row, 0) + 1
    support = [(a, b, 3 - a - b) for a in range(4) for b in range(4 - a)]
    assert set(outcomes) <= set(support)
    expected = [
        math.factorial(3) / math.prod(map(math.factorial, c)) / 27 for c in support
    ]
    observed = [outcomes.get(c, 0) for c in support]
    assert stats.chisquare(observed, np.multiply(expected, len(W))).pvalue > 1e-3


def test_totals_above_n_take_the_plain_draw_and_stay_multinomial(monkeypatch):
    # λ = 1: half the Poisson totals exceed N, so the plain draw (N uniform
    # indices) replaces those resamples; the mixture is still multinomial.
    monkeypatch.setattr(B, "_POISSON_CELLS", {})
    monkeypatch.setattr(B, "_poisson_rate", lambda n: 1.0)
    n = 400
    W = resample_weights(3, n, 600)
    np.testing.assert_array_equal(W.sum(axis=1), n)
    assert _binomial_fit(W[:, :50].ravel(), n) > 1e-3
    np.testing.assert_array_equal(resample_weights(3, n, 5), W[:5])


@pytest.mark.parametrize("n", [17, 1000, 10**6])
def test_poisson_table_cells_are_the_inverse_cdf(n):
    table, cdf = B._poisson_cells(n)
    rate = B._poisson_rate(n)
    np.testing.assert_allclose(cdf, stats.poisson.cdf(np.arange(len(cdf)), rate))
    starts = np.arange(B._N_CELLS) / B._N_CELLS
    ends = (np.arange(B._N_CELLS) + 1) / B._N_CELLS
    plain = table != B._STRADDLE
    # every uniform of a plain cell maps to the same value: its start's and
    # (just below) its end's
    np.testing.assert_array_equal(
        table[plain], np.searchsorted(cdf, starts[plain], side="right")
    )
    np.testing.assert_array_equal(
        table[plain], np.searchsorted(cdf, ends[plain], side="left")
    )
    assert (~plain).sum() <= len(cdf)  # a straddling cell holds a step


def _report(Y, P, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return human_calibration_report(
            Y, P, n_bootstrap=40, random_state=4, return_bootstrap=True, **kwargs
        )[1]


@pytest.mark.parametrize("share", [0.0, 1.1])
def test_dense_totals_and_sparse_cells_give_the_same_replicates(share, monkeypatch):
    # _DIRECT_SHARE = 0: every statistic through dense totals and the
    # dominant cell; 1.1: every one that is not a constant wholly sparse.
    _, Y, _ = make_label_histograms(3000, 6, 7, random_state=0)
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.full(6, 0.3), size=len(Y))
    expected = _report(Y, P)
    monkeypatch.setattr(matrices, "_DIRECT_SHARE", share)
    # the two representations round differently in float32 (a cell read
    # directly or as a slot's total minus the other cells, both sums over
    # the n items): equal to twice the bound of one such sum
    tol = float32_sums(len(Y))
    np.testing.assert_allclose(
        _report(Y, P).to_numpy(),
        expected.to_numpy(),
        rtol=2 * tol["rtol"],
        atol=2 * tol["atol"],
    )


#: Every column of the registry but the ordinal scale's.
_ALL = [c for c in metrics() if metrics()[c].requires != "ordered"]


def _two_models(n):
    _, Y, _ = make_label_histograms(n, 6, 7, random_state=1)
    rng = np.random.default_rng(1)
    return Y, {
        "a": rng.dirichlet(np.full(6, 0.3), size=n),
        "b": rng.dirichlet(np.full(6, 2.0), size=n),
    }


def test_point_values_with_a_bootstrap_equal_the_plain_report():
    # With a bootstrap the values come from the per-item matrices (every
    # weight 1, float64); without, from the engine's block pass: the same
    # sums added in another order.
    Y, preds = _two_models(2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = human_calibration_report(Y, preds, metrics=_ALL)
        boot = human_calibration_report(
            Y, preds, metrics=_ALL, n_bootstrap=3, random_state=0
        )
    np.testing.assert_allclose(
        boot[plain.columns].to_numpy(), plain.to_numpy(), rtol=1e-12, atol=1e-14
    )


def test_items_in_several_blocks_give_the_same_replicates(monkeypatch):
    # A small budget splits the items into blocks whose matrices are made
    # for every chunk and whose sums are added: the same replicates (to the
    # float32 products' bound) and the same values.
    Y, preds = _two_models(3000)
    expected = _report(Y, preds, metrics=_ALL)
    monkeypatch.setattr(matrices, "_FEATURE_BUDGET", 1)  # blocks of 1024 items
    made = []
    real = matrices._block_matrices
    # each chunk makes its blocks' matrices where its sums are computed
    monkeypatch.setattr(
        chunk_sums, "_block_matrices", lambda *a: made.append(a[-1]) or real(*a)
    )
    tol = float32_sums(len(Y))
    np.testing.assert_allclose(
        _report(Y, preds, metrics=_ALL).to_numpy(),
        expected.to_numpy(),
        rtol=2 * tol["rtol"],
        atol=2 * tol["atol"],
    )
    # three blocks of items, each made for every chunk of resamples
    assert {(sl.start, sl.stop) for sl in made} == {
        (0, 1024),
        (1024, 2048),
        (2048, 3000),
    }


def _whole_chunk_weights(seed, n_samples, n_resamples):
    """The draws as first written: one table lookup of the whole chunk, the
    straddling cells refined in C order, the kept columns cut afterwards."""
    bits = np.random.PCG64(seed)
    refine, plain, extra = (np.random.Generator(bits.jumped(k)) for k in (1, 2, 3))
    table, cdf = B._poisson_cells(n_samples)
    chunk = max(B._chunk_size(n_samples), n_resamples)
    size = chunk * n_samples
    raw = bits.random_raw(-(-size // 4)).astype("<u8", copy=False)
    cells = raw.view("<u2")[:size].reshape(n_samples, chunk)
    X = table[cells.astype(np.intp)]
    straddle = np.flatnonzero(X == B._STRADDLE)
    u = (cells.reshape(-1)[straddle] + refine.random(straddle.size)) / B._N_CELLS
    X.reshape(-1)[straddle] = np.searchsorted(cdf, u, side="right")
    Wt = X[:, :n_resamples].astype(np.float64)
    total = Wt.sum(axis=0).astype(np.int64)
    for b in np.flatnonzero(total > n_samples):
        Wt[:, b] = np.bincount(plain.integers(0, n_samples, size=n_samples))
        total[b] = n_samples
    missing = n_samples - total
    idx = extra.integers(0, n_samples, size=int(missing.sum()))
    cols = np.repeat(np.arange(n_resamples), missing)
    np.add.at(Wt, (idx, cols), 1.0)
    return Wt


@pytest.mark.parametrize(
    "n, n_resamples",
    [(5, 3), (17, 40), (3000, 64), (4500, 7), (10_000, 200), (200_003, 30)],
)
def test_block_lookup_draws_the_same_counts_as_one_whole_chunk_lookup(
    n, n_resamples, monkeypatch
):
    # the cells are drawn and looked up block by block of items: the same
    # counts, to the last resample, as the whole chunk's draw and lookup
    # (blocks smaller than N here, a last block and a last chunk shorter than
    # the others, and at 200,003 items chunks of 41 resamples: blocks of an
    # odd number of cells per item)
    monkeypatch.setattr(B, "_LOOKUP_ROWS", 1000)
    assert B._chunk_size(200_003) == 41
    sizes = B._chunk_sizes(n, n_resamples)
    seeds = B.seed_sequence(7).spawn(len(sizes))
    for seed, size in zip(seeds, sizes):
        expected = _whole_chunk_weights(seed, n, size)
        np.testing.assert_array_equal(B._chunk_weights(seed, n, size), expected)


def test_a_spare_matrix_is_written_over_with_the_same_counts():
    # the drawing thread reuses the matrices of chunks whose products are
    # done: whatever they held, the counts are the chunk's own
    from collections import deque

    n, size = 500, B._chunk_size(500)
    seed = B.seed_sequence(11).spawn(1)[0]
    garbage = np.full((n, size), np.nan, dtype=np.float32)
    spare = deque([garbage])
    W = B._chunk_weights(seed, n, size, spare)
    assert W is garbage and not spare
    np.testing.assert_array_equal(W, _whole_chunk_weights(seed, n, size))
    # a spare of another shape (a last, shorter chunk) is not written over
    spare = deque([np.zeros((n, size + 1), np.float32)])
    np.testing.assert_array_equal(
        B._chunk_weights(seed, n, size, spare), _whole_chunk_weights(seed, n, size)
    )


def test_recycled_weights_give_the_replicates_of_the_workers():
    # 1,000 resamples of 300 items: 16 chunks, drawn 8 ahead, so the driver
    # draws the later ones into recycled matrices; joblib's workers get
    # fresh ones. Every replicate must be the same number.
    _, Y, F = make_label_histograms(300, 4, 5, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs = dict(n_bootstrap=1000, random_state=5, return_bootstrap=True)
        _, driver = human_calibration_report(Y, {"m": F}, n_jobs=1, **kwargs)
        _, workers = human_calibration_report(Y, {"m": F}, n_jobs=2, **kwargs)
    np.testing.assert_array_equal(driver.to_numpy(), workers.to_numpy())
