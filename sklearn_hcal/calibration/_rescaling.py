"""Exact rescaling of the scores a calibrator's fit works on.

:func:`power_of_two_scale` lets the logit scalers fit scores of any finite
magnitude (logits of ±1e300 included) without overflow: the fit runs on
``Z / c`` and its parameters are mapped back.
"""

from __future__ import annotations

import numpy as np

__all__ = ["power_of_two_scale"]


def power_of_two_scale(A) -> float:
    """A power of two ``c`` with ``max |A| / c`` in ``[1, 2)`` (1 for zeros).

    Dividing by a power of two is exact, so a fit on ``A / c`` followed by
    the inverse rescaling of its parameters gives the same numbers as a fit
    on ``A`` wherever the latter does not overflow -- and finite numbers
    where it would (squares of logits of ±1e300).
    """
    m = float(np.max(np.abs(A))) if np.size(A) else 0.0
    if not (m > 0 and np.isfinite(m)):
        return 1.0
    return float(np.ldexp(1.0, int(np.frexp(m)[1]) - 1))
