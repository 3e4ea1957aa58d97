"""MACE (Hovy et al. 2013): annotators who know the answer or spam."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from ...utils._compat import Interval, StrOptions
from ...utils._docstrings import fill_doc
from .._base import BaseAggregator, with_pool
from .._em import fitted_annotators, warn_not_converged
from ._steps import (
    e_step,
    expected_counts,
    m_step,
    posterior_means,
    variational_m_step,
)

__all__ = ["MACE"]

#: Each restart draws its starting weights uniformly from [1, 2.5) before
#: normalising them (crowd-kit's ``sps.uniform(1, 1 + default_noise)``).
_INIT_LOW, _INIT_HIGH = 1.0, 2.5


@fill_doc
class MACE(BaseAggregator):
    """MACE: each annotator either knows the answer or spams.

    Multi-Annotator Competence Estimation (Hovy et al. 2013, §2): the true
    class is uniform; annotator ``w`` knows it with probability ``θ_w`` (the
    competence) and then gives it, and otherwise spams, drawing the label
    from their own strategy ``ξ_w`` whatever the item. So ``p(label k |
    class z) = θ_w 1[k = z] + (1 − θ_w) ξ_wk``. The likelihood is maximised
    by EM (``method="em"``, the counts smoothed) or fitted by variational
    Bayes with a ``Beta(alpha, beta)`` prior on spamming and a symmetric
    ``Dirichlet(strategy_prior)`` prior on ``ξ`` (``method="vb"``, MACE's
    default), from ``n_restarts`` random starts; the restart with the
    highest final log-likelihood is kept.

    Parameters
    ----------
    method : {"vb", "em"}, default="vb"
        Variational Bayes or EM (MACE's ``--em``).
    n_restarts : int, default=10
        Random starts; each runs ``max_iter`` iterations (fewer with
        ``tol``).
    max_iter : int, default=50
        The iterations of each restart.
    tol : float or None, default=None
        Stop a restart when its log-likelihood per annotation changes by
        less than ``tol`` (variational Bayes need not increase it). None:
        always ``max_iter`` iterations, as MACE and crowd-kit.
    smoothing : float or None, default=None
        EM's pseudo-count added to the expected counts; None: ``0.01 / K``
        (MACE's and crowd-kit's). Ignored by ``"vb"``.
    alpha, beta : float, default=0.5
        ``"vb"``: the Beta prior's pseudo-counts of spamming and of knowing.
    strategy_prior : float, default=10.0
        ``"vb"``: the symmetric Dirichlet prior's pseudo-count of each label
        in the spamming strategies.
    random_state : int, RandomState instance or None, default=None
        Draws the restarts' starting points.
    %(aggregation_table)s

    Attributes
    ----------
    %(aggregation_fitted)s
        Here uniform, MACE's fixed prior.
    spamming_ : Series of shape (n_annotators,)
        Each annotator's probability of spamming, ``1 − θ_w`` (``"vb"``: its
        posterior mean).
    strategies_ : DataFrame of shape (n_annotators, n_classes)
        Each annotator's spamming distribution over the labels ``ξ_w``
        (``"vb"``: its posterior mean).
    n_iter_ : int
        The iterations of the kept restart.
    converged_ : bool
        Whether the kept restart stopped on ``tol``.
    log_likelihood_curve_ : ndarray of shape (`n_iter_`,)
        The kept restart's log-likelihood per annotation after each
        iteration (non-decreasing up to the smoothing's prior with
        ``"em"``).

    Notes
    -----
    The same model, objective and updates as crowd-kit 1.4.2's ``MACE``
    (tested update by update); the differences:

    * the E-step runs in log space; crowd-kit multiplies probabilities,
      which underflows for items with many annotations, and adds ``1e-8``
      inside the log of each item's likelihood;
    * each restart draws a new start; crowd-kit draws every restart with
      the same seed, so its restarts are identical;
    * crowd-kit pairs its strategies with annotators and labels by sorted
      order on one side and order of first appearance on the other, which
      mixes them up unless both orders agree; here everything is coded in
      sorted order;
    * annotators unseen in ``fit`` get the mean parameters.

    References
    ----------
    D. Hovy, T. Berg-Kirkpatrick, A. Vaswani and E. Hovy (2013). Learning
    whom to trust with MACE. *Proceedings of NAACL-HLT 2013*, 1120–1130.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.aggregation import MACE
    >>> X = pd.DataFrame({
    ...     "item": [i for i in range(6) for _ in range(3)],
    ...     "annotator": ["a", "b", "spammer"] * 6,
    ...     "label": [0, 0, 1,  1, 1, 1,  0, 0, 1,  1, 1, 1,  0, 0, 1,  1, 1, 1]})
    >>> mace = MACE(random_state=0).fit(X)
    >>> mace.predict(X).tolist()
    [0, 1, 0, 1, 0, 1]
    >>> bool(mace.spamming_["spammer"] > mace.spamming_["a"])
    True
    """

    _parameter_constraints: dict = {
        **BaseAggregator._parameter_constraints,
        "method": [StrOptions({"vb", "em"})],
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "smoothing": [Interval(Real, 0, None, closed="left"), None],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "strategy_prior": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        method: str = "vb",
        n_restarts: int = 10,
        max_iter: int = 50,
        tol: float | None = None,
        smoothing: float | None = None,
        alpha: float = 0.5,
        beta: float = 0.5,
        strategy_prior: float = 10.0,
        random_state=None,
        classes=None,
        item="item",
        annotator="annotator",
        label="label",
    ):
        self.method = method
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.smoothing = smoothing
        self.alpha = alpha
        self.beta = beta
        self.strategy_prior = strategy_prior
        self.random_state = random_state
        self.classes = classes
        self.item = item
        self.annotator = annotator
        self.label = label

    def _m(self, counts, n_classes: int):
        if self.method == "em":
            smoothing = 0.01 / n_classes if self.smoothing is None else self.smoothing
            return m_step(*counts, smoothing)
        return variational_m_step(*counts, (self.alpha, self.beta), self.strategy_prior)

    def _restart(self, data, rng):
        """One run from a random start: ``(ll, curve, weights, counts, posterior)``."""
        W, K = data.n_annotators, data.n_classes
        start = rng.uniform(_INIT_LOW, _INIT_HIGH, size=(W, 2))
        start /= start.sum(axis=1, keepdims=True)
        strategy = rng.uniform(_INIT_LOW, _INIT_HIGH, size=(W, K))
        strategy /= strategy.sum(axis=1, keepdims=True)
        weights = (start[:, 1], start[:, 0], strategy)
        posterior, ll = e_step(data, *weights)
        curve: list[float] = []
        converged = False
        for _ in range(self.max_iter):
            counts = expected_counts(data, posterior, *weights)
            weights = self._m(counts, K)
            posterior, ll = e_step(data, *weights)
            curve.append(ll / len(data))
            # variational Bayes need not increase the likelihood: |change|
            if self.tol is not None and len(curve) > 1:
                if abs(curve[-1] - curve[-2]) < self.tol:
                    converged = True
                    break
        return ll, curve, converged, weights, counts, posterior

    def _fit(self, data) -> np.ndarray:
        rng = check_random_state(self.random_state)
        best = None
        for _ in range(self.n_restarts):
            run = self._restart(data, rng)
            if best is None or run[0] > best[0]:
                best = run
        _, curve, converged, weights, counts, posterior = best
        if self.tol is not None and not converged:
            warn_not_converged("MACE's best restart", self.max_iter, curve)
        self.n_iter_ = len(curve)
        self.converged_ = converged
        self.log_likelihood_curve_ = np.asarray(curve)
        if self.method == "em":
            know, strategy = weights[0], weights[2]
        else:
            know, strategy = posterior_means(
                *counts, (self.alpha, self.beta), self.strategy_prior
            )
        self.spamming_ = pd.Series(1.0 - know, index=data.annotators, name="spamming")
        self.strategies_ = pd.DataFrame(
            strategy,
            index=data.annotators,
            columns=pd.Index(data.classes, name=self.label),
        )
        self._e_step_weights = weights
        self.class_prior_ = np.full(data.n_classes, 1.0 / data.n_classes)
        return posterior

    def _transform(self, data, item_map, annotator_map) -> np.ndarray:
        codes = fitted_annotators(data, annotator_map, len(self.annotators_))
        weights = [with_pool(w) for w in self._e_step_weights]
        return e_step(data, *weights, annotator=codes)[0]

    def _annotator_proba(self, posterior, item_idx, annotator_idx) -> np.ndarray:
        know = with_pool(1.0 - self.spamming_.to_numpy())[annotator_idx, None]
        strategy = with_pool(self.strategies_.to_numpy())[annotator_idx]
        return know * posterior + (1.0 - know) * strategy
