"""The resamples of the report's bootstrap, as item multiplicities.

Each chunk of resamples has a :class:`numpy.random.PCG64` stream of its
own, spawned from ``SeedSequence(random_state)`` (:func:`seed_sequence`,
:func:`resample_weights`), and its multiplicities are Poisson counts
completed to a multinomial (:func:`_chunk_weights`, exact). The chunks have
a size that depends on ``N`` only (:func:`_chunk_sizes`), so every
replicate is the same number for any ``n_jobs``, joblib backend or number
of drawing threads.
"""

from __future__ import annotations

import numbers
import sys

import numpy as np

from ...utils._compiled import fall_back
from ._resamples_compiled import add_draws, table_block

__all__ = ["resample_weights", "resampled_sums", "seed_sequence"]

#: Sizes a chunk of resamples: ``N × B`` counts of 8 bytes (float32 now: half).
_WEIGHTS_BUDGET = 2**26
_MAX_CHUNK = 64


def seed_sequence(random_state) -> np.random.SeedSequence:
    """The :class:`numpy.random.SeedSequence` that seeds the resamples.

    An int (or None) seeds it directly; a ``RandomState`` or ``Generator``
    instance gives it 128 bits of its stream (so that two calls with the
    same instance draw other resamples, as scikit-learn's convention has
    it).
    """
    if random_state is None or isinstance(random_state, numbers.Integral):
        return np.random.SeedSequence(random_state)
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(2**32, size=4).tolist())
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(
            random_state.randint(2**32, size=4, dtype=np.uint64).tolist()
        )
    raise ValueError(
        "random_state must be an int, a numpy RandomState or Generator, or "
        f"None; got {random_state!r}."
    )


def _chunk_size(n_samples: int) -> int:
    return int(np.clip(_WEIGHTS_BUDGET // (8 * max(n_samples, 1)), 1, _MAX_CHUNK))


def _chunk_sizes(n_samples: int, n_resamples: int) -> list[int]:
    chunk = _chunk_size(n_samples)
    return [min(chunk, n_resamples - start) for start in range(0, n_resamples, chunk)]


def _chunk_weights(seed, n_samples: int, n_resamples: int, spare=None) -> np.ndarray:
    """Item multiplicities of a chunk of resamples, an ``N × B`` float32 matrix.

    ``spare`` (a ``collections.deque``, optional) holds matrices whose chunk
    is done: one of the right shape is written over instead of a new one
    (whose fresh pages cost as much as the lookup that fills them).

    ``seed`` is the chunk's own ``SeedSequence``. Each resample's counts are
    multinomial (``N`` draws, equal probabilities), drawn without ``N``
    uniform indices and a ``bincount`` (~1.5 ns per item and resample):

    1. ``X_i ~ Poisson(λ)`` independently, ``λ = 1 − 4/√N``, by table lookup:
       16 bits of a uniform pick a cell of ``[0, 1)``, and the cells that
       straddle a step of Poisson's CDF (a handful) are refined with a
       further uniform. Given its total ``S``, ``X`` is multinomial
       (``S`` draws, equal probabilities).
    2. A resample with ``S > N`` (probability 3·10⁻⁵) is drawn instead as
       ``N`` uniform indices and a ``bincount``: the choice depends on
       ``S`` only, so the accepted ones stay multinomial given ``S``.
    3. ``N − S`` uniform indices (``4√N`` on average) are added: a
       multinomial of ``S`` draws plus an independent one of ``N − S``
       draws with the same probabilities is one of ``N`` draws.

    Step 1 draws item-major (C order, ``N × chunk``: the layout both
    products read without a transposed copy), always for a whole chunk of
    :func:`_chunk_size` resamples of which the first ``n_resamples`` are
    kept, so that the first resamples of a chunk do not depend on how many
    it holds; steps 2 and 3 go in the order of the resamples. Each step
    draws from its own stream of the chunk's generator (``PCG64.jumped``).
    The counts are small integers, exact in float32, the precision of the
    products (developer guide §bootstrap-precision).
    """
    bits = np.random.PCG64(seed)
    # the other streams jump from the seed's state, before any draw
    refine, plain, extra = (np.random.Generator(bits.jumped(k)) for k in (1, 2, 3))
    table, cdf = _poisson_cells(n_samples)
    chunk = max(_chunk_size(n_samples), n_resamples)
    Wt, straddle, cells, total = _table_values(
        bits, table, n_samples, chunk, n_resamples, _spare_matrix(spare)
    )
    if straddle.size:
        u = (cells + refine.random(straddle.size)) / _N_CELLS
        row, col = np.divmod(straddle, chunk)
        kept = col < n_resamples
        values = np.searchsorted(cdf, u[kept], side="right")
        Wt[row[kept], col[kept]] = values
        if total is not None:  # the kernel's totals leave the straddling cells out
            np.add.at(total, col[kept], values)
    if total is None:
        # The totals' partial sums are integers: exact in float32 below 2**24.
        if n_samples < 2**23:
            total = Wt.sum(axis=0).astype(np.int64)
        else:
            total = np.add.reduce(Wt, axis=0, dtype=np.int64)
    over = np.flatnonzero(total > n_samples)
    for b in over:
        idx = plain.integers(0, n_samples, size=n_samples)
        Wt[:, b] = np.bincount(idx, minlength=n_samples)
        total[b] = n_samples
    missing = n_samples - total
    n_missing = int(missing.sum())
    if n_missing:
        idx = extra.integers(0, n_samples, size=n_missing)
        compiled = add_draws.get()
        if compiled is not None:  # the same additions, without an index array
            compiled(Wt, missing, idx)
            return Wt
        idx *= n_resamples
        idx += np.repeat(np.arange(n_resamples), missing)
        np.add.at(Wt.reshape(-1), idx, np.float32(1))
    return Wt


#: Items whose cells are drawn and looked up at once (a multiple of 4: a
#: block's cells are whole 64-bit draws). Whole-chunk arrays of a few MB
#: (the draws, and ``table.take``'s index array 8 times the size of the
#: cells) came from fresh pages every time; a block's stay in the cache.
_LOOKUP_ROWS = 2048

_WARNED: dict = {"big_endian": False}


def _warn_big_endian() -> None:
    """The lookup kernel reads four 16-bit cells from each 64-bit draw in
    little-endian order: say once that a big-endian machine takes the
    numpy path."""
    if not _WARNED["big_endian"]:
        _WARNED["big_endian"] = True
        fall_back("the bootstrap's table lookup kernel needs a little-endian machine")


def _spare_matrix(spare):
    """A matrix from ``spare`` (None when there is none), taken out of it."""
    try:
        return None if spare is None else spare.pop()
    except IndexError:  # empty (deque.pop is atomic: no check-then-pop race)
        return None


def _table_values(bits, table, n_samples: int, chunk: int, n_resamples: int, out):
    """``(Wt, straddle, cells, total)``: the table's value of each of the
    chunk's ``N × chunk`` cells (16 bits of ``bits``' draws, item-major),
    float32, of the first ``n_resamples`` columns (into ``out`` when it has
    the shape); the flat (C order) positions of the chunk's straddling cells
    and their cells; with the compiled kernel, each kept resample's total of
    the cells that do not straddle (int64), else None (summed afterwards).

    Drawn and looked up block by block of :data:`_LOOKUP_ROWS` items: the
    generator's draws in consecutive pieces are its draws in one (the last
    piece rounded up to a whole draw, as the chunk's), so the cells, the
    values and the straddling cells are those of the whole chunk at once.
    """
    Wt = out
    if Wt is None or Wt.shape != (n_samples, n_resamples):
        Wt = np.empty((n_samples, n_resamples), np.float32)
    # (the kernel reads the draws' 16-bit pieces in the machine's order)
    compiled = table_block.get()
    if compiled is not None and sys.byteorder != "little":
        _warn_big_endian()
        compiled = None
    total = None
    if compiled is not None:  # one pass, no index array (the ``fast`` extra)
        # integers (with a few 255s of the straddling cells among them until
        # they are taken out): float32 sums are exact below 2**24
        exact = np.float32 if n_samples < _FLOAT32_TOTALS else np.float64
        total = np.zeros(chunk, exact)
        found_at = np.empty(min(n_samples, _LOOKUP_ROWS) * chunk, np.intp)
        # a chunk's last resamples that are not kept are looked up aside
        aside = None
        if n_resamples < chunk:
            aside = np.empty((min(n_samples, _LOOKUP_ROWS), chunk), np.float32)
    straddles, straddle_cells = [], []
    for start in range(0, n_samples, _LOOKUP_ROWS):
        stop = min(start + _LOOKUP_ROWS, n_samples)
        size = (stop - start) * chunk
        raw = bits.random_raw(-(-size // 4)).astype("<u8", copy=False)
        cells = raw.view("<u2")[:size]
        if compiled is None:
            X = table.take(cells)
            found = np.flatnonzero(X == _STRADDLE)
            Wt[start:stop] = X.reshape(stop - start, chunk)[:, :n_resamples]
        else:
            into = Wt[start:stop] if aside is None else aside[: stop - start]
            n_found = compiled(raw, cells, table, _STRADDLE_F32, into, total, found_at)
            found = found_at[:n_found]
            if aside is not None:
                Wt[start:stop] = into[:, :n_resamples]
        if found.size:
            straddles.append(found + start * chunk)
            straddle_cells.append(cells[found])
    if total is not None:
        total = total[:n_resamples].astype(np.int64)
    if not straddles:
        return Wt, np.empty(0, np.intp), np.empty(0, np.uint16), total
    return Wt, np.concatenate(straddles), np.concatenate(straddle_cells), total


#: Items below which the compiled lookup sums each resample's Poisson counts
#: in float32 (integers: exact while the partial sums stay below 2**24).
_FLOAT32_TOTALS = 2**22

#: The cells of the Poisson table: the top 16 bits of a uniform.
_N_CELLS = 2**16
#: A table entry whose cell straddles a step of the CDF (refined).
_STRADDLE = 255
#: ... as the compiled lookup compares it with the values it wrote.
_STRADDLE_F32 = np.float32(_STRADDLE)
_POISSON_CELLS: dict = {}


def _poisson_rate(n_samples: int) -> float:
    """``λ = 1 − 4/√N`` (0 for N ≤ 16): the totals exceed ``N`` with
    probability 3·10⁻⁵, and ``4√N`` indices are left to draw uniformly."""
    return max(0.0, 1.0 - 4.0 / np.sqrt(n_samples))


def _poisson_cells(n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """``(table, cdf)`` of Poisson(``_poisson_rate(N)``): ``table[c]`` is the
    value of every uniform in cell ``[c, c + 1) / 2**16`` (``_STRADDLE``
    where a step of the CDF lies inside), ``cdf`` the CDF up to 1 (float64)."""
    rate = _poisson_rate(n_samples)
    kept = _POISSON_CELLS.get(rate)
    if kept is not None:
        return kept
    pmf, cdf = [np.exp(-rate)], [np.exp(-rate)]
    while cdf[-1] < 1.0 and len(cdf) < 40:
        pmf.append(pmf[-1] * rate / len(pmf))
        cdf.append(cdf[-1] + pmf[-1])
    cdf = np.array(cdf)
    edges = np.arange(_N_CELLS + 1) / _N_CELLS
    low = np.searchsorted(cdf, edges[:-1], side="right")  # value at the cell's start
    high = np.searchsorted(cdf, edges[1:], side="left")  # ... and just below its end
    table = np.where(low == high, low, _STRADDLE).astype(np.uint8)
    _POISSON_CELLS[rate] = (table, cdf)
    return table, cdf


def resample_weights(random_state, n_samples: int, n_resamples: int) -> np.ndarray:
    """The report's resamples as item multiplicities, ``(n_resamples, N)``.

    Row ``b`` counts how often each item is drawn in resample ``b`` of
    :func:`~sklearn_hcal.metrics.human_calibration_report` with this
    ``random_state``: multinomial counts (``N`` draws, equal
    probabilities), so ``np.repeat(np.arange(N), w)`` are the resampled
    items.

    Examples
    --------
    >>> from sklearn_hcal.metrics._bootstrap import resample_weights
    >>> W = resample_weights(0, 5, 3)
    >>> W.shape, W.sum(axis=1).tolist()
    ((3, 5), [5.0, 5.0, 5.0])
    """
    chunks = _chunks(random_state, n_samples, n_resamples)
    return np.concatenate([Wt.T for Wt in chunks]).astype(np.float64)


def resampled_sums(values: np.ndarray, random_state, n_resamples: int) -> np.ndarray:
    """Sums over items of per-item ``values`` in each of the report's resamples.

    Row ``b`` is ``w_b @ values`` for the multiplicities ``w_b`` of
    :func:`resample_weights` with this ``random_state``, computed chunk by
    chunk of resamples (one ``N × chunk`` weight matrix at a time, never the
    whole ``B × N``): a statistic that is a function of sums over items (α's
    observed disagreement and value totals) is read off these sums for every
    resample at once. The products are float64 (``values`` has a handful of
    columns).

    Parameters
    ----------
    values : ndarray of shape (n_samples, n_values)
        Each item's contributions.
    random_state : int, RandomState or Generator instance, or None
        Seeds the resamples (:func:`seed_sequence`).
    n_resamples : int
        Number of resamples.

    Returns
    -------
    sums : ndarray of shape (n_resamples, n_values)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics._bootstrap import resampled_sums, resample_weights
    >>> values = np.arange(10.0).reshape(5, 2)
    >>> sums = resampled_sums(values, 0, 3)
    >>> np.allclose(sums, resample_weights(0, 5, 3) @ values)
    True
    """
    chunks = _chunks(random_state, values.shape[0], n_resamples)
    return np.concatenate([Wt.T.astype(np.float64) @ values for Wt in chunks])


def _chunks(random_state, n_samples: int, n_resamples: int):
    """The ``N × chunk`` float32 weights of each chunk of resamples, in order."""
    sizes = _chunk_sizes(n_samples, n_resamples)
    seeds = seed_sequence(random_state).spawn(len(sizes))
    for seed, size in zip(seeds, sizes):
        yield _chunk_weights(seed, n_samples, size)
