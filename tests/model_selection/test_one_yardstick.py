"""One yardstick for every model of annotators: the annotation
scorer judges an aggregator and a perspectivist classifier on the *same*
held-out annotations, and its numbers are scikit-learn's log loss and Brier
score of the held-out rows, computed here by hand."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.model_selection import cross_validate

from sklearn_hcal.aggregation import DawidSkene
from sklearn_hcal.metrics import make_annotation_scorer
from sklearn_hcal.model_selection import OneAnnotationPerItemSplit
from sklearn_hcal.perspectivist import PerspectivistClassifier

CLASSES = ["neg", "neu", "pos"]


def crowd(n_items=40, n_annotators=5, seed=0):
    """A long table with a label column: the item's text names its class,
    each annotator is right with their own probability."""
    rng = np.random.default_rng(seed)
    accuracy = np.linspace(0.55, 0.95, n_annotators)
    rows = []
    for i in range(n_items):
        truth = int(rng.integers(3))
        text = f"word{truth} " + " ".join(rng.choice(["a", "b", "c", "d"], 3))
        for w in range(n_annotators):
            right = rng.random() < accuracy[w]
            label = truth if right else int((truth + rng.integers(1, 3)) % 3)
            rows.append((f"i{i}", f"ann{w}", text, CLASSES[label]))
    return pd.DataFrame(rows, columns=["item", "annotator", "text", "label"])


SCORING = {
    "log_loss": make_annotation_scorer("log_loss"),
    "brier": make_annotation_scorer("brier_score_loss"),
}


def _by_hand(proba, labels, classes):
    return {
        "log_loss": log_loss(labels, proba, labels=classes),
        "brier": brier_score_loss(labels, proba, labels=classes),
    }


def test_an_aggregator_and_a_perspectivist_classifier_on_the_same_held_out_rows():
    annotations = crowd()
    X = annotations.drop(columns=["label"])  # the perspectivist's: no label
    y = annotations["label"]
    cv = OneAnnotationPerItemSplit(3, random_state=0)
    splits = list(cv.split(annotations))
    # the same held-out rows, whichever table the splitter reads
    for (a_train, a_test), (p_train, p_test) in zip(splits, cv.split(X)):
        np.testing.assert_array_equal(a_test, p_test)
        np.testing.assert_array_equal(a_train, p_train)
    assert all(len(test) == 40 for _, test in splits)  # one per item

    models = {
        "Dawid-Skene": (DawidSkene(alpha=1.0), annotations, None),
        "perspectivist": (PerspectivistClassifier(random_state=0), X, y),
    }
    for name, (model, table, target) in models.items():
        scores = cross_validate(model, table, target, cv=cv, scoring=SCORING)
        for k, (train, test) in enumerate(splits):
            fold = model.__class__(**model.get_params())
            if target is None:
                fold.fit(table.iloc[train])
                proba = fold.predict_annotator_proba(table.iloc[test])
            else:
                fold.fit(table.iloc[train], target.iloc[train])
                proba = fold.predict_proba(table.iloc[test])
            assert list(fold.classes_) == CLASSES
            expected = _by_hand(proba, y.iloc[test], CLASSES)
            for metric in SCORING:
                assert scores[f"test_{metric}"][k] == pytest.approx(
                    -expected[metric], rel=1e-12
                ), (name, metric, k)
        # both learn something: better than the uniform distribution
        assert -scores["test_log_loss"].mean() < np.log(3), name
