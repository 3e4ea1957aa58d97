"""Visual diagnostics of calibration against human label distributions.

Displays in the style of scikit-learn's visualisation API (``from_estimator``,
``from_predictions``, ``plot(ax=None)`` returning the display) for the figures
of the three papers the package implements:

* :class:`MajorityReliabilityDisplay` -- confidence reliability diagram
  against the human majority, with per-bin counts (Baan et al. 2022, Fig. 1c-d);
* :class:`InstanceErrorDisplay` -- histograms of instance-level DistCE and
  EntCE (Baan et al. 2022, Figs. 1a-b and 2), with
  :func:`error_histogram_divergence` for their Table 2;
* :class:`HumanModelMarginalDisplay` -- human-versus-model histograms of class
  probabilities, k-th guesses, DistCE and entropy (Baan et al. 2022, App. B);
* :class:`DisagreementReliabilityDisplay` -- reliability diagram of predicted
  disagreement probabilities (Mimori et al. 2021, Figs. 1 and 5b);
* :class:`CalibrationDispersionDisplay` -- calibration-dispersion map
  (Mimori et al. 2021, Fig. 5a);
* :class:`AgreementBinDisplay` -- a metric per bin of human agreement (Nie et
  al. 2020, ChaosNLI Figs. 4-5);
* :class:`AnnotatorAgreementDisplay` -- each annotator's agreement with the
  others (α without it, the leave-one-out majority), a model among them;
* :class:`ConformalCoverageDisplay` -- coverage of the human distribution and
  set size of conformal prediction sets against the level (Stutz et al. 2023);
* :class:`RiskCoverageDisplay` -- risk-coverage curve of deferral to people.

matplotlib is optional (``pip install "sklearn-hcal[plot]"``); importing this
module does not import it, building a figure does.
"""

from .._lazy import attach

_PUBLIC = {
    "MajorityReliabilityDisplay": "._reliability",
    "InstanceErrorDisplay": "._instance_errors",
    "error_histogram_divergence": "._instance_errors",
    "HumanModelMarginalDisplay": "._marginals",
    "DisagreementReliabilityDisplay": "._disagreement",
    "CalibrationDispersionDisplay": "._calibration_map",
    "AgreementBinDisplay": "._agreement",
    "AnnotatorAgreementDisplay": "._annotator_agreement",
    "ConformalCoverageDisplay": "._conformal",
    "RiskCoverageDisplay": "._deferral",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
