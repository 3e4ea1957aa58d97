"""Annotator-level predictions, and the aggregators judged on held-out labels.

The issue's acceptance: on MultiPICo, one held-out annotation per item
(items with at least 4), Dawid–Skene's annotator predictions beat the
smoothed empirical frequency in Brier score. The empirical frequency is
``MajorityVote(alpha=a)`` (the item's other labels plus ``a`` per class);
it is given its best ``a`` on the same held-out annotations (a generous
baseline), while Dawid–Skene's smoothing is fixed beforehand (``alpha=1``,
Laplace).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import cross_validate

from sklearn_hcal.aggregation import DawidSkene, MajorityVote, OneCoinDawidSkene, Wawa
from sklearn_hcal.datasets import load_lewidi
from sklearn_hcal.metrics import make_annotation_scorer
from sklearn_hcal.model_selection import OneAnnotationPerItemSplit
from tests.conftest import require_data

from ._tables import crowd_table

SCORING = {
    "brier": make_annotation_scorer("brier_score_loss"),
    "log": make_annotation_scorer("log_loss"),
}


def _held_out(model, X, cv):
    scores = cross_validate(model, X, cv=cv, scoring=SCORING, error_score="raise")
    return -scores["test_brier"].mean(), -scores["test_log"].mean()


@pytest.fixture(scope="module")
def crowd():
    return crowd_table(60, 8, per_item=5, seed=6)[0]


def test_majority_vote_predicts_the_item_distribution_for_anyone(crowd):
    mv = MajorityVote(alpha=1.0).fit(crowd)
    pairs = pd.DataFrame(
        {"item": ["item002"] * 3, "annotator": ["w00", "w05", "nobody"]}
    )
    P = mv.predict_annotator_proba(pairs)
    votes = crowd[crowd["item"] == "item002"]["label"].value_counts()
    expected = (votes.reindex(mv.classes_, fill_value=0) + 1) / (votes.sum() + 3)
    np.testing.assert_allclose(P, np.tile(expected.to_numpy(), (3, 1)))


@pytest.mark.parametrize("Model", [Wawa, OneCoinDawidSkene])
def test_one_coin_annotators(crowd, Model):
    model = Model().fit(crowd)
    pairs = pd.DataFrame({"item": ["item007", "item007"], "annotator": ["w03", "new"]})
    with pytest.warns(UserWarning, match=r"1 of 2 rows .*'new'.* the fitted pool"):
        P = model.predict_annotator_proba(pairs)
    q = model.posteriors_.loc["item007"].to_numpy()
    for row, s in zip(P, [model.skills_["w03"], model.skills_.mean()]):
        np.testing.assert_allclose(row, q * s + (1 - q) * (1 - s) / 2, atol=1e-9)


def test_score_is_the_mean_log_likelihood_of_the_labels(crowd):
    ds = DawidSkene(alpha=0.5).fit(crowd)
    P = ds.predict_annotator_proba(crowd)
    codes = pd.Index(ds.classes_).get_indexer(crowd["label"])
    expected = np.mean(np.log(P[np.arange(len(crowd)), codes]))
    assert ds.score(crowd) == pytest.approx(expected, rel=1e-12)
    # labels from y instead of the label column
    assert ds.score(crowd.drop(columns="label"), crowd["label"]) == pytest.approx(
        expected, rel=1e-12
    )


def test_dawid_skene_beats_the_empirical_frequency_on_a_biased_crowd():
    # annotators with systematic confusions (accuracy 0.55 to 0.95, errors
    # concentrated on other classes): their own confusion matrices predict
    # their labels better than the item's label frequency
    X, _ = crowd_table(300, 12, per_item=5, accuracy=(0.45, 0.95), seed=7)
    cv = OneAnnotationPerItemSplit(3, min_annotations=4, random_state=0)
    ds_brier, ds_log = _held_out(DawidSkene(alpha=1.0), X, cv)
    best_mv = min(_held_out(MajorityVote(alpha=a), X, cv)[0] for a in (0.5, 1, 2))
    assert ds_brier < best_mv - 0.02


def test_dawid_skene_beats_the_empirical_frequency_on_multipico():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = require_data("lewidi", "2025", "MP_test.json")
        X = load_lewidi(path).annotations
    cv = OneAnnotationPerItemSplit(5, min_annotations=4, random_state=0)
    ds_brier, ds_log = _held_out(DawidSkene(alpha=1.0), X, cv)
    frequency = {a: _held_out(MajorityVote(alpha=a), X, cv) for a in (0.5, 1, 2, 4)}
    best_brier = min(b for b, _ in frequency.values())
    best_log = min(lg for _, lg in frequency.values())
    # measured: 0.177 against 0.189 (Brier), 0.530 against 0.561 (log loss)
    assert ds_brier < best_brier - 0.005
    assert ds_log < best_log
