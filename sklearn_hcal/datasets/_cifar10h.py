"""CIFAR-10H (Peterson et al., 2019): human labels for the CIFAR-10 test set."""

from __future__ import annotations

import os

import numpy as np
from sklearn.utils import Bunch

from ..utils._compat import validate_params
from ._base import local_file

#: The CIFAR-10 classes in the order of the dataset's label indices (and of
#: the columns of ``cifar10h-counts.npy``).
CIFAR10_CLASSES = (
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
)
CIFAR10H_FOLDER = "cifar10h"
CIFAR10H_COUNTS_FILE = "cifar10h-counts.npy"
CIFAR10H_N_IMAGES = 10_000


@validate_params(
    {"path": [str, os.PathLike, None]},
    prefer_skip_nested_validation=True,
)
def load_cifar10h(path: str | os.PathLike | None = None) -> Bunch:
    """Load the CIFAR-10H label counts.

    CIFAR-10H (Peterson et al., 2019) collected 47 to 63 human labels (51.1 on
    average) for each of the 10,000 images of the CIFAR-10 test set; row ``i``
    belongs to test image ``i`` of CIFAR-10. Only the label counts are read
    (the images come from CIFAR-10 itself).

    Parameters
    ----------
    path : str or path-like, default=None
        The file ``cifar10h-counts.npy`` or its folder; defaults to
        ``<data home>/cifar10h`` (see :func:`get_data_home`).

    Returns
    -------
    data : Bunch
        ``counts`` : int64 ndarray of shape (10000, 10), the label histograms;
        ``classes`` : ndarray of the 10 CIFAR-10 class names in label order
        (airplane, automobile, bird, cat, deer, dog, frog, horse, ship,
        truck); ``n_annotations`` : ``counts.sum(1)``; ``DESCR`` : str.

    Raises
    ------
    FileNotFoundError
        If the file is missing.
    ValueError
        If the file is not a (10000, 10) array of non-negative integer counts
        with at least one label per image.

    References
    ----------
    Peterson, J. C., Battleday, R. M., Griffiths, T. L. & Russakovsky, O.
    (2019). Human uncertainty makes classification more robust. ICCV.

    Examples
    --------
    >>> from sklearn_hcal.datasets import load_cifar10h
    >>> data = load_cifar10h("../shared/data/cifar10h")  # doctest: +SKIP
    >>> data.counts.shape, data.classes[3]  # doctest: +SKIP
    ((10000, 10), 'cat')
    """
    file = local_file(
        path,
        CIFAR10H_FOLDER,
        CIFAR10H_COUNTS_FILE,
        what="CIFAR-10H counts",
        how="Download it from https://github.com/jcpeterson/cifar-10h "
        "(data/cifar10h-counts.npy) and pass path= to it or to its folder, or "
        f"put it in <data home>/{CIFAR10H_FOLDER}.",
    )
    try:
        raw = np.load(file, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{file} is not a readable .npy array: {exc}") from exc
    expected = (CIFAR10H_N_IMAGES, len(CIFAR10_CLASSES))
    if raw.shape != expected:
        raise ValueError(
            f"{file} must hold CIFAR-10H counts of shape {expected}, got shape "
            f"{raw.shape}."
        )
    if raw.dtype.kind not in "biuf":
        raise ValueError(f"{file} must hold numeric counts, got dtype {raw.dtype}.")
    if raw.dtype.kind == "f":
        # The published file is int64; a float copy is fine if it holds counts.
        if not np.all(np.isfinite(raw)):
            raise ValueError(f"{file} contains NaN or infinity.")
        if not np.all(raw == np.round(raw)):
            raise ValueError(
                f"{file} must hold integer label counts; found fractional "
                "values (is it cifar10h-probs.npy?)."
            )
    if np.any(raw < 0):
        raise ValueError(f"{file} holds negative counts.")
    counts = raw.astype(np.int64)
    n = counts.sum(axis=1)
    if np.any(n == 0):
        raise ValueError(
            f"{file}: image {int(np.flatnonzero(n == 0)[0])} has no labels."
        )
    return Bunch(
        counts=counts,
        classes=np.array(CIFAR10_CLASSES, dtype=object),
        n_annotations=n,
        DESCR=(
            f"CIFAR-10H (Peterson et al., 2019): {counts.shape[0]} CIFAR-10 test "
            f"images with {n.min()}–{n.max()} human labels each (mean "
            f"{n.mean():.1f}). Licence CC BY-NC-SA 4.0."
        ),
    )
