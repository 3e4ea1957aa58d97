"""
=====================================================
The oracle is miscalibrated? ECE when humans disagree
=====================================================

Baan et al. (2022), *Stop Measuring Calibration When Humans Disagree*, argue
that calibration measured against the **majority label** (ECE and its
variants) is meaningless on data where people disagree. Their argument on
ChaosNLI-SNLI (100 labels per item):

1. The *oracle* that predicts each item's human label distribution (the
   maximum-likelihood estimate ``Y / n``) is as good as a classifier can be,
   yet its ECE is about 0.25: it is "severely miscalibrated".
2. Making the ECE small requires distorting the oracle's probabilities,
   which moves them *away* from what humans do.
3. Instance-level human calibration metrics (DistCE, EntCE, RankCS) call the
   oracle perfect, and the spread of DistCE over items gives a scale: two
   classifiers built from 20 sub-sampled human votes each are "as good as it
   realistically gets" (their Fig. 2 and Table 2).

This example reproduces each step.
"""

# %%
# The oracle
# ----------

import numpy as np
import pandas as pd

from sklearn_hcal.datasets import fetch_chaosnli
from sklearn_hcal.metrics import human_calibration_report

pd.set_option("display.precision", 3)
snli = fetch_chaosnli("snli")
Y = snli.counts
oracle = Y / Y.sum(axis=1, keepdims=True)

columns = ["accuracy", "ece", "classwise_ece", "rank_cs", "ent_ce", "dist_ce"]
human_calibration_report(Y, {"oracle": oracle})[columns]

# %%
# Baan et al.'s Table 1 reports ECE 0.25, accuracy 1, RankCS 1, EntCE 0 and
# DistCE 0 for the oracle. The ECE is large because the oracle's accuracy
# against the majority is 1 in every bin, while its confidence (the share of
# the majority class) is far below 1 whenever humans disagree:
from sklearn_hcal.plotting import MajorityReliabilityDisplay

disp = MajorityReliabilityDisplay.from_predictions(Y, oracle, name="oracle")

# %%
# "Calibrating" the oracle to the majority
# ----------------------------------------
# Rescale the oracle with a temperature ``T``, ``q ∝ oracle^(1/T)``, and follow
# the ECE against the majority and the DistCE against the human distribution.
# The ECE keeps falling as the probabilities are sharpened towards the majority
# class (``T → 0``); the DistCE is zero only at ``T = 1``, the oracle itself.
import matplotlib.pyplot as plt
from scipy.special import softmax

from sklearn_hcal.metrics import (
    distribution_calibration_error,
    expected_calibration_error,
)

log_oracle = np.log(np.maximum(oracle, 1e-300))
temperatures = np.geomspace(0.05, 4, 30)
ece, dist_ce = [], []
for T in temperatures:
    P_T = softmax(log_oracle / T, axis=1)
    ece.append(expected_calibration_error(Y, P_T))
    dist_ce.append(distribution_calibration_error(Y, P_T))

fig, ax = plt.subplots(layout="constrained")
ax.plot(temperatures, ece, label="ECE against the majority")
ax.plot(temperatures, dist_ce, label="DistCE against the human distribution")
ax.axvline(1, color="grey", linestyle=":", label="T = 1: the oracle")
ax.set_xscale("log")
ax.set_xlabel("temperature T applied to the oracle")
ax.set_ylabel("error")
ax.legend()
plt.show()

# %%
# The usual recipe, fitting a temperature to the majority labels, therefore
# drives ``T`` towards 0: every item's top class *is* the majority, so the
# likelihood of the majority labels only grows as the predictions become
# one-hot (:class:`~sklearn_hcal.TemperatureScaler` warns about it). Fitted
# to the label histograms themselves, the temperature stays at 1: the oracle
# is the maximum-likelihood estimate of the human distribution, and no
# temperature improves its likelihood.
import warnings

from sklearn_hcal import TemperatureScaler

with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # "temperature goes to 0"
    ts_majority = TemperatureScaler(input="proba").fit(oracle, Y.argmax(axis=1))
ts_humans = TemperatureScaler(input="proba").fit(oracle, Y)
print(f"temperature fitted to the majority labels:  {ts_majority.temperature_:.3f}")
print(f"temperature fitted to the label histograms: {ts_humans.temperature_:.3f}")

# %%
# A moderately sharpened oracle (``T = 0.5``) stands in for an over-confident
# model below: its ECE is half the oracle's.
sharpened = softmax(log_oracle / 0.5, axis=1)
disp = MajorityReliabilityDisplay.from_predictions(
    Y, sharpened, name="oracle sharpened, T = 0.5"
)

# %%
# Baan et al.'s appendix B compares humans and model through histograms over
# the items: of each class probability, of the first, second and third guess,
# and of DistCE and entropy. Sharpening shifts the model's first guess towards
# 1 and its entropy towards 0, away from the human histograms.
from sklearn_hcal.plotting import HumanModelMarginalDisplay

marginals = HumanModelMarginalDisplay.from_predictions(
    Y, {"oracle sharpened, T = 0.5": sharpened}, class_names=snli.classes
)
marginals.figure_.set_size_inches(10, 7.5)

# %%
# How good is good? Sub-sampled humans
# ------------------------------------
# Baan et al. build two "as good as it realistically gets" classifiers, H1 and
# H2, each predicting the distribution of 20 of the 100 votes of every item.
# Here the 20 votes are drawn without replacement, and H1 and H2 use disjoint
# votes (votes 1-20 and 21-40 of a random permutation of each item's votes),
# so they are two independent groups of annotators. All classifiers are
# scored against the 100 votes.
rng = np.random.default_rng(0)
n_items, n_classes = Y.shape
# Every item has 100 votes: lay them out as an (n_items, 100) array of labels,
# then shuffle each row with random sort keys.
votes = np.repeat(np.tile(np.arange(n_classes), n_items), Y.ravel())
votes = votes.reshape(n_items, -1)
order = np.argsort(rng.random(votes.shape), axis=1)
shuffled = np.take_along_axis(votes, order, axis=1)


def sub_sampled_human(first, last):
    """Relative label frequencies of votes ``first:last`` of each item."""
    chosen = shuffled[:, first:last]
    counts = (chosen[:, :, None] == np.arange(n_classes)).sum(axis=1)
    return counts / counts.sum(axis=1, keepdims=True)


H1 = sub_sampled_human(0, 20)
H2 = sub_sampled_human(20, 40)

# %%
# For comparison, the distribution of the five original SNLI annotators of
# each item: a human estimate again, but from a quarter of H1's votes.
from sklearn_hcal.datasets import annotations_to_histograms

long = pd.DataFrame({"uid": snli.uid, "label": snli.old_labels}).explode("label")
long["label"] = long["label"].str[0]  # "entailment" -> "e", as in snli.classes
Y_old = annotations_to_histograms(
    long, item="uid", label="label", classes=snli.classes
).loc[snli.uid]
five_votes = Y_old.to_numpy() / Y_old.to_numpy().sum(axis=1, keepdims=True)

classifiers = {
    "H1 (20 votes)": H1,
    "H2 (20 votes)": H2,
    "5 original votes": five_votes,
    "oracle sharpened, T = 0.5": sharpened,
    "chance": np.full(Y.shape, 1 / 3),
}
human_calibration_report(Y, classifiers)[columns + ["jsd"]]

# %%
# By ECE, the sharpened oracle and the uniform "chance" predictor look better
# than the human sub-samples. By DistCE, the two 20-vote classifiers are far
# better than anything else, and nearly identical. The five original votes
# are an unbiased but noisy estimate: their DistCE is more than three times
# H1's.
#
# Instance-level error distributions
# ----------------------------------
# Baan et al.'s Fig. 2 plots the distribution of DistCE over items and their
# Table 2 measures how far each distribution is from H1's with the KL
# divergence and the total variation between the histograms.
from sklearn_hcal.plotting import InstanceErrorDisplay

errors = InstanceErrorDisplay.from_predictions(Y, classifiers, kind="dist_ce")
_ = errors.ax_.set_title("DistCE over ChaosNLI-SNLI items")

# %%
errors.divergence_table(reference="H1 (20 votes)")

# %%
# The two human sub-populations are close (Baan et al. report KL 0.004 and
# TVD 0.022 between H1 and H2); everything else is far away, even a distorted
# version of the human distribution itself. The KL divergence is infinite for
# the sharpened oracle: H1 has items with a DistCE above 0.25 and the sharpened
# oracle none, and ``KL(H1 ‖ ·)`` does not forgive a missing bin. The TVD
# stays finite. Instance-level metrics against the full human distribution give
# the scale that the ECE lacks.
