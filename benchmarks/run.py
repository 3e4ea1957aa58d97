"""Run the benchmark suite and print one Markdown report.

Everything is measured in one run, on the same inputs, on this machine:

* the machine (CPU, cores, memory, load) and the library versions;
* ``bench_peers.py``: each metric against a single numpy pass, per-item loops,
  scipy and torchmetrics; ``TemperatureScaler`` against scikit-learn's
  temperature scaling; ``AlphaCalibrator`` fit time on the CPU;
* ``bench_scaling.py``: time against N (1e3 to 1e7) and K (2 to 1,000) with
  fitted log-log slopes;
* with ``--aggregation``, only ``bench_aggregation.py`` (the aggregators
  against crowd-kit on MultiPICo, and on held-out annotations);
* with ``--include-scripts``, also the output of the standalone scripts
  ``bench_metrics.py`` (with peak memory), ``bench_temperature.py`` and
  ``bench_alpha.py`` at the same sizes.

Usage, from the project root::

    python benchmarks/run.py            # N up to 1e7: ~5 min on 2 cores, a few GB RAM
    python benchmarks/run.py --quick    # N up to 1e6: 2-4 min
    python benchmarks/run.py --output benchmarks/latest.md

Exits 0 whether or not a target is met; the missed targets are listed at the
end. Timings depend on whatever else runs on the machine: the load averages
before and after the run are printed with the results.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_peers  # noqa: E402
import bench_scaling  # noqa: E402

_VERSIONS = (
    "sklearn-hcal",
    "numpy",
    "scipy",
    "scikit-learn",
    "pandas",
    "torch",
    "torchmetrics",
    "dask",
    "distributed",
)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> str:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _load() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def machine_description() -> list[str]:
    versions = []
    for name in _VERSIONS:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    try:
        import numpy as np

        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:  # the BLAS name is informative only
        blas = "unknown"
    return [
        f"* CPU: {_cpu_model()}, {os.cpu_count()} logical cores "
        f"(`nproc`), {_memory_gib()} memory",
        f"* {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, numpy BLAS: {blas}",
        "* " + ", ".join(versions),
    ]


def _script_output(module_name: str, argv: list[str]) -> str:
    """stdout of ``module.main()`` with ``argv`` as the command line."""
    module = __import__(module_name)
    buffer = io.StringIO()
    saved = sys.argv
    # bench_alpha.main() parses sys.argv itself; the others take argv too
    sys.argv = [module_name + ".py", *argv]
    try:
        with contextlib.redirect_stdout(buffer):
            module.main()
    finally:
        sys.argv = saved
    return buffer.getvalue()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 1e6")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, help="also write the report here")
    parser.add_argument(
        "--include-scripts",
        action="store_true",
        help="also run bench_metrics.py, bench_temperature.py, bench_alpha.py",
    )
    parser.add_argument(
        "--goals",
        action="store_true",
        help="only the speed goals' table (bench_goals.py; with --quick, --output)",
    )
    parser.add_argument(
        "--aggregation",
        action="store_true",
        help="only the aggregators against crowd-kit (bench_aggregation.py; "
        "with --output)",
    )
    args = parser.parse_args(argv)
    if args.aggregation:
        import bench_aggregation

        agg_argv = [] if args.output is None else ["--output", str(args.output)]
        bench_aggregation.main(agg_argv)
        return
    if args.goals:
        import bench_goals

        goals_argv = ["--quick"] if args.quick else []
        if args.output is not None:
            goals_argv += ["--output", str(args.output)]
        bench_goals.main(goals_argv)
        return

    lines: list[str] = []

    def out(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    start = time.perf_counter()
    mode = "quick" if args.quick else "full"
    out(f"# sklearn-hcal benchmark suite ({mode})\n")
    out(f"Started {time.strftime('%Y-%m-%d %H:%M %Z')}; load average before: {_load()}")
    out()
    for line in machine_description():
        out(line)
    out()

    out("## Peers\n")
    misses = bench_peers.run(args.quick, seed=args.seed, out=out)
    out("## Scaling\n")
    misses += bench_scaling.run(args.quick, seed=args.seed, out=out)

    if args.include_scripts:
        n = "100000" if args.quick else "1000000"
        n_alpha = "20000" if args.quick else "100000"
        for module_name, script_argv in (
            ("bench_metrics", ["--n-samples", n]),
            ("bench_temperature", ["--n-samples", n]),
            ("bench_alpha", ["--n", n_alpha]),
        ):
            out(f"## `{module_name}.py`\n")
            text = _script_output(module_name, script_argv)
            out("```text\n" + text.rstrip() + "\n```\n")

    out("## Targets missed\n")
    if misses:
        for miss in misses:
            out(f"* {miss}")
    else:
        out("None.")
    elapsed = time.perf_counter() - start
    out(f"\nTotal {elapsed / 60:.1f} min; load average after: {_load()}")

    if args.output is not None:
        args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
