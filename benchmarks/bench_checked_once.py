"""Inputs checked once: a two-model report with its HTML file, before/after.

The package of another checkout (``--before DIR``: a directory holding its
``sklearn_hcal/``, e.g. ``git archive main | tar -x -C DIR``) is loaded
beside this one under the name ``sklearn_hcal_before``, and both are timed
in one process, interleaved (before, after, before, after, ...), best of
``--repeat`` (3) each, in wall-clock and in CPU time (all the process's
threads: other sessions' work does not count in it), with the 1-minute
load average beside every row:

* ``CalibrationReport.from_predictions(Y, {a, b}).to_html(path)``: the
  report with its file and its five figures;
* the same with the figures drawn but not encoded as PNG images (the
  encoding is the same code before and after, and most of the time);
* the same with ``to_html(path, figures=False)``: the validation and the
  table without matplotlib's drawing;
* ``human_calibration_report(Y, {a, b})`` alone (validated once before and
  after: the control row);
* ``hcal evaluate Y.npy --pred a.npy --pred b.npy --html FILE`` through the
  command line's ``main``.

Usage, from the project root::

    git archive main | tar -x -C /tmp/before
    python benchmarks/bench_checked_once.py --before /tmp/before
    python benchmarks/bench_checked_once.py --before /tmp/before --busy

Then, for each row, the number of value scans of ``_validation`` in one
call and the time spent in them (the scans counted by
``tests/_scans.py``).

Sizes: ``--n`` items (default 1,000 and 100,000) of ``--classes`` (3)
classes, 5 labels per item. Exits 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

os.environ.setdefault("MPLBACKEND", "Agg")


def load() -> float:
    return os.getloadavg()[0]


def interleaved(funcs, repeat=3):
    """Best wall-clock and CPU time of each function, calls interleaved.

    The CPU time (``process_time``: every thread of the process) is the
    load-robust comparison: other sessions' work does not count in it. The
    garbage of the previous call (matplotlib's figures are cycles) is
    collected before each timed call: else the second of a pair paid for
    the first's, 7-13% of a report with figures whichever came second.
    """
    wall = [np.inf] * len(funcs)
    cpu = [np.inf] * len(funcs)
    for _ in range(repeat):
        for i, f in enumerate(funcs):
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            f()
            wall[i] = min(wall[i], time.perf_counter() - start)
            cpu[i] = min(cpu[i], time.process_time() - start_cpu)
    return wall, cpu


def load_before(root: Path):
    """The package under ``root/sklearn_hcal`` as ``sklearn_hcal_before``."""
    init = root / "sklearn_hcal" / "__init__.py"
    if not init.is_file():
        raise SystemExit(f"--before {root}: no sklearn_hcal/__init__.py there")
    spec = importlib.util.spec_from_file_location(
        "sklearn_hcal_before", init, submodule_search_locations=[str(init.parent)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["sklearn_hcal_before"] = module
    spec.loader.exec_module(module)
    return module


def problem(n, k, seed=0):
    rng = np.random.default_rng(seed)
    Y = rng.multinomial(5, rng.dirichlet(np.ones(k), n))
    P1 = rng.dirichlet(np.ones(k), n)
    P2 = np.round(rng.dirichlet(np.ones(k), n), 3)  # rounded: renormalised
    return Y, P1, P2


def cases(package: str, Y, P1, P2, folder: Path):
    """``{row: function}`` of one version of the package."""
    report = importlib.import_module(f"{package}.report")
    metrics = importlib.import_module(f"{package}.metrics")
    cli = importlib.import_module(f"{package}.cli")
    preds = {"a": P1, "b": P2}
    html = folder / f"{package}.html"
    for name, arr in (("y", Y), ("a", P1), ("b", P2)):
        np.save(folder / f"{name}.npy", arr)
    argv = [
        "evaluate",
        str(folder / "y.npy"),
        "--pred",
        str(folder / "a.npy"),
        "--pred",
        str(folder / "b.npy"),
        "--html",
        str(html),
    ]

    def unrendered():
        # the figures drawn but not encoded as PNG: the encoding is the same
        # code in both versions and most of the time (and of its noise)
        module = importlib.import_module(f"{package}.report._calibration_report")
        encode = module.png_data_uri
        module.png_data_uri = lambda figure, dpi=96: ("data:,", 1, 1)
        try:
            report.CalibrationReport.from_predictions(Y, preds).to_html(html)
        finally:
            module.png_data_uri = encode

    def command_line():
        with contextlib.redirect_stdout(io.StringIO()):
            with contextlib.redirect_stderr(io.StringIO()):
                assert cli.main(argv) == 0

    return {
        "report + HTML file with figures": lambda: (
            report.CalibrationReport.from_predictions(Y, preds).to_html(html)
        ),
        "report + HTML file, figures drawn, not encoded": unrendered,
        "report + HTML file, figures=False": lambda: (
            report.CalibrationReport.from_predictions(Y, preds).to_html(
                html, figures=False
            )
        ),
        "human_calibration_report alone (control)": lambda: (
            metrics.human_calibration_report(Y, preds)
        ),
        "hcal evaluate --html (two predictions)": command_line,
    }


#: The value scans of ``_validation`` (as ``tests/_scans.py`` counts them).
SCANS = (
    "scan_histograms",
    "scan_probabilities",
    "labels_to_histograms",
    "check_finite",
    "all_finite",
    "looks_like_probabilities",
    "check_disagreement",
)


def scan_time(package: str, func) -> tuple[int, float]:
    """``(calls, seconds)`` spent in the value scans during one ``func()``.

    Each scan is wrapped wherever a module of ``package`` bound it (the
    outermost call is timed: a scan calling another counts once).
    """
    validation = importlib.import_module(f"{package}._validation")
    originals = {name: getattr(validation, name) for name in SCANS}
    by_id = {id(f): name for name, f in originals.items()}
    spent = {"calls": 0, "seconds": 0.0, "depth": 0}

    def timed(f):
        def scan(*args, **kwargs):
            spent["depth"] += 1
            start = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                spent["depth"] -= 1
                if spent["depth"] == 0:
                    spent["calls"] += 1
                    spent["seconds"] += time.perf_counter() - start

        return scan

    wrappers = {name: timed(f) for name, f in originals.items()}
    patched = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == package or name.startswith(package + ".")):
            continue
        for attr, value in list(vars(module).items()):
            scan = by_id.get(id(value))
            if scan is not None and value is originals[scan]:
                setattr(module, attr, wrappers[scan])
                patched.append((module, attr, value))
    try:
        func()
    finally:
        for module, attr, value in patched:
            setattr(module, attr, value)
    return spent["calls"], spent["seconds"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--n", type=int, nargs="*", default=[1_000, 100_000])
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--busy", action="store_true", help="spin one core")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)

    load_before(args.before.resolve())
    import matplotlib

    matplotlib.use("Agg")
    lines = []

    def out(text=""):
        print(text, flush=True)
        lines.append(text)

    spinner = None
    if args.busy:
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    started = time.perf_counter()
    mode = "one core busy (spinner)" if args.busy else "no spinner"
    try:
        out(
            f"Inputs checked once, {time.strftime('%Y-%m-%d %H:%M %Z')}, "
            f"{os.cpu_count()} cores, {mode}; before = {args.before}; load "
            f"average {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        out()
        out(
            "| what | N | wall before | wall after | before / after | "
            "CPU before | CPU after | before / after | load |"
        )
        out("|---|---|---|---|---|---|---|---|---|")
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            versions = {}
            for n in args.n:
                folder = Path(tmp) / str(n)
                folder.mkdir()
                Y, P1, P2 = problem(n, args.classes)
                versions[n] = (
                    cases("sklearn_hcal_before", Y, P1, P2, folder),
                    cases("sklearn_hcal", Y, P1, P2, folder),
                )
            for n, (before, after) in versions.items():
                for what in before:
                    # one untimed call each: imports, matplotlib's caches
                    before[what]()
                    after[what]()
                    (w_before, w_after), (c_before, c_after) = interleaved(
                        [before[what], after[what]], args.repeat
                    )
                    out(
                        f"| {what} | {n:,} | {w_before * 1e3:.0f} ms | "
                        f"{w_after * 1e3:.0f} ms | {w_before / w_after:.2f}× | "
                        f"{c_before * 1e3:.0f} ms | {c_after * 1e3:.0f} ms | "
                        f"{c_before / c_after:.2f}× | {load():.2f} |"
                    )
            out()
            out("Time inside the value scans during one call (outermost scans):")
            out()
            out("| what | N | scans before | scans after | ms before | ms after |")
            out("|---|---|---|---|---|---|")
            for n, (before, after) in versions.items():
                for what in before:
                    if "not encoded" in what:
                        continue
                    k_before, s_before = scan_time("sklearn_hcal_before", before[what])
                    k_after, s_after = scan_time("sklearn_hcal", after[what])
                    out(
                        f"| {what} | {n:,} | {k_before} | {k_after} | "
                        f"{s_before * 1e3:.1f} | {s_after * 1e3:.1f} |"
                    )
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    out()
    out(
        f"{time.perf_counter() - started:.0f} s; load average after "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    if args.output is not None:
        args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
