"""How α-calibration's concentration model is fitted: one configuration.

:class:`SolverConfig` holds what :func:`~._solvers.fit_concentration_model`
needs besides its data (the model's shape, the objective's penalties, the
solver and its stopping rules, the device, the seed and the verbosity), so
that the estimator builds it once from its parameters and the solver reads
it whole instead of twenty keywords passed through.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields

from .._dirichlet import NORMALIZATIONS

__all__ = ["SolverConfig"]


@dataclass(frozen=True)
class SolverConfig:
    """The fit of ``log α0 = MLP(h)``: model, objective, solver, device.

    Every field but ``precondition`` is the :class:`~sklearn_hcal.AlphaCalibrator`
    parameter of the same name (``hidden`` is its ``hidden_layer_sizes``), with
    its default; the values are checked when the configuration is made.

    Attributes
    ----------
    hidden : tuple of int, default=()
        Hidden ReLU layer sizes; ``()`` is the linear model.
    solver : {"auto", "lbfgs", "adam"}, default="auto"
        See :func:`~._solvers.choose_solver`.
    alpha_reg : float, default=0.005
        Weight of the penalty ``mean_i(s_i·(log α0_i)²)`` (Mimori et al. 2021,
        App. D.2, eq. 50).
    l2_reg : float, default=0.0
        Penalty ``l2_reg·Σ‖W‖²`` on the weight matrices (not the intercepts),
        in the units of the loss: with standardised, uncorrelated features
        ``‖w‖²`` is the variance of ``log α0`` across items, so ``l2_reg``
        compares with ``alpha_reg``. 0 keeps the unpenalised objective.
    normalization : {"reference", "eq50"}, default="reference"
        ``"reference"``: each item's NLL weighted by ``n_i / mean(n)``, as
        Mimori et al.'s code (which produced the paper's tables); ``"eq50"``:
        the NLL summed and divided by ``Σ n_i``, as eq. 50 is printed. With a
        common ``n``, ``"reference"`` at ``(alpha_reg, l2_reg)`` is ``n`` times
        ``"eq50"`` at ``(alpha_reg / n, l2_reg / n)``: same optimum.
    max_iter : int, default=200
        L-BFGS iterations, or Adam epochs. L-BFGS restarts a run whose line
        search stalled (a fresh history, at most 3 times) unless the run
        ended where it began: the next would repeat it exactly.
    tol : float, default=1e-7
        L-BFGS: bound on the largest component of the gradient in whitened
        coordinates, where the Hessian is close to the identity (the fitted
        ``log α0`` is then within order ``tol·sqrt(n_features)`` of the
        optimum). Adam: the improvement of the monitored loss that counts.
    batch_size : int or "auto", default="auto"
        Adam's mini-batch (``"auto"``: ``min(512, n_items)``).
    learning_rate : float, default=1e-2
        Adam's step size.
    validation_fraction : float, default=0.2
        Adam: items held out for early stopping.
    early_stopping : bool, default=True
        Adam: stop on the held-out loss (else on the training loss).
    n_iter_no_change : int, default=10
        Adam: epochs without improvement before it stops.
    device : torch.device, str or None, default=None
        Torch device of the fit (CPU when None). L-BFGS runs in float64
        everywhere, Adam in float32 on CUDA.
    random_state : int, RandomState instance or None, default=None
        Seeds the preconditioner's rows, the initial weights and Adam's
        batches.
    verbose : int, default=0
        ``>= 1`` reports the fit's solver, iterations and loss.
    precondition : bool, default=True
        L-BFGS: optimise the first layer in whitened coordinates (see
        :mod:`._solvers`). False is the plain parametrisation (slow on
        correlated features). Adam always uses the plain one.

    Examples
    --------
    >>> from sklearn_hcal import AlphaCalibrator
    >>> from sklearn_hcal.calibration._alpha._config import SolverConfig
    >>> SolverConfig(hidden=[16], l2_reg=0.01).hidden
    (16,)
    >>> SolverConfig.of(AlphaCalibrator(l2_reg=0.5), hidden=()).l2_reg
    0.5
    >>> SolverConfig(tol=-1.0)
    Traceback (most recent call last):
    ...
    ValueError: tol must be a non-negative number, got -1.0.
    """

    hidden: tuple = ()
    solver: str = "auto"
    alpha_reg: float = 0.005
    l2_reg: float = 0.0
    normalization: str = "reference"
    max_iter: int = 200
    tol: float = 1e-7
    batch_size: int | str = "auto"
    learning_rate: float = 1e-2
    validation_fraction: float = 0.2
    early_stopping: bool = True
    n_iter_no_change: int = 10
    device: object = None
    random_state: object = None
    verbose: int = 0
    precondition: bool = True

    @classmethod
    def of(cls, estimator, **given) -> SolverConfig:
        """The configuration of an estimator: each field its parameter of the
        same name (``get_params``), the fields in ``given`` as given."""
        params = estimator.get_params(deep=False)
        taken = {
            f.name: params[f.name]
            for f in fields(cls)
            if f.name in params and f.name not in given
        }
        return cls(**taken, **given)

    def __post_init__(self):
        for name in ("alpha_reg", "l2_reg", "tol"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or not value >= 0:
                raise ValueError(
                    f"{name} must be a non-negative number, got {value!r}."
                )
        if self.normalization not in NORMALIZATIONS:
            raise ValueError(
                f"normalization must be one of {NORMALIZATIONS}, got "
                f"{self.normalization!r}."
            )
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(
                f"max_iter must be a positive integer, got {self.max_iter!r}."
            )
        # a frozen dataclass: the one normalisation goes through object
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
