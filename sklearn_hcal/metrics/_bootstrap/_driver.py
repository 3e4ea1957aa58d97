"""The report's bootstrap: resamples drawn ahead, products run in order.

:func:`bootstrap` draws the chunks of resamples on a thread ahead of the
products, computes the per-item matrices once when they fit the budget,
and runs each chunk's dense and sparse products side by side (or on
joblib's workers); the replicates do not depend on how (see the package
docstring).
"""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed

from ...utils._progress import Progress
from ...utils._threads import one_blas_thread
from .. import _engine
from ._chunk_sums import (
    _chunk_sums,
    _chunk_task,
    _dense_product,
    _point,
    _replicates,
    _sparse_product,
    _stack,
    _Stacked,
)
from ._item_matrices import _block_matrices, _for_products, _item_blocks
from ._resamples import _chunk_sizes, _chunk_weights, seed_sequence

__all__ = ["bootstrap"]

#: Threads drawing the resamples, ahead of the products (numpy's generators
#: release the GIL). One keeps ahead of the products (drawing is a third of
#: their cost) without a fourth thread on two cores.
_DRAW_THREADS = 1
#: Bytes of multiplicities drawn ahead of the products (2 to 8 chunks).
_AHEAD_BUDGET = 2**25


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
    blocks = _item_blocks(columns, human, len(sources))
    in_driver = effective_n_jobs(n_jobs) == 1
    # Matrices of chunks whose products are done, drawn over again: when
    # this thread runs the products of one block of items, it returns each
    # chunk's matrix, and no more than _MATRICES are in use at once.
    spare = _Spare(_MATRICES if in_driver and len(blocks) == 1 else None)
    try:
        return _chunks_into(
            columns, human, sources, sizes, seeds, pool, n_jobs, verbose, blocks, spare
        )
    finally:
        spare.close()


def _chunks_into(
    columns, human, sources, sizes, seeds, pool, n_jobs, verbose, blocks, spare
):
    """:func:`_run_chunks` with the blocks of items and the matrices to
    draw into decided."""
    n_samples = human.n_samples
    # While this thread computes the per-item matrices the drawing thread
    # fills the other core with chunks, up to a budget of their memory.
    chunk_bytes = 4 * n_samples * max(sizes, default=1)
    ahead = int(np.clip(_AHEAD_BUDGET // chunk_bytes, 2 * _DRAW_THREADS, 8))
    draws = deque(
        pool.submit(spare.draw, seeds[i], n_samples, sizes[i])
        for i in range(min(ahead, len(sizes)))
    )
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
                draws.append(pool.submit(spare.draw, seeds[j], n_samples, sizes[j]))
            yield weights

    progress = Progress(enabled=verbose > 0)
    parts, done = [], 0
    stacked = _Stacked(sum(sizes))
    with one_blas_thread() if in_driver else nullcontext():
        if in_driver:
            results = _on_threads(
                columns,
                human,
                sources,
                blocks,
                cached,
                weights_in_order(),
                spare,
                stacked,
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
            stacked.read_columns(columns, human.n_samples)
    if stacked.sums is None:
        return point, _replicates(columns, _stack(parts), human.n_samples)
    stacked.read_columns(columns, human.n_samples, final=True)
    return point, stacked.values


def _on_threads(columns, human, sources, blocks, cached, weights, spare, stacked):
    """The weighted sums of each chunk of ``weights``, in order, the sparse
    products on a helper thread; each chunk's weights go to ``spare`` once
    its products are done (the drawing thread writes the next ones there),
    with one block of items its sums into ``stacked``.

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
                (helper.submit(_sparse_product, A, Wt), _dense_product(DT, Wt), Wt)
            )
            while len(pending) > _SPARSE_AHEAD or pending[0][0].done():
                yield _reconstructed(layout, pending.popleft(), n_cells, spare, stacked)
                if not pending:
                    break
        while pending:
            yield _reconstructed(layout, pending.popleft(), n_cells, spare, stacked)


#: Chunks whose sparse product may wait on the helper thread.
_SPARSE_AHEAD = 3
#: Weight matrices in use at once when this thread returns them: those
#: whose sparse product may wait, the chunk being drawn and one more. The
#: drawing thread, faster than the products, otherwise drew nearly every
#: chunk into a fresh matrix (its pages cost about as much as the lookup).
#: At least _SPARSE_AHEAD + 1: the chunk this thread waits for is drawn
#: into a matrix that the chunks before it have returned.
_MATRICES = _SPARSE_AHEAD + 2


class _Spare:
    """The weight matrices of chunks whose products are done, drawn over
    again; with a ``cap``, a draw waits until fewer than ``cap`` matrices
    are in use (the chunks' products return them in order).

    A drawn matrix holds the chunk's own counts whatever it held before
    (:func:`~._resamples._chunk_weights`): the replicates do not depend on
    which matrix a chunk gets.
    """

    def __init__(self, cap: int | None) -> None:
        self.free = deque()
        self.cap = cap
        self._slots = None if cap is None else threading.Semaphore(cap)

    def draw(self, seed, n_samples: int, n_resamples: int) -> np.ndarray:
        """A chunk's weights (a drawing thread's task)."""
        if self._slots is not None:
            self._slots.acquire()
        return _chunk_weights(seed, n_samples, n_resamples, self.free)

    def append(self, weights: np.ndarray) -> None:
        """Return a chunk's matrix once its products are done."""
        self.free.append(weights)
        if self._slots is not None:
            self._slots.release()

    def close(self) -> None:
        """Let a draw that waits for a matrix go on (the report is over, or
        failed before returning the matrices): the drawing pool's shutdown
        waits for it."""
        if self._slots is not None:
            self._slots.release(self.cap)


def _reconstructed(layout, products, n_cells, spare, stacked) -> list:
    """``[(num, den, cells)]`` per classifier from ``(sparse future, dense,
    weights)``, written into ``stacked``; the weights, read by both
    products, go to ``spare``."""
    pending, dense, weights = products
    sparse = pending.result()
    spare.append(weights)
    return stacked.reconstruct(layout, dense, sparse, n_cells)
