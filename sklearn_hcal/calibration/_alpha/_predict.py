"""What α-calibration predicts from ``Dir(α0(x)·f(x))`` (Mimori et al. 2021).

The concentration, the Dirichlet parameters, the disagreement probability
(eq. 19/71, eq. 73 for ensembles), the posterior after new labels (eq. 18–19,
79) and draws of ζ. :class:`_DirichletPredictionsMixin` computes
``(F, α0)`` (with a leading member axis for ensembles) from the fitted
concentration model (``feature_mean_``, ``feature_scale_``, ``coefs_``,
``intercepts_``) and the estimator's ``_predict_outputs(X) -> (F, G)``.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import softmax
from sklearn.utils import check_random_state

from ..._frontend import check_new_labels
from ...utils._optional import import_optional
from ._features import apply_standardization, as_feature_array
from ._solvers import predict_log_alpha0

__all__ = ["_DirichletPredictionsMixin"]


class _DirichletPredictionsMixin:
    """Predictions of a fitted Dirichlet ``Dir(α0(x)·f(x))``."""

    def _concentration(self, X):
        """``(F, α0)`` of ``X``; with a leading member axis for ensembles."""
        F, G = self._predict_outputs(X)
        G = as_feature_array(G)  # float32 stays: centring below copies it
        if not np.all(np.isfinite(G)):
            raise ValueError("The features g(X) contain NaN or infinity.")
        if G.shape[-1] != self.feature_mean_.shape[0]:
            raise ValueError(
                f"The features g(X) have {G.shape[-1]} columns but the calibrator "
                f"was fitted with {self.feature_mean_.shape[0]}."
            )
        H = apply_standardization(G, self.feature_mean_, self.feature_scale_)
        log_a0 = predict_log_alpha0(
            H.reshape(-1, H.shape[-1]), self.coefs_, self.intercepts_
        ).reshape(H.shape[:-1])
        return F, np.exp(log_a0)

    def predict_concentration(self, X):
        """The concentration α0(x).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the wrapped estimator, or logits when ``estimator=None``.

        Returns
        -------
        alpha0 : ndarray of shape (n_samples,), or (n_members, n_samples) when
            the estimator is an ensemble.
        """
        return self._concentration(X)[1]

    def predict_disagreement(self, X):
        r"""Probability that two annotators disagree (eq. 19/71; eq. 73).

        :math:`\varphi = \frac{\alpha_0}{\alpha_0 + 1}(1 - \sum_k f_k^2)`,
        averaged over members for an ensemble.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the wrapped estimator, or logits when ``estimator=None``.

        Returns
        -------
        phi : ndarray of shape (n_samples,)
        """
        F, a0 = self._concentration(X)
        phi = a0 / (a0 + 1.0) * (1.0 - np.sum(F**2, axis=-1))
        return phi.mean(axis=0) if phi.ndim == 2 else phi

    def predict_posterior(self, X, Y_new):
        r"""Posterior class probabilities after observing new labels.

        The conjugate update of Mimori et al.'s eq. 18–19/79, generalised to
        several new labels: :math:`E[\zeta|x, y] = (\alpha_0 f + y) /
        (\alpha_0 + n_{new})`. Items with no new label (a zero row) keep ``f``.
        For an ensemble the prior is the mixture ``(1/S) Σ_s Dir(α0^(s)f^(s))``
        and the posterior mean is the mixture of the member posteriors weighted
        by their Dirichlet-multinomial evidence.

        Parameters
        ----------
        X : array-like
        Y_new : array-like of shape (n_samples, n_classes) or (n_samples,)
            New label counts (zeros allowed) or one new label per item.

        Returns
        -------
        posterior : ndarray of shape (n_samples, n_classes)
        """
        F, a0 = self._concentration(X)
        Yn = check_new_labels(Y_new, F.shape[-2], self.classes_)
        alpha = a0[..., None] * F
        post = (alpha + Yn) / (a0[..., None] + Yn.sum(axis=1)[:, None])
        if F.ndim == 2:
            return post
        from .._dirichlet import dirichlet_multinomial_log_likelihood

        torch = import_optional("torch")
        ll = dirichlet_multinomial_log_likelihood(
            torch.as_tensor(alpha),
            torch.as_tensor(np.ascontiguousarray(np.broadcast_to(Yn, alpha.shape))),
        ).numpy()
        w = softmax(ll, axis=0)
        return np.einsum("sn,snk->nk", w, post)

    def sample(self, X, n_draws=1, random_state=None):
        """Draws of ζ from ``Dir(α0(x)·f(x))`` (or the ensemble mixture).

        Parameters
        ----------
        X : array-like
        n_draws : int, default=1
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        draws : ndarray of shape (n_draws, n_samples, n_classes)
        """
        if not isinstance(n_draws, numbers.Integral) or n_draws < 1:
            raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}.")
        rng = check_random_state(random_state)
        alpha = self.transform(X)
        if alpha.ndim == 3:
            member = rng.randint(alpha.shape[0], size=(n_draws, alpha.shape[1]))
            alpha = alpha[member, np.arange(alpha.shape[1])]
        else:
            alpha = np.broadcast_to(alpha, (n_draws,) + alpha.shape)
        g = rng.standard_gamma(np.clip(alpha, 1e-300, None))
        s = g.sum(axis=-1, keepdims=True)
        # Tiny concentrations can underflow every gamma draw: the limit of
        # Dir(α) as α -> 0 puts the mass on a vertex, chosen with prob. f.
        empty = s[..., 0] == 0
        if np.any(empty):
            p = alpha[empty] / alpha[empty].sum(axis=-1, keepdims=True)
            u = rng.random_sample(p.shape[0])[:, None]
            pick = (np.cumsum(p, axis=-1) < u).sum(axis=-1)
            g[empty] = 0.0
            g[empty, np.minimum(pick, p.shape[-1] - 1)] = 1.0
            s[empty] = 1.0
        return g / s
