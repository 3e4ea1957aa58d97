"""Calibrators: logit scalers, α-calibration and ensemble baselines.

The public names are re-exported from :mod:`sklearn_hcal`.
"""

from .._lazy import attach

_PUBLIC = {
    "TemperatureScaler": "._temperature",
    "VectorScaler": "._scaling",
    "MatrixScaler": "._scaling",
    "AlphaCalibrator": "._alpha",
    "MCDropoutClassifier": "._ensemble",
    "TestTimeAugmentationClassifier": "._ensemble",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
