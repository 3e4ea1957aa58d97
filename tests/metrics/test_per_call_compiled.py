"""The per-call kernels (JSD, KL, ranking score, the majority ECEs) give the
numpy path's bits.

A result must not depend on whether numba is installed: each kernel's
per-item values (or binned sums) are compared with the numpy path's on
problems that reach every branch -- zeros on either side of a ratio,
one-hot and uniform rows, rows renormalised by the validation, counts with
one and with several numbers of labels, rows of probabilities, float32
counts, ties in both rankings, confidences on bin edges and exactly 0 or 1,
one bin and many -- and the public metrics through both paths.
"""

from __future__ import annotations

import numpy as np
import pytest

import sklearn_hcal.metrics as M
from sklearn_hcal._validation import check_pair
from sklearn_hcal.metrics import _distribution_compiled, _majority_compiled
from sklearn_hcal.metrics._distribution_kernels import (
    _block_jsd,
    _block_kl,
    _block_rank_match,
)
from sklearn_hcal.metrics._majority import (
    _binned_gap_sums,
    _block_classwise_sums,
    _block_confidence_sums,
    _block_majority,
    _block_top,
    _classwise_sums,
)
from sklearn_hcal.utils._compiled import kernel as _kernel
from sklearn_hcal.utils._compiled import use_compiled

pytest.importorskip("numba")


def _problem(seed, n_classes, labels="same", n_items=600, n_bins=10):
    """Counts and probabilities with the cases every branch needs."""
    rng = np.random.default_rng(seed)
    if labels == "same":  # one number of labels: the p̂ table's path
        Y = rng.multinomial(5, np.ones(n_classes) / n_classes, n_items)
    else:
        Y = np.stack(
            [
                rng.multinomial(m, np.ones(n_classes) / n_classes)
                for m in rng.integers(1, 8, n_items)
            ]
        )
    Y[::9] = 0
    Y[::9, 0] = Y[::9, -1] = 2  # a human tie
    P = rng.dirichlet(np.full(n_classes, 0.5), n_items)
    # on bin edges (renormalised by the validation where they do not sum to 1)
    P[::3] = np.round(P[::3] * 2 * n_bins) / (2 * n_bins)
    P[::3] /= P[::3].sum(axis=1, keepdims=True)
    P[::5] = np.eye(n_classes)[rng.integers(0, n_classes, len(P[::5]))]  # 0 and 1
    P[::11] = 1.0 / n_classes  # a model tie everywhere
    # exactly on the linspace edges (the definition's search decides), the
    # edge the top confidence
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    on_edge = edges[rng.integers((n_bins + 1) // 2, n_bins + 1, len(P[4::17]))]
    P[4::17] = 0.0
    P[4::17, 0] = on_edge
    P[4::17, 1] = 1.0 - on_edge
    P[1::13] = P[1::13, ::-1]
    zero = Y.sum(axis=1) == 0
    Y[zero, 0] = 1
    if labels == "probabilities":
        return Y / Y.sum(axis=1, keepdims=True), P
    if labels == "float32":
        return Y.astype(np.float32), P
    return Y, P


def _both(pair, per_block):
    """``per_block(block)`` of the pair's one block, kernels on and off
    (on even where ``SKLEARN_HCAL_COMPILED=0`` turned them off)."""
    with use_compiled(True):
        (got,) = pair.map_blocks(per_block)
    with use_compiled(False):
        (expected,) = pair.map_blocks(per_block)
    return got, expected


LABELS = ["same", "varied", "probabilities", "float32"]


@pytest.mark.parametrize("n_cols", range(1, 41))
def test_row_sums_add_in_einsums_order(n_cols):
    # row_sums' order: the check the callers rely on, asserted for every
    # width up to four steps of eight
    rng = np.random.default_rng(n_cols)
    A = rng.random((200, n_cols)) * rng.choice([1.0, 1e-12, 1e12], (200, n_cols))
    out = np.empty(200)
    with use_compiled(True):
        _distribution_compiled.row_sums.get()(A, out)
        assert _distribution_compiled.kernels_ready()
    np.testing.assert_array_equal(out, np.einsum("ij->i", A))


@pytest.mark.parametrize("labels", LABELS)
@pytest.mark.parametrize("n_classes", [2, 3, 9, 10, 17])
def test_jsd_and_kl_per_item_are_the_numpy_bits(labels, n_classes):
    Y, P = _problem(n_classes, n_classes, labels)
    pair = check_pair(Y, P)
    for base, squared in [(None, False), (2, True), (10, False)]:
        got, expected = _both(pair, lambda b, s=squared, a=base: _block_jsd(b, a, s))
        np.testing.assert_array_equal(got, expected)
    assert np.all(got >= 0)
    for eps in (1e-15, 1e-3):
        got, expected = _both(pair, lambda b, e=eps: _block_kl(b, e))
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("labels", LABELS)
@pytest.mark.parametrize("n_classes", [2, 3, 10, 16, 17])
def test_stable_order_match_is_the_numpy_answer(labels, n_classes):
    Y, P = _problem(n_classes + 50, n_classes, labels)
    P[2::7] = np.argsort(np.argsort(Y[2::7], kind="stable"), kind="stable") + 1.0
    P[2::7] /= P[2::7].sum(axis=1, keepdims=True)  # the human order exactly
    pair = check_pair(Y, P)
    got, expected = _both(pair, _block_rank_match)
    np.testing.assert_array_equal(got, expected)
    assert got.any() and not got.all()  # both answers reached


@pytest.mark.parametrize("labels", LABELS)
@pytest.mark.parametrize("n_bins", [1, 2, 3, 10, 15, 100])
def test_majority_ece_sums_are_the_bincount_sums(labels, n_bins):
    Y, P = _problem(n_bins, 4, labels, n_bins=n_bins)
    pair = check_pair(Y, P)
    got, expected = _both(pair, lambda b: _block_confidence_sums(b, n_bins))
    np.testing.assert_array_equal(got, expected)
    # and the numpy function the kernel replaces, called on its own
    (direct,) = pair.map_blocks(lambda b: _binned_gap_sums(*_block_top(b)[1:], n_bins))
    np.testing.assert_array_equal(got, direct)
    assert got[1].sum() == len(Y)
    got, expected = _both(pair, lambda b: _block_classwise_sums(b, n_bins))
    np.testing.assert_array_equal(got, expected)
    (direct,) = pair.map_blocks(
        lambda b: _classwise_sums(_block_majority(b), b.P, n_bins)
    )
    np.testing.assert_array_equal(got, direct)
    assert got[1].sum() == Y.size


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("jensen_shannon_distance", {}),
        ("jensen_shannon_distance", {"squared": True, "base": 2}),
        ("kl_divergence", {}),
        ("ranking_calibration_score", {}),
        ("expected_calibration_error", {"n_bins": 15}),
        ("classwise_expected_calibration_error", {"n_bins": 15}),
    ],
)
@pytest.mark.parametrize("layout", ["C", "F"])
def test_public_metrics_are_the_same_bits_through_both_paths(name, kwargs, layout):
    # several blocks (the sums of blocks add up as on the numpy path), and
    # Fortran-ordered input (the numpy path's row sums meet another layout:
    # the distribution kernels step aside)
    Y, P = _problem(7, 10, "varied", n_items=30_000)
    if layout == "F":
        Y, P = np.asfortranarray(Y), np.asfortranarray(P)
    f = getattr(M, name)
    with use_compiled(True):
        got = f(Y, P, **kwargs)
    with use_compiled(False):
        expected = f(Y, P, **kwargs)
    assert got == expected


def test_kernels_step_aside_when_switched_off():
    with use_compiled(False):
        assert not _distribution_compiled.kernels_ready()
        assert not _majority_compiled.kernels_ready()
    with use_compiled(True):
        assert _distribution_compiled.kernels_ready()
        assert _majority_compiled.kernels_ready()


@_kernel
def _sequential_row_sums(A, out):
    # left to right: not np.einsum's two lanes, as another numpy build's
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(A.shape[1]):
            acc += A[i, j]
        out[i] = acc


def test_a_row_sum_order_numpy_does_not_use_warns_and_keeps_numpy(monkeypatch):
    # kernels_ready's check of the summation order: on a numpy build that
    # sums otherwise the kernels are not used, and the user is told
    monkeypatch.setattr(_distribution_compiled, "row_sums", _sequential_row_sums)
    monkeypatch.setitem(_distribution_compiled._STATE, "ready", None)
    Y, P = _problem(5, 6)[:2]
    with use_compiled(True):
        with pytest.warns(RuntimeWarning, match="sums rows in another order"):
            assert not _distribution_compiled.kernels_ready()
        got = M.jensen_shannon_distance(Y, P)
    with use_compiled(False):
        assert got == M.jensen_shannon_distance(Y, P)
