"""The LeWiDi / Kurniawan / ordinal metrics as report columns and scorers.

The parametrised test of ``test_registry.py`` checks that every column, scorer
and command-line metric equals its function at the defaults. Here: their
metric parameters (``order=``, ``values=``) in the report and the scorers,
the requirement checks, and the bootstrap of the two aggregates that are not
means (soft micro-F1, a ratio of sums; entropy correlation, a correlation),
each against an independent computation (scipy, loops).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax
from scipy.stats import pearsonr
from scipy.stats import wasserstein_distance as scipy_wasserstein
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_validate

from sklearn_hcal import SoftLabelClassifier
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import (
    HUMAN_SCORERS,
    human_calibration_report,
    make_human_scorer,
    metrics_by_agreement,
    wasserstein_distance,
)

SCALE = ["disagree", "neutral", "agree", "strongly agree"]


def _likert(n=120, seed=0):
    """Histograms with columns in alphabetical order (not the scale's)."""
    rng = np.random.RandomState(seed)
    _, Y, _ = make_label_histograms(n, 4, 6, random_state=seed)
    P = softmax(rng.normal(scale=1.5, size=Y.shape), axis=1)
    columns = sorted(SCALE)  # agree, disagree, neutral, strongly agree
    return pd.DataFrame(Y, columns=columns), P


def _in_scale_order(Y, P):
    idx = [list(Y.columns).index(c) for c in SCALE]
    Yv = Y.to_numpy(dtype=float)[:, idx]
    return Yv / Yv.sum(1, keepdims=True), P[:, idx]


def _scipy_wasserstein(p_hat, P, x):
    return np.mean([scipy_wasserstein(x, x, p, q) for p, q in zip(p_hat, P)])


def _loop_rps(p_hat, P):
    out = []
    for p, q in zip(p_hat, P):
        fp = fq = 0.0
        total = 0.0
        for k in range(len(p) - 1):
            fp, fq = fp + p[k], fq + q[k]
            total += (fp - fq) ** 2
        out.append(total / (len(p) - 1))
    return np.mean(out)


def test_ordinal_columns_read_order_and_values_from_metric_params():
    Y, P = _likert()
    p_hat, Q = _in_scale_order(Y, P)
    got = human_calibration_report(
        Y,
        {"m": P},
        metrics=["wasserstein", "rps"],
        metric_params={
            "wasserstein": {"order": SCALE, "values": [0, 1, 2, 4]},
            "ranked_probability_score_loss": {"order": SCALE},  # a long name
        },
    )
    assert got.loc["m", "wasserstein"] == pytest.approx(
        _scipy_wasserstein(p_hat, Q, np.array([0.0, 1, 2, 4])), rel=1e-12
    )
    assert got.loc["m", "rps"] == pytest.approx(_loop_rps(p_hat, Q), rel=1e-12)
    # without order= words carry no scale: refused, not read alphabetically
    with pytest.raises(ValueError, match="order="):
        human_calibration_report(Y, {"m": P}, metrics=["wasserstein"])


def test_ordinal_columns_with_numeric_classes_and_bad_scales():
    Y, P = _likert(60, seed=1)
    Yn = pd.DataFrame(Y.to_numpy(), columns=[1, 2, 4, 8])
    x = np.array([1.0, 2, 4, 8])
    p_hat = Yn.to_numpy(dtype=float) / Yn.to_numpy().sum(1, keepdims=True)
    got = human_calibration_report(
        Yn,
        P,
        metrics=["wasserstein"],
        metric_params={"wasserstein": {"values": "classes"}},
    )
    assert got.iloc[0, 0] == pytest.approx(_scipy_wasserstein(p_hat, P, x), rel=1e-12)
    # the same call through the function and through the scorer's kwargs
    assert wasserstein_distance(Yn, P, values="classes") == pytest.approx(
        got.iloc[0, 0], rel=1e-12
    )
    with pytest.raises(ValueError, match="order"):
        human_calibration_report(
            Y, P, metrics=["rps"], metric_params={"rps": {"order": ["a", "b"]}}
        )
    shuffled = pd.DataFrame(Y.to_numpy(), columns=[3, 1, 2, 4])
    with pytest.raises(ValueError, match="ambiguous; pass order="):
        # labels= matches the classes; the scale order stays ambiguous
        human_calibration_report(
            shuffled, P, metrics=["wasserstein"], labels=[3, 1, 2, 4]
        )
    with pytest.raises(ValueError, match="strictly monotone"):
        human_calibration_report(
            Y,
            P,
            metrics=["wasserstein"],
            metric_params={"wasserstein": {"values": [0, 2, 1, 3], "order": SCALE}},
        )


def test_ordinal_metrics_per_agreement_bin_take_order():
    Y, P = _likert(200, seed=2)
    p_hat, Q = _in_scale_order(Y, P)
    table = metrics_by_agreement(
        Y,
        P,
        n_bins=2,
        metrics=["wasserstein"],
        metric_params={"wasserstein": {"order": SCALE}},
    )
    # the item-weighted mean of the bins is the overall mean
    overall = _scipy_wasserstein(p_hat, Q, np.arange(4.0))
    weights = table["n_items"] / table["n_items"].sum()
    assert float((table["wasserstein"] * weights).sum()) == pytest.approx(
        overall, rel=1e-12
    )


def test_entropy_correlation_column_and_its_requirement():
    Y, P = _likert(80, seed=3)
    Yv = Y.to_numpy(dtype=float)
    h_true = [-(p[p > 0] * np.log(p[p > 0])).sum() for p in Yv / Yv.sum(1)[:, None]]
    h_pred = [-(q * np.log(q)).sum() for q in P]
    got = human_calibration_report(Y, {"m": P, "chance": np.full(P.shape, 0.25)})
    assert "entropy_corr" not in got.columns  # not a default column
    got = human_calibration_report(
        Y, {"m": P, "chance": np.full(P.shape, 0.25)}, metrics=["entropy_corr"]
    )
    assert got.loc["m", "entropy_corr"] == pytest.approx(
        pearsonr(h_true, h_pred).statistic, rel=1e-10
    )
    # a uniform prediction has one entropy: the correlation is undefined
    assert np.isnan(got.loc["chance", "entropy_corr"])
    labels = Yv.argmax(axis=1)  # one label per item: every human entropy is 0
    with pytest.raises(ValueError, match="not unanimous on every item"):
        human_calibration_report(labels, P, metrics=["entropy_corr"])


def _brute_bootstrap_sd(stat, n, n_resamples, seed):
    rng = np.random.default_rng(seed)
    return np.std([stat(rng.integers(0, n, n)) for _ in range(n_resamples)])


def test_bootstrap_of_the_ratio_and_correlation_columns():
    Y, P = _likert(150, seed=4)
    Yv = Y.to_numpy(dtype=float)
    p_hat = Yv / Yv.sum(1, keepdims=True)
    h_true = -np.sum(np.where(p_hat > 0, p_hat * np.log(p_hat + (p_hat == 0)), 0), 1)
    h_pred = -np.sum(P * np.log(P), 1)

    def f1(idx):
        return 2 * np.minimum(p_hat[idx], P[idx]).sum() / (p_hat[idx] + P[idx]).sum()

    def corr(idx):
        return pearsonr(h_true[idx], h_pred[idx]).statistic

    report, reps = human_calibration_report(
        Y,
        P,
        metrics=["soft_micro_f1", "entropy_corr"],
        n_bootstrap=600,
        random_state=0,
        return_bootstrap=True,
    )
    for column, stat in (("soft_micro_f1", f1), ("entropy_corr", corr)):
        want = _brute_bootstrap_sd(stat, len(Y), 600, seed=1)
        # two independent 600-resample estimates of the same sd: ~4% apart each
        assert reps[column].std() == pytest.approx(want, rel=0.2), column
        point = report.loc["model", column]
        assert report.loc["model", f"{column}_low"] < point
        assert point < report.loc["model", f"{column}_high"]


def test_ordinal_scorer_takes_order_as_a_keyword_in_cross_validation():
    Y, _ = _likert(150, seed=5)
    X = np.random.RandomState(5).normal(size=(150, 3)) + Y.to_numpy()[:, :3] * 0.3
    clf = SoftLabelClassifier(LogisticRegression())
    scorer = make_human_scorer("wasserstein_distance", order=SCALE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback on the way
        res = cross_validate(
            clf,
            X,
            Y,
            cv=KFold(3),
            scoring={"w": scorer, **HUMAN_SCORERS},
            return_estimator=True,
            return_indices=True,
        )
    for est, test, score in zip(
        res["estimator"], res["indices"]["test"], res["test_w"]
    ):
        # the fitted model's columns are its classes_ (the DataFrame's names)
        assert list(est.classes_) == list(Y.columns)
        p_hat, Q = _in_scale_order(Y.iloc[test], est.predict_proba(X[test]))
        assert score == pytest.approx(
            -_scipy_wasserstein(p_hat, Q, np.arange(4.0)), rel=1e-12
        )
    assert "test_neg_manhattan_distance" in res  # the soft scorers are in
    assert "test_neg_wasserstein_distance" not in res  # ordinal ones are not


def test_ordinal_scorer_on_string_labels_uses_the_classes_names():
    # 1-D string labels: the scorer passes classes_ (sorted, not the scale's
    # order) as labels=, so order= given by name puts the columns on the scale
    rng = np.random.RandomState(6)
    X = rng.normal(size=(120, 2))
    y = np.array(SCALE)[np.clip(np.round(X[:, 0] + 1.5), 0, 3).astype(int)]
    clf = LogisticRegression().fit(X, y)
    assert list(clf.classes_) == sorted(SCALE)  # not the scale's order
    P = clf.predict_proba(X)
    idx = [list(clf.classes_).index(c) for c in SCALE]
    onehot = (y[:, None] == np.array(SCALE)).astype(float)
    expected = -_scipy_wasserstein(onehot, P[:, idx], np.arange(4.0))
    scorer = make_human_scorer("wasserstein_distance", order=SCALE)
    assert scorer(clf, X, y) == pytest.approx(expected, rel=1e-12)
    # explicit labels= (the classes of the columns) give the same value
    named = make_human_scorer("wasserstein_distance", order=SCALE, labels=clf.classes_)
    assert named(clf, X, y) == pytest.approx(expected, rel=1e-12)
    # reading the columns in classes_ order as the scale would differ
    onehot_sorted = (y[:, None] == clf.classes_).astype(float)
    wrong = -_scipy_wasserstein(onehot_sorted, P, np.arange(4.0))
    assert not np.isclose(wrong, expected)


def test_entropy_correlation_from_sums_keeps_its_precision():
    # r is computed from sums of shifted moments (one pass, block by block),
    # whose cancellation grows as the entropies' variance shrinks: with a
    # standard deviation of 0.003 (normalised entropies, 200,000 nearly
    # uniform items) it still agrees with scipy's two-pass Pearson to 1e-9
    rng = np.random.RandomState(9)
    n = 200_000
    p_hat = softmax(0.1 * rng.normal(size=(n, 3)), axis=1)
    P = softmax(0.1 * rng.normal(size=(n, 3)) + 0.5 * np.log(p_hat), axis=1)
    h_true = -np.sum(p_hat * np.log(p_hat), 1) / np.log(3)
    h_pred = -np.sum(P * np.log(P), 1) / np.log(3)
    assert np.std(h_true) < 0.0035
    want = pearsonr(h_true, h_pred).statistic
    from sklearn_hcal.metrics import entropy_correlation_score

    assert entropy_correlation_score(p_hat, P) == pytest.approx(want, rel=1e-9)
    got = human_calibration_report(p_hat, P, metrics=["entropy_corr"])
    assert got.iloc[0, 0] == pytest.approx(want, rel=1e-9)
