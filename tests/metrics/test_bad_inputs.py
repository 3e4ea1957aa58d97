"""Bad input to the metric functions: one table, run against every metric.

Each row of :data:`CASES` is one bad input: the arguments, the exception
and a regex that
the message must match. Every message names the argument and the offending
row or value. A row runs against every public metric of a *group*:

* ``"pair"``: the registry's metrics that compare histograms with
  probabilities (Baan / ChaosNLI / majority / Mimori / LeWiDi and Kurniawan
  et al. / ordinal);
* ``"dis"``: its disagreement metrics, whose second argument is 2-D class
  probabilities here (the same validation path) -- or, for the ``φ`` rows,
  1-D disagreement values;
* ``"proba_ok"`` / ``"counts_only"``: the pair metrics that accept rows of
  human probabilities, and those (Mimori's, and the disagreement metrics)
  that need integer counts.

The groups are derived from the registry's declarations (what each metric
requires and compares), so a new metric meets every case of its group.

``{prob}`` in a regex stands for the name of the second argument
(``y_prob`` or ``y_disagreement``). New cases go into the table.
"""

import re
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_hcal.metrics import (
    annotator_report,
    calibration_loss,
    classwise_expected_calibration_error,
    disagreement_calibration_loss,
    disagreement_probability,
    entropy_calibration_error,
    epistemic_loss,
    expected_calibration_error,
    histogram_log_loss,
    jensen_shannon_distance,
    kl_divergence,
    majority_accuracy_score,
    predicted_disagreement,
    ranked_probability_score_loss,
    ranking_calibration_score,
    soft_cross_entropy,
    wasserstein_distance,
)
from tests.metrics._registered import (
    PROBABILITY_ROWS_OK,
    metric_functions,
    requirement,
)

#: From the registry: rows of human probabilities are valid labels for these;
#: Mimori et al.'s estimators need counts; the disagreement metrics take φ.
PROBA_OK = metric_functions(requires=PROBABILITY_ROWS_OK, response="proba")
MIMORI = metric_functions(requires="counts", response="proba")
DISAGREEMENT = metric_functions(response="disagreement")
GROUPS = {
    "pair": PROBA_OK + MIMORI,
    "dis": DISAGREEMENT,
    "proba_ok": PROBA_OK,
    "counts_only": MIMORI + DISAGREEMENT,
}
GROUPS["all"] = GROUPS["pair"] + GROUPS["dis"]
ALL_METRICS = GROUPS["all"]

Y = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1]])
P = np.array([[0.6, 0.3, 0.1], [0.1, 0.5, 0.4], [0.3, 0.3, 0.4]])
ABC = list("abc")


def _with(A, row, col, value):
    A = np.array(A, dtype=float)
    A[row, col] = value
    return A


class Case(NamedTuple):
    id: str
    group: str
    y_true: object
    y_prob: object
    match: str
    kwargs: dict = {}
    exc: type = ValueError


CASES = [
    # ---- non-finite values, signs, zero rows ------------------------------
    Case(
        "nan_counts",
        "all",
        _with(Y, 0, 0, np.nan),
        P,
        r"y_true contains NaN or infinity \(row 0, column 0: nan\)",
    ),
    Case(
        "inf_counts",
        "all",
        _with(Y, 1, 2, np.inf),
        P,
        r"y_true contains NaN or infinity \(row 1, column 2: inf\)",
    ),
    Case(
        "nan_prob",
        "all",
        Y,
        _with(P, 0, 0, np.nan),
        r"{prob} contains NaN or infinity \(row 0, column 0: nan\)",
    ),
    Case(
        "inf_prob",
        "all",
        Y,
        _with(P, 2, 1, -np.inf),
        r"{prob} contains NaN or infinity \(row 2, column 1: -inf\)",
    ),
    Case(
        "nan_label",
        "all",
        np.array([0.0, np.nan, 1.0]),
        P,
        r"y_true contains NaN or infinity \(row 1: nan\)",
    ),
    Case(
        "negative_counts",
        "all",
        _with(Y, 0, 2, -1),
        P,
        r"y_true must be non-negative; row 0, column 2: -1",
    ),
    Case(
        "negative_prob",
        "all",
        Y,
        _with(_with(P, 0, 0, -0.1), 0, 1, 1.0),
        r"{prob} must be non-negative probabilities; row 0, column 0: -0\.1",
    ),
    Case(
        "zero_annotation_row",
        "all",
        _with(_with(Y, 1, 1, 0), 1, 2, 0),
        P,
        r"y_true has rows with zero annotations \(first at row 1\)",
    ),
    # ---- fractional counts and human probability rows ----------------------
    Case(
        # "row 0 sums to 4" used to blame the wrong row
        "fractional_count_blames_its_row",
        "all",
        _with(Y, 2, 1, 2.5),
        P,
        r"y_true must hold .*integer label counts.* row 2 holds the "
        r"(non-integer|fractional) value 2\.5 \(column 1\)",
    ),
    Case(
        "fractional_counts_keyword",
        "counts_only",
        np.array([0, 1, 2]),
        P,
        r"counts must hold non-negative integer label counts.* row 0 holds the "
        r"fractional value 1\.5 \(column 0\)",
        {"counts": Y / 2},
    ),
    Case(
        "human_probability_row_beyond_tolerance",
        "proba_ok",
        _with(Y / Y.sum(1, keepdims=True), 0, 0, 0.75 - 0.01),
        P,
        r"y_true must hold integer label counts or probability rows summing to "
        r"1; row 0 sums to 0\.99 \(tolerance 0\.0015\)",
    ),
    Case(
        "counts_mixed_with_probability_rows",
        "proba_ok",
        np.array([[3, 1, 0], [0.25, 0.25, 0.5], [1, 1, 1]]),
        P,
        r"not both: row 1 is a row of probabilities .* row 0 sums to 4",
    ),
    Case(
        "human_probabilities_where_counts_are_needed",
        "counts_only",
        Y / Y.sum(1, keepdims=True),
        P,
        r"y_true must hold non-negative integer label counts .* row 0 holds the "
        r"fractional value 0\.75 .*number of annotations per item",
    ),
    # ---- probability rows -------------------------------------------------
    Case(
        # rounding passes (row_sum_tolerance); 0.1 off does not
        "prob_row_beyond_tolerance",
        "all",
        Y,
        _with(P, 1, 1, 0.6),
        r"{prob} rows must sum to 1 \(tolerance 0\.0015 for 3 classes.* row 1 "
        r"sums to 1\.1",
    ),
    Case(
        "single_probability_column",
        "pair",
        np.array([0, 1, 1]),
        np.array([[0.3], [0.7], [1.0]]),
        r"y_prob has a single column \(shape \(3, 1\)\).* at least 2; for a "
        r"binary problem pass a 1-D y_prob holding P\(second class\)",
    ),
    Case(
        "k1_histogram_and_single_probability_column",
        "pair",
        np.array([[3], [5], [3]]),
        np.ones((3, 1)),
        r"y_prob has a single column",
    ),
    Case(
        "k1_histogram",
        "all",
        np.array([[3], [5], [3]]),
        P,
        r"y_true holds 2 distinct labels \[3, 5\] but there are 3 classes.*"
        r"\(n, 1\) y_true is read as a column of labels.* at least 2",
    ),
    Case(
        "one_d_prob_not_binary",
        "pair",
        Y,
        np.array([0.2, 0.5, 0.9]),
        r"y_prob is 1-D, which means P\(second class\).* 3 classes were expected "
        r"\(y_true has 3\)",
    ),
    Case(
        "one_d_prob_out_of_range",
        "pair",
        Y[:, :2] + 1,
        np.array([0.2, 1.5, 0.9]),
        r"y_prob is 1-D .* values must lie in \[0, 1\]; row 1 is 1\.5",
    ),
    # ---- shapes and sizes -------------------------------------------------
    Case(
        "class_count_mismatch",
        "all",
        Y,
        P[:, :2] / P[:, :2].sum(1, keepdims=True),
        r"{prob} has 2 classes \(columns\) but 3 were expected \(y_true has 3\)",
    ),
    Case(
        "n_samples_mismatch",
        "all",
        Y[:2],
        P,
        r"y_true and {prob} have different numbers of samples: 2 and 3",
    ),
    Case("empty_counts", "all", np.empty((0, 3)), np.empty((0, 3)), "y_true is empty"),
    Case("empty_labels", "all", np.array([]), np.empty((0, 3)), "{prob} is empty"),
    Case(
        "non_numeric",
        "all",
        np.array([["a", "b", "c"]] * 3),
        P,
        "y_true must be numeric",
    ),
    Case(
        "ragged_y_true",
        "all",
        [[3, 1, 0], [0, 2], [1, 1, 1]],
        P,
        r"y_true is ragged: row 1 has 2 entries while row 0 has 3",
    ),
    Case(
        "ragged_y_prob",
        "all",
        Y,
        [[0.6, 0.3, 0.1], [0.1, 0.5, 0.4], [0.5, 0.5]],
        r"{prob} is ragged: row 2 has 2 entries while row 0 has 3",
    ),
    # ---- 1-D labels and classes by name -----------------------------------
    Case(
        # [1, 1]: which of three columns? It used to score by guessed position.
        "one_distinct_label_for_three_columns",
        "all",
        np.array([1, 1, 1]),
        P,
        r"y_true holds 1 distinct label \[1\] but there are 3 classes.* pass labels=",
    ),
    Case(
        "too_many_distinct_labels",
        "all",
        np.array([0, 1, 2, 3]),
        np.tile(P[0], (4, 1)),
        "y_true holds 4 distinct labels",
    ),
    Case(
        "label_not_among_labels",
        "all",
        np.array(["a", "b", "w"]),
        P,
        r"y_true contains labels \['w'\] that are not among the classes "
        r"\['a', 'b', 'c'\] \(labels=\)",
        {"labels": ABC},
    ),
    Case(
        "label_not_among_frame_columns",
        "all",
        np.array(["a", "b", "w"]),
        pd.DataFrame(P, columns=ABC),
        r"y_true contains labels \['w'\] .* \(the columns of {prob}\)",
    ),
    Case(
        "unsortable_mixed_labels",
        "all",
        np.array(["a", 1, "b"], dtype=object),
        P,
        r"y_true mixes labels of types \['int', 'str'\] .* pass labels=",
    ),
    Case(
        # x, y, z against a, b, c used to be accepted
        "frame_names_differ",
        "all",
        pd.DataFrame(Y, columns=ABC),
        pd.DataFrame(P, columns=list("xyz")),
        r"classes of {prob} \['x', 'y', 'z'\] do not match the classes of y_true "
        r"\['a', 'b', 'c'\]",
    ),
    Case(
        "labels_differ_from_y_true_names",
        "all",
        pd.DataFrame(Y, columns=ABC),
        P,
        r"classes of {prob} \(labels=\) \['x', 'y', 'z'\] do not match the "
        r"classes of y_true \['a', 'b', 'c'\]",
        {"labels": list("xyz")},
    ),
    Case(
        "labels_contradict_y_prob_columns",
        "all",
        Y,
        pd.DataFrame(P, columns=ABC),
        r"labels=\['c', 'b', 'a'\] contradict the column names of {prob} "
        r"\['a', 'b', 'c'\]",
        {"labels": list("cba")},
    ),
    Case(
        "labels_wrong_length",
        "all",
        Y,
        P,
        r"labels has 2 entries \['a', 'b'\] but {prob} has 3 columns",
        {"labels": ["a", "b"]},
    ),
    Case(
        "labels_repeat_a_class",
        "all",
        Y,
        P,
        r"labels must name each class once; 'a' occurs more than once",
        {"labels": ["a", "a", "b"]},
    ),
    Case(
        "labels_two_dimensional",
        "all",
        Y,
        P,
        r"labels must be 1-D .* got shape \(1, 3\)",
        {"labels": [ABC]},
    ),
    # ---- counts= (convention B) names the keyword -------------------------
    Case(
        "negative_counts_keyword",
        "all",
        np.array([0, 1, 2]),
        P,
        r"counts must be non-negative; row 0, column 0: -2",
        {"counts": _with(Y, 0, 0, -2)},
    ),
    Case(
        "counts_keyword_n_mismatch",
        "all",
        np.array([0, 1, 2]),
        P,
        r"counts and {prob} have different numbers of samples: 2 and 3",
        {"counts": Y[:2]},
    ),
    # ---- disagreement values φ ---------------------------------------------
    Case(
        "phi_below_zero",
        "dis",
        Y,
        [0.5, -1e-3, 0.5],
        r"y_disagreement must hold disagreement probabilities in \[0, 1\]; row 1 "
        r"is -0\.001 \(values within 1e-08",
    ),
    Case(
        # shown in full precision, not rounded to "1"
        "phi_above_one",
        "dis",
        Y,
        [0.5, 0.5, 1.0 + 2e-8],
        r"row 2 is 1\.00000002 ",
    ),
    Case(
        "phi_nan",
        "dis",
        Y,
        [np.nan, 0.5, 0.5],
        r"y_disagreement contains NaN or infinity \(row 0: nan\)",
    ),
    Case(
        "phi_n_mismatch",
        "dis",
        Y,
        [0.5, 0.5],
        r"y_true and y_disagreement have different numbers of samples: 3 and 2",
    ),
    Case(
        "single_annotations_only",
        "dis",
        np.array([0, 1, 2]),
        [0.5, 0.5, 0.5],
        r"y_true has no item with at least two annotations.* one label per item",
    ),
    Case(
        "phi_with_labels_of_wrong_length",
        "dis",
        Y,
        [0.5, 0.5, 0.5],
        r"labels has 2 entries \['a', 'b'\] but y_true has 3 columns",
        {"labels": ["a", "b"]},
    ),
    Case(
        "phi_with_labels_other_than_y_true_names",
        "dis",
        pd.DataFrame(Y, columns=ABC),
        [0.5, 0.5, 0.5],
        r"classes of labels \['x', 'y', 'z'\] do not match the classes of y_true",
        {"labels": list("xyz")},
    ),
    Case(
        "ensemble_member_row_beyond_tolerance",
        "dis",
        Y,
        np.stack([P, _with(P, 2, 0, 0.5), P]),
        r"y_disagreement\[1\] rows must sum to 1 .* row 2 sums to 1\.2",
    ),
    Case(
        "ensemble_class_count_mismatch",
        "dis",
        Y,
        np.full((2, 3, 2), 0.5),
        r"y_disagreement\[0\] has 2 classes \(columns\) but 3 were expected "
        r"\(y_true has 3\)",
    ),
    # ---- not array-like: scikit-learn's parameter validation --------------
    Case(
        "y_true_not_array_like",
        "all",
        "not an array",
        P,
        r"'y_true' parameter",
        exc=InvalidParameterError,
    ),
    Case(
        "y_prob_none",
        "all",
        Y,
        None,
        r"'{prob}' parameter",
        exc=InvalidParameterError,
    ),
    Case(
        "labels_a_string",
        "all",
        Y,
        P,
        r"'labels' parameter",
        {"labels": "abc"},
        exc=InvalidParameterError,
    ),
]


def _expand():
    for case in CASES:
        for metric in GROUPS[case.group]:
            yield pytest.param(case, metric, id=f"{case.id}-{metric.__name__}")


def test_case_ids_are_unique():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case, metric", list(_expand()))
def test_bad_input_raises_naming_argument_and_row(case, metric):
    prob = "y_disagreement" if metric in DISAGREEMENT else "y_prob"
    match = case.match.replace("{prob}", prob)
    with pytest.raises(case.exc, match=match) as info:
        metric(case.y_true, case.y_prob, **case.kwargs)
    if case.exc is ValueError:
        # never numpy's bare message -- the argument is named
        assert re.search(r"y_true|y_prob|y_disagreement|counts|labels", str(info.value))


# --------------------------------------------------------------------------- #
# Keywords
# --------------------------------------------------------------------------- #
BAD_KEYWORDS = [
    (ranking_calibration_score, {"ties": "bogus"}, "ties"),
    (ranking_calibration_score, {"ties": None}, "ties"),
    (majority_accuracy_score, {"ties": "bogus"}, "ties"),
    (majority_accuracy_score, {"ties": "strict"}, "ties"),
    (expected_calibration_error, {"n_bins": 0}, "n_bins"),
    (expected_calibration_error, {"n_bins": 2.5}, "n_bins"),
    (classwise_expected_calibration_error, {"n_bins": 0}, "n_bins"),
    (classwise_expected_calibration_error, {"n_bins": -3}, "n_bins"),
    (jensen_shannon_distance, {"base": 1}, "base"),
    (jensen_shannon_distance, {"base": 0.5}, "base"),
    (jensen_shannon_distance, {"base": -2}, "base"),
    (jensen_shannon_distance, {"squared": "yes"}, "squared"),
    (entropy_calibration_error, {"base": 0}, "base"),
    (entropy_calibration_error, {"absolute": "no"}, "absolute"),
    (kl_divergence, {"eps": 0}, "eps"),
    (kl_divergence, {"eps": 1.0}, "eps"),
    (histogram_log_loss, {"eps": -1e-3}, "eps"),
    (calibration_loss, {"n_bins": 0}, "n_bins"),
    (epistemic_loss, {"debiased": "yes"}, "debiased"),
    (disagreement_calibration_loss, {"n_bins": 0}, "n_bins"),
    (soft_cross_entropy, {"eps": 0}, "eps"),
    (soft_cross_entropy, {"eps": 0.5}, "eps"),
    (soft_cross_entropy, {"offset": -1e-9}, "offset"),
    (wasserstein_distance, {"values": "positions"}, "values"),
    (wasserstein_distance, {"order": 3}, "order"),
    (ranked_probability_score_loss, {"normalize": "yes"}, "normalize"),
    (ranked_probability_score_loss, {"annotations": 1.5}, "annotations"),
]


@pytest.mark.parametrize(
    "metric, kwargs, name",
    BAD_KEYWORDS,
    ids=[f"{f.__name__}-{k}" for f, k, _ in BAD_KEYWORDS],
)
def test_invalid_keyword_raises_invalid_parameter_error(metric, kwargs, name):
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        metric(Y, P, **kwargs)
    assert issubclass(InvalidParameterError, ValueError)


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda f: f.__name__)
def test_keywords_are_keyword_only(metric):
    with pytest.raises(TypeError):
        metric(Y, P, Y)
    with pytest.raises(TypeError):
        metric(Y, P, None, ABC)


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda f: f.__name__)
def test_every_metric_takes_labels_and_counts(metric):
    # Uniform signatures: labels= everywhere (developer guide §class-names), counts=
    # too. With labels naming the columns of both, the value is unchanged.
    expected = metric(Y, P)
    # words carry no scale order: the ordinal metrics are told it
    kw = {"order": ABC} if requirement(metric) == "ordered" else {}
    assert metric(Y, P, labels=ABC, **kw) == pytest.approx(expected, rel=1e-12)
    assert metric(np.array([0, 1, 2]), P, counts=Y, labels=ABC, **kw) == pytest.approx(
        expected, rel=1e-12
    )


# --------------------------------------------------------------------------- #
# The per-item estimates (one argument): the same messages
# --------------------------------------------------------------------------- #
ESTIMATE_CASES = [
    (
        "nan_probability",
        predicted_disagreement,
        _with(P, 1, 2, np.nan),
        r"y_prob contains NaN or infinity \(row 1, column 2: nan\)",
    ),
    (
        "single_probability_column",
        predicted_disagreement,
        np.ones((3, 1)),
        r"y_prob has a single column",
    ),
    (
        "probability_row_beyond_tolerance",
        predicted_disagreement,
        _with(P, 0, 0, 0.7),
        r"y_prob rows must sum to 1 .* row 0 sums to 1\.1",
    ),
    (
        "ensemble_member_names_its_row",
        predicted_disagreement,
        np.stack([P, _with(P, 2, 1, -0.3)]),
        r"y_prob\[1\] must be non-negative probabilities; row 2, column 1: -0\.3",
    ),
    (
        "ragged_probabilities",
        predicted_disagreement,
        [[0.5, 0.5], [1.0]],
        r"y_prob is ragged: row 1 has 1 entry while row 0 has 2",
    ),
    (
        "fractional_count",
        disagreement_probability,
        _with(Y, 1, 0, 0.5),
        r"counts must hold non-negative integer label counts .* row 1 holds the "
        r"fractional value 0\.5 \(column 0\)",
    ),
    (
        "negative_count",
        disagreement_probability,
        _with(Y, 2, 2, -1),
        r"counts must be non-negative; row 2, column 2: -1",
    ),
    (
        "ragged_counts",
        disagreement_probability,
        [[1, 1], [2]],
        r"counts is ragged: row 1 has 1 entry while row 0 has 2",
    ),
]


@pytest.mark.parametrize(
    "func, arg, match",
    [case[1:] for case in ESTIMATE_CASES],
    ids=[case[0] for case in ESTIMATE_CASES],
)
def test_bad_input_to_the_per_item_estimates(func, arg, match):
    with pytest.raises(ValueError, match=match):
        func(arg)


@pytest.mark.parametrize("metric", PROBA_OK, ids=lambda f: f.__name__)
def test_human_probability_rows_accepted_within_tolerance(metric):
    # Rows of human probabilities are valid y_true for these metrics, also
    # when rounded (within row_sum_tolerance): the renormalised rows count.
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    rounded = _with(p_hat, 0, 0, p_hat[0, 0] - 1e-3)  # row 0 sums to 0.999
    renormalised = rounded / rounded.sum(axis=1, keepdims=True)
    assert np.isfinite(metric(p_hat, P))
    assert metric(rounded, P) == pytest.approx(metric(renormalised, P), rel=1e-12)


# --------------------------------------------------------------------------- #
# Parameters whose errors used to name something else
# --------------------------------------------------------------------------- #
WORDS = pd.DataFrame(Y, columns=["agree", "disagree", "neutral"])
WORD_P = pd.DataFrame(P, columns=WORDS.columns)
ANN = pd.DataFrame(
    {"item": [1, 1, 2], "annotator": ["A", "B", "A"], "label": [0, 1, 1]}
)
PARAMETER_CASES = [
    (
        # was "The classes ... are not numbers ...; pass order=": the option
        # that asked for numbers, values="classes", went unnamed
        "values_classes_on_word_classes",
        lambda: wasserstein_distance(WORDS, WORD_P, values="classes"),
        r'values="classes" needs numeric class names: it reads each class name as '
        r"its position .*\['agree', 'disagree', 'neutral'\] are not numbers",
    ),
    (
        "values_classes_on_word_classes_with_order",
        lambda: wasserstein_distance(
            WORDS, WORD_P, values="classes", order=["disagree", "neutral", "agree"]
        ),
        r'values="classes" needs numeric class names',
    ),
    (
        # was "groups lists an annotator more than once": which one?
        "repeated_annotator_in_groups",
        lambda: annotator_report(
            ANN, ANN, groups=pd.Series(["m", "f", "x"], index=["A", "B", "A"])
        ),
        r"groups lists the annotator 'A' 2 times \(rows \[0, 2\]",
    ),
    (
        "repeated_annotator_in_group_table",
        lambda: annotator_report(
            ANN,
            ANN,
            groups=pd.DataFrame({"Gender": ["m", "f", "f"]}, index=["A", "B", "A"]),
            by="Gender",
        ),
        r"groups lists the annotator 'A' 2 times",
    ),
]


@pytest.mark.parametrize(
    "call, match",
    [case[1:] for case in PARAMETER_CASES],
    ids=[case[0] for case in PARAMETER_CASES],
)
def test_parameter_errors_name_the_parameter_and_value(call, match):
    with pytest.raises(ValueError, match=match):
        call()
