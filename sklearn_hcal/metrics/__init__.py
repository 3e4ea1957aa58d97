"""Human-calibration metrics, reports and scorers.

Metrics from Baan et al. (2022), Nie et al. (2020, ChaosNLI) and Mimori et al.
(2021), computed from label histograms. ``*_score`` is higher-is-better,
``*_error`` and ``*_loss`` lower-is-better.

Classes (``labels=``, as in :func:`sklearn.metrics.log_loss`)
--------------------------------------------------------------
Columns are matched by class name, never guessed. ``labels`` gives the class
of each column of ``y_prob`` in the columns' order (any order; scikit-learn's
``log_loss`` instead assumes the sorted order); without it a DataFrame
``y_prob``'s column names are the classes, else the columns are positional.
1-D labels ``y_true`` are looked up among those classes; with positional
columns the sorted distinct labels are the classes and must number
``n_classes`` (else a ``ValueError`` asks for ``labels=``: labels ``[1, 1]``
cannot say which of three columns they are). When ``y_true`` (or ``counts``)
is a DataFrame and ``y_prob`` carries names too, ``y_prob``'s columns are
put in ``y_true``'s order, and different names raise. When ``y_true`` names
its classes and ``y_prob`` is an array without names (``predict_proba``'s
output), its columns are read by position only when ``y_true``'s names are in
sorted order (the order of a classifier's ``classes_``); otherwise a
``ValueError`` shows both orders and asks for ``labels=`` (e.g.
``labels=clf.classes_``). Ordinal metrics also need the scale's order:
numeric class names are ordered by value, word names need ``order=``. A 2-D
array ``y_true`` takes its class names from ``labels``. Probability rows within
``row_sum_tolerance(K)`` of 1 (rounded to 3 decimals) are renormalised.
The same rules hold for the report functions (``labels=``); scorers pass the
estimator's ``classes_`` as ``labels``.

Items
-----
Rows are matched by item when they can be: when ``y_true`` (or ``counts``)
and a prediction (``y_prob``, ``y_set``, ``y_score``, a report's
predictions) are both pandas objects indexed by items -- any index but the
default ``RangeIndex`` --, the prediction's rows are taken in ``y_true``'s
order (an aggregator's posteriors, sorted by item, against a LeWiDi file's
counts, in file order), and a missing, extra or repeated item raises. Arrays
match by position.
"""

from .._lazy import attach

_PUBLIC = {
    # Baan et al. 2022 / ChaosNLI: distribution-level metrics
    "distribution_calibration_error": "._distribution",
    "entropy_calibration_error": "._distribution",
    "ranking_calibration_score": "._distribution",
    "jensen_shannon_distance": "._distribution",
    "kl_divergence": "._distribution",
    "histogram_log_loss": "._distribution",
    # against the majority label
    "majority_accuracy_score": "._majority",
    "expected_calibration_error": "._majority",
    "classwise_expected_calibration_error": "._majority",
    # Mimori et al. 2021: (de)biased estimators from label histograms
    "expected_squared_loss": "._mimori",
    "epistemic_loss": "._mimori",
    "calibration_loss": "._mimori",
    "calibration_error": "._mimori",
    "dispersion_loss": "._mimori",
    # disagreement probability (Mimori et al. §4)
    "disagreement_probability": "._disagreement",
    "predicted_disagreement": "._disagreement",
    "disagreement_squared_loss": "._disagreement",
    "disagreement_calibration_loss": "._disagreement",
    "disagreement_calibration_error": "._disagreement",
    # human label variation: LeWiDi 2021-2025, Kurniawan et al. 2025
    "soft_cross_entropy": "._hlv",
    "manhattan_distance": "._hlv",
    "soft_accuracy_score": "._hlv",
    "soft_micro_f1_score": "._hlv",
    "po_jsd_score": "._hlv",
    "entropy_correlation_score": "._hlv",
    # ordered classes (Likert scales)
    "wasserstein_distance": "._ordinal",
    "ranked_probability_score_loss": "._ordinal",
    # multi-label data, one binary distribution per label
    "multilabel_manhattan_distance": "._multilabel",
    "multilabel_soft_micro_f1_score": "._multilabel",
    "multilabel_po_jsd_score": "._multilabel",
    "multilabel_entropy_correlation_score": "._multilabel",
    # per-annotator (perspectivist) evaluation, LeWiDi 2025
    "perspectivist_error_rate": "._annotators",
    "perspectivist_absolute_distance": "._annotators",
    "annotator_report": "._annotators",
    # both LeWiDi tracks as the organisers score them
    "lewidi_scores": "._lewidi",
    # annotator-level predictions on held-out annotations
    "make_annotation_scorer": "._annotation_scorer",
    # prediction sets (conformal prediction, Stutz et al. 2023)
    "aggregated_coverage_score": "._sets",
    "majority_coverage_score": "._sets",
    "mean_set_size": "._sets",
    "coverage_by_set_size": "._sets",
    "size_stratified_coverage_score": "._sets",
    "make_set_scorer": "._sets",
    # deferral by predicted disagreement: risk-coverage curves
    "deferral_score": "._deferral",
    "risk_coverage_curve": "._deferral",
    "aurc_loss": "._deferral",
    "risk_at_coverage_loss": "._deferral",
    "make_deferral_scorer": "._deferral",
    # agreement among annotators (Krippendorff, Fleiss, Cohen)
    "krippendorff_alpha": "._agreement",
    "fleiss_kappa": "._agreement",
    "pairwise_cohen_kappa": "._agreement",
    "item_agreement": "._agreement",
    "annotator_agreement": "._agreement",
    "model_agreement": "._agreement",
    # reports
    "instance_calibration_errors": "._tables",
    "loss_decomposition": "._tables",
    "metrics_by_agreement": "._tables",
    "human_calibration_report": "._report",
    # chunk-wise evaluation: mergeable states (dask arrays use them too)
    "MetricState": "._streaming._state",
    "report_from_states": "._streaming._report",
    # scorers
    "make_human_scorer": "._scorer",
    "get_human_scorer": "._scorer",
    "get_human_scorer_names": "._scorer",
    "HUMAN_SCORERS": "._scorer",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
