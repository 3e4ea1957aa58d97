"""The report's bootstrap as matrix products.

A bootstrap resample draws ``N`` items with replacement; item ``i`` then
counts ``w_i`` times. Every metric of the registry is a function of sums over
items weighted by ``w`` (:mod:`sklearn_hcal.metrics._engine`): mean-type
metrics of ``Σ w·num`` and ``Σ w·den``, binned ones of per-cell sums
``Σ_{i in cell} w·value`` (:mod:`sklearn_hcal.metrics._cells`). For a chunk of
``B`` resamples the weights form a ``B × N`` matrix ``W``, and all those sums
are two products:

* ``W @ D`` with ``D`` dense, ``N × d``: the per-item values of the mean-type
  metrics, and for each binned group the per-slot totals of its statistics;
* ``W @ A`` with ``A`` sparse: the statistics of the items that are *not* in
  the most populated cell of their slot. The most populated cell (for a
  class-wise binning usually the bin of small probabilities, which holds most
  items) is the slot's total minus the other cells, so ``A`` holds a fraction
  of the items' entries.

The per-item values are computed once and reused by every chunk (unless
they exceed a memory budget, then per chunk, block by block of items).

The resamples are those of the original implementation: resample ``b`` is the
``b``-th ``rng.randint(0, N, size=N)`` of ``check_random_state(random_state)``.
They are drawn on the calling process, in order; the chunks have a size that
depends on ``N`` only, so every replicate is the same number for any
``n_jobs`` and joblib backend.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed
from threadpoolctl import threadpool_limits

from ..utils._progress import Progress
from . import _engine

__all__ = ["bootstrap", "resample_indices", "bootstrap_intervals"]

#: Bytes of per-item values kept for all chunks (else recomputed per chunk).
_FEATURE_BUDGET = 2**28
#: Bytes of one chunk's item multiplicities (``N × B`` float64).
_WEIGHTS_BUDGET = 2**26
_MAX_CHUNK = 64


# --------------------------------------------------------------------------- #
# The resamples
# --------------------------------------------------------------------------- #
def resample_indices(rng, n_samples: int, n_resamples: int) -> np.ndarray:
    """``n_resamples`` rows of ``rng.randint(0, n_samples, size=n_samples)``.

    One call for the whole chunk draws the same numbers as a call per
    resample, in order (NumPy's legacy stream), so resample ``b`` is the
    ``b``-th draw of the original implementation and the replicates of a
    ``random_state`` never change.
    """
    return rng.randint(0, n_samples, size=(n_resamples, n_samples))


def _chunk_weights(rng, n_samples: int, n_resamples: int) -> np.ndarray:
    """Item multiplicities of the next resamples, an ``N × B`` float64 matrix.

    Item-major (C order), the layout both products read without a copy:
    ``Wt.T`` is the ``B × N`` weight matrix of the dense product and the
    sparse one takes ``Wt`` as it is. Built as one ``bincount`` per resample
    into a contiguous row and transposed once, on the drawing thread (a
    third faster than one ``bincount`` over keys of the whole chunk).
    """
    idx = resample_indices(rng, n_samples, n_resamples)
    W = np.empty((n_resamples, n_samples))
    for b in range(n_resamples):
        W[b] = np.bincount(idx[b], minlength=n_samples)
    return np.ascontiguousarray(W.T)


def _chunk_size(n_samples: int) -> int:
    return int(np.clip(_WEIGHTS_BUDGET // (8 * max(n_samples, 1)), 1, _MAX_CHUNK))


# --------------------------------------------------------------------------- #
# Per-item values as a dense and a sparse matrix
# --------------------------------------------------------------------------- #
def _stat_plan(values) -> list:
    """How each statistic of a group enters the products.

    ``("alias", s)``: equal to statistic ``s`` for every item (e.g. the count
    of items with two annotations when all have them), copied afterwards;
    ``("const", c)``: the same value ``c`` for every item (a count), whose
    slot totals are ``c`` times the resample's weight; ``("own", None)``.
    """
    plan = []
    for s, v in enumerate(values):
        earlier = (t for t in range(s) if plan[t][0] != "alias")
        same = next((t for t in earlier if np.array_equal(v, values[t])), None)
        if same is not None:
            plan.append(("alias", same))
        elif v.size and np.all(v == v.flat[0]):
            plan.append(("const", float(v.flat[0])))
        else:
            plan.append(("own", None))
    return plan


def _block_matrices(columns, human, sources, sl):
    """``(D, A, layout)`` of the items ``sl`` for all classifiers.

    ``D[:, 0]`` is 1 (the resample's weight of the block); ``layout[c]``
    tells where classifier ``c``'s values are: ``num`` (dense column indices
    of the mean-type numerators), ``den`` (index or None per mean column),
    and per group the plan of each statistic with its dense totals (one
    column per slot) and sparse offset, and the dominant cell of each slot.
    """
    n_rows = sl.stop - sl.start
    n_cells = _engine.n_cells_of(columns, human)
    dense, layout = [np.ones(n_rows)], []
    coo_rows, coo_cols, coo_data = [], [], []
    n_sparse = 0
    for source in sources:
        num, den, cells = _engine.block_features(columns, human, source, sl)
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
            counts = np.bincount(cell.ravel(), minlength=n_slots * width)
            dominant = counts.reshape(n_slots, width).argmax(axis=1)
            item, slot = np.nonzero(cell != dominant + np.arange(n_slots) * width)
            local = cell[item, slot]
            stats = []
            for s, (kind, ref) in enumerate(_stat_plan(values)):
                if kind == "alias":
                    stats.append((kind, ref, None))
                    continue
                total = None
                if kind == "own":
                    total = len(dense)
                    dense.extend(values[s].T)  # one column per slot
                coo_rows.append(item)
                coo_cols.append(n_sparse + local)
                coo_data.append(values[s, item, slot])
                stats.append((kind, ref if kind == "const" else total, n_sparse))
                n_sparse += n_slots * width
            entry["groups"][key] = (stats, dominant)
        layout.append(entry)
    D = np.empty((n_rows, len(dense)))
    for j, column in enumerate(dense):
        D[:, j] = column
    A = sp.csr_matrix(
        (
            np.concatenate(coo_data) if coo_data else np.empty(0),
            (
                np.concatenate(coo_rows) if coo_rows else np.empty(0, np.intp),
                np.concatenate(coo_cols) if coo_cols else np.empty(0, np.intp),
            ),
        ),
        shape=(n_rows, n_sparse),
    )
    return D, A, layout


def _item_blocks(columns, human, n_sources: int) -> list[slice]:
    """Blocks of items whose dense values stay within the feature budget."""
    slots = sum(h for h, _ in _engine.n_cells_of(columns, human).values())
    # dense values and sparse entries (index + value) per item, roughly
    per_item = 8 * n_sources * (2 * len(columns) + 7 * slots * 3)
    rows = max(1024, _FEATURE_BUDGET // max(per_item, 1) // 4)
    n = human.n_samples
    return [slice(s, min(s + rows, n)) for s in range(0, n, rows)]


# --------------------------------------------------------------------------- #
# One chunk of resamples
# --------------------------------------------------------------------------- #
def _chunk_task(columns, human, sources, blocks, cached, weights, limit_threads):
    if not limit_threads:
        return _chunk_replicates(columns, human, sources, blocks, cached, weights)
    with threadpool_limits(limits=1, user_api="blas"):
        return _chunk_replicates(columns, human, sources, blocks, cached, weights)


def _chunk_replicates(columns, human, sources, blocks, cached, weights) -> np.ndarray:
    """Replicates of a chunk of resamples, shape (B, n_clf, n_cols).

    ``weights`` is the chunk's ``N × B`` multiplicity matrix.

    Run with one BLAS thread: the products are small, a second thread only
    waits on a busy machine, and the sums then do not depend on the number
    of threads of the process that computes them.
    """
    n_samples, n_res = weights.shape
    n_cells = _engine.n_cells_of(columns, human)
    sums = [None] * len(sources)
    for b, sl in enumerate(blocks):
        D, A, layout = (
            cached[b]
            if cached is not None
            else _block_matrices(columns, human, sources, sl)
        )
        Wt = weights[sl]
        dense = Wt.T @ D  # (B, n_dense)
        sparse = (A.T @ Wt).T  # (B, n_sparse)
        for c, entry in enumerate(layout):
            part = _reconstruct(entry, dense, sparse, n_cells, n_res)
            sums[c] = part if sums[c] is None else _add(sums[c], part)
    out = np.empty((n_res, len(sources), len(columns)))
    groups = _engine.groups_of(columns)
    for c, (num, den, cells) in enumerate(sums):
        terms = {
            k: _engine.finish(stats, cells[k], float(n_samples), params)
            for k, (stats, params) in groups.items()
        }
        m = 0  # position among the mean-type columns
        with np.errstate(invalid="ignore", divide="ignore"):
            for j, col in enumerate(columns):
                if col.metric.per_item is None:
                    out[:, c, j] = col.value(terms[col.group])
                    continue
                # every resample draws n_samples items: a plain mean's
                # denominator is n_samples
                d = den[m] if den[m] is not None else float(n_samples)
                out[:, c, j] = num[m] / d
                m += 1
    return out


def _reconstruct(entry, dense, sparse, n_cells, n_res):
    """``(num, den, {group: sums})`` of one classifier from the products."""
    num = [dense[:, j] for j in entry["num"]]
    den = [None if j is None else dense[:, j] for j in entry["den"]]
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
            if kind == "const":
                total = ref * dense[:, :1]  # c times the weight of the block
            else:
                total = dense[:, ref : ref + n_slots]
            # The dominant cell of each slot holds what the others do not.
            T[:, s, slots, dominant] = total - T[:, s].sum(axis=-1)
        cells[key] = T.reshape(n_res, len(stats), n_slots * width)
    return num, den, cells


def _add(a, b):
    num = [x + y for x, y in zip(a[0], b[0])]
    den = [None if x is None else x + y for x, y in zip(a[1], b[1])]
    cells = {k: a[2][k] + b[2][k] for k in a[2]}
    return num, den, cells


# --------------------------------------------------------------------------- #
# The bootstrap
# --------------------------------------------------------------------------- #
def bootstrap(
    columns, human, sources, n_bootstrap, random_state, n_jobs=None, verbose=0
) -> np.ndarray:
    """Replicates of shape ``(n_bootstrap, n_classifiers, n_columns)``.

    ``random_state`` is a ``RandomState`` (see
    :func:`sklearn.utils.check_random_state`); ``verbose >= 1`` shows a
    progress bar on standard error.
    """
    n_samples = human.n_samples
    chunk = _chunk_size(n_samples)
    sizes = [min(chunk, n_bootstrap - start) for start in range(0, n_bootstrap, chunk)]
    # The resamples are drawn on a second thread (randint releases the GIL),
    # one chunk ahead of the computation, in order, from the same generator;
    # the first chunk is drawn while the per-item values are computed.
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return _run_chunks(
            columns, human, sources, sizes, pool, random_state, n_jobs, verbose
        )
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run_chunks(columns, human, sources, sizes, pool, random_state, n_jobs, verbose):
    """The replicates of every chunk, drawing on ``pool`` one chunk ahead."""
    n_samples = human.n_samples
    draw = pool.submit(_chunk_weights, random_state, n_samples, sizes[0])
    blocks = _item_blocks(columns, human, len(sources))
    cached = None
    if len(blocks) == 1:
        # Everything fits the budget: compute the per-item values once.
        cached = [_block_matrices(columns, human, sources, blocks[0])]
    workers = effective_n_jobs(n_jobs)
    in_driver = workers == 1

    def tasks():
        nonlocal draw
        for i in range(len(sizes)):
            weights = draw.result()
            if i + 1 < len(sizes):
                draw = pool.submit(
                    _chunk_weights, random_state, n_samples, sizes[i + 1]
                )
            yield delayed(_chunk_task)(
                columns, human, sources, blocks, cached, weights, not in_driver
            )

    progress = Progress(enabled=verbose > 0)
    parts = []
    # A few chunks ahead per worker keep them busy; results come in order.
    parallel = Parallel(
        n_jobs=n_jobs, return_as="generator", pre_dispatch=f"{2 * workers + 1}"
    )
    with threadpool_limits(limits=1 if in_driver else None, user_api="blas"):
        for part in parallel(tasks()):
            parts.append(part)
            progress.update("bootstrap resamples", sum(map(len, parts)), sum(sizes))
    return np.concatenate(parts, axis=0)


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
