"""A fine-tuned transformer per annotator, on skorch.

The family, one job a module: :mod:`._estimator`
(``TransformerPerspectivistClassifier``, the scikit-learn face),
:mod:`._inputs` (the rows as token ids and annotator codes, the targets of
each head and their probabilities), :mod:`._module` (the torch module:
encoder, annotator embedding, head) and :mod:`._net` (the skorch net, its
batches and optimiser). :mod:`._module` and :mod:`._net` import torch,
skorch and transformers at their top and are imported only when a fit
runs, so importing the estimator imports none of them.
"""

from ._estimator import TransformerPerspectivistClassifier

__all__ = ["TransformerPerspectivistClassifier"]
