"""Rows of pandas inputs indexed by items are matched by item (developer guide §rows).

The library's own tables are indexed by item in different orders (a LeWiDi
file's ``counts`` in file order, an aggregator's posteriors sorted), so the
plainest call pairs them; read by position it compared each item with
another item's prediction.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.aggregation import MajorityVote
from sklearn_hcal.datasets import load_lewidi
from sklearn_hcal.metrics import (
    MetricState,
    aggregated_coverage_score,
    aurc_loss,
    disagreement_squared_loss,
    human_calibration_report,
    kl_divergence,
    majority_accuracy_score,
    manhattan_distance,
)
from tests.conftest import require_data


@pytest.fixture(scope="module")
def paraphrase():
    return load_lewidi(require_data("lewidi", "2025", "Paraphrase_dev.json"))


def test_majority_vote_posteriors_against_the_files_counts(paraphrase):
    # MajorityVote(alpha=0)'s posterior is each item's share of the votes,
    # so its distance to the same file's counts is 0 (a closed form). The
    # posteriors are sorted by item, the counts in file order: by position
    # the distance was 1.52.
    posteriors = MajorityVote().fit_transform(paraphrase.annotations)
    assert not posteriors.index.equals(paraphrase.counts.index)
    assert manhattan_distance(paraphrase.counts, posteriors) == pytest.approx(0.0)
    assert kl_divergence(paraphrase.counts, posteriors) == pytest.approx(0.0)


def _tables(seed=0, n=40, k=3):
    rng = np.random.default_rng(seed)
    items = [f"item{i}" for i in rng.permutation(n)]
    classes = ["a", "b", "c"][:k]
    Y = pd.DataFrame(rng.integers(0, 5, (n, k)) + 1, index=items, columns=classes)
    P = pd.DataFrame(rng.dirichlet(np.ones(k), n), index=items, columns=classes)
    return Y, P


@pytest.mark.parametrize(
    "metric", [kl_divergence, manhattan_distance, majority_accuracy_score]
)
def test_a_reordered_prediction_scores_as_the_aligned_one(metric):
    Y, P = _tables()
    shuffled = P.sample(frac=1, random_state=1)
    assert metric(Y, shuffled) == metric(Y, P)
    # and the columns still travel by name at the same time
    assert metric(Y, shuffled[["c", "a", "b"]]) == pytest.approx(metric(Y, P))


def test_the_report_matches_every_prediction_by_item():
    Y, P = _tables()
    Q = pd.DataFrame(np.roll(P.to_numpy(), 1, axis=1), index=P.index, columns=P.columns)
    aligned = human_calibration_report(Y, {"p": P, "q": Q})
    reordered = human_calibration_report(
        Y, {"p": P.iloc[::-1], "q": Q.sample(frac=1, random_state=3)}
    )
    pd.testing.assert_frame_equal(aligned, reordered)


def test_counts_given_apart_are_the_reference():
    Y, P = _tables()
    labels = pd.Series(Y.columns[np.argmax(Y.to_numpy(), axis=1)], index=Y.index)
    score = majority_accuracy_score(labels, P.iloc[::-1], counts=Y)
    assert score == majority_accuracy_score(Y, P)


def test_one_d_labels_indexed_by_item():
    Y, P = _tables()
    labels = pd.Series(Y.columns[np.argmax(Y.to_numpy(), axis=1)], index=Y.index)
    assert manhattan_distance(labels, P.iloc[::-1]) == manhattan_distance(labels, P)


def test_a_default_range_index_is_positional():
    Y, P = _tables()
    by_position = manhattan_distance(Y.to_numpy(), P.to_numpy())
    assert manhattan_distance(Y, P.reset_index(drop=True)) == by_position
    assert manhattan_distance(Y.reset_index(drop=True), P) == by_position
    # an array on either side is positional too (scikit-learn's rule)
    assert manhattan_distance(Y, P.iloc[::-1].to_numpy()) != by_position


def test_different_items_are_named():
    Y, P = _tables()
    P = P.rename(index={Y.index[5]: "stranger"})
    with pytest.raises(ValueError, match=rf"item '{Y.index[5]}' \(row 5 of y_true\)"):
        kl_divergence(Y, P)


def test_an_extra_item_is_named():
    Y, P = _tables()
    with pytest.raises(ValueError, match=rf"y_prob has item '{Y.index[0]}'"):
        kl_divergence(Y.iloc[1:], P)


def test_a_repeated_item_cannot_be_matched():
    Y, P = _tables()
    P = P.rename(index={P.index[1]: P.index[0]}).iloc[::-1]
    with pytest.raises(ValueError, match=rf"y_prob repeats item '{Y.index[0]}'"):
        kl_divergence(Y, P)


def test_the_report_names_the_prediction():
    Y, P = _tables()
    bad = P.rename(index={Y.index[2]: "stranger"})
    with pytest.raises(ValueError, match=r"predictions\['q'\]"):
        human_calibration_report(Y, {"p": P, "q": bad})


def test_streaming_updates_match_by_item():
    Y, P = _tables()
    state = MetricState("kl")
    state.update(Y.iloc[:20], P.iloc[:20].iloc[::-1])
    state.update(Y.iloc[20:], P.iloc[20:].iloc[::-1])
    assert state.compute()["kl"] == pytest.approx(kl_divergence(Y, P), abs=1e-12)


def test_sets_scores_and_disagreement_match_by_item():
    Y, P = _tables()
    sets = P > 0.3
    reverse = slice(None, None, -1)
    assert aggregated_coverage_score(Y, sets.iloc[reverse]) == (
        aggregated_coverage_score(Y, sets)
    )
    score = pd.Series(np.linspace(0, 1, len(Y)), index=Y.index)
    assert aurc_loss(Y, P, y_score=score.iloc[reverse]) == aurc_loss(
        Y, P, y_score=score
    )
    phi = pd.Series(1 - (P.to_numpy() ** 2).sum(axis=1), index=Y.index)
    assert disagreement_squared_loss(Y, phi.iloc[reverse]) == (
        disagreement_squared_loss(Y, phi)
    )
    with_phi = human_calibration_report(
        Y, {"p": P}, disagreement={"p": phi.iloc[reverse]}
    )
    pd.testing.assert_frame_equal(
        with_phi, human_calibration_report(Y, {"p": P}, disagreement={"p": phi})
    )


def test_calibration_report_matches_disagreement_by_item():
    # CalibrationReport validates once and hands its inputs down; the
    # disagreement given with them is matched to the labels' items there.
    from sklearn_hcal.report import CalibrationReport

    Y, P = _tables()
    phi = pd.Series(1 - (P.to_numpy() ** 2).sum(axis=1), index=Y.index)
    kwargs = dict(metrics=["disagreement_sq_loss"])
    reordered = CalibrationReport.from_predictions(
        Y, {"p": P}, disagreement={"p": phi.iloc[::-1]}, **kwargs
    )
    aligned = CalibrationReport.from_predictions(
        Y, {"p": P}, disagreement={"p": phi}, **kwargs
    )
    pd.testing.assert_frame_equal(reordered.table, aligned.table)
