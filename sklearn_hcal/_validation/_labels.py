"""Class labels and class names: one-hot histograms and column alignment.

Labels travel by name, never by position alone (developer guide §class-names): 1-D
labels are looked up among the classes of the columns, and two arrays with named
columns are matched by :func:`column_order`.
"""

from __future__ import annotations

import numpy as np

from ._core import as_array

__all__ = [
    "check_class_names",
    "check_positional_classes",
    "column_order",
    "frame_names",
    "labels_to_histograms",
]


def labels_to_histograms(
    y,
    *,
    n_classes: int | None = None,
    classes=None,
    name: str = "y",
    classes_param: str = "labels",
    row_offset: int = 0,
):
    """One-hot histogram from a 1-D vector of class labels.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, 1)
        Class labels, one annotation per item.
    n_classes : int, default=None
        Number of columns expected when ``classes`` is not given.
    classes : array-like, default=None
        The class of each column; labels are matched to columns by name.
    name : str, default="y"
        Argument name used in error messages.
    classes_param : str, default="labels"
        Name of the caller's parameter that passes ``classes`` (for the
        error message when the labels cannot be matched).
    row_offset : int, default=0
        Position of the first label among all items (a chunk's), added to
        the rows that messages name.

    Notes
    -----
    Labels travel by name, never by position alone. With ``classes`` each
    label is looked up among them (an unknown label raises). Without it the
    columns are the sorted distinct labels -- scikit-learn's ``classes_``
    convention, the column order of ``predict_proba`` -- which is unambiguous
    only when every class occurs: if ``n_classes`` is given and ``y`` holds
    another number of distinct labels, a ``ValueError`` asks for
    ``classes_param``. (Integer labels are not taken as column indices: a
    subset holding labels ``{1, 2}`` of classes ``{0, 1, 2}`` or ``{1, 2, 3}``
    cannot be told apart.)

    Returns
    -------
    Y : ndarray of shape (n_samples, n_classes)
        One-hot counts (float64).
    classes : ndarray of shape (n_classes,)
        The class of each column.
    """
    y = y.to_numpy() if hasattr(y, "to_numpy") else y
    y = as_array(y, name=name)
    # An (n, 1) column is a column of labels (developer guide §data-conventions), never
    # a one-class histogram; say so when its values do not fit the classes.
    column_note = ""
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
        column_note = (
            f" (an (n, 1) {name} is read as a column of labels, one annotation "
            "per item; a label histogram has one column per class, at least 2)"
        )
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D labels, got shape {y.shape}.")
    if y.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is required.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        row = int(np.flatnonzero(~np.isfinite(y))[0])
        raise ValueError(
            f"{name} contains NaN or infinity "
            f"(row {row + row_offset}: {float(y[row])!r})."
        )
    if classes is not None:
        classes = np.asarray(classes)
        idx = _lookup(classes, y, name=name, classes_param=classes_param)
    else:
        try:
            classes, idx = np.unique(y, return_inverse=True)
        except TypeError as exc:  # e.g. str and int labels: no sorted order
            kinds = sorted({type(v).__name__ for v in y.tolist()})
            raise ValueError(
                f"{name} mixes labels of types {kinds} that cannot be sorted into "
                f"columns; pass {classes_param}= (the class of each column)."
            ) from exc
        if n_classes is not None and len(classes) != n_classes:
            shown = classes[:10].tolist()
            plural = "" if len(classes) == 1 else "s"
            raise ValueError(
                f"{name} holds {len(classes)} distinct label{plural} {shown} but there "
                f"are {n_classes} classes, so the labels cannot be matched to "
                f"the columns unambiguously; pass {classes_param}= (the class of "
                f"each column) or a histogram{column_note}."
            )
    Y = np.zeros((y.shape[0], len(classes)), dtype=np.float64)
    Y[np.arange(y.shape[0]), idx] = 1.0
    return Y, classes


def _lookup(classes: np.ndarray, values: np.ndarray, *, name, classes_param):
    """Positions of ``values`` in ``classes`` (each must occur)."""
    try:
        sorter = np.argsort(classes, kind="stable")
        pos = np.searchsorted(classes, values, sorter=sorter)
    except TypeError:  # mixed types that do not sort: a Python lookup
        table = {c: i for i, c in enumerate(classes.tolist())}
        idx = np.array([table.get(v, -1) for v in values.tolist()], dtype=np.intp)
        bad = idx < 0
    else:
        pos = np.clip(pos, 0, len(classes) - 1)
        idx = sorter[pos]
        bad = classes[idx] != values
    if np.any(bad):
        unknown = list(dict.fromkeys(values[bad].tolist()))[:5]
        raise ValueError(
            f"{name} contains labels {unknown} that are not among the classes "
            f"{classes.tolist()} ({classes_param})."
        )
    return idx


def column_order(classes, target, *, name: str, target_name: str):
    """Positions that put columns named ``classes`` in the order ``target``.

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
        Names of the columns of ``name`` (e.g. a DataFrame's columns).
    target : array-like of shape (n_classes,)
        The reference order (e.g. an estimator's ``classes_``).
    name, target_name : str
        Used in the error message.

    Returns
    -------
    order : ndarray of int or None
        ``columns[:, order]`` are in ``target`` order; None when the names
        are already in that order.

    Raises
    ------
    ValueError
        When the two sets of names differ (nothing is matched by position).
    """
    classes = np.asarray(classes)
    target = np.asarray(target)
    if classes.shape == target.shape and np.array_equal(
        classes.astype(object), target.astype(object)
    ):
        return None
    as_str = [str(c) for c in classes.tolist()]
    target_str = [str(c) for c in target.tolist()]
    if (
        len(set(as_str)) != len(as_str)
        or sorted(as_str) != sorted(target_str)
        or len(target_str) != len(set(target_str))
    ):
        raise ValueError(
            f"The classes of {name} {classes.tolist()} do not match the classes "
            f"of {target_name} {target.tolist()}; the columns are matched by "
            "name, so the two must hold the same class names."
        )
    position = {c: i for i, c in enumerate(as_str)}
    return np.array([position[c] for c in target_str], dtype=np.intp)


def check_class_names(
    names, *, param: str = "labels", n_columns: int | None = None, of: str = "y_prob"
) -> np.ndarray:
    """``names`` as a 1-D array of distinct class names, one per column of ``of``.

    The one check of a list of class names given by the caller (a metric's
    ``labels=``, an estimator's ``classes=``). Names are distinct as text,
    as :func:`column_order` matches them.

    Parameters
    ----------
    names : array-like of shape (n_classes,)
        The class of each column.
    param : str, default="labels"
        The caller's parameter name, for error messages.
    n_columns : int, default=None
        Number of columns that ``names`` must name, if known.
    of : str, default="y_prob"
        The argument whose columns ``names`` name, for error messages.
    """
    names = np.asarray(names)
    if names.ndim != 1:
        raise ValueError(
            f"{param} must be 1-D (the class of each column of {of}), got shape "
            f"{names.shape}."
        )
    values = names.tolist()
    # a missing name (NaN, None) names no class and matches no column by name
    missing = [i for i, v in enumerate(values) if v is None or v != v]
    if missing:
        raise ValueError(
            f"{param} must name every class; entry {missing[0]} is "
            f"{values[missing[0]]!r} (got {values})."
        )
    if n_columns is not None and len(values) != n_columns:
        binary = " (a 1-D array is P(second class) of 2 classes)"
        raise ValueError(
            f"{param} has {len(values)} entries {values} but {of} has "
            f"{n_columns} columns{binary if n_columns == 2 else ''}; {param}= gives "
            f"the class of each column of {of}."
        )
    seen: set = set()
    for value in values:
        if str(value) in seen:
            raise ValueError(
                f"{param} must name each class once; {value!r} occurs more than "
                f"once ({param} must be distinct class names, got {values})."
            )
        seen.add(str(value))
    return names


def frame_names(X, *, name: str = "the DataFrame"):
    """Class names carried by ``X``: a DataFrame's columns, else None.

    The default ``RangeIndex`` ``0..K-1`` of a DataFrame built from an array
    without column names carries no names (it is positional, like the array).
    Repeated names raise a ValueError naming ``name``: columns are matched by
    name, and two columns of one name could each be that class.
    """
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "to_numpy"):
        return None
    names = np.asarray(columns)
    if type(columns).__name__ == "RangeIndex" and np.array_equal(
        names, np.arange(len(names))
    ):
        return None
    return check_class_names(names, param=f"the columns of {name}", of=name)


def sorted_names(names) -> list | None:
    """``names`` in scikit-learn's ``classes_`` order, or None if unsortable.

    ``classes_`` is ``np.unique(y)``: the names sorted by value (numbers
    numerically, text by code point). Names of mixed types (``1`` and
    ``"a"``) have no such order.
    """
    values = np.asarray(names).tolist()
    try:
        return sorted(values)
    except TypeError:
        return None


def check_positional_classes(classes, *, name: str, y_true_name: str) -> None:
    """Raise unless unnamed columns of ``name`` may follow ``classes`` by position.

    ``classes`` name the human labels' columns (a DataFrame's columns) and
    ``name`` is an array without class names, typically
    ``model.predict_proba(X)``, whose columns follow the model's
    ``classes_`` -- the sorted class names. Its columns are therefore the
    human labels' classes only when those are in sorted order; otherwise
    reading them by position would silently pair each class with another
    class's probability, so the two orders are shown and ``labels=`` is
    asked for.
    """
    shown = np.asarray(classes).tolist()
    in_order = sorted_names(classes)
    if in_order == shown:
        return
    why = (
        f"in sorted order {in_order}"
        if in_order is not None
        else "in a sorted order (they mix types that do not sort)"
    )
    raise ValueError(
        f"{y_true_name} names its classes {shown} (its columns) but {name} is an "
        f"array without class names, and its columns cannot be matched to them: "
        f"a classifier's predict_proba follows its classes_, {why}, not "
        f"{y_true_name}'s column order. Pass labels= (the class of each column "
        f"of {name}, e.g. labels=clf.classes_), or {name} as a DataFrame whose "
        "columns name the classes."
    )
