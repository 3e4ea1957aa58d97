"""Error-distribution, marginal, calibration-dispersion and agreement displays.

Each display's stored data is compared with the public metric functions on
the same inputs (ChaosNLI-SNLI where the data is available).
"""

import numpy as np
import pytest
from scipy.stats import entropy as scipy_entropy

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from sklearn_hcal.datasets import load_chaosnli, make_label_histograms  # noqa: E402
from sklearn_hcal.metrics import (  # noqa: E402
    calibration_loss,
    dispersion_loss,
    distribution_calibration_error,
    entropy_calibration_error,
    instance_calibration_errors,
    metrics_by_agreement,
)
from sklearn_hcal.plotting import (  # noqa: E402
    AgreementBinDisplay,
    CalibrationDispersionDisplay,
    HumanModelMarginalDisplay,
    InstanceErrorDisplay,
    error_histogram_divergence,
)
from tests.conftest import require_data  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def snli():
    path = require_data("chaosnli_v1.0", "chaosNLI_snli.jsonl")
    Y = load_chaosnli("snli", path=path).counts
    rng = np.random.default_rng(1)
    # Two independent 20-of-100 sub-samples of the votes (multivariate
    # hypergeometric per item): Baan et al.'s H1 and H2.
    h1 = np.array([rng.multivariate_hypergeometric(y, 20) for y in Y]) / 20.0
    h2 = np.array([rng.multivariate_hypergeometric(y, 20) for y in Y]) / 20.0
    preds = {
        "H1": h1,
        "H2": h2,
        "uniform": np.full(Y.shape, 1.0 / Y.shape[1]),
        "oracle": Y / Y.sum(axis=1, keepdims=True),
    }
    return Y, preds


@pytest.fixture(scope="module")
def synthetic():
    X, Y, _ = make_label_histograms(
        300, 3, 5, n_features=4, concentration=3.0, random_state=0
    )
    return X, Y, LogisticRegression().fit(X, Y.argmax(axis=1))


# --------------------------------------------------------------------------- #
# error_histogram_divergence
# --------------------------------------------------------------------------- #
def test_error_histogram_divergence_by_hand():
    a = [0.05, 0.05, 0.15, 0.35]  # 4 bins of width 0.1: [2, 1, 0, 1] / 4
    b = [0.05, 0.15, 0.15, 0.35]  # [1, 2, 0, 1] / 4
    kw = {"bins": 4, "range": (0.0, 0.4)}
    # KL = ½ log(½ / ¼) + ¼ log(¼ / ½) + 0 + ¼ log 1 = ¼ log 2
    assert error_histogram_divergence(a, b, **kw) == pytest.approx(0.25 * np.log(2))
    assert error_histogram_divergence(a, b, divergence="tvd", **kw) == pytest.approx(
        0.25
    )
    # scipy's KL of the normalised histograms, as in Baan et al.'s code.
    hist_a = np.histogram(a, bins=4, range=(0.0, 0.4))[0]
    hist_b = np.histogram(b, bins=4, range=(0.0, 0.4))[0]
    assert error_histogram_divergence(a, b, **kw) == pytest.approx(
        scipy_entropy(hist_a / 4, hist_b / 4)
    )


def test_error_histogram_divergence_edge_cases():
    # b has no item in a bin where a has one: KL(a ‖ b) is infinite.
    assert error_histogram_divergence([0.1, 0.9], [0.1, 0.1]) == np.inf
    assert error_histogram_divergence([0.1, 0.1], [0.1, 0.9]) == pytest.approx(
        np.log(2)
    )
    with pytest.raises(ValueError, match="errors_a must be a non-empty 1-D"):
        error_histogram_divergence([[0.1]], [0.1])
    with pytest.raises(ValueError, match="errors_b contains NaN"):
        error_histogram_divergence([0.1], [np.nan])
    with pytest.raises(ValueError, match="divergence"):
        error_histogram_divergence([0.1], [0.1], divergence="js")
    with pytest.raises(ValueError, match="falls inside"):
        error_histogram_divergence([2.0], [0.1])
    with pytest.raises(ValueError, match="increasing"):
        error_histogram_divergence([0.1], [0.1], bins=[0.5, 0.2])


def test_sub_sampled_humans_are_close_and_models_far(snli):
    # Baan et al. (2022, Table 2; 30 bins on [0, 1] in their code): the DistCE
    # histograms of two sub-sampled-human classifiers nearly coincide (TVD
    # 0.022) while a model's is far away (TVD 0.45-0.5).
    Y, preds = snli
    disp = InstanceErrorDisplay.from_predictions(
        Y, {k: preds[k] for k in ("H1", "H2", "uniform")}
    )
    assert len(disp.bin_edges) == 31  # Baan et al.'s n_bins=30
    table = disp.divergence_table()
    assert list(table.index) == ["H2", "uniform"]
    assert table.loc["H2", "tvd"] < 0.1  # measured 0.038
    assert table.loc["uniform", "tvd"] > 0.5  # measured 0.95
    # Independent computation: numpy's histograms and scipy's KL, as in
    # Baan et al.'s code (the per-item errors are checked against the metric
    # below; TVDs of 20-vote sub-samples are multiples of 0.01 and fall on
    # the edges k/30 often, so they must be the same floats). With 30 bins one
    # tail bin holds an H1 item and no H2 item here, so KL(H1 || H2) is
    # infinite (20 bins would give 0.003).
    tvd = disp.errors
    hist = {k: np.histogram(v, bins=30, range=(0, 1))[0] for k, v in tvd.items()}
    for name in ("H2", "uniform"):
        a, b = hist["H1"] / len(Y), hist[name] / len(Y)
        assert table.loc[name, "tvd"] == pytest.approx(0.5 * np.abs(a - b).sum())
        assert table.loc[name, "kl"] == pytest.approx(scipy_entropy(a, b))
    assert np.isinf(table.loc["H2", "kl"])
    # ... and the function's default is the display's
    assert (
        error_histogram_divergence(tvd["H1"], tvd["H2"], divergence="tvd")
        == (table.loc["H2", "tvd"])
    )
    with pytest.raises(ValueError, match="reference must be one of"):
        disp.divergence_table("H3")


# --------------------------------------------------------------------------- #
# InstanceErrorDisplay
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("kind", ["dist_ce", "ent_ce", "abs_ent_ce"])
def test_instance_errors_are_the_metrics(snli, kind):
    Y, preds = snli
    disp = InstanceErrorDisplay.from_predictions(Y, preds, kind=kind)
    for name, P in preds.items():
        frame = instance_calibration_errors(Y, P)
        values = frame["dist_ce" if kind == "dist_ce" else "ent_ce"].to_numpy()
        if kind == "abs_ent_ce":
            values = np.abs(values)
        np.testing.assert_array_equal(disp.errors[name], values)
        expected = {
            "dist_ce": distribution_calibration_error(Y, P),
            "ent_ce": entropy_calibration_error(Y, P, absolute=False),
            "abs_ent_ce": entropy_calibration_error(Y, P),
        }[kind]
        assert np.mean(disp.errors[name]) == pytest.approx(expected, abs=1e-12)
        assert f"(mean = {expected:.3f})" in disp.histograms_[name].get_label()
        # Every error lies in the default range, so the fractions sum to 1.
        assert disp.fractions()[name].sum() == pytest.approx(1.0)
        np.testing.assert_allclose(
            disp.histograms_[name].get_data().values, disp.fractions()[name]
        )
    assert len(disp.histograms_) == 4
    assert len(disp.ax_.get_legend().get_texts()) == 4


def test_instance_errors_bins_and_axes(snli):
    Y, preds = snli
    fig, ax = plt.subplots()
    disp = InstanceErrorDisplay.from_predictions(
        Y, preds["H1"], name="H1", bins=[0.0, 0.1, 0.2, 1.0], ax=ax
    )
    assert disp.ax_ is ax
    np.testing.assert_array_equal(disp.bin_edges, [0.0, 0.1, 0.2, 1.0])
    assert disp.histograms_["H1"].get_label().startswith("H1 (mean")
    second = InstanceErrorDisplay.from_predictions(
        Y, preds["uniform"], name="uniform", ax=ax, show_mean=False
    )
    assert second.mean_lines_ == {}
    assert len(ax.get_legend_handles_labels()[1]) == 2


def test_instance_errors_from_estimator(synthetic):
    X, Y, clf = synthetic
    disp = InstanceErrorDisplay.from_estimator({"lr": clf}, X, Y, kind="ent_ce")
    np.testing.assert_allclose(
        disp.errors["lr"],
        instance_calibration_errors(Y, clf.predict_proba(X))["ent_ce"].to_numpy(),
    )
    np.testing.assert_allclose(disp.bin_edges[[0, -1]], [-np.log(3), np.log(3)])


# --------------------------------------------------------------------------- #
# HumanModelMarginalDisplay
# --------------------------------------------------------------------------- #
def test_marginal_panels_hold_the_statistics(snli):
    Y, preds = snli
    models = {"H1": preds["H1"], "uniform": preds["uniform"]}
    disp = HumanModelMarginalDisplay.from_predictions(
        Y, models, class_names=["e", "n", "c"]
    )
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    for name, P in models.items():
        frame = instance_calibration_errors(Y, P)
        for k in range(3):
            np.testing.assert_array_equal(disp.panels[("class", k)][name], P[:, k])
            np.testing.assert_array_equal(
                disp.panels[("class", k)]["Human"], p_hat[:, k]
            )
            np.testing.assert_array_equal(
                disp.panels[("rank", k)][name], np.sort(P, axis=1)[:, ::-1][:, k]
            )
        np.testing.assert_array_equal(
            disp.panels[("entropy", 0)][name], frame["model_entropy"].to_numpy()
        )
        np.testing.assert_array_equal(
            disp.panels[("entropy", 0)]["Human"], frame["human_entropy"].to_numpy()
        )
        np.testing.assert_array_equal(
            disp.panels[("dist_ce", 0)][name], frame["dist_ce"].to_numpy()
        )
    # The humans' first guess is never below their second.
    assert np.all(
        disp.panels[("rank", 0)]["Human"] >= disp.panels[("rank", 1)]["Human"]
    )
    assert disp.axes_.shape == (3, 3)
    assert not disp.axes_[2, 2].axison
    assert disp.axes_[0, 1].get_title() == "P(n)"
    assert disp.axes_[1, 0].get_title() == "1st guess"
    labels = disp.axes_[0, 0].get_legend_handles_labels()[1]
    assert labels == ["Human", "H1", "uniform"]


@pytest.mark.parametrize("view", ["error", "absolute_error"])
def test_marginal_error_views(snli, view):
    Y, preds = snli
    P = preds["H1"]
    disp = HumanModelMarginalDisplay.from_predictions(Y, P, view=view, name="H1")
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    diff = P[:, 1] - p_hat[:, 1]
    expected = np.abs(diff) if view == "absolute_error" else diff
    np.testing.assert_allclose(disp.panels[("class", 1)]["H1"], expected)
    assert "Human" not in disp.panels[("class", 1)]
    ent = disp.panels[("entropy", 0)]["H1"]
    assert np.mean(ent) == pytest.approx(
        entropy_calibration_error(Y, P, absolute=view == "absolute_error"), abs=1e-12
    )
    if view == "error":
        # Signed errors span [-1, 1] with the same bin width as [0, 1].
        assert disp.bin_edges[("class", 1)][[0, -1]].tolist() == [-1.0, 1.0]
        assert len(disp.bin_edges[("class", 1)]) == 41


def test_marginal_on_given_axes_adds_classifiers(snli):
    Y, preds = snli
    first = HumanModelMarginalDisplay.from_predictions(Y, preds["H1"], name="H1")
    second = HumanModelMarginalDisplay.from_predictions(
        Y, preds["uniform"], name="uniform", ax=first.axes_
    )
    assert second.figure_ is first.figure_
    labels = first.axes_[0, 0].get_legend_handles_labels()[1]
    assert labels.count("Human") == 1
    assert "H1" in labels and "uniform" in labels
    with pytest.raises(ValueError, match=r"\(3, 3\) grid"):
        HumanModelMarginalDisplay.from_predictions(Y, preds["H1"], ax=first.axes_[:2])
    with pytest.raises(ValueError, match="class_names has 2 entries"):
        HumanModelMarginalDisplay.from_predictions(
            Y, preds["H1"], class_names=["a", "b"]
        )


def test_marginal_from_estimator_uses_classes(synthetic):
    X, Y, clf = synthetic
    disp = HumanModelMarginalDisplay.from_estimator(clf, X, Y)
    assert disp.class_names == ["0", "1", "2"]
    np.testing.assert_allclose(
        disp.panels[("class", 2)]["LogisticRegression"], clf.predict_proba(X)[:, 2]
    )


# --------------------------------------------------------------------------- #
# CalibrationDispersionDisplay
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("debiased", [True, False])
def test_calibration_dispersion_coordinates(snli, debiased):
    Y, preds = snli
    disp = CalibrationDispersionDisplay.from_predictions(Y, preds, debiased=debiased)
    assert disp.names == list(preds)
    for i, (name, P) in enumerate(preds.items()):
        cl = calibration_loss(Y, P, debiased=debiased)
        dl = dispersion_loss(Y, P, debiased=debiased)
        assert disp.calibration_loss[i] == pytest.approx(cl, abs=1e-15)
        assert disp.dispersion_loss[i] == pytest.approx(dl, abs=1e-15)
        np.testing.assert_allclose(disp.points_[name].get_offsets(), [[cl, dl]])
        assert disp.points_[name].get_label() == name
    # The oracle's plug-in CL is 0: each bin's mean prediction is its mean p̂.
    if not debiased:
        assert disp.calibration_loss[disp.names.index("oracle")] == pytest.approx(
            0.0, abs=1e-15
        )


def test_calibration_dispersion_overlay_and_estimator(snli, synthetic):
    Y, preds = snli
    disp = CalibrationDispersionDisplay.from_predictions(Y, preds["H1"], name="H1")
    n_iso = len(disp.iso_lines_)
    assert n_iso >= 2
    again = CalibrationDispersionDisplay.from_predictions(
        Y, preds["uniform"], name="uniform", ax=disp.ax_
    )
    assert again.iso_lines_ == []  # drawn once per axes
    labels = disp.ax_.get_legend_handles_labels()[1]
    assert "H1" in labels and "uniform" in labels
    X, Ys, clf = synthetic
    est = CalibrationDispersionDisplay.from_estimator(
        {"lr": clf}, X, Ys, debiased=False
    )
    assert est.calibration_loss[0] == calibration_loss(
        Ys, clf.predict_proba(X), debiased=False
    )


def test_calibration_dispersion_needs_counts():
    with pytest.raises(ValueError):
        CalibrationDispersionDisplay.from_predictions(
            np.array([[0.5, 0.5], [0.2, 0.8]]), np.array([[0.5, 0.5], [0.5, 0.5]])
        )


# --------------------------------------------------------------------------- #
# AgreementBinDisplay
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("metric", ["jsd", "accuracy"])
def test_agreement_bins_are_metrics_by_agreement(snli, metric):
    Y, preds = snli
    disp = AgreementBinDisplay.from_predictions(Y, preds, metric=metric)
    for name, P in preds.items():
        table = metrics_by_agreement(Y, P, metrics=[metric])
        np.testing.assert_array_equal(disp.scores.loc[name].to_numpy(), table[metric])
        np.testing.assert_array_equal(disp.n_items, table["n_items"])
        np.testing.assert_allclose(disp.bin_edges[:-1], table["entropy_low"])
        heights = [bar.get_height() for bar in disp.artists_[name].patches]
        np.testing.assert_allclose(heights, table[metric])
    assert disp.n_items.sum() == Y.shape[0]
    assert len(disp.ax_.get_xticklabels()) == 5
    assert sorted(disp.ax_.get_legend_handles_labels()[1]) == sorted(preds)
    if metric == "jsd":
        # Sub-sampled humans are closer to the humans than chance in every bin.
        assert np.all(disp.scores.loc["H1"] < disp.scores.loc["uniform"])


def test_agreement_lines_overlay(snli, synthetic):
    Y, preds = snli
    disp = AgreementBinDisplay.from_predictions(
        Y, preds["H1"], name="H1", metric="kl", kind="line", n_bins=3
    )
    AgreementBinDisplay.from_predictions(
        Y, preds["H2"], name="H2", metric="kl", kind="line", n_bins=3, ax=disp.ax_
    )
    assert [line.get_label() for line in disp.ax_.get_lines()] == ["H1", "H2"]
    np.testing.assert_allclose(
        disp.artists_["H1"].get_ydata(), disp.scores.loc["H1"].to_numpy()
    )
    X, Ys, clf = synthetic
    est = AgreementBinDisplay.from_estimator(
        clf, X, Ys, metric="dist_ce", n_bins=2, strategy="uniform"
    )
    table = metrics_by_agreement(
        Ys, clf.predict_proba(X), n_bins=2, strategy="uniform", metrics=["dist_ce"]
    )
    np.testing.assert_array_equal(
        est.scores.loc["LogisticRegression"].to_numpy(), table["dist_ce"]
    )
    with pytest.raises(ValueError, match="not a report metric"):
        AgreementBinDisplay.from_predictions(Y, preds["H1"], metric="nope")
