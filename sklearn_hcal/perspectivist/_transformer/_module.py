"""The torch module: a pretrained encoder, an annotator embedding, a head.

``forward`` mean-pools the encoder's token vectors (over the attention
mask, as sentence-transformers does), adds the annotator's embedding
(``annotator_dim`` numbers projected to the encoder's width) and passes
the sum through an MLP head with one output per logit of the head's kind
(developer guide §perspectivist).
"""

from __future__ import annotations

from ...utils._optional import import_optional

torch = import_optional("torch")
transformers = import_optional("transformers")

__all__ = ["AnnotatorTransformer"]


class AnnotatorTransformer(torch.nn.Module):
    """Encoder + annotator embedding + MLP head (logits).

    Parameters
    ----------
    model_path : str
        A local Hugging Face model folder (loaded with
        ``local_files_only=True``).
    n_annotators : int
        Rows of the embedding; code ``-1`` (an annotator not seen in fit)
        gets the mean of the learned rows.
    n_outputs : int
        Logits of the head.
    annotator_dim : int
        Width of the annotator embedding.
    hidden : int
        Width of the head's hidden layer.
    dropout : float
        Dropout before each layer of the head.
    """

    def __init__(
        self, model_path, n_annotators, n_outputs, annotator_dim, hidden, dropout
    ):
        super().__init__()
        self.encoder = transformers.AutoModel.from_pretrained(
            model_path, local_files_only=True
        )
        # the word embeddings stay as pretrained: fine-tuning them on a few
        # thousand rows moves only the words of the training texts
        self.encoder.get_input_embeddings().weight.requires_grad_(False)
        width = self.encoder.config.hidden_size
        self.annotators = torch.nn.Embedding(max(n_annotators, 1), annotator_dim)
        torch.nn.init.normal_(self.annotators.weight, std=0.02)
        self.project = torch.nn.Linear(annotator_dim, width, bias=False)
        self.head = torch.nn.Sequential(
            torch.nn.Dropout(dropout),
            torch.nn.Linear(width, hidden),
            torch.nn.GELU(),
            torch.nn.Dropout(dropout),
            torch.nn.Linear(hidden, n_outputs),
        )

    def pooled(self, input_ids, attention_mask):
        """The mean of the token vectors over the attention mask."""
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        mask = attention_mask.unsqueeze(-1).to(out.last_hidden_state.dtype)
        total = (out.last_hidden_state * mask).sum(dim=1)
        return total / mask.sum(dim=1).clamp(min=1.0)

    def annotator_vectors(self, annotator):
        """Each row's embedding; the mean of the learned ones for code -1."""
        table = self.annotators.weight
        known = annotator >= 0
        rows = table[annotator.clamp(min=0)]
        fallback = table.mean(dim=0, keepdim=True).expand_as(rows)
        return torch.where(known.unsqueeze(-1), rows, fallback)

    def forward(self, input_ids, attention_mask, annotator):
        pooled = self.pooled(input_ids, attention_mask)
        vec = pooled + self.project(self.annotator_vectors(annotator))
        return self.head(vec)
