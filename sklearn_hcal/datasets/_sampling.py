"""Fewer labels per item: annotations drawn from label histograms.

One annotation per item, drawn from the human distribution, is what most
data sets collect (Mimori et al., 2021, §7.1, train on such labels).
:func:`draw_annotation` is the one draw of the package:
:class:`~sklearn_hcal.SoftLabelClassifier` (``strategy="sample"``) trains on
it and :func:`sample_annotations` returns it, so that the same
``random_state`` gives the same labels.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state

from .._validation import check_label_histograms, is_histogram_target
from ..utils._compat import Interval, validate_params

__all__ = ["draw_annotation", "sample_annotations"]


def draw_annotation(Y, rng) -> np.ndarray:
    """One annotation per item: class ``k`` with probability ``Y_ik / n_i``.

    An inverse-CDF draw, one uniform number per item (``rng.random_sample``).

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_classes)
        Validated counts, every row with ``n_i > 0``.
    rng : RandomState

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Column indices.
    """
    u = rng.random_sample(Y.shape[0]) * Y.sum(axis=1)
    labels = (np.cumsum(Y, axis=1) <= u[:, None]).sum(axis=1)
    # u < n_i, so the label is < K unless rounding puts u on the last step
    return np.minimum(labels, Y.shape[1] - 1)


@validate_params(
    {
        "Y": ["array-like"],
        "n_annotations": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def sample_annotations(Y, n_annotations: int = 1, *, random_state=None):
    """Keep ``n_annotations`` of each item's annotations, drawn at random.

    Simulates collecting fewer labels: from each item's histogram of
    ``n_i`` annotations, ``n_annotations`` are drawn without replacement,
    each annotation equally likely. With one per item (the default) this is
    a label drawn from the human distribution, class ``k`` with probability
    ``Y_ik / n_i`` -- the single-label training setting of Mimori et al.
    (2021, §7.1), and the draw that ``SoftLabelClassifier(strategy="sample")``
    trains on (the same ``random_state`` gives the same labels).

    A label drawn this way is an unbiased sample of the human distribution,
    so the per-annotation log loss on it estimates the full-histogram one
    (:class:`~sklearn_hcal.TemperatureScaler` fits it and reports how far the
    fit can be from the full-histogram fit, ``temperature_se_``). The
    majority label is not such a sample (see :ref:`which_calibrator`).

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_classes)
        Label histograms (non-negative integer counts). A DataFrame's columns
        name the classes.
    n_annotations : int, default=1
        Annotations to keep per item; every item needs at least that many.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.

    Returns
    -------
    y : ndarray of shape (n_samples,) or array-like of shape (n_samples, n_classes)
        With ``n_annotations=1``, one class label per item: the column index,
        or the column name of a DataFrame ``Y``. Otherwise the histograms of
        the kept annotations, a DataFrame with ``Y``'s columns when ``Y`` is
        one, else an int64 array.

    See Also
    --------
    sklearn_hcal.SoftLabelClassifier : ``strategy="sample"`` trains on the
        same draw.

    References
    ----------
    Mimori et al. (2021). Diagnostic uncertainty calibration: towards
    reliable machine predictions in medical domain. AISTATS, §7.1.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.datasets import sample_annotations
    >>> Y = np.array([[5, 0, 0], [0, 2, 2], [1, 1, 1]])
    >>> y = sample_annotations(Y, random_state=0)
    >>> y.shape, int(y[0])  # item 0 can only give class 0
    ((3,), 0)
    >>> sample_annotations(Y, 2, random_state=0).sum(axis=1)
    array([2, 2, 2])
    """
    if not is_histogram_target(Y):
        raise ValueError(
            "Y must be label histograms of shape (n_samples, n_classes) with "
            f"n_classes > 1, got shape {np.shape(Y)}; 1-D labels already hold "
            "one annotation per item."
        )
    counts, classes = check_label_histograms(Y, name="Y", return_classes=True)
    n = counts.sum(axis=1)
    short = np.flatnonzero(n < n_annotations)
    if short.size:
        raise ValueError(
            f"Y has {short.size} item(s) with fewer than n_annotations="
            f"{n_annotations} annotations (first: row {short[0]}, "
            f"{n[short[0]]:g} annotations); they cannot keep that many."
        )
    rng = check_random_state(random_state)
    if n_annotations == 1:
        labels = draw_annotation(counts, rng)
        return np.asarray(classes)[labels] if hasattr(Y, "columns") else labels
    remaining = counts.copy()
    kept = np.zeros(counts.shape, dtype=np.int64)
    rows = np.arange(counts.shape[0])
    for _ in range(n_annotations):  # without replacement: one draw at a time
        labels = draw_annotation(remaining, rng)
        remaining[rows, labels] -= 1
        kept[rows, labels] += 1
    if hasattr(Y, "columns"):
        import pandas as pd

        return pd.DataFrame(kept, index=Y.index, columns=Y.columns)
    return kept
