"""scikit-learn's estimator checks on the ensembles and the soft-label net.

Tiny models keep the whole run to a few seconds: a lazily sized linear layer
(it adapts to whatever number of features a check uses), dropout, and a
linear output that :class:`SoftLabelNetClassifier` sizes to the number of
classes in ``fit``.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from sklearn_hcal import make_soft_label_net  # noqa: E402
from sklearn_hcal.calibration import (  # noqa: E402
    MCDropoutClassifier,
    TestTimeAugmentationClassifier,
)


class TinyNet(torch.nn.Module):
    """Any input width (LazyLinear), ``n_classes`` logits, dropout between."""

    def __init__(self, n_classes=2):
        super().__init__()
        self.hidden = torch.nn.LazyLinear(8)
        self.drop = torch.nn.Dropout(0.5)
        self.out = torch.nn.Linear(8, n_classes)

    def forward(self, X):
        return self.out(self.drop(torch.relu(self.hidden(X))))


def scale_rows(X, random_state):
    """Multiply each item by its own log-normal factor (dense or sparse)."""
    factor = np.exp(0.1 * random_state.standard_normal(X.shape[0]))
    if sp.issparse(X):
        return sp.diags(factor) @ X
    return factor[:, None] * X


def _net():
    return make_soft_label_net(TinyNet, max_epochs=3, lr=1e-2, random_state=0)


_HISTOGRAM = "a 2-D y is a label histogram (n, K), not multi-output targets"
_INT_INPUT = (
    "integer arrays reach the module unchanged (they may be token indices for "
    "an embedding), so a float layer rejects them"
)
_NET_INPUT = {
    "check_dtype_object": "object arrays cannot become torch tensors",
    "check_estimators_dtypes": _INT_INPUT,
    "check_classifier_data_not_an_array": _INT_INPUT,
    "check_estimator_sparse_array": (
        "skorch passes sparse matrices on as torch sparse tensors; whether the "
        "module accepts them is up to the module"
    ),
    "check_classifiers_train": (
        "skorch reads a Python list X as several inputs (its documented "
        "convention), not as a list of rows"
    ),
}
_NET_INPUT["check_estimator_sparse_matrix"] = _NET_INPUT["check_estimator_sparse_array"]
_NET_INPUT["check_estimator_sparse_tag"] = _NET_INPUT["check_estimator_sparse_array"]


def _expected_failed_checks(estimator):
    if isinstance(estimator, TestTimeAugmentationClassifier):
        return {"check_classifier_multioutput": _HISTOGRAM}
    if isinstance(estimator, MCDropoutClassifier):
        return {**_NET_INPUT, "check_classifier_multioutput": _HISTOGRAM}
    # SoftLabelNetClassifier: a skorch NeuralNet underneath
    return {
        **_NET_INPUT,
        "check_no_attributes_set_in_init": (
            "skorch's NeuralNet.__init__ sets history_, initialized_ and "
            "virtual_params_"
        ),
        "check_set_params": (
            "skorch's set_params registers every key for its own validation and "
            "fails on the check's sentinel values"
        ),
    }


@pytest.mark.slow
@parametrize_with_checks(
    [
        TestTimeAugmentationClassifier(
            GaussianNB(), augment=scale_rows, n_samples=3, random_state=0
        ),
        MCDropoutClassifier(_net(), n_samples=3, random_state=0),
        _net(),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    torch.set_num_threads(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)
