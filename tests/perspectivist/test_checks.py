"""scikit-learn's estimator checks, with the expected failures and why.

The checks feed plain feature matrices: the classifier is checked with
``item=None, annotator=None`` (every row its own item, no annotator
column), which exercises its wrapping of the estimator, its input checks
and its decisions. ``ordinal=False`` because the checks' integer labels
0, 1, 2 would otherwise be a scale, whose ``predict`` is the median of
``predict_proba`` (the Bayes decision for the absolute distance) rather
than the argmax the checks compare with; the median is tested in
``test_decisions.py``.
"""

from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_hcal.perspectivist import (
    AnnotationVectorizer,
    OrdinalClassifier,
    PerspectivistClassifier,
)

WEIGHTS_REACH_THE_LAST_STEP = (
    "the default pipeline passes sample_weight to its logistic regression only; "
    "AnnotationVectorizer's scaling of numeric columns is fitted on the rows "
    "unweighted (as a Pipeline does), so weights are not repeated rows there"
)


def _expected(estimator):
    if isinstance(estimator, PerspectivistClassifier) and estimator.estimator is None:
        return {
            "check_sample_weight_equivalence_on_dense_data": (
                WEIGHTS_REACH_THE_LAST_STEP
            )
        }
    return {}


@parametrize_with_checks(
    [
        PerspectivistClassifier(item=None, annotator=None, ordinal=False),
        PerspectivistClassifier(
            LogisticRegression(), item=None, annotator=None, ordinal=False
        ),
        OrdinalClassifier(),
        AnnotationVectorizer(),
    ],
    expected_failed_checks=_expected,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
