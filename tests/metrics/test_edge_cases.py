"""Metrics, report and scorers on edge cases: repeated names, missing cells, bounds.

Each test checks a value against an independent computation, or a bad input
against a clear ValueError naming the argument.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.metrics import (
    human_calibration_report,
    jensen_shannon_distance,
    kl_divergence,
)


@pytest.mark.parametrize("where", ["y_true", "y_prob"])
def test_dataframe_with_a_repeated_column_name_raises(where):
    # Columns are matched by name, so a DataFrame naming two columns "a" cannot
    # say which one is class "a". labels=["a", "a", "b"] already raised; the
    # same names as DataFrame columns were taken silently: with 1-D labels
    # y_true, "a" went to the first "a" column (KL 1.27 where the second
    # column gives 1.10), a guess.
    rng = np.random.default_rng(14)
    P = rng.dirichlet(np.ones(3), size=30)
    C = np.array([rng.multinomial(4, p) for p in P])
    frame = pd.DataFrame(P if where == "y_prob" else C, columns=["a", "a", "b"])
    if where == "y_prob":
        args = (rng.choice(["a", "b"], 30), frame)
    else:
        args = (frame, P)
    for metric in (kl_divergence, jensen_shannon_distance):
        with pytest.raises(ValueError, match=rf"columns of {where}.*'a' occurs"):
            metric(*args)
    with pytest.raises(ValueError, match="'a' occurs"):
        human_calibration_report(args[0], {"m": args[1]}, metrics=["kl"])


@pytest.mark.parametrize("where", ["y_true", "y_prob"])
def test_missing_value_in_a_nullable_column_names_the_cell(where):
    # pandas' nullable dtypes hold pd.NA in an object array; the error said
    # only "must be numeric, got an array of dtype object", naming no cell.
    rng = np.random.default_rng(30)
    P = rng.dirichlet(np.ones(3), size=10)
    C = pd.DataFrame(np.array([rng.multinomial(4, p) for p in P]), columns=list("abc"))
    Pdf = pd.DataFrame(P, columns=list("abc"))
    if where == "y_true":
        C = C.astype("Int64")
        C.iloc[2, 1] = pd.NA
    else:
        Pdf = Pdf.astype("Float64")
        Pdf.iloc[2, 1] = pd.NA
    with pytest.raises(ValueError, match=rf"{where} .*\(row 2, column 1: <NA>\)"):
        kl_divergence(C, Pdf)


def test_entropy_of_a_unanimous_item_is_positive_zero():
    # −Σ 0 gave −0.0, printed as "-0.0" in the per-item table and as the
    # lowest agreement-bin edge ("-0.000000") of metrics_by_agreement.
    from sklearn_hcal.metrics import instance_calibration_errors, metrics_by_agreement

    C = np.array([[3, 0, 0], [1, 1, 1], [0, 2, 0], [2, 1, 0]])
    P = np.array([[1, 0, 0], [0.2, 0.3, 0.5], [0.1, 0.8, 0.1], [0.5, 0.4, 0.1]])
    table = instance_calibration_errors(C, P)
    for column in ("human_entropy", "model_entropy"):
        assert not np.signbit(table[column].to_numpy(dtype=float)).any()
    assert table.loc[0, "ent_ce"] == 0 and not np.signbit(table.loc[0, "ent_ce"])
    bins = metrics_by_agreement(C, P, n_bins=2)
    assert not np.signbit(bins["entropy_low"].to_numpy(dtype=float)).any()


def test_scorer_names_the_class_count_mismatch_with_the_estimator():
    # A binary estimator scored on 3-class histograms (a fit on data lacking
    # a class): the error spoke of "y_prob is 1-D", which the user never
    # passed, since scikit-learn hands the scorer P(classes_[-1]).
    import sklearn
    from sklearn.linear_model import LogisticRegression

    from sklearn_hcal.metrics import get_human_scorer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    est = LogisticRegression().fit(X, rng.choice(["cat", "dog"], 40))
    Y = np.array([rng.multinomial(5, [0.5, 0.3, 0.2]) for _ in range(40)])
    with pytest.raises(ValueError, match=r"2 classes.*'cat', 'dog'.*y_true has 3"):
        get_human_scorer("neg_kl_divergence")(est, X, Y)
    scorer = get_human_scorer("neg_kl_divergence")
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = scorer.set_score_request(counts=True)
        with pytest.raises(ValueError, match=r"2 classes.*counts has 3"):
            scorer(est, X, np.array(["cat"] * 40), counts=Y)


def test_scorer_refuses_to_request_metadata_its_metric_does_not_take():
    # Before: scikit-learn's set_score_request accepted sample_weight for a
    # metric without it, and every cross-validation fold scored NaN.
    import sklearn
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_validate

    from sklearn_hcal.metrics import get_human_scorer

    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 2))
    Y = rng.multinomial(5, [0.5, 0.3, 0.2], size=60)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = get_human_scorer("neg_kl_divergence")
        with pytest.raises(ValueError, match="does not take 'sample_weight'"):
            scorer.set_score_request(sample_weight=True)
        # declining it, and requesting what the metric takes, still work
        scorer.set_score_request(sample_weight=False, counts=True)
        weighted = get_human_scorer("neg_expected_squared_loss").set_score_request(
            sample_weight=True
        )
        w = rng.uniform(0.5, 2.0, 60)
        scores = cross_validate(
            LogisticRegression().set_fit_request(sample_weight=False),
            X,
            Y.argmax(axis=1),
            scoring=weighted,
            params={"sample_weight": w},
            cv=3,
            error_score="raise",
        )["test_score"]
    assert np.all(np.isfinite(scores))


def test_bootstrap_of_a_single_item_warns():
    from sklearn_hcal.metrics import human_calibration_report

    Y = np.array([[3, 1, 1]])
    P = np.array([[0.5, 0.3, 0.2]])
    with pytest.warns(UserWarning, match="zero width"):
        report = human_calibration_report(
            Y, {"m": P}, metrics=["jsd"], n_bootstrap=10, random_state=0
        )
    assert report.loc["m", "jsd_low"] == report.loc["m", "jsd_high"]


def test_bootstrap_intervals_stay_within_each_metric_range():
    # Bias-corrected intervals shift the percentiles by mean(replicates) -
    # estimate: on 5 items the entropy correlation's upper end was 1.028.
    from scipy.stats import pearsonr

    from sklearn_hcal.metrics import human_calibration_report
    from sklearn_hcal.metrics._registry import get_metric

    Y = np.array([[5, 0, 0], [4, 1, 0], [3, 1, 1], [2, 2, 1], [2, 1, 2]])
    P = np.array(
        [
            [0.98, 0.01, 0.01],
            [0.8, 0.15, 0.05],
            [0.6, 0.3, 0.1],
            [0.4, 0.35, 0.25],
            [0.34, 0.33, 0.33],
        ]
    )
    metrics = ["entropy_corr", "accuracy", "soft_accuracy", "jsd", "dist_ce"]
    report = human_calibration_report(
        Y, {"m": P}, metrics=metrics, n_bootstrap=400, random_state=0
    )
    for name in metrics:
        lo, hi = get_metric(name).bounds
        low, high = report.loc["m", f"{name}_low"], report.loc["m", f"{name}_high"]
        assert (lo is None or low >= lo) and (hi is None or high <= hi), name
    # the point estimate itself is untouched (scipy's Pearson r)
    H = lambda A: -(A * np.log(np.where(A > 0, A, 1))).sum(axis=1)  # noqa: E731
    r = pearsonr(H(Y / Y.sum(1, keepdims=True)), H(P)).statistic
    assert report.loc["m", "entropy_corr"] == pytest.approx(r, rel=1e-12)
    assert report.loc["m", "entropy_corr_high"] == 1.0  # clipped, was above


def test_declared_bounds_hold_on_random_inputs():
    # The registry's bounds are facts about the metrics, not of a data set:
    # check them on random histograms and predictions, extreme ones included.
    from sklearn_hcal.metrics._registry import get_metric, metrics

    rng = np.random.RandomState(0)
    bounded = [n for n in metrics() if get_metric(n).bounds != (None, None)]
    assert len(bounded) >= 15
    for trial in range(30):
        K = rng.randint(2, 6)
        Y = rng.multinomial(rng.randint(2, 8), rng.dirichlet(np.ones(K)), size=40)
        P = rng.dirichlet(np.full(K, [0.05, 1.0, 20.0][trial % 3]), size=40)
        P = np.clip(P, 1e-9, None)
        P /= P.sum(axis=1, keepdims=True)
        for name in bounded:
            m = get_metric(name)
            lo, hi = m.bounds
            try:
                value = m.function(Y, P, **m.kwargs)
            except ValueError as exc:  # a correlation of constant entropies
                assert "undefined" in str(exc), (name, exc)
                continue
            assert (lo is None or value >= lo - 1e-12) and (
                hi is None or value <= hi + 1e-12
            ), (name, value)


def test_disagreement_above_its_maximum_warns():
    # φ <= 1 - 1/K for any prediction over K classes; P(class 1) of a binary
    # classifier passed as φ (up to 1) was scored without a word.
    import warnings

    from sklearn_hcal.metrics import disagreement_squared_loss

    rng = np.random.RandomState(0)
    Y = rng.multinomial(4, [0.6, 0.4], size=50)
    p1 = rng.uniform(0.05, 0.95, size=50)
    with pytest.warns(UserWarning, match=r"above 1 - 1/K = 0\.5.*P\(class 1\)"):
        disagreement_squared_loss(Y, p1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        disagreement_squared_loss(Y, 2 * p1 * (1 - p1))  # the φ of p1: quiet
