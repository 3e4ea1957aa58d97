"""
=====================================================
Aggregating a crowd, and judging how well it is known
=====================================================

Several annotators label each item and disagree. A *truth-inference* model
(Dawid–Skene, GLAD, MACE ...) estimates how reliable each annotator is and,
from that, each item's posterior distribution of its true class. This
example

1. simulates a crowd whose annotators differ in accuracy and bias;
2. aggregates it with the six models of :mod:`sklearn_hcal.aggregation`
   and compares what they learn about the annotators with the truth;
3. judges each model on **held-out annotations**: how well it predicts the
   label a given annotator gives a given item
   (``predict_annotator_proba``), against the smoothed empirical frequency;
4. trains a classifier on the posteriors and calibrates it to the humans.

Everything runs on the CPU in a few seconds; no data is downloaded.
"""

# %%
# A crowd with reliable, sloppy and biased annotators
# ---------------------------------------------------
# 800 items in three classes, each labelled by 5 of 40 annotators. Every
# annotator is right with a probability between 0.5 and 0.95; a third of
# them put all their errors on "neutral", the others spread them evenly.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

rng = np.random.default_rng(1)
n_items, n_annotators, per_item = 800, 40, 5
classes = np.array(["negative", "neutral", "positive"])
features = rng.normal(size=(n_items, 4))
truth = np.argmax(2 * features[:, :3] + rng.gumbel(size=(n_items, 3)), axis=1)

accuracy = rng.uniform(0.5, 0.95, n_annotators)
biased = np.arange(n_annotators) % 3 == 0
eye = np.eye(3, dtype=bool)
confusion = np.where(eye, accuracy[:, None, None], (1 - accuracy)[:, None, None] / 2)
confusion[biased] = eye * accuracy[biased, None, None]
confusion[biased, :, 1] += 1 - accuracy[biased, None]

who = np.argsort(rng.random((n_items, n_annotators)), axis=1)[:, :per_item]
item, annotator = np.repeat(np.arange(n_items), per_item), who.ravel()
cumulative = confusion[annotator, truth[item]].cumsum(axis=1)
label = (rng.random(len(item))[:, None] > cumulative).sum(axis=1)
annotations = pd.DataFrame(
    {
        "item": item,
        "annotator": [f"ann{w:02d}" for w in annotator],
        "label": classes[label],
    }
)
annotations.head()

# %%
# Aggregate
# ---------
# Each aggregator is fitted on the long table; ``predict`` gives one label
# per item. The models of annotators find more true classes than the vote.
from sklearn_hcal.aggregation import (
    GLAD,
    MACE,
    DawidSkene,
    MajorityVote,
    OneCoinDawidSkene,
    Wawa,
)

models = {
    "majority vote": MajorityVote(alpha=1.0),
    "Wawa": Wawa(),
    "Dawid-Skene": DawidSkene(alpha=1.0),
    "one-coin D-S": OneCoinDawidSkene(alpha=1.0),
    "GLAD": GLAD(),
    "MACE": MACE(random_state=0),
}
accuracy_of_labels = {
    name: np.mean(
        model.fit(annotations).predict(annotations).to_numpy() == classes[truth]
    )
    for name, model in models.items()
}
pd.Series(accuracy_of_labels, name="share of true classes recovered").round(3)

# %%
# What the models learn about the annotators
# ------------------------------------------
# Dawid–Skene's confusion matrices, averaged over the true classes, give an
# accuracy per annotator; the one-coin model estimates it directly; GLAD's
# ability orders the annotators the same way. The biased annotators (orange)
# are recognised by Dawid–Skene's "neutral" column.
ds, one_coin, glad = models["Dawid-Skene"], models["one-coin D-S"], models["GLAD"]
order = [int(name[3:]) for name in ds.annotators_]  # fitted order -> simulated id
true_accuracy = accuracy[order]
colour = np.where(biased[order], "tab:orange", "tab:blue")
ds_accuracy = np.einsum("wkk->w", ds.confusion_matrices_) / 3

fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
for ax, values, title in [
    (axes[0], ds_accuracy, "Dawid-Skene: mean diagonal"),
    (axes[1], one_coin.skills_.to_numpy(), "one-coin: skill"),
    (axes[2], glad.abilities_.to_numpy(), "GLAD: ability α"),
]:
    ax.scatter(true_accuracy, values, c=colour, s=18)
    ax.set_xlabel("true accuracy")
    ax.set_title(title)
axes[0].set_ylabel("estimate")
fig.tight_layout()
plt.show()

# %%
# Judged on held-out annotations
# ------------------------------
# ``predict_annotator_proba`` predicts the label a given annotator gives a
# given item: the item's posterior through that annotator's confusion
# matrix. One annotation of every item with at least 4 is held out
# (:class:`~sklearn_hcal.model_selection.OneAnnotationPerItemSplit`), the
# model is fitted on the rest, and
# :func:`~sklearn_hcal.metrics.make_annotation_scorer` scores the predicted
# distributions of the held-out labels. The majority vote with ``alpha=1``
# is the smoothed empirical frequency of the item's other labels; lower is
# better.
from sklearn.model_selection import cross_validate

from sklearn_hcal.metrics import make_annotation_scorer
from sklearn_hcal.model_selection import OneAnnotationPerItemSplit

cv = OneAnnotationPerItemSplit(5, min_annotations=4, random_state=0)
scoring = {
    "Brier score": make_annotation_scorer("brier_score_loss"),
    "log loss": make_annotation_scorer("log_loss"),
}
held_out = pd.DataFrame(
    {
        name: {
            metric: -cross_validate(model, annotations, cv=cv, scoring=scoring)[
                f"test_{metric}"
            ].mean()
            for metric in scoring
        }
        for name, model in models.items()
    }
).T
ax = held_out.plot.barh(subplots=True, layout=(1, 2), figsize=(10, 3.4), legend=False)
for a in ax.ravel():
    a.axvline(held_out.loc["majority vote", a.get_title()], color="k", ls=":")
plt.tight_layout()
plt.show()
held_out.round(4)

# %%
# Train on the posteriors, calibrate to the humans
# ------------------------------------------------
# The posteriors are soft labels for a classifier of the items' features.
# A posterior is a belief about one true class, sharper than the humans'
# label distribution: a temperature fitted on held-out items' label
# histograms (:class:`~sklearn_hcal.TemperatureScaler`) makes the same
# classifier predict what annotators say.
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from sklearn_hcal import SoftLabelClassifier, TemperatureScaler
from sklearn_hcal.datasets import annotations_to_histograms
from sklearn_hcal.metrics import human_calibration_report

train, valid, test = np.arange(500), np.arange(500, 650), np.arange(650, 800)
posteriors = ds.posteriors_
histograms = annotations_to_histograms(annotations, classes=classes)
on_posteriors = SoftLabelClassifier(LogisticRegression()).fit(
    features[train], posteriors.iloc[train]
)
calibrated = TemperatureScaler(FrozenEstimator(on_posteriors)).fit(
    features[valid], histograms.iloc[valid]
)
on_majority = SoftLabelClassifier(LogisticRegression(), strategy="majority").fit(
    features[train], histograms.iloc[train]
)
report = human_calibration_report(
    histograms.iloc[test],
    {
        "majority labels": on_majority.predict_proba(features[test]),
        "D-S posteriors": on_posteriors.predict_proba(features[test]),
        "D-S posteriors + temperature": calibrated.predict_proba(features[test]),
    },
    metrics=["kl", "accuracy", "ece"],
)
print(f"temperature {calibrated.temperature_:.2f}")
report.round(3)
