"""estimator=None with an unnamed score array and a named, unsorted histogram.

A classifier's scores follow its ``classes_`` (sorted); a histogram
DataFrame in another column order must not be paired with them by position.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal import AlphaCalibrator, MatrixScaler, TemperatureScaler, VectorScaler
from sklearn_hcal.datasets import make_label_histograms

CALIBRATORS = [TemperatureScaler, VectorScaler, MatrixScaler]


@pytest.fixture
def data():
    X, Y, _ = make_label_histograms(
        400, 3, 5, n_features=3, temperature=2.0, random_state=0
    )
    rng = np.random.RandomState(0)
    Z = X @ rng.normal(size=(3, 3))  # scores of classes "a", "b", "c", in order
    return Z, pd.DataFrame(Y, columns=["a", "b", "c"])


@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_unsorted_histogram_columns_raise(Cal, data):
    Z, H = data
    with pytest.raises(ValueError, match=r"classes=.*sorted|sorted.*classes="):
        Cal().fit(Z, H[["c", "a", "b"]])


@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_classes_say_which_column_scores_which_class(Cal, data):
    Z, H = data
    shuffled = H[["c", "a", "b"]]
    named = Cal(classes=["a", "b", "c"]).fit(Z, shuffled)
    plain = Cal().fit(Z, H.to_numpy())  # the aligned arrays
    np.testing.assert_allclose(named.predict_proba(Z), plain.predict_proba(Z))
    assert list(named.classes_) == ["a", "b", "c"]


@pytest.mark.parametrize("Cal", CALIBRATORS)
def test_sorted_histogram_columns_follow_the_scores(Cal, data):
    Z, H = data
    np.testing.assert_allclose(
        Cal().fit(Z, H).predict_proba(Z), Cal().fit(Z, H.to_numpy()).predict_proba(Z)
    )


def test_alpha_calibrator_follows_the_same_rule(data):
    pytest.importorskip("torch")
    Z, H = data
    with pytest.raises(ValueError, match="classes="):
        AlphaCalibrator(max_iter=5).fit(Z, H[["c", "a", "b"]])


def test_conformal_classifier_follows_the_same_rule(data):
    from sklearn_hcal.conformal import HumanConformalClassifier

    Z, H = data
    P = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    with pytest.raises(ValueError, match="classes="):
        HumanConformalClassifier(random_state=0).fit(P, H[["c", "a", "b"]])
    named = HumanConformalClassifier(classes=["a", "b", "c"], random_state=0)
    named.fit(P, H[["c", "a", "b"]])
    plain = HumanConformalClassifier(random_state=0).fit(P, H.to_numpy())
    np.testing.assert_array_equal(named.predict_set(P), plain.predict_set(P))
