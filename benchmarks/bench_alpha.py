"""Fit time of AlphaCalibrator on large problems (prints numbers).

Usage: python benchmarks/bench_alpha.py [--n 100000] [--classes 10]

* logit features (K columns), L-BFGS, on the CPU (target: under 10 s for
  N = 100,000 x K = 10);
* 512-dimensional features (penultimate-like: a random projection of the
  logits plus noise), L-BFGS and Adam, on the CPU and, when available, CUDA.
"""

import argparse
import time

import numpy as np
import torch
from scipy.special import softmax

from sklearn_hcal.calibration import AlphaCalibrator


def make_problem(n, K, d=512, n_labels=5, seed=0):
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


def bench(name, cal, Z, Y, alpha0):
    t = time.perf_counter()
    cal.fit(Z, Y)
    dt = time.perf_counter() - t
    rel = np.median(np.abs(cal.predict_concentration(Z) / alpha0 - 1))
    print(
        f"{name:38s} {dt:7.2f} s  solver={cal.solver_:5s} n_iter={cal.n_iter_:4d} "
        f"loss={cal.loss_:.5f} median |α0/α0*-1|={rel:.3f}"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--classes", type=int, default=10)
    args = parser.parse_args()
    print(
        f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
        f"CUDA {torch.cuda.is_available()}"
    )
    Z, Y, G, alpha0 = make_problem(args.n, args.classes)
    print(f"N={args.n}, K={args.classes}, 5 labels per item")
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devices:
        bench(
            f"logits, lbfgs, {dev}",
            AlphaCalibrator(alpha_reg=0.0, device=dev),
            Z,
            Y,
            alpha0,
        )

        def feats(X, G=G):
            return G[: len(X)]

        bench(
            f"512-d features, lbfgs, {dev}",
            AlphaCalibrator(features=feats, alpha_reg=0.0, solver="lbfgs", device=dev),
            Z,
            Y,
            alpha0,
        )
        bench(
            f"512-d features, adam (bs 512), {dev}",
            AlphaCalibrator(
                features=feats,
                alpha_reg=0.0,
                solver="adam",
                max_iter=30,
                random_state=0,
                device=dev,
            ),
            Z,
            Y,
            alpha0,
        )
        bench(
            f"512-d, hidden (64,), adam, {dev}",
            AlphaCalibrator(
                features=feats,
                hidden_layer_sizes=(64,),
                alpha_reg=0.0,
                max_iter=30,
                random_state=0,
                device=dev,
            ),
            Z,
            Y,
            alpha0,
        )


if __name__ == "__main__":
    main()
