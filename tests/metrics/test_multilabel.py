"""Multi-label soft metrics (VariErrNLI style): one binary distribution per label.

Checked by hand and against the published definitions written as loops over
labels (LeWiDi 2025's MAMD) and against scipy (Kurniawan et al., 2025).
"""

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cityblock, jensenshannon
from scipy.stats import entropy, pearsonr

from sklearn_hcal.metrics import (
    multilabel_entropy_correlation_score,
    multilabel_manhattan_distance,
    multilabel_po_jsd_score,
    multilabel_soft_micro_f1_score,
)

MULTILABEL = [
    multilabel_manhattan_distance,
    multilabel_soft_micro_f1_score,
    multilabel_po_jsd_score,
    multilabel_entropy_correlation_score,
]


# --------------------------------------------------------------------------- #
# Multi-label (VariErrNLI)
# --------------------------------------------------------------------------- #
LABELS = ["contradiction", "entailment", "neutral"]


def _varierr_fixture():
    # soft labels as LeWiDi 2025 ships them: a binary distribution per label
    target = [
        {
            "contradiction": [1.0, 0.0],
            "entailment": [0.5, 0.5],
            "neutral": [0.25, 0.75],
        },
        {
            "contradiction": [0.25, 0.75],
            "entailment": [0.75, 0.25],
            "neutral": [1.0, 0.0],
        },
    ]
    pred = [
        {
            "contradiction": [1.0, 0.0],
            "entailment": [0.75, 0.25],
            "neutral": [0.0, 1.0],
        },
        {"contradiction": [0.5, 0.5], "entailment": [0.5, 0.5], "neutral": [0.5, 0.5]},
    ]
    T = pd.DataFrame([[d[lab][1] for lab in LABELS] for d in target], columns=LABELS)
    Q = pd.DataFrame([[d[lab][1] for lab in LABELS] for d in pred], columns=LABELS)
    return target, pred, T, Q


def test_multilabel_manhattan_by_hand_and_by_the_definition():
    target, pred, T, Q = _varierr_fixture()
    # item 1: (0 + .5 + .5) / 3 ; item 2: (.5 + .5 + 1) / 3
    assert multilabel_manhattan_distance(T, Q) == pytest.approx(
        ((0 + 0.5 + 0.5) / 3 + (0.5 + 0.5 + 1.0) / 3) / 2
    )
    # MAMD as written in the notebook: per item, mean over labels of the
    # Manhattan distance of the two binary distributions; then mean over items
    ref = np.mean(
        [
            np.mean([cityblock(t[lab], p[lab]) for lab in LABELS])
            for t, p in zip(target, pred)
        ]
    )
    assert multilabel_manhattan_distance(T, Q) == pytest.approx(ref)
    # labels are matched by name
    assert multilabel_manhattan_distance(T, Q[LABELS[::-1]]) == pytest.approx(ref)


def test_multilabel_soft_micro_f1_hand():
    T = [[0.2, 0.3], [0.1, 0.8], [0.9, 0.7]]
    Q = [[0.8, 0.1], [0.3, 0.4], [0.7, 0.4]]
    num = 2 * (0.2 + 0.1 + 0.1 + 0.4 + 0.7 + 0.4)
    den = (
        (0.2 + 0.8)
        + (0.3 + 0.1)
        + (0.1 + 0.3)
        + (0.8 + 0.4)
        + (0.9 + 0.7)
        + (0.7 + 0.4)
    )
    assert multilabel_soft_micro_f1_score(T, Q) == pytest.approx(num / den)
    assert multilabel_soft_micro_f1_score([[0, 0]], [[0, 0]]) == 1.0


def test_multilabel_po_jsd_and_entropy_correlation_against_scipy():
    rng = np.random.default_rng(9)
    T = rng.uniform(size=(25, 3))
    Q = rng.uniform(size=(25, 3))
    jsd = [
        jensenshannon([1 - t, t], [1 - q, q], base=2) ** 2
        for t, q in zip(T.ravel(), Q.ravel())
    ]
    assert multilabel_po_jsd_score(T, Q) == pytest.approx(1 - np.mean(jsd))
    rs = [
        pearsonr(
            [entropy([1 - t, t], base=2) for t in T[:, j]],
            [entropy([1 - q, q], base=2) for q in Q[:, j]],
        ).statistic
        for j in range(3)
    ]
    assert multilabel_entropy_correlation_score(T, Q) == pytest.approx(np.mean(rs))


def test_multilabel_counts_and_validation():
    counts = np.array([[0, 2, 3], [3, 1, 0]])
    n = [4, 4]
    T = counts / 4
    Q = np.full((2, 3), 0.5)
    assert multilabel_manhattan_distance(counts, Q, n_annotators=n) == pytest.approx(
        multilabel_manhattan_distance(T, Q)
    )
    with pytest.raises(ValueError, match="n_annotators="):
        multilabel_manhattan_distance(counts, Q)
    with pytest.raises(ValueError, match="same shape"):
        multilabel_po_jsd_score(T, Q[:, :2])
    with pytest.raises(ValueError, match="y_prob must hold"):
        multilabel_po_jsd_score(T, Q + 0.6)
    with pytest.raises(ValueError, match="NaN"):
        multilabel_soft_micro_f1_score([[np.nan, 0.1]], [[0.1, 0.1]])
    with pytest.raises(ValueError, match="label 'b'"):
        multilabel_entropy_correlation_score(
            pd.DataFrame([[0.5, 0.0], [0.1, 0.0]], columns=["a", "b"]),
            [[0.4, 0.1], [0.2, 0.3]],
        )
    # counts= replaces y_true (metadata routing)
    assert multilabel_manhattan_distance(
        np.zeros(2), Q, counts=counts, n_annotators=n
    ) == pytest.approx(multilabel_manhattan_distance(T, Q))


@pytest.mark.parametrize("metric", MULTILABEL)
def test_multilabel_oracle(metric):
    T = np.random.default_rng(16).uniform(size=(20, 3))
    best = 0.0 if metric is multilabel_manhattan_distance else 1.0
    assert metric(T, T) == pytest.approx(best, abs=1e-12)


def test_per_item_kernels_are_what_the_metrics_aggregate():
    from sklearn_hcal.metrics import _multilabel as ml

    rng = np.random.default_rng(18)
    T = rng.uniform(size=(15, 3))
    Q = rng.uniform(size=(15, 3))
    assert multilabel_manhattan_distance(T, Q) == pytest.approx(
        ml.multilabel_manhattan_per_item(T, Q).mean()
    )
    assert multilabel_po_jsd_score(T, Q) == pytest.approx(
        ml._multilabel_po_jsd_per_item(T, Q).mean()
    )
    num, den = ml._multilabel_soft_micro_f1_parts_per_item(T, Q)
    assert multilabel_soft_micro_f1_score(T, Q) == pytest.approx(num.sum() / den.sum())
    h_true, h_pred = ml._multilabel_entropy_correlation_parts_per_item(T, Q)
    assert h_true.shape == T.shape
    assert multilabel_entropy_correlation_score(T, Q) == pytest.approx(
        np.mean([pearsonr(h_true[:, j], h_pred[:, j]).statistic for j in range(3)])
    )


def test_multilabel_metrics_make_scorers_for_per_label_classifiers():
    # Not registry entries (another data shape), but make_human_scorer takes
    # them: a one-vs-rest classifier's predict_proba is per-label probabilities.
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    from sklearn_hcal.metrics import make_human_scorer

    rng = np.random.RandomState(0)
    X = rng.normal(size=(120, 3))
    T = (rng.uniform(size=(120, 3)) < 1 / (1 + np.exp(-2 * X))).astype(int)
    clf = OneVsRestClassifier(LogisticRegression()).fit(X, T)
    Q = clf.predict_proba(X)
    assert Q.shape == T.shape
    by_hand = 2 * np.abs(T - Q).mean()  # (2/L) Σ_l |t_l − q_l|, averaged
    assert make_human_scorer(multilabel_manhattan_distance)(clf, X, T) == pytest.approx(
        -by_hand, rel=1e-12
    )
    f1 = 2 * np.minimum(T, Q).sum() / (T + Q).sum()
    assert make_human_scorer(multilabel_soft_micro_f1_score)(
        clf, X, T
    ) == pytest.approx(f1, rel=1e-12)
    # two labels: scikit-learn hands the scorer one column; an error, not a
    # guess (the scorer names the two labels, the column is one)
    clf2 = OneVsRestClassifier(LogisticRegression()).fit(X, T[:, :2])
    with pytest.raises(ValueError, match="y_prob has 1 columns"):
        make_human_scorer(multilabel_manhattan_distance)(clf2, X, T[:, :2])
