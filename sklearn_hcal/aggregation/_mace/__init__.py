"""MACE (Hovy et al. 2013): annotators who know the answer or spam.

The family, one job a module: :mod:`._steps` (the vectorised E-step,
expected counts and the EM and variational M-steps) and :mod:`._estimator`
(the restarts and the estimator).
"""

from ._estimator import MACE

__all__ = ["MACE"]
