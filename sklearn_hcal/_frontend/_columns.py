"""Which class each column of a classifier's output is (developer guide
§class-names).

The scores (or probabilities) an estimator of the front end reads have one
column per class. Their classes are known by name when a wrapped classifier
has ``classes_`` (:func:`estimator_classes`) or, with ``estimator=None``,
when ``X`` is a DataFrame whose columns name the target's classes
(:func:`input_column_classes`); an unnamed score array beside a histogram
DataFrame in another order than the sorted one is ambiguous and raises
(:func:`check_positional_scores`).
"""

from __future__ import annotations

import numpy as np

from .._validation import frame_names, sorted_names

__all__ = ["check_positional_scores", "estimator_classes", "input_column_classes"]


def estimator_classes(estimator, n_classes: int):
    """``classes_`` of a fitted classifier when it names the score columns."""
    try:
        classes = getattr(estimator, "classes_", None)
    except Exception:  # properties of wrappers that raise when unfitted
        return None
    if classes is None or len(classes) != n_classes:
        return None
    return np.asarray(classes)


def _prefix_cuts(names):
    """0, then the length of every ``"<prefix>_"`` that all ``names`` share."""
    yield 0
    for i, char in enumerate(names[0]):
        if char == "_" and all(n.startswith(names[0][: i + 1]) for n in names):
            yield i + 1


def input_column_classes(x_names, y, is_hist: bool, classes=None):
    """The class of each column of ``estimator=None`` input, or None.

    ``X``'s column names name the classes when they are the names of ``y``'s
    classes (the ``classes`` parameter, else a histogram's column names or
    the labels), as they are or behind one common ``"<prefix>_"`` -- the
    ``logit_<class>`` / ``alpha_<class>`` columns of a calibrator's
    ``transform`` under ``set_output(transform="pandas")``, so that
    calibrators chained in a Pipeline stay aligned. Names that match only in
    part raise (nothing is matched by position when names disagree); names
    that share nothing with the classes (``x0, x1, ...``) leave the columns
    positional. Only string labels are matched (``feature_names_in_`` is
    always text); ``classes`` are matched by their text.
    """
    if classes is not None:
        # they name an array histogram's columns (or the labels' classes), so
        # X's names must be read even when y itself carries none
        targets = np.asarray(classes)
    elif is_hist:
        targets = frame_names(y)
    else:
        values = np.asarray(y)
        targets = None
        if values.dtype.kind in "OU" and all(isinstance(v, str) for v in values):
            targets = np.unique(values)
    if targets is None:
        return None
    by_text = {str(t): t for t in np.asarray(targets).tolist()}
    x_text = [str(n) for n in x_names]
    partial = None
    for cut in _prefix_cuts(x_text):
        names = [x[cut:] for x in x_text]
        if len(set(names)) != len(names):
            continue
        if set(by_text) <= set(names) and (not is_hist or len(names) == len(by_text)):
            return np.asarray([by_text.get(n, n) for n in names])
        if partial is None and set(by_text) & set(names):
            partial = names
    if partial is not None:
        what = "columns of y" if is_hist else "labels of y"
        if classes is not None:
            what = "classes"
        raise ValueError(
            f"With estimator=None the columns of X name the classes, but X's "
            f"columns {x_text[:10]} (read as {partial[:10]}) do not match the "
            f"{what} {sorted(by_text)[:10]}. Rename X's columns to the "
            "class names, or pass X as an array to match them by position."
        )
    return None


def check_positional_scores(y, owner: str) -> None:
    """Raise unless unnamed score columns may follow ``y``'s names by position.

    With ``estimator=None`` and ``X`` an array (no class names), ``X``'s
    columns are a classifier's scores, which follow its ``classes_``: the
    sorted class names. A histogram DataFrame whose columns are in another
    order would pair each class with another class's score without a word
    (developer guide §class-names), so the two orders are shown and
    ``classes=`` (or named columns of ``X``) is asked for.
    """
    try:
        names = frame_names(y)
    except ValueError:
        return  # repeated names: the targets' own check names the argument
    if names is None:
        return
    shown = np.asarray(names).tolist()
    in_order = sorted_names(names)
    if in_order == shown:
        return
    raise ValueError(
        f"{owner}(estimator=None): y names its classes {shown} (its columns) "
        "but X is an array without class names, so which column of X scores "
        f"which class is unknown: a classifier's scores follow its classes_ "
        f"(sorted: {in_order}), not y's column order. Pass classes= (the class "
        "of each column of X, e.g. classes=clf.classes_), or X as a DataFrame "
        "whose columns name the classes."
    )
