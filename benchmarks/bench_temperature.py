"""Benchmark: TemperatureScaler.fit vs scikit-learn's temperature scaling.

Two comparisons on the same logits (``N x K``, default 1,000,000 x 10):

1. 1-D labels: ``TemperatureScaler().fit(Z, y)`` vs scikit-learn's
   ``_TemperatureScaling().fit(Z, y)`` (the calibrator that
   ``CalibratedClassifierCV(method="temperature")`` fits; calling it directly
   leaves out the wrapper's overhead, which only favours scikit-learn).
2. Label histograms (5 annotations per item): ``TemperatureScaler().fit(Z, Y)``
   vs scikit-learn fitted on the weighted-rows expansion (one row per item and
   class with a non-zero count, ``sample_weight = count``), which optimises
   the same likelihood.

Timings are wall-clock, best of ``--repeat`` runs. Run with ``--n-samples
100000`` for a quick check.

Usage::

    python benchmarks/bench_temperature.py [--n-samples N] [--n-classes K]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.calibration import _TemperatureScaling

from sklearn_hcal.calibration import TemperatureScaler
from sklearn_hcal.datasets import make_label_histograms


def _best_time(func, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return best, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-classes", type=int, default=10)
    parser.add_argument("--n-annotations", type=int, default=5)
    parser.add_argument("--temperature", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)

    Z, Y, _ = make_label_histograms(
        args.n_samples,
        args.n_classes,
        args.n_annotations,
        temperature=args.temperature,
        random_state=args.random_state,
    )
    rng = np.random.RandomState(args.random_state)
    # one annotation per item, drawn from the histogram
    cum = np.cumsum(Y, axis=1)
    u = rng.randint(0, args.n_annotations, size=len(Y))[:, None]
    y = np.argmax(cum > u, axis=1)
    print(
        f"N = {args.n_samples:,} items, K = {args.n_classes} classes, "
        f"{args.n_annotations} annotations per item, true T = {args.temperature}"
    )

    t_ours, ours = _best_time(lambda: TemperatureScaler().fit(Z, y), args.repeat)
    t_sk, sk = _best_time(lambda: _TemperatureScaling().fit(Z, y), args.repeat)
    print("\n1-D labels")
    print(f"  sklearn-hcal : {t_ours:8.3f} s  T = {ours.temperature_:.8f}")
    print(f"  scikit-learn : {t_sk:8.3f} s  T = {1 / float(sk.beta_):.8f}")
    print(f"  speed-up     : {t_sk / t_ours:8.2f} x")
    rel = abs(ours.beta_ - float(sk.beta_)) / float(sk.beta_)
    print(f"  |Δβ|/β       : {rel:.2e}")

    t_ours_h, ours_h = _best_time(lambda: TemperatureScaler().fit(Z, Y), args.repeat)
    keep = Y.ravel() > 0
    K = args.n_classes

    def sklearn_expanded():
        Z_rep = np.repeat(Z, K, axis=0)[keep]
        y_rep = np.tile(np.arange(K), len(Z))[keep]
        return _TemperatureScaling().fit(Z_rep, y_rep, sample_weight=Y.ravel()[keep])

    t_sk_h, sk_h = _best_time(sklearn_expanded, args.repeat)
    print(f"\nLabel histograms (expansion: {int(keep.sum()):,} weighted rows)")
    print(f"  sklearn-hcal : {t_ours_h:8.3f} s  T = {ours_h.temperature_:.8f}")
    print(
        f"  scikit-learn : {t_sk_h:8.3f} s  T = {1 / float(sk_h.beta_):.8f} "
        "(time includes building the expansion)"
    )
    print(f"  speed-up     : {t_sk_h / t_ours_h:8.2f} x")
    rel_h = abs(ours_h.beta_ - float(sk_h.beta_)) / float(sk_h.beta_)
    print(f"  |Δβ|/β       : {rel_h:.2e}")


if __name__ == "__main__":
    main()
