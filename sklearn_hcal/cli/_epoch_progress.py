"""The demo's per-epoch progress line, as a skorch callback.

A module of its own so that the class is defined once, at module level, and
skorch is imported only when the demo trains its network (the ``torch``
extra; :func:`~sklearn_hcal.utils._optional.import_optional` names it).
"""

from __future__ import annotations

from ..utils._optional import import_optional
from ..utils._progress import Progress

skorch = import_optional("skorch")

__all__ = ["EpochProgress"]


class EpochProgress(skorch.callbacks.Callback):
    """Report each finished epoch and its training loss on ``progress``."""

    def __init__(self, progress: Progress, total: int) -> None:
        self.progress = progress
        self.total = total

    def on_epoch_end(self, net, **kwargs) -> None:
        loss = net.history[-1].get("train_loss", float("nan"))
        self.progress.update(
            "training CNN epoch", len(net.history), self.total, f"loss {loss:.4f}"
        )
