"""The fine-tuned transformer per annotator, on a tiny local BERT (offline)."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold

from sklearn_hcal.perspectivist import TransformerPerspectivistClassifier

from ._tables import NLI

pytest.importorskip("skorch")
pytest.importorskip("transformers")


@pytest.fixture(autouse=True)
def one_torch_thread():
    """One intra-op thread: tiny batches only wait for a busy second core."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


TEXTS = [
    ("same question asked twice", "they ask the same thing"),
    ("what is a thing", "why can it be"),
    ("how do i ask", "different topics here"),
    ("what is the meaning", "not the same at all"),
]


def _table(annotators=("A", "B"), repeat=3):
    rows = []
    for r in range(repeat):
        for i, (q1, q2) in enumerate(TEXTS):
            for who in annotators:
                rows.append(
                    {
                        "item": f"i{i}r{r}",
                        "annotator": who,
                        "q1": q1,
                        "q2": q2,
                        "explanation": "same" if who == "A" else "different",
                    }
                )
    return pd.DataFrame(rows)


def _clf(model, **params):
    base = {
        "text_columns": ["q1", "q2"],
        "max_epochs": 20,
        "lr": 1e-3,
        "head_lr": 1e-2,
        "batch_size": 8,
        "dropout": 0.0,
        "random_state": 0,
    }
    return TransformerPerspectivistClassifier(str(model), **{**base, **params})


@pytest.mark.slow
def test_the_annotator_embedding_tells_annotators_apart(tiny_model):
    # the same text, the same (withheld) explanation: only who reads differs
    X = _table()
    y = np.where(X["annotator"] == "A", 1, 0)
    clf = _clf(tiny_model, explanation=None).fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), y)
    P = clf.predict_proba(X)
    assert (P[X["annotator"] == "A", 1] > 0.5).all()
    assert (P[X["annotator"] == "B", 1] < 0.5).all()


@pytest.mark.slow
def test_categorical_head_gives_distributions(tiny_model):
    X = _table()
    y = np.array(["c", "e", "n", "e"] * 6)[: len(X)]
    clf = _clf(tiny_model).fit(X, y)
    P = clf.predict_proba(X)
    assert clf.head_ == "categorical" and P.shape == (len(X), 3)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert (clf.predict(X) == y).mean() > 0.5


@pytest.mark.slow
def test_ordinal_head_learns_a_likert_scale(tiny_model):
    X = _table()
    item = X["item"].str[1].astype(int).to_numpy()
    y = item - 2 + (X["annotator"] == "A").to_numpy()  # -2..2
    clf = _clf(tiny_model).fit(X, y)
    P = clf.predict_proba(X)
    assert clf.head_ == "ordinal" and clf.decision_ == "median"
    assert P.shape == (len(X), len(np.unique(y)))
    assert (P >= 0).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.abs(clf.predict(X) - y).mean() < 0.5


@pytest.mark.slow
def test_multilabel_head_learns_label_sets(tiny_model):
    X = _table()
    sets = [(NLI[0],), (NLI[1], NLI[2]), (NLI[2],), ()]
    y = pd.Series([sets[int(i[1])] for i in X["item"]], name="label")
    clf = _clf(tiny_model).fit(X, y)
    assert clf.head_ == "multilabel"
    assert list(clf.predict(X)) == list(y)


def test_ordinal_probabilities_are_differences_of_monotone_sigmoids():
    # closed form: σ(z) = [0.8, 0.9] is made monotone ([0.8, 0.8]) first
    from sklearn_hcal.perspectivist._transformer._inputs import head_probabilities

    z = np.log(np.array([[0.8, 0.9]]) / (1 - np.array([[0.8, 0.9]])))
    np.testing.assert_allclose(head_probabilities("ordinal", z), [[0.2, 0.0, 0.8]])


@pytest.mark.slow
def test_unseen_annotators_get_the_mean_embedding_with_a_warning(tiny_model):
    torch = pytest.importorskip("torch")
    X = _table()
    y = np.where(X["annotator"] == "A", 1, 0)
    clf = _clf(tiny_model, max_epochs=2).fit(X, y)
    new = X[X["annotator"] == "A"].assign(annotator="Z")
    with pytest.warns(UserWarning, match="not seen in fit.*mean of the learned"):
        P = clf.predict_proba(new)
    # oracle: the module's own layers with the mean of the embedding table
    inputs, _ = clf._inputs(new)
    module = clf.net_.module_.eval()
    with torch.no_grad():
        pooled = module.pooled(
            torch.as_tensor(inputs["input_ids"]),
            torch.as_tensor(inputs["attention_mask"]),
        )
        mean = module.annotators.weight.mean(dim=0)
        z = module.head(pooled + module.project(mean)).numpy()
    e = np.exp(z - z.max(axis=1, keepdims=True))
    np.testing.assert_allclose(P, e / e.sum(axis=1, keepdims=True), atol=1e-6)


@pytest.mark.slow
def test_random_state_makes_a_cpu_fit_reproducible(tiny_model):
    X = _table()
    y = np.where(X["annotator"] == "A", 1, 0)
    P1 = _clf(tiny_model, max_epochs=2).fit(X, y).predict_proba(X)
    P2 = _clf(tiny_model, max_epochs=2).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(P1, P2)


@pytest.mark.slow
def test_clone_params_and_pickle_after_fit(tiny_model):
    X = _table()
    y = np.where(X["annotator"] == "A", 1, 0)
    clf = _clf(tiny_model, max_epochs=1)
    twin = clone(clf).set_params(max_epochs=2, head_lr=5e-3)
    assert twin.get_params()["max_epochs"] == 2
    assert clf.get_params()["max_epochs"] == 1
    clf.fit(X, y)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_allclose(restored.predict_proba(X), clf.predict_proba(X))
    soft = restored.predict_soft_labels(X)
    assert soft.shape == (X["item"].nunique(), 2)


@pytest.mark.slow
def test_grid_search_over_one_parameter(tiny_model):
    X = _table()
    y = np.where(X["annotator"] == "A", 1, 0)
    search = GridSearchCV(
        _clf(tiny_model, max_epochs=1),
        {"head_lr": [1e-3, 1e-2]},
        cv=GroupKFold(2),
        error_score="raise",
    ).fit(X, y, groups=X["item"])
    assert search.best_params_["head_lr"] in (1e-3, 1e-2)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


@pytest.mark.slow
def test_missing_text_column_is_refused(tiny_model):
    X = _table()
    y = np.where(X["annotator"] == "A", 1, 0)
    with pytest.raises(ValueError, match="text_columns names 'q3'"):
        _clf(tiny_model, text_columns=["q1", "q3"]).fit(X, y)
    clf = _clf(tiny_model, max_epochs=1).fit(X, y)
    with pytest.raises(ValueError, match=r"lacks the columns \['q2'\]"):
        clf.predict_proba(X.drop(columns="q2"))


def test_unknown_model_path_is_refused(tmp_path):
    X = _table()
    y = np.where(X["annotator"] == "A", 1, 0)
    clf = TransformerPerspectivistClassifier(
        str(tmp_path / "no-model"), text_columns=["q1", "q2"]
    )
    with pytest.raises(ValueError, match="not a local model folder"):
        clf.fit(X, y)


@pytest.mark.slow
def test_explanations_may_be_absent_at_prediction(tiny_model):
    X = _table()
    y = np.where(X["annotator"] == "A", 1, 0)
    clf = _clf(tiny_model, max_epochs=1).fit(X, y)
    assert clf.explanation_ == "explanation"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = clf.predict_proba(X.drop(columns="explanation"))
    assert P.shape == (len(X), 2)


def test_length_buckets_are_a_permutation_of_similar_lengths():
    from sklearn_hcal.perspectivist._transformer._net import bucketed_order

    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 100, size=1000)
    order = bucketed_order(lengths, 10, np.random.default_rng(1))
    assert sorted(order) == list(range(1000))
    # within a batch the lengths span far less than in random batches
    spans = np.ptp(lengths[order].reshape(-1, 10), axis=1)
    random_spans = np.ptp(lengths[rng.permutation(1000)].reshape(-1, 10), axis=1)
    assert spans.mean() < random_spans.mean() / 5
