"""The metrics and calibrators against their peers, on the same inputs.

Four comparisons, each printed as a Markdown table:

1. every metric of :mod:`sklearn_hcal.metrics` against one plain numpy pass
   over the data (``np.abs(P - Q).sum(1)``, the cheapest thing a metric could
   do) and against a per-item Python loop in the style of the papers'
   reference scripts (:mod:`_loops`; timed on a subsample and extrapolated
   linearly to the full size);
2. the metrics that scipy or torchmetrics also compute, against those (same
   arrays; torch tensors share the numpy memory, so no conversion is timed);
3. :class:`~sklearn_hcal.TemperatureScaler` against scikit-learn's temperature
   scaling (1-D labels; histograms as weighted rows);
4. :class:`~sklearn_hcal.AlphaCalibrator` fit time on the CPU
   (``bench_alpha.make_problem``).

Run from the project root (``--quick``: N = 100,000 instead of 1,000,000)::

    python benchmarks/bench_peers.py [--quick]

or through ``benchmarks/run.py``, which adds the scaling curves and a
description of the machine. Prints tables and exits 0 whether or not a target
is met; the targets are listed below each table.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loops import LOOPS  # noqa: E402

import sklearn_hcal.metrics as M  # noqa: E402

#: A metric should cost at most this many plain passes ...
TARGET_PLAIN = 3.0
#: ... and be at least this many times faster than a per-item loop.
TARGET_LOOP = 10.0


# --------------------------------------------------------------------------- #
# shared helpers (also used by bench_scaling.py and run.py)
# --------------------------------------------------------------------------- #
def best_time(func, repeat: int = 3, *, budget: float = 2.0) -> float:
    """Best wall-clock time of ``repeat`` calls (fewer when one call is slow)."""
    best = np.inf
    spent = 0.0
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        func()
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        spent += elapsed
        if spent > budget:
            break
    return best


def make_problem(n_samples: int, n_classes: int, n_annotations: int = 5, seed=0):
    """Label counts, model probabilities and human distributions.

    ``Q ~ Dir(1)``; ``Y ~ Multinomial(n_annotations, Q)``; the model's
    ``P = softmax(log Q + noise)`` (strictly positive, so the KL floor of
    ChaosNLI's code never binds and scipy's and torchmetrics' KL agree with
    ours). Returns ``(Y, P, p_hat)`` with ``Y`` int64, ``P`` and ``p_hat``
    float64.
    """
    rng = np.random.default_rng(seed)
    Q = rng.dirichlet(np.ones(n_classes), size=n_samples)
    Y = rng.multinomial(n_annotations, Q).astype(np.int64)
    logits = np.log(Q + 1e-12) + rng.normal(scale=0.5, size=Q.shape)
    logits -= logits.max(axis=1, keepdims=True)
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    return Y, P, p_hat


def markdown_table(header: list[str], rows: list[list]) -> str:
    def fmt(value):
        if isinstance(value, float):
            if not np.isfinite(value):
                return "–"
            if value == 0:
                return "0"
            if abs(value) >= 100:
                return f"{value:,.0f}"
            if abs(value) >= 0.1:
                return f"{value:.2f}"
            return f"{value:.2g}"
        return str(value)

    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _max_abs_diff(a, b) -> float:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.nanmax(np.abs(a - b)))


# --------------------------------------------------------------------------- #
# 1. metrics vs a single pass and vs per-item loops
# --------------------------------------------------------------------------- #
def metric_cases(Y, P):
    """``{name: f(Y, P)}`` for every public metric (as a user calls it)."""
    return {
        "distribution_calibration_error": M.distribution_calibration_error,
        "entropy_calibration_error": M.entropy_calibration_error,
        "ranking_calibration_score": M.ranking_calibration_score,
        "jensen_shannon_distance": M.jensen_shannon_distance,
        "kl_divergence": M.kl_divergence,
        "histogram_log_loss": M.histogram_log_loss,
        "majority_accuracy_score": M.majority_accuracy_score,
        "expected_calibration_error": M.expected_calibration_error,
        "classwise_expected_calibration_error": (
            M.classwise_expected_calibration_error
        ),
        "expected_squared_loss": M.expected_squared_loss,
        "epistemic_loss": M.epistemic_loss,
        "calibration_loss": M.calibration_loss,
        "calibration_error": M.calibration_error,
        "dispersion_loss": M.dispersion_loss,
        "disagreement_probability": lambda Y, P: M.disagreement_probability(Y),
        "predicted_disagreement": lambda Y, P: M.predicted_disagreement(P),
        "disagreement_squared_loss": M.disagreement_squared_loss,
        "disagreement_calibration_error": (
            lambda Y, P: M.disagreement_calibration_error(
                Y, M.predicted_disagreement(P)
            )
        ),
        "human_calibration_report": lambda Y, P: M.human_calibration_report(
            Y, {"model": P}
        ),
    }


def bench_metrics(Y, P, p_hat, *, repeat: int, loop_items: int):
    """Rows of table 1 and the misses against the targets."""
    n = len(Y)
    plain = best_time(lambda: np.abs(P - p_hat).sum(1), repeat)
    sub = slice(0, min(loop_items, n))
    Ys, Ps = Y[sub], P[sub]
    n_sub = len(Ys)
    rows, misses = [], []
    for name, func in metric_cases(Y, P).items():
        ours = best_time(lambda func=func: func(Y, P), repeat)
        row = [name, ours * 1e3, ours / plain]
        if name in LOOPS:
            loop = LOOPS[name]
            loop_sub = best_time(lambda loop=loop: loop(Ys, Ps), 1)
            loop_full = loop_sub * n / n_sub
            diff = _max_abs_diff(loop(Ys, Ps), func(Ys, Ps))
            row += [loop_full * 1e3, loop_full / ours, diff]
        else:
            loop_full = np.nan
            row += [np.nan, np.nan, np.nan]
        notes = []
        if name != "human_calibration_report" and ours / plain > TARGET_PLAIN:
            notes.append(f"> {TARGET_PLAIN:g}× single pass")
        if np.isfinite(loop_full) and loop_full / ours < TARGET_LOOP:
            notes.append(f"< {TARGET_LOOP:g}× faster than loop")
        if notes:
            misses.append(f"{name}: {', '.join(notes)}")
        rows.append(row + ["; ".join(notes)])
    header = [
        "metric",
        "ours ms",
        "× single pass",
        f"loop ms (from {n_sub:,})",
        "loop / ours",
        "max |Δ| vs loop",
        "missed",
    ]
    return plain, header, rows, misses


# --------------------------------------------------------------------------- #
# 2. metrics vs scipy and torchmetrics
# --------------------------------------------------------------------------- #
def peer_cases(Y, P, p_hat):
    """``[(metric, ours, peer name, peer, convention note)]``."""
    from scipy.spatial.distance import jensenshannon
    from scipy.stats import entropy

    cases = [
        (
            "jensen_shannon_distance",
            lambda: M.jensen_shannon_distance(Y, P),
            "scipy jensenshannon(axis=1)",
            lambda: jensenshannon(p_hat, P, axis=1).mean(),
            "same (natural log); scipy is given p̂, not counts",
        ),
        (
            "kl_divergence",
            lambda: M.kl_divergence(Y, P),
            "scipy entropy(p̂, P, axis=1)",
            lambda: entropy(p_hat, P, axis=1).mean(),
            "ours floors q at 1e-15 (ChaosNLI); P > 0 here, so equal",
        ),
        (
            "entropy_calibration_error",
            lambda: M.entropy_calibration_error(Y, P),
            "scipy entropy(P) − entropy(p̂)",
            lambda: np.abs(entropy(P, axis=1) - entropy(p_hat, axis=1)).mean(),
            "same",
        ),
    ]
    try:
        import torch
        from torchmetrics.functional import kl_divergence
        from torchmetrics.functional.classification import (
            multiclass_calibration_error,
        )
    except ImportError:  # the "bench" extra is optional
        return cases
    p_t = torch.from_numpy(p_hat)
    q_t = torch.from_numpy(P)
    K = Y.shape[1]

    def torch_ece():
        # the majority label (first maximum on ties, as ours) is part of the
        # work: both sides start from the same counts Y and probabilities P
        majority_t = torch.from_numpy(np.argmax(Y, axis=1))
        return multiclass_calibration_error(
            q_t, majority_t, num_classes=K, n_bins=10, norm="l1"
        )

    threads = torch.get_num_threads()
    cases += [
        (
            "kl_divergence",
            lambda: M.kl_divergence(Y, P),
            "torchmetrics kl_divergence",
            lambda: float(kl_divergence(p_t, q_t)),
            f"no floor; renormalises both; float64 tensors; {threads} torch threads",
        ),
        (
            "expected_calibration_error",
            lambda: M.expected_calibration_error(Y, P),
            "torchmetrics multiclass_calibration_error",
            lambda: float(torch_ece()),
            "target = argmax(Y) (timed); bins [a, b) vs ours (a, b]; casts "
            f"confidences to float32; {threads} torch threads",
        ),
    ]
    return cases


def bench_vs_peers(Y, P, p_hat, *, repeat: int):
    rows, misses = [], []
    ours_cache = {}
    for metric, ours, peer_name, peer, note in peer_cases(Y, P, p_hat):
        if metric not in ours_cache:
            ours_cache[metric] = (best_time(ours, repeat), ours())
        t_ours, v_ours = ours_cache[metric]
        t_peer = best_time(peer, repeat)
        diff = abs(float(peer()) - float(v_ours))
        ratio = t_peer / t_ours
        if ratio < 1:
            misses.append(f"{metric}: slower than {peer_name} ({ratio:.2f}×)")
        rows.append([metric, peer_name, t_ours * 1e3, t_peer * 1e3, ratio, diff, note])
    header = [
        "metric",
        "peer",
        "ours ms",
        "peer ms",
        "peer / ours",
        "|Δ value|",
        "convention",
    ]
    return header, rows, misses


# --------------------------------------------------------------------------- #
# 3. temperature scaling
# --------------------------------------------------------------------------- #
def bench_temperature(n_samples: int, n_classes: int, *, repeat: int, seed=0):
    from sklearn.calibration import _TemperatureScaling

    from sklearn_hcal import TemperatureScaler
    from sklearn_hcal.datasets import make_label_histograms

    Z, Y, _ = make_label_histograms(
        n_samples, n_classes, 5, temperature=2.0, random_state=seed
    )
    rng = np.random.RandomState(seed)
    # one annotation per item, drawn from its histogram
    u = rng.randint(0, 5, size=n_samples)[:, None]
    y = np.argmax(np.cumsum(Y, axis=1) > u, axis=1)

    def expanded():
        keep = Y.ravel() > 0
        Z_rep = np.repeat(Z, n_classes, axis=0)[keep]
        y_rep = np.tile(np.arange(n_classes), n_samples)[keep]
        return _TemperatureScaling().fit(
            Z_rep, y_rep, sample_weight=Y.ravel()[keep].astype(np.float64)
        )

    rows, misses = [], []
    for target, ours, theirs, label in [
        (
            "1-D labels",
            lambda: TemperatureScaler().fit(Z, y),
            lambda: _TemperatureScaling().fit(Z, y),
            "_TemperatureScaling (CalibratedClassifierCV's calibrator)",
        ),
        (
            "histograms (5/item)",
            lambda: TemperatureScaler().fit(Z, Y),
            expanded,
            "_TemperatureScaling on weighted rows (expansion timed)",
        ),
    ]:
        t_ours = best_time(ours, repeat)
        t_sk = best_time(theirs, repeat)
        T_ours = ours().temperature_
        T_sk = 1.0 / float(theirs().beta_)
        ratio = t_sk / t_ours
        if ratio < 1:
            misses.append(f"TemperatureScaler ({target}): slower than scikit-learn")
        rows.append(
            [target, label, t_ours * 1e3, t_sk * 1e3, ratio, abs(T_ours / T_sk - 1)]
        )
    header = ["targets", "scikit-learn", "ours ms", "sklearn ms", "sklearn / ours"]
    header += ["|T/T_sk − 1|"]
    return header, rows, misses


# --------------------------------------------------------------------------- #
# 4. alpha calibration
# --------------------------------------------------------------------------- #
def bench_alpha(n_samples: int, n_classes: int, *, with_features: bool):
    import torch
    from bench_alpha import make_problem as make_alpha_problem

    from sklearn_hcal.calibration import AlphaCalibrator

    Z, Y, G, alpha0 = make_alpha_problem(n_samples, n_classes)
    cases = [("logits (K features), L-BFGS", AlphaCalibrator(alpha_reg=0.0))]
    if with_features:

        def feats(X, G=G):
            return G[: len(X)]

        cases.append(
            (
                "512-d features, L-BFGS",
                AlphaCalibrator(features=feats, alpha_reg=0.0, solver="lbfgs"),
            )
        )
    rows = []
    for name, cal in cases:
        start = time.perf_counter()
        cal.fit(Z, Y)
        elapsed = time.perf_counter() - start
        rel = np.median(np.abs(cal.predict_concentration(Z) / alpha0 - 1))
        rows.append([name, f"{n_samples:,} × {n_classes}", elapsed, cal.n_iter_, rel])
    header = ["features", "N × K", "fit s (CPU)", "iterations", "median |α0/α0* − 1|"]
    return header, rows, f"torch {torch.__version__}, {torch.get_num_threads()} threads"


# --------------------------------------------------------------------------- #
def run(quick: bool, *, seed: int = 0, out=print) -> list[str]:
    """Run the four comparisons, print Markdown; return the targets missed."""
    n = 100_000 if quick else 1_000_000
    K = 10
    repeat = 5
    loop_items = 5_000 if quick else 20_000
    Y, P, p_hat = make_problem(n, K, seed=seed)
    misses = []

    out(f"### Metrics: N = {n:,} items, K = {K} classes, 5 annotations per item\n")
    with warnings.catch_warnings():
        # every metric warns the same way on every call; once is enough
        warnings.simplefilter("once")
        plain, header, rows, miss = bench_metrics(
            Y, P, p_hat, repeat=repeat, loop_items=loop_items
        )
    misses += miss
    out(
        f"Single numpy pass `np.abs(P - Q).sum(1)`: {plain * 1e3:.1f} ms. "
        f"Loops: a Python loop over the first {loop_items:,} items (`_loops.py`), "
        f"time × {n // loop_items} (extrapolated); `max |Δ|` compares the loop "
        "with the library on those items. Best of "
        f"{repeat} (one run when a call takes over 2 s).\n"
    )
    out(markdown_table(header, rows))
    out(
        f"\nTargets: each metric ≤ {TARGET_PLAIN:g}× the single pass (the report "
        f"is exempt: it computes 16 metrics); ≥ {TARGET_LOOP:g}× faster than the "
        "loop.\n"
    )

    out("### Metrics vs scipy and torchmetrics (same inputs)\n")
    header, rows, miss = bench_vs_peers(Y, P, p_hat, repeat=repeat)
    misses += miss
    out(markdown_table(header, rows))
    out(
        "\nTarget: no slower than the peer (`peer / ours` ≥ 1). torchmetrics "
        "has no Jensen-Shannon metric and no class-wise or human-label "
        "calibration measures; scipy and torchmetrics receive p̂ = Y/n ready-"
        "made while ours starts from the counts and validates them.\n"
    )
    del Y, P, p_hat

    n_t = 100_000 if quick else 1_000_000
    out(f"### TemperatureScaler vs scikit-learn: N = {n_t:,}, K = 10, true T = 2\n")
    header, rows, miss = bench_temperature(n_t, 10, repeat=1 if not quick else 2)
    misses += miss
    out(markdown_table(header, rows))

    n_a = 20_000 if quick else 100_000
    out(f"\n### AlphaCalibrator fit on the CPU: N = {n_a:,}, K = 10\n")
    header, rows, torch_info = bench_alpha(n_a, 10, with_features=not quick)
    out(markdown_table(header, rows))
    out(
        f"\n{torch_info}; data from `bench_alpha.make_problem` (α0* known, "
        "5 labels per item).\n"
    )
    return misses


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 1e5, not 1e6")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    misses = run(args.quick, seed=args.seed)
    print("\nTargets missed:" if misses else "\nAll targets met.")
    for miss in misses:
        print(f"* {miss}")


if __name__ == "__main__":
    main()
