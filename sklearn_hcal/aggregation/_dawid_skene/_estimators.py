"""Dawid–Skene (1979) and its one-coin form as scikit-learn estimators."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd

from ...utils._compat import Interval
from ...utils._docstrings import fill_doc
from .._base import BaseAggregator, with_pool
from .._em import (
    fitted_annotators,
    has_converged,
    incidence,
    vote_counts,
    warn_not_converged,
)
from ._steps import (
    e_step,
    full_confusion,
    one_coin_confusion,
    one_coin_skill,
)

__all__ = ["DawidSkene", "OneCoinDawidSkene"]


class _DawidSkeneEM(BaseAggregator):
    """The EM loop both Dawid–Skene models share.

    Iteration ``t``: the E-step computes the posteriors ``q_t`` under the
    parameters ``θ_{t−1}`` (and the log-likelihood ``ℓ(θ_{t−1})``), the
    M-step ``θ_t`` from ``q_t``; ``θ_0`` comes from the majority vote's
    shares, as in crowd-kit. ``posteriors_`` is ``q_T`` and the fitted
    parameters ``θ_T`` (crowd-kit's ``probas_`` and ``errors_``).
    """

    _parameter_constraints: dict = {
        **BaseAggregator._parameter_constraints,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    # One signature for both models (their parameters are the same); each
    # documents it in its own docstring.
    def __init__(
        self,
        *,
        max_iter: int = 100,
        tol: float | None = 1e-5,
        alpha: float = 0.0,
        classes=None,
        item="item",
        annotator="annotator",
        label="label",
    ):
        self.max_iter = max_iter
        self.tol = tol
        self.alpha = alpha
        self.classes = classes
        self.item = item
        self.annotator = annotator
        self.label = label

    def _m_step(self, data, A, posterior, used):
        """The annotator parameters from the posteriors."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _confusion(self, params, n_classes: int) -> np.ndarray:
        """``(n_annotators, K, K)`` confusion matrices of the parameters."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _store(self, data, params) -> None:
        """Set the fitted per-annotator attributes."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _fit(self, data) -> np.ndarray:
        K = data.n_classes
        A = incidence(data)
        used = (
            np.bincount(
                data.annotator * K + data.label, minlength=data.n_annotators * K
            ).reshape(data.n_annotators, K)
            > 0
        )
        posterior = vote_counts(data)
        posterior /= posterior.sum(axis=1, keepdims=True)
        prior = posterior.mean(axis=0)
        params = self._m_step(data, A, posterior, used)
        curve: list[float] = []
        self.converged_ = False
        for _ in range(self.max_iter):
            confusion = self._confusion(params, K)
            posterior, log_likelihood = e_step(A, prior, confusion)
            if self.alpha > 0:  # MAP-EM increases the log-posterior
                log_likelihood += self.alpha * np.log(confusion).sum()
            prior = posterior.mean(axis=0)
            params = self._m_step(data, A, posterior, used)
            curve.append(log_likelihood / len(data))
            if has_converged(curve, self.tol):
                self.converged_ = True
                break
        if self.tol is not None and not self.converged_:
            warn_not_converged(type(self).__name__, self.max_iter, curve)
        self.n_iter_ = len(curve)
        self.log_likelihood_curve_ = np.asarray(curve)
        self.class_prior_ = prior
        self._store(data, params)
        return posterior

    def _confusion_with_pool(self) -> np.ndarray:
        return with_pool(self.confusion_matrices_)

    def _transform(self, data, item_map, annotator_map) -> np.ndarray:
        n_fitted = len(self.annotators_)
        annotator = fitted_annotators(data, annotator_map, n_fitted)
        A = incidence(data, annotator=annotator, n_annotators=n_fitted + 1)
        posterior, _ = e_step(A, self.class_prior_, self._confusion_with_pool())
        return posterior

    def _annotator_proba(self, posterior, item_idx, annotator_idx) -> np.ndarray:
        confusion = self._confusion_with_pool()[annotator_idx]
        proba = np.einsum("nz,nzk->nk", posterior, confusion)
        return proba / proba.sum(axis=1, keepdims=True)


@fill_doc
class DawidSkene(_DawidSkeneEM):
    """Dawid–Skene: a full confusion matrix per annotator, fitted by EM.

    Each item ``i`` has a latent true class ``z_i ~ π``; annotator ``w``
    labels an item of class ``z`` with ``k`` with probability
    ``e_w(z, k)`` (row ``z`` of the annotator's confusion matrix),
    independently of the other annotators (Dawid & Skene 1979, §2). EM
    alternates the posterior of each item's class given its labels
    (E-step) and the maximum-likelihood (with ``alpha``: maximum a
    posteriori) confusion matrices and class prior given the posteriors
    (M-step), from the majority vote's shares, exactly as crowd-kit 1.4.2's
    ``DawidSkene``: with ``alpha=0`` and the same number of iterations the
    posteriors equal crowd-kit's to 1e-6.

    Parameters
    ----------
    max_iter : int, default=100
        The largest number of EM iterations.
    tol : float or None, default=1e-5
        Stop when the log-likelihood per annotation gains less than ``tol``
        in an iteration (it never decreases); a ``ConvergenceWarning`` is
        raised if ``max_iter`` comes first. None: always ``max_iter``
        iterations, silently.
    alpha : float, default=0.0
        Pseudo-count added to every cell of every confusion matrix before
        normalising its rows (a symmetric Dirichlet prior, ``alpha + 1``;
        additive smoothing). 0 is Dawid and Skene's maximum likelihood (as
        crowd-kit), where a label an annotator never gave has probability 0
        for that annotator; ``alpha > 0`` regularises the confusion matrices
        of annotators with few annotations, which improves their predicted
        labels (``predict_annotator_proba``) on held-out annotations.
    %(aggregation_table)s

    Attributes
    ----------
    %(aggregation_fitted)s
        Here the class proportions ``π`` of the last M-step.
    confusion_matrices_ : ndarray of shape (n_annotators, n_classes, n_classes)
        ``confusion_matrices_[w, z, k]``: the probability that annotator
        ``annotators_[w]`` labels an item of true class ``classes_[z]`` with
        ``classes_[k]`` (rows sum to 1). crowd-kit's ``errors_`` holds the
        same numbers, indexed (annotator, given label) × true label.
    n_iter_ : int
        The number of EM iterations run.
    converged_ : bool
        Whether the gain fell below ``tol``.
    log_likelihood_curve_ : ndarray of shape (`n_iter_`,)
        At each iteration's E-step (under the previous parameters), the
        log-likelihood of all the labels per annotation; with ``alpha > 0``
        plus the log-density of the confusion matrices' Dirichlet prior
        (``α Σ log e``, the log-posterior that MAP-EM increases).
        Non-decreasing.

    See Also
    --------
    OneCoinDawidSkene : one accuracy per annotator instead of a matrix.
    GLAD : an accuracy per annotator and a difficulty per item.

    Notes
    -----
    ``fit_transform`` returns the posteriors of the last E-step, as
    crowd-kit's ``probas_``; ``transform`` of the same table recomputes them
    under the final parameters: exactly the posteriors of one more EM
    iteration (those of ``max_iter=n_iter_ + 1, tol=None``). ``tol`` bounds
    the last gain of the log-likelihood per annotation, not the posteriors:
    in that step they can still move by orders of magnitude more than
    ``tol`` (by several hundredths on LeWiDi's MultiPICo and CSC files at
    the default ``tol=1e-5``). For posteriors consistent with the fitted
    ``confusion_matrices_`` use ``transform``; for a smaller gap, a smaller
    ``tol``.

    References
    ----------
    A. P. Dawid and A. M. Skene (1979). Maximum likelihood estimation of
    observer error-rates using the EM algorithm. *Journal of the Royal
    Statistical Society, Series C (Applied Statistics)* 28(1), 20–28.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.aggregation import DawidSkene
    >>> X = pd.DataFrame({
    ...     "item": [i for i in range(6) for _ in range(3)],
    ...     "annotator": ["a", "b", "c"] * 6,
    ...     "label": [0, 0, 1,  1, 1, 1,  0, 0, 0,  1, 1, 0,  0, 0, 1,  1, 1, 1]})
    >>> ds = DawidSkene(alpha=1.0).fit(X)
    >>> ds.predict(X).tolist()
    [0, 1, 0, 1, 0, 1]
    >>> ds.confusion_matrices_.shape  # annotators × true class × label given
    (3, 2, 2)
    >>> # c says 1 on two items in three of either class: (2 + α) / (3 + 2α)
    >>> pairs = pd.DataFrame({"item": [0, 99], "annotator": ["c", "c"]})
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     proba = ds.predict_annotator_proba(pairs)
    >>> proba.round(2)  # item 99 is unseen: the class prior, and a warning
    array([[0.4, 0.6],
           [0.4, 0.6]])
    >>> print(str(caught[0].message).split(", ")[0])
    DawidSkene: 1 of 2 rows have item values not seen in fit (e.g. 99)
    """

    def _m_step(self, data, A, posterior, used) -> np.ndarray:
        return full_confusion(A, posterior, used, self.alpha)

    def _confusion(self, params, n_classes: int) -> np.ndarray:
        return params

    def _store(self, data, params) -> None:
        self.confusion_matrices_ = params


@fill_doc
class OneCoinDawidSkene(_DawidSkeneEM):
    """One-coin Dawid–Skene: one accuracy per annotator, fitted by EM.

    The Dawid–Skene model whose confusion matrices have one parameter each:
    annotator ``w`` gives the true class with probability ``s_w`` and each
    other class with probability ``(1 − s_w)/(K − 1)`` (Zhang et al. 2016,
    §2). The EM is Dawid–Skene's with the M-step replaced by the expected
    share of each annotator's correct labels, exactly as crowd-kit 1.4.2's
    ``OneCoinDawidSkene`` (with ``alpha=0`` and the same number of
    iterations the posteriors equal crowd-kit's to 1e-6).

    Parameters
    ----------
    max_iter : int, default=100
        The largest number of EM iterations.
    tol : float or None, default=1e-5
        Stop when the log-likelihood per annotation gains less than ``tol``
        in an iteration; a ``ConvergenceWarning`` is raised if ``max_iter``
        comes first. None: always ``max_iter`` iterations, silently.
    alpha : float, default=0.0
        The pseudo-count of every cell of the confusion matrix, as in
        :class:`DawidSkene`: ``s_w = (expected correct + Kα) / (n_w + K²α)``.
    %(aggregation_table)s

    Attributes
    ----------
    %(aggregation_fitted)s
    skills_ : Series of shape (n_annotators,)
        Each annotator's accuracy ``s_w`` (crowd-kit's ``skills_``).
    confusion_matrices_ : ndarray of shape (n_annotators, n_classes, n_classes)
        The one-coin matrices of the skills, clipped to ``[1e-10, 1 − 1e-10]``
        as crowd-kit's ``errors_``; ``[w, z, k]`` as in
        :class:`DawidSkene`.
    n_iter_ : int
        The number of EM iterations run.
    converged_ : bool
        Whether the gain fell below ``tol``.
    log_likelihood_curve_ : ndarray of shape (`n_iter_`,)
        The log-likelihood per annotation at each iteration's E-step (with
        ``alpha > 0``, the log-posterior, as in :class:`DawidSkene`);
        non-decreasing.

    See Also
    --------
    DawidSkene : a full confusion matrix per annotator.

    References
    ----------
    Y. Zhang, X. Chen, D. Zhou and M. I. Jordan (2016). Spectral methods
    meet EM: a provably optimal algorithm for crowdsourcing. *Journal of
    Machine Learning Research* 17(102), 1–44.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.aggregation import OneCoinDawidSkene
    >>> X = pd.DataFrame({
    ...     "item": [i for i in range(4) for _ in range(3)],
    ...     "annotator": ["a", "b", "c"] * 4,
    ...     "label": ["x", "x", "y",  "y", "y", "y",  "x", "x", "x",  "y", "y", "x"]})
    >>> model = OneCoinDawidSkene(alpha=0.5).fit(X)
    >>> model.predict(X).tolist()
    ['x', 'y', 'x', 'y']
    >>> bool(model.skills_["c"] < model.skills_["a"] == model.skills_["b"])
    True
    """

    def _m_step(self, data, A, posterior, used) -> np.ndarray:
        return one_coin_skill(data, posterior, self.alpha)

    def _confusion(self, params, n_classes: int) -> np.ndarray:
        return one_coin_confusion(params, n_classes)

    def _store(self, data, params) -> None:
        self.skills_ = pd.Series(params, index=data.annotators, name="skill")
        self.confusion_matrices_ = one_coin_confusion(params, data.n_classes)
