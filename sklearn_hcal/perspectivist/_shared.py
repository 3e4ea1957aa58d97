"""The helpers of :mod:`sklearn_hcal.perspectivist` that other layers may use.

The layer's declared inside (developer guide §layers): ``hcal lewidi``
cross-validates both tracks with these.
"""

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
    "track_scores",
]
