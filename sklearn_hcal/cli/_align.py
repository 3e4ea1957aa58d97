"""Matching predictions to label histograms by item id and class name.

The second half of reading ``hcal evaluate``'s files (:mod:`._files` reads
them): items by uid when both files have ids, classes by name when both
files name them, else by position -- with a warning where the histograms
could have been matched by id but the predictions cannot.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._files import LabeledArray
from ._values import InputError

__all__ = ["align_predictions"]

#: Long class names used by ChaosNLI's ``predicted_label`` and ``old_labels``.
_CLASS_ALIASES = {"entailment": "e", "neutral": "n", "contradiction": "c"}


def _normalise_class(name) -> str:
    s = str(name).strip()
    return _CLASS_ALIASES.get(s.lower(), s)


def align_predictions(
    hist: LabeledArray, pred: LabeledArray, *, name: str = "predictions"
) -> np.ndarray:
    """Predictions reordered to the items and classes of the histograms.

    Items are matched by uid when both files have ids, else by position (with
    a warning when only the histograms have ids).
    Classes are matched by name when both files name them (ChaosNLI's long
    names ``entailment``/``neutral``/``contradiction`` equal ``e``/``n``/``c``),
    else by position.

    Parameters
    ----------
    hist : LabeledArray
        From :func:`read_histograms`.
    pred : LabeledArray
        One model of :func:`read_predictions`, read with ``n_classes`` the
        number of classes of ``hist`` (which checked the class count).
    name : str, default="predictions"
        The prediction's name, used in messages.

    Returns
    -------
    P : ndarray of shape (n_items, n_classes)
        Row ``i`` is the prediction for item ``i`` of ``hist``.

    Raises
    ------
    InputError
        On a uid present in one file only, a duplicate uid, a different number
        of rows, or different class names.
    """
    n_items = hist.values.shape[0]
    P = pred.values
    label = f"{pred.path} ({name})" if name else pred.path
    if hist.classes is not None and pred.classes is not None:
        h = [_normalise_class(c) for c in hist.classes]
        q = [_normalise_class(c) for c in pred.classes]
        if h != q:
            if sorted(h) != sorted(q):
                raise InputError(
                    f"{label}: the class names {pred.classes} differ from those of "
                    f"{hist.path}, {hist.classes}."
                )
            P = P[:, [q.index(c) for c in h]]
    if hist.ids is not None and pred.ids is not None:
        index = {uid: i for i, uid in enumerate(pred.ids)}
        known = set(hist.ids)
        unknown = [uid for uid in pred.ids if uid not in known]
        if unknown:
            raise InputError(
                f"{label}: unknown uid {str(unknown[0])!r} (not in {hist.path}); "
                f"{len(unknown)} such uid(s)."
            )
        missing = [uid for uid in hist.ids if uid not in index]
        if missing:
            raise InputError(
                f"{label}: no prediction for uid {str(missing[0])!r} of {hist.path}; "
                f"{len(missing)} item(s) missing."
            )
        return P[[index[uid] for uid in hist.ids]]
    if hist.ids is None and pred.ids is not None:
        raise InputError(
            f"{label}: the predictions are keyed by uid but {hist.path} has no "
            "item ids, so they cannot be matched; give the histograms an id "
            "column (--id-column) or use a ChaosNLI .jsonl file."
        )
    if P.shape[0] != n_items:
        raise InputError(
            f"{label}: {P.shape[0]} rows of predictions but {hist.path} has "
            f"{n_items} items (rows are matched by position)."
        )
    if hist.ids is not None:
        # the histograms could be matched by id, the predictions cannot: a
        # fallback, which must not be silent (shuffled rows score wrongly)
        warnings.warn(
            f"{label} has no item ids while {hist.path} has: its rows are "
            f"matched to {hist.path}'s items by position; give the predictions "
            "an id column (--id-column) to match them by id.",
            UserWarning,
            stacklevel=2,
        )
    return P
