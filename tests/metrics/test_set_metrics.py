"""Prediction-set metrics against plain loops."""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.metrics import (
    aggregated_coverage_score,
    coverage_by_set_size,
    majority_coverage_score,
    mean_set_size,
    size_stratified_coverage_score,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    Y = rng.multinomial(4, rng.dirichlet(np.ones(4), size=50))
    Y[0] = [2, 2, 0, 0]  # a tie for the majority
    S = rng.random((50, 4)) < 0.4
    return Y, S


def test_against_loops(data):
    Y, S = data
    n, K = Y.shape
    agg = maj = size = 0.0
    for i in range(n):
        total = sum(Y[i])
        agg += sum(Y[i][k] / total for k in range(K) if S[i][k])
        first = max(range(K), key=lambda k: (Y[i][k], -k))  # first of the top
        maj += S[i][first]
        size += sum(S[i])
    assert aggregated_coverage_score(Y, S) == pytest.approx(agg / n)
    assert majority_coverage_score(Y, S) == pytest.approx(maj / n)
    assert mean_set_size(Y, S) == pytest.approx(size / n)
    anyhit = sum(
        any(S[i][k] and Y[i][k] == max(Y[i]) for k in range(K)) for i in range(n)
    )
    assert majority_coverage_score(Y, S, ties="any") == pytest.approx(anyhit / n)


def test_by_set_size_against_loops(data):
    Y, S = data
    table = coverage_by_set_size(Y, S)
    groups = {}
    for i in range(len(Y)):
        cov = sum(Y[i][k] for k in range(4) if S[i][k]) / sum(Y[i])
        groups.setdefault(int(S[i].sum()), []).append(cov)
    assert list(table.index) == sorted(groups)
    for size, covs in groups.items():
        assert table.loc[size, "n_items"] == len(covs)
        assert table.loc[size, "aggregated_coverage"] == pytest.approx(np.mean(covs))
    assert size_stratified_coverage_score(Y, S) == pytest.approx(
        min(np.mean(c) for c in groups.values())
    )


def test_named_columns_and_labels(data):
    Y, S = data
    names = ["w", "x", "y", "z"]
    H = pd.DataFrame(Y, columns=names)
    sets = pd.DataFrame(S[:, ::-1], columns=names[::-1])  # reversed order
    assert aggregated_coverage_score(H, sets) == pytest.approx(
        aggregated_coverage_score(Y, S)
    )
    assert aggregated_coverage_score(
        H, S[:, ::-1], labels=names[::-1]
    ) == pytest.approx(aggregated_coverage_score(Y, S))
    # 1-D labels: one annotation per item
    labels = np.array(names)[Y.argmax(axis=1)]
    assert aggregated_coverage_score(labels, S, labels=names) == pytest.approx(
        majority_coverage_score(Y, S)
    )
    # counts= replaces y_true (metadata routing)
    assert aggregated_coverage_score(None, S, counts=Y) == pytest.approx(
        aggregated_coverage_score(Y, S)
    )


def test_probability_rows_as_human_labels(data):
    Y, S = data
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    assert aggregated_coverage_score(p_hat, S) == pytest.approx(
        aggregated_coverage_score(Y, S)
    )


def test_bad_sets(data):
    Y, S = data
    with pytest.raises(ValueError, match="row 1, column 2"):
        bad = S.astype(float)
        bad[1, 2] = 0.5
        aggregated_coverage_score(Y, bad)
    with pytest.raises(ValueError, match="2-D"):
        aggregated_coverage_score(Y, S[:, 0])
    with pytest.raises(ValueError, match="different numbers of samples"):
        aggregated_coverage_score(Y[:10], S)
    with pytest.raises(ValueError):
        aggregated_coverage_score(Y[:, :3], S)


_SET_METRICS = [
    aggregated_coverage_score,
    majority_coverage_score,
    mean_set_size,
    coverage_by_set_size,
    size_stratified_coverage_score,
]


@pytest.mark.parametrize("metric", _SET_METRICS, ids=lambda f: f.__name__)
def test_no_items_is_an_error_for_every_set_metric(data, metric):
    # mean_set_size returned nan with two RuntimeWarnings
    Y, S = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="y_set is empty"):
            metric(Y[:0], S[:0])


@pytest.mark.parametrize(
    "metric",
    [f for f in _SET_METRICS if f is not mean_set_size],
    ids=lambda f: f.__name__,
)
@pytest.mark.parametrize(
    ("labels", "match"),
    [
        ([0, 0, 1, 2], "labels must name each class once; 0 occurs more than once"),
        (["a", "b", "a", "c"], "'a' occurs more than once"),
        ([0, 1, 2], "labels has 3 entries .* but y_set has 4 columns"),
    ],
)
def test_bad_labels_name_the_entry(data, metric, labels, match):
    # a repeated entry was accepted with an array y_true (columns by position)
    Y, S = data
    with pytest.raises(ValueError, match=match):
        metric(Y, S, labels=labels)


def test_messages_name_each_thing_once(data):
    Y, S = data
    truth = pd.DataFrame(Y, columns=["a", "b", "c", "d"])
    with pytest.raises(ValueError) as info:
        aggregated_coverage_score(truth, S, labels=["a", "b", "c", "e"])
    assert "the classes of y_set's columns (labels=) ['a', 'b', 'c', 'e']" in str(
        info.value
    )
    assert "the classes of the classes" not in str(info.value)
    with pytest.raises(ValueError, match="^the columns of y_set must name each"):
        aggregated_coverage_score(truth, pd.DataFrame(S, columns=list("aabc")))
    with pytest.raises(ValueError, match="^the columns of y_true must name each"):
        aggregated_coverage_score(pd.DataFrame(Y, columns=list("aabc")), S)


def test_named_truth_and_unnamed_sets_follow_the_positional_rule():
    # Sets from predict_set follow the classifier's sorted classes_; a truth
    # whose columns come in another order must not be read by position.
    rng = np.random.RandomState(0)
    Y = rng.multinomial(5, [0.5, 0.3, 0.2], size=40)
    sets = rng.rand(40, 3) < 0.5  # columns: classes "a", "b", "c"
    truth = pd.DataFrame(Y, columns=["a", "b", "c"])[["c", "a", "b"]]
    with pytest.raises(ValueError, match="labels="):
        aggregated_coverage_score(truth, sets)
    got = aggregated_coverage_score(truth, sets, labels=["a", "b", "c"])
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    expected = np.mean([p_hat[i][sets[i]].sum() for i in range(40)])
    assert got == pytest.approx(expected, abs=1e-12)
