"""sklearn-hcal: calibrate classifiers to human label distributions.

Metrics live in :mod:`sklearn_hcal.metrics`, data sets in
:mod:`sklearn_hcal.datasets`; the estimators are importable from here.
"""

from ._lazy import attach

__version__ = "0.1.0.dev0"

_PUBLIC = {
    "SoftLabelClassifier": "._soft_label",
    "make_soft_label_net": "._skorch",
    "SoftLabelNetClassifier": "._skorch",
    "SmallCNN": "._skorch",
    "skorch_logits": "._skorch",
    "HumanMetricsCallback": "._skorch_callbacks",
    "TemperatureScaler": ".calibration._temperature",
    "VectorScaler": ".calibration._scaling",
    "MatrixScaler": ".calibration._scaling",
    "AlphaCalibrator": ".calibration._alpha",
    "MCDropoutClassifier": ".calibration._ensemble",
    "TestTimeAugmentationClassifier": ".calibration._ensemble",
}

__all__ = sorted(_PUBLIC) + ["__version__"]

__getattr__, __dir__ = attach(__name__, _PUBLIC)
