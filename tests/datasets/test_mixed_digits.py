"""Mix-Digits (Mimori et al. 2021, App. E.1 on scikit-learn's 8×8 digits)."""

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_digits

from sklearn_hcal.datasets import make_mixed_digits
from tests.conftest import require_data

DIGITS = load_digits()
N_IMAGES = len(DIGITS.target)
PARTS = ("train", "valid", "test")


@pytest.fixture(scope="module")
def mixed():
    return make_mixed_digits(random_state=0)


def test_shapes_dtypes_and_image_consistency(mixed):
    n = len(mixed.partition)
    assert mixed.data.shape == (n, 64) and mixed.data.dtype == np.float32
    assert mixed.images.shape == (n, 1, 8, 8) and mixed.images.dtype == np.float32
    np.testing.assert_array_equal(mixed.images.reshape(n, 64), mixed.data)
    assert mixed.data.min() >= 0 and mixed.data.max() <= 1
    assert mixed.counts.shape == (n, 10) and mixed.counts.dtype == np.int64
    assert mixed.true_proba.shape == (n, 10)
    np.testing.assert_allclose(mixed.true_proba.sum(1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(mixed.classes, np.arange(10))
    np.testing.assert_array_equal(mixed.n_annotations, mixed.counts.sum(1))
    assert mixed.source_index.dtype == np.int64


def test_images_are_the_stated_mixtures_of_the_sources(mixed):
    # Recomputed from load_digits independently of the generator's arrays.
    x = DIGITS.data / 16.0
    a, b = mixed.source_index[:, 0], mixed.source_index[:, 1]
    r = mixed.mix_ratio
    expected = x[a].copy()
    m = mixed.mixed
    expected[m] = r[m, None] * x[a[m]] + (1 - r[m, None]) * x[b[m]]
    np.testing.assert_allclose(mixed.data, expected, atol=1e-6)
    np.testing.assert_array_equal(mixed.source_target[:, 0], DIGITS.target[a])
    np.testing.assert_array_equal(mixed.source_target[m, 1], DIGITS.target[b[m]])


def test_unmixed_items_are_one_hot_with_ratio_one(mixed):
    u = ~mixed.mixed
    assert np.all(mixed.mix_ratio[u] == 1.0)
    assert np.all(mixed.source_index[u, 1] == -1)
    assert np.all(mixed.source_target[u, 1] == -1)
    onehot = np.eye(10)[DIGITS.target[mixed.source_index[u, 0]]]
    np.testing.assert_array_equal(mixed.true_proba[u], onehot)
    np.testing.assert_array_equal(mixed.target[u], mixed.source_target[u, 0])


def test_mixed_q_has_two_classes_with_ratio_and_complement(mixed):
    m = mixed.mixed
    ya, yb = mixed.source_target[m, 0], mixed.source_target[m, 1]
    r = mixed.mix_ratio[m]
    Q = mixed.true_proba[m]
    distinct = ya != yb
    assert np.all(np.count_nonzero(Q[distinct], axis=1) == 2)
    rows = np.arange(len(r))
    np.testing.assert_allclose(Q[rows, ya][distinct], r[distinct])
    np.testing.assert_allclose(Q[rows, yb][distinct], 1 - r[distinct])
    # Same-class pairs are pure: the mixture of two "3"s is a "3".
    np.testing.assert_allclose(
        Q[~distinct][np.arange((~distinct).sum()), ya[~distinct]], 1.0
    )
    assert np.all((r > 0) & (r < 1))


def test_fraction_of_mixed_items_follows_mix_fraction():
    for f in (0.0, 0.3, 0.5, 1.0):
        d = make_mixed_digits(mix_fraction=f, random_state=1)
        n_images_used = 0
        for p in PARTS:
            s = d[p]
            m_images = len(s.index) + s.mixed.sum()  # each mixture uses 2 images
            n_images_used += m_images
            # An even number of images, as close to f·m as possible.
            assert 2 * s.mixed.sum() == pytest.approx(f * m_images, abs=2)
        assert n_images_used == N_IMAGES
    # The paper's setting: half the images mixed => a third of the items.
    d = make_mixed_digits(mix_fraction=0.5, random_state=2)
    assert d.mixed.mean() == pytest.approx(0.5 / 1.5, abs=0.005)


def test_mixed_images_are_a_random_sample_of_classes():
    # Classes of the images that went into mixtures, pooled over seeds, against
    # the class frequencies of the digits (chi-square goodness of fit).
    pooled = np.zeros(10)
    for seed in range(5):
        d = make_mixed_digits(random_state=seed)
        st = d.source_target[d.mixed].ravel()
        pooled += np.bincount(st, minlength=10)
    expected = np.bincount(DIGITS.target, minlength=10) / N_IMAGES * pooled.sum()
    assert stats.chisquare(pooled, expected).pvalue > 1e-3


def test_same_class_pairs_occur_at_the_random_pairing_rate():
    pairs_same, pairs = 0, 0
    for seed in range(5):
        d = make_mixed_digits(random_state=seed)
        st = d.source_target[d.mixed]
        pairs_same += np.sum(st[:, 0] == st[:, 1])
        pairs += len(st)
    freq = np.bincount(DIGITS.target) / N_IMAGES
    p_same = np.sum(freq**2)  # ~0.1 for balanced classes
    assert stats.binomtest(int(pairs_same), int(pairs), p_same).pvalue > 1e-3


def test_mix_ratios_are_uniform():
    r = np.concatenate(
        [(d := make_mixed_digits(random_state=s)).mix_ratio[d.mixed] for s in range(4)]
    )
    assert len(r) > 1500
    assert stats.kstest(r, "uniform").pvalue > 1e-3


def test_label_frequencies_converge_to_q():
    d = make_mixed_digits(n_annotations=40, random_state=3)
    n = d.counts.sum(1)
    assert np.all(n == 40)
    Q = d.true_proba
    # 1) class totals pooled over items: z-scores against the multinomial mean
    #    and variance.
    z = (d.counts.sum(0) - (n[:, None] * Q).sum(0)) / np.sqrt(
        (n[:, None] * Q * (1 - Q)).sum(0)
    )
    assert np.all(np.abs(z) < 4)
    # 2) labels fall only on classes with Q > 0.
    assert np.all(d.counts[Q == 0] == 0)
    # 3) mixtures with distinct classes: the first source's label count is
    #    Binomial(n, r); the sum of squared standardised counts has mean m and,
    #    away from r ≈ 0 or 1, approximately chi-square(m) behaviour.
    m = d.mixed & (d.source_target[:, 0] != d.source_target[:, 1])
    r = d.mix_ratio[m]
    keep = (r > 0.05) & (r < 0.95)
    ya = d.source_target[m, 0][keep]
    y_first = d.counts[m][keep][np.arange(keep.sum()), ya]
    rr = r[keep]
    chi2 = np.sum((y_first - 40 * rr) ** 2 / (40 * rr * (1 - rr)))
    dof = keep.sum()
    assert stats.chi2.sf(chi2, dof) > 1e-3 and stats.chi2.cdf(chi2, dof) > 1e-3
    # 4) the empirical first-class frequency tracks r.
    assert np.corrcoef(y_first / 40, rr)[0, 1] > 0.9


def test_reproducible_and_seed_dependent():
    a = make_mixed_digits(random_state=7)
    b = make_mixed_digits(random_state=7)
    c = make_mixed_digits(random_state=8)
    for key in ("data", "counts", "true_proba", "mix_ratio", "source_index"):
        np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(a.source_index, c.source_index)
    assert not np.array_equal(a.mix_ratio[a.mixed][:10], c.mix_ratio[c.mixed][:10])
    rs = np.random.RandomState(7)
    np.testing.assert_array_equal(make_mixed_digits(random_state=rs).counts, a.counts)


def test_partitions_disjoint_covering_and_leak_free(mixed):
    n = len(mixed.partition)
    idx = np.concatenate([mixed[p].index for p in PARTS])
    np.testing.assert_array_equal(np.sort(idx), np.arange(n))
    assert set(np.unique(mixed.partition)) == set(PARTS)
    for p in PARTS:
        assert np.all(mixed.partition[mixed[p].index] == p)
        np.testing.assert_array_equal(mixed[p].counts, mixed.counts[mixed[p].index])
        np.testing.assert_array_equal(mixed[p].images, mixed.images[mixed[p].index])
    # Every source image is used exactly once, so no image is in two partitions.
    used = mixed.source_index[mixed.source_index >= 0]
    np.testing.assert_array_equal(np.sort(used), np.arange(N_IMAGES))
    # Partition sizes in source images follow valid_size / test_size = 0.2.
    for p in ("valid", "test"):
        s = mixed[p]
        assert len(s.index) + s.mixed.sum() == round(0.2 * N_IMAGES)


def test_per_split_annotation_counts(mixed):
    assert np.all(mixed.train.counts.sum(1) == 1)
    assert np.all(mixed.valid.counts.sum(1) == 5)
    assert np.all(mixed.test.counts.sum(1) == 10)
    d = make_mixed_digits(
        n_annotations={"train": 3, "valid": 2, "test": 7},
        valid_size=0.1,
        test_size=0.3,
        random_state=0,
    )
    assert [set(d[p].counts.sum(1)) for p in PARTS] == [{3}, {2}, {7}]
    d = make_mixed_digits(n_annotations=4, valid_size=0.0, random_state=0)
    assert len(d.valid.index) == 0 and d.valid.images.shape == (0, 1, 8, 8)
    assert np.all(d.counts.sum(1) == 4)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_annotations": 0}, "n_annotations"),
        ({"n_annotations": {"train": 1, "test": 10}}, "missing.*valid"),
        ({"n_annotations": {"train": 1, "valid": 2, "test": 3, "x": 1}}, "unknown"),
        ({"n_annotations": {"train": 1, "valid": 0, "test": 3}}, "valid"),
        ({"n_annotations": {"train": 1.5, "valid": 2, "test": 3}}, "train"),
        ({"n_annotations": "ten"}, "n_annotations"),
        ({"mix_fraction": 1.5}, "mix_fraction"),
        ({"mix_fraction": -0.1}, "mix_fraction"),
        ({"valid_size": 0.5, "test_size": 0.5}, "valid_size \\+ test_size"),
        ({"test_size": 1.0}, "test_size"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_mixed_digits(**kwargs)


def test_recipe_matches_mimori_released_mix_mnist():
    # Mimori et al.'s released Mix-MNIST histograms (no images): the same
    # conventions as ours — a third of the items mixed in every partition when
    # half the images are, ratio 1.0 for originals, U(0, 1) ratios, random pairs.
    import pandas as pd

    path = require_data("lh_calib_mixed", "mixed_mnist", "mixed_mnist.t1_v5.txt.gz")
    ref = pd.read_csv(path, sep="\t")
    ours = make_mixed_digits(random_state=0)
    for p in PARTS:
        part = ref[ref.partition == p]
        assert part._mixed.mean() == pytest.approx(1 / 3, abs=1e-9)
        assert ours[p].mixed.mean() == pytest.approx(1 / 3, abs=0.01)
    assert np.all(ref._ratio[ref._mixed == 0] == 1.0)
    r = ref._ratio[ref._mixed == 1].to_numpy()
    assert stats.kstest(r, "uniform").pvalue > 1e-3
    pairs = ref._org_y[ref._mixed == 1].str.split(",", expand=True).astype(int)
    same = (pairs[0] == pairs[1]).mean()
    assert same == pytest.approx(0.1, abs=0.01)  # random pairing, ~balanced classes
    n = ref.nrater.groupby(ref.partition).unique()
    assert [list(n[p]) for p in PARTS] == [[1], [5], [10]]
