"""Speed and memory of the metrics and of the full report (issue 2's targets).

Times every public metric of :mod:`sklearn_hcal.metrics` and the report
functions on ``N x K`` label histograms and probabilities, next to

* one plain numpy pass, ``np.abs(P - Q).sum(1)`` on the same arrays (the
  cheapest thing a metric could do), and
* ``scipy.spatial.distance.jensenshannon(..., axis=1)``,

and measures the peak memory of each call with :mod:`tracemalloc` (numpy
reports its allocations to it) relative to the size of the inputs.

Targets: every metric within 5x of the plain pass; our JSD no slower than
scipy's; ``human_calibration_report`` (no bootstrap) under 3 s; peak memory
under 4x the inputs (no ``N x K x K`` or ``N x n_annotations`` temporaries).

Run from the project root::

    python benchmarks/bench_metrics.py                      # N = 1e6, K = 10
    python benchmarks/bench_metrics.py --n-samples 100000 --n-classes 3

Timings are the best of ``--repeat`` runs (wall clock). This is not a test;
it prints a table and exits 0 whether or not the targets are met.
"""

from __future__ import annotations

import argparse
import gc
import platform
import time
import tracemalloc
import warnings

import numpy as np
import scipy
from scipy.spatial.distance import jensenshannon

import sklearn_hcal.metrics as M
from sklearn_hcal._validation import check_histograms_and_probabilities
from sklearn_hcal.datasets import make_label_histograms

TARGET_RATIO = 5.0
TARGET_REPORT_S = 3.0
TARGET_MEMORY = 4.0


def _best_time(func, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t0)
    return best


def _peak_bytes(func) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        func()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def _cases(Y, P, p_hat):
    phi = M.predicted_disagreement(P)
    return {
        # what every metric pays before computing anything
        "(input validation only)": lambda: check_histograms_and_probabilities(Y, P),
        # Baan et al. / ChaosNLI
        "distribution_calibration_error": lambda: M.distribution_calibration_error(
            Y, P
        ),
        "entropy_calibration_error": lambda: M.entropy_calibration_error(Y, P),
        "ranking_calibration_score": lambda: M.ranking_calibration_score(Y, P),
        "jensen_shannon_distance": lambda: M.jensen_shannon_distance(Y, P),
        "kl_divergence": lambda: M.kl_divergence(Y, P),
        "histogram_log_loss": lambda: M.histogram_log_loss(Y, P),
        "majority_accuracy_score": lambda: M.majority_accuracy_score(Y, P),
        "expected_calibration_error": lambda: M.expected_calibration_error(Y, P),
        "classwise_expected_calibration_error": (
            lambda: M.classwise_expected_calibration_error(Y, P)
        ),
        # Mimori et al.
        "expected_squared_loss": lambda: M.expected_squared_loss(Y, P),
        "epistemic_loss": lambda: M.epistemic_loss(Y, P),
        "calibration_loss": lambda: M.calibration_loss(Y, P),
        "calibration_error": lambda: M.calibration_error(Y, P),
        "dispersion_loss": lambda: M.dispersion_loss(Y, P),
        "disagreement_probability": lambda: M.disagreement_probability(Y),
        "predicted_disagreement": lambda: M.predicted_disagreement(P),
        "disagreement_squared_loss (phi)": lambda: M.disagreement_squared_loss(Y, phi),
        "disagreement_squared_loss (P)": lambda: M.disagreement_squared_loss(Y, P),
        "disagreement_calibration_loss": lambda: M.disagreement_calibration_loss(
            Y, phi
        ),
        "disagreement_calibration_error": lambda: M.disagreement_calibration_error(
            Y, phi
        ),
        # reports
        "instance_calibration_errors": lambda: M.instance_calibration_errors(Y, P),
        "loss_decomposition": lambda: M.loss_decomposition(Y, P),
        "metrics_by_agreement": lambda: M.metrics_by_agreement(Y, P),
        "human_calibration_report": lambda: M.human_calibration_report(Y, {"model": P}),
    }


def _report_breakdown(Y, P, repeat: int) -> None:
    from sklearn_hcal.metrics import _report as R

    base = R._validate_pair(Y, P, None)
    for attr in ("n", "p_hat", "_pairs", "valid_pairs"):
        getattr(base, attr)  # the human side, shared by every column
    seen_groups = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name in R.DEFAULT_REPORT_METRICS:
            spec = R._REPORT_METRICS[name]
            if spec.group is not None and spec.group in seen_groups:
                print(f"  {name:<24} (computed with group {spec.group!r})")
                continue
            seen_groups.add(spec.group)

            def run(spec=spec, name=name):
                d = R._Inputs(base.Y, base.P, base.is_counts, human=base)
                d.keep_per_item = False
                R._evaluate({name: spec}, d)

            t = _best_time(run, repeat)
            where = f"group {spec.group!r}" if spec.group else "per-item"
            print(f"  {name:<24} {t * 1e3:9.1f} ms  ({where})")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-classes", type=int, default=10)
    parser.add_argument("--n-annotations", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-memory", action="store_true", help="skip the tracemalloc pass"
    )
    args = parser.parse_args(argv)

    rng = np.random.RandomState(args.seed)
    Z, Y, Q = make_label_histograms(
        args.n_samples, args.n_classes, args.n_annotations, random_state=args.seed
    )
    logits = Z + rng.normal(size=Z.shape)
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    input_bytes = Y.nbytes + P.nbytes
    del Z, Q, logits

    print(
        f"N = {args.n_samples:,}, K = {args.n_classes}, n_i = {args.n_annotations}; "
        f"inputs Y ({Y.dtype}) + P ({P.dtype}) = {input_bytes / 2**20:.0f} MiB"
    )
    print(
        f"numpy {np.__version__}, scipy {scipy.__version__}, "
        f"python {platform.python_version()}, best of {args.repeat}"
    )

    plain = _best_time(lambda: np.abs(P - p_hat).sum(1), args.repeat)
    scipy_jsd = _best_time(lambda: jensenshannon(p_hat, P, axis=1), args.repeat)
    print(f"plain numpy pass np.abs(P - Q).sum(1): {plain * 1e3:8.1f} ms")
    print(f"scipy jensenshannon(axis=1):            {scipy_jsd * 1e3:8.1f} ms\n")

    header = f"{'function':<40} {'time ms':>9} {'x plain':>8} {'peak/in':>8}  notes"
    print(header)
    print("-" * len(header))
    misses = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name, func in _cases(Y, P, p_hat).items():
            t = _best_time(func, args.repeat)
            ratio = t / plain
            mem = np.nan if args.no_memory else _peak_bytes(func) / input_bytes
            notes = []
            is_report = name in {
                "instance_calibration_errors",
                "loss_decomposition",
                "metrics_by_agreement",
                "human_calibration_report",
            }
            if not is_report and ratio > TARGET_RATIO:
                notes.append(f"> {TARGET_RATIO:g}x plain")
            if name == "jensen_shannon_distance":
                notes.append(f"scipy x{t / scipy_jsd:.2f}")
                if t > scipy_jsd:
                    notes.append("slower than scipy")
            if name == "human_calibration_report" and t > TARGET_REPORT_S:
                notes.append(f"> {TARGET_REPORT_S:g} s")
            if mem > TARGET_MEMORY:
                notes.append(f"memory > {TARGET_MEMORY:g}x")
            flagged = [n for n in notes if ">" in n or "slower" in n]
            if flagged:
                misses.append((name, flagged))
            print(
                f"{name:<40} {t * 1e3:9.1f} {ratio:8.1f} {mem:8.2f}  {', '.join(notes)}"
            )

    print(
        "\nhuman_calibration_report, cost of each column on validated inputs "
        "(shared arrays such as p̂ precomputed; a group is paid once):"
    )
    _report_breakdown(Y, P, args.repeat)

    print()
    if misses:
        print("Targets missed:")
        for name, notes in misses:
            print(f"  {name}: {', '.join(notes)}")
    else:
        print("All targets met.")


if __name__ == "__main__":
    main()
