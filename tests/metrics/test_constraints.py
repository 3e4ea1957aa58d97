"""The metric functions' shared parameter constraints are declared once.

Developer guide §registry: the arguments that several metric functions take
(the data ``y_true``, ``y_prob``, ``counts``, ``labels`` ..., and options such
as ``n_bins`` and ``debiased``) are declared in ``metrics/_constraints.py``
and every metric's ``validate_params`` uses those declarations, not copies.
The expected messages below are scikit-learn's wording for the documented
constraint, written here independently of the code.
"""

import inspect

import pytest
from sklearn.utils._param_validation import InvalidParameterError

import sklearn_hcal.metrics as M
from sklearn_hcal.metrics import _constraints as C
from sklearn_hcal.utils._compat import get_parameter_constraints


def _shared_lists() -> dict:
    """``{id: name}`` of every constraint list ``_constraints`` declares."""
    out = {}
    for name, value in vars(C).items():
        if name.startswith("_") or not isinstance(value, (list, dict)):
            continue
        lists = value.values() if isinstance(value, dict) else [value]
        out.update({id(v): name for v in lists if isinstance(v, list)})
    return out


#: Every public function that compares a prediction with human labels.
METRIC_FUNCTIONS = [
    name
    for name in M.__all__
    if inspect.isfunction(getattr(M, name))
    and get_parameter_constraints(getattr(M, name))
    and {"y_prob", "y_disagreement", "y_set"}
    & set(inspect.signature(getattr(M, name)).parameters)
]
#: Arguments shared by several metric functions.
SHARED = (
    "y_true",
    "y_prob",
    "y_disagreement",
    "y_set",
    "counts",
    "labels",
    "n_bins",
    "debiased",
    "order",
    "sample_weight",
    "y_score",
    "n_annotators",
)
#: argument -> (a bad value, what scikit-learn says the argument must be)
BAD = {
    "counts": (5, "an array-like or None"),
    "labels": (5, "an array-like or None"),
    "n_bins": (0, r"an int in the range \[1, inf\)"),
    "debiased": ("yes", "an instance of 'bool'"),
    "order": (5, "an array-like or None"),
}
#: Valid values of the required arguments (validation fails on the bad one).
REQUIRED = {
    "y_true": [[1, 1]],
    "y_prob": [[0.5, 0.5]],
    "y_disagreement": [0.5],
    "y_set": [[True, False]],
    "method": "confidence",
}


def test_the_metric_functions_are_found():
    assert len(METRIC_FUNCTIONS) >= 35
    assert "human_calibration_report" not in METRIC_FUNCTIONS  # no y_prob


@pytest.mark.parametrize("name", METRIC_FUNCTIONS)
def test_shared_arguments_use_the_one_declaration(name):
    constraints = get_parameter_constraints(getattr(M, name))
    shared = _shared_lists()
    copies = [
        f"{arg}: {constraints[arg]}"
        for arg in SHARED
        if arg in constraints and id(constraints[arg]) not in shared
    ]
    assert copies == [], f"{name} writes out shared constraints"


@pytest.mark.parametrize("name", METRIC_FUNCTIONS)
def test_shared_arguments_give_the_same_error_everywhere(name):
    func = getattr(M, name)
    params = inspect.signature(func).parameters
    required = {
        p: REQUIRED[p]
        for p, spec in params.items()
        if spec.default is inspect.Parameter.empty
    }
    for arg, (value, must) in BAD.items():
        if arg not in params:
            continue
        message = rf"^The '{arg}' parameter of {name} must be {must}.*Got {value!r}"
        with pytest.raises(InvalidParameterError, match=message):
            func(**required, **{arg: value})
