"""The metric functions' entry point: parameter validation, then dask dispatch.

The modules of the registry's metrics and the report decorate their public
functions with :func:`validate_params` from here instead of scikit-learn's.
It is scikit-learn's decorator (the same ``InvalidParameterError`` and the
same ``_skl_parameter_constraints`` that the registry reads) plus one check:
when an input is a :class:`dask.array.Array`, the call is computed chunk-wise
by :mod:`sklearn_hcal.metrics._streaming_dask` (a metric state per block, reduced
by merging) instead of materialising the data. For every other input the
function runs as it is, with nothing but a type check added.

dask is never imported here: an input is recognised by its type's module.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from ..utils._compat import validate_params as _sklearn_validate_params

__all__ = ["validate_params", "is_dask_array"]


def is_dask_array(x) -> bool:
    """Whether ``x`` is a :class:`dask.array.Array` (without importing dask)."""
    cls = type(x)
    return cls.__name__ == "Array" and cls.__module__.startswith("dask.")


def _has_dask(args, kwargs) -> bool:
    for value in (*args, *kwargs.values()):
        if is_dask_array(value):
            return True
        if isinstance(value, Mapping) and any(map(is_dask_array, value.values())):
            return True
    return False


def validate_params(parameter_constraints, *, prefer_skip_nested_validation):
    """scikit-learn's ``validate_params``, routing dask-array inputs chunk-wise.

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
    validate = _sklearn_validate_params(
        parameter_constraints,
        prefer_skip_nested_validation=prefer_skip_nested_validation,
    )

    def decorate(func):
        validated = validate(func)

        @functools.wraps(validated)
        def wrapper(*args, **kwargs):
            if _has_dask(args, kwargs):
                from ._streaming_dask import _dask_call

                return _dask_call(wrapper, args, kwargs)
            return validated(*args, **kwargs)

        return wrapper

    return decorate
