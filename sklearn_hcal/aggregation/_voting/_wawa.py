"""Wawa: the majority vote weighted by each annotator's agreement with it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...utils._docstrings import fill_doc
from ...utils._warnings import warn_user
from .._base import BaseAggregator, with_pool
from .._em import one_coin_proba, vote_counts
from ._majority_vote import majority_agreement

__all__ = ["Wawa"]


@fill_doc
class Wawa(BaseAggregator):
    """Worker agreement with aggregate (Wawa): a vote weighted by skill.

    Three steps (crowd-kit's ``Wawa``): the plain majority vote; each
    annotator's skill ``s_w``, the share of their labels equal to the
    majority; the vote again, each label weighted by its annotator's skill,
    normalised per item into the posterior. An annotator's label on an
    item is predicted as that of a one-coin annotator of accuracy ``s_w``
    (the posterior's class with probability ``s_w``, each other class with
    ``(1 − s_w)/(K − 1)``).

    Parameters
    ----------
    %(aggregation_table)s

    Attributes
    ----------
    %(aggregation_fitted)s
    skills_ : Series of shape (n_annotators,)
        Each annotator's share of labels equal to the plain majority label
        (the first of tied classes in ``classes_`` order); annotators unseen
        in ``fit`` get the mean skill in ``transform`` and
        ``predict_annotator_proba``.

    Notes
    -----
    In ``transform``, an item whose annotators all have skill 0 has no
    weighted vote; its posterior is the plain share of its votes, with a
    ``UserWarning`` (crowd-kit returns NaN). This cannot happen in ``fit``:
    an item's majority label is given by one of its annotators.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.aggregation import Wawa
    >>> X = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2],
    ...                   "annotator": ["a", "b", "c", "a", "b", "c"],
    ...                   "label": [0, 0, 1, 1, 1, 0]})
    >>> wawa = Wawa().fit(X)
    >>> wawa.skills_.tolist()
    [1.0, 1.0, 0.0]
    >>> wawa.posteriors_.to_numpy().tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    def __init__(
        self,
        *,
        classes=None,
        item="item",
        annotator="annotator",
        label="label",
    ):
        self.classes = classes
        self.item = item
        self.annotator = annotator
        self.label = label

    def _weighted(self, data, skill: np.ndarray) -> np.ndarray:
        weighted = vote_counts(data, weights=skill[data.annotator])
        total = weighted.sum(axis=1, keepdims=True)
        unweighted = (total[:, 0] <= 0).nonzero()[0]
        if unweighted.size:
            # only in transform: in fit every item's majority label was given
            # by one of its annotators, whose skill is then positive
            warn_user(
                f"Wawa: {unweighted.size} item(s) have only annotators of skill 0 "
                f"(e.g. item {data.items[unweighted[0]]!r}); their posterior is the "
                "plain share of their votes."
            )
            plain = vote_counts(data)[unweighted]
            weighted[unweighted] = plain
            total[unweighted] = plain.sum(axis=1, keepdims=True)
        return weighted / total

    def _fit(self, data) -> np.ndarray:
        skill = majority_agreement(data, vote_counts(data))
        self.skills_ = pd.Series(skill, index=data.annotators, name="skill")
        posterior = self._weighted(data, skill)
        self.class_prior_ = posterior.mean(axis=0)
        return posterior

    def _skills_with_pool(self) -> np.ndarray:
        return with_pool(self.skills_.to_numpy())

    def _transform(self, data, item_map, annotator_map) -> np.ndarray:
        skill = self._skills_with_pool()[annotator_map]
        return self._weighted(data, skill)

    def _annotator_proba(self, posterior, item_idx, annotator_idx) -> np.ndarray:
        return one_coin_proba(posterior, self._skills_with_pool()[annotator_idx])
