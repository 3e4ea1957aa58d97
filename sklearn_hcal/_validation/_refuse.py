"""Naming the first wrong entry of an array in a ValueError.

The checks compute where the values are wrong as a vectorised mask; these
turn the mask into the error that names the first offender's row (and
column) and value (developer guide §rows).
"""

from __future__ import annotations

import numpy as np

__all__ = ["check_binary", "refuse_first"]


def refuse_first(mask: np.ndarray, message) -> None:
    """Raise ``ValueError(message(*index))`` at the first True entry of ``mask``.

    The one way a check names the offending entry (developer guide §rows):
    the checks compute their mask vectorised, and this finds the first
    offender in row-major order and hands its index -- ``row`` for a 1-D
    mask, ``row, column`` for a 2-D one -- to ``message``.

    Parameters
    ----------
    mask : ndarray of bool
        Where the values are wrong.
    message : callable
        ``message(*index) -> str``: the error naming the entry.

    Raises
    ------
    ValueError
        ``message`` of the first True entry, if any.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal._validation import refuse_first
    >>> x = np.array([0.5, -1.0, -2.0])
    >>> refuse_first(x < 0, lambda row: f"x at row {row} is {x[row]}, not >= 0")
    Traceback (most recent call last):
    ...
    ValueError: x at row 1 is -1.0, not >= 0
    """
    bad = np.flatnonzero(mask)
    if bad.size:
        index = np.unravel_index(int(bad[0]), np.shape(mask))
        raise ValueError(message(*(int(i) for i in index)))


def check_binary(values: np.ndarray, where, raw=None) -> None:
    """Refuse a 2-D array with an entry that is not 0 or 1.

    The one check of 0/1 indicator matrices (conformal sets, multi-label
    targets and held-out labels): the error names the first such entry
    (in row-major order) through ``where`` and its value.

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_columns)
        The numbers checked.
    where : callable
        ``where(row, column) -> str``: the array and the cell, the start
        of the message ``"<where>: <value> is not 0 or 1."``.
    raw : ndarray of shape (n_rows, n_columns), default=None
        The user's values, quoted in the message (default: ``values``).

    Raises
    ------
    ValueError
        At the first entry that is not 0 or 1.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal._validation import check_binary
    >>> check_binary(np.array([[0, 1], [1, 0]]), "y at row {}, column {}".format)
    >>> check_binary(np.array([[0, 1], [1, 2]]), "y at row {}, column {}".format)
    Traceback (most recent call last):
    ...
    ValueError: y at row 1, column 1: 2 is not 0 or 1.
    """
    quoted = values if raw is None else raw

    def message(row, col):
        value = quoted[row, col]
        value = value.item() if isinstance(value, np.generic) else value
        return f"{where(row, col)}: {value!r} is not 0 or 1."

    refuse_first(~np.isin(values, (0, 1)), message)
