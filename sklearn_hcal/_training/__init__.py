"""Training on label histograms: any scikit-learn classifier, and skorch networks.

:mod:`._soft_label` (:class:`SoftLabelClassifier`, weighted rows for any
classifier); the skorch layer: :mod:`._net` (:class:`SoftLabelNetClassifier`,
:func:`make_soft_label_net`), :mod:`._cnn` (:class:`SmallCNN`), :mod:`._inputs`
(targets and inputs of a net), :mod:`._logits` (:func:`skorch_logits`) and
:mod:`._callbacks` (:class:`HumanMetricsCallback`).
The public names are re-exported from :mod:`sklearn_hcal`; torch and skorch
are imported only when a skorch name is first used.
"""

from .._lazy import attach

_PUBLIC = {
    "SoftLabelClassifier": "._soft_label",
    "SoftLabelNetClassifier": "._net",
    "make_soft_label_net": "._net",
    "SmallCNN": "._cnn",
    "skorch_logits": "._logits",
    "HumanMetricsCallback": "._callbacks",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
