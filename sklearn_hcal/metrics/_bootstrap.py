"""The report's bootstrap as one weighted sum.

A bootstrap resample draws ``N`` items with replacement; item ``i`` then
counts ``w_i`` times (``w`` is multinomial: ``N`` draws, equal
probabilities). Every metric of the registry is a function of sums over
items (:class:`~sklearn_hcal.metrics._engine.Sums`): mean-type metrics of
``Σ num`` and ``Σ den``, binned ones of per-cell sums ``Σ_{i in cell}
value``. A resample's sums are the same sums weighted by ``w``, so the
replicates of ``B`` resamples are one weighted sum: the ``B × N`` weight
matrix ``W`` times the items' contributions
(:func:`~sklearn_hcal.metrics._engine.contributions`), in two products per
chunk of resamples:

* ``W @ D`` with ``D`` dense, ``N × d``: the per-item values of the mean-type
  metrics, and for each binned group the per-slot totals of its statistics;
* ``W @ A`` with ``A`` sparse: the statistics of the items that are *not* in
  the most populated cell of their slot. The most populated cell (for a
  class-wise binning usually the bin of small probabilities, which holds most
  items) is the slot's total minus the other cells, so ``A`` holds a fraction
  of the items' entries. A statistic that is mostly 0 in those cells (``p̂``
  where most items' human share of a class is 0) has no dense totals: all
  its non-zero entries are in ``A`` (cheaper than a dense column per slot).

The resulting sums, with a leading resample axis, are read by the engine's
``Sums.values`` as the report's own sums are, once the products of every
chunk are in: no metric is written twice, and no resample is ever
materialised. The per-item values are computed once and reused by every
chunk (unless they exceed a memory budget, then per chunk, block by block
of items).

The resamples: each chunk of resamples has a :class:`numpy.random.PCG64`
stream of its own, spawned from ``SeedSequence(random_state)``
(:func:`resample_weights`), and its multiplicities are Poisson counts
completed to a multinomial (:func:`_chunk_weights`, exact). The chunks have
a size that depends on ``N`` only and each has its own stream, so every
replicate is the same number for any ``n_jobs``, joblib backend or number
of drawing threads, and chunks are drawn on a thread ahead of the
products (whose dense and sparse parts run on two more).

The weights and the products are float32, the per-item values float64
rounded once, the products' sums float64 before any subtraction: a
replicate errs by at most a float32 sum's bound, far below its Monte-Carlo
spread (developer guide §bootstrap-precision). The report's values come
from the same per-item matrices in float64, every weight 1
(:func:`bootstrap` returns them with the replicates).
"""

from __future__ import annotations

import numbers
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed
from threadpoolctl import threadpool_limits

from ..utils._progress import Progress
from . import _engine

__all__ = ["bootstrap", "resample_weights", "bootstrap_intervals"]

#: Bytes of per-item values kept for all chunks (else recomputed per chunk).
_FEATURE_BUDGET = 2**28
#: Sizes a chunk of resamples: ``N × B`` counts of 8 bytes (float32 now: half).
_WEIGHTS_BUDGET = 2**26
_MAX_CHUNK = 64
#: Threads drawing the resamples, ahead of the products (numpy's generators
#: release the GIL). One keeps ahead of the products (drawing is a third of
#: their cost) without a fourth thread on two cores.
_DRAW_THREADS = 1
#: Bytes of multiplicities drawn ahead of the products (2 to 8 chunks).
_AHEAD_BUDGET = 2**25


# --------------------------------------------------------------------------- #
# The resamples
# --------------------------------------------------------------------------- #
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


def _chunk_weights(seed, n_samples: int, n_resamples: int) -> np.ndarray:
    """Item multiplicities of a chunk of resamples, an ``N × B`` float32 matrix.

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
    size = chunk * n_samples
    raw = bits.random_raw(-(-size // 4)).astype("<u8", copy=False)
    cells = raw.view("<u2")[:size].reshape(n_samples, chunk)
    X = table.take(cells)
    straddle = np.flatnonzero(X == _STRADDLE)
    if straddle.size:
        u = (cells.reshape(-1)[straddle] + refine.random(straddle.size)) / _N_CELLS
        X.reshape(-1)[straddle] = np.searchsorted(cdf, u, side="right")
    if n_resamples < chunk:
        X = X[:, :n_resamples]
    Wt = X.astype(np.float32, order="C")
    # The totals' partial sums are integers: exact in float32 below 2**24.
    if n_samples < 2**23:
        total = Wt.sum(axis=0).astype(np.int64)
    else:
        total = np.add.reduce(X, axis=0, dtype=np.int64)
    over = np.flatnonzero(total > n_samples)
    for b in over:
        idx = plain.integers(0, n_samples, size=n_samples)
        Wt[:, b] = np.bincount(idx, minlength=n_samples)
        total[b] = n_samples
    missing = n_samples - total
    n_missing = int(missing.sum())
    if n_missing:
        idx = extra.integers(0, n_samples, size=n_missing)
        idx *= n_resamples
        idx += np.repeat(np.arange(n_resamples), missing)
        np.add.at(Wt.reshape(-1), idx, np.float32(1))
    return Wt


#: The cells of the Poisson table: the top 16 bits of a uniform.
_N_CELLS = 2**16
#: A table entry whose cell straddles a step of the CDF (refined).
_STRADDLE = 255
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
    sizes = _chunk_sizes(n_samples, n_resamples)
    seeds = seed_sequence(random_state).spawn(len(sizes))
    return np.concatenate(
        [_chunk_weights(seed, n_samples, size).T for seed, size in zip(seeds, sizes)]
    ).astype(np.float64)


# --------------------------------------------------------------------------- #
# Per-item values as a dense and a sparse matrix
# --------------------------------------------------------------------------- #
def _stat_plan(values, in_dominant) -> list:
    """How each statistic of a group enters the products.

    ``values`` is ``(n_entries, n_stats)`` (an entry: an item in a slot),
    ``in_dominant`` marks the entries in their slot's dominant cell.

    ``("alias", s)``: equal to statistic ``s`` for every entry (e.g. the
    count of items with two annotations when all have them), copied
    afterwards; ``("const", c)``: the same value ``c`` for every entry (a
    count), whose dominant cells are ``c`` times the resample's weight minus
    the others; ``("own", None)``: per-slot totals in the dense product, the
    dominant cell of each slot their difference with the other cells;
    ``("direct", None)``: every cell in the sparse product, when the
    dominant cells hold few non-zero values (``p̂`` where most items' human
    share of a class is 0): a dense column per slot costs more than those
    entries.
    """
    plan = []
    for s in range(values.shape[1]):
        v = values[:, s]
        same = None
        for t in range(s):  # a cheap look at the first entries, then all
            if plan[t][0] != "alias" and np.array_equal(v[:16], values[:16, t]):
                if np.array_equal(v, values[:, t]):
                    same = t
                    break
        if same is not None:
            plan.append(("alias", same))
        elif v.size and np.all(v[:16] == v[0]) and np.all(v == v[0]):
            plan.append(("const", float(v[0])))
        elif np.count_nonzero(np.logical_and(v, in_dominant)) < _DIRECT_SHARE * v.size:
            plan.append(("direct", None))
        else:
            plan.append(("own", None))
    return plan


#: A statistic goes wholly into the sparse product when its dominant cells
#: hold fewer non-zero values than this share of its entries: a sparse
#: entry costs about five times a dense one (scipy's loop against BLAS).
_DIRECT_SHARE = 0.2


def _item_of(n_rows: int, n_slots: int) -> np.ndarray:
    """The item of each entry of an ``(n_rows, n_slots)`` group."""
    if n_slots == 1:
        return np.arange(n_rows)
    return np.repeat(np.arange(n_rows), n_slots)


def _block_matrices(columns, human, sources, sl):
    """``(DT, A, layout)`` of the items ``sl`` for all classifiers.

    ``DT`` holds the dense columns as rows (``(n_dense, n_items)``, the
    layout of the product ``DT @ Wt``); ``DT[0]`` is 1 (the resample's
    weight of the block). ``layout[c]`` tells where classifier ``c``'s
    values are: ``num`` (dense indices of the mean-type numerators), ``den``
    (index or None per mean column), and per group the plan of each
    statistic with its dense totals (one per slot) and sparse offset, and
    the dominant cell of each slot.
    """
    n_rows = sl.stop - sl.start
    n_cells = _engine.n_cells_of(columns, human)
    dense, layout = [np.ones(n_rows)], []
    coo_rows, coo_cols, coo_data = [], [], []
    n_sparse = 0
    for source in sources:
        num, den, cells = _engine.contributions(columns, human, source, sl)
        entry = {"num": list(range(len(dense), len(dense) + len(num)))}
        dense.extend(num)
        entry["den"] = []
        for d in den:
            entry["den"].append(None if d is None else len(dense))
            if d is not None:
                dense.append(d)
        entry["groups"] = {}
        for key, (cell, values) in cells.items():
            n_slots, width = n_cells[key]
            n_stats = values.shape[-1]
            counts = np.bincount(cell.reshape(-1), minlength=n_slots * width)
            dominant = counts.reshape(n_slots, width).argmax(axis=1)
            in_dominant = (cell == dominant + np.arange(n_slots) * width).reshape(-1)
            # entry e: item e // n_slots, slot e % n_slots
            cell = cell.reshape(-1)
            values = values.reshape(-1, n_stats)
            item_of = _item_of(n_rows, n_slots)
            others = np.flatnonzero(~in_dominant)
            others_values = values[others]
            stats = []
            for s, (kind, ref) in enumerate(_stat_plan(values, in_dominant)):
                if kind == "alias":
                    stats.append((kind, ref, None))
                    continue
                total = None
                if kind == "own":
                    total = len(dense)
                    dense.extend(values[:, s].reshape(n_rows, n_slots).T)
                if kind == "direct":
                    kept = np.flatnonzero(values[:, s])
                    data = values[kept, s]
                else:
                    data = others_values[:, s]
                    nonzero = data != 0  # a zero adds nothing: not an entry
                    kept, data = others[nonzero], data[nonzero]
                coo_rows.append(item_of[kept])
                coo_cols.append(n_sparse + cell[kept])
                coo_data.append(data)
                stats.append((kind, ref if kind == "const" else total, n_sparse))
                n_sparse += n_slots * width
            entry["groups"][key] = (stats, dominant)
        layout.append(entry)
    DT = np.array(dense)
    A = sp.coo_matrix(
        (
            np.concatenate(coo_data) if coo_data else np.empty(0),
            (
                np.concatenate(coo_rows) if coo_rows else np.empty(0, np.intp),
                np.concatenate(coo_cols) if coo_cols else np.empty(0, np.intp),
            ),
        ),
        shape=(n_rows, n_sparse),
    )
    # No (item, column) pair comes twice: the conversion need not sort the
    # rows' entries to add duplicates (a counting sort by row, in the order
    # the entries were made, instead of a sort per row).
    A.has_canonical_format = True
    return DT, A.tocsr(), layout


def _for_products(matrices):
    """``(DT, A, layout)`` in float32, the precision of the products
    (developer guide §bootstrap-precision), ``DT`` aligned and C-ordered."""
    DT, A, layout = matrices
    return np.require(DT, np.float32, requirements="CA"), A.astype(np.float32), layout


def _point(columns, human, matrices) -> np.ndarray:
    """The report's values of every classifier, ``(n_classifiers, n_columns)``,
    from the float64 matrices of all items: the weighted sums with every
    weight 1, read by the engine as the report's own sums are."""
    DT, A, layout = matrices
    n_cells = _engine.n_cells_of(columns, human)
    dense = DT.sum(axis=1)[None, :]
    sparse = np.asarray(A.sum(axis=0))
    point = np.empty((len(layout), len(columns)))
    for c, entry in enumerate(layout):
        num, den, cells = _reconstruct(entry, dense, sparse, n_cells, 1)
        values = _engine.Sums(
            columns,
            num=num[0],
            den=den[0],
            cells={key: value[0] for key, value in cells.items()},
            n_samples=human.n_samples,
        ).values()
        point[c] = [values[col.name] for col in columns]
    return point


def _item_blocks(columns, human, n_sources: int) -> list[slice]:
    """Blocks of items whose dense values stay within the feature budget."""
    slots = sum(h for h, _ in _engine.n_cells_of(columns, human).values())
    # Dense values and every statistic of every slot as a sparse entry (row,
    # column, value) per item: an upper bound of what the construction holds
    # (the kept matrices are a fraction of it). A further factor of 4 once
    # split a two-classifier report of CIFAR-10H's 10,000 items into two
    # blocks, whose per-item values were then recomputed for every chunk of
    # resamples (3.3× the bootstrap's CPU: 732 against 223 ms).
    per_item = 8 * n_sources * (2 * len(columns) + 7 * slots * 3)
    rows = max(1024, _FEATURE_BUDGET // max(per_item, 1))
    n = human.n_samples
    return [slice(s, min(s + rows, n)) for s in range(0, n, rows)]


# --------------------------------------------------------------------------- #
# One chunk of resamples
# --------------------------------------------------------------------------- #
def _chunk_task(columns, human, sources, blocks, cached, weights, limit_threads):
    """The weighted sums of a chunk of resamples (a worker's task).

    Run with one BLAS thread: the products are small, a second thread only
    waits on a busy machine, and the sums then do not depend on the number
    of threads of the process that computes them.
    """
    if not limit_threads:
        return _chunk_sums(columns, human, sources, blocks, cached, weights)
    with threadpool_limits(limits=1, user_api="blas"):
        return _chunk_sums(columns, human, sources, blocks, cached, weights)


def _chunk_sums(columns, human, sources, blocks, cached, weights, helper=None):
    """``[(num, den, cells)]`` per classifier: the chunk's weighted sums.

    With a ``helper`` executor the sparse product runs on it while this
    thread computes the dense one (BLAS and scipy's loop, both without the
    GIL; two dense products at once would wait on BLAS's lock).
    """
    n_res = weights.shape[1]
    n_cells = _engine.n_cells_of(columns, human)
    sums = [None] * len(sources)
    for b, sl in enumerate(blocks):
        DT, A, layout = (
            cached[b]
            if cached is not None
            else _for_products(_block_matrices(columns, human, sources, sl))
        )
        # Arrays that come through pickling (a worker's) may be unaligned,
        # where numpy's product leaves BLAS for a loop that rounds otherwise:
        # aligned, every process computes the same bits.
        DT = np.require(DT, requirements="CA")
        Wt = np.require(weights[sl], requirements="CA")
        if helper is None:
            sparse = _sparse_product(A, Wt)
        else:
            pending = helper.submit(_sparse_product, A, Wt)
        dense = _dense_product(DT, Wt)
        if helper is not None:
            sparse = pending.result()
        for c, entry in enumerate(layout):
            part = _reconstruct(entry, dense, sparse, n_cells, n_res)
            sums[c] = part if sums[c] is None else _add(sums[c], part)
    return sums


def _sparse_product(A, Wt) -> np.ndarray:
    """``(B, n_sparse)`` float64 sums from the float32 product."""
    return (A.T @ Wt).T.astype(np.float64)


def _dense_product(DT, Wt) -> np.ndarray:
    """``(B, n_dense)`` float64 sums from the float32 product."""
    return (DT @ Wt).T.astype(np.float64)


def _stack(parts) -> list:
    """The chunks' ``[(num, den, cells)]`` as one, resamples stacked in order."""
    stacked = []
    for c in range(len(parts[0])):
        nums, dens, cells = zip(*(part[c] for part in parts))
        stacked.append(
            (
                np.concatenate(nums),
                np.concatenate(dens),
                {k: np.concatenate([p[k] for p in cells]) for k in cells[0]},
            )
        )
    return stacked


#: Resamples whose columns are read at once: the groups' terms then work
#: on arrays of a few hundred KB (a MB or more comes from the system's fresh
#: pages on every temporary, several times slower).
_VALUES_BATCH = 128


def _replicates(columns, sums, n_samples: int) -> np.ndarray:
    """The columns of weighted sums: a :class:`~._engine.Sums` with a
    leading resample axis per classifier, read as the report's own sums,
    :data:`_VALUES_BATCH` resamples at a time (each is read on its own: the
    batches change no number)."""
    n_res = sums[0][0].shape[0]
    out = np.empty((n_res, len(sums), len(columns)))
    for c, (num, den, cells) in enumerate(sums):
        for start in range(0, n_res, _VALUES_BATCH):
            part = slice(start, start + _VALUES_BATCH)
            values = _engine.Sums(
                columns,
                num=num[part],
                den=den[part],
                cells={key: value[part] for key, value in cells.items()},
                n_samples=float(n_samples),
            ).values()
            for j, col in enumerate(columns):
                out[part, c, j] = values[col.name]
    return out


def _reconstruct(entry, dense, sparse, n_cells, n_res):
    """``(num, den, {group: sums})`` of one classifier from the products.

    ``num`` and ``den`` of shape ``(B, n_means)``: a plain mean's
    denominator is the resample's weight of the block (its number of items).
    """
    num = dense[:, entry["num"]]
    den = np.empty((n_res, len(entry["den"])))
    for m, j in enumerate(entry["den"]):
        den[:, m] = dense[:, 0 if j is None else j]
    cells = {}
    for key, (stats, dominant) in entry["groups"].items():
        n_slots, width = n_cells[key]
        T = np.empty((n_res, len(stats), n_slots, width))
        slots = np.arange(n_slots)
        for s, (kind, ref, offset) in enumerate(stats):
            if kind == "alias":
                T[:, s] = T[:, ref]
                continue
            T[:, s] = sparse[:, offset : offset + n_slots * width].reshape(
                n_res, n_slots, width
            )
            if kind == "direct":  # every cell is in the sparse product
                continue
            if kind == "const":
                total = ref * dense[:, :1]  # c times the weight of the block
            else:
                total = dense[:, ref : ref + n_slots]
            # The dominant cell of each slot holds what the others do not.
            T[:, s, slots, dominant] = total - T[:, s].sum(axis=-1)
        cells[key] = T.reshape(n_res, len(stats), n_slots * width)
    return num, den, cells


def _add(a, b):
    return a[0] + b[0], a[1] + b[1], {k: a[2][k] + b[2][k] for k in a[2]}


# --------------------------------------------------------------------------- #
# The bootstrap
# --------------------------------------------------------------------------- #
def bootstrap(
    columns, human, sources, n_bootstrap, random_state, n_jobs=None, verbose=0
) -> np.ndarray:
    """``(point, replicates)``: the report's values, ``(n_classifiers,
    n_columns)``, and their replicates, ``(n_bootstrap, n_classifiers,
    n_columns)``.

    The values come from the per-item matrices in float64 when all items
    fit one block (the weighted sums with every weight 1: the contributions
    are computed once for both), else from the engine's pass.

    ``random_state`` is an int, a ``RandomState`` or ``Generator`` instance,
    or None (see :func:`seed_sequence`); ``verbose >= 1`` shows a progress
    bar on standard error.
    """
    sizes = _chunk_sizes(human.n_samples, n_bootstrap)
    seeds = seed_sequence(random_state).spawn(len(sizes))
    # The resamples are drawn on threads (the generators release the GIL),
    # chunks ahead of the products, each chunk from its own stream.
    pool = ThreadPoolExecutor(max_workers=_DRAW_THREADS)
    try:
        return _run_chunks(columns, human, sources, sizes, seeds, pool, n_jobs, verbose)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run_chunks(columns, human, sources, sizes, seeds, pool, n_jobs, verbose):
    """The replicates of every chunk, drawn on ``pool`` chunks ahead."""
    n_samples = human.n_samples
    # While this thread computes the per-item matrices the drawing thread
    # fills the other core with chunks, up to a budget of their memory.
    chunk_bytes = 4 * n_samples * max(sizes, default=1)
    ahead = int(np.clip(_AHEAD_BUDGET // chunk_bytes, 2 * _DRAW_THREADS, 8))
    draws = deque(
        pool.submit(_chunk_weights, seeds[i], n_samples, sizes[i])
        for i in range(min(ahead, len(sizes)))
    )
    blocks = _item_blocks(columns, human, len(sources))
    cached = None
    if len(blocks) == 1:
        # Everything fits the budget: compute the per-item values once.
        matrices = _block_matrices(columns, human, sources, blocks[0])
        point = _point(columns, human, matrices)
        cached = [_for_products(matrices)]
        del matrices
    else:
        point = np.array([_engine.evaluate(columns, human, s) for s in sources])
    workers = effective_n_jobs(n_jobs)
    in_driver = workers == 1

    def weights_in_order():
        for i in range(len(sizes)):
            weights = draws.popleft().result()
            if i + ahead < len(sizes):
                j = i + ahead
                draws.append(pool.submit(_chunk_weights, seeds[j], n_samples, sizes[j]))
            yield weights

    progress = Progress(enabled=verbose > 0)
    parts, done = [], 0
    with threadpool_limits(limits=1 if in_driver else None, user_api="blas"):
        if in_driver:
            results = _on_threads(
                columns, human, sources, blocks, cached, weights_in_order()
            )
        else:
            # A few chunks ahead per worker keep them busy; results in order.
            parallel = Parallel(
                n_jobs=n_jobs, return_as="generator", pre_dispatch=f"{2 * workers + 1}"
            )
            results = parallel(
                delayed(_chunk_task)(columns, human, sources, blocks, cached, w, True)
                for w in weights_in_order()
            )
        for part in results:
            parts.append(part)
            done += part[0][0].shape[0]
            progress.update("bootstrap resamples", done, sum(sizes))
    return point, _replicates(columns, _stack(parts), human.n_samples)


def _on_threads(columns, human, sources, blocks, cached, weights):
    """The weighted sums of each chunk of ``weights``, in order, the sparse
    products on a helper thread.

    With the per-item matrices computed once (one block of items), this
    thread streams the dense products and hands each chunk's sparse product
    to the helper without waiting for it: on a busy machine a thread that
    waits for another's result at every chunk idles through the other's
    time slices, so the two meet only when the helper is
    :data:`_SPARSE_AHEAD` chunks behind (or at the end). Otherwise (items in
    several blocks) each chunk's two products run side by side.
    """
    with ThreadPoolExecutor(max_workers=1) as helper:
        if cached is None or len(blocks) != 1:
            for w in weights:
                yield _chunk_sums(columns, human, sources, blocks, cached, w, helper)
            return
        DT, A, layout = cached[0]
        DT = np.require(DT, requirements="CA")
        n_cells = _engine.n_cells_of(columns, human)
        pending = deque()
        for w in weights:
            Wt = np.require(w, requirements="CA")
            pending.append(
                (helper.submit(_sparse_product, A, Wt), _dense_product(DT, Wt))
            )
            while len(pending) > _SPARSE_AHEAD or pending[0][0].done():
                yield _reconstructed(layout, pending.popleft(), n_cells)
                if not pending:
                    break
        while pending:
            yield _reconstructed(layout, pending.popleft(), n_cells)


#: Chunks whose sparse product may wait on the helper thread.
_SPARSE_AHEAD = 3


def _reconstructed(layout, products, n_cells) -> list:
    """``[(num, den, cells)]`` per classifier from ``(sparse future, dense)``."""
    pending, dense = products
    sparse = pending.result()
    n_res = dense.shape[0]
    return [_reconstruct(entry, dense, sparse, n_cells, n_res) for entry in layout]


def bootstrap_intervals(point, boot, confidence_level, ci_method):
    """``(low, high)`` from replicates ``boot`` (resamples first) and ``point``.

    ``"bias_corrected"``: percentile interval shifted by the bootstrap bias
    ``mean(replicates) − estimate``; ``"percentile"``; ``"basic"``:
    ``2·estimate − q``. NaN replicates (a metric undefined on a resample) are
    left out.
    """
    alpha = 1.0 - confidence_level
    low, high = np.nanquantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
    if ci_method == "bias_corrected":
        bias = np.nanmean(boot, axis=0) - point
        return low - bias, high - bias
    if ci_method == "basic":
        return 2 * point - high, 2 * point - low
    return low, high
