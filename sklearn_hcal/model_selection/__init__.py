"""Model-selection helpers for label histograms and annotation tables.

scikit-learn's own ``cross_validate`` and ``GridSearchCV`` work unchanged with
the scorers of :mod:`sklearn_hcal.metrics`; this module adds what they lack:
out-of-fold probabilities for histograms, and splitters that hold
annotations out of a long table (one per item, or whole annotators).
"""

from .._lazy import attach

_PUBLIC = {
    "cross_val_predict_proba": "._predict",
    "OneAnnotationPerItemSplit": "._annotations",
    "AnnotatorKFold": "._annotations",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
