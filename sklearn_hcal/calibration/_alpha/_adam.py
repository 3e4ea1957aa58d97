"""Mini-batch Adam for the concentration model, run by a skorch ``NeuralNet``.

Used for hidden layers (a non-convex fit that held-out early stopping
regularises) and for unregularised linear models with too few items per
parameter; see :func:`._solvers.choose_solver`. skorch provides the
epochs, the held-out scoring, the patience, the restoration of the best
weights and the progress table. This module imports torch and skorch; the
solvers (:mod:`._solvers`) import it only for an Adam fit.
"""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ...utils._interrupt import reraise_interrupt
from ...utils._optional import import_optional
from ...utils._progress import report_progress
from ...utils._warnings import warn_user
from ._config import SolverConfig

__all__ = ["Objective", "ObjectiveNet", "TensorBatches", "fit_adam"]

torch = import_optional("torch")
skorch = import_optional("skorch")
from skorch.callbacks import EarlyStopping  # noqa: E402
from skorch.helper import predefined_split  # noqa: E402


class TensorBatches:
    """skorch ``iterator_train``/``iterator_valid``: slices of whole tensors.

    skorch's default DataLoader fetches and collates one row at a time, which
    costs more than the model on ``(N, d)`` features; the data here is
    already a dict of tensors on the fit device, so a batch is one index.
    ``generator`` (a ``torch.Generator``) draws the shuffled orders.
    """

    def __init__(self, dataset, batch_size, shuffle=False, generator=None):
        self.X, self.batch_size, self.shuffle = dataset.X, batch_size, shuffle
        self.generator = generator

    def __iter__(self):
        first = next(iter(self.X.values()))
        n = first.shape[0]
        if self.shuffle:
            order = torch.randperm(n, generator=self.generator).to(first.device)
        else:
            order = torch.arange(n, device=first.device)
        for start in range(0, n, self.batch_size):
            idx = order[start : start + self.batch_size]
            yield {k: v[idx] for k, v in self.X.items()}, None


class Objective(torch.nn.Module):
    """The batch objective as the module's output (skorch's loss).

    ``objective(*tensors)`` is evaluated on the batch's tensors, named
    ``names`` in the batch dict; ``net`` holds the trained parameters.
    """

    def __init__(self, net, objective, names):
        super().__init__()
        self.net = net
        self.objective = objective
        self.names = names

    def forward(self, **batch):
        return self.objective(*(batch[k] for k in self.names))


class ObjectiveNet(skorch.NeuralNet):
    """A skorch net whose module's output is its loss."""

    def get_loss(self, y_pred, y_true, X=None, training=False):
        return y_pred


def fit_adam(module, objective, tensors, n, rng, config: SolverConfig):
    """Mini-batch Adam with early stopping, run by a skorch ``NeuralNet``.

    skorch provides the epochs, the held-out scoring, the patience
    (``EarlyStopping``, improvements smaller than ``tol`` do not count), the
    restoration of the best weights and the progress table (sent to standard
    error); ``config`` gives the epochs, ``tol``, the batch size, the
    learning rate, the held-out share and patience, and the verbosity.
    Returns ``(n_epochs, training loss, converged, nan, n_epochs)``.
    """
    max_iter, tol, verbose = config.max_iter, config.tol, config.verbose
    batch_size, n_iter_no_change = config.batch_size, config.n_iter_no_change
    early_stopping = config.early_stopping
    perm = rng.permutation(n)
    train_split = None
    if early_stopping:
        n_val = max(1, int(round(config.validation_fraction * n)))
        if n - n_val < 1:
            raise ValueError(
                "validation_fraction leaves no item to train on with "
                f"{n} items; set early_stopping=False."
            )
        val_idx, train_idx = np.sort(perm[:n_val]), perm[n_val:]
        # the data stays on the CPU: skorch moves each batch to the device
        val = tensors(val_idx, on="cpu")
        names = [f"x{i}" for i in range(len(val))]
        val = dict(zip(names, val))
        train_split = predefined_split(skorch.dataset.Dataset(val))
    else:
        train_idx = perm
    train = tensors(np.sort(train_idx), on="cpu")
    names = [f"x{i}" for i in range(len(train))]
    n_train = train[0].shape[0]
    bs = min(512, n_train) if batch_size == "auto" else min(batch_size, n_train)

    def sink(message, verbose=verbose):
        report_progress(str(message), verbose)

    stopper = EarlyStopping(
        monitor="valid_loss" if early_stopping else "train_loss",
        patience=n_iter_no_change,
        threshold=tol,
        threshold_mode="abs",
        load_best=True,
        sink=sink,
    )
    gen = torch.Generator(device="cpu").manual_seed(int(rng.randint(2**31 - 1)))
    net = ObjectiveNet(
        Objective(module, objective, names),
        criterion=torch.nn.Identity,  # unused: get_loss returns the objective
        optimizer=torch.optim.Adam,
        lr=config.learning_rate,
        max_epochs=max_iter,
        batch_size=bs,
        iterator_train=TensorBatches,
        iterator_train__shuffle=True,
        iterator_train__generator=gen,
        iterator_valid=TensorBatches,
        train_split=train_split,
        callbacks=[("early_stopping", stopper)],
        callbacks__print_log__sink=sink,
        device=next(module.parameters()).device,
        verbose=int(verbose > 0),
    )
    # skorch swallows Ctrl-C to keep a half-trained net; a calibrator must
    # not return a half-fitted α model without a word
    with reraise_interrupt():
        net.fit(dict(zip(names, train)), None)
    converged = stopper.misses_ >= n_iter_no_change
    if not converged:
        warn_user(
            f"Adam stopped at max_iter={max_iter} epochs before the "
            "monitored loss stopped improving; increase max_iter.",
            ConvergenceWarning,
        )
    # training objective at the restored weights, batch by batch on the device
    # (the weight penalty is in every batch's loss, so the mean keeps it once)
    total = 0.0
    for batch, _ in TensorBatches(skorch.dataset.Dataset(dict(zip(names, train))), bs):
        batch = skorch.utils.to_tensor(batch, device=net.device)
        with torch.no_grad():
            total += float(objective(*(batch[k] for k in names))) * len(batch[names[0]])
    loss = total / n_train
    epochs = len(net.history)
    return epochs, loss, converged, float("nan"), epochs
