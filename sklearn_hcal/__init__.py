"""sklearn-hcal: calibrate classifiers to human label distributions.

Metrics live in :mod:`sklearn_hcal.metrics`, data sets in
:mod:`sklearn_hcal.datasets`; the estimators are importable from here.
"""

from ._lazy import attach

__version__ = "0.1.0.dev0"

_PUBLIC = {
    "SoftLabelClassifier": "._training",
    "make_soft_label_net": "._training",
    "SoftLabelNetClassifier": "._training",
    "SmallCNN": "._training",
    "skorch_logits": "._frontend",
    "TemperatureScaler": ".calibration",
    "VectorScaler": ".calibration",
    "MatrixScaler": ".calibration",
    "AlphaCalibrator": ".calibration",
    "MCDropoutClassifier": ".calibration",
    "TestTimeAugmentationClassifier": ".calibration",
    "HumanConformalClassifier": ".conformal",
    "predict_disagreement": ".utils._pipeline",
    "HumanMetricsCallback": "._training",
}

__all__ = sorted(_PUBLIC) + ["__version__"]

__getattr__, __dir__ = attach(__name__, _PUBLIC)
