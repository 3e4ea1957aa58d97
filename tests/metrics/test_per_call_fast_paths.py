"""The per-call fast paths equal the general paths they skip, to the bit.

A metric call at a thousand items is mostly fixed cost (developer guide
§speed), so the common call takes shortcuts: the pair check of plain
arrays skips the general path's no-ops, ``p̂`` and ``Y(Y − 1)`` of small
integer counts are looked up, the stable orders are compared in int16, and
one set of ECE bin sums is reduced in two numpy calls. Each is compared
here with the path it replaces: the same values (bit for bit), the same
errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import sklearn_hcal._validation._pair as pair_module
from sklearn_hcal._validation import check_pair
from sklearn_hcal._validation._pair import Block
from sklearn_hcal.metrics._disagreement_kernels import _agreeing_pairs
from sklearn_hcal.metrics._distribution_kernels import _p_log_p, _same_stable_order
from sklearn_hcal.metrics._majority import _binned_gap_from_sums


def _outcome(func, *args, **kwargs):
    try:
        return ("value", func(*args, **kwargs))
    except ValueError as exc:
        return ("error", str(exc))


def _pair_cases():
    rng = np.random.default_rng(7)
    Q = rng.dirichlet(np.ones(4), size=200)
    Y = rng.multinomial(5, Q)
    negative, empty, nan, short = Y.copy(), Y.copy(), Q.copy(), Q[:-1]
    negative[150, 1] = -1
    empty[17] = 0
    nan[60, 2] = np.nan
    binary = rng.multinomial(3, [0.4, 0.6], size=200)
    return {
        "int64 counts": (Y, Q),
        "int32 counts": (Y.astype(np.int32), Q),
        "uint8 counts": (Y.astype(np.uint8), Q),
        "float counts": (Y.astype(float), Q),
        "human probabilities": (Y / Y.sum(axis=1, keepdims=True), Q),
        "rounded probabilities": (Y, np.round(Q, 3)),
        "float32 probabilities": (Y, Q.astype(np.float32)),
        "binary 1-D probabilities": (binary, Q[:, 0]),
        "negative count": (negative, Q),
        "empty row": (empty, Q),
        "NaN probability": (Y, nan),
        "fewer rows": (Y, short),
        "other class count": (Y, Q[:, :3] / Q[:, :3].sum(axis=1, keepdims=True)),
    }


@pytest.mark.parametrize("case", list(_pair_cases()))
@pytest.mark.parametrize("row_offset", [0, 1000])
def test_plain_pair_equals_the_general_path(case, row_offset, monkeypatch):
    # the same Pair (the caller's arrays, the same sums and flags) or the
    # same error, naming the same row
    Y, P = _pair_cases()[case]
    fast = _outcome(check_pair, Y, P, row_offset=row_offset)
    monkeypatch.setattr(pair_module, "_plain_pair", lambda *args: None)
    slow = _outcome(check_pair, Y, P, row_offset=row_offset)
    assert fast[0] == slow[0]
    if fast[0] == "error":
        assert fast[1] == slow[1]
        return
    a, b = fast[1], slow[1]
    assert a.Y is b.Y and a.P is b.P
    np.testing.assert_array_equal(a.n, b.n)
    for attr in ("is_counts", "order", "renormalise", "classes", "named"):
        assert getattr(a, attr) == getattr(b, attr)


def _divided(Y, n):
    # the general path: convert, then divide each row by its count
    return np.array(Y, dtype=np.float64) / n[:, None]


@pytest.mark.parametrize("n_labels", [1, 2, 5, 7, 100, 4096, 4097])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint16])
def test_looked_up_p_hat_equals_the_division(n_labels, dtype):
    rng = np.random.default_rng(n_labels)
    Y = rng.multinomial(n_labels, rng.dirichlet(np.ones(6), size=500)).astype(dtype)
    P = rng.dirichlet(np.ones(6), size=500)
    block = Block(check_pair(Y, P), slice(0, 500))
    assert (block.p_hat_table is None) == (n_labels > 4096)  # the path tested
    expected = _divided(Y, block.n)
    np.testing.assert_array_equal(block.p_hat, expected)
    assert block.p_hat.flags.c_contiguous
    with np.errstate(divide="ignore"):
        for func in (_p_log_p, np.log, np.sqrt, lambda p: p * (1.0 - p)):
            np.testing.assert_array_equal(block.p_hat_map(func), func(expected))
        for _ in range(2):  # computed, then read from the store
            kept = block.p_hat_map(_p_log_p, kept=True)
            np.testing.assert_array_equal(kept, _p_log_p(expected))


@pytest.mark.parametrize("layout", ["varied counts", "Fortran order"])
def test_p_hat_is_divided_where_no_table_applies(layout):
    # items with different numbers of labels, or another memory layout
    # (whose row sums add in another order), take the general path
    rng = np.random.default_rng(3)
    Y = rng.multinomial(5, rng.dirichlet(np.ones(4), size=300))
    if layout == "varied counts":
        Y[::3, 0] += 2
    else:
        Y = np.asfortranarray(Y)
    block = Block(check_pair(Y, rng.dirichlet(np.ones(4), size=300)), slice(0, 300))
    assert block.p_hat_table is None
    np.testing.assert_array_equal(block.p_hat, _divided(Y, block.n))
    assert block.p_hat.flags.f_contiguous == (layout == "Fortran order")


@pytest.mark.parametrize("n_max", [1, 5, 4096, 5000])
@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.float64])
def test_looked_up_agreeing_pairs_equal_the_products(n_max, dtype):
    rng = np.random.default_rng(n_max)
    Y = rng.integers(0, min(n_max, 255) + 1, size=(400, 5))
    Y[0] = 0
    Y[0, 0] = min(n_max, 255)
    n = Y.sum(axis=1).astype(float)
    Yf = Y.astype(np.float64)
    np.testing.assert_array_equal(_agreeing_pairs(Y.astype(dtype), n), Yf * (Yf - 1.0))


@pytest.mark.parametrize("n_classes", [2, 3, 10, 16])
def test_int16_stable_orders_equal_the_argsort(n_classes):
    rng = np.random.default_rng(n_classes)
    P = rng.dirichlet(np.ones(n_classes), size=700)
    Y = rng.multinomial(30_000, P)  # counts up to 2**15: still int16
    Y[::2] = rng.multinomial(4, P[::2])  # many human ties
    P[::5, 0] = P[::5, -1]  # model ties
    Y[::3] = np.argsort(np.argsort(P[::3], kind="stable"), kind="stable")
    expected = np.all(
        np.argsort(Y, axis=1, kind="stable") == np.argsort(P, axis=1, kind="stable"),
        axis=1,
    )
    assert 0 < expected.mean() < 1
    np.testing.assert_array_equal(_same_stable_order(Y, P, small=True), expected)


@pytest.mark.parametrize("n_bins", [1, 7, 15, 40])
def test_ece_of_one_set_of_sums_equals_the_batched_reduction(n_bins):
    # the batched path (a leading resample axis) is the general reduction
    rng = np.random.default_rng(n_bins)
    for scale in (1e-3, 1.0, 1e3):
        sums = np.stack(
            [
                rng.normal(size=n_bins + 2) * scale,
                rng.integers(0, 50, size=n_bins + 2).astype(float),
            ]
        )
        one = _binned_gap_from_sums(sums)
        assert isinstance(one, float)
        assert one == _binned_gap_from_sums(sums[None])[0]
    assert _binned_gap_from_sums(np.zeros((2, n_bins + 2))) == 0.0


def test_disagreement_in_range_is_accepted_as_the_clip_leaves_it():
    # values in [0, 1] (signed zeros and the ends included) skip the
    # refusals and the clip: the same copy the general path returns
    from sklearn_hcal._validation import check_disagreement

    phi = np.array([0.0, -0.0, 1.0, 0.25, 1e-300, 1 - 1e-16])
    out = check_disagreement(phi)
    assert out is not phi
    np.testing.assert_array_equal(out, np.clip(phi, 0.0, 1.0))
    np.testing.assert_array_equal(np.signbit(out), np.signbit(phi))
    for bad in (np.nan, -1e-3, 1.5):
        with pytest.raises(ValueError, match="y_disagreement"):
            check_disagreement(np.append(phi, bad))
    np.testing.assert_array_equal(check_disagreement([0.5, -1e-15]), [0.5, 0.0])


@pytest.mark.parametrize("n_classes", [1, 2, 3, 10, 255, 256])
@pytest.mark.parametrize("kind", ["float", "counts", "bool"])
def test_first_max_equals_argmax(n_classes, kind):
    # ties go to the first column; a row with NaN to its first NaN
    from sklearn_hcal.metrics._majority import first_max

    rng = np.random.default_rng(n_classes)
    if kind == "float":
        A = np.round(rng.random((600, n_classes)), 1)  # many ties
        A[5, 0], A[9, -1], A[11] = np.nan, np.nan, np.nan
        A[20] = -0.0
        A[21, ::2] = 0.0
    elif kind == "counts":
        A = rng.multinomial(4, np.ones(n_classes) / n_classes, size=600)
    else:
        A = rng.random((600, n_classes)) < 0.3
    np.testing.assert_array_equal(first_max(A), np.argmax(A, axis=1))
    assert first_max(A).dtype == np.argmax(A, axis=1).dtype
