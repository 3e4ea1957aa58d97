"""The CPU default model of :class:`PerspectivistClassifier`, and its encoder.

:func:`make_default_estimator` puts a linear model with the scale's
structure (ordinal thresholds, one model per label, or a logistic
regression) on :class:`AnnotationVectorizer`, the configuration chosen by
item-grouped cross-validation (``benchmarks/bench_perspectivist.py``); the
named-encoder configuration (``ENCODER_*``: a pretrained sentence encoder
reduced by a PCA, its weights and ``C``) is kept here, in one place.
"""

from __future__ import annotations

from os import PathLike

from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.multioutput import MultiOutputClassifier
from sklearn.pipeline import Pipeline, make_pipeline

from ._encoders import SentenceEncoder, resolve_model_path
from ._features import AnnotationVectorizer
from ._ordinal import OrdinalClassifier

__all__ = [
    "ENCODER_C",
    "ENCODER_COMPONENTS",
    "ENCODER_NAME",
    "ENCODER_SIMILARITY_WEIGHT",
    "ENCODER_WEIGHT",
    "make_default_estimator",
]

#: ``make_default_estimator(encoder="minilm")``: the packaged
#: all-MiniLM-L6-v2, reduced by a PCA to this many dimensions and its block
#: weighted so (chosen by item-grouped cross-validation on the LeWiDi 2025
#: Paraphrase training files across fold seeds 0-2; the user guide's table).
ENCODER_NAME = "minilm"
ENCODER_COMPONENTS = 24
ENCODER_WEIGHT = 8.0
ENCODER_SIMILARITY_WEIGHT = 8.0
ENCODER_C = 0.5


def make_default_estimator(
    *,
    ordinal: bool,
    multilabel: bool,
    n_classes: int | None = None,
    C: float | None = None,
    random_state=None,
    explanations: bool = True,
    encoder=None,
):
    """The CPU default of :class:`PerspectivistClassifier`.

    :class:`AnnotationVectorizer` (TF-IDF of the texts and, weighted 8×, of
    the explanation; the similarity of an item's two texts, weighted 4×;
    one-hot annotator and metadata; per-annotator copies) and a logistic
    regression (liblinear, fast on sparse text), with the scale's structure
    in the last step:

    * ordinal scales: :class:`OrdinalClassifier` (one logistic regression
      per threshold), whose median the classifier predicts;
    * multi-label targets: one logistic regression per label
      (:class:`~sklearn.multioutput.MultiOutputClassifier`);
    * otherwise a logistic regression: liblinear for two classes (its
      memory is the data's; L-BFGS keeps ten weight-sized vectors, which
      per-annotator feature copies make large), multinomial L-BFGS for more.

    Parameters
    ----------
    ordinal : bool
        Whether the classes are an ordered scale.
    multilabel : bool
        Whether the target is a 0/1 indicator matrix.
    n_classes : int or None, default=None
        Number of classes of a nominal target (2: liblinear); None is more
        than two.
    C : float or None, default=None
        Inverse regularisation of the logistic regressions (chosen by
        item-grouped cross-validation on the LeWiDi 2025 training files).
        None: 1.0, and 0.5 with a named encoder (``encoder="minilm"`` or a
        model folder), chosen with it.
    random_state : int, RandomState instance or None, default=None
        Seed of liblinear's coordinate order (results vary slightly without
        one).
    explanations : bool, default=True
        Whether the vectorizer reads the annotators' explanations
        (:class:`AnnotationVectorizer`'s ``explanations``).
    encoder : "minilm", str, path, callable, transformer or None, default=None
        The item's texts (and the explanation) also as pretrained sentence
        vectors (:class:`AnnotationVectorizer`'s ``encoder``). ``"minilm"``:
        the configuration chosen by item-grouped cross-validation (user
        guide, "Encoders in the default features") -- all-MiniLM-L6-v2 as
        packaged by the ``nlp`` extra (:class:`SentenceEncoder`), reduced
        by a PCA to 24 dimensions fitted on the distinct training texts,
        the block weighted 8×, the cosine of an item's two texts' MiniLM
        vectors weighted 8× (``encoder_similarity_weight``) and ``C=0.5``; the
        path of a local sentence-transformers or Hugging Face model folder:
        the same with that model. Nothing is downloaded. A callable or
        transformer is passed on as it is (the vectorizer's
        ``encoder_weight`` stays 1, no cosine).

    Returns
    -------
    estimator : Pipeline
        Unfitted.

    Examples
    --------
    >>> from sklearn_hcal.perspectivist import make_default_estimator
    >>> make_default_estimator(ordinal=True, multilabel=False).steps[-1][0]
    'ordinalclassifier'
    >>> est = make_default_estimator(ordinal=True, multilabel=False, encoder="minilm")
    >>> vec = est.named_steps["annotationvectorizer"]
    >>> [name for name, _ in vec.encoder.steps], vec.encoder_weight
    (['sentenceencoder', 'pca'], 8.0)
    >>> vec.encoder_similarity_weight, est[-1].estimator.C
    (8.0, 0.5)
    """
    named = isinstance(encoder, (str, PathLike))
    if C is None:
        C = ENCODER_C if named else 1.0
    binary = LogisticRegression(C=C, solver="liblinear", random_state=random_state)
    if multilabel:
        last = MultiOutputClassifier(binary)
    elif ordinal:
        last = OrdinalClassifier(binary)
    elif n_classes == 2:
        last = binary
    else:
        last = LogisticRegression(C=C, max_iter=1000)
    vec = AnnotationVectorizer(explanations=explanations, encoder=encoder)
    if named:
        vec.set_params(
            encoder=_sentence_encoder(encoder, random_state),
            encoder_weight=ENCODER_WEIGHT,
            encoder_similarity_weight=ENCODER_SIMILARITY_WEIGHT,
        )
    return Pipeline([("annotationvectorizer", vec), (_name(last), last)])


def _sentence_encoder(encoder, random_state) -> Pipeline:
    """``encoder="minilm"`` or a model folder: the encoder, then a PCA."""
    model = None if encoder == ENCODER_NAME else encoder
    try:
        resolve_model_path(model)  # fails now, not at the first fit
    except ValueError:
        raise ValueError(
            f"encoder={str(encoder)!r} is neither {ENCODER_NAME!r} (all-MiniLM-L6-v2 "
            "as packaged by the 'nlp' extra) nor a local model folder (a folder "
            "with a config.json); models are never downloaded."
        ) from None
    pca = PCA(ENCODER_COMPONENTS, random_state=random_state)
    return make_pipeline(SentenceEncoder(model), pca)


def _name(estimator) -> str:
    return type(estimator).__name__.lower()
