"""Dawid–Skene (1979) and its one-coin form.

The family, one job a module: :mod:`._steps` (the vectorised E- and
M-steps) and :mod:`._estimators` (the EM loop and the two estimators).
"""

from ._estimators import DawidSkene, OneCoinDawidSkene

__all__ = ["DawidSkene", "OneCoinDawidSkene"]
