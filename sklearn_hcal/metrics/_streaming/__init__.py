"""Evaluation in chunks: mergeable metric states, and dask inputs.

The family, one job a module: :mod:`._state` (:class:`MetricState`, a
:class:`~sklearn_hcal.metrics._engine.Sums` updated chunk by chunk with the
requirements of the labels seen), :mod:`._inputs` (a chunk's inputs, and
what has no chunk-wise form), :mod:`._dask` (metric functions and the report
on dask arrays and DataFrames: a state per block, merged in a tree) and
:mod:`._report` (a report table from states). The metric functions' entry
point (``metrics/_dispatch.py``) hands dask inputs to :mod:`._dask`; nothing
here imports the report module, so the family and the report do not import
each other.
"""

from ..._lazy import attach

_PUBLIC = {
    "MetricState": "._state",
    "report_from_states": "._report",
}

__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = attach(__name__, _PUBLIC)
