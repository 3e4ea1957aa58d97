"""Human scorers: scikit-learn scorer mechanics, signs, binary handling,
disagreement responses, metadata, registry."""

import copy
import pickle
import warnings
from functools import partial

import numpy as np
import pytest
import sklearn
from scipy.stats import entropy
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import make_scorer
from sklearn.metrics._scorer import _MultimetricScorer, _Scorer
from sklearn.utils.validation import check_is_fitted

from sklearn_hcal import SoftLabelClassifier
from sklearn_hcal import metrics as M
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import (
    HUMAN_SCORERS,
    get_human_scorer,
    get_human_scorer_names,
    make_human_scorer,
)
from tests._tables import DISAGREEMENT, EXPECTED, NOT_FOR_ALL_LABELS, PLUGIN


def _data(n_classes, n=120, n_annotations=5, seed=0):
    X, Y, _ = make_label_histograms(
        n, n_classes, n_annotations, n_features=4, random_state=seed
    )
    return X, Y.astype(np.int64)


def _gini(P):
    return 1.0 - np.sum(P * P, axis=1)


class HalfDisagreementClassifier(ClassifierMixin, BaseEstimator):
    """Logistic regression that also predicts disagreement 0.5 * (1 - sum q^2)."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        self.lr_ = LogisticRegression(C=self.C).fit(X, y)
        self.classes_ = self.lr_.classes_
        return self

    def predict_proba(self, X):
        check_is_fitted(self)
        return self.lr_.predict_proba(X)

    def predict(self, X):
        return self.lr_.predict(X)

    def predict_disagreement(self, X):
        return 0.5 * _gini(self.predict_proba(X))


# ---------------------------------------------------------------- registry


def test_names_sorted_complete_and_human_scorers_subset():
    names = get_human_scorer_names()
    assert names == sorted(names)
    assert set(names) == (
        set(EXPECTED) | set(DISAGREEMENT) | set(PLUGIN) | set(NOT_FOR_ALL_LABELS)
    )
    assert set(HUMAN_SCORERS) == set(EXPECTED)
    assert isinstance(HUMAN_SCORERS, dict)
    for scorer in HUMAN_SCORERS.values():
        assert isinstance(scorer, _Scorer)


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match="not a valid human scorer") as info:
        get_human_scorer("neg_kl")
    assert "neg_kl_divergence" in str(info.value)
    assert "majority_accuracy" in str(info.value)
    with pytest.raises(ValueError, match="valid names"):
        make_human_scorer("not_a_metric_error")


def test_get_human_scorer_returns_copies_and_passes_callables():
    a = get_human_scorer("neg_kl_divergence")
    assert a is not HUMAN_SCORERS["neg_kl_divergence"]
    with sklearn.config_context(enable_metadata_routing=True):
        a.set_score_request(counts=True)
        # The shared registry entry is untouched by the request on the copy.
        fresh = get_human_scorer("neg_kl_divergence")
        assert fresh.get_metadata_routing().score.requests["counts"] is None
        assert a.get_metadata_routing().score.requests["counts"] is True
    assert get_human_scorer(a) is a
    assert get_human_scorer(M.kl_divergence) is M.kl_divergence


@pytest.mark.parametrize(
    "name",
    sorted(EXPECTED)
    + sorted(DISAGREEMENT)
    + sorted(PLUGIN)
    + sorted(NOT_FOR_ALL_LABELS),
)
def test_every_scorer_on_soft_label_classifier(name):
    X, Y = _data(3, n=90, seed=1)
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, Y)
    P = clf.predict_proba(X)
    metric_name, sign = {**EXPECTED, **DISAGREEMENT, **PLUGIN, **NOT_FOR_ALL_LABELS}[
        name
    ]
    metric = getattr(M, metric_name)
    if name in PLUGIN:
        metric = partial(metric, debiased=False)
    pred = _gini(P) if name in DISAGREEMENT else P
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = get_human_scorer(name)(clf, X, Y)
        want = sign * metric(Y, pred)
    assert np.isfinite(got)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


# ------------------------------------------------------------ binary, signs


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_binary_scorer_equals_metric_on_full_matrix(name):
    X, Y = _data(2, n=100, seed=2)
    y = Y.argmax(axis=1)
    clf = LogisticRegression().fit(X, y)
    P = clf.predict_proba(X)
    metric_name, sign = EXPECTED[name]
    metric = getattr(M, metric_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert HUMAN_SCORERS[name](clf, X, Y) == pytest.approx(
            sign * metric(Y, P), rel=1e-12, abs=1e-12
        )
        # 1-D labels: one annotation per item.
        assert HUMAN_SCORERS[name](clf, X, y) == pytest.approx(
            sign * metric(np.eye(2)[y], P), rel=1e-12, abs=1e-12
        )


def test_binary_scorer_gets_one_column_and_matches_scipy():
    X, Y = _data(2, n=80, seed=3)
    clf = LogisticRegression().fit(X, Y.argmax(axis=1))
    seen = []

    def recording_loss(y_true, y_prob):
        seen.append(np.asarray(y_prob))
        return M.kl_divergence(y_true, y_prob)

    score = make_human_scorer(recording_loss)(clf, X, Y)
    # scikit-learn hands a binary classifier's P(second class) only ...
    assert seen[0].shape == (80,)
    np.testing.assert_allclose(seen[0], clf.predict_proba(X)[:, 1])
    # ... and the score is still -KL(p_hat || q) over both classes (scipy).
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    want = -np.mean(entropy(p_hat, clf.predict_proba(X), axis=1))
    assert score == pytest.approx(want, rel=1e-10)
    assert HUMAN_SCORERS["neg_kl_divergence"](clf, X, Y) == pytest.approx(want)


def test_sign_conventions_and_greater_is_better_inference():
    X, Y = _data(3, n=60, seed=4)
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, Y)
    P = clf.predict_proba(X)
    tvd = np.mean(0.5 * np.abs(Y / Y.sum(1, keepdims=True) - P).sum(1))
    assert HUMAN_SCORERS["neg_distribution_calibration_error"](
        clf, X, Y
    ) == pytest.approx(-tvd)
    assert HUMAN_SCORERS["ranking_calibration_score"](clf, X, Y) >= 0
    acc = np.mean(P.argmax(1) == Y.argmax(1))
    assert HUMAN_SCORERS["majority_accuracy"](clf, X, Y) == pytest.approx(acc)

    def my_score(y_true, y_prob):
        return 0.25

    def my_divergence(y_true, y_prob):
        return 0.25

    def my_thing(y_true, y_prob):
        return 0.25

    assert make_human_scorer(my_score)(clf, X, Y) == 0.25
    assert make_human_scorer(my_divergence)(clf, X, Y) == -0.25
    assert make_human_scorer(my_thing, greater_is_better=False)(clf, X, Y) == -0.25
    assert make_human_scorer("kl_divergence", greater_is_better=True)(
        clf, X, Y
    ) == pytest.approx(M.kl_divergence(Y, P))
    with pytest.raises(ValueError, match="greater_is_better"):
        make_human_scorer(my_thing)


def test_kwargs_repr_pickle_and_bad_response_method():
    X, Y = _data(3, n=60, seed=5)
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, Y)
    P = clf.predict_proba(X)
    scorer = make_human_scorer("calibration_loss", n_bins=5, debiased=False)
    assert scorer(clf, X, Y) == pytest.approx(
        -M.calibration_loss(Y, P, n_bins=5, debiased=False)
    )
    assert scorer(clf, X, Y) != pytest.approx(-M.calibration_loss(Y, P))
    assert repr(scorer) == (
        "make_human_scorer(calibration_loss, greater_is_better=False, "
        "response_method='predict_proba', n_bins=5, debiased=False)"
    )
    restored = pickle.loads(pickle.dumps(scorer))
    assert restored(clf, X, Y) == scorer(clf, X, Y)
    assert copy.deepcopy(scorer)(clf, X, Y) == scorer(clf, X, Y)
    with pytest.raises(ValueError, match="response_method"):
        make_human_scorer("kl_divergence", response_method="predict_logits")
    with pytest.raises(ValueError, match="response_method"):
        make_human_scorer("kl_divergence", response_method=())


# ----------------------------------------------------- labels and classes_


def test_string_labels_one_hot_in_estimator_class_order():
    X, Y = _data(3, n=150, seed=6)
    names = np.array(["contradiction", "entailment", "neutral"])
    y = names[Y.argmax(axis=1)]
    clf = LogisticRegression().fit(X, y)
    # A test subset without "neutral": column order must still follow classes_.
    keep = y != "neutral"
    Xs, ys = X[keep], y[keep]
    P = clf.predict_proba(Xs)
    onehot = (ys[:, None] == clf.classes_[None, :]).astype(float)
    want = -M.kl_divergence(onehot, P)
    assert HUMAN_SCORERS["neg_kl_divergence"](clf, Xs, ys) == pytest.approx(want)
    # Labels the classifier never saw are an error naming y_true.
    with pytest.raises(ValueError, match="y_true"):
        HUMAN_SCORERS["neg_kl_divergence"](clf, Xs, np.full(len(ys), "other"))


def test_named_histogram_columns_are_matched_to_classes_by_name():
    # The scorer passes classes_ as labels=, so a DataFrame of histograms in
    # another column order is put in predict_proba's order by the metric.
    import pandas as pd

    X, Y = _data(3, n=120, seed=21)
    names = ["neg", "neu", "pos"]
    frame = pd.DataFrame(Y, columns=names)
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, frame)
    P = clf.predict_proba(X)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    want = -np.mean(entropy(p_hat, P, axis=1))  # scipy's KL, in classes_ order
    shuffled = frame[["pos", "neg", "neu"]]
    scorer = HUMAN_SCORERS["neg_kl_divergence"]
    assert scorer(clf, X, shuffled) == pytest.approx(want, rel=1e-10)
    assert scorer(clf, X, Y) == pytest.approx(want, rel=1e-10)
    renamed = frame.rename(columns={"pos": "other"})
    with pytest.raises(ValueError, match="other"):
        scorer(clf, X, renamed)
    # labels= fixed in the scorer wins over classes_
    other = ["pos", "neg", "neu"]
    fixed = make_human_scorer("kl_divergence", labels=other)
    assert fixed(clf, X, frame) == pytest.approx(
        -M.kl_divergence(frame, P, labels=other)
    )
    assert fixed(clf, X, frame) != pytest.approx(want)


# ------------------------------------------------------------ disagreement


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", sorted(DISAGREEMENT))
def test_disagreement_uses_predict_disagreement_when_present(name, n_classes):
    X, Y = _data(n_classes, n=100, seed=7)
    y = Y.argmax(axis=1)
    metric = getattr(M, DISAGREEMENT[name][0])
    scorer = get_human_scorer(name)

    own = HalfDisagreementClassifier().fit(X, y)
    phi_own = 0.5 * _gini(own.predict_proba(X))
    assert scorer(own, X, Y) == pytest.approx(-metric(Y, phi_own), abs=1e-12)

    plain = LogisticRegression().fit(X, y)
    phi = _gini(plain.predict_proba(X))
    with pytest.warns(UserWarning, match="has no predict_disagreement"):
        assert scorer(plain, X, Y) == pytest.approx(-metric(Y, phi), abs=1e-12)
    # The test can fail: halving phi changes the metric.
    assert metric(Y, phi) != pytest.approx(metric(Y, phi_own))


@pytest.mark.filterwarnings(
    "ignore:y_disagreement reaches:UserWarning"
)  # φ values by hand, beyond 1 - 1/K on purpose
def test_binary_probability_column_is_not_taken_for_phi():
    X, Y = _data(2, n=100, seed=8)
    clf = LogisticRegression().fit(X, Y.argmax(axis=1))
    p1 = clf.predict_proba(X)[:, 1]
    seen = []

    def disagreement_record_loss(y_true, y_disagreement):
        seen.append(np.asarray(y_disagreement))
        return M.disagreement_squared_loss(y_true, y_disagreement)

    scorer = make_human_scorer(
        disagreement_record_loss,
        response_method=("predict_disagreement", "predict_proba"),
    )
    with pytest.warns(UserWarning, match="1 - sum"):
        score = scorer(clf, X, Y)
    np.testing.assert_allclose(seen[0], 2 * p1 * (1 - p1))
    assert score == pytest.approx(-M.disagreement_squared_loss(Y, 2 * p1 * (1 - p1)))
    assert score != pytest.approx(-M.disagreement_squared_loss(Y, p1))
    # A plain scikit-learn scorer with the same response methods cannot tell:
    # it hands the probability column to the metric as if it were phi.
    naive = make_scorer(
        M.disagreement_squared_loss,
        response_method=("predict_disagreement", "predict_proba"),
        greater_is_better=False,
    )
    assert naive(clf, X, Y) == pytest.approx(-M.disagreement_squared_loss(Y, p1))


def test_disagreement_and_probability_scorers_share_cache():
    # In multi-metric scoring, scikit-learn caches predict_proba (1-D for a
    # binary classifier) and hands the cached array to every scorer.
    X, Y = _data(2, n=100, seed=9)
    clf = LogisticRegression().fit(X, Y.argmax(axis=1))
    P = clf.predict_proba(X)
    scorers = {
        "kl": HUMAN_SCORERS["neg_kl_divergence"],
        "dsl": get_human_scorer("neg_disagreement_squared_loss"),
        "js": HUMAN_SCORERS["neg_jensen_shannon_distance"],
    }
    multi = _MultimetricScorer(scorers=scorers)
    assert multi._use_cache(clf)
    with pytest.warns(UserWarning, match="has no predict_disagreement"):
        out = multi(clf, X, Y)
    assert out["kl"] == pytest.approx(-M.kl_divergence(Y, P))
    assert out["dsl"] == pytest.approx(-M.disagreement_squared_loss(Y, _gini(P)))


def test_disagreement_response_method_validation():
    X, Y = _data(3, n=60, seed=10)
    clf = LogisticRegression().fit(X, Y.argmax(axis=1))
    only = make_human_scorer(
        "disagreement_squared_loss", response_method="predict_disagreement"
    )
    with pytest.raises(AttributeError, match="predict_disagreement"):
        only(clf, X, Y)
    via_decision = make_human_scorer(
        "disagreement_squared_loss", response_method="decision_function"
    )
    with pytest.raises(ValueError, match="predict_disagreement or predict_proba"):
        via_decision(clf, X, Y)

    class Bad(HalfDisagreementClassifier):
        def predict_disagreement(self, X):
            return np.ones((len(X), 3))

    with pytest.raises(ValueError, match="one value per sample"):
        get_human_scorer("neg_disagreement_squared_loss")(
            Bad().fit(X, Y.argmax(1)), X, Y
        )


# ------------------------------------------------------- metadata, weights


def test_counts_metadata_replaces_labels():
    X, Y = _data(3, n=90, seed=11)
    y_major = Y.argmax(axis=1)
    clf = LogisticRegression().fit(X, y_major)
    P = clf.predict_proba(X)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = get_human_scorer("neg_jensen_shannon_distance").set_score_request(
            counts=True
        )
        got = scorer(clf, X, y_major, counts=Y)
        dscorer = make_human_scorer(
            "disagreement_squared_loss", response_method="predict_proba"
        )
        dscorer.set_score_request(counts=True)
        dgot = dscorer(clf, X, y_major, counts=Y)
    assert got == pytest.approx(-M.jensen_shannon_distance(Y, P))
    assert got != pytest.approx(-M.jensen_shannon_distance(np.eye(3)[y_major], P))
    assert dgot == pytest.approx(-M.disagreement_squared_loss(Y, _gini(P)))
    # Without routing, extra metadata is refused by scikit-learn.
    with pytest.raises(ValueError, match="enable_metadata_routing"):
        HUMAN_SCORERS["neg_jensen_shannon_distance"](clf, X, y_major, counts=Y)


def test_prediction_argument_is_not_metadata():
    with sklearn.config_context(enable_metadata_routing=True):
        routing = get_human_scorer("neg_disagreement_squared_loss")
        requests = routing.get_metadata_routing().score.requests
    assert "y_disagreement" not in requests
    assert "counts" in requests


def test_sample_weight_reaches_metrics_that_accept_it():
    X, Y = _data(3, n=90, seed=12)
    clf = SoftLabelClassifier(LogisticRegression()).fit(X, Y)
    P = clf.predict_proba(X)
    w = np.random.default_rng(0).uniform(0.1, 3.0, size=len(X))
    scorer = HUMAN_SCORERS["neg_expected_squared_loss"]
    got = scorer(clf, X, Y, sample_weight=w)
    assert got == pytest.approx(-M.expected_squared_loss(Y, P, sample_weight=w))
    assert got != pytest.approx(-M.expected_squared_loss(Y, P))
    # Independent: the weighted mean of per-item squared losses (Mimori Prop. 1).
    p_hat = Y / Y.sum(1, keepdims=True)
    per_item = ((p_hat - P) ** 2 + p_hat * (1 - p_hat)).sum(1)
    assert got == pytest.approx(-np.average(per_item, weights=w))
    assert scorer._accept_sample_weight()
    assert not HUMAN_SCORERS["neg_kl_divergence"]._accept_sample_weight()


def test_scorer_clone_of_estimator_is_independent():
    # Scorers hold no estimator state: scoring two clones gives two answers.
    X, Y = _data(3, n=90, seed=13)
    base = SoftLabelClassifier(LogisticRegression())
    a = clone(base).set_params(estimator__C=1e-4).fit(X, Y)
    b = clone(base).fit(X, Y)
    s = HUMAN_SCORERS["neg_kl_divergence"]
    assert s(a, X, Y) == pytest.approx(-M.kl_divergence(Y, a.predict_proba(X)))
    assert s(b, X, Y) == pytest.approx(-M.kl_divergence(Y, b.predict_proba(X)))
    assert s(a, X, Y) != pytest.approx(s(b, X, Y))


# ------------------------------- Pipelines: the last step's own φ is scored


def _alpha_pipeline_search(scoring):
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_hcal import AlphaCalibrator

    # X: the logits of a classifier (estimator=None), on another scale, so
    # that the scaler matters: a check that X is transformed first.
    Z, Y, _ = make_label_histograms(240, 3, 5, random_state=14)
    X = Z * 10.0 + 3.0
    pipe = make_pipeline(StandardScaler(), AlphaCalibrator(random_state=0))
    search = GridSearchCV(
        pipe,
        {"alphacalibrator__alpha_reg": [5e-4, 0.05, 5]},
        scoring=scoring,
        cv=KFold(3),
        refit=False,
        error_score="raise",
    )
    return search, X, Y


def test_disagreement_scorer_reaches_predict_disagreement_through_pipeline():
    pytest.importorskip("torch")
    from sklearn.base import clone
    from sklearn.model_selection import KFold

    scorer = get_human_scorer("neg_disagreement_squared_loss")
    search, X, Y = _alpha_pipeline_search(scorer)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no silent fallback
        search.fit(X, Y)
    scores = search.cv_results_["mean_test_score"]
    # Candidates are told apart (a scorer that missed the last step's φ gave
    # all three -0.1900084).
    assert len(set(np.round(scores, 10))) == 3
    # Each equals the metric of the last step's own predict_disagreement on
    # the scaled test features, computed directly.
    for i, params in enumerate(search.cv_results_["params"]):
        direct = []
        for train, test in KFold(3).split(X):
            pipe = clone(search.estimator).set_params(**params).fit(X[train], Y[train])
            scaler, alpha = pipe.steps[0][1], pipe.steps[-1][1]
            phi = alpha.predict_disagreement(scaler.transform(X[test]))
            direct.append(-M.disagreement_squared_loss(Y[test], phi))
        assert scores[i] == pytest.approx(np.mean(direct), rel=1e-10, abs=1e-12)


def test_disagreement_scorer_fallback_warns_and_explicit_proba_does_not():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, Y = _data(3, n=90, seed=15)
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, Y.argmax(1))
    phi = _gini(pipe.predict_proba(X))
    want = -M.disagreement_squared_loss(Y, phi)
    with pytest.warns(UserWarning, match="Pipeline has no predict_disagreement"):
        assert get_human_scorer("neg_disagreement_squared_loss")(
            pipe, X, Y
        ) == pytest.approx(want)
    explicit = make_human_scorer(
        "disagreement_squared_loss", response_method="predict_proba"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert explicit(pipe, X, Y) == pytest.approx(want)
    # A Pipeline whose final step predicts disagreement is used directly.
    own = make_pipeline(StandardScaler(), HalfDisagreementClassifier()).fit(
        X, Y.argmax(1)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        got = get_human_scorer("neg_disagreement_squared_loss")(own, X, Y)
    assert got == pytest.approx(
        -M.disagreement_squared_loss(Y, 0.5 * _gini(own.predict_proba(X)))
    )


def test_disagreement_scorer_raises_when_a_component_hides_it():
    from sklearn.model_selection import GridSearchCV

    X, Y = _data(3, n=90, seed=16)
    y = Y.argmax(1)
    # A grid search exposes predict_proba but not predict_disagreement of its
    # best estimator: scoring 1 - sum(q^2) would score another model.
    search = GridSearchCV(HalfDisagreementClassifier(), {"C": [0.1, 1.0]}, cv=2)
    search.fit(X, y)
    with pytest.raises(ValueError, match="HalfDisagreementClassifier.*cannot reach"):
        get_human_scorer("neg_disagreement_squared_loss")(search, X, Y)
    # Asking for the point prediction explicitly is allowed.
    explicit = make_human_scorer(
        "disagreement_squared_loss", response_method="predict_proba"
    )
    assert explicit(search, X, Y) == pytest.approx(
        -M.disagreement_squared_loss(Y, _gini(search.predict_proba(X)))
    )
