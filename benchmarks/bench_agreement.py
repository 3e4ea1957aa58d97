"""Krippendorff's α at scale, against the ``krippendorff`` package, and its interval.

Two tables:

1. **Scale.** A long table of 1,000,000 annotations (200,000 items, 5
   annotators each drawn from 2,000, 5 classes), as ``load_lewidi(...).frame``
   and the aggregators take it. Nominal α by
   :func:`~sklearn_hcal.metrics.krippendorff_alpha` (the long table; and the
   counts table of the same items), then by ``krippendorff.alpha`` 0.9.0:
   from the dense annotators × items reliability matrix it needs (built by
   ``DataFrame.pivot``, 3.2 GB in float64; its time is printed apart) and
   from value counts (its cheapest input); and ours with a 1,000-resample
   bootstrap interval. Each row runs in a fresh
   process that builds the input first: the time is the best of
   ``--repeat`` calls (the dense row once), the memory the peak resident
   memory above the input (``/proc/self/clear_refs`` resets the peak after
   the input is built; ``VmHWM − VmRSS``), beside ``tracemalloc``'s peak of
   the call. Targets (issue 37): ≤ 2 s and ≤ 600 MB above the input on this
   2-core machine.
2. **Coverage.** ``--reps`` (200) data sets drawn with a known α: item
   classes from ``π``, each of 3 to 6 annotations the item's class with
   probability ``r``, else a draw from ``π``, so that two annotations of an
   item disagree with probability ``(1 − r²)(1 − Σπ²)`` and the population α
   is ``r²`` (0.49 at ``r = 0.7``). The 95% percentile interval of 1,000
   resamples must cover it in ≥ 93% of the data sets (the binomial standard
   error of 200 draws at 0.95 is 0.015).

Usage, from the project root::

    python benchmarks/bench_agreement.py                  # ~3 min on 2 busy cores
    python benchmarks/bench_agreement.py --no-dense       # skip the 3.2 GB matrix
    python benchmarks/bench_agreement.py --only coverage --reps 200

Exits 0 whether or not a target is met.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

N_ITEMS, PER_ITEM, N_ANNOTATORS, N_CLASSES = 200_000, 5, 2_000, 5


def make_long_table(seed: int = 0):
    """1e6 annotations: 200k items × 5 distinct annotators out of 2,000."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    truth = rng.integers(0, N_CLASSES, N_ITEMS)
    first = rng.integers(0, N_ANNOTATORS, N_ITEMS)
    # five distinct annotators per item: a random start and fixed strides
    annotator = (first[:, None] + np.arange(PER_ITEM) * 397) % N_ANNOTATORS
    label = np.where(
        rng.random((N_ITEMS, PER_ITEM)) < 0.6,
        truth[:, None],
        rng.integers(0, N_CLASSES, (N_ITEMS, PER_ITEM)),
    )
    return pd.DataFrame(
        {
            "item": np.repeat(np.arange(N_ITEMS), PER_ITEM),
            "annotator": annotator.ravel(),
            "label": label.ravel(),
        }
    )


def _status(field: str) -> int:
    """A ``/proc/self/status`` field in bytes (``VmRSS``, ``VmHWM``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return -1


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _worker(name: str, repeat: int) -> dict:
    """Build the input, then time and measure one way of computing α."""
    import pandas as pd

    X = make_long_table()
    setup = {}
    if name == "ours_long":
        from sklearn_hcal.metrics import krippendorff_alpha

        def run():
            return krippendorff_alpha(X)

    elif name == "ours_boot":
        from sklearn_hcal.metrics import krippendorff_alpha

        def run():
            return krippendorff_alpha(X, n_bootstrap=1000, random_state=0).alpha

    elif name == "ours_counts":
        from sklearn_hcal.metrics import krippendorff_alpha

        counts = np.zeros((N_ITEMS, N_CLASSES), dtype=np.int64)
        np.add.at(counts, (X["item"].to_numpy(), X["label"].to_numpy()), 1)
        del X

        def run():
            return krippendorff_alpha(counts)

    elif name == "kripp_counts":
        import krippendorff

        counts = np.zeros((N_ITEMS, N_CLASSES), dtype=np.int64)
        np.add.at(counts, (X["item"].to_numpy(), X["label"].to_numpy()), 1)
        del X

        def run():
            return krippendorff.alpha(
                value_counts=counts, level_of_measurement="nominal"
            )

    elif name == "kripp_dense":
        import krippendorff

        t0 = time.perf_counter()
        dense = X.pivot(index="annotator", columns="item", values="label")
        dense = dense.to_numpy(dtype=np.float64)
        setup["pivot_s"] = time.perf_counter() - t0
        setup["matrix_mb"] = dense.nbytes / 2**20

        def run():
            return krippendorff.alpha(dense, level_of_measurement="nominal")

    else:
        raise SystemExit(f"unknown worker {name}")
    base = _status("VmRSS")
    reset = _reset_peak()
    t0 = time.perf_counter()
    value = run()
    times = [time.perf_counter() - t0]
    peak = _status("VmHWM") - base if reset else float("nan")
    for _ in range(repeat - 1):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    traced = float("nan")
    if name != "kripp_dense":  # tracemalloc would double a 3 GB run
        tracemalloc.start()
        run()
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    _ = pd  # the workers import pandas for the table
    return {
        "name": name,
        "alpha": float(value),
        "time_s": min(times),
        "rss_above_input_mb": peak / 2**20,
        "tracemalloc_peak_mb": traced / 2**20,
        "input_rss_mb": base / 2**20,
        **setup,
    }


def _run_worker(name: str, repeat: int) -> dict | None:
    cmd = [sys.executable, __file__, "--worker", name, "--repeat", str(repeat)]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
        print(f"  {name}: failed (exit {proc.returncode}): {' '.join(tail)}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def scale_table(repeat: int, dense: bool) -> None:
    print(
        f"## Scale: {N_ITEMS * PER_ITEM:,} annotations, {N_ITEMS:,} items, "
        f"{N_ANNOTATORS:,} annotators, {N_CLASSES} classes (load "
        f"{os.getloadavg()[0]:.1f})\n"
    )
    names = ["ours_long", "ours_counts", "ours_boot", "kripp_counts"] + (
        ["kripp_dense"] if dense else []
    )
    labels = {
        "ours_long": "sklearn_hcal, long table",
        "ours_counts": "sklearn_hcal, counts table",
        "ours_boot": "sklearn_hcal, long table, 1,000 bootstrap resamples",
        "kripp_counts": "krippendorff 0.9.0, value_counts",
        "kripp_dense": "krippendorff 0.9.0, reliability matrix",
    }
    rows = [
        r
        for r in (_run_worker(n, 1 if n == "kripp_dense" else repeat) for n in names)
        if r
    ]
    print(
        "| computation | α | time (s) | RSS above input (MB) | tracemalloc peak (MB) |"
    )
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {labels[r['name']]} | {r['alpha']:.6f} | {r['time_s']:.3f} | "
            f"{r['rss_above_input_mb']:.0f} | {r['tracemalloc_peak_mb']:.0f} |"
        )
    for r in rows:
        if "pivot_s" in r:
            print(
                f"\nThe reliability matrix: {r['matrix_mb']:.0f} MB, built by "
                f"DataFrame.pivot in {r['pivot_s']:.2f} s (not in the row's time; "
                "its memory is part of the row's input)."
            )
    ours = next((r for r in rows if r["name"] == "ours_long"), None)
    if ours:
        ok = ours["time_s"] <= 2 and ours["rss_above_input_mb"] <= 600
        print(
            f"\nTarget (long table): ≤ 2 s and ≤ 600 MB above the input: "
            f"{ours['time_s']:.2f} s, {ours['rss_above_input_mb']:.0f} MB -> "
            f"{'met' if ok else 'MISSED'}"
        )
    alphas = [r["alpha"] for r in rows]
    print(f"Largest difference between the α's: {np.ptp(alphas):.2e}\n")


def simulate(rng, n_items, r, pi):
    """Counts of ``n_items`` items, 3-6 annotations each, population α = r²."""
    K = len(pi)
    m = rng.integers(3, 7, n_items)
    truth = rng.choice(K, size=n_items, p=pi)
    item = np.repeat(np.arange(n_items), m)
    keep = rng.random(item.size) < r
    label = np.where(keep, truth[item], rng.choice(K, size=item.size, p=pi))
    counts = np.zeros((n_items, K), dtype=np.int64)
    np.add.at(counts, (item, label), 1)
    return counts


def coverage_table(reps: int, n_items: int, n_bootstrap: int, seed: int) -> None:
    from sklearn_hcal.metrics import krippendorff_alpha

    r, pi = 0.7, np.array([0.4, 0.3, 0.2, 0.1])
    truth = r**2
    rng = np.random.default_rng(seed)
    big = krippendorff_alpha(simulate(rng, 1_000_000, r, pi))
    t0 = time.perf_counter()
    covered, widths, estimates = 0, [], []
    for rep in range(reps):
        counts = simulate(rng, n_items, r, pi)
        ci = krippendorff_alpha(
            counts, n_bootstrap=n_bootstrap, confidence_level=0.95, random_state=rep
        )
        covered += ci.low <= truth <= ci.high
        widths.append(ci.high - ci.low)
        estimates.append(ci.alpha)
    elapsed = time.perf_counter() - t0
    rate = covered / reps
    print(
        f"## Coverage: {reps} data sets of {n_items} items (3-6 annotations, "
        f"4 classes, r = {r}), {n_bootstrap} resamples, 95% percentile interval "
        f"(load {os.getloadavg()[0]:.1f})\n"
    )
    print(f"population α = r² = {truth:.4f}; α of 1,000,000 simulated items: {big:.4f}")
    print(
        f"mean α̂ {np.mean(estimates):.4f} (sd {np.std(estimates):.4f}), "
        f"mean interval width {np.mean(widths):.4f}"
    )
    print(
        f"coverage {covered}/{reps} = {rate:.3f} (target ≥ 0.93: "
        f"{'met' if rate >= 0.93 else 'MISSED'}); {elapsed:.1f} s in all\n"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["scale", "coverage"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-dense", action="store_true")
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(args.worker, args.repeat)))
        return 0
    if args.only in (None, "scale"):
        scale_table(args.repeat, dense=not args.no_dense)
    if args.only in (None, "coverage"):
        coverage_table(args.reps, args.items, args.bootstrap, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
