"""Chunk-wise evaluation: MetricState and dask arrays against in memory.

Two measurements, each in a fresh process (peak memory is the process's
maximum resident set size, ``ru_maxrss``, minus the one after the imports):

``compare``
    ``human_calibration_report`` (default columns) on ``N x K`` counts and
    float32 probabilities held in memory, against the same arrays fed to a
    :class:`~sklearn_hcal.metrics.MetricState` in chunks of ``--chunk-rows``
    and as :class:`dask.array.Array` blocks of that size (threaded
    scheduler). Prints the time per item of each and the ratio to in memory.

``generated``
    The report of ``--big`` items whose blocks are *generated* by dask tasks
    (uint16 counts, float32 probabilities, ``--chunk-rows`` rows per block,
    made from a seed per block), so the data never exist as a whole: time
    per item and peak memory, against the size the inputs would have.

Run from the project root::

    python benchmarks/bench_streaming.py                       # N = 1e6, big = 1e7
    python benchmarks/bench_streaming.py --big 100000000       # the 1e8 case
    python benchmarks/bench_streaming.py --mode generated --big 10000000

This is not a test; it prints a table and exits 0.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings

import numpy as np


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def _block(seed: int, rows: int, k: int):
    """``(uint16 counts, float32 probabilities)`` of one block, from its seed."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_gamma(0.7, size=(rows, k))
    truth /= truth.sum(axis=1, keepdims=True)
    Y = rng.poisson(3.0 * truth).astype(np.uint16)
    Y[np.arange(rows), truth.argmax(axis=1)] += 1  # at least one annotation
    noise = rng.standard_gamma(1.0, size=(rows, k))
    P = 0.7 * truth + 0.3 * noise / noise.sum(axis=1, keepdims=True)
    return Y, P.astype(np.float32)


def compare(n: int, k: int, chunk_rows: int) -> dict:
    import dask
    import dask.array as da

    from sklearn_hcal.metrics import MetricState, human_calibration_report

    blocks = [
        _block(s, min(chunk_rows, n - a), k)
        for s, a in enumerate(range(0, n, chunk_rows))
    ]
    Y = np.concatenate([b[0] for b in blocks])
    P = np.concatenate([b[1] for b in blocks])
    del blocks
    out = {"n": n, "k": k, "chunk_rows": chunk_rows}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        ref = human_calibration_report(Y, P).iloc[0]
        out["in_memory_s"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        state = MetricState()
        for a in range(0, n, chunk_rows):
            state.update(Y[a : a + chunk_rows], P[a : a + chunk_rows])
        got = state.compute()
        out["state_s"] = time.perf_counter() - t0

        Yd = da.from_array(Y, chunks=(chunk_rows, k))
        Pd = da.from_array(P, chunks=(chunk_rows, k))
        t0 = time.perf_counter()
        with dask.config.set(scheduler="threads"):
            dgot = human_calibration_report(Yd, Pd).iloc[0]
        out["dask_s"] = time.perf_counter() - t0
    out["max_abs_diff_state"] = max(abs(got[c] - ref[c]) for c in ref.index)
    out["max_abs_diff_dask"] = float(np.max(np.abs(dgot.to_numpy() - ref.to_numpy())))
    return out


def generated(n: int, k: int, chunk_rows: int) -> dict:
    import dask
    import dask.array as da

    from sklearn_hcal.metrics import human_calibration_report

    base = _rss_mb()
    sizes = [min(chunk_rows, n - a) for a in range(0, n, chunk_rows)]
    made = [dask.delayed(_block, nout=2)(s, rows, k) for s, rows in enumerate(sizes)]
    Yd = da.concatenate(
        [da.from_delayed(m[0], (r, k), np.uint16) for m, r in zip(made, sizes)]
    )
    Pd = da.concatenate(
        [da.from_delayed(m[1], (r, k), np.float32) for m, r in zip(made, sizes)]
    )
    with dask.config.set(scheduler="threads"):
        # making the blocks alone (the same tasks, summed)
        t0 = time.perf_counter()
        dask.compute(Yd.sum(), Pd.sum())
        making = time.perf_counter() - t0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        with dask.config.set(scheduler="threads"):
            report = human_calibration_report(Yd, Pd)
        seconds = time.perf_counter() - t0
    return {
        "making_s": making,
        "metrics_us_per_item": 1e6 * (seconds - making) / n,
        "n": n,
        "k": k,
        "chunk_rows": chunk_rows,
        "seconds": seconds,
        "us_per_item": 1e6 * seconds / n,
        "peak_mb": _peak_mb() - base,
        "inputs_mb": n * k * (2 + 4) / 2**20,
        "inputs_float64_mb": n * k * 16 / 2**20,
        "columns": len(report.columns),
    }


def _child(mode: str, n: int, k: int, chunk_rows: int) -> dict:
    cmd = [sys.executable, __file__, "--mode", mode, "--child", "--k", str(k)]
    cmd += ["--chunk-rows", str(chunk_rows)]
    cmd += ["--n", str(n)] if mode == "compare" else ["--big", str(n)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--mode", choices=["both", "compare", "generated"], default="both"
    )
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--big", type=int, default=10_000_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--chunk-rows", type=int, default=2**17)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        func = compare if args.mode == "compare" else generated
        n = args.n if args.mode == "compare" else args.big
        print(json.dumps(func(n, args.k, args.chunk_rows)))
        return
    if args.mode in ("both", "compare"):
        r = _child("compare", args.n, args.k, args.chunk_rows)
        print(
            f"report, default columns, N = {r['n']:,}, K = {r['k']}, "
            f"chunks of {r['chunk_rows']:,} rows"
        )
        print("| path | s | µs / item | ratio to in memory | max |diff| |")
        print("|---|---|---|---|---|")
        for key, label, diff in [
            ("in_memory_s", "in memory (numpy)", None),
            ("state_s", "MetricState.update per chunk", "max_abs_diff_state"),
            ("dask_s", "dask array, threads", "max_abs_diff_dask"),
        ]:
            s = r[key]
            d = "" if diff is None else f"{r[diff]:.1e}"
            print(
                f"| {label} | {s:.2f} | {1e6 * s / r['n']:.2f} | "
                f"{s / r['in_memory_s']:.2f} | {d} |"
            )
        print()
    if args.mode in ("both", "generated"):
        r = _child("generated", args.big, args.k, args.chunk_rows)
        print(
            f"report of N = {r['n']:,} x K = {r['k']} generated block by block "
            f"({r['chunk_rows']:,} rows, uint16 counts + float32 probabilities), "
            f"{r['columns']} columns, dask threads"
        )
        print(
            f"  {r['seconds']:.1f} s = {r['us_per_item']:.2f} µs / item, of which "
            f"{r['making_s']:.1f} s make the blocks (timed alone): "
            f"{r['metrics_us_per_item']:.2f} µs / item for the report"
        )
        print(
            f"  peak memory {r['peak_mb']:.0f} MB over the imports, against "
            f"{r['inputs_mb']:.0f} MB of inputs ({r['inputs_float64_mb']:.0f} MB "
            "as float64)"
        )


if __name__ == "__main__":
    main()
