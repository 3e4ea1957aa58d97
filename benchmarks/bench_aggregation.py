"""The aggregators against crowd-kit 1.4.2, and judged on held-out annotations.

Two tables, on MultiPICo (LeWiDi 2025's ``MP_test.json`` in
``../shared/data/lewidi/2025``: 18,693 annotations of 3,756 items by 506
annotators, binary irony labels; the full data set has about 34k
annotations):

1. **Speed.** ``fit`` of each aggregator against crowd-kit's on the same
   table, both on one BLAS thread, the same number of iterations (``tol=None``
   here, ``tol=-inf`` there: crowd-kit otherwise stops when its bound dips),
   timed interleaved (ours, theirs, ours, ...), best of 3, with the 1-minute
   load average of the row. crowd-kit's ``Wawa`` crashes under scikit-learn
   ≥ 1.6, so its two steps (majority vote, then the vote weighted by the
   agreement) are timed instead. Targets: Dawid–Skene ≥ 3×,
   one-coin Dawid–Skene and GLAD ≥ 10×.
2. **Held-out annotations.** One annotation per item held out (items with at
   least 4; 5 splits), each aggregator fitted on the rest and scored on the
   held-out labels by ``make_annotation_scorer`` (Brier score and log loss of
   ``predict_annotator_proba``). The baseline, the smoothed empirical
   frequency, is ``MajorityVote(alpha=a)`` at its best ``a`` on these same
   splits. Target: Dawid–Skene's Brier score below the baseline's. Two more
   rows use Dawid–Skene's posterior alone as the prediction (no confusion
   matrix): the aggregated soft label is a worse prediction of an annotator.

Usage, from the project root (crowd-kit needed for table 1: ``make
install``)::

    python benchmarks/bench_aggregation.py             # ~4 min on 2 busy cores
    python benchmarks/bench_aggregation.py --busy      # a process spins on one core
    python benchmarks/bench_aggregation.py --only speed --glad-iter 5
    python benchmarks/run.py --aggregation             # the same, through run.py

Exits 0 whether or not a target is met.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("HCAL_SHARED_DATA", HERE.parent.parent / "shared" / "data"))
MULTIPICO = DATA / "lewidi" / "2025" / "MP_test.json"


def load() -> float:
    return os.getloadavg()[0]


def interleaved(funcs, repeat=3):
    """Best time of each function, calls interleaved (a, b, a, b, ...)."""
    best = [np.inf] * len(funcs)
    for _ in range(repeat):
        for i, f in enumerate(funcs):
            start = time.perf_counter()
            f()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def multipico():
    from sklearn_hcal.datasets import load_lewidi

    if not MULTIPICO.exists():
        sys.exit(f"{MULTIPICO} not found (set HCAL_SHARED_DATA)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_lewidi(MULTIPICO).annotations


# ----------------------------------------------------------------- speed
def speed_rows(X, iterations):
    import crowdkit.aggregation as ck
    from crowdkit.aggregation.utils import get_accuracy

    import sklearn_hcal.aggregation as agg

    data = X.rename(columns={"item": "task", "annotator": "worker"})

    def crowdkit_wawa():
        skills = get_accuracy(data, ck.MajorityVote().fit(data).labels_, by="worker")
        return ck.MajorityVote().fit(data, skills=skills)

    n_ds, n_glad, n_mace = iterations
    rows = [
        ("MajorityVote", lambda: agg.MajorityVote().fit(X),
         lambda: ck.MajorityVote().fit(data), "", None),
        ("Wawa", lambda: agg.Wawa().fit(X), crowdkit_wawa, "", None),
        (f"DawidSkene, {n_ds} iterations",
         lambda: agg.DawidSkene(max_iter=n_ds, tol=None).fit(X),
         lambda: ck.DawidSkene(n_iter=n_ds, tol=-np.inf).fit(data), "≥ 3×", 3.0),
        (f"OneCoinDawidSkene, {n_ds} iterations",
         lambda: agg.OneCoinDawidSkene(max_iter=n_ds, tol=None).fit(X),
         lambda: ck.OneCoinDawidSkene(n_iter=n_ds, tol=-np.inf).fit(data),
         "≥ 10×", 10.0),
        (f"GLAD, {n_glad} iterations",
         lambda: agg.GLAD(max_iter=n_glad, tol=None).fit(X),
         lambda: ck.GLAD(n_iter=n_glad, tol=-np.inf).fit(data), "≥ 10×", 10.0),
        (f"MACE (vb), 1 restart, {n_mace} iterations",
         lambda: agg.MACE(n_restarts=1, max_iter=n_mace, random_state=0).fit(X),
         lambda: ck.MACE(n_restarts=1, n_iter=n_mace).fit(data), "", None),
    ]  # fmt: skip
    for name, ours, theirs, goal, target in rows:
        ours_s, theirs_s = interleaved([ours, theirs])
        ratio = theirs_s / ours_s
        met = "" if target is None else ("yes" if ratio >= target else "**no**")
        yield (
            name,
            f"{ours_s * 1e3:.0f}",
            f"{theirs_s * 1e3:.0f}",
            f"{ratio:.1f}×",
            goal,
            met,
            f"{load():.1f}",
        )


# ------------------------------------------------------------ held-out
def held_out_rows(X, n_splits):
    from sklearn.model_selection import cross_validate

    import sklearn_hcal.aggregation as agg
    from sklearn_hcal.metrics import make_annotation_scorer
    from sklearn_hcal.metrics._annotation_scorer import annotation_loss
    from sklearn_hcal.model_selection import OneAnnotationPerItemSplit

    cv = OneAnnotationPerItemSplit(n_splits, min_annotations=4, random_state=0)
    scoring = {
        "brier": make_annotation_scorer("brier_score_loss"),
        "log": make_annotation_scorer("log_loss"),
    }
    models = {
        **{
            f"MajorityVote(alpha={a})": agg.MajorityVote(alpha=a)
            for a in (0.5, 1, 2, 4)
        },
        "DawidSkene()": agg.DawidSkene(),
        "DawidSkene(alpha=1)": agg.DawidSkene(alpha=1.0),
        "OneCoinDawidSkene(alpha=1)": agg.OneCoinDawidSkene(alpha=1.0),
        "Wawa()": agg.Wawa(),
        "GLAD()": agg.GLAD(),
        "MACE(random_state=0)": agg.MACE(random_state=0),
    }
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MajorityVote's p = 0 is floored
        for name, model in models.items():
            scores = cross_validate(model, X, cv=cv, scoring=scoring)
            results[name] = (
                -scores["test_brier"].mean(),
                scores["test_brier"].std(),
                -scores["test_log"].mean(),
            )
        # the posterior alone as the prediction of the held-out annotator (the
        # aggregators' soft label without the annotator's confusion matrix)
        for alpha in (0.0, 1.0):
            brier, log = [], []
            for train, test in cv.split(X):
                ds = agg.DawidSkene(alpha=alpha).fit(X.iloc[train])
                held = X.iloc[test]
                posterior = ds.posteriors_.loc[held["item"]].to_numpy()
                codes = np.searchsorted(ds.classes_, held["label"].to_numpy())
                brier.append(annotation_loss(codes, posterior, "brier_score_loss"))
                log.append(annotation_loss(codes, posterior, "log_loss"))
            name = f"DawidSkene(alpha={alpha:g}), its posterior alone"
            results[name] = (np.mean(brier), np.std(brier), np.mean(log))
    return results


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    return "\n".join(lines)


def main(argv=None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", action="store_true", help="spin one core")
    parser.add_argument("--only", choices=["speed", "held-out"])
    parser.add_argument("--ds-iter", type=int, default=50)
    parser.add_argument("--glad-iter", type=int, default=10)
    parser.add_argument("--mace-iter", type=int, default=50)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    spinner = None
    if args.busy:
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    out: list[str] = []
    misses: list[str] = []
    try:
        X = multipico()
        mode = "one core busy (spinner)" if args.busy else "no spinner"
        out.append(
            f"Aggregation on MultiPICo ({MULTIPICO.name}: {len(X):,} annotations, "
            f"{X['item'].nunique():,} items, {X['annotator'].nunique()} annotators), "
            f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {os.cpu_count()} cores, {mode}; "
            "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())
        )
        if args.only in (None, "speed"):
            try:
                import crowdkit  # noqa: F401
            except ImportError:
                out.append(
                    "\ncrowd-kit is not installed (`make install`): no speed table."
                )
            else:
                with threadpool_limits(1):
                    iters = (args.ds_iter, args.glad_iter, args.mace_iter)
                    rows = list(speed_rows(X, iters))
                out.append("\n### fit time against crowd-kit 1.4.2 (one thread)\n")
                header = ["aggregator", "ours ms", "crowd-kit ms", "ratio", "goal",
                          "met", "load"]  # fmt: skip
                out.append(_table(header, rows))
                misses += [
                    f"{r[0]}: {r[3]} (goal {r[4]})" for r in rows if r[5] == "**no**"
                ]
        if args.only in (None, "held-out"):
            results = held_out_rows(X, args.splits)
            baseline = min(
                (v[0], k) for k, v in results.items() if k.startswith("Majority")
            )
            out.append(
                f"\n### one held-out annotation per item (items with ≥ 4), "
                f"{args.splits} splits; load {load():.1f}\n"
            )
            rows = [
                (name, f"{b:.4f} ± {s:.4f}", f"{lg:.4f}")
                for name, (b, s, lg) in results.items()
            ]
            out.append(_table(["model", "Brier", "log loss"], rows))
            ds = results["DawidSkene(alpha=1)"][0]
            met = ds < baseline[0]
            out.append(
                f"\nDawidSkene(alpha=1) {ds:.4f} against the smoothed empirical "
                f"frequency at its best, {baseline[1]} {baseline[0]:.4f}: "
                f"{'met' if met else '**missed**'}."
            )
            if not met:
                misses.append("Dawid–Skene does not beat the empirical frequency")
        out.append("\nTargets missed: " + ("; ".join(misses) if misses else "none."))
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    text = "\n".join(out)
    print(text, flush=True)
    if args.output is not None:
        args.output.write_text(text + "\n", encoding="utf-8")
    return misses


if __name__ == "__main__":
    main()
