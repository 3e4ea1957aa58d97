"""Mix-Digits: Mimori et al.'s Mix-MNIST recipe on scikit-learn's 8×8 digits."""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np
from sklearn.datasets import load_digits
from sklearn.utils import Bunch, check_random_state

from ..utils._compat import Interval, validate_params
from ._synthetic import _multinomial_rows

#: The partitions, in the order the items are returned.
PARTITIONS = ("train", "valid", "test")

#: Mimori et al. (2021, §7.1): one training label, two or five validation
#: labels, ten test labels.
DEFAULT_N_ANNOTATIONS = {"train": 1, "valid": 5, "test": 10}

_N_CLASSES = 10
_PIXEL_MAX = 16.0  # load_digits pixels are integers in [0, 16]


def _check_n_annotations(n_annotations) -> dict[str, int]:
    if n_annotations is None:
        return dict(DEFAULT_N_ANNOTATIONS)
    if isinstance(n_annotations, numbers.Integral) and not isinstance(
        n_annotations, bool
    ):
        if n_annotations < 1:
            raise ValueError(f"n_annotations must be at least 1, got {n_annotations}.")
        return {p: int(n_annotations) for p in PARTITIONS}
    if not isinstance(n_annotations, Mapping):
        raise ValueError(
            "n_annotations must be an int, a dict with keys "
            f"{list(PARTITIONS)} or None, got {type(n_annotations).__name__}."
        )
    keys = set(n_annotations)
    if keys != set(PARTITIONS):
        raise ValueError(
            f"n_annotations must have exactly the keys {list(PARTITIONS)}; "
            f"missing {sorted(set(PARTITIONS) - keys)}, unknown "
            f"{sorted(map(str, keys - set(PARTITIONS)))}."
        )
    out = {}
    for p in PARTITIONS:
        v = n_annotations[p]
        if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
            raise ValueError(f"n_annotations[{p!r}] must be an int >= 1, got {v!r}.")
        out[p] = int(v)
    return out


def _mix_partition(rng, sources, mix_fraction):
    """Turn one partition's source images into original and mixed items.

    Returns ``(source_index (m, 2), ratio (m,))`` with ``-1`` as the second
    source and ratio 1 for originals.
    """
    n = len(sources)
    # Pairs consume two images, so the number of mixed images is even.
    n_mix_images = 2 * int(np.floor(mix_fraction * n / 2 + 0.5))
    n_mix_images = min(n_mix_images, n - n % 2)
    perm = rng.permutation(sources)
    pool, originals = perm[:n_mix_images], perm[n_mix_images:]
    n_pairs = n_mix_images // 2
    first, second = pool[:n_pairs], pool[n_pairs:]
    ratio_mixed = rng.uniform(0.0, 1.0, size=n_pairs)
    source_index = np.concatenate(
        [
            np.column_stack([originals, np.full(len(originals), -1)]),
            np.column_stack([first, second]),
        ]
    ).astype(np.int64)
    ratio = np.concatenate([np.ones(len(originals)), ratio_mixed])
    # Interleave originals and mixtures so that no order leaks the mixing.
    order = rng.permutation(len(ratio))
    return source_index[order], ratio[order]


@validate_params(
    {
        "n_annotations": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Mapping,
            None,
        ],
        "mix_fraction": [Interval(numbers.Real, 0, 1, closed="both")],
        "valid_size": [Interval(numbers.Real, 0, 1, closed="left")],
        "test_size": [Interval(numbers.Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_mixed_digits(
    n_annotations: int | Mapping[str, int] | None = None,
    *,
    mix_fraction: float = 0.5,
    valid_size: float = 0.2,
    test_size: float = 0.2,
    random_state=None,
) -> Bunch:
    """Mix-Digits: images with ambiguous labels and known true distributions.

    The Mix-MNIST recipe of Mimori et al. (2021, §7.1 and App. E.1) applied to
    scikit-learn's bundled 8×8 digits (1,797 images, no download):

    1. the source images are split into train / validation / test partitions
       (so that no source image appears in two partitions);
    2. in each partition a fraction ``mix_fraction`` of the images is drawn at
       random and paired at random; each pair ``(a, b)`` becomes one mixed
       image ``r·x_a + (1 − r)·x_b`` with ``r ~ U(0, 1)``, and its true label
       distribution is ``Q = r·e_{y_a} + (1 − r)·e_{y_b}``; the other images
       stay as they are, with one-hot ``Q``;
    3. each annotation of an item is an independent draw from its ``Q``, so
       ``Y_i ~ Multinomial(n_i, Q_i)`` with ``n_i`` set per partition.

    With ``mix_fraction=0.5`` half of the *images* are mixed (as in the
    paper), so a third of the *items* are mixtures: a partition of ``m``
    images gives ``m/4`` mixed and ``m/2`` original items. In general the
    fraction of mixed items is ``f / (2 − f)`` for ``f = mix_fraction``.
    Pairs are random, as in the paper, so about one in ten mixes two images
    of the same class (whose ``Q`` is then one-hot).

    Parameters
    ----------
    n_annotations : int or dict, default=None
        Annotations per item: an int for every partition, or a dict with the
        keys ``"train"``, ``"valid"`` and ``"test"``. None means the paper's
        setting ``{"train": 1, "valid": 5, "test": 10}`` (Mimori et al. also
        use 2 validation labels).
    mix_fraction : float in [0, 1], default=0.5
        Fraction of the source images of each partition that are mixed in
        pairs (rounded to an even number of images).
    valid_size : float in [0, 1), default=0.2
        Fraction of the source images in the validation partition (may be 0).
    test_size : float in [0, 1), default=0.2
        Fraction of the source images in the test partition (may be 0).
    random_state : int, RandomState instance or None, default=None
        Seed for the partition, the mixing and the annotations.

    Returns
    -------
    data : Bunch
        Items ordered by partition (train, then valid, then test), shuffled
        within each, with:

        - ``data`` : ndarray of shape (n, 64), float32 in [0, 1]; the flat
          images (pixels divided by 16, then mixed).
        - ``images`` : ndarray of shape (n, 1, 8, 8), float32; the same
          values as ``data`` in the (N, C, H, W) layout of a CNN.
        - ``counts`` : ndarray of shape (n, 10), int64; the label histograms.
        - ``true_proba`` : ndarray of shape (n, 10); the true distributions Q.
        - ``target`` : ndarray of shape (n,); ``argmax`` of ``true_proba``
          (ties towards the first source's class).
        - ``mixed`` : bool ndarray of shape (n,).
        - ``mix_ratio`` : ndarray of shape (n,); the weight ``r`` of the first
          source, **1.0 for unmixed items** (as in Mimori et al.'s released
          files), so ``Q = r·e_{y_a} + (1 − r)·e_{y_b}`` holds for every item.
        - ``source_index`` : int64 ndarray of shape (n, 2); rows of
          ``load_digits()`` that were mixed, ``-1`` as the second for
          unmixed items.
        - ``source_target`` : int64 ndarray of shape (n, 2); their classes,
          ``-1`` likewise.
        - ``n_annotations`` : int64 ndarray of shape (n,); ``counts.sum(1)``.
        - ``partition`` : ndarray of shape (n,) of str; ``"train"``,
          ``"valid"`` or ``"test"``.
        - ``train``, ``valid``, ``test`` : Bunch; the same fields (but
          ``partition``) restricted to one partition, plus ``index``, the
          rows of that partition.
        - ``classes`` : ndarray ``[0, ..., 9]``; ``DESCR`` : str.

    References
    ----------
    Mimori, T. et al. (2021). Diagnostic uncertainty calibration: towards
    reliable machine predictions in medical domain. AISTATS. §7.1, App. E.1.

    Examples
    --------
    >>> from sklearn_hcal.datasets import make_mixed_digits
    >>> d = make_mixed_digits(random_state=0)
    >>> d.data.shape, d.images.shape, d.counts.shape
    ((1347, 64), (1347, 1, 8, 8), (1347, 10))
    >>> d.images.dtype
    dtype('float32')
    >>> d.train.counts.sum(1).max(), d.valid.counts.sum(1).max()
    (np.int64(1), np.int64(5))
    >>> round(float(d.mixed.mean()), 2)  # a third of the items are mixtures
    0.33
    """
    n_ann = _check_n_annotations(n_annotations)
    if valid_size + test_size >= 1:
        raise ValueError(
            "valid_size + test_size must be below 1 so that the training "
            f"partition is not empty, got {valid_size} + {test_size}."
        )
    rng = check_random_state(random_state)
    digits = load_digits()
    pixels = digits.data.astype(np.float64) / _PIXEL_MAX
    target = digits.target.astype(np.int64)
    n_images = len(target)

    n_test = int(np.floor(test_size * n_images + 0.5))
    n_valid = int(np.floor(valid_size * n_images + 0.5))
    perm = rng.permutation(n_images)
    split_sources = {
        "test": perm[:n_test],
        "valid": perm[n_test : n_test + n_valid],
        "train": perm[n_test + n_valid :],
    }

    parts = []
    for p in PARTITIONS:
        src, ratio = _mix_partition(rng, split_sources[p], mix_fraction)
        parts.append((p, src, ratio))
    source_index = np.concatenate([s for _, s, _ in parts])
    ratio = np.concatenate([r for _, _, r in parts])
    partition = np.concatenate([np.full(len(r), p) for p, _, r in parts])
    n_ann_item = np.concatenate(
        [np.full(len(r), n_ann[p], dtype=np.int64) for p, _, r in parts]
    )
    n = len(ratio)

    mixed = source_index[:, 1] >= 0
    first, second = source_index[:, 0], np.where(mixed, source_index[:, 1], 0)
    w = ratio[:, None]
    # Unmixed items have ratio 1, so the second (dummy) source gets weight 0.
    data = (w * pixels[first] + (1.0 - w) * pixels[second]).astype(np.float32)
    source_target = np.column_stack(
        [target[first], np.where(mixed, target[second], -1)]
    )
    rows = np.arange(n)
    Q = np.zeros((n, _N_CLASSES))
    Q[rows, source_target[:, 0]] += ratio
    np.add.at(Q, (rows[mixed], source_target[mixed, 1]), 1.0 - ratio[mixed])
    counts = _multinomial_rows(rng, n_ann_item, Q)

    fields = dict(
        data=data,
        images=data.reshape(n, 1, 8, 8).copy(),
        counts=counts,
        true_proba=Q,
        target=np.argmax(Q, axis=1),
        mixed=mixed,
        mix_ratio=ratio,
        source_index=source_index,
        source_target=source_target,
        n_annotations=counts.sum(axis=1),
    )
    splits = {}
    for p in PARTITIONS:
        index = np.flatnonzero(partition == p)
        splits[p] = Bunch(index=index, **{k: v[index] for k, v in fields.items()})

    counts_desc = ", ".join(
        f"{p}: {len(splits[p].index)} items × {n_ann[p]} labels" for p in PARTITIONS
    )
    return Bunch(
        **fields,
        partition=partition,
        **splits,
        classes=np.arange(_N_CLASSES),
        DESCR=(
            "Mix-Digits: scikit-learn's 8×8 digits mixed in pairs with ratio "
            "r ~ U(0, 1) and annotated by sampling from the mixture (the "
            "Mix-MNIST recipe of Mimori et al., 2021, App. E.1); "
            f"mix_fraction={mix_fraction}; {counts_desc}."
        ),
    )
