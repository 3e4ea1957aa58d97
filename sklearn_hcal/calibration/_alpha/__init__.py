"""α-calibration (Mimori et al. 2021, §3.3): a Dirichlet over class probabilities.

The family, one job a module: :mod:`._estimator` (``AlphaCalibrator``),
:mod:`._features` (the inputs of the concentration model), :mod:`._solvers`
(the choice of solver, the fit and the numpy prediction of α0),
:mod:`._model` (the torch concentration model and its preconditioner),
:mod:`._likelihood` (the lgamma form of the likelihood on the observed
classes),
:mod:`._lbfgs` and :mod:`._adam` (the two solvers) and :mod:`._predict`
(disagreement and posterior predictions). :mod:`._model`, :mod:`._likelihood`,
:mod:`._lbfgs` and :mod:`._adam` import torch (and skorch for Adam) at their top and are
imported only when a fit runs, so importing the estimator imports no torch.
"""

from ._estimator import AlphaCalibrator

__all__ = ["AlphaCalibrator"]
