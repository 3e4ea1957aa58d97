"""Annotators as first-class citizens: per-annotator (perspectivist) models.

:class:`PerspectivistClassifier` learns the label each annotator gives each
item from a long table of annotations (``load_lewidi(path).frame``): per
annotator distributions, the Bayes decision of LeWiDi 2025's perspectivist
scores, and each item's soft label as the mean over its annotators.
:class:`AnnotationVectorizer`, :class:`OrdinalClassifier` and
:func:`make_default_estimator` make up its CPU default;
:class:`SentenceEncoder` adds a pretrained sentence encoder's vectors to it;
:class:`TransformerPerspectivistClassifier` fine-tunes a pretrained
transformer with an embedding per annotator (skorch);
:class:`PerspectivistEnsemble` averages several such models' distributions.
"""

from .._lazy import attach

_PUBLIC = {
    "AnnotationVectorizer": "._features",
    "OrdinalClassifier": "._ordinal",
    "PerspectivistClassifier": "._classifier",
    "PerspectivistEnsemble": "._ensemble",
    "SentenceEncoder": "._encoders",
    "TransformerPerspectivistClassifier": "._transformer",
    "make_default_estimator": "._default_estimator",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
