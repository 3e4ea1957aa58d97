"""Progress messages for ``verbose`` estimators.

Progress goes to standard error, never standard output, so it does not mix
with results a program prints; warnings go through :func:`warnings.warn`.
"""

from __future__ import annotations

import contextlib
import sys
import textwrap
import time
from contextvars import ContextVar

# The start of the run a Progress belongs to (see Progress.shared_clock).
_RUN_START: ContextVar[float | None] = ContextVar("hcal_run_start", default=None)


def report_progress(message: str, verbose: int, level: int = 1) -> None:
    """Write ``message`` to standard error when ``verbose >= level``."""
    if verbose >= level:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()


class Progress:
    """Dependency-free progress on a text stream (standard error by default).

    On a terminal a bar is redrawn in place (``\\r``); otherwise (a log file,
    a pipe, pytest's capture) only complete lines are written: the stage
    messages and one line per quarter of a long step. Used by the report's
    bootstrap (``verbose``) and by the command line.

    The time stamps count from ``start`` (a :func:`time.perf_counter`
    value); by default from the start of the Progress whose
    :meth:`shared_clock` block it is created in, else from now. So the
    bootstrap's bar inside a longer run (``hcal demo``) goes on from the
    run's clock instead of restarting at 0.
    """

    def __init__(self, stream=None, enabled: bool = True, start=None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty()) if callable(isatty) else False
        self._open_bar = False
        self._last_quarter = -1
        if start is None:
            start = _RUN_START.get()
        self._start = time.perf_counter() if start is None else float(start)

    @contextlib.contextmanager
    def shared_clock(self):
        """Progress objects created in this block count from this one's start."""
        token = _RUN_START.set(self._start)
        try:
            yield self
        finally:
            _RUN_START.reset(token)

    def _stamp(self) -> str:
        return f"[{time.perf_counter() - self._start:6.1f}s]"

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def message(self, text: str) -> None:
        """A line of its own (ends an open bar first)."""
        if not self.enabled:
            return
        if self._open_bar:
            self._write("\n")
            self._open_bar = False
        stamp = self._stamp()
        # a long message continues under its text, within 80 columns
        lines = textwrap.wrap(
            f"{stamp} {text}",
            width=80,
            subsequent_indent=" " * (len(stamp) + 1),
            break_long_words=False,
            break_on_hyphens=False,
        )
        self._write("\n".join(lines or [stamp]) + "\n")

    def update(self, label: str, done: int, total: int, info: str = "") -> None:
        """``done`` of ``total`` steps of ``label`` are finished."""
        if not self.enabled or total <= 0:
            return
        info = f" {info}" if info else ""
        if self.tty:
            width = 24
            filled = int(round(width * done / total))
            bar = "#" * filled + "." * (width - filled)
            self._write(f"\r{self._stamp()} {label} [{bar}] {done}/{total}{info}\033[K")
            self._open_bar = done < total
            if done >= total:
                self._write("\n")
            return
        quarter = (4 * done) // total
        if done <= 1:
            self._last_quarter = -1
        if quarter > self._last_quarter and (quarter > 0 or done == total):
            self._last_quarter = quarter
            self._write(f"{self._stamp()} {label} {done}/{total}{info}\n")
