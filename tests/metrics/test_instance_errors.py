"""``instance_calibration_errors`` against an independent per-item computation.

The table's scoring columns are the registry's ``per_item`` hooks (developer
guide §registry); here every column is computed again with scipy and plain
numpy, from the definitions in the function's docstring, and compared to
1e-12: counts (with single annotations, tied counts and zero
probabilities), rows of human probabilities, 1-D labels, named columns in
another order, and more rows than one block holds.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy

from sklearn_hcal.metrics import instance_calibration_errors

TOL = {"rtol": 1e-12, "atol": 1e-12}


def _expected(Y, P, counts: bool):
    """The table from the definitions, with scipy (``Y``: counts or rows)."""
    Y = np.asarray(Y, dtype=float)
    P = np.asarray(P, dtype=float)
    n = Y.sum(axis=1)
    p_hat = Y / n[:, None]
    if counts:
        with np.errstate(divide="ignore", invalid="ignore"):
            pairs = 1 - np.sum(Y * (Y - 1), axis=1) / (n * (n - 1))
        disagreement = np.where(n >= 2, pairs, np.nan)
    else:
        disagreement = 1 - np.sum(p_hat**2, axis=1)
    return pd.DataFrame(
        {
            "dist_ce": 0.5 * np.abs(P - p_hat).sum(axis=1),
            "ent_ce": entropy(P, axis=1) - entropy(p_hat, axis=1),
            "jsd": jensenshannon(p_hat, P, axis=1),
            # q floored at 1e-15, then renormalised (scipy's entropy does)
            "kl": entropy(p_hat, np.maximum(P, 1e-15), axis=1),
            "human_entropy": entropy(p_hat, axis=1),
            "model_entropy": entropy(P, axis=1),
            # Baan et al.'s code: the stable argsorts agree element-wise
            "rank_match": np.all(
                np.argsort(Y, axis=1, kind="stable")
                == np.argsort(P, axis=1, kind="stable"),
                axis=1,
            ),
            # first of tied maxima on both sides
            "majority_correct": np.argmax(P, axis=1) == np.argmax(Y, axis=1),
            "human_disagreement": disagreement,
            "n_annotations": pd.array(
                n.astype(int) if counts else [pd.NA] * len(n), dtype="Int64"
            ),
        }
    )


def _problem(n, k, seed):
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.full(k, 0.8), size=n)
    Y = np.array([rng.multinomial(m, t) for m, t in zip(rng.integers(1, 8, n), truth)])
    P = 0.5 * truth + 0.5 * rng.dirichlet(np.ones(k), size=n)
    P[rng.random((n, k)) < 0.1] = 0.0  # zero probabilities: kl's floor
    P[: n // 10] = np.round(P[: n // 10], 1)  # tied probabilities
    P[:, 0] += 1e-3
    P /= P.sum(axis=1, keepdims=True)
    return Y, P


def _assert_table(got, want):
    assert list(got.columns) == list(want.columns)  # the documented order
    for column in want.columns:
        if want[column].dtype == bool:
            assert got[column].dtype == bool
            np.testing.assert_array_equal(got[column], want[column])
        elif want[column].dtype == float:
            np.testing.assert_allclose(got[column], want[column], **TOL, err_msg=column)
    assert str(got["n_annotations"].dtype) == "Int64"
    pd.testing.assert_extension_array_equal(
        got["n_annotations"].array, want["n_annotations"].array
    )


@pytest.mark.parametrize("n, k", [(300, 3), (5000, 40)])  # 5000 × 40: 2 blocks
def test_counts_against_the_definitions(n, k):
    Y, P = _problem(n, k, seed=k)
    assert (Y.sum(axis=1) == 1).any() and (P == P.max(axis=1, keepdims=True)).sum() > n
    got = instance_calibration_errors(Y, P)
    _assert_table(got, _expected(Y, P, counts=True))


def test_probability_rows_against_the_definitions():
    Y, P = _problem(300, 4, seed=1)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    got = instance_calibration_errors(p_hat, P)
    _assert_table(got, _expected(p_hat, P, counts=False))


def test_one_label_per_item_is_a_one_hot_histogram():
    Y, P = _problem(300, 3, seed=2)
    labels = np.argmax(Y, axis=1)
    got = instance_calibration_errors(labels, P)
    _assert_table(got, _expected(np.eye(3, dtype=int)[labels], P, counts=True))


def test_named_columns_are_aligned_before_the_hooks():
    Y, P = _problem(300, 4, seed=3)
    names = ["a", "b", "c", "d"]
    frame = pd.DataFrame(Y, columns=names, index=[f"item{i}" for i in range(300)])
    shuffled = pd.DataFrame(P, columns=names)[["c", "a", "d", "b"]]
    got = instance_calibration_errors(frame, shuffled)
    assert list(got.index) == list(frame.index)
    _assert_table(got, _expected(Y, P, counts=True))
