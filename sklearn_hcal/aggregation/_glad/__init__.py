"""GLAD (Whitehill et al. 2009): annotator abilities and item difficulties.

The family, one job a module: :mod:`._objective` (the vectorised E-step,
the M-step's objective and gradient) and :mod:`._estimator` (the EM loop
and the estimator).
"""

from ._estimator import GLAD

__all__ = ["GLAD"]
