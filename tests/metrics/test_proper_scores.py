"""The registry's ``proper`` flag, checked by a simulation with known truth.

Each item has a true label distribution ``q*``; three annotations per item
are drawn from it. Three candidate predictions are scored against the
annotations: ``q*`` itself, a sharpened and a smoothed ``q*``. A proper
scoring rule for the human distribution ranks ``q*`` first (its expectation
is best there, and 20 000 items make the mean close to it); a metric that
prefers a wrong candidate cannot be flagged proper -- and JSD and DistCE do
prefer the sharpened one, which is why model selection must not use them.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.metrics import human_calibration_report
from sklearn_hcal.metrics._registry import metric_table, metrics

N_ITEMS, N_CLASSES, N_ANNOTATIONS = 20_000, 3, 3


def _softmax(Z):
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def simulation():
    rng = np.random.default_rng(0)
    logits = 1.5 * rng.normal(size=(N_ITEMS, N_CLASSES))
    truth = _softmax(logits)
    Y = rng.multinomial(N_ANNOTATIONS, truth)
    candidates = {
        "truth": truth,
        "sharpened": _softmax(logits / 0.6),
        "smoothed": _softmax(logits / 1.6),
    }
    return Y, truth, candidates


def _probability_columns():
    """Metrics of class probabilities that the simulated counts support."""
    return [
        m.column
        for m in metrics().values()
        if m.response == "proba" and m.requires != "pairs" and m.proper is not None
    ]


@pytest.fixture(scope="module")
def scores(simulation):
    Y, _, candidates = simulation
    report = human_calibration_report(Y, candidates, metrics=_probability_columns())
    # oriented so that higher is better for every column
    sign = pd.Series(
        {c: 1.0 if metrics()[c].greater_is_better else -1.0 for c in report.columns}
    )
    return report * sign


def test_every_metric_declares_proper_or_none():
    for metric in metrics().values():
        assert metric.proper in (True, False, None), metric.column
    # the scorers meant for model selection are declared either way
    for row in metric_table():
        if row["scorer"] is not None:
            assert row["proper"] is not None, row["column"]


def test_proper_metrics_rank_the_truth_first(scores):
    proper = [c for c in scores.columns if metrics()[c].proper]
    assert {"kl", "log_loss", "el", "sq_loss", "soft_ce", "rps"} <= set(proper)
    for column in proper:
        col = scores[column]
        assert col.idxmax() == "truth", (column, col.to_dict())


def test_a_metric_preferring_a_wrong_candidate_is_not_flagged_proper(scores):
    for column in scores.columns:
        col = scores[column]
        if (col.drop("truth") > col["truth"]).any():
            assert metrics()[column].proper is False, (column, col.to_dict())


def test_jsd_and_dist_ce_prefer_the_sharpened_prediction(scores):
    # not vacuous: the two metrics the guide used to tune with get it wrong
    for column in ("jsd", "dist_ce", "manhattan"):
        assert scores.loc["sharpened", column] > scores.loc["truth", column], column
        assert metrics()[column].proper is False


def test_disagreement_squared_loss_is_proper_for_phi(simulation):
    from sklearn_hcal.metrics import disagreement_squared_loss

    Y, truth, _ = simulation
    phi = 1.0 - (truth**2).sum(axis=1)
    # scaled φ, kept below 1 − 1/K, the largest disagreement of any prediction
    bound = 1.0 - 1.0 / N_CLASSES
    losses = {
        f: disagreement_squared_loss(Y, np.minimum(f * phi, bound))
        for f in (0.8, 1, 1.15)
    }
    assert min(losses, key=losses.get) == 1
    assert metrics()["disagreement_sq_loss"].proper is True


def test_guide_example_non_proper_scores_pick_the_wrong_regularisation():
    """The measured example of the model-selection guide: with five labels per
    item, JSD and DistCE choose an over-confident C whose predictions are
    several times further from the known q* than the C that KL and EL choose
    (which is the truth's best)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_hcal.datasets import make_label_histograms
    from sklearn_hcal.metrics import (
        distribution_calibration_error,
        epistemic_loss,
        jensen_shannon_distance,
        kl_divergence,
    )
    from sklearn_hcal.model_selection import cross_val_predict_proba

    X, Y, Q = make_label_histograms(
        1000, n_classes=3, n_annotations=5, n_features=10, scale=3.0, random_state=0
    )
    X = np.hstack([X, np.random.default_rng(0).normal(size=(len(X), 20))])
    cv = KFold(5, shuffle=True, random_state=0)
    rows = {}
    for C in [0.01, 0.1, 1, 10]:
        model = make_pipeline(StandardScaler(), LogisticRegression(C=C))
        P = cross_val_predict_proba(model, X, Y.argmax(axis=1), cv=cv)
        rows[C] = {
            "jsd": jensen_shannon_distance(Y, P),
            "dist_ce": distribution_calibration_error(Y, P),
            "kl": kl_divergence(Y, P),
            "el": epistemic_loss(Y, P),
            "truth": kl_divergence(Q, P),
        }
    table = pd.DataFrame(rows).T
    chosen = table.idxmin()
    assert chosen["truth"] == 0.1
    for column in ("kl", "el"):
        assert chosen[column] == chosen["truth"], column
        assert metrics()[column].proper is True
    for column in ("jsd", "dist_ce"):
        assert chosen[column] != chosen["truth"], column
        assert metrics()[column].proper is False
        # the choice costs: its predictions are far from q*
        assert table.loc[chosen[column], "truth"] > 3 * table["truth"].min()
