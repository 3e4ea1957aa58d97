"""What the soft-label net does with its inputs before skorch sees them.

Target preparation (histograms to soft targets), the epoch score against the
majority, seeding, scikit-learn's checks of numpy inputs and the
``n_classes`` of a module class. Pure numpy and scikit-learn: importing this
module imports neither torch nor skorch.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from .._validation import check_label_histograms

# ---------------------------------------------------------------------------
# target preparation (pure numpy, shared by the net)


def _prepare_targets(y, classes=None):
    """Turn histograms or labels into training targets for a soft-label net.

    Returns ``(targets, classes)``: float32 rows ``Y / n`` for a histogram
    (the probability targets accepted by ``torch.nn.CrossEntropyLoss``), or
    int64 class indices for 1-D labels.
    """
    raw = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
    if raw.ndim == 2 and raw.shape[1] > 1:
        Y, found = check_label_histograms(
            y, name="y", allow_probabilities=True, return_classes=True
        )
        if classes is not None and len(classes) != Y.shape[1]:
            raise ValueError(
                f"y has {Y.shape[1]} classes (columns) but the net was given "
                f"classes={list(classes)!r} ({len(classes)} classes)."
            )
        targets = (Y / Y.sum(axis=1, keepdims=True)).astype(np.float32)
        return targets, np.asarray(found if classes is None else classes)
    labels = column_or_1d(raw, warn=True)
    check_classification_targets(labels)
    if classes is None:
        found, idx = np.unique(labels, return_inverse=True)
        return idx.astype(np.int64), found
    classes = np.asarray(classes)
    Y, _ = check_label_histograms(
        labels, name="y", classes=classes, return_classes=True
    )
    return Y.argmax(axis=1).astype(np.int64), classes


def _check_valid_targets(y) -> None:
    """fit's checks of a validation set's 2-D targets (counts or probabilities).

    A predefined validation split reaches skorch without passing through
    :func:`_prepare_targets`; its histograms are checked here, naming them.
    """
    if y is None:
        return
    raw = y.detach().cpu().numpy() if hasattr(y, "detach") else y
    if np.ndim(raw) == 2 and np.shape(raw)[1] > 1:
        check_label_histograms(
            raw, name="the validation targets (train_split)", allow_probabilities=True
        )


def _valid_majority_accuracy(net, X, y):
    """Accuracy against the majority class of soft (or index) targets.

    Used as the ``valid_acc`` epoch score: skorch's default ``"accuracy"``
    cannot compare predictions with probability targets.
    """
    pred = net.predict_proba(X).argmax(axis=1)
    y = y.detach().cpu().numpy() if hasattr(y, "detach") else np.asarray(y)
    truth = y.argmax(axis=1) if y.ndim == 2 else y.astype(np.int64)
    return float(np.mean(pred == truth))


def _seed_from(random_state) -> int | None:
    if random_state is None:
        return None
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, bool
    ):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    raise ValueError(
        "random_state must be None, an int or a numpy RandomState, got "
        f"{random_state!r}."
    )


def _takes_n_classes(module_cls) -> bool:
    import inspect

    try:
        return "n_classes" in inspect.signature(module_cls).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False


def _plain_array(X):
    """Array-likes skorch does not know (``__array__`` only) as numpy arrays."""
    known = isinstance(X, (np.ndarray, list, tuple, dict)) or hasattr(X, "iloc")
    if not known and hasattr(X, "__array__") and not hasattr(X, "detach"):
        from scipy import sparse

        if not sparse.issparse(X):
            return np.asarray(X)
    return X


def _validate_X(net, X, *, reset: bool):
    """scikit-learn's checks of a numpy ``X``; records ``n_features_in_``.

    Other inputs (tensors, dicts, DataFrames, datasets) go to skorch as they
    are. Arrays of any rank are allowed (images); NaN and infinity, empty
    arrays and zero-width 2-D arrays are refused with scikit-learn's errors.
    """
    from sklearn.utils.validation import check_array

    X = _plain_array(X)
    if not isinstance(X, np.ndarray):
        return X
    X = check_array(
        X, dtype=None, allow_nd=True, ensure_2d=False, input_name="X", copy=False
    )
    if reset:
        if X.ndim >= 2:
            net.n_features_in_ = X.shape[1]
        elif hasattr(net, "n_features_in_"):
            del net.n_features_in_
    else:
        _check_n_features(net, X)
    return X


def _check_n_features(net, X):
    expected = getattr(net, "n_features_in_", None)
    if expected is None or not getattr(net, "initialized_", False):
        return
    if X.ndim < 2:
        raise ValueError(
            f"Expected 2D array, got {X.ndim}D array instead: the net was fitted "
            f"on {expected} features. Reshape your data either using "
            "array.reshape(-1, 1) if your data has a single feature or "
            "array.reshape(1, -1) if it contains a single sample."
        )
    if X.shape[1] != expected:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(net).__name__} is expecting "
            f"{expected} features as input."
        )
