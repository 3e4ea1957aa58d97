"""A tiny randomly initialised BERT written to a folder: no weights download.

Two layers of width 16 over a word vocabulary of the test tables: a real
Hugging Face model folder (``config.json``, weights, tokenizer) that the
encoders, the transformer classifier and ``hcal lewidi --model transformer``
load with ``local_files_only``, in a fraction of a second. The
``tiny_model`` fixture of ``tests/conftest.py`` builds one per session.
"""

from pathlib import Path

WORDS = (
    "same question asked twice different topics here not meaning at all they ask "
    "thing what how is a the of to do i you it why can be are in on and or"
).split()


def tiny_bert(
    folder: Path, seed: int = 0, max_positions: int = 64, hidden_size: int = 16
) -> Path:
    """Save a tiny BERT (model and tokenizer) in ``folder``; return it.

    ``max_positions``: the longest token sequence it reads (LeWiDi rows,
    read at the transformer's default 128 tokens, need 128);
    ``hidden_size``: the width of its vectors (a reduction to more
    dimensions than 16 needs a wider one).
    """
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(set(WORDS))]
    tokenizer = BertTokenizerFast(vocab={word: i for i, word in enumerate(vocab)})
    tokenizer.save_pretrained(folder)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden_size,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=max_positions,
    )
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(folder)
    return folder
