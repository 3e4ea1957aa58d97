"""
==================================
Metrics quickstart on ChaosNLI
==================================

Every metric of :mod:`sklearn_hcal.metrics` compares a classifier's predicted
class probabilities with **label histograms**: one row per item, one column per
class, holding how many annotators chose that class. ChaosNLI (Nie et al.,
2020) collected 100 labels for each of 1,514 SNLI items, so its histograms are
a precise estimate of how people actually distribute over "entailment",
"neutral" and "contradiction".

This example scores three simple predictors against those histograms:

* **chance**: the uniform distribution, ChaosNLI's "Chance" baseline;
* **5 original labels**: the distribution of the five SNLI annotators, i.e. a
  noisy estimate of the 100-vote distribution;
* **majority one-hot**: probability 1 on the SNLI gold label, what a model
  trained on gold labels tends to approach.
"""

# %%
# Load ChaosNLI-SNLI
# ------------------
# :func:`~sklearn_hcal.datasets.fetch_chaosnli` downloads the official archive
# once into the data home (the ``HCAL_DATA`` environment variable, else
# ``~/hcal_data``), checks its sha256 and reads it from there afterwards.
# Offline, point ``HCAL_DATA`` at a folder that holds ``chaosnli_v1.0/``; the
# error of a missing file says where it was looked for.

import numpy as np

from sklearn_hcal.datasets import fetch_chaosnli

snli = fetch_chaosnli("snli")
Y = snli.counts  # (1514, 3) label histograms, 100 labels per item
print(Y.shape, "classes:", snli.classes, "labels per item:", np.unique(Y.sum(1)))
print(snli.text.iloc[0].to_dict(), "->", dict(zip(snli.classes, Y[0].tolist())))

# %%
# Three predictors
# ----------------
# The five original SNLI labels of each item come with the data set; turn them
# into a histogram with the same column order as ``Y``.
import pandas as pd

from sklearn_hcal.datasets import annotations_to_histograms

long = pd.DataFrame({"uid": snli.uid, "label": snli.old_labels}).explode("label")
long["label"] = long["label"].str[0]  # "entailment" -> "e", as in snli.classes
Y_old = annotations_to_histograms(
    long, item="uid", label="label", classes=snli.classes
).loc[snli.uid]
Y_old = Y_old.to_numpy()

predictions = {
    "chance": np.full(Y.shape, 1 / 3),
    "5 original labels": Y_old / Y_old.sum(axis=1, keepdims=True),
    "majority one-hot": (snli.old_label[:, None] == snli.classes).astype(float),
}

# %%
# One number per metric
# ---------------------
# Each metric is a function ``metric(y_true, y_prob)`` taking the histograms
# and the probabilities. Distribution metrics (Baan et al. 2022; Nie et al.
# 2020) compare each item's predicted distribution with the human one:
from sklearn_hcal.metrics import (
    distribution_calibration_error,
    expected_calibration_error,
    jensen_shannon_distance,
    kl_divergence,
    majority_accuracy_score,
)

P = predictions["chance"]
print(f"JSD   {jensen_shannon_distance(Y, P):.4f}  (ChaosNLI Table 5, chance: 0.383)")
print(f"KL    {kl_divergence(Y, P):.4f}  (ChaosNLI Table 5, chance: 0.5457)")
print(f"DistCE {distribution_calibration_error(Y, P):.4f}")
print(f"accuracy vs the 100-vote majority {majority_accuracy_score(Y, P):.3f}")
print(f"ECE against the majority {expected_calibration_error(Y, P):.4f}")

# %%
# A table for several classifiers
# -------------------------------
# :func:`~sklearn_hcal.metrics.human_calibration_report` computes the metrics
# of all three papers at once, one row per classifier, here with 95% bootstrap
# intervals (the same resampled items for every classifier).
from sklearn_hcal.metrics import human_calibration_report

pd.set_option("display.precision", 3)
pd.set_option("display.width", 120)
report = human_calibration_report(Y, predictions, n_bootstrap=200, random_state=0)
report[["accuracy", "ece", "rank_cs", "ent_ce", "dist_ce", "jsd", "kl"]]

# %%
# The full table also carries the estimators of Mimori et al. (2021): the
# expected squared loss and its epistemic (EL), calibration (CL) and
# dispersion (DL) parts, debiased for the finite number of labels per item.
report.transpose()

# %%
# Item by item
# ------------
# A mean hides how errors are spread over items. Baan et al. (2022) look at
# the distribution of the instance-level DistCE: the five-vote estimate is
# close to the 100-vote one on most items, whereas the one-hot prediction is
# far on most of them.
from sklearn_hcal.metrics import instance_calibration_errors
from sklearn_hcal.plotting import InstanceErrorDisplay

instance_calibration_errors(Y, predictions["5 original labels"]).head()

# %%
disp = InstanceErrorDisplay.from_predictions(Y, predictions, kind="dist_ce")
_ = disp.ax_.set_title("Instance-level DistCE on ChaosNLI-SNLI")

# %%
# By level of human agreement
# ---------------------------
# ChaosNLI (§5.4) splits the items into five bins of human-label entropy.
# Where humans agree (low entropy) the one-hot prediction is best; on the fifth
# of the items where they disagree most, even the uniform distribution is
# closer to the humans than the one-hot prediction.
from sklearn_hcal.metrics import metrics_by_agreement
from sklearn_hcal.plotting import AgreementBinDisplay

metrics_by_agreement(Y, predictions["majority one-hot"], n_bins=5)

# %%
disp = AgreementBinDisplay.from_predictions(Y, predictions, metric="jsd", n_bins=5)
_ = disp.ax_.set_title("JSD to the human distribution per agreement bin")
