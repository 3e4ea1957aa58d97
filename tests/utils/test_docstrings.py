"""Shared docstring blocks: written once, substituted everywhere, read the same."""

import inspect

import pytest

import sklearn_hcal.metrics as M
import sklearn_hcal.plotting as D
from sklearn_hcal.utils._docstrings import DOC_BLOCKS, fill_doc


def _public_callables():
    for module in (M, D):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                for meth in ("from_predictions", "from_estimator"):
                    if hasattr(obj, meth):
                        yield f"{name}.{meth}", getattr(obj, meth)
            elif callable(obj):
                yield name, obj


@pytest.mark.parametrize("name,obj", list(_public_callables()))
def test_no_unfilled_token(name, obj):
    assert "%(" not in (inspect.getdoc(obj) or ""), f"{name}: an unfilled token"


def test_the_blocks_are_used_where_they_apply():
    # the four data arguments of the metric functions: one wording each
    uses = sum(
        DOC_BLOCKS["y_prob"] in (inspect.getdoc(obj) or "")
        for _, obj in _public_callables()
    )
    assert uses >= 20


def test_fill_doc_indents_like_the_token_and_names_unknown_blocks():
    def f():
        """Parameters
        ----------
        %(labels)s
        """

    fill_doc(f)
    lines = f.__doc__.splitlines()
    assert lines[2] == "        " + DOC_BLOCKS["labels"].splitlines()[0]
    assert lines[3] == "            " + DOC_BLOCKS["labels"].splitlines()[1].strip()

    def g():
        """%(nope)s"""

    with pytest.raises(KeyError, match="nope"):
        fill_doc(g)


def test_perspectivist_transformers_feature_names_doc_is_filled():
    # get_feature_names_out of both transformers documents input_features
    # from the one block (fill_doc on a method, not a metric function)
    from sklearn_hcal.perspectivist import AnnotationVectorizer
    from sklearn_hcal.perspectivist._similarity import TextPairSimilarity

    for cls in (AnnotationVectorizer, TextPairSimilarity):
        doc = inspect.getdoc(cls.get_feature_names_out)
        assert "%(" not in doc
        assert "input_features : None\n    Ignored." in doc
