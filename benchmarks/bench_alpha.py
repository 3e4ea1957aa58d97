"""α-calibration on high-dimensional features: convergence, recovery, fit time.

Usage::

    python benchmarks/bench_alpha.py                  # N = 100,000, d = 512 and 2,048
    python benchmarks/bench_alpha.py --n 20000 --dims 512 --no-sweep

Simulation with a known truth (``make_feature_problem``): penultimate-like
features ``g = u A + noise`` (a ``rank``-dimensional latent ``u`` spread over
``d`` correlated features), a linear classifier head that reads the latent
(logits ``z = g V``, ``f = softmax(z)``), the truth ``log α0 = aᵀz + log 5 =
(V a)ᵀ g + log 5`` (exactly linear in ``g`` and in ``z``), ``Q ~ Dir(α0 f)``
and 5 labels per item. ``--isotropic`` adds a 512-d case with i.i.d. Gaussian
features and a dense ``w``, where no regulariser can help: its error is the
statistical floor ``0.674·sqrt(h_iᵀ I⁻¹ h_i)`` of the exact optimum (``I``
the observed information), printed beside it.

Printed per case: fit time (standardisation + solver, CPU, best of
``--repeat`` fits, after one warm-up fit that pays torch's one-off imports;
the unpreconditioned and MLP rows are timed once), L-BFGS iterations and objective
evaluations, whether the stopping criterion was met, the training objective,
the held-out NLL and the median ``|α0/α0* - 1|`` over all items.
``l2_reg`` is chosen by the held-out Dirichlet-multinomial NLL of a 20%
split (written here with ``scipy.special.gammaln``, independently of the
library), then refit on all items, as ``GridSearchCV`` would.

``make_problem`` (the earlier 512-d random-rotation problem) stays for
``bench_peers.py``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import torch
from scipy.special import gammaln, softmax

from sklearn_hcal.calibration import AlphaCalibrator
from sklearn_hcal.calibration._alpha._features import standardize_features
from sklearn_hcal.calibration._alpha._solvers import (
    fit_concentration_model,
    predict_log_alpha0,
)


def make_problem(n, K, d=512, n_labels=5, seed=0):
    """The earlier problem: logits and a random rotation of [logits, noise]."""
    rng = np.random.RandomState(seed)
    Z = 2.0 * rng.standard_normal((n, K))
    alpha0 = np.exp(0.3 * Z[:, 0] - 0.2 * Z[:, 1] + np.log(5.0))
    g = rng.standard_gamma(alpha0[:, None] * softmax(Z, axis=1))
    Q = g / g.sum(1, keepdims=True)
    u = rng.random_sample((n, n_labels, 1))
    labels = (np.cumsum(Q, axis=1)[:, None, :] < u).sum(-1).clip(0, K - 1)
    Y = np.stack([(labels == k).sum(1) for k in range(K)], axis=1)
    G = np.concatenate([Z, rng.standard_normal((n, d - K))], axis=1) @ (
        rng.standard_normal((d, d)) / np.sqrt(d)
    )
    return Z, Y, G.astype(np.float32), alpha0


def _draw_histograms(rng, alpha0, F, n_labels):
    g = rng.standard_gamma(alpha0[:, None] * F)
    Q = g / g.sum(1, keepdims=True)
    u = rng.random_sample((len(F), n_labels, 1))
    labels = (np.cumsum(Q, axis=1)[:, None, :] < u).sum(-1).clip(0, F.shape[1] - 1)
    return np.stack([(labels == k).sum(1) for k in range(F.shape[1])], axis=1)


def make_feature_problem(
    n, d, K=10, n_labels=5, rank=10, noise=0.3, isotropic=False, seed=0
):
    """``(G, Z, Y, alpha0)`` with ``log α0`` exactly linear in ``G`` (and ``Z``).

    Penultimate-like (default): ``G = U A + noise·E`` with ``U`` of shape
    ``(n, rank)``; logits ``Z = G V``, ``V = A⁺ C``, so that the head reads
    the latent; ``log α0 = 0.3 z_0 - 0.2 z_1 + log 5``. Isotropic: ``G`` i.i.d.
    standard normal, ``Z = G V`` with a random head and ``log α0 = wᵀg +
    log 5`` with a random dense ``w`` (standard deviation 0.5 across items),
    unrelated to the head.
    """
    rng = np.random.RandomState(seed)
    if isotropic:
        G = rng.standard_normal((n, d))
        V = 2.0 * rng.standard_normal((d, K)) / np.sqrt(d)
        w = 0.5 * rng.standard_normal(d) / np.sqrt(d)
    else:
        A = rng.standard_normal((rank, d)) / np.sqrt(rank)
        G = rng.standard_normal((n, rank)) @ A
        G += noise * rng.standard_normal((n, d))
        C = 2.0 * rng.standard_normal((rank, K)) / np.sqrt(rank)
        V = np.linalg.pinv(A) @ C
        w = V @ np.r_[0.3, -0.2, np.zeros(K - 2)]
    Z = G @ V
    alpha0 = np.exp(G @ w + np.log(5.0))
    Y = _draw_histograms(rng, alpha0, softmax(Z, axis=1), n_labels)
    return G.astype(np.float32), Z, Y, alpha0


def standardise_as_today(G):
    """What today's ``AlphaCalibrator.fit`` does to the features (3 temporaries
    of the size of ``G``; ``--estimator`` times it end to end)."""
    G = np.asarray(G, dtype=np.float64)
    mean, scale = G.mean(axis=0), G.std(axis=0)
    scale[scale < 1e-12] = 1.0
    return (G - mean) / scale, mean, scale


standardise = standardize_features


def dm_nll(log_a0, F, Y):
    """Mean Dirichlet-multinomial NLL per item (scipy, no library code)."""
    a0 = np.exp(log_a0)
    alpha = a0[:, None] * F
    n = Y.sum(1)
    ll = gammaln(a0) - gammaln(a0 + n) + (gammaln(alpha + Y) - gammaln(alpha)).sum(1)
    return float(-np.mean(ll))


def statistical_floor(H, F, Y, log_a0):
    """Median of 0.674·SE(log α0_i) at an unpenalised optimum (observed info).

    The second derivative of item i's NLL in ``η = log α0`` in closed form
    (digamma/trigamma written out as sums over the labels, eq. 51).
    """
    a = np.exp(log_a0)
    n = Y.sum(1).astype(int)
    d2 = np.zeros_like(a)
    for k in range(Y.shape[1]):
        for j in range(int(Y[:, k].max())):
            m = Y[:, k] > j
            af = a[m] * F[m, k]
            d2[m] -= af * j / (af + j) ** 2
    for j in range(int(n.max())):
        m = n > j
        d2[m] += a[m] * j / (a[m] + j) ** 2
    w = n / n.mean()  # the reference weights of the loss
    X = np.hstack([H, np.ones((len(H), 1))])
    info = X.T @ (X * (w * d2)[:, None])
    var = np.einsum("ij,ij->i", X @ np.linalg.inv(info), X)
    return float(np.median(0.674 * np.sqrt(np.maximum(var, 0))))


REPEAT = 1


def fit(G, F, Y, repeat=None, **kw):
    """Standardise and fit, timed: ``(seconds, ConcentrationFit, H)``.

    The time is the best of ``repeat`` fits (the module's ``REPEAT``, set by
    ``--repeat``): other jobs on a shared machine only ever add time.
    """
    times = []
    for _ in range(REPEAT if repeat is None else repeat):
        start = time.perf_counter()
        H, _, _ = standardise(G)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = fit_concentration_model(H, F, Y, random_state=0, **kw)
        times.append(time.perf_counter() - start)
        res.warned = any("converge" in str(w.message) for w in caught)
    return min(times), res, H


def _timed(func, *args):
    start = time.perf_counter()
    func(*args)
    return time.perf_counter() - start


def choose_l2(G, F, Y, grid, **kw):
    """``l2_reg`` of ``grid`` with the lowest held-out DM NLL (80/20 split)."""
    rng = np.random.RandomState(1)
    perm = rng.permutation(len(Y))
    cut = int(0.8 * len(Y))
    tr, va = np.sort(perm[:cut]), np.sort(perm[cut:])
    G_tr = np.asarray(G[tr], dtype=np.float64)
    mean, scale = G_tr.mean(0), G_tr.std(0)
    scale[scale < 1e-12] = 1.0
    scores = []
    for l2 in grid:
        _, res, _ = fit(G_tr, F[tr], Y[tr], repeat=1, l2_reg=l2, **kw)
        H_va = (np.asarray(G[va], dtype=np.float64) - mean) / scale
        la = predict_log_alpha0(H_va, res.coefs, res.intercepts)
        scores.append(dm_nll(la, F[va], Y[va]))
    return grid[int(np.argmin(scores))], scores


def row(name, seconds, res, H, alpha0, F, Y, extra=""):
    la = predict_log_alpha0(H, res.coefs, res.intercepts)
    rel = np.median(np.abs(np.exp(la) / alpha0 - 1))
    ok = "yes" if res.converged and not res.warned else "NO"
    print(
        f"| {name} | {seconds:.2f} | {res.n_iter} | {res.n_evals} | {ok} | "
        f"{res.grad_max:.1e} | {res.loss:.6f} | {rel:.4f} | {extra} |",
        flush=True,
    )
    return rel


HEADER = (
    "| case | fit s | iterations | evaluations | converged | max grad "
    "| objective | median abs(α0/α0* − 1) | note |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--dims", type=int, nargs="+", default=[512, 2048])
    parser.add_argument("--rank", type=int, default=10, help="latent dimension")
    parser.add_argument("--noise", type=float, default=0.3, help="feature noise sd")
    parser.add_argument("--no-sweep", action="store_true", help="skip l2 selection")
    parser.add_argument("--l2", type=float, help="this l2_reg instead of the sweep")
    parser.add_argument("--isotropic", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="best of, per fit")
    parser.add_argument("--threads", type=int, help="torch intra-op threads")
    parser.add_argument("--plain", action="store_true", help="also unpreconditioned")
    parser.add_argument("--estimator", action="store_true", help="also via estimator")
    parser.add_argument(
        "--mlp", action="store_true", help="also hidden (64,), Adam via skorch"
    )
    args = parser.parse_args(argv)
    global REPEAT
    REPEAT = args.repeat
    if args.threads:
        torch.set_num_threads(args.threads)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"CUDA {torch.cuda.is_available()}; load average before "
        f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}"
    )
    N, K = args.n, args.classes
    grid = [0.0, 1e-3, 1e-2, 0.03, 0.1, 0.3, 1.0, 3.0]
    print(
        f"\nN = {N:,}, K = {K}, 5 labels per item, alpha_reg = 0, "
        f"penultimate-like features: latent rank {args.rank}, noise sd {args.noise}\n"
    )
    print(HEADER)
    # warm-up: torch.optim's first optimiser imports torch._dynamo (~1.5 s once)
    G, Z, Y, alpha0 = make_feature_problem(2000, 64, K=K, seed=9)
    fit(Z, softmax(Z, axis=1), Y, alpha_reg=0.0)

    for d in args.dims:
        # one draw per d: its own latent, head, truth and labels (seed 0)
        G, Z, Y, alpha0 = make_feature_problem(
            N, d, K=K, rank=args.rank, noise=args.noise
        )
        F = softmax(Z, axis=1)
        t_logits, res, H = fit(Z, F, Y, alpha_reg=0.0)
        row(f"logits (K features), d = {d} draw", t_logits, res, H, alpha0, F, Y)
        t_std = min(_timed(standardise_as_today, G) for _ in range(REPEAT))
        t_new = min(_timed(standardise, G) for _ in range(REPEAT))
        print(
            f"| {d}-d features: standardisation as today's estimator | {t_std:.2f} "
            f"| | | | | | | this fit: {t_new:.2f} s (`standardize_features`) |"
        )
        t, res, H = fit(G, F, Y, alpha_reg=0.0)
        note = f"{t / t_logits:.1f}× logits"
        row(f"{d}-d, l2_reg = 0", t, res, H, alpha0, F, Y, note)
        if args.l2 is not None:
            t, res, H = fit(G, F, Y, alpha_reg=0.0, l2_reg=args.l2)
            note = f"{t / t_logits:.1f}× logits"
            row(f"{d}-d, l2_reg = {args.l2:g}", t, res, H, alpha0, F, Y, note)
        elif not args.no_sweep:
            l2, scores = choose_l2(G, F, Y, grid, alpha_reg=0.0)
            t, res, H = fit(G, F, Y, alpha_reg=0.0, l2_reg=l2)
            note = f"{t / t_logits:.1f}× logits; held-out NLL " + ", ".join(
                f"{v:g}: {s:.5f}" for v, s in zip(grid, scores)
            )
            row(f"{d}-d, l2_reg = {l2:g} (chosen)", t, res, H, alpha0, F, Y, note)
        if args.plain:
            t, res, H = fit(G, F, Y, repeat=1, alpha_reg=0.0, precondition=False)
            row(f"{d}-d, unpreconditioned", t, res, H, alpha0, F, Y)
        if args.mlp:
            kw = dict(alpha_reg=0.0, hidden=(64,), max_iter=30)
            t, res, H = fit(G, F, Y, repeat=1, **kw)
            row(f"{d}-d, hidden (64,), Adam (30 epochs max)", t, res, H, alpha0, F, Y)
        del G, H
    if args.isotropic:
        Gi, Zi, Yi, a0i = make_feature_problem(N, 512, K=K, isotropic=True, seed=3)
        Fi = softmax(Zi, axis=1)
        t, res, H = fit(Gi, Fi, Yi, alpha_reg=0.0)
        la = predict_log_alpha0(H, res.coefs, res.intercepts)
        floor = statistical_floor(H, Fi, Yi, la)
        row("512-d isotropic, l2_reg = 0", t, res, H, a0i, Fi, Yi, f"floor {floor:.4f}")
    if args.estimator:
        # end to end through today's AlphaCalibrator (no l2_reg there yet):
        # the simulation above and the earlier random-rotation problem
        G, Z, Y, alpha0 = make_feature_problem(N, 512, K=K, rank=args.rank)
        Zo, Yo, Go, a0o = make_problem(N, K)
        cases = [
            ("estimator, logits", {}, Z, Y, alpha0, REPEAT),
            ("estimator, 512-d", {"features": lambda X, G=G: G}, Z, Y, alpha0, REPEAT),
            ("estimator, logits (make_problem)", {}, Zo, Yo, a0o, 1),
            (
                "estimator, 512-d (make_problem)",
                {"features": lambda X, G=Go: G},
                Zo,
                Yo,
                a0o,
                1,
            ),
        ]
        for name, kw, Ze, Ye, a0e, repeat in cases:
            times = []
            for _ in range(repeat):
                cal = AlphaCalibrator(alpha_reg=0.0, random_state=0, **kw)
                start = time.perf_counter()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    cal.fit(Ze, Ye)
                times.append(time.perf_counter() - start)
            rel = np.median(np.abs(cal.predict_concentration(Ze) / a0e - 1))
            print(
                f"| {name} | {min(times):.2f} | {cal.n_iter_} | – | "
                f"{'NO' if caught else 'yes'} | – | {cal.loss_:.6f} | {rel:.4f} | |"
            )
    print(f"\nload average after {', '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
