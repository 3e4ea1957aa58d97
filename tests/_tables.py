"""Tables shared by several test files, stated once and independently of the code.

Scorer names and what each means (metric function, sign): the tests of the
scorers and of the registry both check the package against them.
"""

# Independent statement of what each scorer name means (metric, sign).
EXPECTED = {
    "neg_distribution_calibration_error": ("distribution_calibration_error", -1),
    "neg_entropy_calibration_error": ("entropy_calibration_error", -1),
    "ranking_calibration_score": ("ranking_calibration_score", 1),
    "neg_jensen_shannon_distance": ("jensen_shannon_distance", -1),
    "neg_kl_divergence": ("kl_divergence", -1),
    "neg_histogram_log_loss": ("histogram_log_loss", -1),
    "majority_accuracy": ("majority_accuracy_score", 1),
    "neg_expected_calibration_error": ("expected_calibration_error", -1),
    "neg_classwise_expected_calibration_error": (
        "classwise_expected_calibration_error",
        -1,
    ),
    "neg_expected_squared_loss": ("expected_squared_loss", -1),
    "neg_epistemic_loss": ("epistemic_loss", -1),
    "neg_calibration_loss": ("calibration_loss", -1),
    "neg_calibration_error": ("calibration_error", -1),
    "neg_dispersion_loss": ("dispersion_loss", -1),
    # human label variation: LeWiDi 2021-2025, Kurniawan et al. 2025
    "neg_soft_cross_entropy": ("soft_cross_entropy", -1),
    "neg_manhattan_distance": ("manhattan_distance", -1),
    "soft_accuracy": ("soft_accuracy_score", 1),
    "soft_micro_f1": ("soft_micro_f1_score", 1),
    "po_jsd": ("po_jsd_score", 1),
}
# Scorers of metrics for ordered classes, or undefined when every item is
# unanimous (one label per item): not in HUMAN_SCORERS.
NOT_FOR_ALL_LABELS = {
    "neg_wasserstein_distance": ("wasserstein_distance", -1),
    "neg_ranked_probability_score": ("ranked_probability_score_loss", -1),
    "entropy_correlation": ("entropy_correlation_score", 1),
}
DISAGREEMENT = {
    "neg_disagreement_squared_loss": ("disagreement_squared_loss", -1),
    "neg_disagreement_calibration_loss": ("disagreement_calibration_loss", -1),
    "neg_disagreement_calibration_error": ("disagreement_calibration_error", -1),
}
# Plug-in variants of Mimori et al.'s estimators: scorers, not in HUMAN_SCORERS.
PLUGIN = {
    f"neg_{name}_plugin": (name, -1)
    for name in ("epistemic_loss", "calibration_loss", "calibration_error")
    + ("dispersion_loss",)
}
