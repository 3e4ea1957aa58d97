"""The parameter constraints that the metric functions share, declared once.

Every public function of :mod:`sklearn_hcal.metrics` validates its arguments
once, at its entry, with scikit-learn's constraints (``validate_params``).
An argument that several metric functions take is declared here and nowhere else,
so that it is checked, and its error worded, the same way everywhere
(developer guide §registry). A module writes ``{**PAIR, "n_bins": N_BINS}``;
a constraint that only one function (or one module) has stays beside it.

The metric registry validates ``metric_params`` with the function's own
constraints (:meth:`~sklearn_hcal.metrics._registry.Metric.resolve_kwargs`),
so a report column, a scorer and the function raise the same error too.
"""

from __future__ import annotations

from numbers import Integral

from ..utils._compat import Interval

__all__ = [
    "ARRAY",
    "OPTIONAL_ARRAY",
    "COUNTS_AND_LABELS",
    "PAIR",
    "DISAGREEMENT_PAIR",
    "N_BINS",
    "DEBIASED",
    "BINNED_ESTIMATOR",
    "REPORT_COLUMNS",
]

#: A required array (``y_true``, ``y_prob``, ``y_disagreement``, ...).
ARRAY = ["array-like"]
#: An optional array: ``counts``, ``labels``, ``order``, ``sample_weight``...
OPTIONAL_ARRAY = ["array-like", None]

#: Beside the human labels of every metric: the ``counts`` that replace
#: ``y_true`` when routed as metadata, and the ``labels`` naming the classes
#: of the columns (developer guide §class-names).
COUNTS_AND_LABELS = {"counts": OPTIONAL_ARRAY, "labels": OPTIONAL_ARRAY}
#: The data of a metric of human labels (histograms, probability rows or
#: labels) against class probabilities.
PAIR = {"y_true": ARRAY, "y_prob": ARRAY, **COUNTS_AND_LABELS}
#: The same, with a predicted disagreement ``φ`` instead of probabilities.
DISAGREEMENT_PAIR = {"y_true": ARRAY, "y_disagreement": ARRAY, **COUNTS_AND_LABELS}

#: Equal-width bins (per class, or of the confidence / of ``φ``).
N_BINS = [Interval(Integral, 1, None, closed="left")]
#: Mimori et al.'s estimators: the bias correction (or the plug-in).
DEBIASED = ["boolean"]
#: Mimori et al.'s binned estimators: their bins and the bias correction.
BINNED_ESTIMATOR = {"n_bins": N_BINS, "debiased": DEBIASED}

#: Which registry columns a table computes, and their ``metric_params``
#: (as :func:`~sklearn_hcal.metrics.metrics_by_agreement` takes them).
REPORT_COLUMNS = {"metrics": [list, tuple, str, None], "metric_params": [dict, None]}
