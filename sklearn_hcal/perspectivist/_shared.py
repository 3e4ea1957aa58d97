"""The helpers of :mod:`sklearn_hcal.perspectivist` that other layers may use.

The layer's declared inside (developer guide §layers): ``hcal lewidi``
cross-validates both tracks with these, and checks ``--transformer-model``
with :func:`resolve_model_path` before reading any file.
"""

from ._encoders import resolve_model_path
from ._evaluation import (
    baseline_probabilities,
    cross_val_tracks,
    predict_tracks,
    track_scores,
)

__all__ = [
    "baseline_probabilities",
    "cross_val_tracks",
    "predict_tracks",
    "resolve_model_path",
    "track_scores",
]
