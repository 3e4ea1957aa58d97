"""The building blocks every aggregator's EM shares, on integer codes.

Nothing here loops over items or annotations in Python, and no pandas
object enters an iteration (developer guide §aggregation): sums over an
item's annotations are ``np.bincount`` or one product with the sparse
item × (annotator, label) incidence matrix, built once per fit.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from ..utils._warnings import warn_user
from ._input import Annotations

__all__ = [
    "EPS",
    "fitted_annotators",
    "has_converged",
    "incidence",
    "item_class_sums",
    "one_coin_proba",
    "posterior_from_log_joint",
    "vote_counts",
    "warn_not_converged",
]

#: crowd-kit's floor on probabilities (its ``_EPS``): confusion entries and
#: class priors are clipped to it, so that the same iterations give the same
#: posteriors.
EPS = 1e-10


def incidence(data: Annotations, annotator=None, n_annotators=None):
    """Sparse ``(n_items, n_annotators · n_classes)`` matrix of the annotations.

    Entry ``(i, w·K + k)`` is 1 when annotator ``w`` gave item ``i`` label
    ``k``. ``A @ T`` sums, per item, rows of a table ``T`` indexed by
    (annotator, label); ``A.T @ P`` sums, per (annotator, label), rows of a
    table ``P`` indexed by item. ``annotator`` (one code per row, with
    ``n_annotators``) replaces the table's own annotator codes, e.g. by
    fitted positions with a last "pool" row for unseen annotators.
    """
    if annotator is None:
        annotator, n_annotators = data.annotator, data.n_annotators
    K = data.n_classes
    columns = annotator * K + data.label
    return sparse.csr_matrix(
        (np.ones(len(data.item)), (data.item, columns)),
        shape=(data.n_items, n_annotators * K),
    )


def fitted_annotators(data: Annotations, annotator_map, n_fitted: int):
    """Each row's fitted annotator position; unseen annotators get ``n_fitted``.

    With parameter tables extended by a pool row (``with_pool``), the
    returned codes index them directly.
    """
    return np.where(annotator_map < 0, n_fitted, annotator_map)[data.annotator]


def item_class_sums(data: Annotations, base, bonus) -> np.ndarray:
    """``S[i, z] = Σ_a base_a + Σ_{a : label_a = z} bonus_a`` over item i's rows.

    The log-likelihood of a one-coin-like model (GLAD, MACE): each
    annotation contributes ``base_a`` to every class and ``bonus_a`` more
    to the class it names.
    """
    K = data.n_classes
    per_item = np.bincount(data.item, weights=base, minlength=data.n_items)
    per_label = np.bincount(
        data.item * K + data.label, weights=bonus, minlength=data.n_items * K
    ).reshape(data.n_items, K)
    return per_label + per_item[:, None]


def posterior_from_log_joint(log_joint: np.ndarray) -> tuple[np.ndarray, float]:
    """Row-normalised ``exp(log_joint)`` and the total log-likelihood.

    ``log_joint[i, z] = log p(z) + log p(labels of i | z)``; the posterior is
    its softmax over ``z`` and ``Σ_i logsumexp_z`` is the log-likelihood of
    all the labels (the quantity EM increases).
    """
    norm = logsumexp(log_joint, axis=1)
    posterior = np.exp(log_joint - norm[:, None])
    return posterior, float(norm.sum())


def vote_counts(data: Annotations, weights=None) -> np.ndarray:
    """``(n_items, n_classes)`` float sums of (weighted) votes."""
    K = data.n_classes
    counts = np.bincount(
        data.item * K + data.label, weights=weights, minlength=data.n_items * K
    )
    return counts.astype(np.float64, copy=False).reshape(data.n_items, K)


def one_coin_proba(posterior: np.ndarray, skill: np.ndarray) -> np.ndarray:
    """Label distributions of one-coin annotators.

    An annotator of accuracy ``s`` gives the true class with probability
    ``s`` and each other class with ``(1 − s)/(K − 1)``:
    ``P[n, k] = q_nk s_n + (1 − q_nk)(1 − s_n)/(K − 1)`` for the truth's
    distribution ``q_n``.
    """
    K = posterior.shape[1]
    s = np.asarray(skill, dtype=np.float64)[:, None]
    return posterior * s + (1.0 - posterior) * (1.0 - s) / (K - 1)


def has_converged(curve: list, tol) -> bool:
    """Whether the last iteration gained less than ``tol`` (never with None)."""
    return tol is not None and len(curve) > 1 and curve[-1] - curve[-2] < tol


def warn_not_converged(owner: str, max_iter: int, curve: list) -> None:
    """The ``ConvergenceWarning`` of an EM that ran out of iterations."""
    gain = curve[-1] - curve[-2] if len(curve) > 1 else float("nan")
    warn_user(
        f"{owner} did not converge in max_iter={max_iter} iterations (last gain "
        f"of the objective per annotation {gain:.3g}); increase max_iter or tol.",
        ConvergenceWarning,
    )
