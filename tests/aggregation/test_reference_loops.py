"""The vectorised aggregators equal plain loops over annotations.

The references (:mod:`tests.aggregation._reference`) are written from the
papers with dictionaries and loops; on constructed crowds (three classes, a
class nobody chose, unseen annotators and items) every posterior, fitted
parameter and annotator prediction must agree to 1e-10 or better.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from sklearn_hcal.aggregation import (
    GLAD,
    MACE,
    DawidSkene,
    MajorityVote,
    OneCoinDawidSkene,
    Wawa,
)
from sklearn_hcal.aggregation._glad._objective import e_step as glad_e_step
from sklearn_hcal.aggregation._glad._objective import negative_q
from sklearn_hcal.aggregation._input import read_annotations
from sklearn_hcal.aggregation._mace import _steps as mace_steps

from . import _reference as ref
from ._tables import crowd_table

CLASSES = ["a", "b", "c", "d"]  # nobody chooses "d"


@pytest.fixture(scope="module")
def crowd():
    X, _ = crowd_table(30, 7, classes=("a", "b", "c"), per_item=4, seed=1)
    return X


def _frame(posterior: dict, index, columns) -> np.ndarray:
    return np.array([[posterior[i][k] for k in columns] for i in index])


@pytest.mark.parametrize("alpha", [0.0, 0.7])
def test_majority_vote_equals_the_loop(crowd, alpha):
    mv = MajorityVote(alpha=alpha, classes=CLASSES).fit(crowd)
    rows = ref.rows_of(crowd)
    expected = ref.vote_shares(rows, CLASSES, alpha)
    P = mv.posteriors_
    np.testing.assert_allclose(P.to_numpy(), _frame(expected, P.index, CLASSES))
    skills = ref.majority_skills(rows, CLASSES)
    np.testing.assert_allclose(
        mv.skills_.to_numpy(), [skills[a] for a in mv.annotators_]
    )


def test_wawa_equals_the_loop(crowd):
    wawa = Wawa().fit(crowd)
    rows = ref.rows_of(crowd)
    classes = wawa.classes_.tolist()
    skills = ref.majority_skills(rows, classes)
    expected = ref.wawa_posterior(rows, classes, skills)
    P = wawa.posteriors_
    np.testing.assert_allclose(P.to_numpy(), _frame(expected, P.index, classes))


@pytest.mark.parametrize("one_coin", [False, True])
@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_dawid_skene_equals_the_loop(crowd, one_coin, alpha):
    Model = OneCoinDawidSkene if one_coin else DawidSkene
    model = Model(max_iter=7, tol=None, alpha=alpha, classes=CLASSES).fit(crowd)
    rows = ref.rows_of(crowd)
    posterior, prior, confusion, skills, curve = ref.dawid_skene(
        rows, CLASSES, 7, alpha=alpha, one_coin=one_coin
    )
    P = model.posteriors_
    np.testing.assert_allclose(
        P.to_numpy(), _frame(posterior, P.index, CLASSES), atol=1e-12
    )
    np.testing.assert_allclose(model.class_prior_, [prior[k] for k in CLASSES])
    expected = np.array(
        [
            [[confusion[a][(z, k)] for k in CLASSES] for z in CLASSES]
            for a in model.annotators_
        ]
    )
    np.testing.assert_allclose(model.confusion_matrices_, expected, atol=1e-12)
    np.testing.assert_allclose(model.log_likelihood_curve_, curve, rtol=1e-12)
    if one_coin:
        np.testing.assert_allclose(
            model.skills_, [skills[a] for a in model.annotators_]
        )
    # transform: one more E-step with the final parameters
    again, _ = ref.ds_e_step(rows, CLASSES, prior, confusion)
    np.testing.assert_allclose(
        model.transform(crowd).to_numpy(), _frame(again, P.index, CLASSES), atol=1e-12
    )


def test_dawid_skene_annotator_proba_is_posterior_times_confusion(crowd):
    ds = DawidSkene(alpha=0.3, classes=CLASSES).fit(crowd)
    pairs = pd.DataFrame(
        {
            "item": ["item003", "item003", "unseen", "item010", "unseen"],
            "annotator": ["w01", "w05", "w02", "new", "new"],
        }
    )
    with pytest.warns(UserWarning, match="not seen in fit"):
        P = ds.predict_annotator_proba(pairs)
    post = ds.posteriors_
    pool = ds.confusion_matrices_.mean(axis=0)
    rows = []
    for item, annotator in zip(pairs["item"], pairs["annotator"]):
        q = post.loc[item].to_numpy() if item in post.index else ds.class_prior_
        conf = (
            ds.confusion_matrices_[list(ds.annotators_).index(annotator)]
            if annotator in set(ds.annotators_)
            else pool
        )
        rows.append([sum(q[z] * conf[z, k] for z in range(4)) for k in range(4)])
    np.testing.assert_allclose(P, rows, atol=1e-14)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_glad_e_step_objective_and_gradient_equal_the_loops(crowd):
    data = read_annotations(
        crowd, item="item", annotator="annotator", label="label", owner="test"
    )
    rng = np.random.default_rng(0)
    ability = rng.normal(1, 1, data.n_annotators)
    log_beta = rng.normal(0.5, 0.5, data.n_items)
    rows = ref.rows_of(crowd)
    classes = data.classes.tolist()
    a = dict(zip(data.annotators, ability))
    b = dict(zip(data.items, log_beta))
    posterior, ll = glad_e_step(data, ability, log_beta)
    expected, expected_ll = ref.glad_e_step(rows, classes, a, b)
    np.testing.assert_allclose(posterior, _frame(expected, data.items, classes))
    assert ll == pytest.approx(expected_ll, rel=1e-12)
    correct = posterior[data.item, data.label]
    value, grad = negative_q(
        np.concatenate([ability, log_beta]), data, correct, 1.0, 1.0
    )
    q, g_a, g_b = ref.glad_q(rows, classes, expected, a, b)
    assert -value == pytest.approx(q, rel=1e-12)
    np.testing.assert_allclose(
        -grad,
        [g_a[k] for k in data.annotators] + [g_b[k] for k in data.items],
        rtol=1e-9,
    )


def test_glad_fit_equals_the_loop(crowd):
    glad = GLAD(max_iter=4, tol=None).fit(crowd)
    posterior, ability, log_beta = ref.glad(
        ref.rows_of(crowd), glad.classes_.tolist(), 4
    )
    P = glad.posteriors_
    np.testing.assert_allclose(
        P.to_numpy(), _frame(posterior, P.index, glad.classes_), atol=1e-8
    )
    np.testing.assert_allclose(
        glad.abilities_, [ability[k] for k in glad.annotators_], atol=1e-7
    )
    np.testing.assert_allclose(
        np.log(glad.inverse_difficulties_),
        [log_beta[k] for k in glad.items_],
        atol=1e-7,
    )
    # annotator predictions: a one-coin annotator of accuracy σ(α β)
    pairs = pd.DataFrame({"item": ["item004"], "annotator": ["w03"]})
    right = expit(ability["w03"] * np.exp(log_beta["item004"]))
    q = glad.posteriors_.loc["item004"].to_numpy()
    expected = q * right + (1 - q) * (1 - right) / 2
    np.testing.assert_allclose(
        glad.predict_annotator_proba(pairs)[0], expected, atol=1e-7
    )


@pytest.mark.parametrize("method", ["em", "vb"])
def test_mace_steps_equal_the_loops(crowd, method):
    data = read_annotations(
        crowd, item="item", annotator="annotator", label="label", owner="test"
    )
    rng = np.random.default_rng(3)
    know = rng.uniform(0.2, 0.8, data.n_annotators)
    spam = 1 - know if method == "em" else rng.uniform(0.1, 0.5, data.n_annotators)
    strategy = rng.dirichlet(np.ones(data.n_classes), data.n_annotators)
    rows = ref.rows_of(crowd)
    classes = data.classes.tolist()
    names = list(data.annotators)
    k_d, s_d = dict(zip(names, know)), dict(zip(names, spam))
    st_d = {w: dict(zip(classes, strategy[j])) for j, w in enumerate(names)}
    posterior, ll = mace_steps.e_step(data, know, spam, strategy)
    expected, expected_ll = ref.mace_e_step(rows, classes, k_d, s_d, st_d)
    np.testing.assert_allclose(posterior, _frame(expected, data.items, classes))
    assert ll == pytest.approx(expected_ll, rel=1e-12)
    knew, spammed, counts = mace_steps.expected_counts(
        data, posterior, know, spam, strategy
    )
    r_knew, r_spammed, r_counts = ref.mace_counts(
        rows, classes, expected, k_d, s_d, st_d
    )
    np.testing.assert_allclose(knew, [r_knew[w] for w in names])
    np.testing.assert_allclose(spammed, [r_spammed[w] for w in names])
    np.testing.assert_allclose(
        counts, [[r_counts[w][k] for k in classes] for w in names]
    )
    if method == "em":
        new = mace_steps.m_step(knew, spammed, counts, 0.01 / 3)
    else:
        new = mace_steps.variational_m_step(knew, spammed, counts, (0.5, 0.5), 10.0)
    r_new = ref.mace_m_step(
        classes, r_knew, r_spammed, r_counts, method, 0.01 / 3, 0.5, 0.5, 10.0
    )
    np.testing.assert_allclose(new[0], [r_new[0][w] for w in names])
    np.testing.assert_allclose(new[1], [r_new[1][w] for w in names])
    np.testing.assert_allclose(
        new[2], [[r_new[2][w][k] for k in classes] for w in names]
    )


def test_mace_annotator_proba_is_knowing_or_spamming(crowd):
    mace = MACE(n_restarts=2, random_state=0).fit(crowd)
    pairs = pd.DataFrame({"item": ["item001", "unseen"], "annotator": ["w02", "new"]})
    with pytest.warns(UserWarning, match="not seen in fit"):
        P = mace.predict_annotator_proba(pairs)
    theta = 1 - mace.spamming_["w02"]
    q = mace.posteriors_.loc["item001"].to_numpy()
    xi = mace.strategies_.loc["w02"].to_numpy()
    np.testing.assert_allclose(P[0], theta * q + (1 - theta) * xi)
    theta = 1 - mace.spamming_.mean()
    np.testing.assert_allclose(
        P[1], theta / 3 + (1 - theta) * mace.strategies_.mean().to_numpy()
    )


def test_transform_of_a_new_table_uses_the_fitted_annotators_and_the_pool(crowd):
    new = pd.DataFrame(
        {
            "item": ["new1", "new1", "new1", "item002", "item002"],
            "annotator": ["w01", "w04", "stranger", "w02", "stranger"],
            "label": ["a", "b", "a", "c", "c"],
        }
    )
    rows = ref.rows_of(new)
    # Dawid-Skene: the E-step with the fitted matrices, the stranger = mean
    ds = DawidSkene(alpha=0.5, classes=CLASSES).fit(crowd)
    matrices = dict(zip(ds.annotators_, ds.confusion_matrices_))
    matrices["stranger"] = ds.confusion_matrices_.mean(axis=0)
    confusion = {
        a: {
            (z, k): m[i, j]
            for i, z in enumerate(CLASSES)
            for j, k in enumerate(CLASSES)
        }
        for a, m in matrices.items()
    }
    prior = dict(zip(CLASSES, ds.class_prior_))
    expected, _ = ref.ds_e_step(rows, CLASSES, prior, confusion)
    with pytest.warns(UserWarning, match="not seen in fit"):
        got = ds.transform(new)
    np.testing.assert_allclose(got.to_numpy(), _frame(expected, got.index, CLASSES))
    # GLAD: a known item keeps its difficulty, a new one gets the mean
    glad = GLAD(max_iter=5, tol=None).fit(crowd)
    ability = dict(zip(glad.annotators_, glad.abilities_))
    ability["stranger"] = glad.abilities_.mean()
    log_beta = np.log(glad.inverse_difficulties_)
    beta = {"new1": log_beta.mean(), "item002": log_beta["item002"]}
    expected, _ = ref.glad_e_step(rows, glad.classes_.tolist(), ability, beta)
    with pytest.warns(UserWarning, match="'stranger'"):
        got = glad.transform(new)
    np.testing.assert_allclose(
        got.to_numpy(), _frame(expected, got.index, glad.classes_)
    )
