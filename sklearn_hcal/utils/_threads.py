"""One BLAS thread inside the tight loops of small products.

The calibrators' solvers (Newton–Halley for the temperature, L-BFGS for
vector and matrix scaling) repeat, a few dozen times, matrix–vector and
small matrix–matrix products over the ``n_samples × n_classes`` scores.
Each product is short; on two BLAS threads it ends in a barrier where one
thread waits for the other, and when another process holds the second core
that wait lasts a scheduler time slice: a temperature fit at 10⁶ × 10 that
takes 0.1 s on a quiet machine took 0.4 s with the other core busy. One
thread has no barrier and loses little on a quiet machine (the products
are memory-bound). The limit is set for the solver only and restored for
the caller (``threadpoolctl``, a scikit-learn dependency).

The libraries are looked up once per set of imported modules (a
``threadpool_limits`` looks them all up, a millisecond or two in a process
with scipy, numba and pandas: the bootstrap's report sets the limit once).
"""

from __future__ import annotations

import functools
import sys
import threading

from threadpoolctl import ThreadpoolController

from ._optional import import_optional

__all__ = ["one_blas_thread", "one_torch_thread"]


def one_blas_thread():
    """Context manager: BLAS on one thread inside, the caller's limits after.

    Examples
    --------
    >>> from threadpoolctl import threadpool_info
    >>> before = [m["num_threads"] for m in threadpool_info()]
    >>> with one_blas_thread():
    ...     pass
    >>> [m["num_threads"] for m in threadpool_info()] == before
    True
    """
    return _controller().limit(limits=1, user_api="blas")


def _controller() -> ThreadpoolController:
    """The process's thread pools, looked up again once a module has been
    imported since (an import may load another BLAS)."""
    n_modules = len(sys.modules)
    known = _CONTROLLER.get(n_modules)
    if known is None:
        known = ThreadpoolController()
        _CONTROLLER.clear()  # a race makes two lookups, never a wrong one
        _CONTROLLER[n_modules] = known
    return known


#: ``{number of imported modules: the controller made then}``.
_CONTROLLER: dict = {}


def one_torch_thread(func):
    """Decorator: run ``func`` with one torch intra-op thread and one BLAS thread.

    The α-calibration solvers evaluate the likelihood and its gradient a few
    dozen times, each a short pass of torch operations; on two intra-op
    threads the same barrier stall as above made a logit-feature fit of
    20,000 items take 3.1 s instead of 0.2 s when the other core was busy
    (0.73 s against 2.7 s for 512 features). The caller's thread counts are
    restored afterwards.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        torch = import_optional("torch")
        # torch's thread count is global to the process: fits running at once
        # on several threads share one saved count, restored by the last.
        with _TORCH_LOCK:
            if not _TORCH_SAVED:
                _TORCH_SAVED.append(torch.get_num_threads())
                torch.set_num_threads(1)
            _TORCH_SAVED.append(None)
        try:
            with one_blas_thread():
                return func(*args, **kwargs)
        finally:
            with _TORCH_LOCK:
                _TORCH_SAVED.pop()
                if len(_TORCH_SAVED) == 1:
                    torch.set_num_threads(_TORCH_SAVED.pop())

    return wrapper


#: The caller's torch thread count (first entry) and one entry per running fit.
_TORCH_SAVED: list = []
_TORCH_LOCK = threading.Lock()
