"""The report's bootstrap as one weighted sum.

A bootstrap resample draws ``N`` items with replacement; item ``i`` then
counts ``w_i`` times (``w`` is multinomial: ``N`` draws, equal
probabilities). Every metric of the registry is a function of sums over
items (:class:`~sklearn_hcal.metrics._engine.Sums`): mean-type metrics of
``Σ num`` and ``Σ den``, binned ones of per-cell sums ``Σ_{i in cell}
value``. A resample's sums are the same sums weighted by ``w``, so the
replicates of ``B`` resamples are one weighted sum: the ``B × N`` weight
matrix ``W`` times the items' contributions
(:func:`~sklearn_hcal.metrics._engine.contributions`), in two products per
chunk of resamples. One module per concern:

* :mod:`._resamples` -- the resamples: each chunk of resamples has a
  :class:`numpy.random.PCG64` stream of its own, spawned from
  ``SeedSequence(random_state)``, its multiplicities Poisson counts
  completed to a multinomial (exact); :func:`resampled_sums` gives any
  per-item values' sums in each resample (Krippendorff's α's interval);
* :mod:`._item_matrices` -- the items' contributions as ``D`` dense,
  ``N × d`` (the per-item values of the mean-type metrics, and for each
  binned group the per-slot totals of its statistics) and ``A`` sparse
  (the statistics of the items that are *not* in the most populated cell
  of their slot, which is the slot's total minus the other cells; a
  statistic that is mostly 0 in those cells has no dense totals);
* :mod:`._chunk_sums` -- one chunk's products ``W @ D`` and ``W @ A``,
  read back into the engine's ``Sums`` with a leading resample axis, as the
  report's own sums are: no metric is written twice, and no resample is
  ever materialised;
* :mod:`._driver` -- :func:`bootstrap`: chunks drawn on a thread ahead of
  the products (whose dense and sparse parts run on two more), the
  per-item values computed once and reused by every chunk (unless they
  exceed a memory budget, then per chunk, block by block of items);
* :mod:`._intervals` -- the confidence intervals from the replicates.

The chunks have a size that depends on ``N`` only and each has its own
stream, so every replicate is the same number for any ``n_jobs``, joblib
backend or number of drawing threads.

The weights and the products are float32, the per-item values float64
rounded once, the products' sums float64 before any subtraction: a
replicate errs by at most a float32 sum's bound, far below its Monte-Carlo
spread (developer guide §bootstrap-precision). The report's values come
from the same per-item matrices in float64, every weight 1
(:func:`bootstrap` returns them with the replicates).
"""

from ._driver import bootstrap
from ._intervals import bootstrap_intervals
from ._resamples import resample_weights, resampled_sums, seed_sequence

__all__ = [
    "bootstrap",
    "bootstrap_intervals",
    "resample_weights",
    "resampled_sums",
    "seed_sequence",
]
