"""The helpers of :mod:`sklearn_hcal.conformal` that other layers may use.

The layer's declared inside (developer guide §layers): other packages
import these names from here, never from the layer's private modules.
"""

from ._quantiles import (
    alpha_of_level,
    pvalues_above_alpha,
)

__all__ = [
    "alpha_of_level",
    "pvalues_above_alpha",
]
