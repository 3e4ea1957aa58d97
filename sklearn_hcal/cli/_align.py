"""Matching predictions to label histograms by item id and class name.

The second half of reading ``hcal evaluate``'s files (:mod:`._files` reads
them): items by uid when both files have ids, classes by name when both
files name them, else by position -- with a warning where the histograms
could have been matched by id but the predictions cannot.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._errors import InputError
from ._files import LabeledArray

__all__ = ["align_predictions", "with_labels"]

#: Long class names used by ChaosNLI's ``predicted_label`` and ``old_labels``.
_CLASS_ALIASES = {"entailment": "e", "neutral": "n", "contradiction": "c"}


def _normalise_class(name) -> str:
    s = str(name).strip()
    return _CLASS_ALIASES.get(s.lower(), s)


def _sorted_text(names) -> list[str]:
    """Names in the order a classifier's ``classes_`` would hold them.

    Names read from a file are text; a classifier trained on their values
    sorts numbers numerically (``1, 2, 10``), text by code point.
    """
    try:
        return sorted(names, key=float)
    except ValueError:
        return sorted(names)


def _check_positional(hist: LabeledArray, label: str) -> None:
    """Raise unless unnamed prediction columns may follow ``hist``'s by position.

    A prediction file without class names (``.npy``) holds a classifier's
    ``predict_proba`` columns, in its ``classes_`` order: the sorted class
    names. They follow the histograms' columns only when those are sorted
    (as text or as numbers); otherwise which column is which class is a
    guess, so the two orders are shown and a way to name them is asked for,
    as the metric functions do.
    """
    names = [str(c) for c in hist.classes]
    if names in (sorted(names), _sorted_text(names)):
        return
    raise InputError(
        f"{label}: the prediction columns have no class names, and those of "
        f"{hist.path}, {names}, are not in sorted order "
        f"{_sorted_text(names)} -- the column order of a classifier's "
        "predict_proba -- so which column is which class is ambiguous; name "
        f"the columns with --labels (e.g. --labels {','.join(names)} if they "
        f"follow {hist.path}), or use a .csv prediction file whose header "
        "names the classes."
    )


def with_labels(pred: LabeledArray, labels, *, name: str = "") -> LabeledArray:
    """``pred`` with ``labels`` (``--labels``) naming columns it does not name.

    A file that names its classes (a CSV header, ChaosNLI's order) keeps
    them; ``labels`` must then be the same names.
    """
    if labels is None:
        return pred
    label = f"{pred.path} ({name})" if name else pred.path
    n_columns = 2 if pred.values.ndim == 1 else pred.values.shape[1]
    if len(labels) != n_columns:
        raise InputError(
            f"--labels names {len(labels)} classes {labels} but {label} has "
            f"{n_columns} columns; --labels gives the class of each column."
        )
    if pred.classes is None:
        pred.classes = list(labels)
    elif [_normalise_class(c) for c in pred.classes] != [
        _normalise_class(c) for c in labels
    ]:
        raise InputError(
            f"--labels {','.join(labels)} contradicts the class names of "
            f"{label}, {pred.classes}; --labels names the columns of prediction "
            "files without class names."
        )
    return pred


def align_predictions(
    hist: LabeledArray, pred: LabeledArray, *, name: str = "predictions"
) -> np.ndarray:
    """Predictions reordered to the items and classes of the histograms.

    Items are matched by uid when both files have ids, else by position (with
    a warning when only the histograms have ids).
    Classes are matched by name when both files name them (ChaosNLI's long
    names ``entailment``/``neutral``/``contradiction`` equal ``e``/``n``/``c``),
    else by position -- which, when only the histograms name them, requires
    their names in sorted order (the order of ``predict_proba``'s columns).

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
        of rows, different class names, or unnamed prediction columns while
        the histograms' class names are not in sorted order.
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
    elif hist.classes is not None:
        _check_positional(hist, label)
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
