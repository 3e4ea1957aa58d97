"""The inputs of a :class:`~sklearn_hcal.metrics.MetricState` chunk.

Torch tensors (CPU or CUDA) become numpy arrays; a chunk without
probabilities (the disagreement metrics with their own ``φ``) is validated
as the disagreement functions validate their labels.
"""

from __future__ import annotations

from .._validation import _Pair, frame_names

__all__ = []


def _host(x):
    """A torch tensor (CPU or CUDA) as a numpy array; anything else as it is."""
    if x is None or not type(x).__module__.startswith("torch"):
        return x
    if not hasattr(x, "detach"):
        return x
    import torch

    t = x.detach()
    if t.is_floating_point() and t.dtype not in (torch.float32, torch.float64):
        t = t.to(torch.float64)  # float16 / bfloat16 have no exact numpy twin
    return t.cpu().numpy()


def _labels_only(y_true, counts, labels) -> _Pair:
    """The human labels of a chunk without probabilities (φ given instead)."""
    from ._disagreement_kernels import _disagreement_histograms

    name = "y_true" if counts is None else "counts"
    human = y_true if counts is None else counts
    Y, n = _disagreement_histograms(human, name=name, labels=labels)
    classes = labels if labels is not None else frame_names(human, name=name)
    return _Pair(Y, None, n, True, classes=classes)
