"""Conformal prediction sets calibrated on label histograms.

Monte Carlo conformal prediction (Stutz et al. 2023, "Conformal prediction
under ambiguous ground truth", TMLR) around any fitted classifier; the
p-values are those of :mod:`._quantiles`, the scores those of :mod:`._scores`.
Targets, classes by name, ``counts=`` routing, ``estimator=None`` input and
``FrozenEstimator`` come from the estimators' front end
(:class:`sklearn_hcal._frontend.ClassifierOutputMixin`, developer guide
§estimators), as for the calibrators.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state

from .._frontend import (
    ClassifierOutputMixin,
    get_probabilities,
    probabilities_from_input,
)
from ..utils._compat import Interval, StrOptions, fit_context
from ._quantiles import (
    alpha_of_level,
    ecdf_corrected_pvalues,
    mc_label_weights,
    pvalues_above_alpha,
    weighted_pvalues,
)
from ._scores import CONFORMITY_SCORES, conformity_scores

__all__ = ["HumanConformalClassifier"]


def _generator(random_state) -> np.random.Generator:
    """A numpy Generator (vectorised multinomial draws) from ``random_state``."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, Integral):
        return np.random.default_rng(random_state)
    # a RandomState instance: draw the seed from it, so it advances as usual
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    return np.random.default_rng(seed)


class HumanConformalClassifier(ClassifierOutputMixin, ClassifierMixin, BaseEstimator):
    """Conformal prediction sets calibrated on label histograms.

    Split conformal prediction around a fitted classifier, calibrated
    against the human label distribution: Monte Carlo conformal prediction
    (Stutz et al. 2023, §3) samples ``m = n_labels`` labels from each
    calibration item's histogram and calibrates on all of them, so that the
    sets cover a label drawn from the *human distribution* of a new item,
    not only its majority label. Standard calibration on the majority label
    is available for comparison (``calibration="majority"``); it covers the
    majority label but under-covers the human distribution when annotators
    disagree (the paper's finding).

    With weights ``w_ik`` per calibration item and class (see
    ``calibration``) and non-conformity scores ``S_ik``, the p-value of
    class ``k`` for a new ``x`` is
    ``p_k(x) = (1 + Σ_i Σ_k' w_ik' 1[S_ik' ≥ s(x, k)]) / (n + 1)`` and the
    set is ``{k : p_k(x) > α}`` with ``α = 1 − confidence_level``.

    Guarantees, for the probability that a label drawn from a new item's
    human distribution lies in its set (items exchangeable):

    * ``calibration="monte_carlo"``, ``n_labels=1``: ``≥ 1 − α``
      (standard split conformal prediction on one sampled label);
    * ``"monte_carlo"`` with ``n_labels > 1``, or ``"exact"``: ``≥ 1 − 2α``
      (the paper's bound for averaged p-values), close to ``1 − α`` in
      practice;
    * ``correction="ecdf"``: ``≥ 1 − α`` in finite samples, for any
      ``calibration``: a fraction ``holdout`` of the calibration items is
      held out, one label is drawn from each, and the p-values above are
      replaced by their rank among the held-out items' p-values
      (``(1 + #{l : p_l ≤ p}) / (L + 1)``; Stutz et al.'s ECDF correction,
      in its exact conformal form);
    * ``"majority"``: ``≥ 1 − α`` for the majority label only.

    Parameters
    ----------
    estimator : FrozenEstimator or None, default=None
        ``None``: ``X`` is the classifier output (probabilities, or logits,
        see ``input``). ``FrozenEstimator(fitted_clf)``: the fitted
        classifier whose sets are calibrated. Its probabilities come from
        ``predict_proba`` (else the softmax of ``decision_function``). An
        unfrozen classifier is refused: split conformal prediction needs a
        model that the calibration items did not train.
    confidence_level : float, default=0.9
        Target coverage ``1 − α``, in (0, 1).
    calibration : {"monte_carlo", "exact", "majority"}, default="monte_carlo"
        Weights of the calibration labels. ``"monte_carlo"``: ``n_labels``
        labels drawn from each item's histogram (``w_ik`` = the fraction of
        draws equal to ``k``). ``"exact"``: the histogram's distribution
        itself, ``w_ik = p̂_ik`` (the limit ``n_labels → ∞``; no sampling).
        ``"majority"``: the most frequent label (first of the tied classes).
    n_labels : int, default=10
        Labels drawn per item for ``"monte_carlo"`` (``m`` in the paper).
    conformity_score : {"lac", "aps"}, default="lac"
        Non-conformity score: ``"lac"`` ``1 − π_k(x)`` (smallest sets);
        ``"aps"`` the probability mass of the classes at least as probable
        as ``k`` (adaptive sets, non-randomised).
    correction : {None, "ecdf"}, default=None
        ``"ecdf"`` holds out ``holdout`` of the items to correct the
        p-values to a finite-sample ``1 − α`` guarantee.
    holdout : float, default=0.5
        Fraction of the calibration items held out by ``correction="ecdf"``.
    input : {"auto", "logits", "proba"}, default="auto"
        With ``estimator=None``: whether ``X`` holds probabilities or logits
        (``"auto"``: probabilities when every row is one).
    classes : array-like of shape (n_classes,), default=None
        Names of the columns of an array ``y`` (and the classes of 1-D
        labels); with ``estimator=None`` and an array ``X``, the class of
        each column of ``X``. Histogram columns are matched by name to the
        wrapped classifier's ``classes_``, or to the columns of a DataFrame
        ``X`` when ``estimator=None``.
    random_state : int, RandomState instance or None, default=None
        Draws of the Monte Carlo labels and of the held-out split.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class of each column of ``predict_proba`` and ``predict_set``: the
        wrapped classifier's ``classes_``; with ``estimator=None`` the
        classes named by ``X``'s columns, else ``classes``, a DataFrame
        ``y``'s columns, the sorted labels or ``0 .. n_classes - 1``.
    n_classes_ : int
    estimator_ : estimator or None
        The classifier used at prediction time.
    input_type_ : {"logits", "proba"} or None
        How ``X`` is read when ``estimator=None``.
    calibration_scores_ : ndarray of shape (n_calibration, n_classes)
        Non-conformity scores of the items that set the p-values.
    calibration_weights_ : ndarray of shape (n_calibration, n_classes)
        Their weights (rows sum to one).
    holdout_pvalues_ : ndarray of shape (n_holdout,) or None
        P-values of the held-out items' sampled labels (``correction="ecdf"``).
    threshold_ : float
        The largest non-conformity score kept in a set at
        ``confidence_level`` (``inf``: every class; ``-inf``: none).
    n_features_in_ : int
        Number of features seen during ``fit`` (when known).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during ``fit`` (when they are strings).

    See Also
    --------
    sklearn_hcal.plotting.ConformalCoverageDisplay : Coverage and set size
        against the level.
    sklearn_hcal.metrics.aggregated_coverage_score : Coverage of the human
        distribution by a set.

    Notes
    -----
    ``fit`` takes no ``sample_weight``: weighted items would need weighted
    conformal prediction, another quantile with other guarantees. The
    p-values do not depend on ``confidence_level``, so changing it needs no
    refit in principle (``predict_pvalues(X) > α`` gives the set at any
    level; write ``α`` as a decimal, ``0.1``, not ``1 - 0.9``, which floating
    point makes ``0.09999999999999998``: a p-value of exactly ``α`` is not in
    the set).

    References
    ----------
    Stutz, Roy, Matejovicova, Strachan, Cemgil, Doucet (2023). Conformal
    prediction under ambiguous ground truth. TMLR.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.conformal import HumanConformalClassifier
    >>> from sklearn_hcal.metrics import aggregated_coverage_score
    >>> rng = np.random.default_rng(0)
    >>> Q = rng.dirichlet([0.5, 0.5, 0.5], size=4000)  # true label distributions
    >>> Y = np.stack([rng.multinomial(5, q) for q in Q])  # 5 annotators each
    >>> P = 0.7 * Q + 0.3 * rng.dirichlet([1, 1, 1], size=4000)  # a model
    >>> cp = HumanConformalClassifier(random_state=0).fit(P[:2000], Y[:2000])
    >>> sets = cp.predict_set(P[2000:])
    >>> bool(abs(aggregated_coverage_score(Q[2000:], sets) - 0.9) < 0.03)
    True
    """

    _unfrozen_reason = (
        "split conformal prediction calibrates a fixed model on items it was "
        "not trained on"
    )

    _parameter_constraints: dict = {
        **ClassifierOutputMixin._parameter_constraints,
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "calibration": [StrOptions({"monte_carlo", "exact", "majority"})],
        "n_labels": [Interval(Integral, 1, None, closed="left")],
        "conformity_score": [StrOptions(set(CONFORMITY_SCORES))],
        "correction": [StrOptions({"ecdf"}), None],
        "holdout": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        confidence_level=0.9,
        calibration="monte_carlo",
        n_labels=10,
        conformity_score="lac",
        correction=None,
        holdout=0.5,
        input="auto",
        classes=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.confidence_level = confidence_level
        self.calibration = calibration
        self.n_labels = n_labels
        self.conformity_score = conformity_score
        self.correction = correction
        self.holdout = holdout
        self.input = input
        self.classes = classes
        self.random_state = random_state

    # -- the front end's hooks: probabilities, not logits ------------------------
    def _outputs(self, estimator, X):
        return get_probabilities(estimator, X)

    def _input_outputs(self, X):
        return probabilities_from_input(X, self.input_type_, fitted_input=self.input)

    # -- fit ---------------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, counts=None):
        """Calibrate the sets on held-out items and their label histograms.

        Parameters
        ----------
        X : array-like
            Calibration items: the classifier's input, or its probabilities
            (logits) when ``estimator=None``. They must not have trained the
            classifier.
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Label histograms (counts, or rows of human probabilities; a
            DataFrame's columns name the classes), or 1-D labels (one
            annotation per item).
        counts : array-like of shape (n_samples, n_classes), default=None
            Histograms routed as metadata; they replace ``y``.

        Returns
        -------
        self : object
        """
        P, Y, _ = self._fit_front(X, y, counts=counts)
        p_hat = Y / Y.sum(axis=1, keepdims=True)
        S = conformity_scores(P, self.conformity_score)
        rng = _generator(self.random_state)
        n = S.shape[0]
        if self.correction == "ecdf":
            n_hold = int(round(self.holdout * n))
            if n_hold < 1 or n - n_hold < 1:
                raise ValueError(
                    f"holdout={self.holdout} leaves {n_hold} held-out and "
                    f"{n - n_hold} calibration items out of {n}; correction='ecdf' "
                    "needs at least one of each."
                )
            perm = rng.permutation(n)
            cal, hold = perm[n_hold:], perm[:n_hold]
        else:
            cal, hold = np.arange(n), None
        self.calibration_scores_ = S[cal]
        self.calibration_weights_ = self._weights(p_hat[cal], rng)
        self.holdout_pvalues_ = None
        if hold is not None:
            # one label per held-out item: what makes the correction exact
            drawn = rng.multinomial(1, p_hat[hold]).astype(bool)
            self.holdout_pvalues_ = self._mc_pvalues(S[hold][drawn])
        self.threshold_ = self._threshold()
        return self

    def _weights(self, p_hat, rng) -> np.ndarray:
        if self.calibration == "exact":
            return p_hat
        if self.calibration == "majority":
            return np.eye(p_hat.shape[1])[p_hat.argmax(axis=1)]
        return mc_label_weights(p_hat, self.n_labels, rng)

    def _mc_pvalues(self, scores) -> np.ndarray:
        return weighted_pvalues(
            self.calibration_scores_,
            self.calibration_weights_,
            scores,
            self.calibration_scores_.shape[0],
        )

    def _pvalues_of_scores(self, scores) -> np.ndarray:
        p = self._mc_pvalues(scores)
        if self.holdout_pvalues_ is not None:
            p = ecdf_corrected_pvalues(self.holdout_pvalues_, p)
        return p

    def _threshold(self) -> float:
        # p is non-increasing in the score and changes only at calibration
        # scores, so the set is {s <= largest calibration score with p > α}
        alpha = alpha_of_level(self.confidence_level)
        if pvalues_above_alpha(self._pvalues_of_scores(np.array([np.inf]))[0], alpha):
            return np.inf
        candidates = np.unique(self.calibration_scores_)
        ok = candidates[pvalues_above_alpha(self._pvalues_of_scores(candidates), alpha)]
        return float(ok[-1]) if ok.size else -np.inf

    # -- prediction ----------------------------------------------------------------
    def predict_proba(self, X) -> np.ndarray:
        """The wrapped classifier's class probabilities (unchanged).

        Parameters
        ----------
        X : array-like

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self._predict_outputs(X)

    def predict_pvalues(self, X) -> np.ndarray:
        """Conformal p-value of every class (after the correction, if any).

        The set at any level ``1 − α`` is ``predict_pvalues(X) > α`` (``α``
        written as a decimal, see Notes); the p-values do not depend on
        ``confidence_level``.

        Parameters
        ----------
        X : array-like

        Returns
        -------
        pvalues : ndarray of shape (n_samples, n_classes)
        """
        return self._pvalues_of_scores(
            conformity_scores(self.predict_proba(X), self.conformity_score)
        )

    def predict_set(self, X) -> np.ndarray:
        """Prediction sets at ``confidence_level``, one boolean column per class.

        Parameters
        ----------
        X : array-like

        Returns
        -------
        sets : ndarray of bool, shape (n_samples, n_classes)
            ``sets[i, k]`` is True when ``classes_[k]`` is in item ``i``'s set.
        """
        return pvalues_above_alpha(
            self.predict_pvalues(X), alpha_of_level(self.confidence_level)
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
