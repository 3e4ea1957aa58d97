"""
==============================================================
How much do the annotators agree? α, κ and a model among them
==============================================================

Before training on human labels, look at how much the people who gave them
agree. This example computes the agreement coefficients of
:mod:`sklearn_hcal.metrics` on two LeWiDi 2025 data sets read from their
long tables of annotations (one row per item and annotator):

1. CSC (sarcasm rated 1..6 by 4-6 annotators per item): Krippendorff's α
   at the nominal, ordinal and interval levels, with bootstrap intervals;
2. per item: which items people disagree on;
3. MultiPICo (irony, 506 annotators): each annotator's agreement with the
   others, and a text classifier scored as one more annotator.

The files are read from the data home by
:func:`~sklearn_hcal.datasets.fetch_lewidi` (the ``HCAL_DATA`` environment
variable, else ``~/hcal_data``).
"""

# %%
# α at the level of the scale
# ---------------------------
# A Likert scale has an order: the ordinal and interval levels count a
# 5-versus-6 disagreement as smaller than 1-versus-6, the nominal level as
# equal. The intervals resample the items (1,000 resamples).
import matplotlib.pyplot as plt
import pandas as pd

from sklearn_hcal.datasets import fetch_lewidi
from sklearn_hcal.metrics import (
    fleiss_kappa,
    item_agreement,
    krippendorff_alpha,
    model_agreement,
)
from sklearn_hcal.plotting import AnnotatorAgreementDisplay

csc = fetch_lewidi("csc", "dev")
levels = ["nominal", "ordinal", "interval"]
alphas = pd.DataFrame(
    [
        krippendorff_alpha(
            csc.frame, level=level, n_bootstrap=1000, random_state=0
        )._asdict()
        for level in levels
    ],
    index=levels,
)
print(alphas.round(3))

fig, ax = plt.subplots(figsize=(5, 3))
ax.errorbar(
    alphas["alpha"],
    levels,
    xerr=[alphas["alpha"] - alphas["low"], alphas["high"] - alphas["alpha"]],
    fmt="o",
    capsize=4,
)
ax.set(xlabel="Krippendorff's α (95% bootstrap interval)", title="CSC dev")
ax.axvline(0, color="grey", linestyle="--", linewidth=0.8)
fig.tight_layout()

# %%
# Which items people disagree on
# ------------------------------
# Here disagreement is not noise to average away: a classifier should be
# uncertain exactly where people are. The per-item table gives the share
# of agreeing pairs and the entropy of each item's labels.
per_item = item_agreement(csc.frame, base=2)
print(per_item.describe().round(3))
fig, ax = plt.subplots(figsize=(5, 3))
ax.hist(per_item["entropy"], bins=20, edgecolor="black")
ax.set(xlabel="Entropy of the item's labels (bits)", ylabel="Items", title="CSC dev")
fig.tight_layout()

# %%
# Fleiss' κ needs panels of equal size; CSC's items have 4 to 6 annotators,
# so it is refused, with a pointer to α.
try:
    fleiss_kappa(csc.counts)
except ValueError as exc:
    print(exc)

# %%
# Each annotator, and a model among them
# --------------------------------------
# MultiPICo's 506 annotators label 4-19 replies each. For each annotator:
# what it changes in α (below 0: it lowers the agreement) and how often it
# agrees with the majority of the item's other annotators. A text
# classifier (TF-IDF and logistic regression on the post and reply,
# trained on the majority label, predictions out of fold) is scored as one
# more annotator: the star.
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict
from sklearn.pipeline import make_pipeline

mp = fetch_lewidi("mp", "test")
items = mp.frame.drop_duplicates("item").set_index("item")
text = items["post"].fillna("") + " [SEP] " + items["reply"].fillna("")
majority = mp.counts.loc[items.index].idxmax(axis=1)
model = make_pipeline(TfidfVectorizer(min_df=2), LogisticRegression(max_iter=1000))
y_pred = pd.Series(
    cross_val_predict(model, text, majority, cv=5), index=items.index, name="model"
)

disp = AnnotatorAgreementDisplay.from_annotations(
    mp.frame, y_pred, model_name="text model"
)
summary = model_agreement(mp.frame, y_pred)
print(summary.round(3))

# %%
# The median annotator agrees with the majority of its peers on 73% of its
# items; the text model on 69%, below about two annotators in three
# (``model_percentile`` 0.31), and adding its labels lowers α from 0.27 to
# 0.18. Annotators with a strongly negative α change are worth reading:
# they may have misread the guidelines, or hear irony others do not.
plt.show()
