"""
=================================
Evaluating a model the LeWiDi way
=================================

The *Learning with Disagreements* shared tasks (LeWiDi 2021, 2023, 2025)
compare models by how well they predict the **distribution** of the
annotators' labels, and in 2025 also each annotator's own label. This
example walks through that evaluation on an ordinal (Likert) data set in
LeWiDi's harmonised JSON format:

1. load the files with :func:`~sklearn_hcal.datasets.load_lewidi`;
2. score two models with the official soft metrics -- Manhattan and
   Wasserstein distances, cross-entropy -- and those of Kurniawan et al.
   (2025), in one :func:`~sklearn_hcal.metrics.human_calibration_report`;
3. evaluate per annotator and per group of annotators (LeWiDi 2025's
   perspectivist track);
4. calibrate with only **one label per item**, and see why majority votes
   would mislead the calibration.

No download: the data set is simulated and written as LeWiDi files in a
temporary folder (real ones come from
:func:`~sklearn_hcal.datasets.fetch_lewidi`).
"""

# %%
# A Likert data set in LeWiDi's format
# ------------------------------------
# Each statement is rated by 5 of 24 annotators on a six-point agreement
# scale. Ratings follow a latent position of the statement (which 5
# features, standing in for a text encoder's embedding, predict) plus the
# annotator's own leaning: the older annotators rate lower. As in the
# LeWiDi 2025 files, each item stores its ``annotations`` by annotator and
# its ``soft_label``; this file lists only the classes an item received, so
# the data set's classes come in the order they are first met -- **not** in
# scale order.
import json
import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

SCALE = [
    "strongly disagree",
    "disagree",
    "slightly disagree",
    "slightly agree",
    "agree",
    "strongly agree",
]
rng = np.random.default_rng(0)
n_items, n_annotators, per_item = 1100, 24, 5
embedding = rng.normal(size=(n_items, 5))
position = 2.5 + embedding @ rng.normal(size=5)  # on the 0 .. 5 scale
annotators = [f"Ann{j}" for j in range(n_annotators)]
age_group = np.where(np.arange(n_annotators) % 3 == 0, "50+", "18-30")  # 8 of 24
leaning = np.where(age_group == "50+", -1.2, 0.3) + rng.normal(0, 0.2, n_annotators)

records = {}
for i in range(n_items):
    who = rng.choice(n_annotators, per_item, replace=False)
    noise = rng.normal(0, 1.0, per_item)
    ratings = np.clip(np.round(position[i] + leaning[who] + noise), 0, 5).astype(int)
    labels = [SCALE[r] for r in ratings]
    records[f"s{i}"] = {
        "annotation task": "agreement rating",
        "text": {"statement": f"statement {i}"},
        "number of annotators": per_item,
        "annotators": ",".join(annotators[j] for j in who),
        "number of annotations": per_item,
        "annotations": {annotators[j]: lab for j, lab in zip(who, labels)},
        # the classes the item received, in the order met
        "soft_label": {
            lab: labels.count(lab) / per_item for lab in dict.fromkeys(labels)
        },
        "split": "train" if i < 300 else "dev",
        "lang": "en",
        "other_info": {"embedding": embedding[i].round(6).tolist()},
    }

folder = Path(tempfile.mkdtemp(prefix="lewidi_"))
meta = {a: {"Age group": g} for a, g in zip(annotators, age_group)}
(folder / "Agree_annotators_meta.json").write_text(json.dumps(meta), encoding="utf-8")
for split in ("train", "dev"):
    part = {k: r for k, r in records.items() if r["split"] == split}
    (folder / f"Agree_{split}.json").write_text(json.dumps(part), encoding="utf-8")

# %%
# :func:`~sklearn_hcal.datasets.load_lewidi` reads a file (and the annotator
# metadata beside it) into label histograms, the shipped soft labels, a
# long table of annotations and the annotators' metadata.
from sklearn_hcal.datasets import load_lewidi

train = load_lewidi(folder / "Agree_train.json")
dev = load_lewidi(folder / "Agree_dev.json")
X_train = np.vstack(train.other_info.map(lambda info: info["embedding"]))
X_dev = np.vstack(dev.other_info.map(lambda info: info["embedding"]))
print(dev.DESCR)
print("columns of dev.counts:", list(dev.counts.columns))
dev.counts.head(3)

# %%
# Two models and a baseline
# -------------------------
# A logistic regression trained on the label histograms (every annotation
# counts, :class:`~sklearn_hcal.SoftLabelClassifier`), the same model
# trained on majority votes, and a uniform prediction. Predictions are
# DataFrames named by class, in the columns of ``dev.counts``.
from sklearn.linear_model import LogisticRegression

from sklearn_hcal import SoftLabelClassifier

soft = SoftLabelClassifier(LogisticRegression(max_iter=1000), classes=SCALE).fit(
    X_train, train.counts
)
majority = SoftLabelClassifier(
    LogisticRegression(max_iter=1000),
    strategy="majority",
    classes=SCALE,
    random_state=0,  # ties are broken at random
).fit(X_train, train.counts)


def proba(model, X):
    """The model's probabilities named by class, in dev.counts' column order."""
    frame = pd.DataFrame(model.predict_proba(X), columns=model.classes_)
    return frame[dev.counts.columns].set_axis(dev.counts.index)


predictions = {
    "soft labels": proba(soft, X_dev),
    "majority votes": proba(majority, X_dev),
    "uniform": pd.DataFrame(1 / 6, index=dev.counts.index, columns=dev.counts.columns),
}

# %%
# Soft evaluation, with the scale in order
# ----------------------------------------
# LeWiDi 2025 scores its Likert sets with the **average Wasserstein
# distance** (earth mover's distance with unit steps), its binary set with
# the average **Manhattan distance**; LeWiDi 2021/2023 used the **soft
# cross-entropy**. The ordinal metrics need the scale: numeric classes are
# ordered by value, but these classes are words (in the order the file met
# them), so ``order=`` gives the scale (the columns are matched by name).
# Without it the metric refuses to guess: reading the columns as the scale
# would score another scale without a word.
from sklearn_hcal.metrics import wasserstein_distance

P = predictions["soft labels"]
print(f"scale order:  {wasserstein_distance(dev.counts, P, order=SCALE):.3f}")
try:
    wasserstein_distance(dev.counts, P)
except ValueError as exc:
    print(f"no order:     ValueError: {str(exc)[:70]}...")

# %%
# :func:`~sklearn_hcal.metrics.human_calibration_report` puts every metric of
# the registry side by side (``order=`` as a metric parameter); besides
# LeWiDi's, the ranked probability score and Kurniawan et al.'s soft
# accuracy, soft micro-F1, PO-JSD and entropy correlation (does the model
# find the statements people disagree on? undefined, NaN, for a uniform
# prediction).
from sklearn_hcal.metrics import human_calibration_report

columns = ["wasserstein", "rps", "manhattan", "soft_ce"]
columns += ["soft_accuracy", "soft_micro_f1", "po_jsd", "entropy_corr"]
report = human_calibration_report(
    dev.counts,
    predictions,
    metrics=columns,
    metric_params={"wasserstein": {"order": SCALE}, "rps": {"order": SCALE}},
)
report.round(3)

# %%
# The model trained on the histograms is closer to the human distributions
# on every measure (the uniform prediction, far behind, is left out of the
# figure). The one trained on majority votes is more confident
# (its predictions have lower entropy) and pays for it most on the
# cross-entropy.
models = report.loc[["soft labels", "majority votes"]]
fig, axes = plt.subplots(1, 4, figsize=(11, 2.6), layout="constrained")
for ax, column in zip(axes, ["wasserstein", "manhattan", "soft_ce", "po_jsd"]):
    models[column].plot.barh(ax=ax, color=["C0", "C1"])
    better = "higher" if column == "po_jsd" else "lower"
    ax.set_title(f"{column} ({better} is better)", fontsize=10)
    ax.set_ylabel("")
plt.show()

# %%
# Per-annotator evaluation
# ------------------------
# LeWiDi 2025's second track predicts the rating of *each* annotator. Giving
# every annotator the rating nearest the item's expected position (under
# the soft-label model) ignores who is rating; adding each annotator's
# average leaning, learnt on the training split, is a simple perspectivist
# model. Both are scored by LeWiDi's normalised absolute distance (the
# distance on the scale divided by its 6 points, averaged over each item's
# annotators, then over items) and error rate.
from sklearn_hcal.metrics import (
    annotator_report,
    perspectivist_absolute_distance,
    perspectivist_error_rate,
)

steps = np.arange(len(SCALE))


def expected_position(model, X, items):
    q = pd.DataFrame(model.predict_proba(X), columns=model.classes_, index=items)
    return q[SCALE] @ steps  # E_q[position on the scale]


rank = {label: k for k, label in enumerate(SCALE)}
train_pairs = train.annotations.assign(
    gap=lambda d: (
        d["label"].map(rank)
        - d["item"].map(expected_position(soft, X_train, train.counts.index))
    )
)
lean = train_pairs.groupby("annotator")["gap"].mean()

dev_pairs = dev.annotations[["item", "annotator"]]
centre = dev_pairs["item"].map(expected_position(soft, X_dev, dev.counts.index))
per_annotator = {
    "item's rating": centre.round(),
    "+ annotator's leaning": (centre + dev_pairs["annotator"].map(lean)).round(),
}
per_annotator = {
    name: dev_pairs.assign(label=[SCALE[int(k)] for k in pos.clip(0, 5)])
    for name, pos in per_annotator.items()
}
pd.DataFrame(
    {
        name: {
            "absolute distance": perspectivist_absolute_distance(
                dev.annotations, pred, order=SCALE
            ),
            "error rate": perspectivist_error_rate(dev.annotations, pred),
        }
        for name, pred in per_annotator.items()
    }
).round(3)

# %%
# :func:`~sklearn_hcal.metrics.annotator_report` breaks the numbers down per
# annotator, or per group of the annotator metadata. Ignoring who rates
# fails the older annotators most: a third of the pool, they rate lower than
# the rest, so the item's expected rating sits closer to the younger ones'.
by_group = pd.concat(
    {
        name: annotator_report(
            dev.annotations, pred, order=SCALE, groups=dev.annotators, by="Age group"
        )["absolute_distance"]
        for name, pred in per_annotator.items()
    },
    axis=1,
)
fig, ax = plt.subplots(figsize=(6.5, 3), layout="constrained")
by_group.plot.bar(ax=ax, rot=0)
ax.set_ylabel("normalised absolute distance")
ax.legend(title="prediction", loc="upper left", bbox_to_anchor=(1.02, 1))
plt.show()

# %%
# Calibrating with one label per item
# -----------------------------------
# Most data sets have a single label per item. Temperature scaling needs no
# more: fitted on one annotation per item *drawn from the human
# distribution* -- here kept at random from each histogram with
# :func:`~sklearn_hcal.datasets.sample_annotations` -- it estimates the same
# temperature as a fit on all five, only with more noise, and its
# ``temperature_se_`` says how much. Majority votes are no such draw: more
# confident than the annotators, they pick too low a temperature.
from sklearn.frozen import FrozenEstimator

from sklearn_hcal import TemperatureScaler
from sklearn_hcal.datasets import sample_annotations

labels = {
    "all 5 labels": dev.counts,
    "1 label per item": sample_annotations(dev.counts, random_state=0),
    "majority vote": dev.counts.idxmax(axis=1),
}
scalers = {
    name: TemperatureScaler(FrozenEstimator(soft)).fit(X_dev, y)
    for name, y in labels.items()
}
fits = pd.DataFrame(
    {
        "temperature": {k: ts.temperature_ for k, ts in scalers.items()},
        "temperature_se": {k: ts.temperature_se_ for k, ts in scalers.items()},
    }
)
fits.round(3)

# %%
# The single-label fit is within two standard errors of the five-label fit;
# the majority fit is more than ten standard errors below it, and the model
# it calibrates becomes over-confident: its soft cross-entropy is the worst
# of the three. (The temperatures are fitted and scored on the same items,
# for brevity.)
fig, ax = plt.subplots(figsize=(5, 2.5), layout="constrained")
ax.errorbar(
    fits["temperature"],
    range(len(fits)),
    xerr=2 * fits["temperature_se"],
    fmt="o",
    capsize=4,
)
ax.set_yticks(range(len(fits)), fits.index)
ax.axvline(fits.loc["all 5 labels", "temperature"], color="C7", ls=":")
ax.set_xlabel("fitted temperature (± 2 standard errors)")
plt.show()

calibrated = {name: proba(FrozenEstimator(ts), X_dev) for name, ts in scalers.items()}
human_calibration_report(
    dev.counts,
    calibrated,
    metrics=["wasserstein", "manhattan", "soft_ce"],
    metric_params={"wasserstein": {"order": SCALE}},
).round(3)

# %%
shutil.rmtree(folder)  # the temporary LeWiDi files
