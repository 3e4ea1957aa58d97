"""Model-selection helpers for label histograms.

scikit-learn's own ``cross_validate`` and ``GridSearchCV`` work unchanged with
the scorers of :mod:`sklearn_hcal.metrics`; this module adds what they lack.
"""

from .._lazy import attach

_PUBLIC = {"cross_val_predict_proba": "._predict"}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
