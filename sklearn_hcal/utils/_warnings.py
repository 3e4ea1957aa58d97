"""Warnings that point at the user's line, whatever the depth of the call.

A warning is attributed to a frame (its file and line are what the user
sees, and what ``warnings`` filters and its "once per location" registry
key on). ``stacklevel`` counted by hand goes stale as soon as a wrapper
(scikit-learn's ``_fit_context`` or ``validate_params``, a private helper)
is added or removed between the public entry point and the ``warn``; so the
package's warnings go through :func:`warn_user`, which attributes them to
the first frame outside the libraries in :func:`library_prefixes`
(developer guide §warnings).
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["library_prefixes", "warn_user"]

#: Libraries whose frames stand between the user and a warning: this
#: package, the scikit-learn wrappers around its entry points (and its
#: meta-estimators, which call the package's ``fit`` through joblib),
#: skorch's training loop (which calls the package's callbacks).
_LIBRARIES = ("sklearn_hcal", "sklearn", "joblib", "skorch")


def library_prefixes() -> tuple[str, ...]:
    """The folders of the libraries a warning looks through, with a separator.

    A library not imported yet has no frame on the stack and is left out.

    Examples
    --------
    >>> from sklearn_hcal.utils._warnings import library_prefixes
    >>> any(p.rstrip("/\\\\").endswith("sklearn_hcal") for p in library_prefixes())
    True
    """
    prefixes = []
    for name in _LIBRARIES:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            prefixes.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return tuple(prefixes)


def _user_stacklevel(prefixes: tuple[str, ...]) -> int:
    """``stacklevel`` of the first frame outside ``prefixes``, for a
    :func:`warnings.warn` called by :func:`warn_user` (level 1 is
    :func:`warn_user` itself); the outermost frame when every frame is
    inside (a worker thread of the package)."""
    frame, level = sys._getframe(2), 2  # warn_user's caller
    while frame.f_back is not None and os.path.abspath(
        frame.f_code.co_filename
    ).startswith(prefixes):
        frame, level = frame.f_back, level + 1
    return level


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """:func:`warnings.warn` attributed to the user's frame.

    The frame is the first one, walking out from the caller, whose file is
    not in this package, scikit-learn, joblib or skorch: the line of the user's
    code that called the public function, method or meta-estimator.

    Parameters
    ----------
    message : str
        The warning's text.
    category : Warning subclass, default=UserWarning
        Its category.

    Examples
    --------
    >>> import warnings
    >>> from sklearn_hcal.utils._warnings import warn_user
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_user("a message")
    >>> caught[0].message.args[0], caught[0].category.__name__
    ('a message', 'UserWarning')
    """
    prefixes = library_prefixes()
    if sys.version_info >= (3, 12):
        warnings.warn(message, category, skip_file_prefixes=prefixes)
    else:
        warnings.warn(message, category, stacklevel=_user_stacklevel(prefixes))
