"""The shared input checks: every metric and estimator relies on them."""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal._validation import (
    DISAGREEMENT_TOL,
    check_disagreement,
    check_histograms_and_probabilities,
    check_label_histograms,
    check_logits,
    check_probabilities,
    labels_to_histograms,
    row_sum_tolerance,
)


def test_counts_are_kept_and_dataframe_columns_become_classes():
    df = pd.DataFrame([[1, 2, 0], [0, 3, 4]], columns=["e", "n", "c"])
    Y, classes = check_label_histograms(df, return_classes=True)
    np.testing.assert_array_equal(Y, [[1, 2, 0], [0, 3, 4]])
    assert list(classes) == ["e", "n", "c"]
    assert Y.dtype == np.float64


def test_float32_is_not_upcast():
    Y = check_label_histograms(np.array([[1, 2], [3, 0]], dtype=np.float32))
    assert Y.dtype == np.float32
    P = check_probabilities(np.array([[0.25, 0.75]], dtype=np.float32))
    assert P.dtype == np.float32


@pytest.mark.parametrize("shape", ["1d", "column"])
def test_label_vector_and_column_are_one_hot(shape):
    y = np.array(["b", "a", "b"])
    if shape == "column":
        y = y[:, None]
    Y, classes = check_label_histograms(y, return_classes=True)
    assert list(classes) == ["a", "b"]
    np.testing.assert_array_equal(Y, [[0, 1], [1, 0], [0, 1]])


def test_integer_labels_are_not_column_indices():
    # {0, 2} of 4 classes could be columns 0 and 2, or the first two of
    # classes {0, 2, 5, 7}: only the classes (by name) decide.
    with pytest.raises(ValueError, match="2 distinct labels .* 4 classes"):
        check_label_histograms([0, 2, 2], n_classes=4)
    Y = check_label_histograms([0, 2, 2], n_classes=4, classes=[0, 1, 2, 3])
    np.testing.assert_array_equal(Y.sum(axis=0), [1, 0, 2, 0])


def test_labels_with_explicit_classes_and_unknown_label():
    Y, classes = labels_to_histograms(["x", "z"], classes=["z", "y", "x"])
    np.testing.assert_array_equal(Y, [[0, 0, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match=r"y contains labels \['w'\]"):
        labels_to_histograms(["w"], classes=["z", "y", "x"])


def test_wrong_number_of_distinct_labels():
    with pytest.raises(ValueError, match="2 distinct labels .* 3 classes"):
        check_label_histograms(["a", "b"], n_classes=3)


@pytest.mark.parametrize(
    "Y, match",
    [
        ([[1, np.nan]], "NaN or infinity"),
        ([[1, np.inf]], "NaN or infinity"),
        ([[1, -1]], "non-negative"),
        ([[0.5, 1.0]], "integer label counts"),
        ([[0, 0], [1, 1]], "zero annotations .first at row 0"),
        (np.zeros((0, 3)), "empty"),
        ([["a", "b"], ["c", "d"]], "numeric"),
    ],
)
def test_bad_histograms(Y, match):
    with pytest.raises(ValueError, match=match) as exc:
        check_label_histograms(Y, name="counts")
    assert "counts" in str(exc.value)


def test_probability_rows_accepted_only_when_allowed():
    P = [[0.2, 0.8], [0.5, 0.5]]
    np.testing.assert_allclose(check_label_histograms(P, allow_probabilities=True), P)
    with pytest.raises(ValueError, match="row 0 sums to 0.9"):
        check_label_histograms([[0.2, 0.7]], allow_probabilities=True)


def test_class_count_mismatch_for_histograms():
    with pytest.raises(ValueError, match="3 classes .columns. but 2 were expected"):
        check_label_histograms([[1, 2, 3]], n_classes=2)


def test_binary_probability_column_is_second_class():
    P = check_probabilities([0.1, 0.9])
    np.testing.assert_allclose(P, [[0.9, 0.1], [0.1, 0.9]])
    with pytest.raises(ValueError, match="1-D.*3 classes were expected"):
        check_probabilities([0.1, 0.9], n_classes=3)
    with pytest.raises(ValueError, match=r"values must lie in \[0, 1\]"):
        check_probabilities([1.5, 0.2])


@pytest.mark.parametrize(
    "P, match",
    [
        ([[0.5, 0.4]], r"rows must sum to 1 .* row 0 sums to 0.9"),
        ([[1.2, -0.2]], "non-negative"),
        ([[np.nan, 1.0]], "NaN or infinity"),
        (np.zeros((0, 2)), "empty"),
        (np.ones((2, 2, 2)) / 2, "1-D or 2-D"),
    ],
)
def test_bad_probabilities(P, match):
    with pytest.raises(ValueError, match=match) as exc:
        check_probabilities(P, name="y_pred")
    assert "y_pred" in str(exc.value)


def test_rows_off_by_rounding_are_renormalised_and_others_raise():
    # developer guide §tolerances: within row_sum_tolerance(K) = max(1e-6, 5e-4 K) a row
    # is a rounded probability row; it is renormalised, not rejected.
    exact = [[0.5, 0.5 + 5e-7]]  # within 1e-6: left as it is
    np.testing.assert_array_equal(check_probabilities(exact), exact)
    np.testing.assert_allclose(
        check_probabilities([[0.5, 0.5 + 5e-5]]),
        [[0.5 / (1 + 5e-5), (0.5 + 5e-5) / (1 + 5e-5)]],
        rtol=1e-15,
    )
    assert row_sum_tolerance(2) == 1e-3
    with pytest.raises(ValueError, match=r"tolerance 0.001 .* row 0 sums to 1.0011"):
        check_probabilities([[0.5, 0.5011]])


def test_logits():
    Z = check_logits([[1e4, -1e4]])
    assert Z.shape == (1, 2)
    with pytest.raises(ValueError, match="X must be 2-D"):
        check_logits([1.0, 2.0])
    with pytest.raises(ValueError, match="3 classes were expected"):
        check_logits([[1.0, 2.0]], n_classes=3)
    with pytest.raises(ValueError, match="NaN"):
        check_logits([[np.nan, 2.0]])


def test_pair_validation_uses_counts_keyword_and_checks_lengths():
    Y = np.array([[3, 1], [0, 4]])
    P = np.array([[0.5, 0.5], [0.1, 0.9]])
    Y1, P1 = check_histograms_and_probabilities(["ignored", "labels"], P, counts=Y)
    np.testing.assert_array_equal(Y1, Y)
    # binary 1-D probability column with histogram y_true
    Y2, P2 = check_histograms_and_probabilities(Y, P[:, 1])
    np.testing.assert_allclose(P2, P)
    with pytest.raises(ValueError, match="different numbers of samples: 2 and 1"):
        check_histograms_and_probabilities(Y, P[:1])
    with pytest.raises(ValueError, match="y_prob has 2 classes .columns. but 3"):
        check_histograms_and_probabilities([[1, 1, 1]], [[0.5, 0.5]])
    with pytest.raises(ValueError, match="counts must be non-negative"):
        check_histograms_and_probabilities(None, P, counts=-Y)


def test_pair_validation_with_label_vector():
    Y, P = check_histograms_and_probabilities([2, 0, 1], [[0.2, 0.3, 0.5]] * 3)
    np.testing.assert_array_equal(Y, [[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    # two of three classes: which columns they are is ambiguous
    with pytest.raises(ValueError, match="2 distinct labels"):
        check_histograms_and_probabilities([2, 0], [[0.2, 0.3, 0.5]] * 2)


# --------------------------------------------------------------------------- #
# Disagreement values (developer guide §tolerances)
# --------------------------------------------------------------------------- #
def test_check_disagreement_clips_rounding_errors_only():
    phi = check_disagreement([0.25, -8e-15, 1 + 1e-15, -1e-8, 1 + 1e-8])
    np.testing.assert_array_equal(phi, [0.25, 0.0, 1.0, 0.0, 1.0])
    assert DISAGREEMENT_TOL == 1e-8
    # an (n, 1) column is phi as well; the input is not modified
    column = np.array([[0.5], [-1e-12]])
    np.testing.assert_array_equal(check_disagreement(column), [0.5, 0.0])
    assert column[1, 0] == -1e-12


@pytest.mark.parametrize(
    "phi, match",
    [
        # full precision (repr): never "found values in [0.5, 1]"
        ([0.5, 1 + 1e-7], r"row 1 is 1\.0000001 "),
        ([0.5, -1e-3], r"row 1 is -0\.001 "),
        ([0.5, 1.0 + 2.2e-8], r"row 1 is 1\.000000022 "),
        ([np.inf, 0.5], r"NaN or infinity \(row 0: inf\)"),
        ([], "empty"),
        ([[0.5, 0.5]], r"must be 1-D .* shape \(1, 2\)"),
        (["a"], "numeric"),
    ],
)
def test_check_disagreement_errors_name_row_and_value(phi, match):
    with pytest.raises(ValueError, match=match) as info:
        check_disagreement(phi, name="phi")
    assert str(info.value).startswith("phi ")


# --------------------------------------------------------------------------- #
# Class alignment in the pair validation (developer guide §class-names)
# --------------------------------------------------------------------------- #
def test_pair_reorders_named_probabilities_to_the_histograms():
    Y = pd.DataFrame([[3, 1, 0], [0, 1, 4]], columns=["a", "b", "c"])
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    shuffled = pd.DataFrame(P, columns=["a", "b", "c"])[["c", "a", "b"]]
    Y1, P1 = check_histograms_and_probabilities(Y, shuffled)
    np.testing.assert_array_equal(P1, P)
    _, P2 = check_histograms_and_probabilities(
        Y, shuffled.to_numpy(), labels=["c", "a", "b"]
    )
    np.testing.assert_array_equal(P2, P)
    # a plain histogram: labels name both, nothing moves
    _, P3 = check_histograms_and_probabilities(Y.to_numpy(), P, labels=["c", "a", "b"])
    np.testing.assert_array_equal(P3, P)
    # the caller's arrays are not modified, and nothing changes is not copied
    _, P4 = check_histograms_and_probabilities(Y, P)
    assert P4 is P


def test_pair_maps_labels_through_the_probability_classes():
    P = pd.DataFrame([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]], columns=["e", "n", "c"])
    Y, _ = check_histograms_and_probabilities(["c", "e"], P)
    np.testing.assert_array_equal(Y, [[0, 0, 1], [1, 0, 0]])
    Y, _ = check_histograms_and_probabilities(
        ["c", "e"], P.to_numpy(), labels=list("enc")
    )
    np.testing.assert_array_equal(Y, [[0, 0, 1], [1, 0, 0]])


def test_pair_with_rounded_rows_returns_renormalised_probabilities():
    P = np.array([[0.333, 0.333, 0.333], [0.2, 0.3, 0.5]])
    _, P1 = check_histograms_and_probabilities([[1, 1, 1], [0, 1, 1]], P)
    np.testing.assert_allclose(P1[0], [1 / 3] * 3, rtol=1e-15)
    np.testing.assert_array_equal(P1[1], P[1])  # exact rows are untouched
    assert P[0, 0] == 0.333


def test_labels_to_histograms_messages():
    with pytest.raises(ValueError, match=r"mixes labels of types \['int', 'str'\]"):
        labels_to_histograms(np.array([1, "a"], dtype=object))
    with pytest.raises(ValueError, match=r"NaN or infinity \(row 2: nan\)"):
        labels_to_histograms([0.0, 1.0, np.nan])
    with pytest.raises(ValueError, match=r"\(n, 1\) y is read as a column of labels"):
        labels_to_histograms([[3], [5]], n_classes=3)
