"""Speed and memory of the metrics and of the full report.

Times every public metric of :mod:`sklearn_hcal.metrics` and the report
functions on ``N x K`` label histograms and probabilities, next to

* one plain numpy pass, ``np.abs(P - Q).sum(1)`` on the same arrays (the
  cheapest thing a metric could do), and
* ``scipy.spatial.distance.jensenshannon(..., axis=1)``,

and measures the peak memory of each call with :mod:`tracemalloc` (numpy
reports its allocations to it) relative to the size of the inputs.

Targets: every metric within 3x of the plain pass; our JSD no
slower than scipy's; ``human_calibration_report`` (no bootstrap) under 3 s at
N = 1e6; peak memory under 2x the inputs (no ``N x K x K`` or
``N x n_annotations`` temporaries, no float64 copy of float32/memmap input).

Run from the project root::

    python benchmarks/bench_metrics.py                      # N = 1e6, K = 10
    python benchmarks/bench_metrics.py --variants           # + float32, memmap
    python benchmarks/bench_metrics.py --n-samples 10000000 --report-only
    python benchmarks/bench_metrics.py --n-samples 100000 --n-classes 3

``--dtype float32`` stores the histograms and probabilities as float32;
``--memmap`` writes them to a temporary ``.npy`` file and reads them back
with ``np.load(..., mmap_mode="r")``. Timings are the best of ``--repeat``
runs (wall clock). This is not a test; it prints a table and exits 0 whether
or not the targets are met.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import tempfile
import time
import tracemalloc
import warnings

import numpy as np
import scipy
from scipy.spatial.distance import jensenshannon

import sklearn_hcal.metrics as M
from sklearn_hcal._validation import check_histograms_and_probabilities
from sklearn_hcal.datasets import make_label_histograms

TARGET_RATIO = 3.0
TARGET_REPORT_S = 3.0
TARGET_MEMORY = 2.0
REPORTS = {
    "instance_calibration_errors",
    "loss_decomposition",
    "metrics_by_agreement",
    "human_calibration_report",
}


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


def _cases(Y, P):
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
    from sklearn_hcal.metrics import _engine as E
    from sklearn_hcal.metrics import _registry as R
    from sklearn_hcal.metrics._report_inputs import validate_human

    human, source = validate_human(Y, P)
    human.mu  # the human side, shared by every column  # noqa: B018
    seen_groups = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for column in E.resolve(None, human, default=R.default_columns()):
            name = column.name
            if column.group is not None and column.group in seen_groups:
                print(f"  {name:<24} (computed with group {column.group[0]!r})")
                continue
            seen_groups.add(column.group)

            def run(column=column):
                E.evaluate([column], human, source)

            t = _best_time(run, repeat)
            where = f"group {column.group[0]!r}" if column.group else "per-item"
            print(f"  {name:<24} {t * 1e3:9.1f} ms  ({where})")


def _make_inputs(args, tmpdir):
    """``(Y, P, p_hat)``: Y int64 (float32 with --dtype float32), P float."""
    rng = np.random.RandomState(args.seed)
    Z, Y, Q = make_label_histograms(
        args.n_samples, args.n_classes, args.n_annotations, random_state=args.seed
    )
    del Q
    Z += rng.normal(size=Z.shape)
    Z -= Z.max(axis=1, keepdims=True)
    np.exp(Z, out=Z)
    Z /= Z.sum(axis=1, keepdims=True)
    P = Z
    if args.dtype == "float32":
        Y = Y.astype(np.float32)
        P = P.astype(np.float32)
    if args.memmap:
        np.save(os.path.join(tmpdir, "Y.npy"), Y)
        np.save(os.path.join(tmpdir, "P.npy"), P)
        del Y, P
        Y = np.load(os.path.join(tmpdir, "Y.npy"), mmap_mode="r")
        P = np.load(os.path.join(tmpdir, "P.npy"), mmap_mode="r")
    return Y, P


def _header(args, Y, P, input_bytes):
    storage = "memmap (np.load mmap_mode='r')" if args.memmap else "in memory"
    print(
        f"N = {args.n_samples:,}, K = {args.n_classes}, n_i = {args.n_annotations}; "
        f"inputs Y ({Y.dtype}) + P ({P.dtype}) = {input_bytes / 2**20:.0f} MiB, "
        f"{storage}"
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"numpy {np.__version__}, scipy {scipy.__version__}, "
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {load:.2f}, best of {args.repeat}"
    )


def _report_only(args, Y, P, input_bytes) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)

        def run():
            return M.human_calibration_report(Y, {"model": P})

        t = _best_time(run, args.repeat)
        mem = np.nan if args.no_memory else _peak_bytes(run) / input_bytes
    print(
        f"human_calibration_report (no bootstrap): {t:.2f} s, "
        f"peak memory / input size = {mem:.2f}"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-classes", type=int, default=10)
    parser.add_argument("--n-annotations", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    parser.add_argument("--memmap", action="store_true")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="only time human_calibration_report (and its peak memory)",
    )
    parser.add_argument(
        "--variants",
        action="store_true",
        help="also run the report and a few metrics on float32 / memmap inputs",
    )
    parser.add_argument(
        "--no-memory", action="store_true", help="skip the tracemalloc pass"
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmpdir:
        Y, P = _make_inputs(args, tmpdir)
        input_bytes = Y.nbytes + P.nbytes
        _header(args, Y, P, input_bytes)
        if args.report_only:
            _report_only(args, Y, P, input_bytes)
        else:
            _full_table(args, Y, P, input_bytes)
        del Y, P
    if args.variants:
        for dtype, memmap in (("float32", False), ("float64", True), ("float32", True)):
            print(f"\n--- variant: {dtype}{', memmap' if memmap else ''} ---")
            sub = argparse.Namespace(**{**vars(args), "dtype": dtype, "memmap": memmap})
            with tempfile.TemporaryDirectory() as tmpdir:
                Y, P = _make_inputs(sub, tmpdir)
                input_bytes = Y.nbytes + P.nbytes
                _header(sub, Y, P, input_bytes)
                _variant_table(sub, Y, P, input_bytes)
                del Y, P


def _variant_table(args, Y, P, input_bytes) -> None:
    names = (
        "(input validation only)",
        "distribution_calibration_error",
        "jensen_shannon_distance",
        "calibration_loss",
        "human_calibration_report",
    )
    cases = _cases(Y, P)
    print(f"{'function':<40} {'time ms':>9} {'peak/in':>8}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name in names:
            t = _best_time(cases[name], args.repeat)
            mem = np.nan if args.no_memory else _peak_bytes(cases[name]) / input_bytes
            print(f"{name:<40} {t * 1e3:9.1f} {mem:8.2f}")


def _baselines(Y, P, repeat: int) -> tuple[float, float]:
    """Times of the plain numpy pass and of scipy's JSD on float64 copies."""
    Yf = np.asarray(Y, dtype=np.float64)
    p_hat = Yf / Yf.sum(axis=1, keepdims=True)
    Pf = np.asarray(P, dtype=np.float64)
    plain = _best_time(lambda: np.abs(Pf - p_hat).sum(1), repeat)
    scipy_jsd = _best_time(lambda: jensenshannon(p_hat, Pf, axis=1), repeat)
    return plain, scipy_jsd


def _full_table(args, Y, P, input_bytes) -> None:
    plain, scipy_jsd = _baselines(Y, P, args.repeat)
    print(f"plain numpy pass np.abs(P - Q).sum(1): {plain * 1e3:8.1f} ms")
    print(f"scipy jensenshannon(axis=1):            {scipy_jsd * 1e3:8.1f} ms\n")

    header = f"{'function':<40} {'time ms':>9} {'x plain':>8} {'peak/in':>8}  notes"
    print(header)
    print("-" * len(header))
    misses = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name, func in _cases(Y, P).items():
            t = _best_time(func, args.repeat)
            ratio = t / plain
            mem = np.nan if args.no_memory else _peak_bytes(func) / input_bytes
            notes = []
            if name not in REPORTS and ratio > TARGET_RATIO:
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
        "(the human side precomputed; a group is paid once):"
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
