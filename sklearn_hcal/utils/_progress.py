"""Progress messages for ``verbose`` estimators.

Progress goes to standard error, never standard output, so it does not mix
with results a program prints; warnings go through :func:`warnings.warn`.
"""

from __future__ import annotations

import sys


def report_progress(message: str, verbose: int, level: int = 1) -> None:
    """Write ``message`` to standard error when ``verbose >= level``."""
    if verbose >= level:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
