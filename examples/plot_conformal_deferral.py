"""
=====================================================
Prediction sets and deferral when annotators disagree
=====================================================

Two decisions built on a classifier's probabilities, judged against how
people label the items rather than against their majority label:

* **prediction sets** from conformal prediction. Calibrated on majority
  labels, split conformal prediction covers the majority label at the
  requested level but covers *a random annotator's label* less often; Monte
  Carlo conformal prediction (Stutz et al. 2023, "Conformal prediction under
  ambiguous ground truth", TMLR) calibrates on labels sampled from each
  item's histogram and covers the human distribution;
* **deferral**: the model keeps the items it is most sure of and sends the
  rest to a person. The risk–coverage curve measures how often a random
  annotator would disagree with the labels the model keeps; an α-calibrated
  predicted disagreement ``φ(x)`` (Mimori et al. 2021) ranks the items
  better than the model's confidence when the ambiguity of an item is
  visible in its features but not in the classifier's probabilities.

The data is a synthetic stand-in of CIFAR-10H's size (10,000 items, 10
classes, 51 annotators each; the real CIFAR-10H has no images in this
package's data and this example must run offline): each item has true
label distribution ``Q = softmax(z / T)`` with logits ``z`` linear in 20
features and an item-level temperature ``T`` (its ambiguity). A noisy
reading of ``log T`` is a 21st feature.
"""

# %%
# Data and a classifier trained on majority labels
# ------------------------------------------------
import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

rng = np.random.default_rng(0)
n, n_classes, n_features = 10_000, 10, 20
X = rng.standard_normal((n, n_features))
W = rng.standard_normal((n_features, n_classes))
log_t = 0.8 * rng.standard_normal(n)  # item ambiguity
Z = X @ W / np.exp(log_t)[:, None]
Q = np.exp(Z - Z.max(axis=1, keepdims=True))
Q /= Q.sum(axis=1, keepdims=True)
Y = rng.multinomial(51, Q)  # 51 annotators per item
X = np.column_stack([X, log_t + 0.3 * rng.standard_normal(n)])

train, cal, test = slice(0, 4000), slice(4000, 7000), slice(7000, None)
clf = LogisticRegression(max_iter=1000).fit(X[train], Y[train].argmax(axis=1))
print(
    f"accuracy against the majority: {clf.score(X[test], Y[test].argmax(axis=1)):.3f}"
)

# %%
# Majority-label vs Monte Carlo conformal prediction
# --------------------------------------------------
# :class:`~sklearn_hcal.conformal.HumanConformalClassifier` wraps the fitted
# classifier (``FrozenEstimator``) and is calibrated on held-out items with
# their histograms. ``calibration="majority"`` is standard split conformal
# prediction on the majority label; ``"monte_carlo"`` samples ten labels per
# item from its histogram (coverage of the human distribution at least
# ``1 − 2α``, close to ``1 − α`` in practice); ``correction="ecdf"`` holds
# out half of the items to restore a finite-sample ``1 − α`` guarantee.
import pandas as pd

from sklearn_hcal.conformal import HumanConformalClassifier
from sklearn_hcal.metrics import (
    aggregated_coverage_score,
    majority_coverage_score,
    mean_set_size,
    size_stratified_coverage_score,
)

variants = {
    "majority": {"calibration": "majority"},
    "Monte Carlo": {"calibration": "monte_carlo", "n_labels": 10},
    "Monte Carlo + ECDF": {"calibration": "monte_carlo", "correction": "ecdf"},
}
conformal, rows = {}, {}
for name, params in variants.items():
    cp = HumanConformalClassifier(
        FrozenEstimator(clf), confidence_level=0.9, random_state=0, **params
    ).fit(X[cal], Y[cal])
    sets = cp.predict_set(X[test])
    conformal[name] = cp
    rows[name] = {
        "human coverage": aggregated_coverage_score(Y[test], sets),
        "majority coverage": majority_coverage_score(Y[test], sets),
        "size-stratified": size_stratified_coverage_score(Y[test], sets),
        "mean size": mean_set_size(Y[test], sets),
    }
print(pd.DataFrame(rows).T.round(3).to_string())

# %%
# Calibrated on majority labels, the sets hold the majority label 90 % of
# the time but a random annotator's label much less often; the Monte Carlo
# sets are larger and cover the human distribution at the requested level.
# The conformal p-values give the sets at every level at once:
from sklearn_hcal.plotting import ConformalCoverageDisplay

disp = ConformalCoverageDisplay.from_estimator(
    conformal["majority"], X[test], Y[test], name="majority"
)
disp = ConformalCoverageDisplay.from_estimator(
    conformal["Monte Carlo"], X[test], Y[test], name="Monte Carlo", ax=disp.ax_
)

# %%
# Deferral by predicted disagreement
# ----------------------------------
# α-calibration (:class:`~sklearn_hcal.AlphaCalibrator`) models the human
# distribution as ``Dir(α0(x)·f(x))`` around the temperature-scaled
# probabilities ``f``; here ``α0`` is a log-linear function of the ambiguity
# feature. Its ``predict_disagreement`` is ``φ(x)``, the probability that
# two annotators disagree. The risk–coverage curves compare it with the
# model's confidence ``1 − max_k q_k`` and with the oracle, which defers by
# the true risk of each item.
from sklearn_hcal import AlphaCalibrator, TemperatureScaler
from sklearn_hcal.metrics import aurc_loss, deferral_score, risk_at_coverage_loss
from sklearn_hcal.plotting import RiskCoverageDisplay

ts = TemperatureScaler(FrozenEstimator(clf)).fit(X[cal], Y[cal])
alpha = AlphaCalibrator(
    FrozenEstimator(ts), features=lambda X: X[:, -1:], random_state=0
).fit(X[cal], Y[cal])
P = clf.predict_proba(X[test])
scores = {
    "confidence": deferral_score(P),
    "α-calibrated φ": alpha.predict_disagreement(X[test]),
    "oracle": deferral_score(P, method="oracle", y_true=Y[test]),
}
ax = None
for name, score in scores.items():
    disp = RiskCoverageDisplay.from_predictions(
        Y[test], P, y_score=score, name=name, ax=ax
    )
    ax = disp.ax_
table = pd.DataFrame(
    {
        name: {
            "AURC": aurc_loss(Y[test], P, y_score=score),
            "risk at 80 % kept": risk_at_coverage_loss(
                Y[test], P, y_score=score, coverage=0.8
            ),
        }
        for name, score in scores.items()
    }
).T
print(table.round(4).to_string())

# %%
# The model's confidence cannot see the ambiguity of an item (a linear model
# trained on majority labels gives it no way to flatten its probabilities),
# so it keeps ambiguous items it is confident about; ``φ`` defers them, and
# its curve lies between the confidence and the oracle.
