"""Scaling curves: time against the number of items N and of classes K.

For a few representative metrics and the full report, times each call for

* N from 1e3 to 1e7 (``--quick``: to 1e6) at K = 3 (the NLI case; K = 10 at
  N = 1e7 would need several GB per array), and
* K from 2 to 1,000 at fixed N (20,000; ``--quick``: 10,000),

and fits the slope of log(time) against log(N) or log(K) by least squares
over the upper part of each range, where fixed per-call costs (parameter
validation, Python overhead) no longer dominate. A slope of about 1 means
linear cost; ``ranking_calibration_score`` sorts each row, so its K-slope can
exceed 1 (``K log K``). The plain numpy pass ``np.abs(P - Q).sum(1)`` is timed
alongside as the reference.

Run from the project root::

    python benchmarks/bench_scaling.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_peers import best_time, make_problem, markdown_table  # noqa: E402

import sklearn_hcal.metrics as M  # noqa: E402

#: Fit the N-slope on N >= this, the K-slope on K >= that.
N_FIT_FROM = 100_000
K_FIT_FROM = 20


REFERENCE = "single numpy pass"


def scaling_cases():
    return {
        REFERENCE: lambda Y, P, p_hat: np.abs(P - p_hat).sum(1),
        "distribution_calibration_error": (
            lambda Y, P, p_hat: M.distribution_calibration_error(Y, P)
        ),
        "jensen_shannon_distance": lambda Y, P, p_hat: M.jensen_shannon_distance(Y, P),
        "kl_divergence": lambda Y, P, p_hat: M.kl_divergence(Y, P),
        "ranking_calibration_score": (
            lambda Y, P, p_hat: M.ranking_calibration_score(Y, P)
        ),
        "expected_calibration_error": (
            lambda Y, P, p_hat: M.expected_calibration_error(Y, P)
        ),
        "calibration_loss": lambda Y, P, p_hat: M.calibration_loss(Y, P),
        "human_calibration_report": lambda Y, P, p_hat: M.human_calibration_report(
            Y, {"model": P}
        ),
    }


def fitted_slope(sizes, times, fit_from) -> float:
    sizes = np.asarray(sizes, dtype=np.float64)
    times = np.asarray(times, dtype=np.float64)
    keep = sizes >= fit_from
    if keep.sum() < 2:
        return np.nan
    slope, _ = np.polyfit(np.log(sizes[keep]), np.log(times[keep]), 1)
    return float(slope)


def _curve(problems, sizes, repeat):
    """``{case: [seconds per size]}``; ``problems(size)`` -> (Y, P, p_hat)."""
    cases = scaling_cases()
    times = {name: [] for name in cases}
    for size in sizes:
        Y, P, p_hat = problems(size)
        for name, func in cases.items():
            times[name].append(
                best_time(
                    lambda func=func, data=(Y, P, p_hat): func(*data),
                    repeat,
                    budget=1.0,
                )
            )
    return times


def _n_curve(n_sizes, n_classes, seed):
    # one data set; the smaller sizes use its leading rows
    data = make_problem(max(n_sizes), n_classes, seed=seed)
    return _curve(lambda n: tuple(a[:n] for a in data), n_sizes, repeat=3)


def _table(label, sizes, times, fit_from):
    header = ["function"] + [f"{label}={s:,}" for s in sizes]
    header += [f"slope ({label} ≥ {fit_from:,})"]
    rows = []
    for name, ts in times.items():
        rows.append(
            [name] + [t * 1e3 for t in ts] + [fitted_slope(sizes, ts, fit_from)]
        )
    return markdown_table(header, rows)


def run(quick: bool, *, seed: int = 0, out=print) -> list[str]:
    """Print both curves as Markdown tables; return slopes far from linear.

    Only the library's functions are flagged; the reference pass shows how
    much of a slope above 1 comes from the memory hierarchy (data leaving
    the CPU caches) rather than from the code.
    """
    n_max = 1_000_000 if quick else 10_000_000
    n_sizes = [
        s
        for s in (1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
        + (3_000_000, 10_000_000)
        if s <= n_max
    ]
    K_N = 3
    with warnings.catch_warnings():
        warnings.simplefilter("once")
        times_n = _n_curve(n_sizes, K_N, seed)
    out(f"### Time (ms) against N, K = {K_N}, 5 annotations per item\n")
    out(_table("N", n_sizes, times_n, N_FIT_FROM))

    n_k = 10_000 if quick else 20_000
    k_sizes = [2, 5, 10, 20, 50, 100, 200, 500, 1_000]

    def by_k(K):
        return make_problem(n_k, K, seed=seed)

    with warnings.catch_warnings():
        warnings.simplefilter("once")
        times_k = _curve(by_k, k_sizes, repeat=3)
    out(f"\n### Time (ms) against K, N = {n_k:,}, 5 annotations per item\n")
    out(_table("K", k_sizes, times_k, K_FIT_FROM))
    out(
        "\nSlope: least-squares fit of log(time) on log(size) over the sizes "
        "named in the column header; ≈ 1 is linear. Best of 3 calls (one when "
        "a call takes over 1 s).\n"
    )

    flagged = []
    for label, times, sizes, fit_from in (
        ("N", times_n, n_sizes, N_FIT_FROM),
        ("K", times_k, k_sizes, K_FIT_FROM),
    ):
        for name, ts in times.items():
            slope = fitted_slope(sizes, ts, fit_from)
            if name != REFERENCE and slope > 1.2:
                flagged.append(f"{name}: {label}-slope {slope:.2f} (> 1.2)")
    return flagged


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 1e6")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    flagged = run(args.quick, seed=args.seed)
    print("\nSuperlinear:" if flagged else "\nAll slopes ≤ 1.2.")
    for line in flagged:
        print(f"* {line}")


if __name__ == "__main__":
    main()
