"""The tiny local transformer shared by the encoder and transformer tests."""

import pytest

from ._tiny_model import tiny_bert


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A tiny randomly initialised BERT folder (model and tokenizer)."""
    pytest.importorskip("transformers")
    return tiny_bert(tmp_path_factory.mktemp("tiny_bert"))
