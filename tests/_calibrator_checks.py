"""Expected failures of scikit-learn's generic checks for the calibrators.

With ``estimator=None`` a calibrator's ``X`` is the classifier output, one
score column per class. The generic checks feed arbitrary feature matrices
with 1-D labels covering fewer classes than ``X`` has columns; which column
each label names is then ambiguous, and classes travel by name (developer
guide §class-names: integer labels are not column positions), so ``fit`` raises and asks
for ``classes=``. The cross-fitted configurations (``estimator`` = an
unfitted classifier) pass every check; a ``FrozenEstimator`` configuration
cannot, since the frozen model fixes the width of ``X`` that the checks vary
(its behaviour is tested directly).
"""

LABELS_VS_COLUMNS = (
    "estimator=None: X must be one score column per class, and the check's "
    "labels cover fewer classes than X has columns; without classes= the "
    "labels cannot be matched to columns unambiguously, so fit raises"
)

_INPUT_MODE_CHECKS = [
    "check_all_zero_sample_weights_error",
    "check_classifiers_classes",
    "check_classifiers_train",
    "check_dtype_object",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_n_features_in_after_fitting",
    "check_non_transformer_estimators_n_iter",
    "check_pipeline_consistency",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
    "check_sample_weight_equivalence_on_dense_data",
    "check_transformer_data_not_an_array",
    "check_transformer_general",
    "check_transformer_n_iter",
    "check_transformer_preserve_dtypes",
]


def expected_failed_checks(estimator):
    """``expected_failed_checks`` for ``parametrize_with_checks``."""
    if estimator.estimator is None:
        return dict.fromkeys(_INPUT_MODE_CHECKS, LABELS_VS_COLUMNS)
    return {}
