"""Classes by name and rounding tolerances in the metric functions.

Developer guide §class-names and §tolerances: 1-D labels map to columns through
``labels=`` (or a DataFrame's column names), named columns are aligned, probability rows
off by rounding are renormalised, disagreement values a rounding error outside ``[0,
1]`` are clipped. Expected values come from scikit-learn, scipy or closed forms
computed here, never from the function under test.
"""

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy
from sklearn.metrics import accuracy_score, log_loss

from sklearn_hcal.datasets import load_chaosnli
from sklearn_hcal.metrics import (
    disagreement_calibration_error,
    disagreement_calibration_loss,
    disagreement_squared_loss,
    distribution_calibration_error,
    entropy_calibration_error,
    epistemic_loss,
    expected_squared_loss,
    histogram_log_loss,
    jensen_shannon_distance,
    kl_divergence,
    majority_accuracy_score,
    predicted_disagreement,
)
from tests.metrics._registered import metric_functions, requirement

#: Every metric function of the registry, at its defaults.
ALL_METRICS = metric_functions()


def _problem(n=200, k=3, seed=0):
    rng = np.random.RandomState(seed)
    # 7 annotations: human distributions k/7 are not exact decimals
    Y = rng.multinomial(7, np.linspace(1, 2, k) / np.linspace(1, 2, k).sum(), size=n)
    # a model that follows the humans, bounded away from 0 (rounding to three
    # decimals never makes a zero)
    noise = rng.dirichlet(np.full(k, 4.0), size=n)
    P = 0.6 * Y / Y.sum(axis=1, keepdims=True) + 0.3 * noise + 0.1 / k
    return Y, P


def _mean_kl(Y, P):
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    return float(np.mean([entropy(p, q) for p, q in zip(p_hat, P)]))


# --------------------------------------------------------------------------- #
# 1-D labels map to columns by name
# --------------------------------------------------------------------------- #
def test_chaosnli_old_labels_with_labels_keyword(chaosnli_dir):
    # ChaosNLI's old (SNLI) labels are "e", "n", "c" and the files' columns
    # are in that order; sorting them would give the columns c, e, n.
    data = load_chaosnli("snli", path=chaosnli_dir)
    classes = np.array(["e", "n", "c"])
    P = data.counts / data.counts.sum(axis=1, keepdims=True)  # the oracle
    expected = accuracy_score(data.old_label.astype(str), classes[P.argmax(axis=1)])
    assert expected == pytest.approx(0.751, abs=1e-3)
    got = majority_accuracy_score(data.old_label, P, labels=["e", "n", "c"])
    assert got == pytest.approx(expected, abs=1e-12)
    # The same as a one-hot histogram built here, and as named columns.
    one_hot = (data.old_label[:, None] == classes[None, :]).astype(int)
    assert got == majority_accuracy_score(one_hot, P)
    frame = pd.DataFrame(P, columns=classes)
    assert majority_accuracy_score(data.old_label, frame) == got
    # The alphabetical reading (what positional columns assume) is far off.
    alphabetical = accuracy_score(
        data.old_label.astype(str), np.sort(classes)[P.argmax(axis=1)]
    )
    assert alphabetical < 0.2 and abs(got - alphabetical) > 0.5


def test_integer_labels_of_a_subset_need_labels():
    # [1, 1] against three columns: rank order or 0-based? It used to score
    # 0.0 on these two rows while the full set scored 1.0.
    P = np.array([[0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    y = np.array([1, 1, 2, 3])
    classes = np.array([1, 2, 3])
    # every class occurs: the sorted labels are the columns (sklearn's rule)
    expected = accuracy_score(y, classes[P.argmax(axis=1)])
    assert expected == 1.0
    assert majority_accuracy_score(y, P) == expected
    with pytest.raises(ValueError, match="1 distinct label .* pass labels="):
        majority_accuracy_score(y[:2], P[:2])
    for rows in (slice(0, 2), slice(1, 3), slice(None)):
        expected = accuracy_score(y[rows], classes[P[rows].argmax(axis=1)])
        got = majority_accuracy_score(y[rows], P[rows], labels=[1, 2, 3])
        assert got == expected == 1.0


def test_labels_order_is_the_column_order_not_sorted():
    # Unlike sklearn's log_loss (which assumes sorted labels), labels= may
    # come in any order: it is the class of each column.
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])
    y = ["c", "a"]
    got = histogram_log_loss(y, P, labels=["c", "b", "a"])
    assert got == pytest.approx(log_loss(y, P[:, ::-1], labels=["a", "b", "c"]))
    assert got == pytest.approx(-np.log(0.7))


def test_binary_one_d_probabilities_with_labels():
    # A 1-D y_prob is P(second class) -- the second of ``labels``.
    rng = np.random.RandomState(1)
    p_yes = rng.uniform(0.05, 0.95, size=30)
    y = np.where(rng.uniform(size=30) < p_yes, "yes", "no")
    expected = log_loss(y, np.column_stack([1 - p_yes, p_yes]), labels=["no", "yes"])
    assert histogram_log_loss(y, p_yes) == pytest.approx(expected, rel=1e-12)
    assert histogram_log_loss(y, p_yes, labels=["no", "yes"]) == pytest.approx(
        expected, rel=1e-12
    )
    # Named the other way, the same column is P("no").
    flipped = log_loss(y, np.column_stack([p_yes, 1 - p_yes]), labels=["no", "yes"])
    assert histogram_log_loss(y, p_yes, labels=["yes", "no"]) == pytest.approx(
        flipped, rel=1e-12
    )


# --------------------------------------------------------------------------- #
# Named columns are aligned by name
# --------------------------------------------------------------------------- #
def test_dataframe_columns_are_aligned_by_name():
    Y, P = _problem()
    expected = _mean_kl(Y, P)  # scipy, unshuffled
    Yf = pd.DataFrame(Y, columns=list("abc"))
    shuffled = pd.DataFrame(P, columns=list("abc"))[["c", "b", "a"]]
    assert kl_divergence(Yf, shuffled) == pytest.approx(expected, rel=1e-12)
    # the misaligned reading (what main computed) is a different number
    assert _mean_kl(Y, shuffled.to_numpy()) > expected + 0.05
    # labels= names y_prob's columns the same way
    assert kl_divergence(Yf, shuffled.to_numpy(), labels=["c", "b", "a"]) == (
        pytest.approx(expected, rel=1e-12)
    )
    # counts= (convention B) is aligned too
    assert kl_divergence(np.zeros(len(Y)), shuffled, counts=Yf) == pytest.approx(
        expected, rel=1e-12
    )


def test_every_metric_aligns_named_columns():
    Y, P = _problem(k=4, seed=3)
    names = ["w", "x", "y", "z"]
    Yf = pd.DataFrame(Y, columns=names)
    Pf = pd.DataFrame(P, columns=names)[["z", "x", "w", "y"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for metric in ALL_METRICS:
            # words carry no scale order: the ordinal metrics are told it
            kw = {"order": names} if requirement(metric) == "ordered" else {}
            got = metric(Yf, Pf, **kw)
            assert got == pytest.approx(metric(Y, P), rel=1e-12), metric


def test_labels_name_both_columns_of_a_plain_histogram():
    # With a 2-D array y_true, labels= names the columns of both: nothing is
    # reordered, and 1-D labels use the same names.
    Y, P = _problem()
    assert kl_divergence(Y, P, labels=["c", "b", "a"]) == pytest.approx(
        _mean_kl(Y, P), rel=1e-12
    )
    labels = np.array(["c", "b", "a"])[Y.argmax(axis=1)]
    one_hot = np.eye(3)[Y.argmax(axis=1)]
    assert kl_divergence(labels, P, labels=["c", "b", "a"]) == pytest.approx(
        _mean_kl(one_hot, P), rel=1e-12
    )


def test_default_range_index_carries_no_names():
    # pd.DataFrame(P) has columns 0..K-1 that nobody chose: positional.
    Y, P = _problem()
    Yf = pd.DataFrame(Y, columns=list("abc"))
    assert kl_divergence(Yf, pd.DataFrame(P)) == pytest.approx(
        _mean_kl(Y, P), rel=1e-12
    )


def test_disagreement_metrics_align_and_ignore_class_order():
    Y, P = _problem()
    phi = 1.0 - np.sum(P**2, axis=1)
    n = Y.sum(axis=1)
    mu = 1.0 - np.sum(Y * (Y - 1.0), axis=1) / (n * (n - 1.0))
    expected = np.mean(mu * (1 - mu) + (mu - phi) ** 2)  # Mimori eq. 40
    Yf = pd.DataFrame(Y, columns=list("abc"))
    Pf = pd.DataFrame(P, columns=list("abc"))[["b", "c", "a"]]
    assert disagreement_squared_loss(Yf, Pf) == pytest.approx(expected, rel=1e-12)
    assert disagreement_squared_loss(Y, phi, labels=list("abc")) == pytest.approx(
        expected, rel=1e-12
    )


# --------------------------------------------------------------------------- #
# developer guide §tolerances: rounded probabilities are renormalised
# --------------------------------------------------------------------------- #
def _renormalised(P):
    return P / P.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda f: f.__name__)
def test_rounded_probabilities_equal_explicitly_renormalised(metric):
    Y, P = _problem()
    P3 = P.round(3)
    assert np.abs(P3.sum(axis=1) - 1).max() > 1e-6  # some rows need it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = metric(Y, P3)
        expected = metric(Y, _renormalised(P3))
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    "metric",
    [
        distribution_calibration_error,
        entropy_calibration_error,
        jensen_shannon_distance,
        kl_divergence,
        histogram_log_loss,
        expected_squared_loss,
        epistemic_loss,
        disagreement_squared_loss,
    ],
    ids=lambda f: f.__name__,
)
def test_rounded_probabilities_close_to_exact(metric):
    # Rounded probabilities, metric side: three decimals move a smooth metric by
    # ~1e-3 at most, they do not make it fail.
    Y, P = _problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert metric(Y, P.round(3)) == pytest.approx(metric(Y, P), abs=1e-3)


def test_renormalised_values_against_scipy():
    Y, P = _problem()
    P3 = P.round(3)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    Q = _renormalised(P3)
    jsd = np.mean([jensenshannon(p, q) for p, q in zip(p_hat, Q)])
    assert jensen_shannon_distance(Y, P3) == pytest.approx(jsd, rel=1e-12)
    tvd = 0.5 * np.abs(Q - p_hat).sum(axis=1).mean()
    assert distribution_calibration_error(Y, P3) == pytest.approx(tvd, rel=1e-12)


def test_rows_within_1e6_are_used_as_given():
    # Exact probabilities are not touched (no renormalising division).
    Y, P = _problem()
    P_off = P * (1 + 5e-7)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    as_given = 0.5 * np.abs(P_off - p_hat).sum(axis=1).mean()
    renormalised = 0.5 * np.abs(P - p_hat).sum(axis=1).mean()
    got = distribution_calibration_error(Y, P_off)
    assert got == pytest.approx(as_given, rel=1e-13)
    assert got != pytest.approx(renormalised, rel=1e-9)


def test_rounded_human_probability_rows_are_renormalised():
    Y, P = _problem()
    H3 = (Y / Y.sum(axis=1, keepdims=True)).round(3)
    assert np.abs(H3.sum(axis=1) - 1).max() > 1e-6
    H = _renormalised(H3)
    tvd = 0.5 * np.abs(P - H).sum(axis=1).mean()
    assert distribution_calibration_error(H3, P) == pytest.approx(tvd, rel=1e-12)
    cross_entropy = -(H * np.log(P)).sum(axis=1).mean()
    assert histogram_log_loss(H3, P) == pytest.approx(cross_entropy, rel=1e-12)


def test_renormalising_a_float32_memmap_makes_no_copy(tmp_path, monkeypatch):
    # Rounded float32 probabilities in a memory map: the renormalisation runs
    # block by block, so the peak stays well below one float64 copy of either
    # input (8 MB each; 16 MB in float64), as for exact probabilities
    # (tests/test_large_inputs.py measures ~0.45x with one thread).
    monkeypatch.setenv("HCAL_NUM_THREADS", "1")
    rng = np.random.RandomState(0)
    n, k = 200_000, 10
    Y = rng.multinomial(5, np.full(k, 1 / k), size=n).astype(np.float32)
    P = (rng.dirichlet(np.ones(k), size=n) * 0.9 + 0.01).round(3)
    np.save(tmp_path / "Y.npy", Y)
    np.save(tmp_path / "P.npy", P.astype(np.float32))
    Ym = np.load(tmp_path / "Y.npy", mmap_mode="r")
    Pm = np.load(tmp_path / "P.npy", mmap_mode="r")
    P32 = P.astype(np.float32).astype(np.float64)
    assert np.abs(P32.sum(axis=1) - 1).max() > 1e-5  # beyond float32 rounding
    # rows within 1e-6 of summing to 1 are used as they are (float32 rounding)
    sums = P32.sum(axis=1, keepdims=True)
    Q = np.where(np.abs(sums - 1) > 1e-6, P32 / sums, P32)
    expected = jensen_shannon_distance(Y, Q)
    jensen_shannon_distance(Ym, Pm)  # warm-up
    tracemalloc.start()
    try:
        got = jensen_shannon_distance(Ym, Pm)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == pytest.approx(expected, rel=1e-12)
    assert peak < 0.75 * (Ym.nbytes + Pm.nbytes), peak / (Ym.nbytes + Pm.nbytes)


# --------------------------------------------------------------------------- #
# Disagreement values a rounding error outside [0, 1]
# --------------------------------------------------------------------------- #
@pytest.mark.filterwarnings(
    "ignore:y_disagreement reaches:UserWarning"
)  # φ values by hand, beyond 1 - 1/K on purpose
def test_rounding_errors_in_phi_are_clipped():
    Y = np.array([[1, 1], [2, 0], [3, 1]])
    mu = np.array([1.0, 0.0, 0.5])  # 1 - Σ Y(Y-1) / n(n-1)
    for tiny, clipped in ((-8e-15, 0.0), (1 + 1e-15, 1.0)):
        phi = np.array([0.5, tiny, 0.5])
        expected_phi = np.array([0.5, clipped, 0.5])
        expected = np.mean(mu * (1 - mu) + (mu - expected_phi) ** 2)
        assert disagreement_squared_loss(Y, phi) == pytest.approx(expected)
        assert disagreement_calibration_loss(Y, phi) == (
            disagreement_calibration_loss(Y, expected_phi)
        )
        assert disagreement_calibration_error(Y, phi) == (
            disagreement_calibration_error(Y, expected_phi)
        )


def test_one_hot_float32_softmax_row_gives_zero_disagreement():
    # [1.0, 2e-8, 0] passes the row-sum check but 1 - Σp² is -4e-16
    P = np.array([[1.0, 2e-8, 0.0], [0.5, 0.25, 0.25]], dtype=np.float32)
    raw = 1.0 - np.sum(P.astype(np.float64) ** 2, axis=1)
    assert raw[0] < 0
    phi = predicted_disagreement(P)
    np.testing.assert_array_equal(phi, np.clip(raw, 0, 1))
    Y = np.array([[3, 0, 0], [2, 1, 1]])
    assert np.isfinite(disagreement_squared_loss(Y, P))
    assert np.isfinite(disagreement_squared_loss(Y, 1.0 - np.sum(P**2, axis=1)))
