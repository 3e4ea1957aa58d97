"""The values of files read by ``hcal evaluate``: checked by the library.

The row checks are those of :mod:`sklearn_hcal._validation` (the metrics'
own), called with the file's terms for rows and columns (``line 4 (uid
'x')``, ``column 'dog'``) so that an error names the file, the line and the
value. This module adds only what belongs to the command line:

* advice on the options that would read the file correctly -- ``--logits``
  only when the values look like logits (a negative entry, or entries above
  1), ``--renormalize`` when every entry is a probability but rows do not
  sum to 1 (never ``--logits`` then: a softmax of probabilities is wrong);
* ``--renormalize``: rows of non-negative values further from 1 than
  :func:`~sklearn_hcal._validation.row_sum_tolerance` are divided by their
  sums, with a warning that says how many (rows within the tolerance -- e.g.
  probabilities rounded to 3 decimals -- are accepted and renormalised by
  the library without a word, developer guide §tolerances);
* logits: the softmax of :mod:`sklearn_hcal.calibration._scores`;
* a name for every class column of a CSV file.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from .._validation import (
    check_finite,
    check_logits,
    row_sum_tolerance,
    scan_histograms,
    scan_probabilities,
)
from ._errors import InputError

__all__ = ["check_histogram_values", "check_prediction_values"]


#: pandas' name for a CSV column whose header cell is empty.
_UNNAMED = re.compile(r"Unnamed: \d+")


def _check_class_names(table) -> None:
    """Raise InputError for a class column without a name in a CSV header.

    pandas names an empty header cell ``Unnamed: <position>``. That is no
    class name: usually the index that ``DataFrame.to_csv`` writes, which
    would otherwise count as a class holding the row numbers.
    """
    unnamed = [c for c in table.classes or () if _UNNAMED.fullmatch(str(c))]
    if unnamed:
        raise InputError(
            f"{table.path}: a class column has no name in the header ({unnamed[0]!r} "
            "to pandas); every column but the id column needs its class name. An "
            "unnamed first column is usually the index written by "
            "DataFrame.to_csv: write the file with index=False, or name the "
            "column (and pass --id-column NAME if it holds item ids)."
        )


def _renormalise(table, label: str, *, what: str) -> str | None:
    """Divide the rows of ``table.values`` that are non-negative, finite, with
    a positive sum further than the tolerance from 1, by their sums (in place);
    return the warning to give once the file has passed its checks (None when
    no row changed). Other bad rows are left for the library's checks."""
    V = table.values
    with np.errstate(invalid="ignore"):
        sums = V.sum(axis=1)
        ok = np.isfinite(sums) & (V.min(axis=1) >= 0) & (sums > 0)
        off = ok & (np.abs(sums - 1.0) > row_sum_tolerance(V.shape[1], V.dtype))
    if not off.any():
        return None
    first = int(np.flatnonzero(off)[0])
    V[off] /= sums[off, None]
    count = int(off.sum())
    example = f"{table.where(first)} summed to {sums[first]:.6g}"
    rows = (
        f"one {what} row by its sum"
        if count == 1
        else f"{count} {what} rows by their sums"
    )
    if count > 1:
        example = "first: " + example
    return f"{label}: --renormalize divided {rows} ({example})."


def _warn(message: str | None) -> None:
    # After the checks: a file that fails gets its one error line only.
    if message is not None:
        warnings.warn(message, UserWarning, stacklevel=3)


def check_histogram_values(table, *, renormalize: bool = False) -> None:
    """Validate label histograms (counts or human probabilities) in place.

    The checks of :func:`~sklearn_hcal._validation.check_label_histograms`
    (``allow_probabilities=True``); ``renormalize`` first divides the rows of
    a file of human distributions (a file with non-integer entries) by their
    sums. Raises :class:`InputError`.
    """
    _check_class_names(table)
    V = table.values
    if V.shape[1] < 2:
        raise InputError(
            f"{table.path}: label histograms need at least 2 classes (columns), "
            f"got {V.shape[1]}."
        )
    with np.errstate(invalid="ignore"):
        fractional = bool(np.any(np.isfinite(V) & (np.floor(V) != V)))
    note = None
    if renormalize and fractional:
        note = _renormalise(table, table.path, what="label-histogram")
    try:
        scan_histograms(
            table.values,
            name=table.path,
            allow_probabilities=True,
            where=table.where,
            column_names=table.column_names,
        )
    except ValueError as exc:
        hint = ""
        # --renormalize is advised only where it would read the file: human
        # probabilities (entries in [0, 1]) whose rows all have some mass.
        finite = bool(np.all(np.isfinite(V)))
        probabilities = finite and 0 <= V.min() and V.max() <= 1
        if not renormalize and fractional and probabilities and V.max(1).min() > 0:
            hint = (
                " If the rows are human label distributions that lost precision, "
                "--renormalize divides each row by its sum."
            )
        raise InputError(f"{exc}{hint}") from None
    _warn(note)


def _prediction_hint(V, n_classes, renormalize: bool) -> str:
    """Advice after a failed value check (empty when it cannot help)."""
    if not np.all(np.isfinite(V)):
        return ""
    if V.ndim == 2 and n_classes is not None and V.shape[1] != n_classes:
        return ""
    if V.ndim == 1 and n_classes not in (None, 2):
        return ""
    logits = bool(V.min() < 0 or V.max() > 1)
    scale = V.ndim == 2 and not renormalize and V.min() >= 0 and V.max(1).min() > 0
    if logits and scale:
        return (
            " If these are logits (unnormalised scores), pass --logits; if they are "
            "non-negative weights, --renormalize divides each row by its sum."
        )
    if logits:
        return " If these are logits (unnormalised scores), pass --logits."
    if scale:
        return (
            " If the rows are probabilities that lost precision, --renormalize "
            "divides each row by its sum."
        )
    return ""


def _probabilities_as_logits(V, label: str) -> str | None:
    """The warning for ``--logits`` on a file whose rows are all probabilities.

    ``--logits`` applies to every ``--pred``, so a probability file scored
    beside a logit file is softmaxed too, and the softmax of probabilities is
    another distribution (a silently wrong score). Logits that are all in
    [0, 1] with rows summing to 1 are not seen in practice.
    """
    if V.ndim != 2 or V.min() < 0 or V.max() > 1:
        return None
    if np.any(np.abs(V.sum(axis=1) - 1.0) > row_sum_tolerance(V.shape[1])):
        return None
    return (
        f"{label}: --logits, but every row holds probabilities (in [0, 1], "
        "summing to 1); their softmax is another distribution. --logits applies "
        "to every --pred: evaluate probability files without it."
    )


def check_prediction_values(
    table,
    label: str,
    *,
    logits: bool = False,
    renormalize: bool = False,
    n_classes: int | None = None,
    n_classes_from: str | None = None,
) -> np.ndarray:
    """Validated ``(n_items, n_classes)`` probabilities of a prediction table.

    ``table.values`` holds probabilities (a 1-D array: P(second class)) or,
    with ``logits``, scores (a 1-D array: the logit of the second class),
    whose softmax is returned. The checks are the library's
    (:func:`~sklearn_hcal._validation.check_probabilities`, or finiteness
    and the class count for logits); ``label`` names the file (and model).
    Raises :class:`InputError`.
    """
    from ..calibration._shared import softmax

    _check_class_names(table)
    V = table.values
    where, columns = table.where, table.column_names
    if V.ndim == 2 and V.shape[1] == 1 and table.classes is not None:
        raise InputError(
            f"{label} has a single class column ({table.classes[0]!r}); give one "
            "column per class (for two classes, both columns)."
        )
    if logits:
        try:
            check_finite(V, name=label, where=where, column_names=columns)
            if V.ndim == 1:
                if n_classes not in (None, 2):
                    raise ValueError(
                        f"{label} is 1-D, which means the logit of the second class "
                        f"of a binary problem, but {n_classes_from or 'the histograms'}"
                        f" has {n_classes} classes; pass an (n_items, {n_classes}) "
                        "array."
                    )
                V = np.column_stack([np.zeros_like(V), V])
            check_logits(V, name=label, n_classes=n_classes)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        _warn(_probabilities_as_logits(table.values, label))
        return softmax(V)
    note = None
    if renormalize and V.ndim == 2:
        note = _renormalise(table, label, what="prediction")
        V = table.values
    try:
        scan_probabilities(
            V,
            name=label,
            n_classes=n_classes,
            n_classes_from=n_classes_from,
            where=where,
            column_names=columns,
        )
    except ValueError as exc:
        hint = _prediction_hint(V, n_classes, renormalize)
        raise InputError(f"{exc}{hint}") from None
    _warn(note)
    if V.ndim == 1:
        V = np.column_stack([1.0 - V, V])
    return V
