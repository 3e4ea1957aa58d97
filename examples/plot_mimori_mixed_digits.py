"""
==============================================================
Diagnostic uncertainty calibration on Mix-Digits (CNN, skorch)
==============================================================

Mimori et al. (2021), *Diagnostic Uncertainty Calibration*, train a network
on images labelled by a single annotator each, and then calibrate it with a
few items labelled by several annotators, so that it predicts not only the
class probabilities but also **how likely experts are to disagree** about an
image, and how its prediction should change after **one more expert label**.

This example follows their Mix-MNIST experiment on scikit-learn's 8×8 digits
(:func:`~sklearn_hcal.datasets.make_mixed_digits`): half the images are
blended in pairs with a random ratio ``r``, and each annotator labels a
blended image with the first digit with probability ``r``. The training items
have **one** label each, the validation items five, the test items ten, and
the true label distribution of every item is known.

The steps:

1. a small CNN (:class:`~sklearn_hcal.SmallCNN`) trained with skorch on the
   single training labels (:func:`~sklearn_hcal.make_soft_label_net`);
2. temperature scaling on the validation histograms
   (:class:`~sklearn_hcal.TemperatureScaler`);
3. α-calibration (:class:`~sklearn_hcal.AlphaCalibrator`), which learns how
   concentrated the human distribution is around the prediction;
4. evaluation on the test histograms: the decomposition of the squared loss,
   the disagreement reliability diagram, and the posterior after one expert
   label.
"""

# %%
# Data
# ----
import numpy as np

from sklearn_hcal.datasets import make_mixed_digits

digits = make_mixed_digits(random_state=0)  # 1, 5 and 10 labels per item
train, valid, test = digits.train, digits.valid, digits.test
for name, part in [("train", train), ("valid", valid), ("test", test)]:
    print(
        f"{name:5s}: {len(part.counts):4d} items, "
        f"{part.counts.sum(1)[0]:2d} labels each, {part.mixed.mean():.0%} mixed"
    )

# %%
# A few mixed test images, with their true distribution and the ten labels.
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 5, figsize=(9, 2.4), layout="constrained")
for ax, i in zip(axes, np.flatnonzero(test.mixed)[:5]):
    ax.imshow(test.images[i, 0], cmap="gray_r")
    top = np.argsort(test.true_proba[i])[::-1][:2]
    ax.set_title(
        " / ".join(f"{k}: {test.true_proba[i, k]:.2f}" for k in top)
        + "\nlabels "
        + " ".join(f"{k}×{test.counts[i, k]}" for k in top),
        fontsize=8,
    )
    ax.set_axis_off()
plt.show()

# %%
# 1. A CNN trained on one label per image
# ---------------------------------------
# :func:`~sklearn_hcal.make_soft_label_net` returns a skorch classifier whose
# ``fit`` takes label histograms (here one-hot: one label per item) and trains
# with the soft cross-entropy. :class:`~sklearn_hcal.HumanMetricsCallback`
# scores the validation items (five labels each) every epoch and records the
# human metrics in ``net.history`` under their scorer names, where skorch's
# ``EarlyStopping`` or ``Checkpoint`` can monitor them. The validation pass
# does not change the training: the weights are those of a net without it.
from skorch.dataset import Dataset
from skorch.helper import predefined_split

from sklearn_hcal import HumanMetricsCallback, SmallCNN, make_soft_label_net

valid_targets = (valid.counts / valid.counts.sum(1, keepdims=True)).astype(np.float32)
net = make_soft_label_net(
    SmallCNN,
    module__n_classes=10,
    max_epochs=20,
    lr=3e-3,
    batch_size=64,
    random_state=0,
    train_split=predefined_split(
        Dataset(valid.images.astype(np.float32), valid_targets)
    ),
    callbacks=[
        HumanMetricsCallback(["neg_kl_divergence", "neg_expected_calibration_error"])
    ],
)
net.fit(train.images, train.counts)
final_loss = net.history[-1, "train_loss"]
print(f"training loss after {len(net.history)} epochs: {final_loss:.3f}")
print("epoch  validation KL  validation ECE")
for row in net.history[4::5]:
    print(
        f"{row['epoch']:5d}  {-row['neg_kl_divergence']:13.3f}"
        f"  {-row['neg_expected_calibration_error']:14.3f}"
    )

# %%
# 2. Temperature scaling on the validation histograms
# ---------------------------------------------------
# The network is frozen; the temperature maximises the likelihood of the five
# validation labels per item.
from sklearn.frozen import FrozenEstimator

from sklearn_hcal import TemperatureScaler

ts = TemperatureScaler(FrozenEstimator(net)).fit(valid.images, valid.counts)
print(f"temperature: {ts.temperature_:.3f}")

# %%
# 3. α-calibration
# ----------------
# :class:`~sklearn_hcal.AlphaCalibrator` keeps the temperature-scaled
# probabilities ``f(x)`` and models the human distribution as
# ``Dir(α0(x)·f(x))``, with the concentration ``α0(x)`` a log-linear function
# of the network's penultimate layer (the input of ``SmallCNN.fc``), as in the
# paper. It is fitted by the Dirichlet-multinomial likelihood of the
# validation histograms, which is why they need at least two labels per item.
from sklearn_hcal import AlphaCalibrator

alpha = AlphaCalibrator(
    FrozenEstimator(ts), features="penultimate", random_state=0
).fit(valid.images, valid.counts)
alpha0 = alpha.predict_concentration(test.images)
print(
    f"alpha0 on test: median {np.median(alpha0):.2f} "
    f"(mixed images {np.median(alpha0[test.mixed]):.2f}, "
    f"others {np.median(alpha0[~test.mixed]):.2f})"
)

# %%
# Evaluation on the test histograms
# ---------------------------------
# Class probabilities are compared with the ten test labels by the debiased
# estimators of Mimori et al. (the epistemic loss ``EL = E‖Q − q‖²`` and its
# calibration part ``CL``); since Mix-Digits knows the true distributions
# ``Q``, the last column is the exact ``mean ‖Q − q‖²`` that ``EL``
# estimates. α-calibration leaves the probabilities as they are, so its
# class-probability metrics are those of the temperature-scaled network.
#
# The predicted disagreement ``φ`` (the probability that two annotators
# disagree) is ``1 − Σ_k q_k²`` for the network and the temperature-scaled
# network, and ``α0/(α0 + 1)·(1 − Σ_k f_k²)`` after α-calibration, given to
# the report with ``disagreement=``. It is scored by its unbiased squared loss
# ``L̂_φD`` (eq. 40, ``disagreement_sq_loss``) and calibration error
# ``CE_φD`` (eq. 42–45, ``disagreement_ce``), as in the paper's Tables 1–2.
# ``hcal demo`` runs this experiment with more methods (MC dropout,
# α-calibration of the raw network) and bootstrap intervals.
import pandas as pd

from sklearn_hcal.metrics import epistemic_loss, human_calibration_report

methods = {"CNN": net, "CNN + TS": ts, "CNN + TS + α": alpha}
probas = {name: est.predict_proba(test.images) for name, est in methods.items()}
# The α-calibrated model's own φ; the others get 1 − Σ q² from the report.
phis = {"CNN + TS + α": alpha.predict_disagreement(test.images)}
results = human_calibration_report(
    test.counts,
    probas,
    disagreement=phis,
    metrics=["accuracy", "log_loss", "el", "cl", "disagreement_sq_loss"]
    + ["disagreement_ce"],
)
results["true ‖Q − q‖²"] = [
    np.mean(np.sum((test.true_proba - P) ** 2, axis=1)) for P in probas.values()
]
results.round(4)

# %%
# Temperature scaling (``T > 1``: the network was over-confident) lowers the
# log loss of the class probabilities, the likelihood it was fitted for, but
# not their squared loss (``el`` and the exact distance to ``Q`` rise a
# little), and it predicts disagreement *worse*: softer
# probabilities mean more predicted disagreement on every image, also on the
# unmixed digits that all annotators agree on.
# α-calibration keeps the probabilities and fixes the disagreement: its
# ``L̂_φD`` and ``CE_φD`` are well below both, as in Mimori et al.'s
# Tables 1–2.

# %%
# Disagreement reliability diagram
# --------------------------------
# Items are binned by their predicted disagreement ``φ``; each point is the mean
# ``φ`` of a bin against the mean unbiased empirical disagreement of its test
# histograms (Mimori et al. Fig. 1). A point-prediction network predicts
# disagreement through ``1 − Σ q²`` only; α-calibration shrinks or stretches it
# item by item.
from sklearn_hcal.plotting import DisagreementReliabilityDisplay

disp = DisagreementReliabilityDisplay.from_estimator(
    ts,
    test.images,
    test.counts,
    response_method="predict_proba",  # the point prediction's 1 − Σ q²
    name="CNN + TS",
    linestyle=":",
    show_counts=False,
)
_ = DisagreementReliabilityDisplay.from_estimator(
    alpha, test.images, test.counts, name="CNN + TS + α", ax=disp.ax_
)

# %%
# Where the squared loss comes from
# ---------------------------------
# The calibration-dispersion map of Mimori et al. (Fig. 5a) places each method
# at (``CL``, ``DL``), the two parts of the epistemic loss ``EL = CL + DL``:
# calibration moves a method left, better features move it down.
from sklearn_hcal.plotting import CalibrationDispersionDisplay

probas.pop("CNN + TS + α")  # same probabilities as CNN + TS
_ = CalibrationDispersionDisplay.from_predictions(test.counts, probas)

# %%
# Posterior after one expert label
# --------------------------------
# Suppose an expert labels each test image once (here: a draw from its true
# distribution, independent of the ten test labels). The Dirichlet turns that
# label into a posterior ``(α0·f + y)/(α0 + 1)`` (eq. 18–19). A small ``α0``
# says that the image's human distribution may be far from ``f`` (typically
# concentrated on one class, as for the unmixed digits above), and the
# expert's label then weighs a lot; a large ``α0`` says that ``f`` is already
# close, and the label moves it little. The posterior is much closer to the
# truth than the prior, both by the exact distance to ``Q`` and by the
# debiased ``EL`` estimated from the ten test labels.
rng = np.random.default_rng(1)
expert = np.array([rng.multinomial(1, q) for q in test.true_proba])
prior = alpha.predict_proba(test.images)
posterior = alpha.predict_posterior(test.images, expert)
pd.DataFrame(
    {
        "EL (debiased, test labels)": [
            epistemic_loss(test.counts, prior),
            epistemic_loss(test.counts, posterior),
        ],
        "true ‖Q − q‖²": [
            np.mean(np.sum((test.true_proba - prior) ** 2, axis=1)),
            np.mean(np.sum((test.true_proba - posterior) ** 2, axis=1)),
        ],
    },
    index=["prior f(x)", "posterior after one expert label"],
).round(4)

# %%
# The whole experiment, as ``hcal demo`` runs it
# ----------------------------------------------
# The command line's experiment is written once
# (:func:`sklearn_hcal.cli.run_demo`, shared by ``hcal demo`` and the tests):
# the same recipe with more methods -- α-calibration of the raw network, MC
# dropout and its α-calibration, the Oracle -- calibrated on five labels per
# validation item, evaluated on ten per test item, with paired bootstrap
# intervals. Here in its quick form (few epochs, 20 resamples), so the numbers
# are rougher than above; ``hcal demo`` runs the full one.
from sklearn_hcal.cli import run_demo

demo = run_demo(quick=True, seed=0, figures=False, progress=False)
columns = ["disagreement_sq_loss", "disagreement_ce", "el_prior", "el_posterior"]
demo.tables["mimori"][columns].round(3)
