"""Voting aggregators: the majority vote and Wawa.

The family, one job a module: :mod:`._majority_vote` (``MajorityVote``, the
majority's agreement and smoothed vote shares) and :mod:`._wawa`
(``Wawa``, the vote weighted by that agreement).
"""

from ._majority_vote import MajorityVote
from ._wawa import Wawa

__all__ = ["MajorityVote", "Wawa"]
