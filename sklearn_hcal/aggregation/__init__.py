"""Truth inference: aggregate the labels of several annotators per item.

Every aggregator is a scikit-learn estimator fitted on a *long table* of
annotations (one row per (item, annotator) judgement: item, annotator and
label columns, the layout of ``load_lewidi(...).annotations``). It returns
each item's posterior distribution of its true class (``fit_transform``),
each annotator's fitted parameters (documented attributes), the aggregated
label (``predict``) and, for (item, annotator) pairs, the distribution of
that annotator's label (``predict_annotator_proba``), which
:func:`~sklearn_hcal.metrics.make_annotation_scorer` scores on held-out
annotations.

The families: voting (:class:`MajorityVote`, :class:`Wawa`), confusion
matrices (:class:`DawidSkene`, :class:`OneCoinDawidSkene`), abilities and
difficulties (:class:`GLAD`), spammers (:class:`MACE`).
"""

from .._lazy import attach

_PUBLIC = {
    "MajorityVote": "._voting",
    "Wawa": "._voting",
    "DawidSkene": "._dawid_skene",
    "OneCoinDawidSkene": "._dawid_skene",
    "GLAD": "._glad",
    "MACE": "._mace",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
