"""Solvers of α-calibration: the concentration model α0(x) and its fit.

The concentration model is ``log α0(x) = MLP(h(x))`` on standardised features
``h`` (a linear model ``wᵀh + b`` without hidden layers), fitted by the
Dirichlet-multinomial NLL of the label histograms plus ``alpha_reg·mean_i
(log α0_i)²`` (Mimori et al. 2021, App. D.2, eq. 50). Fitting needs PyTorch;
prediction (:func:`predict_log_alpha0`) is numpy only, so a calibrator fitted
on a GPU predicts on a CPU-only machine.

The estimator (:mod:`._alpha`) prepares ``H``, ``F`` and ``Y`` and calls
:func:`fit_concentration_model`; nothing here knows about scikit-learn
estimators.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..utils._optional import import_optional
from ..utils._progress import report_progress

__all__ = [
    "LOG_ALPHA0_BOUND",
    "ConcentrationFit",
    "choose_solver",
    "fit_concentration_model",
    "predict_log_alpha0",
]

#: log α0 is clipped to [log 1e-12, log 1e12], the clipping range of the
#: reference implementation, so that exp never overflows.
LOG_ALPHA0_BOUND = float(np.log(1e12))


@dataclass
class ConcentrationFit:
    """Result of :func:`fit_concentration_model` (numpy arrays only)."""

    coefs: list
    intercepts: list
    n_iter: int
    loss: float
    solver: str


def predict_log_alpha0(H, coefs, intercepts) -> np.ndarray:
    """``log α0`` of standardised features ``H`` (numpy forward pass, clipped)."""
    for W, b in zip(coefs[:-1], intercepts[:-1]):
        H = np.maximum(H @ W + b, 0.0)
    out = H @ coefs[-1] + intercepts[-1]
    return np.clip(out[:, 0], -LOG_ALPHA0_BOUND, LOG_ALPHA0_BOUND)


def _build_module(torch, n_in, hidden, dtype):
    layers = []
    width = n_in
    for h in hidden:
        layers += [torch.nn.Linear(width, h, dtype=dtype), torch.nn.ReLU()]
        width = h
    last = torch.nn.Linear(width, 1, dtype=dtype)
    # Zero output layer: α0 = 1 at initialisation whatever the hidden layers,
    # the starting point of the reference implementation.
    torch.nn.init.zeros_(last.weight)
    torch.nn.init.zeros_(last.bias)
    layers.append(last)
    return torch.nn.Sequential(*layers)


def choose_solver(solver: str, n_features: int, n_items: int, hidden) -> str:
    """Resolve ``solver="auto"``.

    L-BFGS for the linear model when it has at most ``max(50, n_items // 10)``
    parameters (enough items per parameter not to overfit without early
    stopping), Adam otherwise (hidden layers, or wide features on few items).
    """
    if solver != "auto":
        return solver
    hidden = tuple(hidden)
    n_params = sum((a + 1) * b for a, b in zip((n_features,) + hidden, hidden + (1,)))
    small = n_params <= max(50, n_items // 10)
    return "lbfgs" if not hidden and small else "adam"


def fit_concentration_model(
    H,
    F,
    Y,
    *,
    sample_weight=None,
    hidden=(),
    solver="auto",
    alpha_reg=0.005,
    max_iter=200,
    tol=1e-7,
    batch_size="auto",
    learning_rate=1e-2,
    validation_fraction=0.2,
    early_stopping=True,
    n_iter_no_change=10,
    device=None,
    random_state=None,
    verbose=0,
) -> ConcentrationFit:
    """Fit ``log α0 = MLP(H)`` to the histograms ``Y`` given ``f = F``.

    Parameters
    ----------
    H : ndarray of shape (n_items, n_features)
        Standardised features.
    F : ndarray of shape (n_items, n_classes)
        Class probabilities ``f(x)`` (the Dirichlet mean).
    Y : ndarray of shape (n_items, n_classes)
        Label histograms (counts).
    sample_weight : ndarray of shape (n_items,), default=None
        Item weights: the objective is the ``sample_weight``-weighted mean
        over items of the reference-weighted NLL and of the penalty (all ones
        gives the unweighted objective).
    hidden : tuple of int
        Hidden ReLU layer sizes.
    solver : {"auto", "lbfgs", "adam"}
        See :func:`choose_solver`.
    device : torch.device, default=None
        Torch device of the fit (CPU when None).
    Other parameters
        As :class:`~sklearn_hcal.AlphaCalibrator`.

    Returns
    -------
    fit : ConcentrationFit
    """
    torch = import_optional("torch")
    from . import _dirichlet as dm

    hidden = tuple(int(h) for h in hidden)
    if device is None:
        device = torch.device("cpu")
    solver = choose_solver(solver, H.shape[1], H.shape[0], hidden)
    rng = check_random_state(random_state)
    seed = int(rng.randint(np.iinfo(np.int32).max))
    dtype = (
        torch.float64 if solver == "lbfgs" or device.type == "cpu" else torch.float32
    )
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(seed)
        module = _build_module(torch, H.shape[1], hidden, dtype).to(device)

    n = Y.sum(axis=1)
    if sample_weight is not None:
        # A weighted mean over items, scaled so that equal weights change
        # nothing; mean(n) is weighted too, so integer weights equal repeats.
        sw = np.asarray(sample_weight, dtype=np.float64)
        sw = sw / sw.mean()
    else:
        sw = np.ones(n.shape[0])
    weights = n / np.average(n, weights=sw)
    # One log per label (histogram_slots) is far cheaper than 2K + 2 lgamma
    # per item while the number of labels per item stays moderate.
    if n.max() <= max(64, 4 * Y.shape[1]):
        arrays = (H, weights * sw, sw) + dm.histogram_slots(Y, F)

        def nll(log_a0, *lik):
            return dm.dirichlet_multinomial_nll_slots(log_a0, *lik)
    else:
        arrays = (H, weights * sw, sw, F, Y)

        def nll(log_a0, *lik):
            return dm.dirichlet_multinomial_nll_log_alpha0(log_a0, *lik)

    def tensors(idx=None):
        sel = slice(None) if idx is None else idx
        return tuple(
            torch.as_tensor(np.ascontiguousarray(a[sel]), dtype=dtype, device=device)
            for a in arrays
        )

    def objective(h, w, item_w, *lik):
        log_a0 = module(h)[:, 0].clamp(-LOG_ALPHA0_BOUND, LOG_ALPHA0_BOUND)
        loss = (w * nll(log_a0, *lik)).mean()
        if alpha_reg:
            loss = loss + alpha_reg * (item_w * log_a0**2).mean()
        return loss

    start = time.perf_counter()
    if solver == "lbfgs":
        n_iter, loss = _fit_lbfgs(
            torch,
            module,
            objective,
            tensors(),
            max_iter=max_iter,
            tol=tol,
            verbose=verbose,
        )
    else:
        n_iter, loss = _fit_adam(
            torch,
            module,
            objective,
            tensors,
            H.shape[0],
            rng,
            max_iter=max_iter,
            tol=tol,
            batch_size=batch_size,
            learning_rate=learning_rate,
            validation_fraction=validation_fraction,
            early_stopping=early_stopping,
            n_iter_no_change=n_iter_no_change,
            verbose=verbose,
        )
    report_progress(
        f"AlphaCalibrator: solver={solver}, n_iter={n_iter}, "
        f"loss={loss:.8f}, {time.perf_counter() - start:.2f} s",
        verbose,
    )
    linears = [m for m in module if isinstance(m, torch.nn.Linear)]
    return ConcentrationFit(
        coefs=[m.weight.detach().cpu().double().numpy().T.copy() for m in linears],
        intercepts=[m.bias.detach().cpu().double().numpy().copy() for m in linears],
        n_iter=n_iter,
        loss=loss,
        solver=solver,
    )


def _fit_lbfgs(torch, module, objective, data, *, max_iter, tol, verbose):
    """Full-batch L-BFGS with strong-Wolfe line search; ``(n_iter, loss)``."""
    opt = torch.optim.LBFGS(
        module.parameters(),
        lr=1.0,
        max_iter=max_iter,
        max_eval=max_iter * 2,
        tolerance_grad=tol,
        tolerance_change=1e-14,
        history_size=20,
        line_search_fn="strong_wolfe",
    )
    evals = []

    def closure():
        opt.zero_grad()
        loss = objective(*data)
        loss.backward()
        evals.append(float(loss.detach()))
        report_progress(
            f"L-BFGS evaluation {len(evals)}, loss = {evals[-1]:.8f}", verbose
        )
        return loss

    opt.step(closure)
    state = opt.state[next(iter(module.parameters()))]
    n_iter = max(1, int(state.get("n_iter", 0)))
    with torch.no_grad():
        loss = float(objective(*data))
    grad = max(
        float(p.grad.abs().max()) for p in module.parameters() if p.grad is not None
    )
    if n_iter >= max_iter and grad > tol:
        warnings.warn(
            f"L-BFGS did not converge in max_iter={max_iter} "
            f"iterations (largest gradient {grad:.2e}); increase max_iter.",
            ConvergenceWarning,
            stacklevel=4,
        )
    return n_iter, loss


def _fit_adam(
    torch,
    module,
    objective,
    tensors,
    n,
    rng,
    *,
    max_iter,
    tol,
    batch_size,
    learning_rate,
    validation_fraction,
    early_stopping,
    n_iter_no_change,
    verbose,
):
    """Mini-batch Adam with early stopping; ``(n_epochs, training loss)``."""
    perm = rng.permutation(n)
    if early_stopping:
        n_val = max(1, int(round(validation_fraction * n)))
        if n - n_val < 1:
            raise ValueError(
                "validation_fraction leaves no item to train on with "
                f"{n} items; set early_stopping=False."
            )
        val_idx, train_idx = np.sort(perm[:n_val]), perm[n_val:]
        val = tensors(val_idx)
    else:
        train_idx, val = perm, None
    train = tensors(np.sort(train_idx))
    n_train = train[0].shape[0]
    bs = min(512, n_train) if batch_size == "auto" else batch_size
    bs = min(bs, n_train)
    opt = torch.optim.Adam(module.parameters(), lr=learning_rate)
    best, best_state, stall = np.inf, None, 0
    gen = torch.Generator(device="cpu").manual_seed(int(rng.randint(2**31 - 1)))
    epoch = 0
    for epoch in range(1, max_iter + 1):
        order = torch.randperm(n_train, generator=gen).to(train[0].device)
        total = 0.0
        for start in range(0, n_train, bs):
            idx = order[start : start + bs]
            opt.zero_grad()
            loss = objective(*(t[idx] for t in train))
            loss.backward()
            opt.step()
            total += float(loss.detach()) * idx.numel()
        train_loss = total / n_train
        if val is not None:
            with torch.no_grad():
                monitored = float(objective(*val))
        else:
            monitored = train_loss
        report_progress(
            f"Epoch {epoch}, loss = {train_loss:.8f}, monitored = {monitored:.8f}",
            verbose,
        )
        if monitored < best - tol:
            best, stall = monitored, 0
            best_state = {k: v.clone() for k, v in module.state_dict().items()}
        else:
            stall += 1
            if stall >= n_iter_no_change:
                break
    else:
        warnings.warn(
            f"Adam stopped at max_iter={max_iter} epochs before the "
            "monitored loss stopped improving; increase max_iter.",
            ConvergenceWarning,
            stacklevel=4,
        )
    if best_state is not None:
        module.load_state_dict(best_state)
    with torch.no_grad():
        loss = float(objective(*train))
    return epoch, loss
