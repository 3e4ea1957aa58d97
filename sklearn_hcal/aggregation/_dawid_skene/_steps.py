"""The E- and M-steps of Dawid–Skene and its one-coin form, vectorised.

One fit builds the item × (annotator, label) incidence matrix ``A`` once
(:func:`.._em.incidence`); then each EM iteration is two sparse products:

* E-step: ``log q_i(z) ∝ log π_z + Σ_{a ∈ i} log e_{w_a}(z, y_a)``, i.e.
  ``log π + A @ L`` with ``L[(w, k), z] = log e_w(z, k)``;
* M-step: the expected counts ``C[(w, k), z] = Σ_{a : w_a = w, y_a = k}
  q_{i_a}(z)`` are ``A.T @ q``.

The clipping follows crowd-kit 1.4.2 exactly (so that the same iterations
give the same posteriors): the class prior is floored at ``EPS`` in the
E-step; a full confusion matrix floors the expected counts of the labels
the annotator used at ``EPS`` (a label never used keeps probability 0
without smoothing) before normalising; a one-coin matrix is clipped to
``[EPS, 1 − EPS]``.
"""

from __future__ import annotations

import numpy as np

from .._em import EPS, posterior_from_log_joint

__all__ = ["e_step", "full_confusion", "one_coin_confusion", "one_coin_skill"]


def e_step(A, prior: np.ndarray, confusion: np.ndarray):
    """Posterior of each item's class and the log-likelihood of the labels.

    ``confusion[w, z, k]`` is annotator w's probability of label k on an
    item of class z; ``A``'s columns are (annotator, label) pairs of the
    same annotators.
    """
    W, K, _ = confusion.shape
    with np.errstate(divide="ignore"):
        # a label an annotator never used has probability 0 without
        # smoothing; A never reads those entries
        log_table = np.log(confusion.transpose(0, 2, 1).reshape(W * K, K))
    log_joint = np.log(np.maximum(prior, EPS)) + A @ log_table
    return posterior_from_log_joint(log_joint)


def full_confusion(A, posterior, used: np.ndarray, alpha: float) -> np.ndarray:
    """Dawid–Skene's M-step: each annotator's confusion matrix.

    ``used[w, k]``: whether annotator w ever gave label k. Returns
    ``e[w, z, k] = (C_wkz + α) / Σ_k' (C_wk'z + α)`` with the expected
    counts of used labels floored at ``EPS``.
    """
    W, K = used.shape
    counts = (A.T @ posterior).reshape(W, K, K)  # [w, k, z]
    counts = np.where(used[:, :, None], np.maximum(counts, EPS), 0.0) + alpha
    counts /= counts.sum(axis=1, keepdims=True)
    return counts.transpose(0, 2, 1)  # [w, z, k]


def one_coin_skill(data, posterior, alpha: float) -> np.ndarray:
    """One-coin M-step: each annotator's accuracy.

    ``s_w = (Σ_{a ∈ w} q_{i_a}(y_a) + Kα) / (n_w + K²α)``: the expected share
    of correct labels; ``α`` is the pseudo-count of every cell of the
    confusion matrix (as in :func:`full_confusion`), so the one-coin
    constraint gets ``Kα`` correct and ``K(K−1)α`` wrong pseudo-labels.
    """
    K = data.n_classes
    correct = posterior[data.item, data.label]
    n = np.bincount(data.annotator, minlength=data.n_annotators)
    total = np.bincount(data.annotator, weights=correct, minlength=data.n_annotators)
    return (total + K * alpha) / (n + K * K * alpha)


def one_coin_confusion(skill: np.ndarray, n_classes: int) -> np.ndarray:
    """``e[w, z, k] = s_w`` if ``k = z`` else ``(1 − s_w)/(K − 1)``, clipped."""
    K = n_classes
    s = np.asarray(skill, dtype=np.float64)[:, None, None]
    eye = np.eye(K, dtype=bool)[None]
    confusion = np.where(eye, s, (1.0 - s) / (K - 1))
    return np.clip(confusion, EPS, 1.0 - EPS)
