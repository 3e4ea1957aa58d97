"""The speed goals: ratios now against the goals, with the load average.

Every row times two things interleaved in one process (a, b, a, b, ...)
and keeps the best of 3 of each, so that both see the same machine; the
ratio is printed with the 1-minute load average at the time of the row.
With ``--busy`` a subprocess spins on one core for the whole run (on a
2-core machine: "the other core busy").

Usage, from the project root::

    python benchmarks/bench_goals.py            # ~2-4 min on 2 cores
    python benchmarks/bench_goals.py --quick    # smaller N, ~1 min
    python benchmarks/bench_goals.py --busy     # with a spinning process
    python benchmarks/bench_goals.py --output benchmarks/goals.md
    python benchmarks/bench_goals.py --numpy    # the compiled kernels off
    python benchmarks/bench_goals.py --only alpha512   # one row: α on 512-d

Sizes: temperature scaling at N = 10⁶ × 10 (``--quick``: 2·10⁵; the ratio
is the same within noise), metrics and the report at N = 10⁵ × 10, the
per-call cost at N = 10³, the bootstrap on CIFAR-10H (simulated counts of
its shape when the data is absent), α at N = 2·10⁴ (``--alpha-n``).
Exits 0 whether or not a goal is met.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sklearn_hcal.metrics as M  # noqa: E402

CIFAR = HERE.parent.parent / "shared" / "data" / "cifar10h" / "cifar10h-counts.npy"


def load() -> float:
    return os.getloadavg()[0]


def interleaved(funcs, repeat=3, number=1):
    """Best time per call of each function, calls interleaved."""
    best = [np.inf] * len(funcs)
    for _ in range(repeat):
        for i, f in enumerate(funcs):
            start = time.perf_counter()
            for _ in range(number):
                f()
            best[i] = min(best[i], (time.perf_counter() - start) / number)
    return best


def problem(n, K=10, n_annotations=5, seed=0):
    rng = np.random.default_rng(seed)
    Q = rng.dirichlet(np.ones(K), size=n)
    Y = rng.multinomial(n_annotations, Q)
    Z = np.log(Q + 1e-12) + rng.normal(scale=0.5, size=Q.shape)
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return Y, P


# ----------------------------------------------------------------------- rows
def row_temperature(n):
    from sklearn.calibration import _TemperatureScaling

    from sklearn_hcal.calibration import TemperatureScaler
    from sklearn_hcal.datasets import make_label_histograms

    K = 10
    Z, Y, _ = make_label_histograms(n, K, 5, temperature=2.0, random_state=0)
    rng = np.random.RandomState(0)
    u = rng.randint(0, 5, size=n)[:, None]
    y = np.argmax(np.cumsum(Y, axis=1) > u, axis=1)
    ours, sk = interleaved(
        [lambda: TemperatureScaler().fit(Z, y), lambda: _TemperatureScaling().fit(Z, y)]
    )
    yield (
        f"TemperatureScaler vs scikit-learn's temperature scaling, 1-D labels, "
        f"{n:.0e} × {K}",
        f"{sk / ours:.2f}× faster ({ours * 1e3:.0f} vs {sk * 1e3:.0f} ms)",
        "≥ 2× faster",
        sk / ours >= 2,
    )

    def expanded():
        keep = Y.ravel() > 0
        Z_rep = np.repeat(Z, K, axis=0)[keep]
        y_rep = np.tile(np.arange(K), n)[keep]
        return _TemperatureScaling().fit(
            Z_rep, y_rep, sample_weight=Y.ravel()[keep].astype(float)
        )

    ours, sk = interleaved([lambda: TemperatureScaler().fit(Z, Y), expanded])
    yield (
        "TemperatureScaler on histograms vs the weighted-row expansion",
        f"{sk / ours:.2f}× ({ours * 1e3:.0f} vs {sk * 1e3:.0f} ms)",
        "≥ 5×",
        sk / ours >= 5,
    )


def _metric_calls(Y, P):
    names = [
        "distribution_calibration_error",
        "entropy_calibration_error",
        "ranking_calibration_score",
        "jensen_shannon_distance",
        "kl_divergence",
        "histogram_log_loss",
        "majority_accuracy_score",
        "expected_calibration_error",
        "classwise_expected_calibration_error",
        "expected_squared_loss",
        "epistemic_loss",
        "calibration_loss",
        "calibration_error",
        "dispersion_loss",
        "disagreement_squared_loss",
    ]
    calls = {}
    for name in names:
        f = getattr(M, name)
        calls[name] = lambda f=f: f(Y, P)
    calls["disagreement_probability"] = lambda: M.disagreement_probability(Y)
    return calls


def row_per_call():
    Y, P = problem(1000)
    calls = _metric_calls(Y, P)
    times = {}
    for name, f in calls.items():
        times[name] = interleaved([f], number=100)[0]
    plain = interleaved([lambda: np.abs(P - Y).sum(1)], number=100)[0]
    worst = max(times, key=times.get)
    median = float(np.median(list(times.values())))
    best = min(times.values())
    over = sorted(((k, v) for k, v in times.items() if v > 1e-4), key=lambda kv: -kv[1])
    yield (
        "fixed cost of one metric call (N = 1e3, K = 10)",
        f"{best * 1e3:.3f}–{times[worst] * 1e3:.3f} ms, median "
        f"{median * 1e3:.3f} (highest: {worst}); over 0.1 ms: "
        + (", ".join(f"{k} {v * 1e3:.3f}" for k, v in over) or "none")
        + f" ({len(over)} of {len(times)}); plain pass {plain * 1e3:.3f} ms",
        "≤ 0.1 ms",
        times[worst] <= 1e-4,
    )
    # The floor of a call: validating Y and P alone (every metric does).
    from sklearn_hcal._validation import check_pair

    (t_check,) = interleaved([lambda: check_pair(Y, P)], number=100)
    yield (
        "a call's floor: validating Y and P alone (N = 1e3)",
        f"{t_check * 1e3:.3f} ms",
        "(measured limit)",
        t_check <= 1e-4,
    )


def row_vs_plain(n):
    Y, P = problem(n)
    p_hat = Y / Y.sum(axis=1, keepdims=True)

    def plain():
        return np.abs(P - p_hat).sum(1)

    ratios = {}
    for name, f in _metric_calls(Y, P).items():
        t, t_plain = interleaved([f, plain])
        ratios[name] = t / t_plain
    ranked = sorted(ratios.items(), key=lambda kv: -kv[1])
    top = ", ".join(f"{k} {v:.1f}" for k, v in ranked[:4])
    yield (
        f"each metric vs one numpy pass (`np.abs(P - Q).sum(1)`), N = {n:.0e}, K = 10",
        f"{min(ratios.values()):.2f}–{ranked[0][1]:.2f}× (highest: {top})",
        "≤ 3× each",
        ranked[0][1] <= 3,
    )
    # The floor of the binned losses (calibration_loss, calibration_error,
    # dispersion_loss): what every class-wise binning must do before any
    # statistic -- the bin of each of the N·K entries, p̂ = Y / n and the
    # validation of Y and P -- and the one-pass reduction of the 7
    # statistics (given), against one numpy pass.
    from sklearn_hcal._validation import check_pair

    try:
        from sklearn_hcal.metrics._bins import bin_indices
    except ImportError:  # before the bins had a module of their own
        bin_indices = importlib.import_module(
            "sklearn_hcal.metrics._mimori_kernels"
        ).bin_indices
    from sklearn_hcal.metrics._cells import cell_sums
    from sklearn_hcal.metrics._mimori_kernels import _cell_values

    n_ann = Y.sum(axis=1).astype(np.float64)
    cell, values = _cell_values(p_hat, P, n_ann, 15)
    t_bins, t_hat, t_check, t_reduce, t_plain = interleaved(
        [
            lambda: bin_indices(P, 15),
            lambda: Y / n_ann[:, None],
            lambda: check_pair(Y, P, allow_probabilities=False),
            lambda: cell_sums(cell, values, 15 * P.shape[1]),
            plain,
        ]
    )
    floor = (t_bins + t_hat + t_check) / t_plain
    yield (
        "the binned losses' numpy-path floor: bins of the N·K entries + p̂ + "
        "validation (no statistic yet), and the one-pass reduction of the 7 "
        "statistics, vs one numpy pass (the compiled kernel does all in one pass)",
        f"{floor:.2f}× before any statistic (bins {t_bins / t_plain:.2f}×, p̂ "
        f"{t_hat / t_plain:.2f}×, validation {t_check / t_plain:.2f}×); "
        f"reduction {t_reduce / t_plain:.2f}×",
        "(measured limit)",
        floor + t_reduce / t_plain <= 3,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, t_plain = interleaved(
            [lambda: M.human_calibration_report(Y, {"model": P}), plain]
        )
    yield (
        f"default report (16 columns) vs one numpy pass, N = {n:.0e}",
        f"{t / t_plain:.1f}× ({t * 1e3:.1f} vs {t_plain * 1e3:.2f} ms)",
        "≤ 15×",
        t / t_plain <= 15,
    )
    try:
        import torch
        from torchmetrics.functional.classification import (
            multiclass_calibration_error,
        )
    except ImportError:
        return
    q_t = torch.from_numpy(P)

    def torch_ece():
        target = torch.from_numpy(np.argmax(Y, axis=1))
        return multiclass_calibration_error(
            q_t, target, num_classes=10, n_bins=10, norm="l1"
        )

    ours, theirs = interleaved([lambda: M.expected_calibration_error(Y, P), torch_ece])
    yield (
        "ECE vs torchmetrics' MulticlassCalibrationError (same N)",
        f"{theirs / ours:.2f}× ({ours * 1e3:.1f} vs {theirs * 1e3:.1f} ms, "
        f"{torch.get_num_threads()} torch threads)",
        "≥ 1×",
        theirs / ours >= 1,
    )


def row_bootstrap(n_bootstrap=1000):
    if CIFAR.is_file():
        Y = np.load(CIFAR)
        source = "CIFAR-10H"
    else:
        from sklearn_hcal.datasets import make_label_histograms

        _, Y, _ = make_label_histograms(10_000, 10, 51, random_state=0)
        source = "simulated, CIFAR-10H's shape"
    rng = np.random.RandomState(0)
    Z = np.log(Y + 1.0) + rng.normal(size=Y.shape)
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain, boot = interleaved(
            [
                lambda: M.human_calibration_report(Y, {"model": P}),
                lambda: M.human_calibration_report(
                    Y, {"model": P}, n_bootstrap=n_bootstrap, random_state=0
                ),
            ]
        )
    yield (
        f"report with {n_bootstrap:,} bootstrap resamples vs the plain report "
        f"({source})",
        f"{boot / plain:.1f}× ({boot * 1e3:.0f} vs {plain * 1e3:.1f} ms)",
        "≤ 10×",
        boot / plain <= 10,
    )
    # The floors, each on one thread: drawing the multiplicities, the
    # per-item contributions as the two matrices (once per report), the
    # dense and the sparse product of every chunk, and reading the columns
    # of the 1,000 sets of sums. The report overlaps them on three threads.
    from threadpoolctl import threadpool_limits

    from sklearn_hcal.metrics import _engine, _registry
    from sklearn_hcal.metrics._bootstrap import _chunk_sums as sums_of_chunk
    from sklearn_hcal.metrics._bootstrap import _item_matrices, _resamples
    from sklearn_hcal.metrics._report_inputs import validate_human

    n = len(Y)
    human, source = validate_human(Y, P)
    columns = _engine.resolve(None, human, None, default=_registry.default_columns())
    block = slice(0, n)
    DT, A, layout = _item_matrices._block_matrices(columns, human, [source], block)
    # the products' precision (float32 since the bootstrap's precision work)
    DT, A, layout = _item_matrices._for_products((DT, A, layout))
    sizes = _resamples._chunk_sizes(n, n_bootstrap)
    seeds = _resamples.seed_sequence(0).spawn(len(sizes))
    weights = [
        _resamples._chunk_weights(seed, n, size) for seed, size in zip(seeds, sizes)
    ]
    cached = [(DT, A, layout)]
    sums = sums_of_chunk._stack(
        [
            sums_of_chunk._chunk_sums(columns, human, [source], [block], cached, w)
            for w in weights
        ]
    )

    def draws():
        for seed, size in zip(seeds, sizes):
            _resamples._chunk_weights(seed, n, size)

    def dense():
        for w in weights:
            DT @ w

    def sparse():
        # the report's product: the compiled kernel with the fast extra,
        # else scipy's loop (the same sums)
        for w in weights:
            sums_of_chunk._sparse_product(A, w)

    with threadpool_limits(1):
        t_draw, t_matrices, t_dense, t_sparse, t_values, plain = interleaved(
            [
                draws,
                lambda: _item_matrices._block_matrices(columns, human, [source], block),
                dense,
                sparse,
                lambda: sums_of_chunk._replicates(columns, sums, n),
                lambda: M.human_calibration_report(Y, {"model": P}),
            ]
        )
    parts = {
        "draws": t_draw,
        "contributions": t_matrices,
        f"dense ({DT.shape[0]} columns)": t_dense,
        f"sparse ({A.nnz // 1000}k entries)": t_sparse,
        "columns": t_values,
    }
    total = sum(parts.values())
    yield (
        "the bootstrap's floors on one thread (draws, the per-item contributions, "
        "the dense and the sparse product, reading the columns), vs the plain "
        "report",
        f"{total / plain:.1f}× in all ("
        + ", ".join(f"{k} {v / plain:.1f}×" for k, v in parts.items())
        + f"; plain report {plain * 1e3:.1f} ms)",
        "(measured limit)",
        total / plain <= 10,
    )


def row_alpha(n):
    try:
        import torch
    except ImportError:
        return

    from sklearn_hcal.calibration import AlphaCalibrator, _dirichlet

    try:
        from sklearn_hcal.calibration._alpha._solvers import use_histogram_slots
    except ImportError:  # an older checkout: the switch at max(64, 4K) labels

        def use_histogram_slots(max_labels, n_classes):
            return max_labels <= max(64, 4 * n_classes)

    try:  # the lgamma form as the fit evaluates it (the observed classes)
        from sklearn_hcal.calibration._alpha._likelihood import (
            nll_observed_classes as lgamma_nll,
        )
    except ImportError:  # an older checkout: all classes, under autograd
        lgamma_nll = _dirichlet.dirichlet_multinomial_nll_log_alpha0

    # the likelihood forms at 50 labels (forward and backward), at CIFAR-10H's
    # K = 10 and at K = 3, where the old switch (max(64, 4K)) also chose the
    # per-label form
    rng = np.random.default_rng(0)
    n_labels, n_items = 50, 10_000
    for K in (10, 3):
        F = rng.dirichlet(np.ones(K), size=n_items)
        Y = rng.multinomial(n_labels, F)
        log_a0 = torch.zeros(n_items, dtype=torch.float64, requires_grad=True)
        slots = [torch.as_tensor(a) for a in _dirichlet.histogram_slots(Y, F)]
        Ft, Yt = torch.as_tensor(F), torch.as_tensor(Y, dtype=torch.float64)

        def slot_form(slots=slots, log_a0=log_a0):
            nll = _dirichlet.dirichlet_multinomial_nll_slots(log_a0, *slots)
            nll.sum().backward()

        def lgamma_form(Ft=Ft, Yt=Yt, log_a0=log_a0):
            nll = lgamma_nll(log_a0, Ft, Yt)
            nll.sum().backward()

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # as in the fit
        try:
            t_slot, t_lgamma = interleaved([slot_form, lgamma_form])
        finally:
            torch.set_num_threads(threads)
        chosen = "per-label" if use_histogram_slots(n_labels, K) else "lgamma"
        faster = "per-label" if t_slot < t_lgamma else "lgamma"
        t_chosen = t_slot if chosen == "per-label" else t_lgamma
        ratio = t_chosen / min(t_slot, t_lgamma)
        yield (
            f"α likelihood at 50-label histograms, K = {K}: form chosen / faster",
            f"{chosen} / {faster} (per-label {t_slot * 1e3:.1f} ms, lgamma "
            f"{t_lgamma * 1e3:.1f} ms; the chosen one {ratio:.2f}× the faster)",
            "the faster form chosen (within 1.25×: a tie)",
            ratio <= 1.25,
        )

    # a whole fit on 50-label histograms (CIFAR-10H's ~50) against the same
    # fit on 5-label ones: the same items, features and true concentrations
    from sklearn_hcal.datasets import make_label_histograms

    Z5, Y5, _ = make_label_histograms(n, 10, 5, random_state=0)
    Z50, Y50, _ = make_label_histograms(n, 10, 50, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t5, t50 = interleaved(
            [
                lambda: AlphaCalibrator(alpha_reg=0.0).fit(Z5, Y5),
                lambda: AlphaCalibrator(alpha_reg=0.0).fit(Z50, Y50),
            ]
        )
    form = "per-label" if use_histogram_slots(50, 10) else "lgamma"
    yield (
        f"α fit on 50-label vs 5-label histograms, K = 10, N = {n:.0e}",
        f"{t50 / t5:.1f}× ({t50 * 1e3:.0f} vs {t5 * 1e3:.0f} ms; 50 labels by "
        f"the {form} form)",
        "≤ 4×",
        t50 / t5 <= 4,
    )


def row_alpha_features(n):
    """α on 512-d features against the logit-feature fit (``--only alpha512``)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return
    from bench_alpha import make_problem

    from sklearn_hcal.calibration import AlphaCalibrator

    K = 10
    Z, Yh, G, _ = make_problem(n, K)

    def feats(X, G=G):
        return G[: len(X)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_logit, t_512 = interleaved(
            [
                lambda: AlphaCalibrator(alpha_reg=0.0).fit(Z, Yh),
                lambda: AlphaCalibrator(
                    features=feats, alpha_reg=0.0, solver="lbfgs"
                ).fit(Z, Yh),
            ],
            repeat=3,
        )
    # the memory-bandwidth floor: one pass over the feature matrix
    Gd = np.asarray(G, dtype=np.float64)
    v = np.ones(Gd.shape[1])
    (t_pass,) = interleaved([lambda: Gd @ v])
    fit = AlphaCalibrator(features=feats, alpha_reg=0.0, solver="lbfgs").fit(Z, Yh)
    yield (
        f"α 512-d vs logit-feature fit, 5 labels, N = {n:.0e}",
        f"{t_512 / t_logit:.1f}× ({t_512:.2f} vs {t_logit:.2f} s; "
        f"{fit.n_iter_} iterations; one pass over the 512-d features "
        f"{t_pass * 1e3:.1f} ms = {Gd.nbytes / t_pass / 1e9:.1f} GB/s, "
        f"the fit ≈ {t_512 / t_pass:.0f} passes)",
        "≤ 5×",
        t_512 / t_logit <= 5,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--busy", action="store_true", help="spin one core")
    parser.add_argument("--alpha-n", type=int, default=20_000)
    parser.add_argument("--output", type=Path)
    parser.add_argument(
        "--numpy",
        action="store_true",
        help="turn the compiled kernels (the fast extra) off: the numpy paths",
    )
    parser.add_argument(
        "--only",
        nargs="*",
        default=[
            "temperature",
            "per_call",
            "vs_plain",
            "bootstrap",
            "alpha",
            "alpha512",
        ],
    )
    args = parser.parse_args(argv)

    spinner = None
    if args.busy:
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    lines = []

    def out(text=""):
        print(text, flush=True)
        lines.append(text)

    started = time.perf_counter()
    mode = "one core busy (spinner)" if args.busy else "no spinner"
    from sklearn_hcal.utils._compiled import compiled_available, use_compiled

    switch = use_compiled(not args.numpy)
    switch.__enter__()
    if compiled_available():
        import numba

        kernels = f"compiled kernels on (numba {numba.__version__})"
    else:
        kernels = "compiled kernels off (numpy paths)"
    try:
        out(
            f"Speed goals, {time.strftime('%Y-%m-%d %H:%M %Z')}, "
            f"{os.cpu_count()} cores, {mode}, {kernels}; "
            f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        out()
        out("| what | now | goal | met? | load |")
        out("|---|---|---|---|---|")
        rows = {
            "temperature": lambda: row_temperature(200_000 if args.quick else 10**6),
            "per_call": row_per_call,
            "vs_plain": lambda: row_vs_plain(100_000),
            "bootstrap": row_bootstrap,
            "alpha": lambda: row_alpha(args.alpha_n),
            "alpha512": lambda: row_alpha_features(args.alpha_n),
        }
        for key in args.only:
            for what, now, goal, met in rows[key]():
                out(
                    f"| {what} | {now} | {goal} | {'yes' if met else 'no'} | "
                    f"{load():.2f} |"
                )
    finally:
        switch.__exit__(None, None, None)
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
