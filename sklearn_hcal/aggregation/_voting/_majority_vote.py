"""Majority vote: the label distribution of each item's annotations."""

from __future__ import annotations

from numbers import Real

import numpy as np
import pandas as pd

from ...utils._compat import Interval
from ...utils._docstrings import fill_doc
from .._base import BaseAggregator
from .._em import vote_counts

__all__ = ["MajorityVote", "majority_agreement"]


def majority_agreement(data, counts: np.ndarray) -> np.ndarray:
    """Each annotator's share of labels equal to the (plain) majority.

    The majority of an item is the most voted class, the first in
    ``classes_`` order among ties (crowd-kit's ``skills_``).
    """
    majority = np.argmax(counts, axis=1)
    agree = (data.label == majority[data.item]).astype(np.float64)
    n = np.bincount(data.annotator, minlength=data.n_annotators)
    return np.bincount(data.annotator, weights=agree, minlength=data.n_annotators) / n


def smoothed_shares(counts: np.ndarray, alpha: float) -> np.ndarray:
    """``(counts + α) / (n + Kα)`` per row."""
    smoothed = counts + alpha
    return smoothed / smoothed.sum(axis=1, keepdims=True)


@fill_doc
class MajorityVote(BaseAggregator):
    """Majority vote: each item's posterior is the share of its votes.

    The posterior of item ``i`` is ``(c_ik + α) / (n_i + Kα)`` with
    ``c_ik`` its annotations of class ``k``; ``predict`` is the most voted
    class (the first in ``classes_`` order among ties). Annotators are
    exchangeable: the predicted distribution of any annotator's label on an
    item is the item's posterior, so ``MajorityVote(alpha=α)`` is the
    *smoothed empirical frequency* against which
    the models of annotators are judged on held-out annotations.

    Parameters
    ----------
    alpha : float, default=0.0
        Pseudo-count added to every class's votes (additive smoothing). 0 is
        the plain share of votes (crowd-kit's ``MajorityVote``); a held-out
        annotation then gets probability 0 when nobody else chose its label.
    %(aggregation_table)s

    Attributes
    ----------
    %(aggregation_fitted)s
    skills_ : Series of shape (n_annotators,)
        Each annotator's share of labels equal to the item's majority label
        (crowd-kit's ``skills_``); not used by the predictions.

    See Also
    --------
    Wawa : the vote weighted by these skills.
    DawidSkene : a confusion matrix per annotator.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.aggregation import MajorityVote
    >>> X = pd.DataFrame({"item": ["q1", "q1", "q1", "q2", "q2"],
    ...                   "annotator": ["ann", "bob", "cy", "ann", "bob"],
    ...                   "label": ["yes", "no", "yes", "no", "no"]})
    >>> mv = MajorityVote()
    >>> mv.fit_transform(X).round(3)
    label     no    yes
    item
    q1     0.333  0.667
    q2     1.000  0.000
    >>> mv.predict(X).tolist()
    ['yes', 'no']
    >>> mv.skills_.tolist()
    [1.0, 0.5, 1.0]
    """

    _parameter_constraints: dict = {
        **BaseAggregator._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    # every annotator is predicted by the item's votes alike
    _per_annotator = False

    def __init__(
        self,
        *,
        alpha: float = 0.0,
        classes=None,
        item="item",
        annotator="annotator",
        label="label",
    ):
        self.alpha = alpha
        self.classes = classes
        self.item = item
        self.annotator = annotator
        self.label = label

    def _fit(self, data) -> np.ndarray:
        counts = vote_counts(data)
        self.skills_ = pd.Series(
            majority_agreement(data, counts), index=data.annotators, name="skill"
        )
        posterior = smoothed_shares(counts, self.alpha)
        self.class_prior_ = posterior.mean(axis=0)
        return posterior

    def _transform(self, data, item_map, annotator_map) -> np.ndarray:
        return smoothed_shares(vote_counts(data), self.alpha)

    def _annotator_proba(self, posterior, item_idx, annotator_idx) -> np.ndarray:
        return posterior.copy()
