"""Plain-Python references of the aggregators, one annotation at a time.

Written from the papers' descriptions with dictionaries and loops, sharing
no code with :mod:`sklearn_hcal.aggregation`: the tests check that the
vectorised code computes the same numbers. The clipping conventions are
crowd-kit's (probabilities floored at 1e-10), which the package documents.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from scipy.optimize import minimize
from scipy.special import digamma

EPS = 1e-10


def rows_of(X):
    return list(zip(X["item"].tolist(), X["annotator"].tolist(), X["label"].tolist()))


def normalise(row: dict) -> dict:
    total = sum(row.values())
    return {k: v / total for k, v in row.items()}


def vote_shares(rows, classes, alpha=0.0):
    counts = defaultdict(lambda: dict.fromkeys(classes, 0.0))
    for item, _, label in rows:
        counts[item][label] += 1.0
    return {
        i: normalise({k: v + alpha for k, v in c.items()}) for i, c in counts.items()
    }


def majority_skills(rows, classes):
    votes = defaultdict(lambda: dict.fromkeys(classes, 0))
    for item, _, label in rows:
        votes[item][label] += 1
    majority = {}
    for item, v in votes.items():
        best = max(v.values())
        majority[item] = next(k for k in classes if v[k] == best)  # first tie
    hits, n = defaultdict(float), defaultdict(int)
    for item, annotator, label in rows:
        hits[annotator] += label == majority[item]
        n[annotator] += 1
    return {a: hits[a] / n[a] for a in n}


def wawa_posterior(rows, classes, skills):
    weighted = defaultdict(lambda: dict.fromkeys(classes, 0.0))
    for item, annotator, label in rows:
        weighted[item][label] += skills[annotator]
    return {i: normalise(w) for i, w in weighted.items()}


# --------------------------------------------------------------------- DS
def ds_e_step(rows, classes, prior, confusion):
    """``confusion[a][(z, k)]``; returns posteriors and the log-likelihood."""
    log_joint = defaultdict(lambda: {z: math.log(max(prior[z], EPS)) for z in classes})
    for item, annotator, label in rows:
        for z in classes:
            log_joint[item][z] += math.log(confusion[annotator][(z, label)])
    posterior, total = {}, 0.0
    for item, lj in log_joint.items():
        top = max(lj.values())
        s = sum(math.exp(v - top) for v in lj.values())
        posterior[item] = {z: math.exp(v - top) / s for z, v in lj.items()}
        total += top + math.log(s)
    return posterior, total


def ds_m_step(rows, classes, posterior, alpha):
    counts = defaultdict(lambda: defaultdict(float))
    used = defaultdict(set)
    for item, annotator, label in rows:
        used[annotator].add(label)
        for z in classes:
            counts[annotator][(z, label)] += posterior[item][z]
    confusion = {}
    for annotator, c in counts.items():
        conf = {}
        for z in classes:
            cells = {
                k: (max(c[(z, k)], EPS) if k in used[annotator] else 0.0) + alpha
                for k in classes
            }
            total = sum(cells.values())
            for k in classes:
                conf[(z, k)] = cells[k] / total
        confusion[annotator] = conf
    prior = {z: np.mean([p[z] for p in posterior.values()]) for z in classes}
    return prior, confusion


def one_coin_m_step(rows, classes, posterior, alpha):
    K = len(classes)
    correct, n = defaultdict(float), defaultdict(int)
    for item, annotator, label in rows:
        correct[annotator] += posterior[item][label]
        n[annotator] += 1
    skills = {a: (correct[a] + K * alpha) / (n[a] + K * K * alpha) for a in n}
    confusion = {}
    for a, s in skills.items():
        confusion[a] = {
            (z, k): min(max(s if z == k else (1 - s) / (K - 1), EPS), 1 - EPS)
            for z in classes
            for k in classes
        }
    prior = {z: np.mean([p[z] for p in posterior.values()]) for z in classes}
    return prior, confusion, skills


def dawid_skene(rows, classes, n_iter, alpha=0.0, one_coin=False):
    """``(posterior, prior, confusion, skills, curve)`` after ``n_iter`` iterations."""
    posterior = vote_shares(rows, classes)
    step = one_coin_m_step if one_coin else ds_m_step
    prior, confusion, *skills = step(rows, classes, posterior, alpha)
    curve = []
    for _ in range(n_iter):
        posterior, ll = ds_e_step(rows, classes, prior, confusion)
        if alpha > 0:  # the Dirichlet prior's log-density: the MAP objective
            ll += alpha * sum(
                math.log(v) for c in confusion.values() for v in c.values()
            )
        prior, confusion, *skills = step(rows, classes, posterior, alpha)
        curve.append(ll / len(rows))
    return posterior, prior, confusion, (skills[0] if skills else None), curve


# --------------------------------------------------------------------- GLAD
def _sigmoid(x):
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def glad_e_step(rows, classes, ability, log_beta):
    K = len(classes)
    log_joint = defaultdict(lambda: {z: -math.log(K) for z in classes})
    for item, annotator, label in rows:
        p = _sigmoid(ability[annotator] * math.exp(log_beta[item]))
        for z in classes:
            log_joint[item][z] += math.log(p if z == label else (1 - p) / (K - 1))
    posterior, total = {}, 0.0
    for item, lj in log_joint.items():
        top = max(lj.values())
        s = sum(math.exp(v - top) for v in lj.values())
        posterior[item] = {z: math.exp(v - top) / s for z, v in lj.items()}
        total += top + math.log(s)
    return posterior, total


def glad_q(rows, classes, posterior, ability, log_beta):
    """crowd-kit's Q: Σ over annotations and classes plus the N(1, 1) priors."""
    K = len(classes)
    q = 0.0
    g_a, g_b = defaultdict(float), defaultdict(float)
    for item, annotator, label in rows:
        beta = math.exp(log_beta[item])
        s = ability[annotator] * beta
        p = _sigmoid(s)
        for z in classes:
            w = posterior[item][z]
            if z == label:
                q += w * math.log(p)
            else:
                q += w * (math.log(1 - p) - math.log(K - 1))
            delta = 1.0 if z == label else 0.0
            g_a[annotator] += w * (delta - p) * beta
            g_b[item] += w * (delta - p) * s
    for a, v in ability.items():
        q += -0.5 * (v - 1) ** 2 - 0.5 * math.log(2 * math.pi)
        g_a[a] -= v - 1
    for i, v in log_beta.items():
        q += -0.5 * (v - 1) ** 2 - 0.5 * math.log(2 * math.pi)
        g_b[i] -= v - 1
    return q, g_a, g_b


def glad(rows, classes, n_iter, m_step_max_iter=25, m_step_tol=1e-2):
    annotators = sorted({a for _, a, _ in rows})
    items = sorted({i for i, _, _ in rows})
    ability = dict.fromkeys(annotators, 1.0)
    log_beta = dict.fromkeys(items, 1.0)
    for _ in range(n_iter):
        posterior, _ = glad_e_step(rows, classes, ability, log_beta)

        def f(x, posterior=posterior):
            a = dict(zip(annotators, x[: len(annotators)]))
            b = dict(zip(items, x[len(annotators) :]))
            q, g_a, g_b = glad_q(rows, classes, posterior, a, b)
            grad = [g_a[k] for k in annotators] + [g_b[k] for k in items]
            return -q, -np.array(grad)

        x0 = np.array([ability[a] for a in annotators] + [log_beta[i] for i in items])
        x = minimize(
            f,
            x0,
            jac=True,
            method="CG",
            tol=m_step_tol,
            options={"maxiter": m_step_max_iter},
        ).x
        ability = dict(zip(annotators, x[: len(annotators)]))
        log_beta = dict(zip(items, x[len(annotators) :]))
    return posterior, ability, log_beta


# --------------------------------------------------------------------- MACE
def mace_e_step(rows, classes, know, spam, strategy):
    K = len(classes)
    log_joint = defaultdict(lambda: {z: -math.log(K) for z in classes})
    for item, annotator, label in rows:
        for z in classes:
            p = spam[annotator] * strategy[annotator][label]
            if z == label:
                p += know[annotator]
            log_joint[item][z] += math.log(p)
    posterior, total = {}, 0.0
    for item, lj in log_joint.items():
        top = max(lj.values())
        s = sum(math.exp(v - top) for v in lj.values())
        posterior[item] = {z: math.exp(v - top) / s for z, v in lj.items()}
        total += top + math.log(s)
    return posterior, total


def mace_counts(rows, classes, posterior, know, spam, strategy):
    knew_sum, spammed_sum = defaultdict(float), defaultdict(float)
    counts = defaultdict(lambda: dict.fromkeys(classes, 0.0))
    for item, annotator, label in rows:
        # P(knew | labels) = Σ_z q(z) P(knew | z, label)
        right = know[annotator]
        wrong = spam[annotator] * strategy[annotator][label]
        knew = posterior[item][label] * right / (right + wrong)
        knew_sum[annotator] += knew
        spammed_sum[annotator] += 1 - knew
        counts[annotator][label] += 1 - knew
    return knew_sum, spammed_sum, counts


def mace_m_step(classes, knew, spammed, counts, method, smoothing, a, b, prior):
    know, spam, strategy = {}, {}, {}
    K = len(classes)
    for w in knew:
        if method == "em":
            know[w] = (knew[w] + smoothing) / (knew[w] + spammed[w] + 2 * smoothing)
            spam[w] = 1 - know[w]
            total = sum(counts[w].values()) + K * smoothing
            strategy[w] = {k: (counts[w][k] + smoothing) / total for k in classes}
        else:
            norm = digamma(knew[w] + spammed[w] + a + b)
            know[w] = math.exp(digamma(knew[w] + b) - norm)
            spam[w] = math.exp(digamma(spammed[w] + a) - norm)
            norm = digamma(sum(counts[w].values()) + K * prior)
            strategy[w] = {
                k: math.exp(digamma(counts[w][k] + prior) - norm) for k in classes
            }
    return know, spam, strategy
