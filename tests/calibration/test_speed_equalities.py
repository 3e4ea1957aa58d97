"""The calibrators' speed-ups give the values of the code they replaced.

Timing is in ``benchmarks/bench_goals.py``; here only equalities: the
blocked row moments of temperature scaling against the full-array passes
they replaced and a per-row loop, the two Dirichlet-multinomial likelihood
forms against each other on both sides of the switch, and the caller's
thread limits unchanged after a fit.
"""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from sklearn_hcal.calibration import MatrixScaler, TemperatureScaler, VectorScaler
from sklearn_hcal.calibration import _temperature as temperature_module
from sklearn_hcal.calibration._alpha._solvers import use_histogram_slots
from sklearn_hcal.calibration._temperature import (
    _inverse_temperature_derivatives,
    _moment_buffer,
    _row_moments,
)


def _full_array_moments(beta, Zc, order):
    """The previous ``_row_moments``: whole-array passes, BLAS row sums."""
    buf = np.empty_like(Zc)
    ones = np.ones(Zc.shape[1])
    if beta == 0.0:
        buf.fill(1.0)
    else:
        np.multiply(Zc, beta, out=buf)
        np.exp(buf, out=buf)
    S = buf @ ones
    moments = []
    for _ in range(order):
        np.multiply(buf, Zc, out=buf)
        moments.append((buf @ ones) / S)
    return (S, *moments)


def _loop_cumulants(beta, Zc):
    """log S, mean, variance and third cumulant of z under softmax, per row."""
    out = []
    for z in Zc:
        e = np.exp(beta * z)
        p = e / e.sum()
        m = p @ z
        out.append((np.log(e.sum()), m, p @ (z - m) ** 2, p @ (z - m) ** 3))
    return np.array(out).T


def _scores(rng, n, K, zeros):
    Z = 3.0 * rng.standard_normal((n, K))
    if zeros:
        Z[rng.random((n, K)) < 0.3] = 0.0
        Z[: n // 10] = 0.0  # constant rows
    return Z - Z.max(axis=1, keepdims=True)


@pytest.mark.parametrize("zeros", [False, True])
@pytest.mark.parametrize("K", range(2, 21))
def test_blocked_moments_equal_full_array_passes(K, zeros):
    rng = np.random.default_rng(K)
    # more rows than one block, and a partial last block
    n = 3 * temperature_module._block_rows(K) + 7
    Zc = _scores(rng, n, K, zeros)
    for beta in (0.0, 0.37, 2.5):
        new = _row_moments(beta, Zc, _moment_buffer(Zc), 3)
        old = _full_array_moments(beta, Zc, 3)
        for a, b in zip(new, old):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("zeros", [False, True])
@pytest.mark.parametrize("K", [3, 7, 20])
def test_derivatives_equal_a_row_loop(K, zeros):
    rng = np.random.default_rng(100 + K)
    n = 2 * temperature_module._block_rows(K) + 7  # several blocks
    Zc = _scores(rng, n, K, zeros)
    Y = rng.multinomial(5, np.full(K, 1.0 / K), size=n).astype(float)
    if zeros:
        Y[:7] = 0.0  # items without labels
    w = rng.random(n)
    wn = w * Y.sum(axis=1)
    W = wn.sum()
    A = w @ np.einsum("ij,ij->i", Y, Zc)
    beta = 0.8
    loss, g, h, t = _inverse_temperature_derivatives(
        beta, Zc, wn, A, W, _moment_buffer(Zc)
    )
    log_s, mean, var, kappa3 = _loop_cumulants(beta, Zc)
    np.testing.assert_allclose(loss, (wn @ log_s - beta * A) / W, rtol=1e-12)
    np.testing.assert_allclose(g, (wn @ mean - A) / W, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(h, wn @ var / W, rtol=1e-12)
    np.testing.assert_allclose(t, wn @ kappa3 / W, rtol=1e-12, atol=1e-13)


def _blas_threads():
    return [(m["filepath"], m["num_threads"]) for m in threadpool_info()]


@pytest.mark.parametrize("Scaler", [TemperatureScaler, VectorScaler, MatrixScaler])
def test_fit_runs_on_one_blas_thread_and_restores_the_limits(Scaler, monkeypatch):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((300, 4))
    Y = rng.multinomial(5, np.full(4, 0.25), size=300)
    seen = []
    if Scaler is TemperatureScaler:
        inner = temperature_module._newton_halley

        def spy(*args, **kwargs):
            seen.append(threadpool_info())
            return inner(*args, **kwargs)

        monkeypatch.setattr(temperature_module, "_newton_halley", spy)
    else:
        inner_objective = Scaler._objective

        def spy(self, *args):
            seen.append(threadpool_info())
            return inner_objective(self, *args)

        monkeypatch.setattr(Scaler, "_objective", spy)
    before = _blas_threads()
    Scaler().fit(Z, Y)
    assert _blas_threads() == before
    assert seen
    blas = [m for m in seen[0] if m["user_api"] == "blas"]
    assert blas and all(m["num_threads"] == 1 for m in blas)


def test_alpha_fit_restores_torch_threads():
    torch = pytest.importorskip("torch")
    from sklearn_hcal.calibration import AlphaCalibrator

    rng = np.random.default_rng(0)
    Z = rng.standard_normal((200, 3))
    Y = rng.multinomial(5, np.full(3, 1 / 3), size=200)
    threads, before = torch.get_num_threads(), _blas_threads()
    AlphaCalibrator(alpha_reg=0.0).fit(Z, Y)
    assert torch.get_num_threads() == threads
    assert _blas_threads() == before


@pytest.mark.parametrize("K", [2, 3, 10, 20])
def test_likelihood_forms_equal_on_the_switch(K):
    torch = pytest.importorskip("torch")
    from sklearn_hcal.calibration._dirichlet import (
        dirichlet_multinomial_nll_log_alpha0,
        dirichlet_multinomial_nll_slots,
        histogram_slots,
    )

    rng = np.random.default_rng(K)
    threshold = 3 * (K + 3)
    assert use_histogram_slots(threshold, K)
    assert not use_histogram_slots(threshold + 1, K)
    for n_labels in (threshold, threshold + 1):
        F = rng.dirichlet(np.ones(K), size=50)
        Y = rng.multinomial(n_labels, F)
        Y[:5] = 0
        Y[:5, 0] = n_labels  # all labels on one class (zeros elsewhere)
        log_a0 = torch.as_tensor(rng.normal(1.0, 2.0, size=50))
        slots = [torch.as_tensor(a) for a in histogram_slots(Y, F)]
        a = dirichlet_multinomial_nll_slots(log_a0, *slots).numpy()
        b = dirichlet_multinomial_nll_log_alpha0(
            log_a0, torch.as_tensor(F), torch.as_tensor(Y, dtype=torch.float64)
        ).numpy()
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_concurrent_alpha_fits_restore_torch_threads():
    torch = pytest.importorskip("torch")
    from concurrent.futures import ThreadPoolExecutor

    from sklearn_hcal.calibration import AlphaCalibrator

    rng = np.random.default_rng(1)
    Z = rng.standard_normal((200, 3))
    Y = rng.multinomial(5, np.full(3, 1 / 3), size=200)
    threads = torch.get_num_threads()
    with ThreadPoolExecutor(max_workers=3) as pool:
        fits = list(
            pool.map(lambda _: AlphaCalibrator(alpha_reg=0.0).fit(Z, Y), range(6))
        )
    assert torch.get_num_threads() == threads
    for fit in fits[1:]:
        np.testing.assert_allclose(
            fit.predict_concentration(Z), fits[0].predict_concentration(Z), rtol=1e-12
        )
