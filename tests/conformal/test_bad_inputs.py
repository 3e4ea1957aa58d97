"""Bad inputs to the conformal classifier: each a case that was silently wrong
or answered without naming the argument, the row and the value."""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.conformal import HumanConformalClassifier
from sklearn_hcal.datasets import make_label_histograms

NAMES = ["a", "b", "c"]


@pytest.fixture(scope="module")
def data():
    _, Y, Q = make_label_histograms(600, 3, 5, random_state=0)
    rng = np.random.default_rng(0)
    P = 0.7 * Q + 0.3 * rng.dirichlet([1, 1, 1], size=600)  # a model's output
    return P, Y


def test_probability_frame_in_another_order_is_aligned_by_name(data):
    # The columns of a probability DataFrame name its classes; they
    # were read by position (threshold 0.945 instead of 0.768 on this data).
    # Exact calibration: Monte Carlo draws depend on the class order.
    P, Y = data
    H = pd.DataFrame(Y, columns=NAMES)
    shuffled = pd.DataFrame(P, columns=NAMES)[["c", "a", "b"]]
    cp = HumanConformalClassifier(calibration="exact").fit(shuffled, H)
    plain = HumanConformalClassifier(calibration="exact").fit(P, Y)
    assert cp.threshold_ == plain.threshold_
    # the classes follow X's columns, as the calibrators' classes_ do
    assert list(cp.classes_) == ["c", "a", "b"]
    sets = pd.DataFrame(cp.predict_set(shuffled), columns=cp.classes_)
    np.testing.assert_array_equal(sets[NAMES].to_numpy(), plain.predict_set(P))


def test_probability_frame_with_other_class_names_raises(data):
    P, Y = data
    H = pd.DataFrame(Y, columns=NAMES)
    other = pd.DataFrame(P, columns=["a", "b", "z"])
    with pytest.raises(ValueError, match=r"do not match the columns of y"):
        HumanConformalClassifier().fit(other, H)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_x_names_the_row_and_the_value(data, value):
    P, Y = data
    bad = P.copy()
    bad[7, 2] = value
    pattern = rf"X contains NaN or infinity \(row 7, column 2: {value!r}\)"
    with pytest.raises(ValueError, match=pattern):
        HumanConformalClassifier().fit(bad, Y)
    cp = HumanConformalClassifier().fit(P, Y)
    with pytest.raises(ValueError, match=pattern):
        cp.predict_set(bad)
