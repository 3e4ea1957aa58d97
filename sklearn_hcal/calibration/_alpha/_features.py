"""Features ``g(x)`` of α-calibration's concentration model.

``AlphaCalibrator(features=...)`` reads the classifier's logits, a named layer
of a skorch module (captured with a forward hook), its penultimate
representation (the input of the module's last ``torch.nn.Linear``, as Mimori
et al. 2021 use), or a user callable; :func:`standardize_features` puts
them on a unit scale. This module holds the skorch and torch
introspection, so the estimator never touches a module's internals.
"""

from __future__ import annotations

import numpy as np

from ..._frontend import unwrap_frozen
from ...utils._optional import import_optional, is_skorch_net
from ...utils._pipeline import get_method

__all__ = [
    "as_feature_array",
    "extract_features",
    "find_skorch_net",
    "apply_standardization",
    "member_probabilities",
    "standardize_features",
]


def find_skorch_net(estimator):
    """The (fitted) skorch net inside ``estimator``, searching wrappers."""
    seen = set()
    stack = [estimator]
    while stack:
        obj = stack.pop()
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        if is_skorch_net(obj):
            return obj
        for attr in ("estimator_", "estimator", "net", "calibrated_estimator_"):
            child = obj.__dict__.get(attr) if hasattr(obj, "__dict__") else None
            if child is not None:
                stack.append(child)
    return None


def member_probabilities(estimator):
    """An ensemble's ``predict_proba_samples``, also at the end of a Pipeline
    (its members would otherwise collapse silently to their mean), or None."""
    if estimator is None:
        return None
    return get_method(unwrap_frozen(estimator), "predict_proba_samples")


def _penultimate_module(module):
    """The last ``torch.nn.Linear`` of ``module``: its input is the penultimate
    representation (Mimori et al. use the layer feeding the final dense layer)."""
    torch = import_optional("torch")
    last = None
    for name, sub in module.named_modules():
        if isinstance(sub, torch.nn.Linear):
            last = (name, sub)
    if last is None:
        raise ValueError(
            "features='penultimate' needs a torch.nn.Linear layer in the skorch "
            "module; none was found. Pass a layer name instead; available: "
            f"{[n for n, _ in module.named_modules() if n]}."
        )
    return last


def _skorch_layer_features(net, X, layer):
    """Activations of a named submodule (or the penultimate input) via a hook."""
    modules = dict(net.module_.named_modules())
    if layer == "penultimate":
        _, target = _penultimate_module(net.module_)
        use_input = True
    else:
        if layer not in modules or layer == "":
            available = [name for name in modules if name]
            raise ValueError(
                f"features={layer!r} is not a submodule of the skorch net's module; "
                f"available layers: {available}."
            )
        target, use_input = modules[layer], False
    captured = []

    def hook(mod, inputs, output):
        value = inputs[0] if use_input else output
        captured.append(value.detach().reshape(value.shape[0], -1).cpu().double())

    if isinstance(X, np.ndarray) and X.dtype == np.float64:
        X = X.astype(np.float32)  # skorch modules are float32
    handle = target.register_forward_hook(hook)
    try:
        net.forward(X, training=False)
    finally:
        handle.remove()
    torch = import_optional("torch")
    return torch.cat(captured).numpy()


def as_feature_array(G) -> np.ndarray:
    """``G`` as a float array without a copy when it is float32 or float64.

    The features are standardised into one float64 copy
    (:func:`standardize_features`) or, at prediction, centred into one; a
    float32 matrix (penultimate layers, 512 or more columns) converted here
    first would be copied twice (a quarter of a 512-d fit's time). Other
    dtypes (integers, float16, objects) become float64.

    Examples
    --------
    >>> import numpy as np
    >>> G = np.ones((2, 3), dtype=np.float32)
    >>> as_feature_array(G) is G, as_feature_array([[1, 2]]).dtype
    (True, dtype('float64'))
    """
    G = np.asarray(G)
    if G.dtype == np.float32 or G.dtype == np.float64:
        return G
    return G.astype(np.float64)


def extract_features(features, estimator, X, logits) -> np.ndarray:
    """``g(X)`` as an ``(n_samples, n_features)`` float32 or float64 array.

    Parameters
    ----------
    features : {"logits", "penultimate"}, str or callable
        See :class:`~sklearn_hcal.AlphaCalibrator`.
    estimator : fitted estimator or None
        Searched for a skorch net for layer features.
    X : array-like
        Input of the estimator.
    logits : ndarray or callable
        The classifier's logits, or a function computing them (called only
        for ``features="logits"``).
    """
    from ...utils._compat import num_samples

    if callable(features):
        G = as_feature_array(features(X))
        if G.ndim == 1:
            G = G[:, None]
        if G.ndim != 2 or G.shape[0] != num_samples(X):
            raise ValueError(
                "features(X) must return an array of shape (n_samples, "
                f"n_features), got shape {G.shape}."
            )
        return G
    if features == "logits":
        return logits() if callable(logits) else logits
    net = find_skorch_net(estimator) if estimator is not None else None
    if net is None:
        raise ValueError(
            f"features={features!r} needs a fitted skorch net as the estimator "
            "(possibly inside FrozenEstimator or a calibrator); use "
            "features='logits' or a callable otherwise."
        )
    return _skorch_layer_features(net, X, features)


def standardize_features(G, sample_weight=None):
    """``(H, mean, scale)`` with ``H = (G - mean) / scale`` in float64.

    One float64 copy of ``G``, centred as it is written (unweighted) or in
    place, then scaled in place (``G`` itself is never modified, and no other
    temporary of its size is made: about a tenth of the time of
    ``(G - G.mean(0)) / G.std(0)`` at 100,000 × 512). The
    moments are weighted by ``sample_weight`` (integer weights equal repeated
    rows). When squares would overflow (features beyond ~1e154), each column
    is first divided by a power of two (exact), so features of any finite
    magnitude give a finite scale. A constant feature gets ``scale = 1``.
    Prediction standardises new features the same way
    (:func:`apply_standardization`).

    Parameters
    ----------
    G : array-like of shape (n_samples, n_features)
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    H : ndarray of shape (n_samples, n_features), float64
    mean, scale : ndarray of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> H, mean, scale = standardize_features(np.array([[1.0, 5.0], [3.0, 5.0]]))
    >>> H, mean, scale
    (array([[-1.,  0.],
           [ 1.,  0.]]), array([2., 5.]), array([1., 1.]))
    """
    G = np.asarray(G)
    if G.dtype != np.float32:
        G = G.astype(np.float64, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        H, mean, scale = _centred(G, sample_weight)
    c = np.ones(H.shape[1])
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(scale))):
        # Squares overflowed (features beyond ~1e154): start again with each
        # column divided by a power of two (exact), and undo it at the end.
        H = np.array(G, dtype=np.float64, order="C")
        peak = np.max(np.abs(H), axis=0)
        c = np.where(
            (peak > 0) & np.isfinite(peak), np.ldexp(1.0, np.frexp(peak)[1] - 1), 1.0
        )
        H /= c
        mean, scale = _centre_in_place(H, sample_weight)
    # constant columns (to rounding): nothing to scale, H is 0 there
    constant = (scale == 0) | (scale <= 1e-12 * np.abs(mean))
    scale[constant] = 1.0 / c[constant]
    # times the reciprocal: a division over the whole array costs 2.5 times
    # a product (16.5 against 6.6 ms at 20,000 × 512), for at most one unit
    # in the last place
    H *= 1.0 / scale
    return H, mean * c, scale * c


def apply_standardization(G, mean, scale) -> np.ndarray:
    """``(G - mean) / scale`` as :func:`standardize_features` computes it.

    Multiplied by the reciprocal of ``scale``, as at fit time, so that the
    training features and the same features at prediction are equal to the
    bit (below ~1e154, where the fit does not rescale the columns first).

    Examples
    --------
    >>> import numpy as np
    >>> G = np.array([[1.0, 5.0], [3.0, 5.0]])
    >>> H, mean, scale = standardize_features(G)
    >>> np.array_equal(apply_standardization(G, mean, scale), H)
    True
    """
    return (G - mean) * (1.0 / scale)


def _centred(G, sample_weight):
    """``(G - mean, mean, std)``, the first a new C-ordered float64 array.

    Unweighted, the mean is read from ``G`` itself (float32 features are
    summed in float64, as their float64 copy would be) and the centred
    copy written in one pass, where copying first and centring the copy in
    place reads and writes it twice (0.026 against 0.016 s for the mean and
    the copy at 20,000 × 512 float32).
    """
    if sample_weight is None:
        mean = np.mean(G, axis=0, dtype=np.float64)
        H = np.subtract(G, mean, out=np.empty(G.shape))
        var = np.einsum("ij,ij->j", H, H) / max(H.shape[0], 1)
        return H, mean, np.sqrt(var)
    H = np.array(G, dtype=np.float64, order="C")
    return (H,) + _centre_in_place(H, sample_weight)


def _centre_in_place(H, sample_weight):
    """Subtract the (weighted) column means from ``H``; ``(mean, std)``."""
    if sample_weight is None:
        mean = H.mean(axis=0)
        H -= mean
        var = np.einsum("ij,ij->j", H, H) / max(H.shape[0], 1)
    else:
        w = np.asarray(sample_weight, dtype=np.float64)
        mean = (w @ H) / w.sum()
        H -= mean
        var = np.einsum("i,ij,ij->j", w, H, H) / w.sum()
    return mean, np.sqrt(var)
