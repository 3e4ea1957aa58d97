"""The calibrators and the conformal classifier share one front end
(developer guide §estimators): the same targets give the same errors and the
same alignment by name, whichever estimator reads them."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from sklearn_hcal import AlphaCalibrator, MatrixScaler, TemperatureScaler, VectorScaler
from sklearn_hcal._frontend import ClassifierOutputMixin, HumanTargetMixin
from sklearn_hcal.conformal import HumanConformalClassifier
from sklearn_hcal.datasets import make_label_histograms

ESTIMATORS = [
    TemperatureScaler,
    VectorScaler,
    MatrixScaler,
    AlphaCalibrator,
    HumanConformalClassifier,
]
NAMES = ["a", "b", "c"]
ITEMS = pd.Index([f"q{i}" for i in range(300)], name="item")

X, Y, Q = make_label_histograms(
    300, 3, 5, n_features=3, temperature=2.0, random_state=0
)
P = softmax(X @ np.random.RandomState(0).normal(size=(3, 3)), axis=1)


def _make(Est, estimator=None, **kw):
    if Est is AlphaCalibrator:
        kw.setdefault("max_iter", 20)
    return Est(estimator, **kw)


def _fit(est, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence of short α fits
        return est.fit(*args, **kwargs)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_every_estimator_inherits_the_front_end_without_copying_it(Est):
    assert issubclass(Est, ClassifierOutputMixin)
    assert issubclass(Est, HumanTargetMixin)
    for method in ("_fit_front", "_predict_outputs", "_validate_input", "score"):
        assert getattr(Est, method) is getattr(ClassifierOutputMixin, method), method


def _shuffled_frame(values):
    return pd.DataFrame(values, columns=NAMES)[["c", "a", "b"]]


BAD_TARGETS = {
    "negative count": lambda: (P, np.where(Y == Y.max(), -1, Y), {}),
    "NaN count": lambda: (P, np.where(Y == Y.max(), np.nan, Y), {}),
    "class-count mismatch": lambda: (P, Y[:, :2], {}),
    "fewer rows than X": lambda: (P, Y[:-1], {}),
    "counts and y lengths": lambda: (P, Y.argmax(1)[:-1], {"counts": Y}),
    "no target": lambda: (P, None, {}),
    "ragged rows": lambda: (P[:3], [[1, 2, 0], [1, 2], [0, 1, 1]], {}),
    "unsorted frame beside an array": lambda: (
        P,
        _shuffled_frame(Y),
        {},
    ),
    "X names other classes": lambda: (
        pd.DataFrame(P, columns=["a", "b", "z"]),
        pd.DataFrame(Y, columns=NAMES),
        {},
    ),
    "frame with a class named twice": lambda: (
        P,
        pd.DataFrame(Y, columns=["a", "b", "a"]),
        {},
    ),
    "labels outside classes": lambda: (
        P,
        np.where(Y.argmax(1) == 0, 7, Y.argmax(1)),
        {"classes": [0, 1, 2]},
    ),
    "a single item": lambda: (P[:1], Y[:1], {}),
    "X and y indexed by other items": lambda: (
        pd.DataFrame(P, index=ITEMS),
        pd.DataFrame(Y).set_axis(ITEMS[1:].append(pd.Index(["new"]))),
        {},
    ),
}


def _message(Est, X_, y_, fit_kw, params):
    with pytest.raises(ValueError) as err:
        _fit(_make(Est, **params), X_, y_, **fit_kw)
    return re.sub(Est.__name__, "<estimator>", str(err.value))


@pytest.mark.parametrize("case", sorted(BAD_TARGETS))
def test_the_same_bad_target_gives_the_same_error_everywhere(case):
    X_, y_, kw = BAD_TARGETS[case]()
    params = {"classes": kw.pop("classes")} if "classes" in kw else {}
    messages = {Est.__name__: _message(Est, X_, y_, kw, params) for Est in ESTIMATORS}
    assert len(set(messages.values())) == 1, messages


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_a_score_frame_is_aligned_by_name(Est):
    H = pd.DataFrame(Y, columns=NAMES)
    shuffled = _fit(_make(Est), _shuffled_frame(P), H)
    plain = _fit(_make(Est), P, Y)
    assert list(shuffled.classes_) == ["c", "a", "b"]  # X's columns, as named
    proba = pd.DataFrame(
        shuffled.predict_proba(_shuffled_frame(P)), columns=list("cab")
    )
    np.testing.assert_allclose(proba[NAMES], plain.predict_proba(P), atol=1e-7)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_a_histogram_frame_is_aligned_with_a_frozen_classifier_by_name(Est):
    labels = np.array(NAMES)[Q.argmax(axis=1)]
    clf = LogisticRegression().fit(X, labels)
    shuffled = _fit(_make(Est, FrozenEstimator(clf)), X, _shuffled_frame(Y))
    plain = _fit(_make(Est, FrozenEstimator(clf)), X, Y)  # already in order
    assert list(shuffled.classes_) == NAMES  # clf.classes_
    np.testing.assert_allclose(shuffled.predict_proba(X), plain.predict_proba(X))
    assert shuffled.n_features_in_ == 3


def test_score_is_one_rule_for_all():
    # majority accuracy, first tied class, computed here independently
    clf = LogisticRegression().fit(X, Y.argmax(axis=1))
    first_majority = (Y == Y.max(axis=1, keepdims=True)).argmax(axis=1)
    expected = np.mean(clf.predict(X) == first_majority)
    for Est in (TemperatureScaler, HumanConformalClassifier):
        est = _fit(_make(Est, FrozenEstimator(clf)), X, Y)
        assert est.score(X, Y) == pytest.approx(expected)


@pytest.mark.parametrize("Est", [TemperatureScaler, AlphaCalibrator])
@pytest.mark.filterwarnings(
    "ignore:No item has two or more annotations:UserWarning"
)  # one label per item on purpose
def test_crossfit_warnings_point_at_the_caller(Est):
    clf = LogisticRegression().fit(X, Y.argmax(axis=1))
    with pytest.warns(UserWarning, match="already fitted") as record:
        _make(Est, clf, cv=2).fit(X, Y.argmax(axis=1))
    assert {w.filename for w in record if "already fitted" in str(w.message)} == {
        __file__
    }


def test_an_unfrozen_classifier_is_the_subclass_s_business():
    # the calibrators cross-fit it; the conformal classifier refuses it
    _fit(TemperatureScaler(LogisticRegression(), cv=2), X, Y.argmax(axis=1))
    with pytest.raises(ValueError, match=r"FrozenEstimator.*split conformal"):
        HumanConformalClassifier(LogisticRegression()).fit(X, Y)


def _learned(est, P):
    """What the fit learned: α-calibration keeps the mean and learns α0, the
    conformal classifier keeps the probabilities and learns the p-values."""
    for method in ("predict_concentration", "predict_pvalues", "predict_proba"):
        if hasattr(est, method):
            return getattr(est, method)(np.asarray(P))


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_rows_of_x_and_y_indexed_by_items_are_matched_by_item(Est):
    # the metrics match rows by item (developer guide §rows); fit paired a
    # reversed X with y by position: T = 26.2 instead of 0.97, no word
    # a classifier that knows the items: its order matters
    P = softmax(0.7 * np.log(np.clip(Q, 1e-6, None)), axis=1)
    H = pd.DataFrame(Y, columns=NAMES, index=ITEMS)
    S = pd.DataFrame(P, columns=NAMES, index=ITEMS)
    # the conformal classifier's draws follow the rows: none, for this test
    kw = (
        {"calibration": "exact", "correction": None}
        if hasattr(Est, "predict_set")
        else {}
    )
    plain = _fit(_make(Est, **kw), P, Y)
    reversed_ = _fit(_make(Est, **kw), S.iloc[::-1], H)
    np.testing.assert_allclose(
        _learned(reversed_, S), _learned(plain, P), rtol=1e-6, atol=1e-9
    )
    assert reversed_.score(S.iloc[::-1], H) == pytest.approx(plain.score(P, Y))
    # arrays and default indexes keep scikit-learn's positional rule
    positional = _fit(_make(Est, **kw), S.iloc[::-1].to_numpy(), H)
    assert not np.allclose(_learned(positional, P), _learned(plain, P))
    default = _fit(_make(Est, **kw), S.iloc[::-1].reset_index(drop=True), H)
    np.testing.assert_allclose(
        _learned(default, P), _learned(positional, P), rtol=1e-6, atol=1e-9
    )


def test_the_first_level_matches_rows_by_item_too():
    from sklearn_hcal import SoftLabelClassifier

    features = pd.DataFrame(X, index=ITEMS)
    H = pd.DataFrame(Y, columns=NAMES, index=ITEMS)
    plain = SoftLabelClassifier(LogisticRegression()).fit(X, Y)
    shuffled = SoftLabelClassifier(LogisticRegression()).fit(features.iloc[::-1], H)
    np.testing.assert_allclose(
        shuffled.predict_proba(features), plain.predict_proba(features)
    )


TARGET_ONLY_CASES = [
    "X and y indexed by other items",
    "NaN count",
    "counts and y lengths",
    "fewer rows than X",
    "frame with a class named twice",
    "negative count",
    "no target",
    "ragged rows",
]


@pytest.mark.parametrize("case", TARGET_ONLY_CASES)
def test_an_estimator_of_the_first_level_reads_targets_the_same_way(case):
    # SoftLabelClassifier inherits only the targets (HumanTargetMixin), as
    # the estimators fitted on annotations will
    from sklearn_hcal import SoftLabelClassifier

    X_, y_, kw = BAD_TARGETS[case]()
    features = X[: len(X_)]
    if isinstance(X_, pd.DataFrame):  # the items of X_ name the features' rows
        features = pd.DataFrame(features, index=X_.index)
    with pytest.raises(ValueError) as err:
        SoftLabelClassifier(LogisticRegression()).fit(features, y_, **kw)
    mine = re.sub("SoftLabelClassifier", "<estimator>", str(err.value))
    assert mine == _message(TemperatureScaler, X_, y_, kw, {})
