"""Risk-coverage curves and AURC against plain loops and permutations."""

import itertools
import math
import pickle

import numpy as np
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_validate

from sklearn_hcal.metrics import (
    aurc_loss,
    deferral_score,
    kl_divergence,
    make_deferral_scorer,
    risk_at_coverage_loss,
    risk_coverage_curve,
)


def _data(seed=0, n=40, K=3):
    rng = np.random.default_rng(seed)
    Y = rng.multinomial(5, rng.dirichlet(np.ones(K), size=n))
    P = rng.dirichlet(np.ones(K), size=n)
    return Y, P


def _loop_risks(Y, P, risk):
    out = []
    for y, q in zip(Y, P, strict=True):
        h = [c / sum(y) for c in y]
        if risk == "disagreement":
            out.append(1 - h[int(np.argmax(q))])
        else:
            out.append(kl_divergence([y], [q]))
    return out


def _loop_aurc(risks, scores):
    order = sorted(range(len(risks)), key=lambda i: scores[i])
    return np.mean(
        [np.mean([risks[i] for i in order[:k]]) for k in range(1, len(risks) + 1)]
    )


@pytest.mark.parametrize("risk", ["disagreement", "kl"])
def test_aurc_and_curve_without_ties(risk):
    Y, P = _data()
    scores = np.random.default_rng(1).random(len(Y))
    risks = _loop_risks(Y, P, risk)
    assert aurc_loss(Y, P, y_score=scores, risk=risk) == pytest.approx(
        _loop_aurc(risks, scores)
    )
    cov, sel, thr = risk_coverage_curve(Y, P, y_score=scores, risk=risk)
    order = np.argsort(scores)
    for j, k in enumerate(range(1, len(Y) + 1)):
        assert cov[j] == pytest.approx(k / len(Y))
        assert sel[j] == pytest.approx(np.mean([risks[i] for i in order[:k]]))
        assert thr[j] == scores[order[k - 1]]
    for c in (0.1, 0.5, 0.8, 1.0):
        k = math.ceil(round(c * len(Y), 9))
        expected = np.mean([risks[i] for i in order[:k]])
        assert risk_at_coverage_loss(
            Y, P, y_score=scores, coverage=c, risk=risk
        ) == pytest.approx(expected)


def test_ties_are_the_mean_over_orders():
    Y, P = _data(2, n=7)
    scores = np.array([0.2, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3])
    risks = _loop_risks(Y, P, "disagreement")
    # every order of the items compatible with the scores, equally likely
    values = [
        _loop_aurc([risks[i] for i in perm], [scores[i] for i in perm])
        for perm in itertools.permutations(range(7))
    ]
    assert aurc_loss(Y, P, y_score=scores) == pytest.approx(np.mean(values))
    # the curve has one point per distinct score
    cov, sel, thr = risk_coverage_curve(Y, P, y_score=scores)
    assert thr.tolist() == [0.1, 0.2, 0.3]
    assert cov.tolist() == pytest.approx([2 / 7, 5 / 7, 1.0])
    assert sel[-1] == pytest.approx(np.mean(risks))


def test_default_score_is_confidence_and_oracle_is_best():
    Y, P = _data(3, n=200)
    conf = deferral_score(P)
    assert np.allclose(conf, 1 - P.max(axis=1))
    assert aurc_loss(Y, P) == aurc_loss(Y, P, y_score=conf)
    oracle = deferral_score(P, method="oracle", y_true=Y)
    assert np.allclose(oracle, _loop_risks(Y, P, "disagreement"))
    best = aurc_loss(Y, P, y_score=oracle)
    rng = np.random.default_rng(4)
    for score in (conf, deferral_score(P, method="entropy"), rng.random(200)):
        assert best <= aurc_loss(Y, P, y_score=score) + 1e-12
    ent = deferral_score(P, method="entropy")
    assert np.allclose(ent, [-sum(q * np.log(q)) for q in P])
    hum = deferral_score(P, method="human_disagreement", y_true=Y)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    assert np.allclose(hum, 1 - (p_hat**2).sum(axis=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_default_score_is_deferral_scores_default_exactly(dtype):
    # rows rounded to 3 decimals are renormalised; deferral_score divided
    # them a second time, moving scores by an ulp and splitting ties: AURC
    # 0.028458 with y_score=None against 0.028452 with deferral_score's
    rng = np.random.default_rng(11)
    Q = rng.dirichlet(np.full(3, 0.7), size=2000)
    Y = np.array([rng.multinomial(5, q) for q in Q])
    P = np.round(Q, 3).astype(dtype)
    score = deferral_score(P)
    P64 = P.astype(np.float64)
    # (float32 rows within 1e-5 of one are kept as they are)
    np.testing.assert_allclose(
        score,
        1 - (P64 / P64.sum(axis=1, keepdims=True)).max(axis=1),
        atol=1e-12 if dtype is np.float64 else 1e-5,
    )
    assert aurc_loss(Y, P) == aurc_loss(Y, P, y_score=score)
    for a, b in zip(
        risk_coverage_curve(Y, P),
        risk_coverage_curve(Y, P, y_score=score),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)
    assert risk_at_coverage_loss(Y, P) == risk_at_coverage_loss(Y, P, y_score=score)


def test_bad_inputs():
    Y, P = _data()
    for text in (["a"] * len(Y), ["0.5"] * len(Y), [0.5] * (len(Y) - 1) + [{}]):
        with pytest.raises(ValueError, match="y_score must hold numbers"):
            aurc_loss(Y, P, y_score=np.array(text, dtype=object))
    with pytest.raises(ValueError, match="y_score must hold numbers.*got 'a'"):
        risk_coverage_curve(Y, P, y_score=["a"] * len(Y))
    with pytest.raises(ValueError, match="y_score"):
        aurc_loss(Y, P, y_score=np.ones(3))
    with pytest.raises(ValueError, match="finite"):
        aurc_loss(Y, P, y_score=np.full(len(Y), np.nan))
    with pytest.raises(ValueError, match="needs y_true"):
        deferral_score(P, method="oracle")
    with pytest.raises(ValueError, match="coverage"):
        risk_at_coverage_loss(Y, P, coverage=0.0)


def test_scorer_in_cross_validate():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 3))
    Y = rng.multinomial(5, np.exp(X) / np.exp(X).sum(axis=1, keepdims=True))
    clf = LogisticRegression().fit(X[:100], Y[:100].argmax(axis=1))
    scoring = {
        "aurc": make_deferral_scorer("aurc_loss"),
        "r80": make_deferral_scorer("risk_at_coverage_loss", coverage=0.8),
        "aurc_ent": make_deferral_scorer("aurc_loss", deferral="entropy"),
    }
    res = cross_validate(
        FrozenEstimator(clf),
        X[100:],
        Y[100:],
        cv=KFold(2),
        scoring=scoring,
        error_score="raise",
    )
    again = pickle.loads(pickle.dumps(scoring["r80"]))  # e.g. for n_jobs > 1
    assert again(FrozenEstimator(clf), X[100:], Y[100:]) == pytest.approx(
        scoring["r80"](FrozenEstimator(clf), X[100:], Y[100:])
    )
    assert "coverage=0.8" in repr(again)
    for f, (_, test) in enumerate(KFold(2).split(X[100:])):
        P = clf.predict_proba(X[100:][test])
        Yt = Y[100:][test]
        assert res["test_aurc"][f] == pytest.approx(-aurc_loss(Yt, P))
        assert res["test_r80"][f] == pytest.approx(
            -risk_at_coverage_loss(Yt, P, coverage=0.8)
        )
        ent = deferral_score(P, method="entropy")
        assert res["test_aurc_ent"][f] == pytest.approx(-aurc_loss(Yt, P, y_score=ent))


def test_disagreement_scorer_needs_predict_disagreement():
    Y, _ = _data()
    X = np.random.default_rng(6).standard_normal((len(Y), 2))
    clf = LogisticRegression().fit(X, Y.argmax(axis=1))
    with pytest.raises(ValueError, match="predict_disagreement"):
        make_deferral_scorer(deferral="disagreement")(clf, X, Y)


class _DisagreementLogistic(LogisticRegression):
    """A logistic regression that also predicts annotator disagreement."""

    def predict_disagreement(self, X):
        P = self.predict_proba(X)
        return 0.5 * (1 - (P**2).sum(axis=1)) + 0.01 * np.abs(X[:, 0])


def test_disagreement_deferral_through_a_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(7)
    X = rng.standard_normal((200, 2))
    Z = X @ np.array([[1.0, -1.0], [0.5, 0.0]])
    Y = rng.multinomial(4, np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True))
    pipe = make_pipeline(StandardScaler(), _DisagreementLogistic())
    pipe.fit(X, Y.argmax(axis=1))
    phi = pipe[-1].predict_disagreement(pipe[:-1].transform(X))
    scorer = make_deferral_scorer("aurc_loss", deferral="disagreement")
    assert scorer(pipe, X, Y) == pytest.approx(
        -aurc_loss(Y, pipe.predict_proba(X), y_score=phi)
    )
