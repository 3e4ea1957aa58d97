"""
=====================================================
Predicting each annotator: LeWiDi 2025's Paraphrase
=====================================================

LeWiDi 2025's Paraphrase data set has four annotators rate, on a scale from
−5 (different questions) to 5 (paraphrases), how paraphrastic two questions
are, and explain each rating. The perspectivist track asks for each
annotator's own rating of a test item, the soft track for the distribution
of the four ratings. This example

1. trains a :class:`~sklearn_hcal.perspectivist.PerspectivistClassifier` on
   ``Paraphrase_train`` + ``Paraphrase_dev`` and predicts each annotator's
   rating on held-out items (item-grouped cross-validation);
2. marginalises over each item's annotators to get its soft label, and
   scores both tracks with the official metrics;
3. calibrates the soft labels with a temperature, fitted on other items;
4. shows what the model learned about each annotator.

The files are read from the data home by
:func:`~sklearn_hcal.datasets.fetch_lewidi` (the ``HCAL_DATA`` environment
variable, else ``~/hcal_data``): downloaded once, or read from a copy of the
2025 release placed in ``<data home>/lewidi/2025/``.
"""

# %%
# The long table of annotations
# -----------------------------
# ``frame`` has one row per (item, annotator): the rating, the two
# questions, the annotator's explanation and metadata. The train and dev
# splits are the task's training data; their item ids do not overlap.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sklearn_hcal.datasets import fetch_lewidi

train, dev = fetch_lewidi("par", "train"), fetch_lewidi("par", "dev")
frame = pd.concat([train.frame, dev.frame], ignore_index=True)
counts = pd.concat([train.counts, dev.counts])
scale = list(train.classes)  # -5 .. 5
X, y = frame.drop(columns=["label"]), frame["label"]
print(frame.shape, "columns:", list(X.columns))
print(frame.loc[0, ["annotator", "label", "explanation"]].to_dict())

# %%
# Each annotator's rating, on items the model has not seen
# --------------------------------------------------------
# Five folds, grouped by item: an item's other annotators would otherwise
# give its ratings away. ``predict`` makes the Bayes decision of the track's
# score: on this ordinal scale, the median of each annotator's predicted
# distribution (which minimises the expected absolute distance).
from sklearn.model_selection import GroupKFold

from sklearn_hcal.metrics import (
    perspectivist_absolute_distance,
    perspectivist_error_rate,
)
from sklearn_hcal.perspectivist import PerspectivistClassifier

P = np.zeros((len(X), len(scale)))
pred = np.zeros(len(X), dtype=int)
cv = GroupKFold(n_splits=5, shuffle=True, random_state=0)
folds = list(cv.split(X, y, groups=X["item"]))
for fit_rows, held in folds:
    clf = PerspectivistClassifier(random_state=0)
    clf.fit(X.iloc[fit_rows], y.iloc[fit_rows])
    P[held] = clf.predict_proba(X.iloc[held])
    pred[held] = clf.predict(X.iloc[held])

truth = frame[["item", "annotator", "label"]]
guess = truth.assign(label=pred)
print(
    "perspectivist: normalised absolute distance "
    f"{perspectivist_absolute_distance(truth, guess, order=scale):.3f}, "
    f"error rate {perspectivist_error_rate(truth, guess):.3f}"
)

# %%
# Soft labels: the mean over an item's annotators
# -----------------------------------------------
# The soft track's prediction of an item is the mean of its annotators'
# predicted distributions (what ``predict_soft_labels`` returns). The
# training prior -- the same distribution for every item -- is the
# constant to beat.
from sklearn_hcal.metrics import (
    histogram_log_loss,
    manhattan_distance,
    wasserstein_distance,
)

soft = pd.DataFrame(P, columns=scale).groupby(frame["item"].to_numpy()).mean()
soft = soft.loc[counts.index]
prior = np.tile(counts.sum() / counts.to_numpy().sum(), (len(counts), 1))
for name, q in [("model", soft), ("training prior", prior)]:
    print(
        f"{name:>15}: Wasserstein {wasserstein_distance(counts, q):.3f}, "
        f"Manhattan {manhattan_distance(counts, q):.3f}, "
        f"log loss {histogram_log_loss(counts, q):.3f}"
    )

# %%
# Calibrating the soft labels
# ---------------------------
# A temperature on the marginal, fitted on the items of the other folds
# (their out-of-fold soft labels against their label histograms) and
# applied to this fold's. It lowers the log loss, a proper score; LeWiDi's
# distances are not proper and may prefer the sharper, uncalibrated
# marginal -- compare both before choosing which to submit.
from sklearn_hcal import TemperatureScaler

items = frame["item"].to_numpy()
calibrated = soft.copy()
temperatures = []
for fit_rows, held in folds:
    fit_items = pd.unique(items[fit_rows])
    held_items = pd.unique(items[held])
    ts = TemperatureScaler().fit(soft.loc[fit_items], counts.loc[fit_items])
    calibrated.loc[held_items] = ts.predict_proba(soft.loc[held_items])
    temperatures.append(ts.temperature_)
print("temperatures:", np.round(temperatures, 3))
for name, q in [("marginal", soft), ("calibrated", calibrated)]:
    print(
        f"{name:>10}: log loss {histogram_log_loss(counts, q):.3f}, "
        f"Wasserstein {wasserstein_distance(counts, q):.3f}"
    )

# %%
# What the model learns about the annotators
# ------------------------------------------
# Each panel is one annotator: the share of their ratings (rows: the rating
# given) predicted as each rating (columns), on held-out items. The
# annotators use the scale differently -- their mean ratings (in the
# titles) lie almost four points apart, and one rates nearly every pair as
# a paraphrase -- and the model follows each one's habits: its mean
# prediction for an annotator tracks that annotator's own mean, which a
# model of the pooled labels could not do.
annotators = sorted(frame["annotator"].unique())
fig, axes = plt.subplots(1, len(annotators), figsize=(13, 3.6), sharey=True)
for ax, who in zip(axes, annotators):
    mine = (frame["annotator"] == who).to_numpy()
    table = pd.crosstab(
        pd.Categorical(y[mine], categories=scale),
        pd.Categorical(pred[mine], categories=scale),
        normalize="index",
        dropna=False,
    ).fillna(0.0)
    ax.imshow(table.to_numpy(), cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(len(scale)), scale, fontsize=7)
    ax.set_yticks(range(len(scale)), scale, fontsize=7)
    ax.set_xlabel("predicted rating")
    given = y[mine].to_numpy()
    ax.set_title(
        f"{who}: mean {given.mean():+.1f}, predicted {pred[mine].mean():+.1f}",
        fontsize=9,
    )
axes[0].set_ylabel("rating given")
fig.suptitle("Held-out ratings of each annotator against the model's prediction")
fig.tight_layout()
plt.show()

# %%
# A submission
# ------------
# ``hcal lewidi --train Paraphrase_train.json --train Paraphrase_dev.json
# --predict Paraphrase_test.json --out submission/`` does all of the above
# and writes the official submission files of both tracks.
