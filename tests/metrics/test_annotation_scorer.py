"""The held-out annotation scorer: scikit-learn's losses of annotator predictions."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.model_selection import cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from sklearn_hcal.aggregation import DawidSkene, MajorityVote
from sklearn_hcal.metrics import make_annotation_scorer
from sklearn_hcal.model_selection import OneAnnotationPerItemSplit


def long_table(n_items=40, classes=("no", "yes"), seed=0):
    rng = np.random.default_rng(seed)
    rows = [
        (f"i{i}", f"w{w}", classes[int(rng.integers(len(classes)))])
        for i in range(n_items)
        for w in rng.choice(5, size=3, replace=False)
    ]
    return pd.DataFrame(rows, columns=["item", "annotator", "label"])


@pytest.mark.parametrize("classes", [("no", "yes"), ("a", "b", "c")])
def test_equals_scikit_learn_losses(classes):
    X = long_table(classes=classes)
    model = DawidSkene(alpha=1.0).fit(X)
    P = model.predict_annotator_proba(X)
    labels = model.classes_
    assert make_annotation_scorer("log_loss")(model, X) == pytest.approx(
        -log_loss(X["label"], P, labels=labels), rel=1e-12
    )
    assert make_annotation_scorer("brier_score_loss")(model, X) == pytest.approx(
        -brier_score_loss(X["label"], P, labels=labels), rel=1e-12
    )


def test_labels_from_y_or_the_estimator_s_label_column():
    X = long_table().rename(columns={"label": "irony"})
    model = MajorityVote(alpha=1.0, label="irony").fit(X)
    scorer = make_annotation_scorer("log_loss")
    from_column = scorer(model, X)
    assert scorer(model, X.drop(columns="irony"), X["irony"]) == from_column
    explicit = make_annotation_scorer("log_loss", label="irony")
    assert explicit(MajorityVote(alpha=1.0).fit(X, X["irony"]), X) == from_column


def test_falls_back_on_predict_proba_of_a_row_classifier():
    # a classifier of (item, annotator) rows, fitted on the long table and y
    X = long_table(60, seed=1)
    rows = X[["item", "annotator"]]
    clf = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["annotator"])
        ),
        LogisticRegression(),
    ).fit(rows, X["label"])
    expected = log_loss(X["label"], clf.predict_proba(rows), labels=clf.classes_)
    assert make_annotation_scorer("log_loss")(clf, rows, X["label"]) == pytest.approx(
        -expected
    )
    scores = cross_validate(
        clf,
        rows,
        X["label"],
        cv=OneAnnotationPerItemSplit(3, random_state=0),
        scoring=make_annotation_scorer("brier_score_loss"),
        error_score="raise",
    )
    assert (scores["test_score"] < 0).all()
    # several scorers at once: scikit-learn looks their response method up
    # on the estimator first (it has predict_proba, not predict_annotator_proba)
    both = cross_validate(
        clf,
        rows,
        X["label"],
        cv=OneAnnotationPerItemSplit(3, random_state=0),
        scoring={
            "brier": make_annotation_scorer("brier_score_loss"),
            "log": make_annotation_scorer("log_loss"),
        },
        error_score="raise",
    )
    np.testing.assert_array_equal(both["test_brier"], scores["test_score"])


def test_probabilities_floored_in_the_log():
    X = long_table()
    model = MajorityVote().fit(X)  # alpha=0: a held-out label may get p = 0
    loss = -make_annotation_scorer("log_loss")(model, X.iloc[:1].assign(label="no"))
    assert np.isfinite(loss) and loss <= -np.log(1e-12) + 1e-9


def test_errors_name_the_row_and_value():
    X = long_table()
    model = DawidSkene().fit(X)
    scorer = make_annotation_scorer("brier_score_loss")
    with pytest.raises(ValueError, match=r"held-out label 'maybe' at row 2"):
        scorer(model, X, X["label"].where(X.index != 2, "maybe"))
    with pytest.raises(ValueError, match=r"column 'label', which X lacks"):
        scorer(model, X.drop(columns="label"))
    with pytest.raises(ValueError, match="missing value at row 1"):
        scorer(model, X, X["label"].where(X.index != 1, None))
    with pytest.raises(ValueError, match="not an annotation loss"):
        make_annotation_scorer("accuracy")
    with pytest.raises(ValueError, match="neither predict_annotator_proba"):
        scorer(object(), X)


@pytest.fixture(scope="module")
def multilabel():
    from sklearn_hcal.perspectivist import PerspectivistClassifier
    from tests.perspectivist._tables import multilabel_table

    X, y = multilabel_table(n_items=30)
    model = PerspectivistClassifier().fit(X, y)
    chosen = np.array([[int(c in s) for c in model.classes_] for s in y])
    return model, X, y, chosen


@pytest.mark.parametrize("metric", ["log_loss", "brier_score_loss"])
def test_multilabel_estimators_are_scored_label_by_label(multilabel, metric):
    # numpy's "inhomogeneous shape" (or a label set "not among classes_")
    # escaped; each (annotation, label) cell is a yes/no prediction, scored
    # as scikit-learn scores the flattened cells
    model, X, y, chosen = multilabel
    P = model.predict_proba(X)
    assert P.shape == chosen.shape
    loss = {"log_loss": log_loss, "brier_score_loss": brier_score_loss}[metric]
    expected = -loss(chosen.ravel(), P.ravel())
    scorer = make_annotation_scorer(metric)
    for target in (y, list(y), chosen, pd.DataFrame(chosen, columns=model.classes_)):
        assert scorer(model, X, target) == pytest.approx(expected, rel=1e-12)
    # a 0/1 frame is read by its column names
    shuffled = pd.DataFrame(chosen, columns=model.classes_).iloc[:, ::-1]
    assert scorer(model, X, shuffled) == pytest.approx(expected, rel=1e-12)


def test_multilabel_held_out_labels_name_the_row_and_value(multilabel):
    model, X, y, chosen = multilabel
    scorer = make_annotation_scorer("log_loss")
    bad = y.copy()
    bad[3] = "neutral"
    with pytest.raises(
        ValueError,
        match=r"multi-label .* must be label sets or a 0/1 matrix; row 3 holds "
        r"'neutral'",
    ):
        scorer(model, X, bad)
    bad[3] = ("neutral", "maybe")
    with pytest.raises(
        ValueError, match=r"held-out label 'maybe' at row 3 \(y\) is not among"
    ):
        scorer(model, X, bad)
    with pytest.raises(
        ValueError, match=r"at row 2, label 'contradiction': 2\.0 is not 0 or 1"
    ):
        scorer(model, X, np.where(np.arange(len(X))[:, None] == 2, 2, chosen))


def test_repr():
    assert (
        repr(make_annotation_scorer("log_loss")) == "make_annotation_scorer('log_loss')"
    )
    assert "label='y'" in repr(make_annotation_scorer("log_loss", label="y"))
