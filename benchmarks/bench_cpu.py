"""The speed goals' rows as single-thread CPU time, for comparisons under load.

Wall-clock ratios on a shared machine move with whatever else runs; the CPU
time this process spends on one thread (``HCAL_NUM_THREADS=1``, one BLAS
thread, ``time.process_time()``, minimum of several repeats) moves much
less, so two versions of the package run alternately compare fairly::

    PYTHONPATH=/path/to/old python benchmarks/bench_cpu.py
    PYTHONPATH=. python benchmarks/bench_cpu.py

Prints one line: the per-call cost at N = 10³ (median and highest metric),
the highest metrics against one numpy pass at N = 10⁵, the default report
against one pass, torchmetrics' ECE against ours (one torch thread), and
the bootstrap's CPU against the plain report's on CIFAR-10H (simulated
counts of its shape when the data is absent), with the load average. It
does not replace ``bench_goals.py``: the goals are wall clock, with the
package's threads.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

os.environ["HCAL_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_goals import CIFAR, _metric_calls, problem  # noqa: E402

import sklearn_hcal.metrics as M  # noqa: E402


def cpu(f, repeat):
    best = np.inf
    for _ in range(repeat):
        start = time.process_time()
        f()
        best = min(best, time.process_time() - start)
    return best


def cifar():
    if CIFAR.is_file():
        Y = np.load(CIFAR)
    else:
        from sklearn_hcal.datasets import make_label_histograms

        _, Y, _ = make_label_histograms(10_000, 10, 51, random_state=0)
    rng = np.random.RandomState(0)
    Z = np.log(Y + 1.0) + rng.normal(size=Y.shape)
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    return Y, P / P.sum(axis=1, keepdims=True)


def bootstrap_only():
    """The bootstrap's row alone (``--bootstrap``): the CPU of all its
    threads (the drawing and the sparse-product threads run whatever
    ``HCAL_NUM_THREADS`` says), against the plain report's."""
    Yc, Pc = cifar()
    with threadpool_limits(1):
        plain_report = cpu(lambda: M.human_calibration_report(Yc, {"model": Pc}), 7)
        boot = cpu(
            lambda: M.human_calibration_report(
                Yc, {"model": Pc}, n_bootstrap=1000, random_state=0
            ),
            5,
        )
    print(
        f"CPU, one BLAS thread, load {os.getloadavg()[0]:.1f}: bootstrap CPU / "
        f"plain report CPU {boot / plain_report:.1f} ({boot * 1e3:.0f} / "
        f"{plain_report * 1e3:.1f} ms)"
    )


def main():
    warnings.simplefilter("ignore")
    if "--bootstrap" in sys.argv[1:]:
        bootstrap_only()
        return
    with threadpool_limits(1):
        Y, P = problem(100_000)
        p_hat = Y / Y.sum(axis=1, keepdims=True)
        plain = cpu(lambda: np.abs(P - p_hat).sum(1), 15)
        ratios = {k: cpu(f, 7) / plain for k, f in _metric_calls(Y, P).items()}
        report = cpu(lambda: M.human_calibration_report(Y, {"model": P}), 5) / plain
        Y1, P1 = problem(1000)
        per_call = {k: cpu(f, 200) for k, f in _metric_calls(Y1, P1).items()}
        ece = cpu(lambda: M.expected_calibration_error(Y, P), 7)
        torch_ece = _torch_ece_cpu(Y, P)
        Yc, Pc = cifar()
        plain_report = cpu(lambda: M.human_calibration_report(Yc, {"model": Pc}), 7)
        boot = cpu(
            lambda: M.human_calibration_report(
                Yc, {"model": Pc}, n_bootstrap=1000, random_state=0
            ),
            3,
        )
    top = sorted(ratios.items(), key=lambda kv: -kv[1])[:4]
    print(
        f"CPU, one thread, load {os.getloadavg()[0]:.1f}: per call N=1e3 median "
        f"{np.median(list(per_call.values())) * 1e3:.3f} max "
        f"{max(per_call.values()) * 1e3:.3f} ms | metrics/plain max "
        f"{top[0][1]:.2f} ({', '.join(f'{k} {v:.1f}' for k, v in top)}) | "
        f"report/plain {report:.1f} | torchmetrics ECE CPU / ECE CPU "
        + (
            f"{torch_ece / ece:.2f} ({torch_ece * 1e3:.1f} / {ece * 1e3:.1f} ms)"
            if torch_ece
            else "(no torchmetrics)"
        )
        + f" | bootstrap CPU / plain report CPU {boot / plain_report:.1f} "
        f"({boot * 1e3:.0f} / {plain_report * 1e3:.1f} ms)"
    )


def _torch_ece_cpu(Y, P):
    """torchmetrics' ECE on one torch thread (the majority by numpy's argmax,
    as in ``bench_goals.py``); None without torchmetrics."""
    try:
        import torch
        from torchmetrics.functional.classification import (
            multiclass_calibration_error,
        )
    except ImportError:
        return None
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        q = torch.from_numpy(P)

        def run():
            target = torch.from_numpy(np.argmax(Y, axis=1))
            return multiclass_calibration_error(
                q, target, num_classes=P.shape[1], n_bins=10, norm="l1"
            )

        return cpu(run, 7)
    finally:
        torch.set_num_threads(threads)


if __name__ == "__main__":
    main()
