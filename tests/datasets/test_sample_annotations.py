"""sample_annotations: fewer annotations per item, drawn from the histograms."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare
from sklearn.linear_model import LogisticRegression

from sklearn_hcal import SoftLabelClassifier
from sklearn_hcal.datasets import make_label_histograms, sample_annotations


def test_one_label_follows_the_human_distribution():
    row = np.array([1, 3, 0, 6])
    Y = np.tile(row, (20000, 1))
    y = sample_annotations(Y, random_state=0)
    observed = np.bincount(y, minlength=4)
    assert observed[2] == 0  # a class nobody chose is never drawn
    expected = 20000 * row / row.sum()
    keep = row > 0
    assert chisquare(observed[keep], expected[keep]).pvalue > 1e-3


def test_several_labels_are_drawn_without_replacement():
    Y = np.tile([2, 1, 0, 5], (5000, 1))
    kept = sample_annotations(Y, 3, random_state=1)
    assert kept.dtype == np.int64
    assert np.all(kept.sum(axis=1) == 3)
    assert np.all(kept <= Y)  # never more of a class than there were
    # hypergeometric mean: 3 · Y / n, sd of the mean of 5000 draws < 0.011
    np.testing.assert_allclose(kept.mean(axis=0), 3 * Y[0] / 8, atol=0.04)
    # all annotations kept: the histogram itself
    np.testing.assert_array_equal(sample_annotations(Y[:3], 8, random_state=2), Y[:3])


def test_named_classes_and_errors():
    Y = pd.DataFrame([[0, 4], [3, 0]], columns=["no", "yes"], index=["a", "b"])
    assert list(sample_annotations(Y, random_state=0)) == ["yes", "no"]
    kept = sample_annotations(Y, 2, random_state=0)
    assert list(kept.columns) == ["no", "yes"] and list(kept.index) == ["a", "b"]
    np.testing.assert_array_equal(kept.to_numpy(), [[0, 2], [2, 0]])
    with pytest.raises(ValueError, match=r"fewer than n_annotations=4 .* row 1"):
        sample_annotations(Y, 4)
    with pytest.raises(ValueError, match="1-D labels already hold one"):
        sample_annotations(np.array([0, 1, 1]))
    with pytest.raises(ValueError, match="Y must hold non-negative integer"):
        sample_annotations(np.array([[0.5, 0.5], [1.0, 0.0]]))


def test_the_same_draw_as_soft_label_classifier_sample():
    X, Y, _ = make_label_histograms(300, 3, 5, n_features=4, random_state=3)
    y = sample_annotations(Y, random_state=7)
    direct = LogisticRegression().fit(X, y)
    wrapped = SoftLabelClassifier(
        LogisticRegression(), strategy="sample", random_state=7
    ).fit(X, Y)
    np.testing.assert_allclose(wrapped.estimator_.coef_, direct.coef_)
