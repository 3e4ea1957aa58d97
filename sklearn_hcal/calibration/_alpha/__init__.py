"""α-calibration (Mimori et al. 2021, §3.3): a Dirichlet over class probabilities.

The family, one job a module: :mod:`._estimator` (``AlphaCalibrator``),
:mod:`._features` (the inputs of the concentration model), :mod:`._model`
(the concentration model and its likelihood), :mod:`._solvers` (L-BFGS and
the choice of solver), :mod:`._adam` (the torch solver) and :mod:`._predict`
(disagreement and posterior predictions).
"""

from ._estimator import AlphaCalibrator

__all__ = ["AlphaCalibrator"]
