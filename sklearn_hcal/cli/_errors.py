"""The one error of the command line.

Every problem with what a user typed or gave -- an option, a file, a value
in a file -- raises :class:`InputError`: a ``ValueError`` whose message is
one line naming the option, the file and the row. :func:`sklearn_hcal.cli.
main` prints it as ``hcal: error: ...`` and exits with status 2, as it does
for the library's own ``ValueError`` (which names the argument and the row
already). Every module of the package imports it from here, so that no
module imports the entry point (developer guide §cli).
"""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(ValueError):
    """Bad usage or bad input: reported on one line, exit status 2."""
