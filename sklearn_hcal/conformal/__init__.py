"""Conformal prediction sets calibrated on label histograms.

:class:`HumanConformalClassifier` implements Monte Carlo conformal
prediction (Stutz et al. 2023, "Conformal prediction under ambiguous ground
truth", TMLR): prediction sets whose coverage guarantee holds for the human
label distribution, not only for the majority label. The set metrics are in
:mod:`sklearn_hcal.metrics` (:func:`~sklearn_hcal.metrics.aggregated_coverage_score`,
...).
"""

from .._lazy import attach

_PUBLIC = {
    "HumanConformalClassifier": "._classifier",
    "conformity_scores": "._scores",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
