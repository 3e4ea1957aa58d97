"""The role of each column of a long table of annotations.

A column is free text (TF-IDF), a category (one-hot), a number
(standardised) or the annotators' explanation: :func:`_infer_role` reads
it from the column's content, :func:`check_explanation` refuses an
explanation column of numbers. :class:`AnnotationVectorizer` and the
fine-tuned transformer's inputs (:mod:`._transformer`) share them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["CATEGORY_MAX_VALUES", "TEXT_MIN_WORDS", "check_explanation"]

#: Mean number of words from which a text column is free text (TF-IDF)
#: rather than a category (one-hot): item texts and explanations have more,
#: metadata values ("master student", "Full-Time") fewer.
TEXT_MIN_WORDS = 4
#: A column with this many distinct values or fewer is a category even when
#: its values are long (an employment status written as a phrase).
CATEGORY_MAX_VALUES = 20


def _column_names(columns, param):
    if columns is None:
        return None
    if isinstance(columns, str):
        return [columns]
    return list(columns)


def check_explanation(X: pd.DataFrame, explanation) -> None:
    """Refuse an explanation column of numbers, naming its first row: the
    annotators' explanations are free text, and numbers read as words would
    be fitted without a word (a score column named by mistake)."""
    if explanation not in X.columns:
        return
    values = X[explanation]
    if values.notna().any() and _infer_role(values) == "numeric":
        row = int(np.flatnonzero(values.notna().to_numpy())[0])
        value = values.iat[row]
        value = value.item() if isinstance(value, np.generic) else value
        raise ValueError(
            f"explanation={explanation!r} names a column of numbers (row {row} "
            f"holds {value!r}); it must hold the annotators' free-text "
            "explanations: name that column with explanation=, or drop it."
        )


def _infer_role(values: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(values.dtype):
        return "categorical"
    if pd.api.types.is_numeric_dtype(values.dtype):
        return "numeric"
    present = values.dropna()
    if len(present) and all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
        for v in present.tolist()
    ):
        return "numeric"  # an object column of numbers
    text = present.astype(str)
    words = text.str.split().str.len().mean() if len(text) else 0.0
    if words >= TEXT_MIN_WORDS and text.nunique() > CATEGORY_MAX_VALUES:
        return "text"
    return "categorical"
