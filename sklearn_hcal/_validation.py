"""Input validation shared by metrics, scorers and estimators.

Conventions (SPEC §1):

* a *label histogram* is an ``(n_samples, n_classes)`` array of non-negative
  integer counts, one row per item, with at least one annotation per row;
* a 1-D array, or an ``(n, 1)`` column, is a vector of class labels, i.e. one
  annotation per item (a one-hot histogram);
* a *probability matrix* is ``(n_samples, n_classes)``, finite, non-negative,
  rows summing to one; for two classes a 1-D array is the probability of the
  second class (what scikit-learn's scorers pass).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ROW_SUM_TOL",
    "check_label_histograms",
    "check_probabilities",
    "check_logits",
    "check_histograms_and_probabilities",
    "labels_to_histograms",
]

#: Tolerance on ``|row sum - 1|`` for probability rows.
ROW_SUM_TOL = 1e-6


def _as_2d_float(
    X, *, name: str, dtype=(np.float64, np.float32), allow_1d: bool = False
):
    """Array conversion that keeps float32/float64 and rejects object/str data."""
    classes = None
    if hasattr(X, "columns") and hasattr(X, "to_numpy"):  # pandas DataFrame
        classes = np.asarray(X.columns)
        X = X.to_numpy()
    elif hasattr(X, "to_numpy"):  # pandas Series
        X = X.to_numpy()
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be converted to an array: {exc}") from exc
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} must be numeric, got an array of dtype {arr.dtype}."
            ) from exc
    if arr.dtype.kind == "f" and arr.dtype in dtype:
        pass
    else:
        arr = arr.astype(np.float64)
    if arr.ndim == 1 and not allow_1d:
        raise ValueError(f"{name} must be 2-D, got a 1-D array of shape {arr.shape}.")
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D, got {arr.ndim} dimensions.")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is required.")
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"{name} has no columns: at least one class is required.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return arr, classes


def labels_to_histograms(y, *, n_classes: int | None = None, classes=None, name="y"):
    """One-hot histogram from a 1-D vector of class labels.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, 1)
        Class labels, one annotation per item.
    n_classes : int, default=None
        Number of columns. Integer labels in ``[0, n_classes)`` are used as
        column indices directly, so a class that never occurs keeps its column.
    classes : array-like, default=None
        The class of each column. Takes precedence over ``n_classes``.
    name : str, default="y"
        Argument name used in error messages.

    Notes
    -----
    Without ``classes``, labels that are not integers in ``[0, n_classes)``
    are mapped to columns in sorted order, which is scikit-learn's
    ``classes_`` convention (the column order of ``predict_proba``). Pass
    ``classes`` (or a histogram) when the columns follow another order, e.g.
    ChaosNLI's ``["e", "n", "c"]``.

    Returns
    -------
    Y : ndarray of shape (n_samples, n_classes)
        One-hot counts (float64).
    classes : ndarray of shape (n_classes,)
        The class of each column.
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D labels, got shape {y.shape}.")
    if y.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is required.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if classes is not None:
        classes = np.asarray(classes)
        sorter = np.argsort(classes, kind="stable")
        pos = np.searchsorted(classes, y, sorter=sorter)
        pos = np.clip(pos, 0, len(classes) - 1)
        idx = sorter[pos]
        bad = classes[idx] != y
        if np.any(bad):
            unknown = np.unique(y[bad])[:5]
            raise ValueError(
                f"{name} contains labels {unknown.tolist()} that are not among "
                f"the classes {classes.tolist()}."
            )
    elif (
        n_classes is not None
        and y.dtype.kind in "biuf"
        and np.all(np.mod(y, 1) == 0)
        and y.min() >= 0
        and y.max() < n_classes
    ):
        idx = y.astype(np.intp)
        classes = np.arange(n_classes)
    else:
        classes, idx = np.unique(y, return_inverse=True)
        if n_classes is not None and len(classes) != n_classes:
            raise ValueError(
                f"{name} has {len(classes)} distinct labels but {n_classes} classes "
                "were expected; pass integer labels in [0, n_classes) or a "
                "histogram."
            )
    Y = np.zeros((y.shape[0], len(classes)), dtype=np.float64)
    Y[np.arange(y.shape[0]), idx] = 1.0
    return Y, classes


def check_label_histograms(
    Y,
    *,
    name: str = "y_true",
    allow_probabilities: bool = False,
    n_classes: int | None = None,
    classes=None,
    dtype=(np.float64, np.float32),
    return_classes: bool = False,
):
    """Validate a label histogram (or, optionally, a human distribution).

    Parameters
    ----------
    Y : array-like or DataFrame of shape (n_samples, n_classes) or (n_samples,)
        Non-negative integer counts. A DataFrame's columns are the classes.
        A 1-D array or an ``(n, 1)`` column is a vector of labels.
    name : str, default="y_true"
        Argument name used in error messages.
    allow_probabilities : bool, default=False
        Also accept rows of probabilities that sum to one (for metrics that
        only need the human distribution). Counts are always accepted.
    n_classes : int, default=None
        Expected number of classes; also used to one-hot 1-D labels.
    classes : array-like, default=None
        Classes of the columns for 1-D labels.
    dtype : tuple of dtypes, default=(float64, float32)
        Floating dtypes kept as they are; anything else becomes float64.
    return_classes : bool, default=False
        Also return the classes (DataFrame columns, the label values, or
        ``arange(n_classes)``).

    Returns
    -------
    Y : ndarray of shape (n_samples, n_classes)
        Counts (or probabilities) as floats.
    classes : ndarray of shape (n_classes,)
        Only when ``return_classes=True``.
    """
    raw = Y.to_numpy() if hasattr(Y, "to_numpy") else Y
    shape = np.shape(raw)
    if len(shape) == 1 or (len(shape) == 2 and shape[1] == 1):
        arr, cls = labels_to_histograms(
            raw, n_classes=n_classes, classes=classes, name=name
        )
        return (arr, cls) if return_classes else arr
    arr, frame_classes = _as_2d_float(Y, name=name, dtype=dtype)
    if n_classes is not None and arr.shape[1] != n_classes:
        raise ValueError(
            f"{name} has {arr.shape[1]} classes (columns) but {n_classes} were "
            "expected."
        )
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative; found negative entries.")
    is_integer = np.all(np.mod(arr, 1) == 0)
    row_sums = arr.sum(axis=1)
    if is_integer:
        if np.any(row_sums == 0):
            first = int(np.flatnonzero(row_sums == 0)[0])
            raise ValueError(
                f"{name} has rows with zero annotations (first at row {first}); "
                "every item needs at least one label."
            )
    elif allow_probabilities:
        bad = np.abs(row_sums - 1.0) > ROW_SUM_TOL
        if np.any(bad):
            first = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name} must hold integer label counts or probability rows "
                f"summing to 1; row {first} sums to {row_sums[first]:.6g}."
            )
    else:
        raise ValueError(
            f"{name} must hold non-negative integer label counts (a label "
            "histogram); found fractional values. This estimator needs the number "
            "of annotations per item."
        )
    if return_classes:
        cls = frame_classes if frame_classes is not None else np.arange(arr.shape[1])
        return arr, cls
    return arr


def check_probabilities(
    P,
    *,
    name: str = "y_prob",
    n_classes: int | None = None,
    dtype=(np.float64, np.float32),
):
    """Validate a probability matrix; a 1-D array is P(second class).

    Parameters
    ----------
    P : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted class probabilities.
    name : str, default="y_prob"
        Argument name used in error messages.
    n_classes : int, default=None
        Expected number of classes.
    dtype : tuple of dtypes, default=(float64, float32)
        Floating dtypes kept as they are.

    Returns
    -------
    P : ndarray of shape (n_samples, n_classes)
    """
    arr, _ = _as_2d_float(P, name=name, dtype=dtype, allow_1d=True)
    if arr.ndim == 1:
        if n_classes is not None and n_classes != 2:
            raise ValueError(
                f"{name} is 1-D, which means P(second class) of a binary problem, "
                f"but {n_classes} classes were expected; pass an "
                f"(n_samples, {n_classes}) array."
            )
        if np.any((arr < 0) | (arr > 1)):
            raise ValueError(f"{name} is 1-D, so its values must lie in [0, 1].")
        arr = np.column_stack([1 - arr, arr])
    if n_classes is not None and arr.shape[1] != n_classes:
        raise ValueError(
            f"{name} has {arr.shape[1]} classes (columns) but {n_classes} were "
            "expected (class-count mismatch)."
        )
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative probabilities.")
    row_sums = arr.sum(axis=1, dtype=np.float64)
    tol = ROW_SUM_TOL if arr.dtype == np.float64 else max(ROW_SUM_TOL, 1e-5)
    bad = np.abs(row_sums - 1.0) > tol
    if np.any(bad):
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} rows must sum to 1 (tolerance {tol:g}); row {first} sums to "
            f"{row_sums[first]:.6g}."
        )
    return arr


def check_logits(Z, *, name: str = "X", n_classes: int | None = None):
    """Validate a finite ``(n_samples, n_classes)`` score matrix."""
    arr, _ = _as_2d_float(Z, name=name, allow_1d=False)
    if n_classes is not None and arr.shape[1] != n_classes:
        raise ValueError(
            f"{name} has {arr.shape[1]} columns but {n_classes} classes were "
            "expected (class-count mismatch)."
        )
    return arr


def check_histograms_and_probabilities(
    y_true,
    y_prob,
    *,
    counts=None,
    allow_probabilities: bool = True,
    y_true_name: str = "y_true",
    y_prob_name: str = "y_prob",
):
    """Validate a (histogram, probability) pair for a metric.

    ``counts``, when given, replaces ``y_true`` as the human histograms (SPEC
    §4, convention B: the label ``y_true`` that scikit-learn routes is ignored).
    The number of classes is taken from the histograms when they are 2-D, else
    from the probabilities.

    Returns
    -------
    Y : ndarray of shape (n_samples, n_classes)
    P : ndarray of shape (n_samples, n_classes)
    """
    if counts is not None:
        y_true, y_true_name = counts, "counts"
    y_arr = np.asarray(y_true.to_numpy() if hasattr(y_true, "to_numpy") else y_true)
    is_hist = y_arr.ndim == 2 and y_arr.shape[1] > 1
    if is_hist:
        Y = check_label_histograms(
            y_true, name=y_true_name, allow_probabilities=allow_probabilities
        )
        P = check_probabilities(y_prob, name=y_prob_name, n_classes=Y.shape[1])
    else:
        P = check_probabilities(y_prob, name=y_prob_name)
        Y = check_label_histograms(
            y_true,
            name=y_true_name,
            allow_probabilities=allow_probabilities,
            n_classes=P.shape[1],
        )
    if Y.shape[0] != P.shape[0]:
        raise ValueError(
            f"{y_true_name} and {y_prob_name} have different numbers of samples: "
            f"{Y.shape[0]} and {P.shape[0]}."
        )
    return Y, P
