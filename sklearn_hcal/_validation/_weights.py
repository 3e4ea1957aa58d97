"""Item weights (``sample_weight``) checked with the row and value named.

scikit-learn's ``_check_sample_weight`` says "Negative values in data passed
to `sample_weight`" or "Input sample_weight contains NaN" without saying
where; a weight vector is usually computed, so the offending item is what a
user needs to find. The checks come first here, in the order NaN/inf, sign,
then scikit-learn's own conversion (which then cannot fail on values).
"""

from __future__ import annotations

import numpy as np

from ._core import as_array

__all__ = ["check_weight_values"]


def check_weight_values(sample_weight, n_samples: int, *, name="sample_weight"):
    """``sample_weight`` as a 1-D float64 array of ``n_samples`` finite weights >= 0.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or scalar
        Item weights; a scalar weighs every item the same.
    n_samples : int
        Number of items the weights belong to.
    name : str, default="sample_weight"
        Argument name used in error messages.

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,)

    Examples
    --------
    >>> from sklearn_hcal._validation._weights import check_weight_values
    >>> check_weight_values([1, 2], 2)
    array([1., 2.])
    >>> check_weight_values([1.0, -0.5], 2)
    Traceback (most recent call last):
    ...
    ValueError: sample_weight must hold non-negative item weights; row 1 is -0.5.
    """
    raw = (
        sample_weight.to_numpy()
        if hasattr(sample_weight, "to_numpy")
        else sample_weight
    )
    w = as_array(raw, name=name)
    if w.ndim == 0:
        w = np.full(n_samples, w.item())
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]
    if w.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one weight per item), got shape {w.shape}."
        )
    if w.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {w.shape[0]} entries but there are {n_samples} items "
            f"(one weight per item)."
        )
    try:
        w = w.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got dtype {w.dtype}.") from exc
    finite = np.isfinite(w)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise ValueError(
            f"{name} contains NaN or infinity (row {row}: {float(w[row])!r})."
        )
    negative = w < 0
    if negative.any():
        row = int(np.flatnonzero(negative)[0])
        raise ValueError(
            f"{name} must hold non-negative item weights; row {row} is "
            f"{float(w[row])!r}."
        )
    return w
