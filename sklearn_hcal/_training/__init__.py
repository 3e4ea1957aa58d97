"""Training on label histograms: any scikit-learn classifier, and skorch networks.

:mod:`._soft_label` (:class:`SoftLabelClassifier`, weighted rows for any
classifier); the skorch layer: :mod:`._net` (:class:`SoftLabelNetClassifier`,
:func:`make_soft_label_net`), :mod:`._cnn` (:class:`SmallCNN`), :mod:`._inputs`
(targets and inputs of a net) and :mod:`._callbacks`
(:class:`HumanMetricsCallback`). A fitted net's logits
(:func:`~sklearn_hcal.skorch_logits`) are read by the estimators' front end
(:mod:`sklearn_hcal._frontend`), where they live.
The public names are re-exported from :mod:`sklearn_hcal`; torch and skorch
are imported only when a skorch name is first used.
"""

from .._lazy import attach

_PUBLIC = {
    "SoftLabelClassifier": "._soft_label",
    "SoftLabelNetClassifier": "._net",
    "make_soft_label_net": "._net",
    "SmallCNN": "._cnn",
    "HumanMetricsCallback": "._callbacks",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
