"""The metric functions' entry point: parameter validation, then dask dispatch.

The modules of the registry's metrics and the report decorate their public
functions with :func:`validate_params` from here instead of scikit-learn's.
It is scikit-learn's decorator (the same ``InvalidParameterError`` and the
same ``_skl_parameter_constraints`` that the registry reads) plus one check:
when an input is a dask array, DataFrame or Series, the call is computed
chunk-wise by :mod:`sklearn_hcal.metrics._streaming._dask` (a metric state
per block, reduced by merging) instead of materialising the data. For every
other input the function runs as it is, with nothing but a type check added.

dask is never imported here: an input is recognised by its type's module.
The streaming family imports neither this module nor the report, so the
imports form no circle (developer guide §streaming).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..utils._compat import validate_params as _sklearn_validate_params
from ._streaming._dask import dask_call
from ._streaming._inputs import is_dask_collection

__all__ = ["validate_params"]


#: Argument types that are never a dask collection nor hold one: the
#: common call's arguments skip the two checks below.
_PLAIN = frozenset({np.ndarray, type(None), bool, int, float, str})


def _has_dask(args, kwargs) -> bool:
    for value in (*args, *kwargs.values()):
        if type(value) in _PLAIN:
            continue
        if is_dask_collection(value):
            return True
        if isinstance(value, Mapping) and any(map(is_dask_collection, value.values())):
            return True
    return False


def validate_params(parameter_constraints, *, prefer_skip_nested_validation):
    """scikit-learn's ``validate_params``, routing dask inputs chunk-wise.

    One wrapper: the dask check runs first inside ``utils._compat``'s
    decorator (``route=``), so a call on numpy arrays pays for no second
    layer.

    Parameters
    ----------
    parameter_constraints : dict
        As for :func:`sklearn.utils._param_validation.validate_params`.
    prefer_skip_nested_validation : bool
        As for scikit-learn's decorator.

    Returns
    -------
    decorator : callable
    """
    return _sklearn_validate_params(
        parameter_constraints,
        prefer_skip_nested_validation=prefer_skip_nested_validation,
        route=(_has_dask, dask_call),
    )
