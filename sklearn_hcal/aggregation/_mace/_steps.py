"""MACE's E-step, expected counts and M-steps (EM and variational), vectorised.

Hovy et al. (2013), §2: annotator ``w`` knows the answer with probability
``θ_w`` and then gives the true class; otherwise they spam, drawing a label
from their strategy ``ξ_w``. So ``p(label k | class z) = θ_w 1[k = z] +
(1 − θ_w) ξ_wk``: every class gets ``log((1 − θ_w) ξ_wk)`` per annotation
and the class named gets ``log((1 − θ_w) ξ_wk + θ_w) − log((1 − θ_w)
ξ_wk)`` more (:func:`.._em.item_class_sums`), in log space (crowd-kit
multiplies the probabilities, which underflows for items with many
annotations).

Expected counts, per annotation ``a`` of label ``k`` on item ``i``: the
annotator knew with probability ``q_i(k) θ / (θ + (1 − θ) ξ_k)`` and
spammed otherwise, drawing ``k`` from the strategy. The M-step normalises
the counts plus a smoothing (EM, MACE's ``-em``) or takes
``exp E[log ·]`` under the Beta/Dirichlet posteriors (variational Bayes,
MACE's default): crowd-kit's ``_m_step`` and ``_variational_m_step``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma

from .._em import item_class_sums, posterior_from_log_joint

__all__ = [
    "e_step",
    "expected_counts",
    "m_step",
    "posterior_means",
    "variational_m_step",
]


def e_step(data, know, spam, strategy, annotator=None):
    """Posteriors (uniform class prior) and the log-likelihood.

    ``p(label k | class z) = know_w 1[k = z] + spam_w ξ_wk``: ``know = θ``
    and ``spam = 1 − θ`` in EM, their ``exp E[log ·]`` weights in
    variational Bayes. The tables are indexed by ``annotator`` (one code per
    row; default: the table's own annotator codes).
    """
    K = data.n_classes
    annotator = data.annotator if annotator is None else annotator
    knew = know[annotator]
    spammed = spam[annotator] * strategy[annotator, data.label]
    with np.errstate(divide="ignore"):
        log_spam = np.log(spammed)
    bonus = np.log(spammed + knew) - log_spam
    log_joint = item_class_sums(data, log_spam, bonus) - np.log(K)
    return posterior_from_log_joint(log_joint)


def expected_counts(data, posterior, know, spam, strategy):
    """``(knew, spammed, strategy_counts)``: expected counts per annotator.

    ``knew[w]`` and ``spammed[w]`` sum over w's annotations the
    probabilities that w knew the answer or spammed;
    ``strategy_counts[w, k]`` sums the spamming probabilities of w's
    annotations of label k.
    """
    W, K = strategy.shape
    right = know[data.annotator]
    wrong = spam[data.annotator] * strategy[data.annotator, data.label]
    knew = posterior[data.item, data.label] * right / (right + wrong)
    spammed = 1.0 - knew
    knew_sum = np.bincount(data.annotator, weights=knew, minlength=W)
    spammed_sum = np.bincount(data.annotator, weights=spammed, minlength=W)
    counts = np.bincount(
        data.annotator * K + data.label, weights=spammed, minlength=W * K
    ).reshape(W, K)
    return knew_sum, spammed_sum, counts


def m_step(knew, spammed, counts, smoothing: float):
    """``(θ, 1 − θ, ξ)`` from smoothed expected counts (MACE's EM)."""
    know = (knew + smoothing) / (knew + spammed + 2 * smoothing)
    strategy = counts + smoothing
    strategy /= strategy.sum(axis=1, keepdims=True)
    return know, 1.0 - know, strategy


def variational_m_step(knew, spammed, counts, competence_prior, strategy_prior):
    """``exp E[log ·]`` of ``θ``, ``1 − θ`` and ``ξ`` under their posteriors.

    ``competence_prior = (a_spam, a_know)``, the Beta prior's pseudo-counts,
    and ``strategy_prior`` the symmetric Dirichlet's. These sub-normalised
    weights are what the next E-step uses (variational Bayes, Hovy et al.
    2013 §2.2, as MACE and crowd-kit do); :func:`posterior_means` gives the
    parameters as probabilities.
    """
    a_spam, a_know = competence_prior
    total = digamma(knew + spammed + a_spam + a_know)
    know = np.exp(digamma(knew + a_know) - total)
    spam = np.exp(digamma(spammed + a_spam) - total)
    K = counts.shape[1]
    strategy = np.exp(
        digamma(counts + strategy_prior)
        - digamma(counts.sum(axis=1, keepdims=True) + K * strategy_prior)
    )
    return know, spam, strategy


def posterior_means(knew, spammed, counts, competence_prior, strategy_prior):
    """Posterior means of ``θ`` and ``ξ`` (proper probabilities)."""
    a_spam, a_know = competence_prior
    know = (knew + a_know) / (knew + spammed + a_spam + a_know)
    strategy = counts + strategy_prior
    strategy /= strategy.sum(axis=1, keepdims=True)
    return know, strategy
