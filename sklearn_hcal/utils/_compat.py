"""The one place that imports private scikit-learn, scipy and skorch APIs.

scikit-learn keeps the modules whose names start with an underscore free to
change in any release. Everything of theirs this package needs goes through
this module, so that a scikit-learn release that moves or renames one of them
breaks this file only; fix the import here (with a version switch if
needed) and the rest of the package follows. ``tests/test_package.py``
checks that no other module imports a private scikit-learn or skorch name.

What is imported and why:

* ``validate_params``, ``Interval``, ``StrOptions``, ``HasMethods``,
  ``validate_parameter_constraints``, ``make_constraint``,
  ``InvalidParameterError`` (``sklearn.utils._param_validation``) and the
  thread-local configuration (``sklearn._config``): scikit-learn's
  parameter validation, so that our functions raise the same
  ``InvalidParameterError`` (a ``ValueError``) as scikit-learn's own;
  :func:`validate_params` here is scikit-learn's decorator with the
  per-call work (signature, constraint objects) done once;
* ``Scorer``, ``get_response_method_name`` (``sklearn.metrics._scorer``) and
  ``MethodMetadataRequest`` (``sklearn.utils._metadata_requests``): our
  scorers are scikit-learn scorers, so that ``cross_validate``,
  ``GridSearchCV`` and metadata routing treat them as their own;
* ``check_response_method``, ``check_sample_weight``, ``num_samples``,
  ``check_method_params``, ``check_feature_names_in``
  (``sklearn.utils.validation``): the same resolution of response methods,
  sample-weight checks, sample counts of any array-like, routing of fit
  parameters to folds and feature-name checks as scikit-learn;
* ``safe_indexing`` (``sklearn.utils``): rows of arrays, DataFrames and lists
  alike (cross-fitting, histogram rows);
* ``fit_context`` (``sklearn.base``): the decorator of ``fit`` that validates
  ``_parameter_constraints``;
* ``get_output_config`` (``sklearn.utils._set_output``): the container
  ``set_output`` asked an estimator for, so that a transform whose result
  no DataFrame can hold (an ensemble's 3-D output) says so itself;
* ``get_tags`` and ``validate_data`` (public since scikit-learn 1.6; kept
  here so that older releases can be served from one place);
* ``add_rows_at`` (``scipy.sparse._sparsetools.csc_matvecs``, the C loop
  behind a sparse-matrix × dense-matrix product): ``out[index[j]] +=
  weight[j] · rows[j]`` for every ``j`` in one pass, the reduction of the
  binned metrics' statistics (all of them at once instead of one
  ``bincount`` each). Without it (a scipy that moved it), one ``bincount``
  per column gives the same sums in the same order;
* ``skorch_predict_nonlinearity``: skorch's resolved ``predict_nonlinearity``
  of a net (``NeuralNet._get_predict_nonlinearity``, a private method), which
  MC dropout applies to each member's output as ``predict_proba`` does.
"""

from __future__ import annotations

import functools
import inspect
import re

import numpy as np
from sklearn._config import _get_threadlocal_config
from sklearn.base import _fit_context as fit_context
from sklearn.metrics._scorer import _get_response_method_name
from sklearn.metrics._scorer import _Scorer as Scorer
from sklearn.utils import _safe_indexing as safe_indexing
from sklearn.utils import get_tags
from sklearn.utils._metadata_requests import MethodMetadataRequest
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    StrOptions,
    make_constraint,
    validate_parameter_constraints,
)
from sklearn.utils._param_validation import validate_params as _sklearn_validate_params
from sklearn.utils._set_output import _get_output_config as get_output_config
from sklearn.utils.validation import _check_feature_names_in as check_feature_names_in
from sklearn.utils.validation import _check_method_params as check_method_params
from sklearn.utils.validation import _check_response_method as check_response_method
from sklearn.utils.validation import _check_sample_weight as check_sample_weight
from sklearn.utils.validation import _num_samples as num_samples
from sklearn.utils.validation import validate_data

try:  # the loop of CSC @ dense; public since scipy 0.x, private by its module
    from scipy.sparse._sparsetools import csc_matvecs as _csc_matvecs
except ImportError:  # pragma: no cover - a scipy that moved it
    _csc_matvecs = None

get_response_method_name = _get_response_method_name

__all__ = [
    "HasMethods",
    "Interval",
    "MethodMetadataRequest",
    "Scorer",
    "StrOptions",
    "check_feature_names_in",
    "check_method_params",
    "check_response_method",
    "check_sample_weight",
    "fit_context",
    "get_output_config",
    "get_parameter_constraints",
    "get_response_method_name",
    "get_tags",
    "num_samples",
    "safe_indexing",
    "skorch_predict_nonlinearity",
    "validate_data",
    "validate_parameter_constraints",
    "validate_params",
]


_KEPT: dict = {}


def _kept(kind: str, n: int, dtype) -> np.ndarray:
    """``arange(n)`` or ``ones(n)`` of ``dtype``: a view of one kept array
    (no allocation per call: the binned metrics reduce many sub-blocks)."""
    key = (kind, np.dtype(dtype))
    kept = _KEPT.get(key)
    if kept is None or kept.shape[0] < n:
        size = max(n, 2**15)
        kept = np.arange(size, dtype=dtype) if kind == "range" else np.ones(size)
        _KEPT[key] = kept
    return kept[:n]


def add_rows_at(out: np.ndarray, index: np.ndarray, rows: np.ndarray, weights=None):
    """``out[index[j]] += weights[j] * rows[j]`` for every ``j``, in order.

    One pass over the rows whatever their width (``np.add.at`` is two
    orders of magnitude slower; a ``bincount`` per column reads the indices
    once per column). The additions happen in the order of ``j``, as
    ``bincount``'s, so the sums are the same bits. ``out`` is a C-contiguous
    float64 ``(n_out, width)`` array, ``rows`` ``(n, width)``, ``index``
    ``(n,)`` integers in ``[0, n_out)`` (not checked), ``weights`` ``(n,)``
    or None (ones).
    """
    n, width = rows.shape
    if weights is None:
        weights = _kept("ones", n, np.float64)
    if _csc_matvecs is None:
        for s in range(width):
            out[:, s] += np.bincount(
                index, weights=rows[:, s] * weights, minlength=out.shape[0]
            )
        return out
    index = np.asarray(index)
    if index.dtype not in (np.int32, np.int64):
        index = index.astype(np.intp)
    data = np.ascontiguousarray(weights, dtype=np.float64)
    _csc_matvecs(
        out.shape[0],
        n,
        width,
        _kept("range", n + 1, index.dtype),
        index,
        data,
        np.ascontiguousarray(rows, dtype=np.float64).reshape(-1),
        out.reshape(-1),
    )
    return out


def _routed(function, route):
    """``function`` behind the ``route`` of :func:`validate_params`."""
    applies, call = route

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if applies(args, kwargs):
            return call(wrapper, args, kwargs)
        return function(*args, **kwargs)

    return wrapper


def get_parameter_constraints(func) -> dict:
    """The constraints ``validate_params`` attached to ``func`` (``{}`` if none).

    scikit-learn stores them on the decorated function as
    ``_skl_parameter_constraints``; they let the metric registry validate a
    metric's keyword arguments exactly as the metric itself would.
    """
    return dict(getattr(func, "_skl_parameter_constraints", None) or {})


def skorch_predict_nonlinearity(net):
    """The function skorch's ``predict_proba`` applies to a net's output.

    ``net.predict_nonlinearity`` resolved as skorch resolves it ("auto":
    softmax for ``CrossEntropyLoss``, identity otherwise), through the
    private ``NeuralNet._get_predict_nonlinearity``.
    """
    return net._get_predict_nonlinearity()


_KEYWORDS = (
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    inspect.Parameter.KEYWORD_ONLY,
)
#: Default values whose check cannot change between calls.
_IMMUTABLE = (bool, int, float, str)
#: Stands for "this parameter's default is checked on every call".
_UNCHECKED = object()


def validate_params(
    parameter_constraints, *, prefer_skip_nested_validation, route=None
):
    """scikit-learn's ``validate_params``, with the per-call work done once.

    scikit-learn's decorator builds the signature, binds it and turns every
    constraint into a constraint object on each call: about 50 µs, a third
    of a metric call at 1,000 items. Here the signature is read and the
    constraints made once, a NumPy array satisfies ``"array-like"`` at once,
    and nested validation is switched off by one assignment in the
    thread-local configuration (what ``config_context`` sets). Whenever an
    argument does not bind plainly or fails a constraint, the call goes
    through scikit-learn's own decorator, which raises its usual error; a
    valid call runs ``func`` under the same configuration as there.

    ``route``, a pair ``(applies, call)``, hands a call elsewhere before any
    check: when ``applies(args, kwargs)``, the decorated function returns
    ``call(decorated, args, kwargs)`` (the metrics' dask inputs, in one
    wrapper rather than a second one around this).
    """
    reference = _sklearn_validate_params(
        parameter_constraints,
        prefer_skip_nested_validation=prefer_skip_nested_validation,
    )

    def decorator(func):
        slow = reference(func)  # also sets func._skl_parameter_constraints
        parameters = list(inspect.signature(func).parameters.values())
        if any(p.kind not in _KEYWORDS for p in parameters) or any(
            p.name in ("self", "cls") for p in parameters
        ):
            return slow if route is None else _routed(slow, route)
        names = [p.name for p in parameters]
        n_positional = sum(
            p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters
        )
        checks = []
        for index, p in enumerate(parameters):
            constraints = parameter_constraints.get(p.name)
            if constraints is None or constraints == "no_validation":
                continue
            objects = [make_constraint(c) for c in constraints]
            array_like = any(c == "array-like" for c in constraints)
            # An immutable default that satisfies the constraints is not
            # checked again on each call that leaves it (scikit-learn checks
            # it every time, with the same outcome).
            default = p.default
            if not (
                (default is None or type(default) in _IMMUTABLE)
                and any(c.is_satisfied_by(default) for c in objects)
            ):
                default = _UNCHECKED
            checks.append((p.name, index, p.default, default, objects, array_like))
        known = frozenset(names)

        applies, call = route if route is not None else (None, None)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if applies is not None and applies(args, kwargs):
                return call(wrapper, args, kwargs)
            config = _get_threadlocal_config()
            skip = config["skip_parameter_validation"]
            if skip:
                return func(*args, **kwargs)
            n_args = len(args)
            if n_args > n_positional or not known.issuperset(kwargs):
                return slow(*args, **kwargs)
            for name, index, default, valid_default, objects, array_like in checks:
                if index < n_args:
                    if name in kwargs:
                        return slow(*args, **kwargs)
                    value = args[index]
                elif name in kwargs:
                    value = kwargs[name]
                elif default is not inspect.Parameter.empty:
                    value = default
                else:
                    return slow(*args, **kwargs)
                if value is valid_default or (array_like and type(value) is np.ndarray):
                    continue
                for constraint in objects:
                    if constraint.is_satisfied_by(value):
                        break
                else:
                    return slow(*args, **kwargs)
            config["skip_parameter_validation"] = prefer_skip_nested_validation
            try:
                return func(*args, **kwargs)
            except InvalidParameterError as e:
                # as scikit-learn: an inner estimator's message names this function
                msg = re.sub(
                    r"parameter of \w+ must be",
                    f"parameter of {func.__qualname__} must be",
                    str(e),
                )
                raise InvalidParameterError(msg) from e
            finally:
                config["skip_parameter_validation"] = skip

        return wrapper

    return decorator
