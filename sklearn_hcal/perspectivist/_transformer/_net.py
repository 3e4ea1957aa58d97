"""The skorch net of :class:`AnnotatorTransformer`: batches, loss, optimiser.

Inputs are a dict of padded token ids, their attention mask and the
annotator codes; each batch is cut to its longest row (padding beyond it
costs attention for nothing), and training batches group rows of similar
length (length buckets) before the batches are shuffled. AdamW trains
the encoder at ``lr`` and the annotator embedding and head at ``head_lr``.
"""

from __future__ import annotations

import numpy as np

from ...utils._optional import import_optional
from ._module import AnnotatorTransformer

torch = import_optional("torch")
skorch = import_optional("skorch")

__all__ = ["build_net", "bucketed_order", "logits"]


def trim_collate(batch):
    """Default collation, then every sequence cut to the batch's longest."""
    X, y = torch.utils.data.default_collate(batch)
    width = max(int(X["attention_mask"].sum(dim=1).max()), 1)
    X["input_ids"] = X["input_ids"][:, :width]
    X["attention_mask"] = X["attention_mask"][:, :width]
    return X, y


def bucketed_order(lengths: np.ndarray, batch_size: int, rng) -> np.ndarray:
    """A row order whose consecutive ``batch_size`` rows have similar lengths.

    Rows are shuffled, sorted by length within windows of 50 batches, cut
    into batches, and the batches shuffled: each epoch sees other batches,
    each batch little padding.
    """
    n = len(lengths)
    order = rng.permutation(n)
    window = batch_size * 50
    for start in range(0, n, window):
        part = order[start : start + window]
        order[start : start + window] = part[np.argsort(lengths[part], kind="stable")]
    batches = [order[s : s + batch_size] for s in range(0, n, batch_size)]
    return np.concatenate([batches[j] for j in rng.permutation(len(batches))])


class BucketedNet(skorch.NeuralNet):
    """A ``NeuralNet`` whose training rows come in length-bucketed batches."""

    def fit_loop(self, X, y=None, epochs=None, **fit_params):
        # one row order per epoch, drawn from the torch generator (seeded)
        epochs = self.max_epochs if epochs is None else epochs
        lengths = np.asarray(X["attention_mask"]).sum(axis=1)
        seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
        rng = np.random.default_rng(seed)
        for _ in range(epochs):
            order = bucketed_order(lengths, self.batch_size, rng)
            part = {k: np.asarray(v)[order] for k, v in X.items()}
            super().fit_loop(part, np.asarray(y)[order], epochs=1, **fit_params)
        return self


def build_net(
    *,
    model_path,
    n_annotators,
    n_outputs,
    kind,
    annotator_dim,
    hidden,
    dropout,
    lr,
    head_lr,
    batch_size,
    max_epochs,
    device,
    verbose,
):
    """An uninitialised :class:`BucketedNet` for one head."""
    criterion = (
        torch.nn.CrossEntropyLoss
        if kind == "categorical"
        else torch.nn.BCEWithLogitsLoss
    )
    return BucketedNet(
        AnnotatorTransformer,
        module__model_path=model_path,
        module__n_annotators=n_annotators,
        module__n_outputs=n_outputs,
        module__annotator_dim=annotator_dim,
        module__hidden=hidden,
        module__dropout=dropout,
        criterion=criterion,
        optimizer=torch.optim.AdamW,
        lr=head_lr,
        optimizer__param_groups=[("encoder.*", {"lr": lr})],
        batch_size=batch_size,
        max_epochs=max_epochs,
        train_split=None,
        iterator_train__shuffle=False,  # the order is the buckets'
        iterator_train__collate_fn=trim_collate,
        iterator_valid__collate_fn=trim_collate,
        device=device,
        verbose=verbose,
    )


def logits(net, X) -> np.ndarray:
    """The net's logits for the rows of ``X``, in evaluation mode."""
    net.module_.eval()
    out = [
        batch.detach().cpu().numpy()
        for batch in net.forward_iter(X, training=False, device=net.device)
    ]
    return np.concatenate(out) if out else np.zeros((0, 0))
