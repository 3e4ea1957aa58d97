"""The one place that imports private scikit-learn APIs.

scikit-learn keeps the modules whose names start with an underscore free to
change in any release. Everything of theirs this package needs goes through
this module, so that a scikit-learn release that moves or renames one of them
breaks this file only; fix the import here (with a version switch if
needed) and the rest of the package follows.

What is imported and why:

* ``validate_params``, ``Interval``, ``StrOptions``, ``HasMethods``,
  ``validate_parameter_constraints`` (``sklearn.utils._param_validation``):
  scikit-learn's parameter validation, so that our functions raise the same
  ``InvalidParameterError`` (a ``ValueError``) as scikit-learn's own;
* ``Scorer``, ``get_response_method_name`` (``sklearn.metrics._scorer``) and
  ``MethodMetadataRequest`` (``sklearn.utils._metadata_requests``): our
  scorers are scikit-learn scorers, so that ``cross_validate``,
  ``GridSearchCV`` and metadata routing treat them as their own;
* ``check_response_method``, ``check_sample_weight``
  (``sklearn.utils.validation``): the same resolution of response methods
  and the same sample-weight checks as scikit-learn.
"""

from __future__ import annotations

from sklearn.metrics._scorer import _get_response_method_name
from sklearn.metrics._scorer import _Scorer as Scorer
from sklearn.utils._metadata_requests import MethodMetadataRequest
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from sklearn.utils.validation import _check_response_method as check_response_method
from sklearn.utils.validation import _check_sample_weight as check_sample_weight

get_response_method_name = _get_response_method_name

__all__ = [
    "HasMethods",
    "Interval",
    "MethodMetadataRequest",
    "Scorer",
    "StrOptions",
    "check_response_method",
    "check_sample_weight",
    "get_parameter_constraints",
    "get_response_method_name",
    "validate_parameter_constraints",
    "validate_params",
]


def get_parameter_constraints(func) -> dict:
    """The constraints ``validate_params`` attached to ``func`` (``{}`` if none).

    scikit-learn stores them on the decorated function as
    ``_skl_parameter_constraints``; they let the metric registry validate a
    metric's keyword arguments exactly as the metric itself would.
    """
    return dict(getattr(func, "_skl_parameter_constraints", None) or {})
