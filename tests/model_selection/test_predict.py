"""Human scorers inside scikit-learn model selection, in both target conventions
(developer guide §scorers), and out-of-fold probabilities for label histograms."""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from scipy.stats import entropy
from sklearn.base import clone
from sklearn.dummy import DummyClassifier
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    ShuffleSplit,
    StratifiedKFold,
    cross_val_predict,
    cross_validate,
)
from sklearn.neighbors import KNeighborsClassifier

from sklearn_hcal import SoftLabelClassifier
from sklearn_hcal import metrics as M
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import HUMAN_SCORERS, get_human_scorer
from sklearn_hcal.model_selection import cross_val_predict_proba
from tests._tables import DISAGREEMENT, EXPECTED

DISAGREEMENT_NAMES = list(DISAGREEMENT)
# name -> (metric, sign), the shared table stated independently of the registry.
METRIC_OF = {**EXPECTED, **DISAGREEMENT}


# HUMAN_SCORERS' disagreement scorer on a model without predict_disagreement
# falls back, and says so (developer guide §never-degrade): expected here.
FALLBACK = pytest.mark.filterwarnings(
    "ignore:.* has no predict_disagreement:UserWarning"
)


def _hand_score(name, Y, P):
    metric_name, sign = METRIC_OF[name]
    pred = 1.0 - np.sum(P * P, axis=1) if name in DISAGREEMENT_NAMES else P
    return sign * getattr(M, metric_name)(Y, pred)


def _data(n=160, n_classes=3, n_annotations=5, seed=0, **kw):
    X, Y, Q = make_label_histograms(
        n, n_classes, n_annotations, n_features=5, random_state=seed, **kw
    )
    return X, Y.astype(np.int64), Q


def _kl_scipy(Y, P):
    return float(np.mean(entropy(Y / Y.sum(1, keepdims=True), P, axis=1)))


@pytest.fixture(autouse=True)
def _quiet_single_annotation_warnings():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*single annotation.*")
        yield


# ------------------------------------------------- convention A: 2-D y


@FALLBACK
@pytest.mark.parametrize("n_classes", [2, 3])
def test_convention_a_cross_validate_matches_hand_folds(n_classes):
    X, Y, _ = _data(n_classes=n_classes, seed=n_classes)
    est = SoftLabelClassifier(LogisticRegression())
    cv = KFold(4, shuffle=True, random_state=0)
    scoring = {**HUMAN_SCORERS}
    scoring.update({n: get_human_scorer(n) for n in DISAGREEMENT_NAMES})
    res = cross_validate(est, X, Y, cv=cv, scoring=scoring, error_score="raise")
    for fold, (train, test) in enumerate(cv.split(X)):
        P = clone(est).fit(X[train], Y[train]).predict_proba(X[test])
        for name in scoring:
            assert res[f"test_{name}"][fold] == pytest.approx(
                _hand_score(name, Y[test], P), rel=1e-10, abs=1e-12
            ), name


def test_convention_a_default_cv_is_kfold():
    X, Y, _ = _data(n=90, seed=4)
    est = SoftLabelClassifier(LogisticRegression())
    res = cross_validate(est, X, Y, cv=3, scoring=HUMAN_SCORERS["neg_kl_divergence"])
    for fold, (train, test) in enumerate(KFold(3).split(X)):
        P = clone(est).fit(X[train], Y[train]).predict_proba(X[test])
        assert res["test_score"][fold] == pytest.approx(-_kl_scipy(Y[test], P))


def test_convention_a_dataframe_histograms():
    X, Y, _ = _data(n=90, seed=5)
    frame = pd.DataFrame(Y, columns=["e", "n", "c"])
    est = SoftLabelClassifier(LogisticRegression())
    cv = KFold(3, shuffle=True, random_state=1)
    res = cross_validate(
        est, X, frame, cv=cv, scoring=HUMAN_SCORERS, error_score="raise"
    )
    ref = cross_validate(est, X, Y, cv=cv, scoring=HUMAN_SCORERS, error_score="raise")
    for name in HUMAN_SCORERS:
        np.testing.assert_allclose(res[f"test_{name}"], ref[f"test_{name}"])


# ------------------------------------- convention B: labels + counts metadata


@FALLBACK
def test_convention_b_counts_as_metadata():
    X, Y, _ = _data(seed=6)
    y_major = Y.argmax(axis=1)
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    names = list(HUMAN_SCORERS) + DISAGREEMENT_NAMES
    with sklearn.config_context(enable_metadata_routing=True):
        scoring = {n: get_human_scorer(n).set_score_request(counts=True) for n in names}
        res = cross_validate(
            LogisticRegression(),
            X,
            y_major,
            cv=cv,
            scoring=scoring,
            params={"counts": Y},
            error_score="raise",
        )
    for fold, (train, test) in enumerate(cv.split(X, y_major)):
        P = LogisticRegression().fit(X[train], y_major[train]).predict_proba(X[test])
        for name in names:
            assert res[f"test_{name}"][fold] == pytest.approx(
                _hand_score(name, Y[test], P), rel=1e-10, abs=1e-12
            ), name
    # The counts did matter: scoring the one-hot majority gives other numbers.
    one_hot = np.eye(3)[y_major[test]]
    assert res["test_neg_kl_divergence"][-1] != pytest.approx(
        -M.kl_divergence(one_hot, P)
    )


def test_convention_b_requires_the_request_and_routes_sample_weight():
    X, Y, _ = _data(seed=7)
    y_major = Y.argmax(axis=1)
    w = np.random.default_rng(0).uniform(0.2, 2.0, size=len(X))
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(UnsetMetadataPassedError, match="counts"):
            cross_validate(
                LogisticRegression(),
                X,
                y_major,
                cv=cv,
                scoring=get_human_scorer("neg_kl_divergence"),
                params={"counts": Y},
                error_score="raise",
            )
        scorer = get_human_scorer("neg_expected_squared_loss").set_score_request(
            counts=True, sample_weight=True
        )
        res = cross_validate(
            LogisticRegression().set_fit_request(sample_weight=False),
            X,
            y_major,
            cv=cv,
            scoring=scorer,
            params={"counts": Y, "sample_weight": w},
            error_score="raise",
        )
    for fold, (train, test) in enumerate(cv.split(X, y_major)):
        P = LogisticRegression().fit(X[train], y_major[train]).predict_proba(X[test])
        p_hat = Y[test] / Y[test].sum(1, keepdims=True)
        per_item = ((p_hat - P) ** 2 + p_hat * (1 - p_hat)).sum(1)  # Mimori Prop. 1
        assert res["test_score"][fold] == pytest.approx(
            -np.average(per_item, weights=w[test])
        )


# ----------------------------------------------------------- GridSearchCV


def _holdout(seed=8):
    X, Y, _ = _data(n=240, seed=seed)
    return X[:160], Y[:160], X[160:], Y[160:]


def test_grid_search_convention_a_picks_better_kl():
    Xtr, Ytr, Xte, Yte = _holdout()
    grid = GridSearchCV(
        SoftLabelClassifier(LogisticRegression()),
        {"estimator__C": [1e-4, 1.0]},
        scoring=HUMAN_SCORERS["neg_kl_divergence"],
        cv=KFold(4, shuffle=True, random_state=0),
    ).fit(Xtr, Ytr)
    held_out = {
        C: _kl_scipy(
            Yte,
            SoftLabelClassifier(LogisticRegression(C=C))
            .fit(Xtr, Ytr)
            .predict_proba(Xte),
        )
        for C in (1e-4, 1.0)
    }
    assert held_out[1e-4] > held_out[1.0] + 0.05  # near-uniform is clearly worse
    assert grid.best_params_["estimator__C"] == min(held_out, key=held_out.get)
    assert grid.score(Xte, Yte) == pytest.approx(-held_out[1.0])


def test_grid_search_convention_b_picks_better_kl():
    Xtr, Ytr, Xte, Yte = _holdout()
    ytr = Ytr.argmax(axis=1)
    with sklearn.config_context(enable_metadata_routing=True):
        grid = GridSearchCV(
            LogisticRegression(),
            {"C": [1e-4, 1.0]},
            scoring=get_human_scorer("neg_kl_divergence").set_score_request(
                counts=True
            ),
            cv=StratifiedKFold(4, shuffle=True, random_state=0),
        ).fit(Xtr, ytr, counts=Ytr)
    held_out = {
        C: _kl_scipy(Yte, LogisticRegression(C=C).fit(Xtr, ytr).predict_proba(Xte))
        for C in (1e-4, 1.0)
    }
    assert held_out[1e-4] > held_out[1.0] + 0.05
    assert grid.best_params_["C"] == min(held_out, key=held_out.get)


def test_grid_search_accuracy_and_human_scorer_disagree():
    # Humans disagree a lot (temperature 3): a 1-nearest-neighbour memoriser of
    # the majority label is more often right than the class prior, but its
    # one-hot probabilities are badly calibrated to the human distributions.
    X, Y, _ = _data(n=300, seed=0, temperature=3.0)
    Xtr, Ytr, Xte, Yte = X[:200], Y[:200], X[200:], Y[200:]
    candidates = [KNeighborsClassifier(n_neighbors=1), DummyClassifier()]
    grid = GridSearchCV(
        # random_state: majority ties are broken at random; a fixed seed keeps
        # the test deterministic
        SoftLabelClassifier(LogisticRegression(), strategy="majority", random_state=0),
        {"estimator": candidates},
        scoring={
            "acc": HUMAN_SCORERS["majority_accuracy"],
            "kl": HUMAN_SCORERS["neg_kl_divergence"],
        },
        refit=False,
        cv=KFold(4, shuffle=True, random_state=0),
    ).fit(Xtr, Ytr)
    by_acc = int(np.argmax(grid.cv_results_["mean_test_acc"]))
    by_kl = int(np.argmax(grid.cv_results_["mean_test_kl"]))
    assert (by_acc, by_kl) == (0, 1)
    # Independent held-out check (numpy accuracy, scipy KL, eps-floored q).
    acc, kl = [], []
    for cand in candidates:
        P = (
            SoftLabelClassifier(cand, strategy="majority", random_state=0)
            .fit(Xtr, Ytr)
            .predict_proba(Xte)
        )
        acc.append(np.mean(P.argmax(1) == Yte.argmax(1)))
        Pf = np.maximum(P, 1e-15)
        kl.append(_kl_scipy(Yte, Pf / Pf.sum(1, keepdims=True)))
    assert acc[0] > acc[1]
    assert kl[0] > kl[1]


# -------------------------------------------- out-of-fold probabilities


def _oof(est, X, Y, cv):
    out = np.zeros(Y.shape if Y.ndim == 2 else (len(Y), len(np.unique(Y))))
    for train, test in cv.split(X, Y):
        out[test] = clone(est).fit(X[train], Y[train]).predict_proba(X[test])
    return out


def _label_encode_columns(Y):
    return np.column_stack(
        [np.unique(col, return_inverse=True)[1] for col in Y.T]
    ).astype(np.int64)


def test_cross_val_predict_pitfall_and_alternative():
    # 50 annotations per item: a column's counts have gaps (e.g. no item with
    # exactly 37 votes), and cross_val_predict label-encodes them away.
    X, Y, _ = _data(n=120, n_annotations=50, seed=9)
    Y_enc = _label_encode_columns(Y)
    assert not np.array_equal(Y_enc, Y)
    est = SoftLabelClassifier(LogisticRegression())
    cv = KFold(3, shuffle=True, random_state=0)

    sk = cross_val_predict(est, X, Y, cv=cv, method="predict_proba")
    right = _oof(est, X, Y, cv)
    wrong = _oof(est, X, Y_enc, cv)
    np.testing.assert_allclose(sk, wrong, atol=1e-10)  # trained on re-coded counts
    assert np.max(np.abs(sk - right)) > 1e-3

    ours = cross_val_predict_proba(est, X, Y, cv=cv)
    np.testing.assert_allclose(ours, right, atol=1e-10)
    # With an integer cv, 2-D y gets an unshuffled KFold, as in cross_validate.
    np.testing.assert_allclose(
        cross_val_predict_proba(est, X, Y, cv=4), _oof(est, X, Y, KFold(4))
    )


def test_cross_val_predict_proba_labels_frames_params_and_errors():
    X, Y, _ = _data(n=120, seed=10)
    y = np.array(["a", "b", "c"])[Y.argmax(axis=1)]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    np.testing.assert_allclose(
        cross_val_predict_proba(LogisticRegression(), X, y, cv=cv),
        cross_val_predict(LogisticRegression(), X, y, cv=cv, method="predict_proba"),
    )
    # A DataFrame of histograms: columns in frame order.
    frame = pd.DataFrame(Y, columns=["e", "n", "c"])
    est = SoftLabelClassifier(LogisticRegression())
    kf = KFold(3, shuffle=True, random_state=0)
    np.testing.assert_allclose(
        cross_val_predict_proba(est, X, frame, cv=kf), _oof(est, X, Y, kf)
    )
    # Fit parameters are indexed per fold.
    w = np.random.default_rng(1).uniform(0.1, 3.0, size=len(X))
    got = cross_val_predict_proba(est, X, Y, cv=kf, params={"sample_weight": w})
    want = np.zeros(Y.shape)
    for train, test in kf.split(X):
        fitted = clone(est).fit(X[train], Y[train], sample_weight=w[train])
        want[test] = fitted.predict_proba(X[test])
    np.testing.assert_allclose(got, want)
    assert np.max(np.abs(got - _oof(est, X, Y, kf))) > 1e-4
    # A class missing from a training fold gets probability 0 there.
    y2 = np.array([0] * 60 + [1] * 57 + [2] * 3)
    proba = cross_val_predict_proba(LogisticRegression(), X, y2, cv=KFold(3))
    assert proba.shape == (120, 3)
    np.testing.assert_allclose(proba[80:, 2], 0.0)  # the fold testing all "2"s
    assert np.all(proba[:80, 2] > 0)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    with pytest.raises(ValueError, match="partition"):
        cross_val_predict_proba(est, X, Y, cv=ShuffleSplit(3, random_state=0))


def test_cross_val_predict_proba_other_methods_through_a_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_hcal import AlphaCalibrator

    X, Y, _ = _data(n=150, seed=11)
    pipe = make_pipeline(
        StandardScaler(), AlphaCalibrator(LogisticRegression(), cv=2, random_state=0)
    )
    kf = KFold(3, shuffle=True, random_state=0)
    phi = cross_val_predict_proba(pipe, X, Y, cv=kf, method="predict_disagreement")
    want = np.empty(len(X))
    for train, test in kf.split(X):
        fitted = clone(pipe).fit(X[train], Y[train])
        want[test] = fitted[-1].predict_disagreement(fitted[0].transform(X[test]))
    np.testing.assert_allclose(phi, want)
    assert phi.shape == (150,)
    with pytest.raises(ValueError, match="no method 'predict_posterior_typo'"):
        cross_val_predict_proba(pipe, X, Y, cv=kf, method="predict_posterior_typo")
    # decision_function of a fold missing a class has no column to fill
    y2 = np.array([0] * 60 + [1] * 87 + [2] * 3)
    with pytest.raises(ValueError, match=r"lacks class\(es\) \[2\]"):
        cross_val_predict_proba(
            LogisticRegression(), X, y2, cv=KFold(3), method="decision_function"
        )
