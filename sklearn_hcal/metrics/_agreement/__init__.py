"""Agreement coefficients: how much the annotators agree with each other.

Every data set of human labels reports them; this library holds the data
they need (label histograms, long tables of annotations), so they are
computed here from either layout, vectorised over items. One module per
job:

* :mod:`._input` -- what the coefficients read: a counts table or a long
  table (through ``_validation``'s one reader of long tables), as per-item
  counts in scale order (``Ratings``); a model's labels as one more
  annotator's;
* :mod:`._kernels` -- the arithmetic on per-item counts: the coincidence
  matrix, α from it, Fleiss' κ, every annotator's change of the
  coincidences, the leave-one-out majority, every pair's Cohen's κ;
* :mod:`._coefficients` -- :func:`krippendorff_alpha` (Krippendorff 2011,
  "Computing Krippendorff's alpha-reliability"; 2004, *Content Analysis*,
  ch. 11) at the nominal, ordinal, interval and ratio levels, one α per
  label for multi-label data; :func:`fleiss_kappa` (1971) for equal panels;
  :func:`pairwise_cohen_kappa` (1960; weighted, 1968) of every pair of
  annotators on the items both labelled;
* :mod:`._interval` -- α's bootstrap interval over items, on the report's
  resamples;
* :mod:`._tables` -- :func:`item_agreement` (per item: annotations,
  observed agreement, entropy) and :func:`annotator_agreement` (per
  annotator: α without the annotator and agreement with the leave-one-out
  majority, with a model scored as one more annotator);
* :mod:`._model` -- :func:`model_agreement`: the model against the
  distribution of the annotators' values.

The design (two layouts, no reliability matrix, the interval on the
report's resamples) is developer guide §agreement.
"""

from ._coefficients import fleiss_kappa, krippendorff_alpha, pairwise_cohen_kappa
from ._interval import AlphaInterval
from ._model import model_agreement
from ._tables import annotator_agreement, item_agreement

__all__ = [
    "AlphaInterval",
    "annotator_agreement",
    "fleiss_kappa",
    "item_agreement",
    "krippendorff_alpha",
    "model_agreement",
    "pairwise_cohen_kappa",
]
