"""The fast parameter validation behaves as scikit-learn's ``validate_params``.

``sklearn_hcal.utils._compat.validate_params`` does scikit-learn's per-call
work once; every public function of :mod:`sklearn_hcal.metrics` is checked
here against the same function under scikit-learn's own decorator: the same
values for valid calls, the same errors for invalid ones, and the same
configuration inside and after the call.
"""

import inspect

import numpy as np
import pytest
import sklearn
from sklearn.utils._param_validation import validate_params as sklearn_validate_params

import sklearn_hcal.metrics as M
from sklearn_hcal.utils._compat import get_parameter_constraints, validate_params
from tests.metrics._registered import metric_functions

FUNCTIONS = [
    name
    for name in M.__all__
    if inspect.isfunction(getattr(M, name))
    and get_parameter_constraints(getattr(M, name))
    and hasattr(getattr(M, name), "__wrapped__")
]


def _reference(name):
    func = getattr(M, name)
    return sklearn_validate_params(
        get_parameter_constraints(func), prefer_skip_nested_validation=True
    )(func.__wrapped__)


def _inputs(K, zeros, n=200, seed=0):
    rng = np.random.default_rng(seed + K)
    Q = rng.dirichlet(np.ones(K), size=n)
    Y = rng.multinomial(7, Q)
    P = rng.dirichlet(np.ones(K), size=n)
    if zeros:
        P[rng.random((n, K)) < 0.2] = 0.0
        P[:, 0] += 1e-3
        P /= P.sum(axis=1, keepdims=True)
    return Y, P


def _call(func, name, Y, P):
    params = inspect.signature(func).parameters
    first = list(params)[:2]
    if first == ["y_true", "y_pred"] or len(first) == 2 and "y_pred" in first[1]:
        return func(Y, P)
    return func(Y)


def test_every_public_metric_uses_the_fast_decorator():
    assert len(FUNCTIONS) >= 15


@pytest.mark.parametrize("zeros", [False, True])
@pytest.mark.parametrize("K", [2, 3, 10, 20])
@pytest.mark.parametrize(
    "name", [f.__name__ for f in metric_functions(response="proba")]
)
def test_values_equal_scikit_learns_decorator(name, K, zeros):
    Y, P = _inputs(K, zeros)
    ours = getattr(M, name)(Y, P)
    theirs = _reference(name)(Y, P)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_invalid_parameters_raise_the_same_error(name):
    func, reference = getattr(M, name), _reference(name)
    Y, P = _inputs(3, False)
    sig = inspect.signature(func.__wrapped__)
    required = [
        p.name for p in sig.parameters.values() if p.default is inspect.Parameter.empty
    ]
    args = {"y_true": Y, "y_pred": P}
    positional = [args.get(p, P) for p in required]
    checked = 0
    for param, constraints in get_parameter_constraints(func).items():
        if param in required or constraints == "no_validation":
            continue
        for bad in ("no such option", -7, object()):
            assert _outcome(func, *positional, **{param: bad}) == _outcome(
                reference, *positional, **{param: bad}
            )
            checked += 1
    # wrong bindings: the same TypeError
    for kwargs in ({"no_such_param": 1},):
        assert _outcome(func, *positional, **kwargs) == _outcome(
            reference, *positional, **kwargs
        )
    assert _outcome(func) == _outcome(reference)
    # a scalar where an array is required
    for i, param in enumerate(required):
        if "array-like" not in get_parameter_constraints(func).get(param, []):
            continue
        bad_args = [*positional[:i], 5, *positional[i + 1 :]]
        assert _outcome(func, *bad_args) == _outcome(reference, *bad_args)
        checked += 1
    # every function but the scorer factory has a checkable parameter
    assert checked or name == "get_human_scorer"


def _outcome(func, *args, **kwargs):
    """``("ok", None)`` or ``(exception type, message)``."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func(*args, **kwargs)
    except Exception as exc:  # compared, not swallowed
        return type(exc), str(exc)
    return "ok", None


def test_nested_validation_skipped_inside_and_restored_after():
    seen = []

    @validate_params({"x": ["array-like"]}, prefer_skip_nested_validation=True)
    def inner(x):
        seen.append(sklearn.get_config()["skip_parameter_validation"])
        raise ValueError("inside")

    @validate_params({"x": ["array-like"]}, prefer_skip_nested_validation=False)
    def outer(x):
        seen.append(sklearn.get_config()["skip_parameter_validation"])
        return x

    assert not sklearn.get_config()["skip_parameter_validation"]
    with pytest.raises(ValueError, match="inside"):
        inner(np.zeros(2))
    outer(np.zeros(2))
    assert seen == [True, False]
    assert not sklearn.get_config()["skip_parameter_validation"]
    with sklearn.config_context(skip_parameter_validation=True):
        outer("not validated")  # skipped as in scikit-learn
        assert sklearn.get_config()["skip_parameter_validation"]


@pytest.mark.parametrize("K", [2, 10])
def test_kept_thread_pool_gives_the_serial_values(K, monkeypatch):
    from sklearn_hcal._validation._core import _block_pool, _chunk_rows

    Y, P = _inputs(K, True, n=3 * _chunk_rows(K) + 11)
    names = ["kl_divergence", "calibration_loss", "expected_calibration_error"]
    monkeypatch.setenv("HCAL_NUM_THREADS", "1")
    serial = [getattr(M, name)(Y, P) for name in names]
    monkeypatch.setenv("HCAL_NUM_THREADS", "2")
    threaded = [getattr(M, name)(Y, P) for name in names]
    again = [getattr(M, name)(Y, P) for name in names]
    assert threaded == serial == again  # block order: the same sums
    assert _block_pool(2) is _block_pool(2)
