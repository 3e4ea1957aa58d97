"""GLAD's E-step and the M-step's objective with its gradient, vectorised.

With ``s_a = α_{w_a} · exp(b_{i_a})`` for annotation ``a`` (``α`` the
annotator's ability, ``exp(b)`` the item's inverse difficulty ``β``, kept
in log space so that ``β > 0``), the annotator is right with probability
``σ(s_a)`` and gives each wrong class with ``(1 − σ(s_a))/(K − 1)``
(Whitehill et al. 2009, eq. 1). Per annotation, every class gets
``log((1 − σ)/(K − 1))`` and the class named gets ``log σ − log((1 − σ)/(K
− 1))`` more (:func:`.._em.item_class_sums`).

The M-step maximises the expected complete log-likelihood plus the
log-densities of the priors ``α ~ N(μ_α, 1)`` and ``b ~ N(μ_b, 1)``:

``Q = Σ_a [q_a log σ(s_a) + (1 − q_a) log((1 − σ(s_a))/(K − 1))]
− ½ Σ_w (α_w − μ_α)² − ½ Σ_i (b_i − μ_b)² + const``

with ``q_a`` the posterior probability that annotation ``a`` is right;
``∂Q/∂s_a = q_a − σ(s_a)``. These are crowd-kit 1.4.2's ``_compute_Q`` and
``_gradient_Q`` (its sum over the melted classes reduces to ``q_a``).
"""

from __future__ import annotations

import numpy as np

from .._em import item_class_sums, posterior_from_log_joint

__all__ = ["LOG_SQRT_2PI", "e_step", "negative_q"]

LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


def _softplus_neg(s: np.ndarray) -> np.ndarray:
    """``log(1 + exp(−s)) = −log σ(s)``, without overflow, in four passes.

    ``np.logaddexp`` costs about ten times as much per entry; this is the
    M-step's hot spot (every conjugate-gradient evaluation).
    """
    out = np.abs(s)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.log1p(out, out=out)
    out += np.maximum(-s, 0.0)
    return out


def e_step(data, ability: np.ndarray, log_beta: np.ndarray):
    """Posteriors under a uniform class prior, and the log-likelihood.

    ``ability`` and ``log_beta`` are indexed by the table's annotator and
    item codes.
    """
    K = data.n_classes
    s = ability[data.annotator] * np.exp(log_beta)[data.item]
    log_right = -_softplus_neg(s)
    log_wrong = log_right - s - np.log(K - 1)  # log(1 − σ(s)) = log σ(s) − s
    log_joint = item_class_sums(data, log_wrong, log_right - log_wrong) - np.log(K)
    return posterior_from_log_joint(log_joint)


def negative_q(x, data, correct, prior_ability, prior_log_beta):
    """``−Q`` and its gradient at ``x = [α, b]`` (the CG's objective).

    ``correct[a]``: the posterior probability that annotation ``a`` names
    its item's true class. With ``log σ(s) − log((1 − σ(s))/(K − 1)) = s +
    log(K − 1)``, ``Q``'s data term is ``Σ_a [q_a (s_a + c) − s_a −
    softplus(−s_a) − c]`` with ``c = log(K − 1)``: three sums.
    """
    W = data.n_annotators
    ability, log_beta = x[:W], x[W:]
    beta = np.exp(log_beta)[data.item]
    s = ability[data.annotator] * beta
    softplus = _softplus_neg(s)
    c = np.log(data.n_classes - 1)
    d_alpha = ability - prior_ability
    d_beta = log_beta - prior_log_beta
    q = correct @ s - s.sum() - softplus.sum() + c * (correct.sum() - len(s))
    q -= 0.5 * (d_alpha @ d_alpha + d_beta @ d_beta) + LOG_SQRT_2PI * len(x)
    np.negative(softplus, out=softplus)
    ds = correct - np.exp(softplus, out=softplus)  # q_a − σ(s_a)
    grad_alpha = np.bincount(data.annotator, weights=ds * beta, minlength=W)
    # ∂s/∂b = α·exp(b) = s
    grad_beta = np.bincount(data.item, weights=ds * s, minlength=data.n_items)
    grad = np.concatenate([grad_alpha - d_alpha, grad_beta - d_beta])
    return -q, -grad
