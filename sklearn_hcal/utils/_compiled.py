"""Compiled kernels: numba when the ``fast`` extra is installed, else numpy.

A kernel is a plain Python function written for numba (loops over arrays,
scalars and preallocated outputs only). :func:`kernel` wraps it lazily:
numba is imported and the function compiled on the first call of
:meth:`LazyKernel.get`, never at import, and only when numba is installed
and not switched off. The caller keeps a numpy path that gives **the same
bits** (the same operations, the same summation order; tested equal for
every kernel) and takes it when :meth:`LazyKernel.get` returns None, so a
result never depends on whether numba is installed (developer guide
§compiled-kernels).

Switches: the environment variable ``SKLEARN_HCAL_COMPILED=0`` turns the
kernels off for a process; :func:`use_compiled` does so for a block (the
tests and benchmarks compare both paths with it).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ._warnings import warn_user

__all__ = [
    "LazyKernel",
    "compiled_available",
    "fall_back",
    "kernel",
    "use_compiled",
]

#: ``SKLEARN_HCAL_COMPILED`` values that turn the kernels off.
_OFF = {"0", "false", "no", "off"}

#: None: decided from the environment (read once) and numba's presence on
#: first use.
_STATE: dict = {"enabled": None, "numba": None}


def _numba():
    """The numba module, or False when it cannot be imported (tried once).

    Not installed (the ``fast`` extra is optional): silently False. Installed
    but failing to import (a numba built for another numpy): a warning, once,
    as the user asked for the kernels and gets the numpy paths.
    """
    if _STATE["numba"] is None:
        try:
            _STATE["numba"] = importlib.import_module("numba")
        except ImportError as exc:
            _STATE["numba"] = False
            if getattr(exc, "name", None) != "numba":
                fall_back(f"numba is installed but cannot be imported ({exc})")
    return _STATE["numba"]


def fall_back(reason: str) -> None:
    """Warn that the numpy paths run instead of the kernels, and why.

    Each caller decides once per process (its decision is kept), so each
    reason is said once.
    """
    warn_user(
        f"{reason}; the numpy paths run instead of the compiled kernels: the "
        "same numbers, slower. Set SKLEARN_HCAL_COMPILED=0 to silence this.",
        RuntimeWarning,
    )


def compiled_available() -> bool:
    """Whether kernels run compiled now (numba installed and not switched off)."""
    enabled = _STATE["enabled"]
    if enabled is None:  # read once (a metric call must not pay for it)
        setting = os.environ.get("SKLEARN_HCAL_COMPILED", "1").strip().lower()
        enabled = _STATE["enabled"] = setting not in _OFF
    return enabled and _numba() is not False


@contextmanager
def use_compiled(enabled: bool) -> Iterator[None]:
    """Run the block with the compiled kernels on (if numba is installed) or off.

    Process-wide (not per thread): for tests and benchmarks that compare the
    compiled path with the numpy path.
    """
    before = _STATE["enabled"]
    _STATE["enabled"] = bool(enabled)
    try:
        yield
    finally:
        _STATE["enabled"] = before


class LazyKernel:
    """A numba kernel compiled on first use; :meth:`get` is None without numba.

    Parameters
    ----------
    function : callable
        The kernel in numba's subset of Python. It is compiled with
        ``nogil=True`` (the package's block threads run it in parallel),
        ``cache=True`` (one compilation per installation, not per process)
        and numpy's error model (a division by zero gives inf or NaN, as
        numpy does, instead of raising).
    """

    def __init__(self, function: Callable) -> None:
        self.function = function
        self._compiled = None

    def get(self) -> Callable | None:
        """The compiled kernel, or None when the numpy path must run."""
        if not compiled_available():
            return None
        if self._compiled is None:
            numba = _numba()
            try:
                compiled = numba.njit(nogil=True, cache=True, error_model="numpy")(
                    self.function
                )
            except RuntimeError as exc:
                # numba raises when neither the package's folder nor a user
                # cache folder is writable: compile in memory, every process
                warn_user(
                    f"numba cannot cache its compiled kernels ({exc}); they are "
                    "compiled in memory in every process (seconds each). Set "
                    "NUMBA_CACHE_DIR to a writable folder to keep them.",
                    RuntimeWarning,
                )
                compiled = numba.njit(nogil=True, error_model="numpy")(self.function)
            self._compiled = compiled
        return self._compiled


def kernel(function: Callable) -> LazyKernel:
    """Decorator: ``function`` as a :class:`LazyKernel`."""
    return LazyKernel(function)
