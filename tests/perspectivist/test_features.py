"""AnnotationVectorizer: column roles, missing values, per-annotator copies."""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.datasets import load_lewidi
from sklearn_hcal.perspectivist import AnnotationVectorizer, make_default_estimator

from ..conftest import require_data
from ._tables import ordinal_table


def test_roles_of_the_official_files():
    par = load_lewidi(require_data("lewidi", "2025", "Paraphrase_dev.json")).frame
    roles = AnnotationVectorizer().fit(par.drop(columns=["item", "label"]))
    assert roles.column_roles_ == {
        "annotator": "categorical",
        "Question1": "text",
        "Question2": "text",
        "explanation": "explanation",
        "Gender": "categorical",
        "Age": "categorical",
        "Nationality": "categorical",
        "Education": "categorical",
        "in_metadata": "categorical",
    }
    mp = load_lewidi(require_data("lewidi", "2025", "MP_test.json")).frame
    roles = AnnotationVectorizer().fit(mp.drop(columns=["item", "label"]).iloc[:3000])
    assert roles.column_roles_["Age"] == "numeric"
    assert roles.column_roles_["post"] == "text"
    assert roles.column_roles_["Employment status"] == "categorical"


def test_missing_values_are_empty_text_and_their_own_category():
    X = pd.DataFrame(
        {
            "annotator": ["A", None, "B", "A"],
            "explanation": ["same thing", None, "different", ""],
            "age": [20.0, np.nan, 40.0, 30.0],
        }
    )
    vec = AnnotationVectorizer().fit(X)
    Z = vec.transform(X).toarray()
    names = list(vec.get_feature_names_out())
    text = [j for j, n in enumerate(names) if n.startswith("explanation")]
    assert np.all(Z[[1, 3]][:, text] == 0)  # no explanation: no words
    assert any(n.endswith("annotator_<missing>") for n in names)
    age = names.index("numeric2__age")
    assert Z[1, age] == pytest.approx(0.0)  # the median, standardised


def test_each_frequent_annotator_gets_a_copy_of_the_features():
    X, _ = ordinal_table(n_items=20)
    X = X.drop(columns=["item"])
    shared = AnnotationVectorizer(interaction_min_rows=None).fit(X).transform(X)
    vec = AnnotationVectorizer(interaction_min_rows=20).fit(X)
    assert vec.interaction_annotators_.tolist() == ["A", "B", "C"]
    Z = vec.transform(X).toarray()
    d = shared.shape[1]
    assert Z.shape == (len(X), 4 * d)
    np.testing.assert_allclose(Z[:, :d], shared.toarray())
    for k, name in enumerate(["A", "B", "C"]):
        mine = (X["annotator"] == name).to_numpy()
        block = Z[:, (k + 1) * d : (k + 2) * d]
        np.testing.assert_allclose(block[mine], shared.toarray()[mine])
        assert np.all(block[~mine] == 0)
    names = vec.get_feature_names_out()
    assert names[d].startswith("annotator=A__")
    # at most interaction_max_annotators, those with the most rows
    keep = [i for i, a in enumerate(X["annotator"]) if a != "C" or i % 2]
    uneven = X.iloc[keep]  # C has half the rows of A and B
    capped = AnnotationVectorizer(interaction_min_rows=1, interaction_max_annotators=2)
    assert capped.fit(uneven).interaction_annotators_.tolist() == ["A", "B"]
    d2 = AnnotationVectorizer(interaction_min_rows=None).fit(uneven)
    assert capped.transform(uneven).shape[1] == 3 * len(d2.get_feature_names_out())
    # annotators with fewer rows, or a table without annotators: no copies
    assert (
        AnnotationVectorizer(interaction_min_rows=21)
        .fit(X)
        .interaction_annotators_.size
        == 0
    )
    pooled = AnnotationVectorizer(interaction_min_rows=1).fit(
        X.drop(columns=["annotator"])
    )
    assert pooled.interaction_annotators_.size == 0


def test_explanation_weight_scales_its_block():
    X, _ = ordinal_table(n_items=10)
    X = X.drop(columns=["item"])
    one = AnnotationVectorizer(explanation_weight=1.0).fit(X)
    three = AnnotationVectorizer(explanation_weight=3.0).fit(X)
    names = one.get_feature_names_out()
    expl = np.array([n.startswith("explanation") for n in names])
    A, B = one.transform(X).toarray(), three.transform(X).toarray()
    np.testing.assert_allclose(B[:, expl], 3 * A[:, expl])
    np.testing.assert_allclose(B[:, ~expl], A[:, ~expl])


def test_default_estimator_has_the_structure_of_the_scale():
    last = lambda **kw: make_default_estimator(**kw).steps[-1][1]  # noqa: E731
    assert type(last(ordinal=True, multilabel=False)).__name__ == "OrdinalClassifier"
    assert (
        type(last(ordinal=False, multilabel=True)).__name__ == "MultiOutputClassifier"
    )
    multinomial = last(ordinal=False, multilabel=False)
    assert multinomial.solver == "lbfgs"
    assert last(ordinal=False, multilabel=False, n_classes=2).solver == "liblinear"


def _explained(text):
    """A small table whose explanations say the label (or ``text``)."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 40)
    X = pd.DataFrame(
        {
            "item": np.repeat(np.arange(20), 2).astype(str),
            "annotator": ["A", "B"] * 20,
            "q": [f"question number {i} about topic {i % 3} here" for i in range(40)],
            "explanation": [
                text if text else ("zzyes same" if y else "zznope different")
                for y in labels
            ],
        }
    )
    return X, labels


def test_without_explanations_no_explanation_text_reaches_the_features():
    X, y = _explained(None)
    vec = AnnotationVectorizer(explanations=False).fit(X.drop(columns="item"))
    assert "explanation" not in vec.column_roles_
    names = " ".join(map(str, vec.get_feature_names_out()))
    assert "zzyes" not in names and "zznope" not in names
    other, _ = _explained("completely other words entirely")
    a = vec.transform(X.drop(columns="item")).toarray()
    b = vec.transform(other.drop(columns="item")).toarray()
    np.testing.assert_array_equal(a, b)
    # the default estimator, inside the classifier: predictions that do not
    # move with the explanations, where a model reading them does move
    from sklearn_hcal.perspectivist import PerspectivistClassifier

    P = {}
    for explanations in (True, False):
        est = make_default_estimator(
            ordinal=False,
            multilabel=False,
            n_classes=2,
            random_state=0,
            explanations=explanations,
        )
        clf = PerspectivistClassifier(est, optional_columns=None).fit(X, y)
        P[explanations] = (clf.predict_proba(X), clf.predict_proba(other))
    np.testing.assert_array_equal(*P[False])
    assert np.abs(P[True][0] - P[True][1]).max() > 0.05
