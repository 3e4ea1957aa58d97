"""Estimators joined as a user joins them.

Classes by name across cross-fitting, chained calibrators, soft-label training
and degenerate fits.

Each test checks against an independent computation (a hand-made loop over
the folds, scipy, scikit-learn), never against the code under test alone.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline

from sklearn_hcal import SoftLabelClassifier
from sklearn_hcal.calibration import MatrixScaler, TemperatureScaler, VectorScaler
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.model_selection import cross_val_predict_proba


def _data(n=120, n_classes=3, seed=0):
    X, Y, _ = make_label_histograms(n, n_classes, 5, n_features=4, random_state=seed)
    return X, Y.astype(np.int64)


def _oof_by_name(est, X, frame, cv, method="predict_proba"):
    """Out-of-fold outputs put in ``frame``'s column order by class name."""
    out = np.zeros(frame.shape)
    for train, test in cv.split(X):
        model = clone(est).fit(X[train], frame.iloc[train])
        pred = pd.DataFrame(getattr(model, method)(X[test]), columns=model.classes_)
        out[test] = pred[list(frame.columns)].to_numpy()
    return out


def test_cross_val_predict_proba_follows_frame_columns_by_name():
    # A calibrator of a frozen classifier predicts in the classifier's
    # classes_ order; the documented output order is y's column order.
    # Before the fix the columns came back in classes_ order (a, b, c) for a
    # frame ordered (c, a, b): every metric on them was silently wrong.
    X, Y = _data()
    names = np.array(["a", "b", "c"])
    clf = LogisticRegression().fit(X, names[Y.argmax(1)])
    frame = pd.DataFrame(Y, columns=names)[["c", "a", "b"]]
    est = TemperatureScaler(FrozenEstimator(clf))
    kf = KFold(3, shuffle=True, random_state=0)
    got = cross_val_predict_proba(est, X, frame, cv=kf)
    np.testing.assert_allclose(got, _oof_by_name(est, X, frame, kf))
    # the first column is class "c": compare with the classifier's own "c"
    # column, which temperature scaling keeps on the same side of 1/3
    c_col = clf.predict_proba(X)[:, 2]
    assert np.corrcoef(got[:, 0], c_col)[0, 1] > 0.9


def test_cross_val_predict_proba_binary_decision_follows_frame_columns():
    # classes= puts SoftLabelClassifier's classes_ in another order than the
    # frame's columns; the binary decision is the score of y's second column.
    X, Y = _data(n_classes=2, seed=1)
    frame = pd.DataFrame(Y, columns=["a", "b"])
    est = SoftLabelClassifier(LogisticRegression(), classes=["b", "a"])
    kf = KFold(3, shuffle=True, random_state=0)
    got = cross_val_predict_proba(est, X, frame, cv=kf, method="decision_function")
    proba = cross_val_predict_proba(est, X, frame, cv=kf)
    np.testing.assert_allclose(proba, _oof_by_name(est, X, frame, kf))
    # logistic regression: P(b) = sigmoid(decision) in y's order (a, b)
    np.testing.assert_allclose(1 / (1 + np.exp(-got)), proba[:, 1], rtol=1e-10)


def test_cross_val_predict_proba_labels_missing_a_predicted_class_raise():
    # A calibrator of a frozen 3-class classifier, cross-validated on labels
    # of two of its classes: before the fix the third class's probability
    # was written into a neighbour's column (rows summed to 0.009) or past
    # the last column (IndexError).
    X, Y = _data(n=150)
    names = np.array(["a", "b", "c"])
    labels = names[Y.argmax(1)]
    clf = LogisticRegression().fit(X, labels)
    est = TemperatureScaler(FrozenEstimator(clf))
    for keep, extra in ((["a", "c"], "b"), (["a", "b"], "c")):
        mask = np.isin(labels, keep)
        with pytest.raises(ValueError, match=rf"predicts class\(es\) \['{extra}'\]"):
            cross_val_predict_proba(est, X[mask], labels[mask], cv=KFold(3))
    # the workaround the message gives: histograms naming every class
    mask = np.isin(labels, ["a", "c"])
    frame = pd.get_dummies(labels[mask]).reindex(columns=names, fill_value=0)
    kf = KFold(3)
    got = cross_val_predict_proba(est, X[mask], frame, cv=kf)
    np.testing.assert_allclose(got, _oof_by_name(est, X[mask], frame, kf))
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


def test_chained_calibrators_read_logit_columns_by_classes_param():
    # An array histogram named by classes=["b", "a", "c"]; the first step
    # (a frozen classifier, classes_ a, b, c) passes logit_a, logit_b,
    # logit_c to the second under set_output(transform="pandas"). Before the
    # fix the second step ignored these names (y carries none) and read the
    # columns as b, a, c: its argmax agreed with the first step's on 20% of
    # the items and its coefficients were (-1.05, -1.07, 2.13).
    X, Y = _data(n=400, seed=3)
    names = np.array(["a", "b", "c"])
    clf = LogisticRegression().fit(X[:200], names[Y[:200].argmax(1)])
    order = ["b", "a", "c"]
    Yb = Y[:, [1, 0, 2]]  # the array histogram in classes= order
    pipe = make_pipeline(
        TemperatureScaler(FrozenEstimator(clf), classes=order),
        VectorScaler(classes=order),
    ).set_output(transform="pandas")
    pipe.fit(X[200:], Yb[200:])
    assert list(pipe[0].classes_) == list(pipe[1].classes_) == ["a", "b", "c"]
    # the same fit on the logits as an array in a, b, c order, named so
    logits = pipe[0].transform(X[200:]).to_numpy()
    ref = VectorScaler(classes=names).fit(logits, Y[200:])
    np.testing.assert_allclose(pipe[1].coef_, ref.coef_, rtol=1e-6)
    np.testing.assert_allclose(
        pipe.predict_proba(X[:50]),
        ref.predict_proba(pipe[0].transform(X[:50]).to_numpy()),
    )
    # names that only partly match classes= raise instead of a positional read
    frame = pd.DataFrame(logits, columns=["logit_a", "logit_b", "logit_x"])
    with pytest.raises(ValueError, match="do not match the classes"):
        VectorScaler(classes=order).fit(frame, Yb[200:])


def test_soft_label_classifier_refuses_a_frozen_estimator():
    # SoftLabelClassifier trains its estimator on class indices. A frozen
    # classifier fitted on labels 0, 1, 2 (= a, b, c) and wrapped for a frame
    # ordered (c, a, b) was silently read by position before the fix:
    # "P(c)" was the classifier's P(a). One fitted on strings failed with
    # "invalid literal for int()".
    X, Y = _data(seed=4)
    names = np.array(["a", "b", "c"])
    frame = pd.DataFrame(Y, columns=names)[["c", "a", "b"]]
    for labels in (Y.argmax(1), names[Y.argmax(1)]):
        clf = LogisticRegression().fit(X, labels)
        for est in (FrozenEstimator(clf), make_pipeline(FrozenEstimator(clf))):
            for y in (frame, labels):
                with pytest.raises(ValueError, match="FrozenEstimator is not"):
                    SoftLabelClassifier(est, strategy="majority").fit(X, y)


def test_soft_label_classifier_checks_the_classes_its_estimator_learnt():
    # An estimator whose fit does not learn the classes it is given (here a
    # classifier that keeps the classes_ of an earlier fit) is refused with
    # a message naming both, instead of misreading its columns.
    from sklearn.base import BaseEstimator, ClassifierMixin

    class KeepsClasses(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.classes_ = np.array(["x", "y", "z"])
            return self

        def predict_proba(self, X):
            return np.full((len(X), 3), 1 / 3)

    X, Y = _data(seed=5)
    with pytest.raises(ValueError, match=r"trained on the class indices \[0, 1, 2\]"):
        SoftLabelClassifier(KeepsClasses(), strategy="majority").fit(X, Y)


def test_histogram_frame_with_a_class_named_twice_raises():
    # Before the fix SoftLabelClassifier and the calibrators accepted a frame
    # with columns (a, a, b): classes_ was ['a', 'a', 'b'] and predict could
    # not tell the two "a" columns apart. classes=["a", "a", "b"] already
    # raised; a frame's column names are class names too.
    X, Y = _data(seed=6)
    frame = pd.DataFrame(Y, columns=["a", "a", "b"])
    for est in (SoftLabelClassifier(LogisticRegression()), TemperatureScaler()):
        with pytest.raises(
            ValueError, match="the columns of y must name each class once"
        ):
            est.fit(X[:, :3], frame)
        with pytest.raises(ValueError, match="the columns of counts must name each"):
            est.fit(X[:, :3], None, counts=frame)


# -- degenerate vector / matrix scaling fits warn (as TemperatureScaler does) --
@pytest.mark.parametrize("Cal", [VectorScaler, MatrixScaler])
def test_scalers_warn_when_the_scores_separate_the_labels(Cal):
    # Labels equal to the argmax of the scores: the likelihood has no finite
    # optimum (scaling the map up keeps lowering it). Before: coef_ of 2e3
    # (vector) and 3e4 (matrix diagonal) without a word.
    rng = np.random.RandomState(0)
    Z = rng.normal(size=(200, 3))
    Y = 5 * np.eye(3)[Z.argmax(axis=1)]
    with pytest.warns(UserWarning, match="every annotation falls on a top-scoring"):
        cal = Cal().fit(Z, Y)
    np.testing.assert_array_equal(cal.predict(Z), Z.argmax(axis=1))
    # histograms with disagreement have a finite optimum: no warning
    Z2, Y2, _ = make_label_histograms(300, 3, 5, temperature=2.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        Cal().fit(Z2, Y2)


@pytest.mark.parametrize("Cal", [VectorScaler, MatrixScaler])
def test_scalers_warn_for_an_unannotated_class_without_reg_bias(Cal):
    Z, Y, _ = make_label_histograms(300, 3, 5, temperature=2.0, random_state=1)
    Y = Y.copy()
    Y[:, 0] += Y[:, 2]
    Y[:, 2] = 0  # class 2 never annotated
    with pytest.warns(UserWarning, match=r"class\(es\) \[2\] have no annotation"):
        free = Cal(reg_bias=0.0).fit(Z, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        held = Cal().fit(Z, Y)  # reg_bias > 0: a finite optimum
    # the unpenalised intercept of the unseen class ran far below the other
    # two; the penalised one stays within a few units of them
    gap = lambda c: c.intercept_[:2].min() - c.intercept_[2]  # noqa: E731
    assert gap(free) > 2 * gap(held) > 0
