"""Synthetic label histograms with a known truth."""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import softmax
from sklearn.utils import check_random_state

from ..utils._compat import Interval, validate_params


def _dirichlet_rows(rng, alpha):
    """One Dirichlet draw per row of ``alpha`` (numpy's sampler takes one vector)."""
    g = rng.standard_gamma(alpha)
    s = g.sum(axis=1, keepdims=True)
    # With tiny concentrations every gamma draw can underflow to 0. Draw such a
    # row from the limit of Dir(alpha) as sum(alpha) -> 0: the vertex e_k with
    # probability alpha_k / sum(alpha), so that E[Q] = alpha / sum(alpha) still
    # holds (always taking the largest alpha, as before, biased E[Q] towards
    # the top class: [0.74, 0.16, 0.11] for a mean of [0.5, 0.3, 0.2]).
    empty = s[:, 0] == 0
    if np.any(empty):
        mean = alpha[empty] / alpha[empty].sum(axis=1, keepdims=True)
        u = rng.random_sample((int(empty.sum()), 1))
        vertex = np.minimum((np.cumsum(mean, axis=1) < u).sum(axis=1), g.shape[1] - 1)
        g[empty] = 0.0
        g[empty, vertex] = 1.0
        s[empty] = 1.0
    return g / s


def _multinomial_rows(rng, n, Q):
    """``Y_i ~ Multinomial(n_i, Q_i)`` for every row at once.

    ``RandomState.multinomial`` takes one probability vector, so the draw is
    done class by class with conditional binomials, vectorised over items.
    """
    n_samples, n_classes = Q.shape
    Y = np.zeros((n_samples, n_classes), dtype=np.int64)
    remaining_n = n.astype(np.int64).copy()
    remaining_p = np.ones(n_samples)
    for k in range(n_classes - 1):
        p = np.clip(Q[:, k] / np.maximum(remaining_p, 1e-300), 0.0, 1.0)
        Y[:, k] = rng.binomial(remaining_n, p)
        remaining_n -= Y[:, k]
        remaining_p -= Q[:, k]
    Y[:, -1] = remaining_n
    return Y


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_classes": [Interval(numbers.Integral, 2, None, closed="left")],
        "n_annotations": [
            Interval(numbers.Integral, 1, None, closed="left"),
            "array-like",
        ],
        "n_features": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "temperature": [Interval(numbers.Real, 0, None, closed="neither")],
        "concentration": [
            Interval(numbers.Real, 0, None, closed="neither"),
            "array-like",
            None,
        ],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_label_histograms(
    n_samples: int = 1000,
    n_classes: int = 3,
    n_annotations=5,
    *,
    n_features: int | None = None,
    scale: float = 2.0,
    temperature: float = 1.0,
    concentration=None,
    random_state=None,
):
    """Generate items, label histograms and the true class distributions.

    Each item ``i`` has latent logits ``z_i``; its true label distribution is
    ``Q_i = softmax(z_i / temperature)`` or, when ``concentration`` is given, a
    draw ``Q_i ~ Dir(concentration_i * softmax(z_i / temperature))`` (the
    generative model behind α-calibration, Mimori et al. 2021, §5). Each of the
    ``n_i`` annotators then draws one label from ``Q_i``, so
    ``Y_i ~ Multinomial(n_i, Q_i)``.

    Because ``Q`` is returned, estimators and metrics can be checked against
    the truth (e.g. unbiasedness of Mimori et al.'s estimators).

    Parameters
    ----------
    n_samples : int, default=1000
        Number of items.
    n_classes : int, default=3
        Number of classes.
    n_annotations : int or array-like of shape (n_samples,), default=5
        Annotations per item; an array gives each item its own number (each
        at least 1).
    n_features : int, default=None
        If None, ``X`` *is* the latent logits ``z`` (shape
        ``(n_samples, n_classes)``), so a temperature-scaled model of ``X`` is
        well specified. If an int, ``X`` has ``n_features`` standard normal
        columns and ``z = X @ W`` for a random ``W`` fixed by ``random_state``.
    scale : float, default=2.0
        Standard deviation of the latent logits.
    temperature : float, default=1.0
        Temperature of the true distribution: ``Q = softmax(z / temperature)``.
    concentration : float or array-like of shape (n_samples,), default=None
        Dirichlet concentration ``α0`` around ``softmax(z / temperature)``; None
        means no Dirichlet noise.
    random_state : int, RandomState instance or None, default=None
        Seed for reproducible output.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features or n_classes)
        Features (the logits when ``n_features`` is None).
    Y : ndarray of shape (n_samples, n_classes), dtype int64
        Label histograms (counts).
    Q : ndarray of shape (n_samples, n_classes)
        True class distributions.

    Examples
    --------
    >>> from sklearn_hcal.datasets import make_label_histograms
    >>> X, Y, Q = make_label_histograms(4, n_classes=3, n_annotations=5,
    ...                                 random_state=0)
    >>> X.shape, Y.shape, Q.shape
    ((4, 3), (4, 3), (4, 3))
    >>> Y.sum(axis=1)
    array([5, 5, 5, 5])
    """
    rng = check_random_state(random_state)
    n_ann = np.asarray(n_annotations)
    if n_ann.ndim == 0:
        n_ann = np.full(n_samples, int(n_ann))
    else:
        if n_ann.shape != (n_samples,):
            raise ValueError(
                f"n_annotations must be an int or an array of shape ({n_samples},), "
                f"got shape {n_ann.shape}."
            )
        if n_ann.dtype.kind not in "iu" and not np.all(np.mod(n_ann, 1) == 0):
            raise ValueError("n_annotations must hold integers.")
        n_ann = n_ann.astype(np.int64)
        if np.any(n_ann < 1):
            raise ValueError("n_annotations must be at least 1 for every item.")

    if n_features is None:
        X = scale * rng.standard_normal((n_samples, n_classes))
        logits = X
    else:
        X = rng.standard_normal((n_samples, n_features))
        W = rng.standard_normal((n_features, n_classes)) * scale / np.sqrt(n_features)
        logits = X @ W
    Q = softmax(logits / temperature, axis=1)
    if concentration is not None:
        conc = np.asarray(concentration, dtype=np.float64)
        if conc.ndim == 0:
            conc = np.full(n_samples, float(conc))
        if (
            conc.shape != (n_samples,)
            or np.any(~(conc > 0))
            or not np.all(np.isfinite(conc))
        ):
            raise ValueError(
                "concentration must be a positive float or an array of shape "
                f"({n_samples},) of positive finite values."
            )
        Q = _dirichlet_rows(rng, conc[:, None] * Q)
    Y = _multinomial_rows(rng, n_ann, Q)
    return X, Y, Q
