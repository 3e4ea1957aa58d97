"""How alike an item's two texts are: features a bag of words cannot give.

An item made of two texts (Paraphrase's two questions, an NLI premise and
hypothesis) is often judged by how much the two say the same thing. A
linear model over each text's TF-IDF block sees which words each text
has, never whether they are the *same* words: the overlap is a product of
the two blocks. :class:`TextPairSimilarity` computes it per row -- the
cosine of the two texts' word TF-IDF vectors, of their character n-gram
TF-IDF vectors (robust to inflection and typos), and the Jaccard index of
their sets of words -- three numbers in ``[0, 1]`` that
:class:`AnnotationVectorizer` appends when a table has exactly two text
columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.utils.validation import check_is_fitted

from ..utils._docstrings import fill_doc

__all__ = ["TextPairSimilarity"]

#: The word tokens of every text block of the package's vectorizer: keeps
#: one-character words ("Q1", "a", "I").
TOKEN_PATTERN = r"(?u)\b\w+\b"
_NAMES = np.array(["word_cosine", "char_cosine", "word_jaccard"], dtype=object)


class TextPairSimilarity(TransformerMixin, BaseEstimator):
    """Cosine and Jaccard similarities of the two text columns of a table.

    ``fit`` learns the vocabularies and IDF weights from both columns' texts
    (each distinct text once); ``transform`` returns, per row, the cosine of
    the two texts' word TF-IDF vectors (sublinear ``tf``, l2-normalised),
    the cosine of their ``char_wb`` 2-4-gram TF-IDF vectors, and
    ``|A ∩ B| / |A ∪ B|`` of their sets of (lower-cased) words, 0 where
    both are empty. Each distinct pair of texts is computed once: a table
    of annotations repeats its items' texts once per annotator.

    Attributes
    ----------
    words_, chars_ : TfidfVectorizer
        The fitted word and character vectorizers.
    vocabulary_ : CountVectorizer
        The binary word counts of the Jaccard index.
    """

    def fit(self, X, y=None):
        """Fit the vectorizers on the distinct texts of both columns.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, 2)
            Two columns of strings.
        y : None
            Ignored.

        Returns
        -------
        self : TextPairSimilarity
        """
        first, second = _columns(X)
        texts = pd.unique(np.concatenate([first, second]))
        self.words_ = TfidfVectorizer(
            sublinear_tf=True, token_pattern=TOKEN_PATTERN
        ).fit(texts)
        self.chars_ = TfidfVectorizer(
            analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True
        ).fit(texts)
        self.vocabulary_ = CountVectorizer(
            binary=True, token_pattern=TOKEN_PATTERN
        ).fit(texts)
        return self

    def transform(self, X):
        """The three similarities of each row.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, 2)

        Returns
        -------
        S : ndarray of shape (n_samples, 3)
            Word cosine, character cosine, word Jaccard index.
        """
        check_is_fitted(self)
        first, second = _columns(X)
        codes, pairs = pd.factorize(pd.MultiIndex.from_arrays([first, second]))
        a = np.asarray(pairs.get_level_values(0), dtype=object)
        b = np.asarray(pairs.get_level_values(1), dtype=object)
        out = np.empty((len(pairs), 3))
        for j, vec in enumerate((self.words_, self.chars_)):
            # rows are l2-normalised: the row-wise dot product is the cosine
            dot = vec.transform(a).multiply(vec.transform(b)).sum(axis=1)
            out[:, j] = np.asarray(dot)[:, 0]
        A, B = self.vocabulary_.transform(a), self.vocabulary_.transform(b)
        both = np.asarray(A.multiply(B).sum(1))[:, 0]
        union = np.asarray(A.sum(1))[:, 0] + np.asarray(B.sum(1))[:, 0] - both
        out[:, 2] = np.divide(both, union, out=np.zeros(len(both)), where=union > 0)
        return out[codes]

    @fill_doc
    def get_feature_names_out(self, input_features=None):
        """``word_cosine``, ``char_cosine``, ``word_jaccard``.

        %(names_out_ignored)s
        """
        check_is_fitted(self)
        return _NAMES.copy()


def _columns(X):
    frame = pd.DataFrame(X)
    if frame.shape[1] != 2:
        raise ValueError(
            f"TextPairSimilarity takes exactly two text columns, got "
            f"{frame.shape[1]}: {list(frame.columns)}."
        )
    return (
        frame.iloc[:, 0].astype(str).to_numpy(dtype=object),
        frame.iloc[:, 1].astype(str).to_numpy(dtype=object),
    )
