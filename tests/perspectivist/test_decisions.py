"""The Bayes decisions minimise their LeWiDi score.

Two independent checks: on random distributions, each decision is the
brute-force minimiser of the expected loss over every possible prediction;
and on a constructed table whose model is the training distribution itself
(``DummyClassifier(strategy="prior")``), the classifier's ``predict``
scores at least as well as every constant prediction under the official
metric functions.
"""

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyClassifier

from sklearn_hcal.metrics import (
    perspectivist_absolute_distance,
    perspectivist_error_rate,
)
from sklearn_hcal.perspectivist import PerspectivistClassifier
from sklearn_hcal.perspectivist._decisions import (
    median_decision,
    mode_decision,
    threshold_decision,
)

SCALE = np.arange(-5, 6)


@pytest.mark.parametrize("seed", range(5))
def test_decisions_minimise_the_expected_loss_by_brute_force(seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(len(SCALE), 0.3), size=200)
    med, mode = median_decision(P, SCALE), mode_decision(P, SCALE)
    for p, m, o in zip(P, med, mode):
        absolute = [np.sum(p * np.abs(SCALE - d)) for d in SCALE]
        zero_one = [1 - p[k] for k in range(len(SCALE))]
        assert np.sum(p * np.abs(SCALE - m)) == pytest.approx(min(absolute))
        assert 1 - p[list(SCALE).index(o)] == pytest.approx(min(zero_one))
    Q = rng.uniform(size=(200, 3))  # P(label applies), label by label
    T = threshold_decision(Q)
    for q, t in zip(Q, T):
        losses = {
            d: np.mean([q[j] * (1 - d[j]) + (1 - q[j]) * d[j] for j in range(3)])
            for d in itertools.product((0, 1), repeat=3)
        }
        assert losses[tuple(t)] == pytest.approx(min(losses.values()))


def test_median_reaches_one_half_despite_rounding():
    # 0.1 + 0.4 is 0.49999999999999994 in floats: still a median at the 2nd
    P = np.array([[0.1, 0.4, 0.5]])
    assert median_decision(P, np.array([1, 2, 3])).tolist() == [2]


def _table(labels_per_item):
    rows, labels = [], []
    for i, labels_i in enumerate(labels_per_item):
        for a, label in enumerate(labels_i):
            rows.append({"item": f"i{i}", "annotator": f"A{a}", "f": 1.0})
            labels.append(label)
    return pd.DataFrame(rows), labels


def test_predict_minimises_each_official_score_on_a_constructed_case():
    # one distribution for every row: 30% -5, 5% 0, 30% 4, 35% 5, whose
    # median (4) and mode (5) differ
    X, _ = _table([[0] * 10, [0] * 10])
    y = [-5] * 6 + [0] + [4] * 6 + [5] * 7
    truth = X[["item", "annotator"]].assign(label=y)
    prior = DummyClassifier(strategy="prior")
    params = {"unseen": "estimator", "optional_columns": None, "classes": SCALE}
    median = PerspectivistClassifier(prior, **params).fit(X, y)
    mode = PerspectivistClassifier(prior, decision="mode", **params).fit(X, y)
    assert set(median.predict(X)) == {4} and set(mode.predict(X)) == {5}
    # every constant prediction on the scale, scored by the official metrics
    anad = {
        c: perspectivist_absolute_distance(truth, truth.assign(label=c), order=SCALE)
        for c in SCALE
    }
    err = {c: perspectivist_error_rate(truth, truth.assign(label=c)) for c in SCALE}
    got_anad = perspectivist_absolute_distance(
        truth, truth.assign(label=median.predict(X)), order=SCALE
    )
    got_err = perspectivist_error_rate(truth, truth.assign(label=mode.predict(X)))
    assert got_anad == pytest.approx(min(anad.values()))
    assert got_err == pytest.approx(min(err.values()))
    # and the other decision is worse on each score
    assert anad[5] > got_anad and err[4] > got_err


def test_thresholds_minimise_the_multilabel_error_rate():
    labels = ["contradiction", "entailment", "neutral"]
    # P(c) = 0.2, P(e) = 0.55, P(n) = 0.6 over 20 annotators
    y = [("entailment", "neutral")] * 9 + [("entailment",)] * 2
    y += [("neutral",)] * 3 + [("contradiction",)] * 4 + [()] * 2
    X, _ = _table([[0] * 10, [0] * 10])
    clf = PerspectivistClassifier(
        DummyClassifier(strategy="prior"), unseen="estimator", optional_columns=None
    ).fit(X, pd.Series(y))
    keys = X[["item", "annotator"]]

    def indicators(sets):
        return pd.DataFrame(
            [[int(c in s) for c in labels] for s in sets], columns=labels
        )

    truth = pd.concat([keys, indicators(y)], axis=1)
    scores = {
        d: perspectivist_error_rate(
            truth, pd.concat([keys, indicators([d] * len(y))], axis=1), label=labels
        )
        for d in [
            tuple(lab for lab, on in zip(labels, bits) if on)
            for bits in itertools.product((0, 1), repeat=3)
        ]
    }
    pred = clf.predict(X)
    assert set(pred) == {("entailment", "neutral")}
    got = perspectivist_error_rate(
        truth, pd.concat([keys, indicators(pred)], axis=1), label=labels
    )
    assert got == pytest.approx(min(scores.values()))
