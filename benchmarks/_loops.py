"""Per-item loop versions of the metrics, for speed comparisons only.

The papers' reference scripts compute their measures item by item: ChaosNLI's
evaluation calls ``scipy.spatial.distance.jensenshannon`` and
``scipy.stats.entropy`` once per example, Baan et al.'s code computes the
entropies and ``argsort`` rankings per instance, Mimori et al.'s bins items
into per-bin lists. The functions here are written from the *definitions*
(developer guide §metric-definitions) in that style -- a Python loop over
items, a scipy or numpy call per item -- not copied from those scripts. They
are deliberately plain and are used in two ways by the benchmark suite:

* as the "per-item loop" baseline that the vectorised metrics are timed
  against (on a subsample, the time extrapolated linearly to the full size:
  a loop's cost per item does not depend on the number of items), and
* as an independent implementation: the suite prints the largest absolute
  difference between each loop and the library on the same subsample.

Each function takes label counts ``Y`` (n, K) and probabilities ``P`` (n, K)
and returns the aggregate value (``disagreement_probability``: the per-item
values, as the library function does).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.distance import cityblock, jensenshannon
from scipy.stats import entropy

__all__ = ["LOOPS"]


def loop_distribution_calibration_error(Y, P):
    total = 0.0
    for y, q in zip(Y, P):
        total += 0.5 * cityblock(y / y.sum(), q)
    return total / len(Y)


def loop_entropy_calibration_error(Y, P):
    total = 0.0
    for y, q in zip(Y, P):
        total += abs(entropy(q) - entropy(y / y.sum()))
    return total / len(Y)


def loop_jensen_shannon_distance(Y, P):
    total = 0.0
    for y, q in zip(Y, P):
        total += jensenshannon(y / y.sum(), q)
    return total / len(Y)


def loop_kl_divergence(Y, P, eps=1e-15):
    total = 0.0
    for y, q in zip(Y, P):
        q = np.maximum(q, eps)
        total += entropy(y / y.sum(), q / q.sum())
    return total / len(Y)


def loop_ranking_calibration_score(Y, P):
    hits = 0
    for y, q in zip(Y, P):
        hits += np.array_equal(
            np.argsort(q, kind="stable"), np.argsort(y, kind="stable")
        )
    return hits / len(Y)


def loop_majority_accuracy_score(Y, P):
    hits = 0
    for y, q in zip(Y, P):
        hits += int(np.argmax(q) == np.argmax(y))
    return hits / len(Y)


def _ece_from_lists(conf, correct, n_bins):
    # right-closed bins (a, b]: bin b holds b/n_bins < c <= (b+1)/n_bins
    bins = [[] for _ in range(n_bins)]
    for c, ok in zip(conf, correct):
        b = math.ceil(c * n_bins) - 1
        if b >= 0:
            bins[min(b, n_bins - 1)].append((c, ok))
    n_binned = sum(len(b) for b in bins)
    ece = 0.0
    for members in bins:
        if members:
            gap = sum(ok - c for c, ok in members)
            ece += abs(gap) / n_binned
    return ece


def loop_expected_calibration_error(Y, P, n_bins=10):
    conf, correct = [], []
    for y, q in zip(Y, P):
        k = int(np.argmax(q))
        conf.append(float(q[k]))
        correct.append(float(k == int(np.argmax(y))))
    return _ece_from_lists(conf, correct, n_bins)


def loop_classwise_expected_calibration_error(Y, P, n_bins=10):
    K = Y.shape[1]
    conf = [[] for _ in range(K)]
    hit = [[] for _ in range(K)]
    for y, q in zip(Y, P):
        majority = int(np.argmax(y))
        for k in range(K):
            conf[k].append(float(q[k]))
            hit[k].append(float(majority == k))
    return sum(_ece_from_lists(conf[k], hit[k], n_bins) for k in range(K)) / K


def loop_histogram_log_loss(Y, P, eps=1e-15):
    total, n_total = 0.0, 0.0
    for y, q in zip(Y, P):
        total -= float(np.dot(y, np.log(np.maximum(q, eps))))
        n_total += y.sum()
    return total / n_total


def loop_expected_squared_loss(Y, P):
    total = 0.0
    for y, q in zip(Y, P):
        p = y / y.sum()
        total += float(np.sum((p - q) ** 2 + p * (1 - p)))
    return total / len(Y)


def loop_epistemic_loss(Y, P):
    total = 0.0
    for y, q in zip(Y, P):
        n = y.sum()
        p = y / n
        total += float(np.sum((p - q) ** 2))
        if n >= 2:
            total -= float(np.sum(p * (1 - p))) / (n - 1)
    return total / len(Y)


def loop_calibration_loss(Y, P, n_bins=15):
    """Debiased class-wise CL (Mimori et al. 2021, eq. 12-14), bins as lists."""
    N, K = Y.shape
    members = [[[] for _ in range(n_bins)] for _ in range(K)]
    for y, q in zip(Y, P):
        p = y / y.sum()
        for k in range(K):
            b = min(int(q[k] * n_bins), n_bins - 1)  # [j/B, (j+1)/B), last closed
            members[k][b].append((p[k], q[k]))
    cl = 0.0
    for k in range(K):
        for pairs in members[k]:
            size = len(pairs)
            if size == 0:
                continue
            ps = np.array([a for a, _ in pairs])
            qs = np.array([b for _, b in pairs])
            cl += size / N * (ps.mean() - qs.mean()) ** 2
            if size >= 2:
                cl -= np.var(ps, ddof=1) / N
    return cl


def loop_disagreement_probability(Y, P=None):
    """Per item; ``P`` is ignored (same signature as the others)."""
    out = np.empty(len(Y))
    for i, y in enumerate(Y):
        n = y.sum()
        out[i] = 1.0 - float(np.dot(y, y - 1)) / (n * (n - 1)) if n >= 2 else np.nan
    return out


#: metric name of :mod:`sklearn_hcal.metrics` -> loop version ``f(Y, P)``
LOOPS = {
    "distribution_calibration_error": loop_distribution_calibration_error,
    "entropy_calibration_error": loop_entropy_calibration_error,
    "jensen_shannon_distance": loop_jensen_shannon_distance,
    "kl_divergence": loop_kl_divergence,
    "ranking_calibration_score": loop_ranking_calibration_score,
    "majority_accuracy_score": loop_majority_accuracy_score,
    "expected_calibration_error": loop_expected_calibration_error,
    "classwise_expected_calibration_error": (loop_classwise_expected_calibration_error),
    "histogram_log_loss": loop_histogram_log_loss,
    "expected_squared_loss": loop_expected_squared_loss,
    "epistemic_loss": loop_epistemic_loss,
    "calibration_loss": loop_calibration_loss,
    "disagreement_probability": loop_disagreement_probability,
}
