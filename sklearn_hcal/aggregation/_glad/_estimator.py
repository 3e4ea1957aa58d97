"""GLAD (Whitehill et al. 2009): annotator abilities and item difficulties."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit

from ...utils._compat import Interval
from ...utils._docstrings import fill_doc
from .._base import BaseAggregator, with_pool
from .._em import has_converged, one_coin_proba, warn_not_converged
from .._input import check_annotations_per_annotator
from ._objective import LOG_SQRT_2PI, e_step, negative_q

__all__ = ["GLAD"]

#: The priors' means, as in the paper and crowd-kit: ``α ~ N(1, 1)`` and
#: ``log β ~ N(1, 1)``.
PRIOR_ABILITY = 1.0
PRIOR_LOG_BETA = 1.0


@fill_doc
class GLAD(BaseAggregator):
    """GLAD: a one-coin annotator whose accuracy depends on the item.

    Annotator ``w`` labels item ``i`` correctly with probability
    ``σ(α_w β_i)`` and gives each other class with probability
    ``(1 − σ(α_w β_i))/(K − 1)`` (Whitehill et al. 2009, eq. 1): ``α_w`` is
    the annotator's ability (negative: adversarial), ``β_i > 0`` the item's
    inverse difficulty (``β → 0``: a coin flip for everybody). True classes
    are uniform a priori; ``α ~ N(1, 1)`` and ``log β ~ N(1, 1)``. EM
    alternates the items' posteriors (E-step) and a conjugate-gradient
    ascent of the expected log-posterior in ``(α, log β)`` (M-step, at most
    ``m_step_max_iter`` steps), as crowd-kit 1.4.2's ``GLAD`` does, with
    its objective and gradient vectorised.

    Parameters
    ----------
    max_iter : int, default=100
        The largest number of EM iterations.
    tol : float or None, default=1e-5
        Stop when the log-posterior per annotation gains less than ``tol`` in
        an iteration; a ``ConvergenceWarning`` is raised if ``max_iter``
        comes first. None: always ``max_iter`` iterations, silently.
    m_step_max_iter : int, default=25
        The most conjugate-gradient iterations per M-step (crowd-kit's
        default). More gives a better optimum of each M-step.
    m_step_tol : float, default=1e-2
        The conjugate gradient's tolerance on the gradient's norm (scipy's
        ``gtol``; crowd-kit's default).
    %(aggregation_table)s

    Attributes
    ----------
    %(aggregation_fitted)s
        Here uniform, GLAD's fixed prior.
    abilities_ : Series of shape (n_annotators,)
        Each annotator's ability ``α_w``; an unseen annotator gets their
        mean.
    inverse_difficulties_ : Series of shape (n_items,)
        Each item's ``β_i = exp(b_i)`` (crowd-kit's ``betas_`` holds
        ``b_i``); an unseen item gets ``exp`` of the mean ``b``.
    n_iter_ : int
        The number of EM iterations run.
    converged_ : bool
        Whether the gain fell below ``tol``.
    log_likelihood_curve_ : ndarray of shape (`n_iter_`,)
        The log-posterior per annotation (log-likelihood of the labels plus
        the priors' log-densities of ``α`` and ``log β``) under the
        parameters of each E-step: non-decreasing (generalised EM).

    Notes
    -----
    Every annotator needs at least two annotations: with one, the
    annotator's ability rests on a single label and the prior, and a
    ``ValueError`` names that annotator and row (drop them, or aggregate
    without them). ``fit_transform`` returns the last E-step's posteriors
    (crowd-kit's ``probas_``); ``transform`` recomputes them under the final
    parameters, one EM step later. Differences from crowd-kit: the exact
    ``log(1 + exp(x))`` (crowd-kit cuts it at ``|x| > 30``), the stopping
    rule (crowd-kit compares its M-step objective divided by ``K`` times the
    number of annotations), and class names rather than order of
    appearance for the columns.

    References
    ----------
    J. Whitehill, P. Ruvolo, T. Wu, J. Bergsma and J. Movellan (2009).
    Whose vote should count more: optimal integration of labels from
    labelers of unknown expertise. *Advances in Neural Information
    Processing Systems 22*, 2035–2043.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.aggregation import GLAD
    >>> X = pd.DataFrame({
    ...     "item": [i for i in range(6) for _ in range(3)],
    ...     "annotator": ["a", "b", "c"] * 6,
    ...     "label": [0, 0, 1,  1, 1, 1,  0, 0, 0,  1, 1, 0,  0, 0, 1,  1, 1, 1]})
    >>> glad = GLAD().fit(X)
    >>> glad.predict(X).tolist()
    [0, 1, 0, 1, 0, 1]
    >>> bool(glad.abilities_["c"] < glad.abilities_["a"])
    True
    """

    _parameter_constraints: dict = {
        **BaseAggregator._parameter_constraints,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "m_step_max_iter": [Interval(Integral, 1, None, closed="left")],
        "m_step_tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        *,
        max_iter: int = 100,
        tol: float | None = 1e-5,
        m_step_max_iter: int = 25,
        m_step_tol: float = 1e-2,
        classes=None,
        item="item",
        annotator="annotator",
        label="label",
    ):
        self.max_iter = max_iter
        self.tol = tol
        self.m_step_max_iter = m_step_max_iter
        self.m_step_tol = m_step_tol
        self.classes = classes
        self.item = item
        self.annotator = annotator
        self.label = label

    def _check_data(self, data) -> None:
        check_annotations_per_annotator(
            data, 2, annotator=self.annotator, owner=type(self).__name__
        )

    def _fit(self, data) -> np.ndarray:
        W = data.n_annotators
        x = np.concatenate(
            [np.full(W, PRIOR_ABILITY), np.full(data.n_items, PRIOR_LOG_BETA)]
        )
        curve: list[float] = []
        self.converged_ = False
        for _ in range(self.max_iter):
            posterior, log_likelihood = e_step(data, x[:W], x[W:])
            d_alpha, d_beta = x[:W] - PRIOR_ABILITY, x[W:] - PRIOR_LOG_BETA
            log_prior = -0.5 * (d_alpha @ d_alpha + d_beta @ d_beta)
            log_prior -= LOG_SQRT_2PI * len(x)
            curve.append((log_likelihood + log_prior) / len(data))
            if has_converged(curve, self.tol):
                self.converged_ = True
                break
            correct = posterior[data.item, data.label]
            x = minimize(
                negative_q,
                x,
                args=(data, correct, PRIOR_ABILITY, PRIOR_LOG_BETA),
                jac=True,
                method="CG",
                tol=self.m_step_tol,
                options={"maxiter": self.m_step_max_iter},
            ).x
        if self.tol is not None and not self.converged_:
            warn_not_converged("GLAD", self.max_iter, curve)
        self.n_iter_ = len(curve)
        self.log_likelihood_curve_ = np.asarray(curve)
        self.abilities_ = pd.Series(x[:W], index=data.annotators, name="ability")
        self.inverse_difficulties_ = pd.Series(
            np.exp(x[W:]), index=data.items, name="inverse_difficulty"
        )
        self.class_prior_ = np.full(data.n_classes, 1.0 / data.n_classes)
        return posterior

    def _pools(self):
        ability = with_pool(self.abilities_.to_numpy())
        log_beta = with_pool(np.log(self.inverse_difficulties_.to_numpy()))
        return ability, log_beta

    def _transform(self, data, item_map, annotator_map) -> np.ndarray:
        ability, log_beta = self._pools()
        posterior, _ = e_step(data, ability[annotator_map], log_beta[item_map])
        return posterior

    def _annotator_proba(self, posterior, item_idx, annotator_idx) -> np.ndarray:
        ability, log_beta = self._pools()
        right = expit(ability[annotator_idx] * np.exp(log_beta[item_idx]))
        return one_coin_proba(posterior, right)
