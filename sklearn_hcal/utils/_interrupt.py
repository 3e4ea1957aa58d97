"""Let Ctrl-C stop code that swallows ``KeyboardInterrupt``.

skorch's ``NeuralNet.partial_fit`` catches ``KeyboardInterrupt`` so that an
interactive user can stop training and keep the network: ``fit`` then
returns normally with a half-trained network. A program that goes on to
calibrate, evaluate and write results must not, so it wraps such calls in
:func:`reraise_interrupt`.
"""

from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["reraise_interrupt"]


@contextlib.contextmanager
def reraise_interrupt():
    """Raise ``KeyboardInterrupt`` after the block when SIGINT arrived in it.

    Inside the block, SIGINT still goes to the handler in place (Python's
    default raises ``KeyboardInterrupt`` at once, which is what stops a
    training loop); the context only records that it came, and raises
    ``KeyboardInterrupt`` on leaving the block if the code inside swallowed
    it. Outside the main thread, or when SIGINT is ignored or left to the
    operating system (``SIG_IGN``, ``SIG_DFL``), nothing is changed.

    Examples
    --------
    >>> from sklearn_hcal.utils._interrupt import reraise_interrupt
    >>> with reraise_interrupt():
    ...     pass  # no signal: nothing happens
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):  # SIG_IGN, SIG_DFL, or set outside Python
        yield
        return
    received = []

    def handler(signum, frame):
        received.append(signum)
        previous(signum, frame)

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt
