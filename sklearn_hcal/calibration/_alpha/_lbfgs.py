"""Full-batch L-BFGS for the concentration model of α-calibration.

The preconditioned linear model (and hidden layers when asked for) is fitted
by torch's L-BFGS with a strong-Wolfe line search, restarted with a fresh
history when the search stalls (see :mod:`._solvers` for why the
preconditioner makes this converge in a few iterations). This module
imports torch; the solvers import it only when they fit.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ...utils._optional import import_optional
from ...utils._warnings import warn_user

__all__ = ["fit_lbfgs"]

torch = import_optional("torch")

#: L-BFGS is restarted with a fresh history at most this many times when its
#: line search stalls before the gradient tolerance is met.
_MAX_RESTARTS = 3

#: The float32 stage stops when the loss changes by less than this: the
#: rounding of the float32 products moves a loss of order 1-10 by a few 1e-9.
_COARSE_CHANGE = 1e-8


def _gradient_size(module):
    """``(largest |component|, squared norm)`` of the gradient."""
    grads = [p.grad for p in module.parameters() if p.grad is not None]
    if not grads:
        return 0.0, 0.0
    return (
        max(float(g.abs().max()) for g in grads),
        sum(float((g.double() ** 2).sum()) for g in grads),
    )


def fit_lbfgs(
    module,
    objective,
    data,
    *,
    max_iter,
    tol,
    whitened,
    coarse=None,
    coarse_tol=1e-5,
):
    """Full-batch L-BFGS, strong-Wolfe line search, restarted when it stalls.

    Returns ``(n_iter, loss, converged, grad_max, n_evals)``. Converged means
    the largest gradient component is at most ``tol`` or, in whitened
    coordinates (Hessian close to the identity), that the decrease the
    gradient still promises, ``½‖g‖²``, is below what float64 resolves in
    the loss (``100·eps·|loss|``): a line search cannot see smaller steps.

    ``coarse``, the data with the features in float32, is a first stage: the
    same optimiser on it until its largest gradient component is at most
    ``coarse_tol``, then on ``data`` with its history (curvature pairs)
    kept. Each pass over the float32 features reads half the bytes; their
    gradient differs from the float64 one by float32 rounding, below
    ``coarse_tol`` (at the switch, 20,000 × 512: 1.5e-6 on ill-conditioned
    features, 1.3e-7 on penultimate-like ones; the loss by 5e-9 and 3e-10),
    and the float64 stage ends at the optimum of ``data`` as without it.
    """
    eps = float(np.finfo(np.float64).eps)

    def done(grad_max, grad_sq, loss):
        floor = whitened and 0.5 * grad_sq <= 100 * eps * max(1.0, abs(loss))
        return grad_max <= tol or floor

    params = list(module.parameters())
    n_iter = n_evals = 0
    for _ in range(_MAX_RESTARTS + 1):
        remaining = max_iter - n_iter
        opt = torch.optim.LBFGS(
            params,
            lr=1.0,
            max_iter=remaining,
            max_eval=2 * remaining,
            tolerance_grad=tol,
            # Stop on the gradient, not on tiny loss changes: a float64 loss
            # of order 1 still resolves 1e-15.
            tolerance_change=1e-15,
            history_size=20,
            line_search_fn="strong_wolfe",
        )
        evals = []

        def closure(opt=opt, evals=evals, data=data):
            opt.zero_grad()
            loss = objective(*data)
            loss.backward()
            evals.append(([p.detach().clone() for p in params], float(loss.detach())))
            return loss

        before = [p.detach().clone() for p in params]
        state = opt.state[params[0]]
        if coarse is not None:
            group = opt.param_groups[0]
            group["tolerance_grad"] = coarse_tol
            # float32 products move the loss by a few 1e-9: smaller changes
            # are no progress the float32 stage can see
            group["tolerance_change"] = _COARSE_CHANGE
            opt.step(partial(closure, data=coarse))
            # the float64 stage: what is left of the budget, the history kept
            done_coarse = int(state.get("n_iter", 0))
            group["tolerance_grad"] = tol
            group["tolerance_change"] = 1e-15
            group["max_iter"] = max(remaining - done_coarse, 1)
            group["max_eval"] = max(2 * remaining - len(evals), 1)
            coarse = None  # restarts are float64 only
        opt.step(closure)
        n_iter += int(state.get("n_iter", 0))
        n_evals += len(evals)
        # loss and gradient at the final parameters: those of the last
        # evaluation when the line search ended there (one pass saved)
        last, loss = evals[-1]
        if not all(torch.equal(p, q) for p, q in zip(params, last)):
            loss = float(closure().detach())
        grad_max, grad_sq = _gradient_size(module)
        converged = done(grad_max, grad_sq, loss)
        # A run that ended where it started would be repeated exactly by
        # the next restart (a fresh history from the same point): stop.
        stuck = all(torch.equal(p, q) for p, q in zip(params, before))
        if converged or n_iter >= max_iter or len(evals) <= 2 or stuck:
            break
    if not converged:
        why = (
            f"in max_iter={max_iter} iterations; increase max_iter"
            if n_iter >= max_iter
            else "(the line search stalled); check the features for extreme "
            "values or set l2_reg > 0"
        )
        warn_user(
            f"L-BFGS did not reach the gradient tolerance tol={tol:g} {why} "
            f"(largest gradient component {grad_max:.2e}).",
            ConvergenceWarning,
        )
    return max(1, n_iter), loss, converged, grad_max, n_evals
