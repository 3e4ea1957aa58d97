"""
========================================================
A report to look at: notebook display and one HTML file
========================================================

:func:`~sklearn_hcal.metrics.human_calibration_report` returns a DataFrame:
one row per classifier, a column per metric and, with a bootstrap, the
interval bounds as separate ``m_low`` / ``m_high`` columns. That is the form
to compute with. To *look* at the numbers -- in a notebook, or in a file sent
to co-authors -- wrap them in a :class:`~sklearn_hcal.report.CalibrationReport`:

* in a notebook (and on this page) it renders the table with each interval in
  its value's cell, an arrow per column (↑ higher is better, ↓ lower is
  better), the best model of each column in bold with a ★, and a legend --
  what each metric measures, its direction, whether it is a proper score and
  the paper it comes from -- generated from the metric registry, so a metric
  added there shows up here without another edit;
* :meth:`~sklearn_hcal.report.CalibrationReport.to_html` writes the same with
  a summary of the data and the diagnostic figures as **one self-contained
  HTML file** (figures embedded, no script, nothing fetched from anywhere);
  ``hcal evaluate ... --html report.html`` writes it from the command line.
"""

# %%
# Three classifiers on synthetic label histograms
# -----------------------------------------------
# Items labelled by five people each; ``Q`` is the true human label
# distribution. A logistic regression trained on majority votes, the same
# model recalibrated to the histograms by temperature scaling, and the oracle.
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from sklearn_hcal import TemperatureScaler
from sklearn_hcal.datasets import make_label_histograms

X, Y, Q = make_label_histograms(
    3000, n_classes=3, n_annotations=5, n_features=5, temperature=2.0, random_state=0
)
fit, cal, test = slice(0, 1500), slice(1500, 2000), slice(2000, None)
clf = LogisticRegression().fit(X[fit], Y[fit].argmax(1))
ts = TemperatureScaler(FrozenEstimator(clf)).fit(X[cal], Y[cal])
predictions = {
    "majority": clf.predict_proba(X[test]),
    "+ts": ts.predict_proba(X[test]),
    "oracle": Q[test],
}

# %%
# The notebook display
# --------------------
# :meth:`~sklearn_hcal.report.CalibrationReport.from_predictions` takes the
# arguments of :func:`~sklearn_hcal.metrics.human_calibration_report` and
# keeps the data for the summary and the figures. The last expression of a
# cell is rendered by its ``_repr_html_``:
from sklearn_hcal.report import CalibrationReport

report = CalibrationReport.from_predictions(
    Y[test],
    predictions,
    metrics=["accuracy", "ece", "dist_ce", "jsd", "kl", "sq_loss", "el"],
    n_bootstrap=200,
    random_state=0,
)
report  # noqa: B018 -- the notebook display

# %%
# The numbers are those of the DataFrame, kept unchanged in ``report.table``
# (the display rounds them to ``digits=4`` decimals):
report.table.round(4)

# %%
# The legend is a table too:
report.legend()

# %%
# One HTML file
# -------------
# :meth:`~sklearn_hcal.report.CalibrationReport.to_html` returns the page, or
# writes it when given a path. Its figures are drawn with the displays of
# :mod:`sklearn_hcal.plotting` and embedded as PNG images: the file opens
# without network, without JavaScript and without any other file. For 10
# classifiers on 10,000 items of 3 classes it weighs about 0.55 MB (0.7 MB
# with 10 classes); the figures make most of it and do not grow with the
# number of items.
import tempfile
from pathlib import Path

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "report.html"
    report.to_html(path)
    print(f"{path.name}: {path.stat().st_size / 1e3:.0f} kB")

# %%
# One of the figures in the file, drawn here on its own: the confidence
# reliability diagram against the human majority (Baan et al. 2022).
import matplotlib.pyplot as plt

from sklearn_hcal.plotting import MajorityReliabilityDisplay

ax = None
for name, P in predictions.items():
    ax = MajorityReliabilityDisplay.from_predictions(
        Y[test], P, name=name, ax=ax, show_counts=ax is None
    ).ax_
plt.show()

# %%
# From fitted classifiers
# -----------------------
# :meth:`~sklearn_hcal.report.CalibrationReport.from_estimator` takes the
# fitted models and the test items' features. A model with its own predicted
# disagreement -- here α-calibration of the temperature-scaled classifier
# (Mimori et al. 2021) -- is scored on it in the disagreement columns and
# figure without ``disagreement=``; the others on ``1 − Σ q²`` of their
# probabilities, as the data summary of the file says. (α-calibration can
# only lower ``1 − Σ q²``, by the factor ``α0 / (α0 + 1)``: it helps a model
# whose probabilities are not too sharp, hence after temperature scaling.)
from sklearn_hcal import AlphaCalibrator

alpha = AlphaCalibrator(FrozenEstimator(ts)).fit(X[cal], Y[cal])
fitted = CalibrationReport.from_estimator(
    {"majority": clf, "+ts": ts, "+ts+α": alpha},
    X[test],
    Y[test],
    metrics=["kl", "disagreement_sq_loss", "disagreement_ce"],
    n_bootstrap=200,
    random_state=0,
)
fitted  # noqa: B018 -- the notebook display
