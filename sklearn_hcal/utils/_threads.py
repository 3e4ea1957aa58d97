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
"""

from __future__ import annotations

import functools

from threadpoolctl import threadpool_limits

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
    return threadpool_limits(limits=1, user_api="blas")


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
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with one_blas_thread():
                return func(*args, **kwargs)
        finally:
            torch.set_num_threads(threads)

    return wrapper
