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
* ``check_response_method``, ``check_sample_weight``, ``num_samples``,
  ``check_method_params`` (``sklearn.utils.validation``): the same
  resolution of response methods, sample-weight checks and routing of fit
  parameters to folds as scikit-learn;
* ``safe_indexing`` (``sklearn.utils``): rows of arrays, DataFrames and lists
  alike (cross-fitting);
* ``fit_context`` (``sklearn.base``): the decorator of ``fit`` that validates
  ``_parameter_constraints``;
* ``get_tags`` (``sklearn.utils``, public since 1.6; kept here so that older
  releases can be served from one place).
"""

from __future__ import annotations

from sklearn.base import _fit_context as fit_context
from sklearn.metrics._scorer import _get_response_method_name
from sklearn.metrics._scorer import _Scorer as Scorer
from sklearn.utils import _safe_indexing as safe_indexing
from sklearn.utils import get_tags
from sklearn.utils._metadata_requests import MethodMetadataRequest
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from sklearn.utils.validation import _check_method_params as check_method_params
from sklearn.utils.validation import _check_response_method as check_response_method
from sklearn.utils.validation import _check_sample_weight as check_sample_weight
from sklearn.utils.validation import _num_samples as num_samples

get_response_method_name = _get_response_method_name

__all__ = [
    "HasMethods",
    "Interval",
    "MethodMetadataRequest",
    "Scorer",
    "StrOptions",
    "check_method_params",
    "check_response_method",
    "check_sample_weight",
    "fit_context",
    "get_parameter_constraints",
    "get_response_method_name",
    "get_tags",
    "num_samples",
    "safe_indexing",
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
