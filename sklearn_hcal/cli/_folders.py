"""Output folders of the command line, checked before any work.

An output folder that cannot be written (a file in the way, a read-only or
virtual file system, no permission) is a one-line error before training or
scoring starts, and an ``OSError`` while writing becomes the same error.
Only the standard library: ``hcal demo`` checks its folder before it loads
anything heavy.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from ._errors import InputError

__all__ = ["prepare_output_dir", "writing_to"]


def _output_error(option: str, folder, exc: OSError, doing: str) -> ValueError:
    if isinstance(exc, FileExistsError):
        why = "exists and is not a folder"
    elif isinstance(exc, NotADirectoryError):
        why = f"cannot {doing}: a part of the path is a file, not a folder"
    else:
        why = f"cannot {doing} ({exc.strerror or exc})"
    # "--plots figs: ..." for an option, "out='figs': ..." for a parameter
    named = f"{option}{str(folder)!r}" if option.endswith("=") else f"{option} {folder}"
    return InputError(f"{named}: {why}")


def prepare_output_dir(folder, option: str) -> Path:
    """Create ``folder`` (and its parents) and check that files can be written
    in it, before any work: an unusable output folder is a one-line error.

    Parameters
    ----------
    folder : str or path
    option : str
        How the user named the folder, for messages: an option (``--out``,
        ``--plots``) or a parameter ending with ``=`` (``out=``).

    Returns
    -------
    folder : Path

    Raises
    ------
    ValueError
        Naming ``option`` and ``folder`` (a file in the way, a read-only or
        virtual file system such as ``/proc``, no permission).

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_hcal.cli._folders import prepare_output_dir
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     open(os.path.join(tmp, "f"), "w").close()
    ...     prepare_output_dir(os.path.join(tmp, "f", "figs"), "--plots")
    Traceback (most recent call last):
    ...
    sklearn_hcal.cli._errors.InputError: --plots .../f/figs: cannot create the \
folder: a part of the path is a file, not a folder
    """
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _output_error(option, folder, exc, "create the folder") from None
    try:
        # A probe file: permissions, read-only mounts and /proc-like file
        # systems only show when something is written.
        with tempfile.NamedTemporaryFile(dir=path, prefix=".hcal-probe-"):
            pass
    except OSError as exc:
        raise _output_error(option, folder, exc, "write in the folder") from None
    return path


@contextlib.contextmanager
def writing_to(folder, option: str):
    """Turn an ``OSError`` while writing into ``folder`` (a full disk, a folder
    removed meanwhile) into the one-line error of :func:`prepare_output_dir`."""
    try:
        yield
    except OSError as exc:
        raise _output_error(option, folder, exc, "write in the folder") from None
