"""load_cifar10h against the shipped CIFAR-10H files (Peterson et al. 2019)."""

import shutil

import numpy as np
import pytest

from sklearn_hcal.datasets import load_cifar10h
from tests.conftest import require_data


@pytest.fixture(scope="module")
def cifar_dir():
    return require_data("cifar10h", "cifar10h-counts.npy").parent


@pytest.fixture(scope="module")
def data(cifar_dir):
    return load_cifar10h(cifar_dir)


def test_counts_shape_dtype_and_classes(data):
    assert data.counts.shape == (10000, 10)
    assert data.counts.dtype == np.int64
    assert list(data.classes) == [
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
    ]
    assert "CIFAR-10H" in data.DESCR


def test_counts_match_the_shipped_probabilities(data, cifar_dir):
    probs = np.load(cifar_dir / "cifar10h-probs.npy")
    np.testing.assert_allclose(
        data.counts / data.counts.sum(1, keepdims=True), probs, atol=1e-12
    )


def test_annotators_per_image_as_published(data):
    # The data's documentation: 47-63 labels per image, 51.1 on average.
    n = data.counts.sum(1)
    np.testing.assert_array_equal(data.n_annotations, n)
    assert n.min() == 47 and n.max() == 63
    assert round(n.mean(), 1) == 51.1


def test_file_path_and_data_home_default(cifar_dir, tmp_path, monkeypatch):
    by_file = load_cifar10h(cifar_dir / "cifar10h-counts.npy")
    home = tmp_path / "home"
    (home / "cifar10h").mkdir(parents=True)
    shutil.copy(cifar_dir / "cifar10h-counts.npy", home / "cifar10h")
    monkeypatch.setenv("HCAL_DATA", str(home))
    np.testing.assert_array_equal(load_cifar10h().counts, by_file.counts)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="cifar10h-counts.npy"):
        load_cifar10h(tmp_path)
    with pytest.raises(FileNotFoundError, match="not found"):
        load_cifar10h(tmp_path / "nope.npy")


def _good():
    rng = np.random.default_rng(0)
    return rng.multinomial(50, np.full(10, 0.1), size=10000)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: _good()[:100], r"shape \(10000, 10\)"),
        (lambda: _good()[:, :9], r"shape \(10000, 10\)"),
        (lambda: _good() / 50.0, "integer label counts"),
        (lambda: np.where(np.eye(10000, 10) > 0, -1, _good()), "negative"),
        (lambda: np.where(np.eye(10000, 10) > 0, np.nan, _good()), "NaN"),
        (lambda: np.where(np.arange(10000)[:, None] == 5, 0, _good()), "image 5"),
        (lambda: _good().astype(str), "numeric"),
    ],
)
def test_malformed_file(tmp_path, make, match):
    np.save(tmp_path / "cifar10h-counts.npy", make())
    with pytest.raises(ValueError, match=match):
        load_cifar10h(tmp_path)


def test_unreadable_or_pickled_file(tmp_path):
    (tmp_path / "cifar10h-counts.npy").write_bytes(b"not an npy file")
    with pytest.raises(ValueError, match="not a readable .npy"):
        load_cifar10h(tmp_path)
    np.save(tmp_path / "cifar10h-counts.npy", np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="not a readable .npy"):
        load_cifar10h(tmp_path)


def test_float_file_with_integer_counts_is_accepted(tmp_path):
    good = _good()
    np.save(tmp_path / "c.npy", good.astype(np.float64))
    out = load_cifar10h(tmp_path / "c.npy")
    assert out.counts.dtype == np.int64
    np.testing.assert_array_equal(out.counts, good)


def test_bad_path_type():
    with pytest.raises(ValueError, match="path"):
        load_cifar10h(5)
