"""Solvers of α-calibration: the concentration model α0(x) and its fit.

The concentration model is ``log α0(x) = MLP(h(x))`` on standardised features
``h`` (a linear model ``wᵀh + b`` without hidden layers), fitted by the
Dirichlet-multinomial NLL of the label histograms plus ``alpha_reg·mean_i
(log α0_i)²`` (Mimori et al. 2021, App. D.2, eq. 50) and, optionally,
``l2_reg·Σ‖W‖²`` on the weights. Fitting needs PyTorch; prediction
(:func:`predict_log_alpha0`) is numpy only, so a calibrator fitted on a GPU
predicts on a CPU-only machine.

**Why a preconditioner.** The loss Hessian of the linear model is
``Hᵀ D H / N`` with ``D`` the per-item curvature of the NLL in ``log α0``;
penultimate-layer features are strongly correlated, so ``HᵀH`` is badly
conditioned and plain L-BFGS on ``w`` crawls (at 512 features and
N = 100,000 it stopped at ``max_iter=200`` on the earlier benchmark problem
and took 189 iterations on ``benchmarks/bench_alpha.py``'s simulation). We
optimise instead in whitened coordinates ``β = Lᵀ w`` with ``L Lᵀ =
c·Cov(h) + 2·l2_reg·I`` (``c`` the mean curvature at the start, α0 = 1):
the Hessian in ``β`` is close to the identity, L-BFGS converges in 10–15
iterations whatever the correlations, and its gradient tolerance ``tol`` is
scale free. The covariance comes from float32 features, on a random subset
of rows when there are many (:func:`~._model.preconditioner_rows`: a
preconditioner need not be exact); the fitted weights are mapped back to
the features, so nothing outside this module sees ``β``.

**Why a float32 stage.** From ``FLOAT32_STAGE_FEATURES`` features on, the
passes over the features are the cost of an evaluation: L-BFGS starts on
float32 features (half the bytes a pass: the caller's own float32 features
with the standardisation folded into the weights, else a float32 copy;
:class:`~._model.Float32Features`), stops at a whitened gradient of 1e-5
or when the loss moves less than the float32 products resolve, and goes on
in float64 with its history, to ``tol``. The optimum is the float64 one:
the training loss equals that of float64 L-BFGS throughout to 3e-13, the
held-out NLL to 3e-8 at 512 features (as far as either lies from a fit to
``tol = 1e-10``; ``benchmarks/RESULTS.md``).

**Statistics, not optimisation, then limits the error.** At the exact
optimum the error of ``log α0`` is about ``sqrt(n_features / (N·Ī))`` (``Ī``
the information one item's labels carry about its ``log α0``, about 0.25
with 5 labels): 10% median error at 512 i.i.d. features and N = 100,000,
whatever the solver. ``l2_reg`` trades that variance for bias; on
penultimate-like features, whose signal lives in a few principal
directions, it brings the error down to that of a low-dimensional model.

Adam (hidden layers, or too few items per parameter without ``l2_reg``) is
run by a skorch ``NeuralNet``: epochs, held-out early stopping, restoration
of the best weights and the progress table are skorch's.

The estimator (:mod:`._estimator`) prepares ``H``, ``F`` and ``Y`` and calls
:func:`fit_concentration_model` with a :class:`~._config.SolverConfig`;
nothing here knows about scikit-learn estimators.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
from sklearn.utils import check_random_state

from ...utils._optional import import_optional, resolve_device
from ...utils._progress import report_progress
from ...utils._threads import one_torch_thread
from ...utils._warnings import warn_user
from ._config import SolverConfig

__all__ = [
    "DEGENERATE_LOG_ALPHA0",
    "FLOAT32_STAGE_FEATURES",
    "LOG_ALPHA0_BOUND",
    "ConcentrationFit",
    "choose_solver",
    "features_in_float32",
    "fit_concentration_model",
    "predict_log_alpha0",
    "use_histogram_slots",
    "warn_if_degenerate",
]

#: log α0 is clipped to [log 1e-12, log 1e12], the clipping range of the
#: reference implementation, so that exp never overflows.
LOG_ALPHA0_BOUND = float(np.log(1e12))


@dataclass
class ConcentrationFit:
    """Result of :func:`fit_concentration_model` (numpy arrays only).

    ``coefs`` and ``intercepts`` are in the coordinates of the features ``H``
    the model was fitted on; ``loss`` is the final training objective
    (penalties included); ``converged`` says whether the stopping criterion
    was met (L-BFGS: largest whitened gradient component ``grad_max <= tol``;
    Adam: the monitored loss stopped improving), ``n_evals`` counts
    objective evaluations (L-BFGS) or epochs (Adam) and ``log_alpha0`` is the
    training items' clipped ``log α0`` at the fitted parameters, from
    L-BFGS's last evaluation (None for Adam: predict it).
    """

    coefs: list
    intercepts: list
    n_iter: int
    loss: float
    solver: str
    converged: bool = True
    grad_max: float = float("nan")
    n_evals: int = 0
    log_alpha0: np.ndarray | None = None


def predict_log_alpha0(H, coefs, intercepts) -> np.ndarray:
    """``log α0`` of standardised features ``H`` (numpy forward pass, clipped)."""
    for W, b in zip(coefs[:-1], intercepts[:-1]):
        H = np.maximum(H @ W + b, 0.0)
    out = H @ coefs[-1] + intercepts[-1]
    return np.clip(out[:, 0], -LOG_ALPHA0_BOUND, LOG_ALPHA0_BOUND)


def choose_solver(
    solver: str,
    n_features: int,
    n_items: int,
    hidden,
    *,
    l2_reg: float = 0.0,
    fits_in_memory: bool = True,
) -> str:
    """Resolve ``solver="auto"``.

    Full-batch L-BFGS (preconditioned, float64) for the linear model when it
    is regularised (``l2_reg > 0``) or has at most ``max(50, n_items // 10)``
    parameters, and its data fits on the device; mini-batch Adam with early
    stopping otherwise: for hidden layers (a non-convex fit that early
    stopping regularises), for an unregularised linear model with too few
    items per parameter (the exact optimum would overfit, or not exist: α0
    runs to its bounds) and for data too large for the GPU in float64.
    """
    if solver != "auto":
        return solver
    hidden = tuple(hidden)
    if hidden or not fits_in_memory:
        return "adam"
    small = n_features + 1 <= max(50, n_items // 10)
    return "lbfgs" if small or l2_reg > 0 else "adam"


def use_histogram_slots(max_labels, n_classes) -> bool:
    """Whether the per-label likelihood form is the faster one.

    :func:`~._dirichlet.dirichlet_multinomial_nll_slots` costs one ``log``
    per label slot (``max_labels`` per item, padded), the ``lgamma`` form
    ``2K + 2`` ``lgamma`` per item. Timed forward and backward on one CPU
    thread (20,000 items), the slot form costs about 1.2 ms per slot and the
    lgamma form about 3.7 K + 9 ms: equal near ``3 (K + 3)`` labels (39 at
    K = 10, where the old switch at ``max(64, 4K)`` picked the slot form for
    CIFAR-10H's ~50 labels). Both forms give the same likelihood.
    """
    return max_labels <= 3 * (n_classes + 3)


#: Features from which the linear model's L-BFGS starts on float32 features
#: (:func:`~._lbfgs.fit_lbfgs`): below this the passes over the features cost
#: less than the likelihood and the float32 copy would not pay (at N = 20,000,
#: 54 ms either way at 64 features; 75 against 95 ms at 128).
FLOAT32_STAGE_FEATURES = 64


@one_torch_thread  # short passes stall on a busy second core
def fit_concentration_model(
    H,
    F,
    Y,
    config: SolverConfig | None = None,
    *,
    sample_weight=None,
    float32_features=None,
    **overrides,
) -> ConcentrationFit:
    """Fit ``log α0 = MLP(H)`` to the histograms ``Y`` given ``f = F``.

    Minimises ``mean_i(u_i·NLL_i) + alpha_reg·mean_i(s_i·(log α0_i)²) +
    l2_reg·Σ_layers ‖W‖²`` (Mimori et al. 2021, App. D.2, eq. 50), with the
    item weights ``u`` of ``config.normalization`` (see
    :func:`~._dirichlet.objective_weights`).

    Parameters
    ----------
    H : ndarray of shape (n_items, n_features)
        Standardised features.
    F : ndarray of shape (n_items, n_classes)
        Class probabilities ``f(x)`` (the Dirichlet mean).
    Y : ndarray of shape (n_items, n_classes)
        Label histograms (counts).
    config : SolverConfig, default=None
        The model, objective, solver, device, seed and verbosity
        (:class:`~._config.SolverConfig`; None: its defaults). A CUDA device
        on a machine without CUDA is a ValueError.
    sample_weight : ndarray of shape (n_items,), default=None
        Item weights ``s``: the objective is the ``sample_weight``-weighted
        mean over items of the normalised NLL and of the penalty (all ones
        gives the unweighted objective; integer weights equal repeated items).
    float32_features : tuple (G, mean, scale), default=None
        The float32 features ``H`` was standardised from (``H = (G - mean) /
        scale``): the float32 stage of L-BFGS and the preconditioner read
        ``G`` instead of a float32 copy of ``H`` when its means are within a
        few scales of 0 (:class:`~._model.Float32Features`).
    **overrides
        Fields of the configuration to change (``l2_reg=0.1``, ``solver="adam"``
        ...), checked as the configuration checks them.

    Returns
    -------
    fit : ConcentrationFit
    """
    cfg = replace(config or SolverConfig(), **overrides)
    # the torch modules, imported when a fit needs them (the estimator is
    # imported without torch)
    torch = import_optional("torch")
    from .. import _dirichlet as dm
    from ._lbfgs import fit_lbfgs
    from ._likelihood import nll_observed_classes
    from ._model import (
        PRECONDITIONER_ROWS,
        ConcentrationNet,
        fits_on_device,
        mean_curvature,
        preconditioner,
    )

    hidden, alpha_reg, l2_reg = cfg.hidden, cfg.alpha_reg, cfg.l2_reg
    device = cfg.device
    if device is None:
        device = torch.device("cpu")
    elif not isinstance(device, torch.device):
        device = resolve_device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device={str(device)!r} was requested but CUDA is not available on "
            "this machine; use device='cpu'."
        )
    # H and the per-label slots (about 3 × 8 bytes per label) in float64
    nbytes = 8 * (H.size + 3 * int(Y.sum()) + 3 * H.shape[0])
    fits = fits_on_device(nbytes, device)
    chosen = choose_solver(
        cfg.solver, H.shape[1], H.shape[0], hidden, l2_reg=l2_reg, fits_in_memory=fits
    )
    if cfg.solver == "auto" and not fits and chosen == "adam" and not hidden:
        warn_user(
            f"The data ({nbytes / 2**30:.1f} GiB in float64) does not fit in the "
            f"free memory of {device}: fitting with mini-batch Adam in float32 "
            "instead of full-batch L-BFGS; use device='cpu' for the exact "
            "optimum."
        )
    solver = chosen
    rng = check_random_state(cfg.random_state)
    seed = int(rng.randint(np.iinfo(np.int32).max))
    dtype = (
        torch.float64 if solver == "lbfgs" or device.type == "cpu" else torch.float32
    )
    n = Y.sum(axis=1)
    nll_w, pen_w = dm.objective_weights(n, sample_weight, cfg.normalization)
    if use_histogram_slots(n.max(), Y.shape[1]):
        arrays = (H, nll_w, pen_w) + dm.histogram_slots(Y, F)
        nll = plain_nll = dm.dirichlet_multinomial_nll_slots
    else:
        arrays = (H, nll_w, pen_w, F, Y)
        # the lgamma form where y > 0 only (the same value and gradient);
        # the preconditioner's curvature keeps autograd's second derivative
        nll = nll_observed_classes
        plain_nll = dm.dirichlet_multinomial_nll_log_alpha0

    def tensors(idx=None, skip=0, on=device):
        sel = slice(None) if idx is None else idx
        # as_tensor shares memory with a float64 H on the CPU: no copy of the
        # largest array for the full-batch fit.
        return tuple(
            torch.as_tensor(np.ascontiguousarray(a[sel]), dtype=dtype, device=on)
            for a in arrays[skip:]
        )

    chol = center = H32 = None
    bias_scale = 1.0
    # Adam keeps the plain parametrisation: its step sizes, initialisation
    # and early stopping suit standardised features, and whitening inflates
    # the low-variance (noise) directions, which an MLP then overfits sooner
    # (median α0 error 31% instead of 24% at 512-d, N = 20,000, hidden (64,)).
    if cfg.precondition and solver == "lbfgs":
        # Curvature-scaled whitening for the linear model (its Hessian becomes
        # close to the identity); plain whitening for hidden layers.
        curvature = None
        if not hidden:
            # a scale for the preconditioner: a subset of items is enough
            n_items = H.shape[0]
            rows = None
            if n_items > PRECONDITIONER_ROWS:
                rows = np.sort(rng.choice(n_items, PRECONDITIONER_ROWS, replace=False))
            curvature = mean_curvature(plain_nll, tensors(rows, skip=1))
            curvature += 2.0 * alpha_reg
            if not curvature > 0:  # no information at α0 = 1
                curvature = 1.0
            bias_scale = 1.0 / np.sqrt(curvature)
        if not hidden and H.shape[1] >= FLOAT32_STAGE_FEATURES:
            # the float32 features of the first L-BFGS stage, read by the
            # preconditioner too: the caller's, else one copy for both
            H32 = features_in_float32(H, float32_features, device)
        chol, center = preconditioner(
            H, pen_w, rng, curvature=curvature, l2_reg=l2_reg, device=device, H32=H32
        )
        chol, center = chol.to(dtype), center.to(dtype)
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(seed)
        module = ConcentrationNet(
            H.shape[1], hidden, dtype, chol, center, bias_scale
        ).to(device)

    last_log_a0 = [None]  # L-BFGS ends with an evaluation at its result

    def objective(h, w, item_w, *lik):
        layers = module.layers()
        log_a0 = module(h, layers).clamp(-LOG_ALPHA0_BOUND, LOG_ALPHA0_BOUND)
        last_log_a0[0] = log_a0
        loss = (w * nll(log_a0, *lik)).mean()
        if alpha_reg:
            loss = loss + alpha_reg * (item_w * log_a0**2).mean()
        if l2_reg:
            loss = loss + l2_reg * sum((W**2).sum() for W, _ in layers)
        return loss

    start = time.perf_counter()
    if solver == "lbfgs":
        data = tensors()
        result = fit_lbfgs(
            module,
            objective,
            data,
            max_iter=cfg.max_iter,
            tol=cfg.tol,
            whitened=chol is not None,
            coarse=None if H32 is None else (H32,) + data[1:],
        )
    else:
        from ._adam import fit_adam  # skorch: only for Adam

        result = fit_adam(module, objective, tensors, H.shape[0], rng, cfg)
    n_iter, loss, converged, grad_max, n_evals = result
    report_progress(
        f"AlphaCalibrator: solver={solver}, n_iter={n_iter}, "
        f"loss={loss:.8f}, {time.perf_counter() - start:.2f} s",
        cfg.verbose,
    )
    with torch.no_grad():
        layers = module.layers()
    return ConcentrationFit(
        coefs=[W.detach().cpu().double().numpy().T.copy() for W, _ in layers],
        intercepts=[b.detach().cpu().double().numpy().copy() for _, b in layers],
        n_iter=n_iter,
        loss=loss,
        solver=solver,
        converged=converged,
        grad_max=grad_max,
        n_evals=n_evals,
        log_alpha0=(
            last_log_a0[0].detach().cpu().double().numpy()
            if solver == "lbfgs"
            else None
        ),
    )


def features_in_float32(H, given, device):
    """:class:`~._model.Float32Features` of ``H``: the caller's float32 ``G``
    when it is usable as it is, else a float32 copy of ``H``."""
    torch = import_optional("torch")
    from ._model import Float32Features

    if given is not None:
        G, mean, scale = given
        inverse = 1.0 / np.asarray(scale, dtype=np.float64)
        shift = np.asarray(mean, dtype=np.float64)
        usable = (
            G.dtype == np.float32
            and G.shape == H.shape
            and G.flags.c_contiguous
            and np.max(np.abs(shift) * inverse, initial=0.0)
            <= Float32Features.MAX_SHIFT
        )
        if usable:
            return Float32Features(
                torch.as_tensor(G, device=device),
                torch.as_tensor(shift, device=device),
                torch.as_tensor(inverse, device=device),
            )
    return Float32Features.of(H, device)


#: |log α0| beyond which a fitted concentration counts as degenerate (α0
#: below 1e-6 or above 1e6, half-way to the clip bound in log scale): L-BFGS
#: stops before the bound itself because the likelihood flattens there.
DEGENERATE_LOG_ALPHA0 = 0.5 * float(np.log(1e12))


def warn_if_degenerate(log_a0, sample_weight=None) -> None:
    """Warn when the fitted α0 is degenerate for most training items.

    developer guide §never-degrade (never silently degrade): a fit whose α0 runs towards
    its clip bound for more than half the items predicts extreme
    disagreements and posteriors -- typically because ``f`` or the features
    come from another classifier than at prediction time (out-of-fold
    logits on another scale than the refit net's).
    """
    at_bound = np.abs(log_a0) >= DEGENERATE_LOG_ALPHA0
    share = float(np.average(at_bound, weights=sample_weight))
    if share > 0.5:
        side = "below 1e-6" if np.median(log_a0) < 0 else "above 1e6"
        warn_user(
            f"alpha0 is {side}, on its way to the clip bound (1e-12 or "
            f"1e12), for {share:.0%} of the training items: the "
            "concentration model is degenerate (the histograms are far "
            "from what f predicts, or the features separate the items "
            "perfectly). Predicted disagreements and posteriors will be "
            "extreme; check that f and the features come from the "
            "classifier used at prediction time, or raise alpha_reg."
        )
