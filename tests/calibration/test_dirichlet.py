"""Dirichlet-multinomial likelihood: against scipy, gradients, slot layout."""

import numpy as np
import pytest
from scipy import stats

torch = pytest.importorskip("torch")

from sklearn_hcal.calibration._dirichlet import (  # noqa: E402
    alpha_calibration_objective,
    dirichlet_multinomial_log_likelihood,
    dirichlet_multinomial_nll_log_alpha0,
    dirichlet_multinomial_nll_slots,
    histogram_slots,
)


def _random_problem(seed, n=40, k=4, max_n=12):
    rng = np.random.RandomState(seed)
    alpha = rng.gamma(1.0, 2.0, size=(n, k)) + 1e-3
    n_i = rng.randint(1, max_n, size=n)
    Y = np.stack([rng.multinomial(m, rng.dirichlet(np.ones(k))) for m in n_i])
    return alpha, Y


@pytest.mark.parametrize("seed", [0, 1])
def test_log_likelihood_matches_scipy(seed):
    alpha, Y = _random_problem(seed)
    ours = dirichlet_multinomial_log_likelihood(
        torch.as_tensor(alpha), torch.as_tensor(Y, dtype=torch.float64)
    ).numpy()
    ref = np.array(
        [stats.dirichlet_multinomial.logpmf(y, a, y.sum()) for a, y in zip(alpha, Y)]
    )
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-10)


def test_coefficient_only_shifts_by_multinomial_coefficient():
    alpha, Y = _random_problem(2)
    a, y = torch.as_tensor(alpha), torch.as_tensor(Y, dtype=torch.float64)
    full = dirichlet_multinomial_log_likelihood(a, y).numpy()
    bare = dirichlet_multinomial_log_likelihood(a, y, coefficient=False).numpy()
    n = Y.sum(1)
    from scipy.special import gammaln

    coef = gammaln(n + 1) - gammaln(Y + 1).sum(1)
    np.testing.assert_allclose(full - bare, coef, rtol=1e-12)


def test_single_label_likelihood_does_not_depend_on_alpha0():
    f = torch.tensor([[0.2, 0.5, 0.3]], dtype=torch.float64).expand(5, 3)
    y = torch.tensor([[0.0, 1.0, 0.0]], dtype=torch.float64).expand(5, 3)
    la = torch.linspace(-5, 5, 5, dtype=torch.float64)
    nll = dirichlet_multinomial_nll_log_alpha0(la, f, y).numpy()
    np.testing.assert_allclose(nll, -np.log(0.5), rtol=1e-12)


def test_gradcheck_float64():
    alpha, Y = _random_problem(3, n=8, k=3, max_n=6)
    f = alpha / alpha.sum(1, keepdims=True)
    y = torch.as_tensor(Y, dtype=torch.float64)
    la = torch.randn(8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    la.requires_grad_(True)
    a = torch.as_tensor(alpha, dtype=torch.float64).requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda t: dirichlet_multinomial_log_likelihood(t, y), (a,)
    )
    ft = torch.as_tensor(f)
    assert torch.autograd.gradcheck(
        lambda t: alpha_calibration_objective(t, ft, y, alpha_reg=0.1), (la,)
    )
    slots = [torch.as_tensor(s) for s in histogram_slots(Y, f)]
    assert torch.autograd.gradcheck(
        lambda t: dirichlet_multinomial_nll_slots(t, *slots), (la,)
    )


def test_gradient_matches_eq51_digamma_form():
    # d NLL / d log α0 in closed form (Mimori et al., eq. 51 without the
    # regulariser), written with scipy's digamma.
    from scipy.special import digamma

    alpha, Y = _random_problem(4, n=10, k=3)
    f = alpha / alpha.sum(1, keepdims=True)
    a0 = np.exp(np.linspace(-2, 3, 10))
    la = torch.as_tensor(np.log(a0)).requires_grad_(True)
    nll = dirichlet_multinomial_nll_log_alpha0(
        la, torch.as_tensor(f), torch.as_tensor(Y, dtype=torch.float64)
    )
    nll.sum().backward()
    n = Y.sum(1)
    expected = -a0 * (
        (f * (digamma(a0[:, None] * f + Y) - digamma(a0[:, None] * f))).sum(1)
        - (digamma(a0 + n) - digamma(a0))
    )
    np.testing.assert_allclose(la.grad.numpy(), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 5])
def test_slots_equal_lgamma_form(seed):
    alpha, Y = _random_problem(seed, n=30, k=5, max_n=9)
    f = alpha / alpha.sum(1, keepdims=True)
    la = torch.as_tensor(np.random.RandomState(seed).randn(30) * 2)
    a = dirichlet_multinomial_nll_slots(
        la, *map(torch.as_tensor, histogram_slots(Y, f))
    )
    b = dirichlet_multinomial_nll_log_alpha0(
        la, torch.as_tensor(f), torch.as_tensor(Y, dtype=torch.float64)
    )
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-10)


def test_objective_normalisation_is_reference_weighting():
    alpha, Y = _random_problem(6, n=20, k=3)
    f = alpha / alpha.sum(1, keepdims=True)
    la = torch.as_tensor(np.random.RandomState(0).randn(20))
    y = torch.as_tensor(Y, dtype=torch.float64)
    got = float(alpha_calibration_objective(la, torch.as_tensor(f), y, alpha_reg=0.3))
    nll = dirichlet_multinomial_nll_log_alpha0(la, torch.as_tensor(f), y).numpy()
    n = Y.sum(1)
    expected = np.mean(n / n.mean() * nll) + 0.3 * np.mean(la.numpy() ** 2)
    assert got == pytest.approx(expected, rel=1e-12)


def test_tiny_probabilities_stay_finite():
    f = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    y = torch.tensor([[1.0, 1.0]], dtype=torch.float64)
    nll = dirichlet_multinomial_nll_log_alpha0(
        torch.zeros(1, dtype=torch.float64), f, y
    )
    assert torch.isfinite(nll).all() and float(nll) > 30
