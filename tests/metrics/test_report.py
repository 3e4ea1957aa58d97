"""Tests of the report functions (instance errors, decomposition, bins, tables).

Every report number is checked against the public metric function it stands
for, against scipy/numpy computations written here, against ChaosNLI's and
Baan et al.'s published numbers, or against a simulation with a known truth.
"""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy as scipy_entropy

from sklearn_hcal.datasets import load_chaosnli, make_label_histograms
from sklearn_hcal.metrics import (
    calibration_error,
    calibration_loss,
    classwise_expected_calibration_error,
    disagreement_calibration_error,
    disagreement_calibration_loss,
    disagreement_probability,
    disagreement_squared_loss,
    dispersion_loss,
    distribution_calibration_error,
    entropy_calibration_error,
    epistemic_loss,
    expected_calibration_error,
    expected_squared_loss,
    histogram_log_loss,
    human_calibration_report,
    instance_calibration_errors,
    jensen_shannon_distance,
    kl_divergence,
    loss_decomposition,
    majority_accuracy_score,
    metrics_by_agreement,
    predicted_disagreement,
    ranking_calibration_score,
)
from sklearn_hcal.metrics._bootstrap import resample_weights
from sklearn_hcal.metrics._registry import default_columns, get_metric
from tests.conftest import require_data
from tests.metrics._precision import float32_sums


def _resampled(weights):
    """The rows of a resample, from its item multiplicities."""
    return np.repeat(np.arange(len(weights)), weights.astype(np.intp))


# Report column -> the public function (and its arguments) it must reproduce.
PUBLIC = {
    "accuracy": majority_accuracy_score,
    "ece": expected_calibration_error,
    "classwise_ece": classwise_expected_calibration_error,
    "rank_cs": ranking_calibration_score,
    "ent_ce": entropy_calibration_error,
    "ent_ce_signed": lambda Y, P: entropy_calibration_error(Y, P, absolute=False),
    "dist_ce": distribution_calibration_error,
    "jsd": jensen_shannon_distance,
    "kl": kl_divergence,
    "log_loss": histogram_log_loss,
    "sq_loss": expected_squared_loss,
    "el": epistemic_loss,
    "el_plugin": lambda Y, P: epistemic_loss(Y, P, debiased=False),
    "cl": calibration_loss,
    "cl_plugin": lambda Y, P: calibration_loss(Y, P, debiased=False),
    "ce": calibration_error,
    "ce_plugin": lambda Y, P: calibration_error(Y, P, debiased=False),
    "dl": dispersion_loss,
    "dl_plugin": lambda Y, P: dispersion_loss(Y, P, debiased=False),
    "disagreement_sq_loss": lambda Y, P: disagreement_squared_loss(
        Y, predicted_disagreement(P)
    ),
    "disagreement_cl": lambda Y, P: disagreement_calibration_loss(
        Y, predicted_disagreement(P)
    ),
    "disagreement_ce": lambda Y, P: disagreement_calibration_error(
        Y, predicted_disagreement(P)
    ),
}
#: The report's default columns (their order is pinned, independently, in
#: tests/metrics/test_registry.py).
DEFAULT_COLUMNS = default_columns()


def _softmax(Z):
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def data():
    """Histograms with 1-6 annotations and three classifiers of varying quality."""
    rng = np.random.RandomState(0)
    n_ann = rng.randint(1, 7, size=300)
    Z, Y, Q = make_label_histograms(300, 3, n_ann, random_state=0)
    preds = {
        "truth": Q,
        "overconfident": _softmax(3 * Z),
        "noisy": _softmax(Z + rng.normal(scale=1.5, size=Z.shape)),
    }
    return Y, Q, preds


# --------------------------------------------------------------------------- #
# human_calibration_report
# --------------------------------------------------------------------------- #
def test_report_columns_equal_public_functions(data):
    Y, _, preds = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # single-annotation items
        report = human_calibration_report(Y, preds)
        full = human_calibration_report(Y, preds, metrics=list(PUBLIC))
    assert list(report.columns) == DEFAULT_COLUMNS
    assert list(report.index) == list(preds)
    assert report.index.name == "classifier"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name, P in preds.items():
            for metric, func in PUBLIC.items():
                expected = func(Y, P)
                assert full.loc[name, metric] == pytest.approx(
                    expected, rel=1e-12, abs=1e-14
                ), metric
                if metric in report:
                    assert report.loc[name, metric] == full.loc[name, metric]


def test_report_warns_once_for_single_annotations(data):
    Y, _, preds = data
    with pytest.warns(UserWarning, match="single annotation") as record:
        human_calibration_report(
            Y, preds, metrics=["el", "jsd"], n_bootstrap=50, random_state=0
        )
    # Not once per classifier or per resample.
    assert sum("single annotation" in str(w.message) for w in record) == 1


def test_report_single_array_and_binary_1d_probabilities():
    X, Y, Q = make_label_histograms(200, 2, 4, random_state=1)
    two_d = human_calibration_report(Y, {"m": Q})
    one_d = human_calibration_report(Y, Q[:, 1])
    assert list(one_d.index) == ["model"]
    np.testing.assert_allclose(one_d.to_numpy(), two_d.to_numpy(), rtol=1e-12)


def test_report_defaults_follow_what_the_labels_support():
    _, Y, Q = make_label_histograms(100, 3, 5, random_state=2)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    # Rows of probabilities: only the distribution-level metrics.
    report = human_calibration_report(p_hat, Q)
    assert list(report.columns) == DEFAULT_COLUMNS[:9]  # up to the log loss
    assert report.loc["model", "jsd"] == pytest.approx(jensen_shannon_distance(Y, Q))
    with pytest.raises(ValueError, match="'el' needs integer label counts"):
        human_calibration_report(p_hat, Q, metrics=["el"])
    # 1-D labels: counts, but no pair of annotators.
    labels = Y.argmax(axis=1)
    with pytest.warns(UserWarning, match="single annotation"):
        report = human_calibration_report(labels, Q)
    assert list(report.columns) == DEFAULT_COLUMNS[:14]
    with pytest.raises(ValueError, match="at least one item of n_i >= 2"):
        human_calibration_report(labels, Q, metrics=["disagreement_ce"])


def test_report_counts_keyword_and_dataframe_input():
    _, Y, Q = make_label_histograms(150, 3, 5, random_state=3)
    frame = pd.DataFrame(Y, columns=["e", "n", "c"])
    # not in sorted order: an unnamed Q needs labels= to follow the columns
    a = human_calibration_report(frame, {"q": Q}, labels=["e", "n", "c"])
    b = human_calibration_report(Y.argmax(axis=1), {"q": Q}, counts=Y)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.filterwarnings("ignore:.*single annotation:UserWarning")
def test_report_aligns_every_dataframe_prediction_by_name(data):
    # Regression: only the first prediction was aligned by name, so one
    # shuffled frame scored differently under two names (jsd 0.286 vs 0.353).
    Y, _, preds = data
    classes = ["e", "n", "c"]
    frame = pd.DataFrame(Y, columns=classes)
    P = preds["noisy"]
    shuffled = pd.DataFrame(P, columns=classes)[["c", "e", "n"]]
    in_order = pd.DataFrame(P, columns=classes)
    report = human_calibration_report(
        frame, {"m": shuffled, "n": shuffled, "array": in_order}
    )
    assert list(report.columns) == DEFAULT_COLUMNS
    assert report.loc["n"].equals(report.loc["m"])
    # the array, already in the labels' order, sums its columns in another
    # order than the reordered frame: equal to rounding
    np.testing.assert_allclose(
        report.loc["array"].to_numpy(), report.loc["m"].to_numpy(), rtol=1e-12
    )
    for column in DEFAULT_COLUMNS:
        assert report.loc["m", column] == pytest.approx(
            PUBLIC[column](Y, P), rel=1e-12, abs=1e-15
        ), column
    # independently of the package: scipy's distance in the labels' order
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    want = np.mean([jensenshannon(a, b) for a, b in zip(p_hat, P)])
    assert report.loc["n", "jsd"] == pytest.approx(want, rel=1e-12)
    # the per-item table and the agreement bins take the same path
    errors = instance_calibration_errors(frame, shuffled)
    assert errors["jsd"].mean() == pytest.approx(want, rel=1e-12)
    pd.testing.assert_frame_equal(
        loss_decomposition(frame, shuffled), loss_decomposition(Y, P), rtol=1e-12
    )
    kw = {"metrics": ["jsd", "accuracy"], "n_bins": 3, "strategy": "uniform"}
    pd.testing.assert_frame_equal(
        metrics_by_agreement(frame, shuffled, **kw),
        metrics_by_agreement(Y, P, **kw),
        rtol=1e-12,
    )


def test_report_refuses_predictions_naming_unnamed_labels_differently(data):
    # Regression: with an array y_true, the first DataFrame prediction's
    # names were taken for y_true's and later ones reordered to them, so the
    # report disagreed with the metric function (which reads each prediction
    # by position) for one of them -- and which one is right is a guess.
    Y, _, preds = data
    P = preds["noisy"]
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    abc = pd.DataFrame(P, columns=["a", "b", "c"])
    cab = pd.DataFrame(P[:, [2, 0, 1]], columns=["c", "a", "b"])
    with pytest.raises(ValueError, match=r"predictions\['cab'\] names its.*ambiguous"):
        human_calibration_report(Y, {"abc": abc, "cab": cab}, metrics=["jsd"])
    with pytest.raises(ValueError, match="ambiguous"):
        human_calibration_report(Y, {"array": P, "abc": abc, "cab": cab})
    # the same names in the same order: positional, as the metric functions
    report = human_calibration_report(Y, {"abc": abc, "again": abc}, metrics=["jsd"])
    want = np.mean([jensenshannon(a, b) for a, b in zip(p_hat, P)])
    assert report.loc["again", "jsd"] == pytest.approx(want, rel=1e-12)
    # named labels decide: both predictions are the same classifier
    frame = pd.DataFrame(Y, columns=["a", "b", "c"])
    named = human_calibration_report(frame, {"abc": abc, "cab": cab}, metrics=["jsd"])
    assert named.loc["cab", "jsd"] == pytest.approx(want, rel=1e-12)


def test_report_and_tables_take_labels_for_1d_string_labels():
    # labels= names the columns of every prediction, in any order (not the
    # sorted one that 1-D labels would otherwise map to).
    rng = np.random.RandomState(7)
    labels = ["neutral", "entailment", "contradiction"]
    P = rng.dirichlet(np.ones(3), size=120)
    Q = rng.dirichlet(np.ones(3), size=120)
    y = np.asarray(labels)[rng.randint(0, 3, size=120)]
    report = human_calibration_report(
        y, {"p": P, "q": Q}, labels=labels, metrics=["accuracy", "log_loss", "jsd"]
    )
    # independent: scikit-learn's metrics take the columns in sorted order
    from sklearn.metrics import accuracy_score, log_loss

    order = np.argsort(labels)
    for name, probs in (("p", P), ("q", Q)):
        sorted_probs = probs[:, order]
        predicted = np.asarray(labels)[probs.argmax(axis=1)]
        assert report.loc[name, "accuracy"] == pytest.approx(
            accuracy_score(y, predicted), rel=1e-12
        )
        assert report.loc[name, "log_loss"] == pytest.approx(
            log_loss(y, sorted_probs), rel=1e-12
        )
        assert report.loc[name, "jsd"] == pytest.approx(
            jensen_shannon_distance(y, probs, labels=labels), rel=1e-12
        )
    # without labels= the sorted labels would name the columns: another value
    plain = human_calibration_report(y, {"p": P}, metrics=["log_loss"])
    assert plain.loc["p", "log_loss"] != pytest.approx(report.loc["p", "log_loss"])
    errors = instance_calibration_errors(y, P, labels=labels)
    assert errors["majority_correct"].mean() == report.loc["p", "accuracy"]
    with pytest.warns(UserWarning, match="single annotation"):
        terms = loss_decomposition(y, P, labels=labels)
    assert terms.loc["L", "plugin"] == pytest.approx(
        expected_squared_loss(y, P, labels=labels), rel=1e-12
    )
    bins = metrics_by_agreement(y, P, labels=labels, n_bins=1, metrics=["log_loss"])
    assert bins.loc[0, "log_loss"] == pytest.approx(log_loss(y, P[:, order]))
    with pytest.raises(ValueError, match="labels"):
        human_calibration_report(y, {"p": P}, labels=labels[:2])


def test_report_log_loss_on_rounded_human_probability_rows(data):
    # Rows of human probabilities rounded to 3 decimals do not sum to 1: the
    # report must average the renormalised rows' cross-entropy, as
    # histogram_log_loss does, not weigh each row by its rounding error.
    Y, _, preds = data
    rounded = (Y / Y.sum(axis=1, keepdims=True)).round(3)
    assert np.abs(rounded.sum(axis=1) - 1).max() > 0
    P = preds["noisy"]
    report = human_calibration_report(rounded, {"noisy": P}, metrics=["log_loss"])
    p_hat = rounded / rounded.sum(axis=1, keepdims=True)
    want = np.mean(-(p_hat * np.log(P)).sum(axis=1))
    assert report.loc["noisy", "log_loss"] == pytest.approx(want, rel=1e-12)
    assert report.loc["noisy", "log_loss"] == pytest.approx(
        histogram_log_loss(rounded, P), rel=1e-12
    )


def test_report_reproduces_chaosnli_chance_and_baan_oracle():
    data = load_chaosnli("snli", path=require_data("chaosnli_v1.0"))
    Y = data.counts
    chance = np.full(Y.shape, 1 / 3)
    oracle = Y / Y.sum(axis=1, keepdims=True)
    report = human_calibration_report(Y, {"chance": chance, "oracle": oracle})
    # ChaosNLI Table 5, "Chance" row on ChaosNLI-S.
    assert report.loc["chance", "jsd"] == pytest.approx(0.383, abs=5e-4)
    assert report.loc["chance", "kl"] == pytest.approx(0.5457, abs=5e-4)
    # Baan et al. Table 1, "Oracle" column.
    assert report.loc["oracle", "ece"] == pytest.approx(0.245, abs=1e-3)
    assert report.loc["oracle", "accuracy"] == 1.0
    assert report.loc["oracle", "rank_cs"] == 1.0
    assert report.loc["oracle", "ent_ce"] == 0.0
    assert report.loc["oracle", "dist_ce"] == 0.0


# --------------------------------------------------------------------------- #
# bootstrap
# --------------------------------------------------------------------------- #
#: Default columns that are means over items (per-item hooks, not binned).
MEAN_TYPE = [c for c in DEFAULT_COLUMNS if get_metric(c).per_item is not None]


def test_bootstrap_intervals_contain_point_and_are_reproducible(data):
    Y, _, preds = data
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", UserWarning)
        r1 = human_calibration_report(Y, preds, n_bootstrap=60, random_state=0)
        r2 = human_calibration_report(Y, preds, n_bootstrap=60, random_state=0)
        r3 = human_calibration_report(Y, preds, n_bootstrap=60, random_state=1)
    pd.testing.assert_frame_equal(r1, r2)
    assert not np.allclose(r1["jsd_low"], r3["jsd_low"])
    expected = [c for m in DEFAULT_COLUMNS for c in (m, f"{m}_low", f"{m}_high")]
    assert list(r1.columns) == expected
    for m in DEFAULT_COLUMNS:
        assert np.all(r1[f"{m}_low"] < r1[f"{m}_high"]), m
    for m in MEAN_TYPE:
        assert np.all(r1[f"{m}_low"] <= r1[m]), m
        assert np.all(r1[m] <= r1[f"{m}_high"]), m
    # With the default bias-corrected intervals every column contains its
    # estimate, the debiased binned ones included.
    for m in DEFAULT_COLUMNS:
        assert np.all(r1[f"{m}_low"] <= r1[m]) and np.all(r1[m] <= r1[f"{m}_high"]), m
    assert not [str(w.message) for w in record if "do not contain" in str(w.message)]
    assert r1.attrs == {
        "n_samples": 300,
        "n_bootstrap": 60,
        "confidence_level": 0.95,
        "ci_method": "bias_corrected",
    }
    # The plain percentile interval of the debiased CL of the true distributions
    # (~0) sits above the estimate: resamples keep each item's labels, so the
    # label noise the estimator removes is added back once. The report says so.
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", UserWarning)
        rp = human_calibration_report(
            Y, preds, n_bootstrap=60, random_state=0, ci_method="percentile"
        )
    outside = [
        m
        for m in DEFAULT_COLUMNS
        if np.any((rp[m] < rp[f"{m}_low"]) | (rp[m] > rp[f"{m}_high"]))
    ]
    assert "cl" in outside and not set(outside) & set(MEAN_TYPE)
    shifted = [str(w.message) for w in record if "do not contain" in str(w.message)]
    assert len(shifted) == 1
    assert all(f"'{m}'" in shifted[0] for m in outside)
    # Bias correction only shifts: same widths as the percentile intervals.
    for m in DEFAULT_COLUMNS:
        np.testing.assert_allclose(
            r1[f"{m}_high"] - r1[f"{m}_low"], rp[f"{m}_high"] - rp[f"{m}_low"]
        )
    # Export keeps one header line.
    assert r1.to_csv().splitlines()[0].startswith("classifier,accuracy,accuracy_low")


def test_bootstrap_replicates_are_the_metrics_of_shared_resamples(data):
    Y, _, preds = data
    seed, n = 7, Y.shape[0]
    metrics = ["jsd", "log_loss", "ece", "cl", "disagreement_ce"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        report, reps = human_calibration_report(
            Y,
            {**preds, "copy": preds["noisy"]},
            metrics=metrics,
            n_bootstrap=4,
            random_state=seed,
            return_bootstrap=True,
        )
    assert reps.shape == (4 * 4, len(metrics))
    assert reps.index.names == ["resample", "classifier"]
    # Same resamples for every classifier: an identical classifier gives
    # identical replicates (paired differences exactly 0).
    diff = reps.xs("copy", level="classifier") - reps.xs("noisy", level="classifier")
    assert np.all(diff.to_numpy() == 0)
    # Resample b draws the items of row b of resample_weights; each
    # replicate is the public metric on those items.
    W = resample_weights(seed, n, 4)
    for b in range(4):
        idx = _resampled(W[b])
        for name, P in preds.items():
            for metric in metrics:
                expected = PUBLIC[metric](Y[idx], P[idx])
                tol = float32_sums(n)  # float32 products
                assert reps.loc[(b, name), metric] == pytest.approx(
                    expected, rel=tol["rtol"], abs=tol["atol"]
                ), (metric, name, b)


def test_bootstrap_width_shrinks_like_one_over_sqrt_n():
    def widths(n):
        _, Y, Q = make_label_histograms(n, 3, 5, random_state=n)
        P = _softmax(np.log(Q) * 2)
        r = human_calibration_report(
            Y, P, metrics=["dist_ce", "jsd"], n_bootstrap=400, random_state=0
        )
        got = np.array([r[f"{m}_high"] - r[f"{m}_low"] for m in ("dist_ce", "jsd")])
        # Normal theory for a mean: 2 * 1.96 * sd(per-item values) / sqrt(n).
        items = instance_calibration_errors(Y, P)
        sd = items[["dist_ce", "jsd"]].std().to_numpy()
        return got[:, 0], 2 * 1.96 * sd / np.sqrt(n)

    small, small_theory = widths(500)
    large, large_theory = widths(2000)
    np.testing.assert_allclose(small / small_theory, 1.0, atol=0.15)
    np.testing.assert_allclose(large / large_theory, 1.0, atol=0.15)
    # 4x the items: half the width.
    assert np.mean(large / small) == pytest.approx(0.5, abs=0.1)


def test_bootstrap_coverage_on_known_truth():
    # One annotation per item, labels ~ Bernoulli(theta), the model always
    # predicts class 0: accuracy is a binomial proportion with mean 1 - theta.
    rng = np.random.RandomState(0)
    theta, n, reps, level = 0.3, 120, 150, 0.9
    P = np.tile([0.8, 0.2], (n, 1))
    covered = 0
    for r in range(reps):
        labels = (rng.uniform(size=n) < theta).astype(int)
        report = human_calibration_report(
            np.eye(2)[labels],
            P,
            metrics=["accuracy"],
            n_bootstrap=200,
            confidence_level=level,
            random_state=r,
        )
        covered += (
            report["accuracy_low"].iloc[0]
            <= 1 - theta
            <= report["accuracy_high"].iloc[0]
        )
    # Binomial sd of the coverage estimate ~ 0.025; percentile intervals of a
    # proportion at n=120 slightly under-cover.
    assert 0.8 <= covered / reps <= 0.97


def test_bootstrap_metric_undefined_on_some_resamples():
    # Only two items have two annotations: some resamples miss both, where the
    # disagreement loss is undefined; they are left out, not NaN everywhere.
    Y = np.zeros((30, 2), dtype=int)
    Y[:, 0] = 1
    Y[:2] = [[1, 1], [2, 0]]
    P = np.tile([0.6, 0.4], (30, 1))
    _, reps = human_calibration_report(
        Y,
        P,
        metrics=["disagreement_sq_loss"],
        n_bootstrap=200,
        random_state=0,
        return_bootstrap=True,
    )
    values = reps["disagreement_sq_loss"].to_numpy()
    assert 0 < np.isnan(values).sum() < 200
    report = human_calibration_report(
        Y, P, metrics=["disagreement_sq_loss"], n_bootstrap=200, random_state=0
    )
    assert np.isfinite(report.to_numpy()).all()


# --------------------------------------------------------------------------- #
# instance_calibration_errors
# --------------------------------------------------------------------------- #
def test_instance_errors_against_scipy_and_aggregates(data):
    Y, _, preds = data
    P = preds["noisy"]
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    errors = instance_calibration_errors(Y, P)
    assert list(errors.columns) == [
        "dist_ce",
        "ent_ce",
        "jsd",
        "kl",
        "human_entropy",
        "model_entropy",
        "rank_match",
        "majority_correct",
        "human_disagreement",
        "n_annotations",
    ]
    np.testing.assert_allclose(errors["dist_ce"], 0.5 * np.abs(P - p_hat).sum(1))
    np.testing.assert_allclose(errors["jsd"], jensenshannon(p_hat, P, axis=1))
    np.testing.assert_allclose(errors["kl"], scipy_entropy(p_hat, P, axis=1))
    np.testing.assert_allclose(errors["human_entropy"], scipy_entropy(p_hat, axis=1))
    np.testing.assert_allclose(errors["model_entropy"], scipy_entropy(P, axis=1))
    np.testing.assert_allclose(
        errors["ent_ce"], errors["model_entropy"] - errors["human_entropy"]
    )
    np.testing.assert_array_equal(errors["n_annotations"], Y.sum(axis=1))
    # The means are the aggregate metrics.
    assert errors["dist_ce"].mean() == pytest.approx(
        distribution_calibration_error(Y, P)
    )
    assert errors["ent_ce"].abs().mean() == pytest.approx(
        entropy_calibration_error(Y, P)
    )
    assert errors["ent_ce"].mean() == pytest.approx(
        entropy_calibration_error(Y, P, absolute=False)
    )
    assert errors["jsd"].mean() == pytest.approx(jensen_shannon_distance(Y, P))
    assert errors["kl"].mean() == pytest.approx(kl_divergence(Y, P))
    assert errors["rank_match"].mean() == ranking_calibration_score(Y, P)
    assert errors["majority_correct"].mean() == majority_accuracy_score(Y, P)
    np.testing.assert_array_equal(
        errors["human_disagreement"], disagreement_probability(Y)
    )


def test_instance_disagreement_counts_pairs_of_annotators():
    Y = np.array([[2, 1, 0], [1, 1, 1], [3, 0, 0], [0, 1, 0], [4, 2, 1]])
    P = np.full((5, 3), 1 / 3)
    errors = instance_calibration_errors(Y, P)
    for i, row in enumerate(Y):
        labels = np.repeat(np.arange(3), row)
        pairs = list(itertools.permutations(range(len(labels)), 2))
        if not pairs:
            assert np.isnan(errors["human_disagreement"].iloc[i])
            continue
        frac = np.mean([labels[a] != labels[b] for a, b in pairs])
        assert errors["human_disagreement"].iloc[i] == pytest.approx(frac)
    # From probability rows: the disagreement of that distribution.
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    p_hat[1] = [0.2, 0.3, 0.5]
    from_probs = instance_calibration_errors(p_hat, P)
    np.testing.assert_allclose(
        from_probs["human_disagreement"], 1 - (p_hat**2).sum(axis=1)
    )
    assert from_probs["n_annotations"].isna().all()


def test_instance_errors_index():
    Y = pd.DataFrame([[3, 1], [0, 4], [2, 2]], index=["a", "b", "c"])
    P = np.array([[0.5, 0.5], [0.1, 0.9], [0.3, 0.7]])
    assert list(instance_calibration_errors(Y, P).index) == ["a", "b", "c"]
    counts_index = instance_calibration_errors([0, 1, 1], P, counts=Y).index
    assert list(counts_index) == ["a", "b", "c"]
    assert list(instance_calibration_errors(Y.to_numpy(), P).index) == [0, 1, 2]
    assert list(instance_calibration_errors(Y, P, index=[7, 8, 9]).index) == [7, 8, 9]
    with pytest.raises(ValueError, match="index has 2 entries"):
        instance_calibration_errors(Y, P, index=[1, 2])


# --------------------------------------------------------------------------- #
# loss_decomposition
# --------------------------------------------------------------------------- #
def test_loss_decomposition_terms_and_identities(data):
    Y, _, preds = data
    P = preds["overconfident"]
    with pytest.warns(UserWarning, match="single annotation"):
        table = loss_decomposition(Y, P)
    assert list(table.index) == ["L", "EL", "IL", "CL", "DL", "CE"]
    assert list(table.columns) == ["plugin", "debiased"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for debiased, col in ((False, "plugin"), (True, "debiased")):
            assert table.loc["EL", col] == pytest.approx(
                epistemic_loss(Y, P, debiased=debiased)
            )
            assert table.loc["CL", col] == pytest.approx(
                calibration_loss(Y, P, debiased=debiased)
            )
            assert table.loc["DL", col] == pytest.approx(
                dispersion_loss(Y, P, debiased=debiased)
            )
            assert table.loc["CE", col] == pytest.approx(
                calibration_error(Y, P, debiased=debiased)
            )
            assert table.loc["L", col] == pytest.approx(expected_squared_loss(Y, P))
    # Identities.
    pl, db = table["plugin"], table["debiased"]
    assert pl["EL"] == pytest.approx(pl["CL"] + pl["DL"], rel=1e-12)
    assert pl["L"] == pytest.approx(pl["EL"] + pl["IL"], rel=1e-12)
    assert db["L"] == pytest.approx(db["EL"] + db["IL"], rel=1e-12)
    # IL from the human side alone: plug-in Gini-Simpson, and the unbiased
    # pair disagreement (items with one annotation contribute 0).
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    assert pl["IL"] == pytest.approx(np.mean(1 - (p_hat**2).sum(axis=1)))
    mu = np.nan_to_num(disagreement_probability(Y), nan=0.0)
    assert db["IL"] == pytest.approx(mu.mean())


def test_loss_decomposition_debiased_identity_without_singleton_bins():
    _, Y, Q = make_label_histograms(3000, 3, 5, random_state=4)
    table = loss_decomposition(Y, Q, n_bins=3)
    db = table["debiased"]
    assert db["EL"] == pytest.approx(db["CL"] + db["DL"], rel=1e-10)
    # q = truth: the debiased EL is ~0 while the plug-in is biased upwards.
    assert abs(db["EL"]) < 0.01 < table.loc["EL", "plugin"]


def test_loss_decomposition_rejects_probabilities():
    with pytest.raises(ValueError, match="integer label counts"):
        loss_decomposition([[0.3, 0.7]], [[0.5, 0.5]])


# --------------------------------------------------------------------------- #
# metrics_by_agreement
# --------------------------------------------------------------------------- #
def _direct_bins(H, edges):
    """Membership ``[a, b)``, the last bin ``[a, b]``, with explicit masks."""
    out = []
    for b in range(len(edges) - 1):
        upper = H <= edges[b + 1] if b == len(edges) - 2 else H < edges[b + 1]
        out.append(np.flatnonzero((H >= edges[b]) & upper))
    return out


@pytest.mark.parametrize("strategy", ["quantile", "uniform"])
def test_metrics_by_agreement_on_chaosnli_snli(strategy):
    data = load_chaosnli("snli", path=require_data("chaosnli_v1.0"))
    Y = data.counts
    rng = np.random.RandomState(0)
    P = _softmax(np.log(Y + 1.0) + rng.normal(size=Y.shape))
    table = metrics_by_agreement(Y, P, strategy=strategy)
    assert list(table.columns) == [
        "entropy_low",
        "entropy_high",
        "n_items",
        "mean_entropy",
        "jsd",
        "kl",
        "accuracy",
    ]
    H = scipy_entropy(Y, base=2, axis=1)
    # The shipped base-2 entropy field is the same quantity.
    np.testing.assert_allclose(H, data.entropy, atol=1e-6)
    if strategy == "quantile":
        edges = np.quantile(H, [0, 0.2, 0.4, 0.6, 0.8, 1.0])
    else:
        edges = np.linspace(H.min(), H.max(), 6)
    np.testing.assert_allclose(table["entropy_low"], edges[:-1])
    np.testing.assert_allclose(table["entropy_high"], edges[1:])
    members = _direct_bins(H, edges)
    # The bins partition the items.
    assert np.array_equal(np.sort(np.concatenate(members)), np.arange(len(Y)))
    assert table["n_items"].sum() == len(Y)
    for b, items in enumerate(members):
        assert table.loc[b, "n_items"] == len(items)
        assert table.loc[b, "mean_entropy"] == pytest.approx(H[items].mean())
        assert table.loc[b, "jsd"] == pytest.approx(
            jensen_shannon_distance(Y[items], P[items])
        )
        assert table.loc[b, "kl"] == pytest.approx(kl_divergence(Y[items], P[items]))
        assert table.loc[b, "accuracy"] == pytest.approx(
            majority_accuracy_score(Y[items], P[items])
        )
    if strategy == "quantile":
        # Roughly equal bins, and models do worse where humans disagree
        # (ChaosNLI §5.4).
        assert table["n_items"].min() >= 0.15 * len(Y)
        assert table["jsd"].iloc[-1] > table["jsd"].iloc[0]


def test_metrics_by_agreement_other_metrics_and_empty_bins():
    # Half the items are unanimous (entropy 0): quantile edges repeat.
    Y = np.array([[5, 0, 0]] * 6 + [[3, 1, 1], [2, 2, 1], [1, 2, 2], [4, 1, 0]])
    P = np.tile([0.7, 0.2, 0.1], (10, 1))
    with pytest.warns(UserWarning, match="empty"):
        table = metrics_by_agreement(Y, P, n_bins=4, metrics=["dist_ce", "el"])
    assert table["n_items"].sum() == 10
    assert (table["n_items"] == 0).any()
    empty = table["n_items"] == 0
    assert table.loc[empty, "dist_ce"].isna().all()
    H = scipy_entropy(Y, base=2, axis=1)
    for b, items in enumerate(_direct_bins(H, np.quantile(H, [0, 0.25, 0.5, 0.75, 1]))):
        if len(items):
            assert table.loc[b, "el"] == pytest.approx(
                epistemic_loss(Y[items], P[items])
            )


# --------------------------------------------------------------------------- #
# bad input
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"predictions": {}}, "empty dict"),
        (
            {"predictions": {1: np.full((4, 3), 1 / 3), "1": np.eye(3)[[0, 1, 2, 0]]}},
            "unique names",
        ),
        ({"predictions": {"a": np.full((5, 3), 1 / 3)}}, "different numbers"),
        ({"predictions": {"a": np.full((4, 2), 0.5)}}, "class"),
        (
            {"predictions": {"a": np.full((4, 3), 1 / 3), "b": np.full((5, 3), 1 / 3)}},
            "5 samples",
        ),
        ({"predictions": {"a": np.full((4, 3), 0.5)}}, "sum to 1"),
        ({"metrics": ["jsd", "nope"]}, "not a report metric"),
        ({"metrics": []}, "metrics is empty"),
        ({"n_bootstrap": -1}, "n_bootstrap"),
        ({"confidence_level": 1.0}, "confidence_level"),
        ({"random_state": "x"}, "random_state"),
    ],
)
def test_report_bad_input(kwargs, match):
    Y = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1], [4, 0, 0]])
    args = {"predictions": {"a": np.full((4, 3), 1 / 3)}, **kwargs}
    with pytest.raises(ValueError, match=match):
        human_calibration_report(Y, **args)


def test_bad_human_labels_and_arguments():
    P = np.full((2, 2), 0.5)
    with pytest.raises(ValueError, match="NaN"):
        instance_calibration_errors([[1, np.nan], [1, 1]], P)
    with pytest.raises(ValueError, match="zero annotations"):
        human_calibration_report([[0, 0], [1, 1]], P)
    with pytest.raises(ValueError, match="negative"):
        loss_decomposition([[-1, 2], [1, 1]], P)
    with pytest.raises(ValueError, match="strategy"):
        metrics_by_agreement([[1, 1], [2, 0]], P, strategy="kmeans")
    with pytest.raises(ValueError, match="n_bins"):
        metrics_by_agreement([[1, 1], [2, 0]], P, n_bins=0)
    with pytest.raises(ValueError, match="n_bins"):
        loss_decomposition([[1, 1], [2, 0]], P, n_bins=0)


def test_bias_corrected_interval_covers_the_true_calibration_loss():
    # Known truth: fixed items with true distributions Q and an over-confident
    # model q; the true class-wise binned CL (15 bins on q) is computed from Q
    # directly, and each replicate redraws 5 labels per item from Q.
    from scipy.special import softmax

    from sklearn_hcal.datasets._synthetic import _multinomial_rows

    Z, _, Q = make_label_histograms(600, 3, 5, random_state=0)
    q = softmax(Z / 0.6, axis=1)
    bins = np.minimum((q * 15).astype(int), 14)
    truth = 0.0
    for k in range(3):
        for j in range(15):
            m = bins[:, k] == j
            if m.any():
                truth += m.mean() * (Q[m, k].mean() - q[m, k].mean()) ** 2
    rng = np.random.RandomState(1)
    n_rep, hits = 60, 0
    for r in range(n_rep):
        Y = _multinomial_rows(rng, np.full(600, 5), Q)
        rep = human_calibration_report(
            Y,
            {"m": q},
            metrics=["cl"],
            n_bootstrap=200,
            confidence_level=0.9,
            random_state=r,
        )
        hits += rep["cl_low"].iloc[0] <= truth <= rep["cl_high"].iloc[0]
    # Nominal 0.9; 3 binomial standard errors with 60 replicates is 0.116.
    assert hits / n_rep >= 0.9 - 3 * np.sqrt(0.09 / n_rep)


# --------------------------------------------------------------------------- #
# the bootstrap as matrix products, against a naive per-resample loop
# --------------------------------------------------------------------------- #
def test_bootstrap_equals_naive_loop_of_public_functions_for_every_column(data):
    from sklearn_hcal.metrics._registry import metrics

    Y, _, preds = data
    preds = {"noisy": preds["noisy"], "over": preds["overconfident"]}
    phi = 0.7 * predicted_disagreement(preds["over"])  # "over" has its own φ
    columns = [c for c in metrics() if c not in ("il", "il_plugin")]
    seed, n, B = 11, Y.shape[0], 6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _, reps = human_calibration_report(
            Y,
            preds,
            metrics=columns,
            disagreement={"over": phi},
            n_bootstrap=B,
            random_state=seed,
            return_bootstrap=True,
        )
        W = resample_weights(seed, n, B)
        for b in range(B):
            idx = _resampled(W[b])  # the rows of resample b
            for name, P in preds.items():
                for column in columns:
                    m = metrics()[column]
                    pred = P[idx]
                    if m.response == "disagreement":
                        pred = (
                            phi[idx] if name == "over" else predicted_disagreement(pred)
                        )
                    expected = m.function(Y[idx], pred, **m.kwargs)
                    tol = float32_sums(n)  # float32 products
                    assert reps.loc[(b, name), column] == pytest.approx(
                        expected, rel=tol["rtol"], abs=tol["atol"]
                    ), (column, name, b)


@pytest.mark.filterwarnings(
    "ignore:y_disagreement reaches:UserWarning"
)  # φ values by hand, beyond 1 - 1/K on purpose
def test_disagreement_argument_is_validated_and_used(data):
    Y, _, preds = data
    P = preds["noisy"]
    phi = np.linspace(0.0, 1.0, Y.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        report = human_calibration_report(Y, {"a": P, "b": P}, disagreement={"a": phi})
    assert report.loc["a", "disagreement_sq_loss"] == pytest.approx(
        disagreement_squared_loss(Y, phi), rel=1e-12
    )
    assert report.loc["b", "disagreement_sq_loss"] == pytest.approx(
        disagreement_squared_loss(Y, predicted_disagreement(P)), rel=1e-12
    )
    # φ and the class probabilities are one model's: shared columns agree
    assert report.loc["a", "jsd"] == report.loc["b", "jsd"]
    with pytest.raises(ValueError, match="not in predictions"):
        human_calibration_report(Y, {"a": P}, disagreement={"z": phi})
    bad = phi.copy()
    bad[3] = 1.5
    with pytest.raises(ValueError, match=r"disagreement\['a'\]"):
        human_calibration_report(
            Y, {"a": P}, disagreement={"a": bad}, metrics=["disagreement_sq_loss"]
        )
    with pytest.warns(UserWarning, match="no disagreement metric is computed"):
        human_calibration_report(Y, {"a": P}, disagreement={"a": phi}, metrics=["jsd"])


def test_bin_counts_are_parameters(data):
    Y, _, preds = data
    P = preds["noisy"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        report = human_calibration_report(
            Y,
            P,
            metrics=["ece", "classwise_ece", "cl", "dl", "disagreement_ce"],
            metric_params={
                "ece": {"n_bins": 15},
                "classwise_ece": {"n_bins": 5},
                "cl": {"n_bins": 10},
                "dl": {"n_bins": 10},
                "disagreement_ce": {"n_bins": 5},
            },
        )
        row = report.loc["model"]
        assert row["ece"] == pytest.approx(
            expected_calibration_error(Y, P, n_bins=15), rel=1e-12
        )
        assert row["classwise_ece"] == pytest.approx(
            classwise_expected_calibration_error(Y, P, n_bins=5), rel=1e-12
        )
        assert row["cl"] == pytest.approx(calibration_loss(Y, P, n_bins=10), rel=1e-12)
        assert row["dl"] == pytest.approx(dispersion_loss(Y, P, n_bins=10), rel=1e-12)
        assert row["disagreement_ce"] == pytest.approx(
            disagreement_calibration_error(Y, predicted_disagreement(P), n_bins=5),
            rel=1e-12,
        )
    # and they change the numbers (the test can fail)
    assert row["ece"] != pytest.approx(expected_calibration_error(Y, P))


def test_verbose_bootstrap_shows_progress_on_stderr(data, capsys):
    Y, _, preds = data
    human_calibration_report(
        Y, preds["noisy"], metrics=["jsd"], n_bootstrap=200, random_state=0, verbose=1
    )
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert lines and lines[-1].endswith("bootstrap resamples 200/200")
    human_calibration_report(
        Y, preds["noisy"], metrics=["jsd"], n_bootstrap=20, random_state=0
    )
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 65537])
def test_resamples_are_multinomial_counts_of_their_seed(n):
    W = resample_weights(5, n, 70)  # two chunks of streams for small n
    assert W.shape == (70, n)
    np.testing.assert_array_equal(W.sum(axis=1), n)
    assert W.min() >= 0 and np.all(W == np.round(W))
    np.testing.assert_array_equal(W, resample_weights(5, n, 70))  # a seed
    assert not np.array_equal(W, resample_weights(6, n, 70)) or n == 1
    # the first resamples do not depend on how many are drawn
    np.testing.assert_array_equal(resample_weights(5, n, 3), W[:3])
    # an instance gives its stream: two calls draw other resamples
    rng = np.random.default_rng(0)
    if n > 1:
        assert not np.array_equal(
            resample_weights(rng, n, 2), resample_weights(rng, n, 2)
        )
        assert not np.array_equal(
            resample_weights(np.random.RandomState(0), n, 2), W[:2]
        )


def test_resample_weights_have_the_multinomial_distribution():
    # Multinomial(N, 1/N): mean 1, variance 1 - 1/N, covariance -1/N per
    # pair of items; 4000 resamples of N = 50 pin them to a few percent.
    n, B = 50, 4000
    W = resample_weights(0, n, B)
    assert W.mean() == pytest.approx(1.0, abs=0.01)
    assert W.var(axis=0).mean() == pytest.approx(1 - 1 / n, rel=0.03)
    cov = np.cov(W, rowvar=False)
    off = cov[~np.eye(n, dtype=bool)]
    assert off.mean() == pytest.approx(-1 / n, abs=0.003)
    # the count of one item is Binomial(N, 1/N)
    freq = np.bincount(W[:, 0].astype(int), minlength=4)[:4] / B
    expected = [
        math.comb(n, k) * (1 / n) ** k * (1 - 1 / n) ** (n - k) for k in range(4)
    ]
    np.testing.assert_allclose(freq, expected, atol=0.025)


def test_weighted_intervals_equal_the_resampling_intervals(data):
    # The replicates are one weighted sum (multiplicities times per-item and
    # per-cell contributions); the resampling form materialises each
    # resample's rows and computes the report on them. Same weights, same
    # intervals, for every column and every ci_method.
    from sklearn_hcal.metrics._bootstrap import bootstrap_intervals
    from sklearn_hcal.metrics._registry import metrics

    Y, _, preds = data
    P = preds["noisy"]
    columns = [c for c in metrics() if metrics()[c].requires != "ordered"]
    seed, n, B = 3, Y.shape[0], 40
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point, reps = human_calibration_report(
            Y,
            P,
            metrics=columns,
            n_bootstrap=B,
            random_state=seed,
            return_bootstrap=True,
        )
        point = point[columns].to_numpy()
        W = resample_weights(seed, n, B)
        resampled = np.array(
            [
                human_calibration_report(
                    Y[_resampled(w)], P[_resampled(w)], metrics=columns
                ).to_numpy()
                for w in W
            ]
        )
    weighted = reps.to_numpy()[:, None, :]
    # the weighted form's products are float32: equal to the bound of a
    # float32 sum of n terms (tests/metrics/_precision.py); an interval's
    # ends are replicates or linear interpolations of two
    np.testing.assert_allclose(weighted, resampled, **float32_sums(n))
    for method in ("bias_corrected", "percentile", "basic"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = bootstrap_intervals(point, weighted, 0.9, method)
            want = bootstrap_intervals(point, resampled, 0.9, method)
        np.testing.assert_allclose(got, want, **float32_sums(n))


def test_validated_inputs_pass_through_without_a_second_scan(data, monkeypatch):
    # What an entry point validated (Human, Source) is taken as it is by an
    # inner layer: no value scan of Y or P again (inputs are checked once),
    # and the engine's values are the same.
    import sklearn_hcal._validation._pair as pair_module
    from sklearn_hcal.metrics._engine import evaluate, resolve
    from sklearn_hcal.metrics._report_inputs import check_prediction, validate_human

    Y, _, preds = data
    P = preds["noisy"]
    human, source = validate_human(Y, P)
    calls = []
    for name in ("checked_histograms", "scan_probabilities"):
        real = getattr(pair_module, name)
        monkeypatch.setattr(
            pair_module,
            name,
            lambda *a, _real=real, _name=name, **k: (
                calls.append(_name) or _real(*a, **k)
            ),
        )
    again, same = validate_human(human, source)
    assert again is human and same is source and calls == []
    columns = resolve(["jsd", "ece"], human, None, default=None)
    np.testing.assert_array_equal(
        evaluate(columns, again, same), evaluate(columns, human, source)
    )
    # a new prediction against validated labels scans that prediction only
    check_prediction(human, preds["overconfident"], "other")
    assert calls == ["scan_probabilities"]
    other_human, other_source = validate_human(Y.copy(), P)
    with pytest.raises(ValueError, match="other human labels"):
        check_prediction(human, other_source, "y_prob")
