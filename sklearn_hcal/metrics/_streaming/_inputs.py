"""The inputs of a :class:`~sklearn_hcal.metrics.MetricState` chunk.

Also the functions that have no state (they are not sums over items), with
what to use instead.

dask collections are recognised without importing dask; torch tensors
(CPU or CUDA) become numpy arrays; a chunk without
probabilities (the disagreement metrics with their own ``φ``) is validated
as the disagreement functions validate their labels.
"""

from __future__ import annotations

from ..._validation import Pair, frame_names
from .. import _registry
from .._disagreement_kernels import _disagreement_histograms

__all__ = [
    "NOT_CHUNKWISE",
    "chunkwise_metric",
    "host_array",
    "is_dask_collection",
    "labels_only",
]

#: The dask collections read chunk-wise, by class name.
_DASK_TYPES = ("Array", "DataFrame", "Series")


def is_dask_collection(x) -> bool:
    """Whether ``x`` is a dask array, DataFrame or Series (without importing
    dask: recognised by its type's module)."""
    cls = type(x)
    return cls.__name__ in _DASK_TYPES and cls.__module__.startswith("dask.")


#: Why the functions that are not registry metrics have no chunk-wise form,
#: and what to use instead.
NOT_CHUNKWISE = {
    "metrics_by_agreement": "its agreement bins are quantiles (or the range) "
    "of the human entropies of all the items, which no sum over chunks "
    "gives. Compute the arrays (x.compute(), or a numpy memory map), or give "
    "each agreement bin its own MetricState",
    "instance_calibration_errors": "it returns one row per item, not a "
    "reduction. Apply it to each block with dask.array.map_blocks, or compute "
    "the arrays",
    "disagreement_probability": "it returns one value per item. Apply it to "
    "each block with dask.array.map_blocks",
    "predicted_disagreement": "it returns one value per item. Apply it to "
    "each block with dask.array.map_blocks",
    "loss_decomposition": "it is a table of registry metrics: "
    "human_calibration_report(y_true, y_prob, metrics=['sq_loss', 'el', "
    "'el_plugin', 'il', 'il_plugin', 'cl', 'cl_plugin', 'dl', 'dl_plugin', "
    "'ce', 'ce_plugin']) accepts dask arrays and gives the same terms",
}


def chunkwise_metric(name):
    """The registry metric ``name``; for a function that is not a sum over
    items, an error that says why and what to use instead."""
    if isinstance(name, str) and name in NOT_CHUNKWISE:
        raise ValueError(f"{name} has no mergeable state: {NOT_CHUNKWISE[name]}.")
    return _registry.get_metric(name)


def host_array(x):
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


def labels_only(y_true, counts, labels) -> Pair:
    """The human labels of a chunk without probabilities (φ given instead)."""
    name = "y_true" if counts is None else "counts"
    human = y_true if counts is None else counts
    Y, n = _disagreement_histograms(human, name=name, labels=labels)
    classes = labels if labels is not None else frame_names(human, name=name)
    return Pair(Y, None, n, True, classes=classes)
