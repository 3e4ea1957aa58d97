"""The similarity of an item's two texts, and its block in AnnotationVectorizer."""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.perspectivist import AnnotationVectorizer
from sklearn_hcal.perspectivist._similarity import TextPairSimilarity

PAIRS = pd.DataFrame(
    {
        "q1": ["the cat sat", "a dog barks", "same words here", "", "xyz"],
        "q2": ["the cat ran", "the cat sat", "here words same", "", "qqq"],
    }
)


def _word_cosine_by_hand(a, b, corpus):
    """Sublinear, smoothed-IDF, l2-normalised TF-IDF cosine from scratch."""
    docs = [t.lower().split() for t in dict.fromkeys(corpus)]
    n = len(docs)

    def vector(text):
        words = text.lower().split()
        out = {}
        for w in set(words):
            df = sum(w in d for d in docs)
            idf = np.log((1 + n) / (1 + df)) + 1
            out[w] = (1 + np.log(words.count(w))) * idf
        norm = np.sqrt(sum(v * v for v in out.values()))
        return {w: v / norm for w, v in out.items()} if norm else {}

    va, vb = vector(a), vector(b)
    return sum(v * vb.get(w, 0.0) for w, v in va.items())


def test_similarities_equal_an_independent_computation():
    S = TextPairSimilarity().fit(PAIRS).transform(PAIRS)
    corpus = [*PAIRS["q1"], *PAIRS["q2"]]
    for i, (a, b) in enumerate(zip(PAIRS["q1"], PAIRS["q2"])):
        assert S[i, 0] == pytest.approx(_word_cosine_by_hand(a, b, corpus))
        wa, wb = set(a.split()), set(b.split())
        union = len(wa | wb)
        assert S[i, 2] == pytest.approx(len(wa & wb) / union if union else 0.0)
    assert S[0, 2] == pytest.approx(2 / 4)  # {the, cat} of {the, cat, sat, ran}
    # the same words in another order: equal bags of words and of char_wb
    # n-grams (taken inside each space-padded word)
    np.testing.assert_allclose(S[2], 1.0)
    assert np.all(S[3] == 0.0)  # two empty texts: nothing in common
    assert S[4, 1] == pytest.approx(0.0)  # no character in common
    assert np.all((S >= 0) & (S <= 1 + 1e-12))


def test_repeated_rows_get_their_pair_s_values():
    # a long table repeats an item's texts once per annotator
    rows = PAIRS.iloc[[0, 1, 0, 2, 1, 0]].reset_index(drop=True)
    sim = TextPairSimilarity().fit(PAIRS)
    np.testing.assert_allclose(
        sim.transform(rows), sim.transform(PAIRS)[[0, 1, 0, 2, 1, 0]]
    )


def test_needs_two_columns():
    with pytest.raises(ValueError, match="exactly two text columns, got 3"):
        TextPairSimilarity().fit(PAIRS.assign(q3="more text"))


def _table(n=30):
    rng = np.random.default_rng(0)
    words = np.array(["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"])
    return pd.DataFrame(
        {
            "annotator": rng.choice(["A", "B"], n),
            "first": [" ".join(rng.choice(words, 5)) for _ in range(n)],
            "second": [" ".join(rng.choice(words, 5)) for _ in range(n)],
        }
    )


def test_two_text_columns_get_the_similarity_block_with_its_weight():
    X = _table()
    vec = AnnotationVectorizer(interaction_min_rows=None).fit(X)
    assert vec.column_roles_ == {
        "annotator": "categorical",
        "first": "text",
        "second": "text",
    }
    names = list(vec.get_feature_names_out())
    pair = TextPairSimilarity().fit(X[["first", "second"]])
    cols = [names.index(f"pair__{n}") for n in pair.get_feature_names_out()]
    expected = pair.transform(X[["first", "second"]])
    Z = vec.transform(X).toarray()
    np.testing.assert_allclose(Z[:, cols], 4.0 * expected)  # pair_weight=4
    half = AnnotationVectorizer(interaction_min_rows=None, pair_weight=2.0).fit(X)
    np.testing.assert_allclose(half.transform(X).toarray()[:, cols], 2 * expected)
    # switched off, or a third text column (no single pair): no block
    off = AnnotationVectorizer(interaction_min_rows=None, pair_weight=None).fit(X)
    assert not any(n.startswith("pair__") for n in off.get_feature_names_out())
    assert off.transform(X).shape[1] == len(names) - 3
    three = AnnotationVectorizer().fit(X.assign(third=X["first"].str[::-1]))
    assert three.column_roles_["third"] == "text"
    assert not any(n.startswith("pair__") for n in three.get_feature_names_out())
