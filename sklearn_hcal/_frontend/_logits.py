"""Logits of a fitted skorch classifier, whatever its output convention."""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import NotFittedError

from ..utils._optional import import_optional, is_skorch_net

__all__ = ["skorch_logits"]


def skorch_logits(net, X) -> np.ndarray:
    """Logits of a fitted skorch classifier, one column per class.

    Runs ``net.forward(X, training=False)`` (the module in evaluation mode,
    no dropout) and returns scores ``z`` with ``softmax(z) ==
    net.predict_proba(X)`` for skorch's default ``predict_nonlinearity``:

    * criterion ``CrossEntropyLoss`` (or a subclass; the setup of
      :func:`make_soft_label_net`): the module output **is** the logits and
      is returned unchanged;
    * criterion ``BCEWithLogitsLoss`` with one output per item (skorch's
      ``NeuralNetBinaryClassifier``): the logit ``s`` becomes the two
      columns ``[0, s]``;
    * otherwise (skorch's default ``NLLLoss``, where the module outputs
      probabilities): rows that are probabilities are returned as
      **log-probabilities** ``log(max(p, tiny))`` with ``tiny`` the smallest
      normal float32 (so ``z >= -87.3``); a 1-D output in ``[0, 1]`` is read
      as P(second class). Log-probabilities are logits up to a per-row
      constant, which a softmax ignores.

    If the module returns a tuple, its first element is used.

    Parameters
    ----------
    net : fitted skorch ``NeuralNet`` classifier
        The network.
    X : input data accepted by ``net``
        Inputs.

    Returns
    -------
    logits : ndarray of shape (n_samples, n_classes)
        float64.

    Examples
    --------
    >>> import numpy as np
    >>> import torch
    >>> from skorch import NeuralNetClassifier
    >>> from sklearn_hcal import skorch_logits
    >>> class Probs(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.lin = torch.nn.Linear(2, 3)
    ...     def forward(self, X):
    ...         return torch.softmax(self.lin(X), dim=-1)
    >>> X = np.random.RandomState(0).rand(30, 2).astype(np.float32)
    >>> y = np.arange(30) % 3
    >>> net = NeuralNetClassifier(Probs, max_epochs=1, train_split=None,
    ...                           verbose=0).fit(X, y)
    >>> z = skorch_logits(net, X)  # NLLLoss setup: log-probabilities
    >>> bool(np.allclose(np.exp(z), net.predict_proba(X), atol=1e-6))
    True
    """
    torch = import_optional("torch")
    if not is_skorch_net(net):
        raise ValueError(f"net must be a skorch NeuralNet, got {type(net).__name__}.")
    if not getattr(net, "initialized_", False) or not hasattr(net, "module_"):
        raise NotFittedError(
            f"This {type(net).__name__} is not initialized yet; call fit first."
        )
    if isinstance(X, np.ndarray) and X.dtype == np.float64:
        X = X.astype(np.float32)
    out = net.forward(X, training=False)
    if isinstance(out, (tuple, list)):
        out = out[0]
    z = out.detach().cpu().numpy().astype(np.float64)
    criterion = getattr(net, "criterion_", None)
    criterion = getattr(criterion, "_orig_mod", criterion)  # torch.compile
    if z.ndim == 2 and z.shape[1] == 1:
        z = z[:, 0]
    if z.ndim == 1:
        if isinstance(criterion, torch.nn.BCEWithLogitsLoss):
            return np.column_stack([np.zeros_like(z), z])
        if np.all((z >= 0) & (z <= 1)):
            return _log_probs(np.column_stack([1 - z, z]))
        raise ValueError(
            "The net outputs one score per item that is neither a "
            "BCEWithLogitsLoss logit nor a probability; cannot build logits."
        )
    if z.ndim != 2:
        raise ValueError(
            f"The net's output must be (n_samples, n_classes), got shape {z.shape}."
        )
    if isinstance(criterion, torch.nn.CrossEntropyLoss):
        return z
    tol = 1e-4  # float32 softmax outputs
    if np.all(z >= 0) and np.allclose(z.sum(axis=1), 1.0, atol=tol):
        return _log_probs(z)
    return z


def _log_probs(P):
    return np.log(np.maximum(P, np.finfo(np.float32).tiny))
