"""EM as documented: the likelihood never decreases; max_iter and tol behave.

Dawid–Skene and its one-coin form are exact EM (the log-likelihood of the
labels cannot decrease); GLAD's M-step is a partial (conjugate-gradient)
maximisation, a generalised EM whose log-posterior cannot decrease; MACE's
EM maximises the likelihood plus its smoothing prior.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_hcal.aggregation import GLAD, MACE, DawidSkene, OneCoinDawidSkene
from sklearn_hcal.datasets import load_lewidi
from tests.conftest import require_data

from ._tables import crowd_table

EM_MODELS = [DawidSkene, OneCoinDawidSkene, GLAD]


@pytest.fixture(scope="module")
def crowd():
    return crowd_table(60, 9, per_item=4, seed=2)[0]


@pytest.fixture(scope="module")
def multipico():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = require_data("lewidi", "2025", "MP_test.json")
        return load_lewidi(path).annotations


@pytest.mark.parametrize(
    "model",
    [
        DawidSkene(max_iter=40, tol=None),
        DawidSkene(max_iter=40, tol=None, alpha=1.0),
        OneCoinDawidSkene(max_iter=40, tol=None),
        OneCoinDawidSkene(max_iter=40, tol=None, alpha=1.0),
        GLAD(max_iter=40, tol=None),
    ],
    ids=repr,
)
def test_objective_never_decreases(crowd, model):
    model.fit(crowd)
    steps = np.diff(model.log_likelihood_curve_)
    # crowd-kit's floor at 1e-10 of the counts perturbs EM by about that much
    assert steps.min() >= -1e-9, steps.min()
    assert model.log_likelihood_curve_[-1] > model.log_likelihood_curve_[0]


@pytest.mark.parametrize("Model", EM_MODELS)
def test_objective_never_decreases_on_multipico(multipico, Model):
    model = Model(max_iter=25, tol=None).fit(multipico)
    assert np.diff(model.log_likelihood_curve_).min() >= -1e-9


def test_mace_em_likelihood_increases(crowd):
    # with the default smoothing (0.01 / K) the prior's share is tiny: the
    # likelihood itself increases except by far less than a rounding of it
    mace = MACE(method="em", n_restarts=1, max_iter=60, random_state=0).fit(crowd)
    steps = np.diff(mace.log_likelihood_curve_)
    assert steps.min() >= -1e-6
    assert mace.n_iter_ == 60 and not mace.converged_


@pytest.mark.parametrize("Model", EM_MODELS)
def test_tol_none_runs_exactly_max_iter(crowd, Model):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # tol=None is silent
        model = Model(max_iter=7, tol=None).fit(crowd)
    assert model.n_iter_ == 7
    assert len(model.log_likelihood_curve_) == 7
    assert not model.converged_


@pytest.mark.parametrize("Model", EM_MODELS)
def test_tol_stops_when_the_gain_is_small(crowd, Model):
    model = Model(max_iter=500, tol=1e-6).fit(crowd)
    curve = model.log_likelihood_curve_
    assert model.converged_ and model.n_iter_ == len(curve) < 500
    assert curve[-1] - curve[-2] < 1e-6  # it stopped on the rule ...
    assert (np.diff(curve)[:-1] >= 1e-6).all()  # ... and not before
    # a larger tol stops no later
    assert Model(max_iter=500, tol=1e-3).fit(crowd).n_iter_ <= model.n_iter_


@pytest.mark.parametrize("Model", EM_MODELS)
def test_max_iter_before_convergence_warns(crowd, Model):
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=2"):
        model = Model(max_iter=2, tol=1e-12).fit(crowd)
    assert model.n_iter_ == 2 and not model.converged_


def test_mace_tol_stops_a_restart(crowd):
    mace = MACE(n_restarts=2, max_iter=500, tol=1e-8, random_state=0).fit(crowd)
    assert mace.converged_ and mace.n_iter_ < 500
    with pytest.warns(ConvergenceWarning):
        MACE(n_restarts=1, max_iter=2, tol=1e-12, random_state=0).fit(crowd)


def test_more_iterations_continue_the_same_path(crowd):
    # iteration t of a long run is the run of length t
    long = DawidSkene(max_iter=12, tol=None).fit(crowd)
    short = DawidSkene(max_iter=5, tol=None).fit(crowd)
    np.testing.assert_array_equal(
        long.log_likelihood_curve_[:5], short.log_likelihood_curve_
    )


def test_transform_of_the_training_table_is_one_more_e_step(crowd):
    # fit_transform: the last E-step's posteriors (crowd-kit's probas_);
    # transform: the E-step under the final parameters, which the next
    # iteration of a longer run computes
    a = DawidSkene(max_iter=6, tol=None).fit(crowd)
    b = DawidSkene(max_iter=7, tol=None).fit(crowd)
    np.testing.assert_allclose(a.transform(crowd), b.posteriors_, atol=1e-12)


@pytest.mark.parametrize("Model", [DawidSkene, OneCoinDawidSkene])
def test_tol_bounds_the_likelihood_gain_not_the_posteriors(multipico, Model):
    # the docstring once said fit_transform and transform "agree to about
    # tol": tol stops on the log-likelihood's gain, and the posteriors of
    # the last step may move much further; what holds is stated instead
    tol = 1e-5
    model = Model(tol=tol)
    fitted = model.fit_transform(multipico).to_numpy()
    again = model.transform(multipico).to_numpy()
    curve = model.log_likelihood_curve_
    assert model.converged_ and 0 <= curve[-1] - curve[-2] < tol
    assert np.abs(fitted - again).max() > 100 * tol
    # transform is the posteriors of one more EM iteration, exactly
    longer = Model(max_iter=model.n_iter_ + 1, tol=None).fit_transform(multipico)
    np.testing.assert_allclose(again, longer.to_numpy(), rtol=0, atol=1e-12)
    # and the docstring says so
    doc = " ".join(DawidSkene.__doc__.split())
    assert "agree to about" not in doc
    assert "one more EM iteration" in doc and "not the posteriors" in doc
