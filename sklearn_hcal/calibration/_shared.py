"""The helpers of :mod:`sklearn_hcal.calibration` that other layers may use.

The layer's declared inside (developer guide §layers): other packages
import these names from here, never from the layer's private modules. The
estimators' front end (scores, the prefit rule, class columns) is
:mod:`sklearn_hcal._frontend`; ``softmax`` is passed on from it for the
command line, which imported it from here.
"""

from .._frontend import softmax
from ._crossfit import cross_fit

__all__ = ["cross_fit", "softmax"]
