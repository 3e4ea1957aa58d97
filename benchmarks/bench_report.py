"""The report's bootstrap against the report without bootstrap.

Target: ``human_calibration_report`` with ``n_bootstrap=1000`` on
CIFAR-10H-sized input (10,000 items × 10 classes) within 20× the time of the
same report without bootstrap, measured in one run, with values equal to the
original implementation's for the same ``random_state``.

The script prints, in one run on the same inputs:

* the load average before and after (the machine is shared);
* the report without bootstrap (best of ``--repeat``) and with
  ``--n-bootstrap`` resamples (best of ``--repeat-bootstrap``), and their
  ratio;
* the largest difference between the bootstrap replicates and a naive loop
  that recomputes every column with the public metric functions on the
  resampled rows (the first ``--check`` resamples, drawn as the original
  code drew them: ``RandomState(seed).randint(0, n, n)`` in order);
* with ``--reference FILE`` (an ``.npz`` written by ``--save-reference``, e.g.
  with an older version of the library), the largest difference from its
  replicates.

Usage, from the project root::

    python benchmarks/bench_report.py
    python benchmarks/bench_report.py --n-bootstrap 1000 --check 20
    python benchmarks/bench_report.py --save-reference before.npz
    python benchmarks/bench_report.py --reference before.npz

Without ``../shared/data/cifar10h/cifar10h-counts.npy`` (or ``--counts``) the
counts are simulated with the same shape (51 labels per item).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_COUNTS = ROOT.parent / "shared" / "data" / "cifar10h" / "cifar10h-counts.npy"


def _inputs(args):
    if Path(args.counts).is_file():
        Y = np.load(args.counts)
        source = str(args.counts)
    else:
        from sklearn_hcal.datasets import make_label_histograms

        _, Y, _ = make_label_histograms(10_000, 10, 51, random_state=args.seed)
        source = "simulated (10,000 × 10, 51 labels)"
    # A classifier's probabilities near the human distribution, with noise.
    rng = np.random.RandomState(args.seed)
    Z = np.log(Y + 1.0) + rng.normal(scale=1.0, size=Y.shape)
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return Y, P, source


def _best(func, repeat):
    best = np.inf
    out = None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return best, out


def _naive_check(Y, P, reps, columns, seed, n_check):
    """Largest |replicate − public function on the resampled rows|."""
    from sklearn_hcal.metrics import loss_decomposition, predicted_disagreement
    from sklearn_hcal.metrics._registry import get_metric

    rng = np.random.RandomState(seed)
    n = Y.shape[0]
    worst = 0.0
    for b in range(n_check):
        idx = rng.randint(0, n, size=n)
        for column in columns:
            m = get_metric(column)
            if m.function is None:  # the IL columns: loss_decomposition's row
                table = loss_decomposition(Y[idx], P[idx])
                value = table.loc[
                    "IL", "debiased" if m.kwargs["debiased"] else "plugin"
                ]
            else:
                pred = P[idx]
                if m.response == "disagreement":
                    pred = predicted_disagreement(pred)
                value = m.function(Y[idx], pred, **m.kwargs)
            worst = max(worst, abs(reps.loc[(b, "model"), column] - value))
    return worst


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default=str(DEFAULT_COUNTS))
    parser.add_argument("--n-bootstrap", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--repeat-bootstrap", type=int, default=1)
    parser.add_argument("--check", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--save-reference", default=None)
    parser.add_argument("--reference", default=None)
    args = parser.parse_args(argv)

    from sklearn_hcal.metrics import human_calibration_report

    load_before = os.getloadavg()
    Y, P, source = _inputs(args)
    print(f"inputs: {source}, Y {Y.shape}, P {P.shape}")
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        human_calibration_report(Y, {"model": P})  # imports, caches
        t0, point = _best(
            lambda: human_calibration_report(Y, {"model": P}), args.repeat
        )
        t1, (report, reps) = _best(
            lambda: human_calibration_report(
                Y,
                {"model": P},
                n_bootstrap=args.n_bootstrap,
                random_state=args.seed,
                return_bootstrap=True,
                n_jobs=args.n_jobs,
            ),
            args.repeat_bootstrap,
        )
        columns = list(point.columns)
        worst = _naive_check(Y, P, reps, columns, args.seed, args.check)
    load_after = os.getloadavg()
    print(f"{len(columns)} columns: {', '.join(columns)}")
    print(f"report without bootstrap: {t0 * 1e3:8.1f} ms (best of {args.repeat})")
    print(
        f"report with n_bootstrap={args.n_bootstrap}: {t1:8.3f} s "
        f"(best of {args.repeat_bootstrap})"
    )
    print(f"ratio: {t1 / t0:.1f}x (target: <= 20x)")
    print(
        f"max |replicate - public functions on the resampled rows| over the first "
        f"{args.check} resamples: {worst:.2e}"
    )
    if args.save_reference:
        np.savez(
            args.save_reference,
            replicates=reps.to_numpy(),
            columns=np.array(columns),
            report=report.to_numpy(),
        )
        print(f"saved the replicates to {args.save_reference}")
    if args.reference:
        ref = np.load(args.reference)
        cols = [str(c) for c in ref["columns"]]
        got = reps[cols].to_numpy()
        diff = np.abs(got - ref["replicates"])
        same_nan = np.array_equal(np.isnan(got), np.isnan(ref["replicates"]))
        print(
            f"max |replicate - reference| over {got.shape[0]} resamples: "
            f"{np.nanmax(diff):.2e} (NaN in the same places: {same_nan})"
        )
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f}")


if __name__ == "__main__":
    main()
