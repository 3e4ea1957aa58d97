"""The estimators' front end: one way to read ``X``, ``y`` and their classes.

Every estimator fitted on human labels goes through the same front end
(developer guide §estimators), in two levels, so that a family takes what
it needs and nothing more:

1. **Targets** -- :class:`HumanTargetMixin` (:mod:`._targets`):
   ``counts=`` routed as metadata replaces ``y``; histograms or labels
   checked (:class:`Targets`); classes aligned by name with a reference or
   named by the ``classes`` parameter, which sets ``classes_``;
   ``sample_weight`` checked naming the row and the value; ``score``
   (majority accuracy for histograms, accuracy for labels). Estimators
   fitted on a long table of annotations (aggregation, perspectivist
   models: one label per row) read it with the validation layer's one
   reader of such tables and take from this level only what they use --
   the perspectivist classifier its item weights (:class:`ItemWeightsMixin`)::

       class PerspectivistClassifier(..., ItemWeightsMixin, BaseEstimator):
           def fit(self, X, y, sample_weight=None):
               table = read_annotation_table(X, item=self.item,
                                             annotator=self.annotator,
                                             owner="PerspectivistClassifier")
               labels, source = annotation_labels(table, y)  # one per row
               classes = annotation_classes(table, labels, self.classes,
                                            source=source)
               label_codes(table, labels, classes, source=source)
               weights = self._item_weights(sample_weight, X)
               ...

2. **A classifier's output** -- :class:`ClassifierOutputMixin`, for
   estimators whose ``X`` is a classifier's scores or probabilities
   (``estimator=None``, read as logits or probabilities by ``input=``,
   a DataFrame's columns aligned with the target's classes by name, the
   positional rule for unnamed arrays) or the input of a wrapped
   ``FrozenEstimator`` (its ``classes_`` name the columns). The
   calibrators and the conformal classifier inherit it; ``fit`` calls
   ``self._fit_front(X, y, sample_weight, counts)`` and gets a
   :class:`FrontEndFit` ``(outputs, Y, sample_weight)``; prediction calls
   ``self._predict_outputs(X)``. What is read from a classifier is a hook
   (``_outputs``, ``_input_outputs``); what happens to an unfrozen one is
   another (``_unfrozen_outputs``: refused by default, cross-fitted by the
   calibrators).

The helpers the hooks use are plain names here too: the scores and
probabilities of a classifier or of ``estimator=None`` input
(:mod:`._scores`), a skorch net's logits (:mod:`._logits`, public as
:func:`sklearn_hcal.skorch_logits`; torch is imported only when it runs),
the prefit rule, which class each output column is (:mod:`._columns`), and
the one wording of rows predicted by a fallback (:mod:`._fallbacks`).
The package sits on the validation layer and below every estimator
(developer guide §layers).
"""

from ._classifier_output import ClassifierOutputMixin, FrontEndFit
from ._columns import check_positional_scores, estimator_classes, input_column_classes
from ._fallbacks import unseen_rows, warn_fallbacks
from ._logits import skorch_logits
from ._scores import (
    class_columns,
    contains_skorch_net,
    get_probabilities,
    get_scores,
    is_fitted,
    is_prefit,
    log_softmax,
    probabilities_from_input,
    read_input_type,
    scores_from_input,
    softmax,
    unwrap_frozen,
)
from ._targets import (
    HumanScoreMixin,
    HumanTargetMixin,
    ItemWeightsMixin,
    Targets,
    check_item_weights,
    check_min_samples,
    check_new_labels,
    check_target,
    human_score,
    resolve_targets,
    select_target,
)

__all__ = [
    "ClassifierOutputMixin",
    "FrontEndFit",
    "HumanScoreMixin",
    "HumanTargetMixin",
    "ItemWeightsMixin",
    "Targets",
    "check_item_weights",
    "check_min_samples",
    "check_new_labels",
    "check_positional_scores",
    "check_target",
    "class_columns",
    "contains_skorch_net",
    "estimator_classes",
    "get_probabilities",
    "get_scores",
    "human_score",
    "input_column_classes",
    "is_fitted",
    "is_prefit",
    "log_softmax",
    "probabilities_from_input",
    "read_input_type",
    "resolve_targets",
    "scores_from_input",
    "select_target",
    "skorch_logits",
    "softmax",
    "unseen_rows",
    "unwrap_frozen",
    "warn_fallbacks",
]
