"""Large inputs: float32 and memory-mapped arrays, chunked passes, parallel bootstrap.

The metrics walk their inputs in blocks of rows (``_validation._core._CHUNK_ROWS``)
so that float32 and memory-mapped arrays are never copied to float64
wholesale. These tests pin that (a) the dtype and storage of the input do not
change the result, (b) the block size does not either, (c) no full-size
float64 copy is made (tracemalloc), and (d) the parallel bootstrap is
bit-identical for any ``n_jobs``.
"""

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax

import sklearn_hcal._validation._core as V
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import (
    calibration_loss,
    classwise_expected_calibration_error,
    disagreement_calibration_error,
    disagreement_probability,
    disagreement_squared_loss,
    dispersion_loss,
    distribution_calibration_error,
    epistemic_loss,
    expected_calibration_error,
    human_calibration_report,
    instance_calibration_errors,
    jensen_shannon_distance,
    kl_divergence,
    loss_decomposition,
    metrics_by_agreement,
    predicted_disagreement,
    ranking_calibration_score,
)
from sklearn_hcal.metrics._bins import bin_index, bin_indices
from sklearn_hcal.metrics._bootstrap import resample_weights
from tests.metrics._precision import float32_sums
from tests.metrics._registered import metric_functions

#: Every metric function of the registry, at its defaults (the disagreement
#: metrics read a 2-D second argument as class probabilities).
PAIR_METRICS = metric_functions()


def _softmax(Z):
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def _problem(n, k, seed, n_ann=None):
    rng = np.random.RandomState(seed)
    if n_ann is None:
        n_ann = rng.randint(1, 7, size=n)  # includes single annotations
    Z, Y, _ = make_label_histograms(n, k, n_ann, random_state=seed)
    P = _softmax(Z + rng.normal(scale=1.0, size=Z.shape))
    return Y, P


def _all_values(Y, P):
    """Every metric, the report and the instance table, as one flat vector."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        values = [float(f(Y, P)) for f in PAIR_METRICS]
        values += list(disagreement_probability(Y))
        values += list(predicted_disagreement(P))
        values += list(human_calibration_report(Y, {"m": P}).to_numpy().ravel())
        values += list(loss_decomposition(Y, P).to_numpy().ravel())
        table = metrics_by_agreement(Y, P, metrics=["jsd", "cl", "accuracy"])
        values += list(table.to_numpy(dtype=float).ravel())
        inst = instance_calibration_errors(Y, P)
        values += list(inst.drop(columns="n_annotations").to_numpy(float).ravel())
    return np.array(values)


@pytest.fixture(scope="module")
def problem():
    return _problem(600, 4, seed=0)


# --------------------------------------------------------------------------- #
# dtype and storage do not change the result
# --------------------------------------------------------------------------- #
def test_float32_inputs_match_float64(problem):
    Y, P = problem
    P32 = P.astype(np.float32)
    # The float64 reference sees exactly the float32 values: any difference
    # would come from computing in float32.
    expected = _all_values(Y, P32.astype(np.float64))
    got = _all_values(Y.astype(np.float32), P32)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12)
    # int32 counts and float32 counts are the same histograms.
    got_int = _all_values(Y.astype(np.int32), P32)
    np.testing.assert_allclose(got_int, expected, rtol=1e-6, atol=1e-12)


def test_float32_smooth_metrics_close_to_float64_originals(problem):
    # Rounding P to float32 moves the smooth metrics by ~1e-7 relative.
    Y, P = problem
    P32 = P.astype(np.float32)
    for f in (distribution_calibration_error, jensen_shannon_distance, kl_divergence):
        assert f(Y.astype(np.float32), P32) == pytest.approx(f(Y, P), rel=1e-5)


def test_memmap_inputs_match_in_memory(problem, tmp_path):
    Y, P = problem
    np.save(tmp_path / "Y.npy", Y)
    np.save(tmp_path / "P.npy", P)
    Ym = np.load(tmp_path / "Y.npy", mmap_mode="r")
    Pm = np.load(tmp_path / "P.npy", mmap_mode="r")
    assert isinstance(Pm, np.memmap) and not Pm.flags.writeable
    np.testing.assert_array_equal(_all_values(Ym, Pm), _all_values(Y, P))


def test_read_only_float32_memmap(problem, tmp_path):
    Y, P = problem
    path = tmp_path / "P32.dat"
    writer = np.memmap(path, dtype=np.float32, mode="w+", shape=P.shape)
    writer[:] = P
    writer.flush()
    del writer
    Pm = np.memmap(path, dtype=np.float32, mode="r", shape=P.shape)
    P32 = P.astype(np.float32)
    for f in (jensen_shannon_distance, calibration_loss, ranking_calibration_score):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            assert f(Y, Pm) == f(Y, P32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        report = human_calibration_report(Y, {"m": Pm})
        expected = human_calibration_report(Y, {"m": P32})
    pd.testing.assert_frame_equal(report, expected)


def test_binary_float32_probability_column():
    Y, P = _problem(300, 2, seed=3)
    p1 = P[:, 1].astype(np.float32)
    two_d = np.column_stack([1 - p1.astype(np.float64), p1.astype(np.float64)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # not the disagreement metrics: a 1-D y_disagreement is φ, not P(class 1)
        for f in metric_functions(response="proba"):
            assert f(Y, p1) == pytest.approx(f(Y, two_d), rel=1e-12, abs=1e-15)


# --------------------------------------------------------------------------- #
# Chunking does not change the result
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("chunk_rows", [1, 7, 64])
def test_chunked_equals_unchunked(problem, monkeypatch, chunk_rows):
    Y, P = problem
    whole = _all_values(Y, P)  # default blocks hold all 600 rows
    monkeypatch.setattr(V, "_CHUNK_ROWS", chunk_rows)
    chunked = _all_values(Y, P)
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-14)


def test_errors_found_in_later_blocks_name_the_global_row(monkeypatch):
    monkeypatch.setattr(V, "_CHUNK_ROWS", 3)
    Y = np.ones((10, 2), dtype=np.int64)
    P = np.full((10, 2), 0.5)
    Y_zero = Y.copy()
    Y_zero[8] = 0
    with pytest.raises(ValueError, match="zero annotations .first at row 8"):
        jensen_shannon_distance(Y_zero, P)
    P_bad = P.copy()
    P_bad[7] = [0.5, 0.6]
    with pytest.raises(ValueError, match="row 7 sums to 1.1"):
        jensen_shannon_distance(Y, P_bad)
    Y_float = Y.astype(float)
    Y_float[9, 0] = np.nan
    Y_float[1, 0] = -1  # NaN is reported first, as without blocks
    with pytest.raises(ValueError, match="NaN or infinity"):
        distribution_calibration_error(Y_float, P)
    Y_frac = Y.astype(float)
    Y_frac[9] = [0.25, 0.75]  # fractional only in the last block
    with pytest.raises(ValueError, match="integer label counts"):
        epistemic_loss(Y_frac, P)
    # rows of probabilities are recognised from the first block on
    p_hat = np.tile([0.25, 0.75], (10, 1))
    assert distribution_calibration_error(p_hat, P) == pytest.approx(0.25)


# --------------------------------------------------------------------------- #
# No wholesale float64 copy
# --------------------------------------------------------------------------- #
def _peak(func) -> int:
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def large_float32(tmp_path_factory):
    Y, P = _problem(200_000, 10, seed=1, n_ann=5)
    path = tmp_path_factory.mktemp("large")
    np.save(path / "Y.npy", Y.astype(np.float32))
    np.save(path / "P.npy", P.astype(np.float32))
    return (
        np.load(path / "Y.npy", mmap_mode="r"),
        np.load(path / "P.npy", mmap_mode="r"),
    )


@pytest.mark.parametrize(
    "func, limit",
    [
        (jensen_shannon_distance, 0.75),
        (ranking_calibration_score, 0.75),
        (calibration_loss, 0.75),
        (disagreement_squared_loss, 0.75),
        (lambda Y, P: human_calibration_report(Y, {"m": P}), 1.0),
    ],
)
@pytest.mark.parametrize("threads", ["1", "2"])
def test_peak_memory_of_float32_memmap(
    large_float32, func, limit, threads, monkeypatch
):
    # Inputs: 2 x 8 MB. A float64 copy of either input alone would be 16 MB,
    # i.e. 1x the inputs, so a limit of 0.75x (metrics; measured ~0.45x: the
    # float64 row sums n plus a few block-sized temporaries) proves that
    # neither is copied; the report (measured ~0.6x) stays below 1x. Each
    # extra thread holds one more block's temporaries (a constant ~5 MB,
    # whatever N), so with 2 threads the bound is 1x: still no copy.
    monkeypatch.setenv("HCAL_NUM_THREADS", threads)
    limit = limit if threads == "1" else 1.0
    Y, P = large_float32
    input_bytes = Y.nbytes + P.nbytes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        func(Y, P)  # warm-up: imports and caches outside the measurement
        peak = _peak(lambda: func(Y, P))
    print(f"peak / inputs = {peak / input_bytes:.3f}")
    assert peak < limit * input_bytes, peak / input_bytes


# --------------------------------------------------------------------------- #
# Fast exact reformulations against their definitions
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("n_bins", [1, 3, 7, 10, 15, 16])
def test_arithmetic_binning_equals_searchsorted(n_bins):
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    rng = np.random.RandomState(n_bins)
    values = np.concatenate(
        [
            edges,
            np.nextafter(edges, -1),
            np.nextafter(edges, 2),
            rng.uniform(size=2000),
            np.arange(1, 200) / 200,
            [0.0, 1.0, 1.0 + 5e-7],
        ]
    )
    values = values[values >= 0]
    # Mimori: [a, b), last closed -- the definition is a binary search.
    np.testing.assert_array_equal(
        bin_indices(values, n_bins),
        np.searchsorted(edges[1:-1], values, side="right"),
    )
    # Baan / ECE: (a, b], 0 in no bin (-1), above 1 in bin n_bins.
    np.testing.assert_array_equal(
        bin_index(values, n_bins), np.searchsorted(edges, values, side="left") - 1
    )


def test_single_argsort_rank_match_equals_two_argsorts():
    # Many exact ties on both sides (small integer grids).
    rng = np.random.RandomState(0)
    Y = rng.randint(0, 4, size=(5000, 4))
    Y[Y.sum(axis=1) == 0, 0] = 1
    P = rng.randint(0, 3, size=(5000, 4)).astype(float) + 1e-3
    P /= P.sum(axis=1, keepdims=True)
    definition = np.all(
        np.argsort(P, axis=1, kind="stable") == np.argsort(Y, axis=1, kind="stable"),
        axis=1,
    )
    assert 0.01 < definition.mean() < 0.99  # both outcomes occur
    assert ranking_calibration_score(Y, P) == pytest.approx(definition.mean())
    # float counts and rows of probabilities take the other code paths
    assert ranking_calibration_score(Y.astype(float), P) == definition.mean()
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    by_p_hat = np.all(
        np.argsort(P, axis=1, kind="stable")
        == np.argsort(p_hat, axis=1, kind="stable"),
        axis=1,
    )
    assert ranking_calibration_score(p_hat, P) == by_p_hat.mean()


# --------------------------------------------------------------------------- #
# Parallel bootstrap
# --------------------------------------------------------------------------- #
def test_bootstrap_bit_identical_for_any_n_jobs(problem, monkeypatch):
    Y, P = problem
    preds = {"m": P, "flat": np.full(P.shape, 1 / P.shape[1])}
    kwargs = dict(n_bootstrap=12, random_state=3, return_bootstrap=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        r1, b1 = human_calibration_report(Y, preds, n_jobs=1, **kwargs)
        r2, b2 = human_calibration_report(Y, preds, n_jobs=2, **kwargs)
        # Small blocks on the driver are passed to the workers as well.
        monkeypatch.setattr(V, "_CHUNK_ROWS", 50)
        r3, b3 = human_calibration_report(Y, preds, n_jobs=2, **kwargs)
        r4, b4 = human_calibration_report(Y, preds, n_jobs=1, **kwargs)
    pd.testing.assert_frame_equal(r1, r2, check_exact=True)
    pd.testing.assert_frame_equal(b1, b2, check_exact=True)
    pd.testing.assert_frame_equal(b3, b4, check_exact=True)
    pd.testing.assert_frame_equal(r3, r4, check_exact=True)
    # other blocks change the summation order only
    np.testing.assert_allclose(b3.to_numpy(), b1.to_numpy(), rtol=1e-10, atol=1e-14)


def test_weighted_bootstrap_replicates_equal_metrics_of_resampled_rows(
    problem, monkeypatch
):
    # Binned metrics of a resample are computed with item multiplicities as
    # weights, in blocks; they must equal the metric of the copied rows.
    monkeypatch.setattr(V, "_CHUNK_ROWS", 37)
    Y, P = problem
    metrics = ["ece", "classwise_ece", "cl", "dl", "disagreement_ce", "jsd"]
    public = {
        "ece": expected_calibration_error,
        "classwise_ece": classwise_expected_calibration_error,
        "cl": calibration_loss,
        "dl": dispersion_loss,
        "jsd": jensen_shannon_distance,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _, reps = human_calibration_report(
            Y,
            P,
            metrics=metrics,
            n_bootstrap=3,
            random_state=5,
            return_bootstrap=True,
        )
        W = resample_weights(5, len(Y), 3)
        # the weighted sums are float32 products (tests/metrics/_precision.py)
        tol = float32_sums(len(Y))
        for b in range(3):
            idx = np.repeat(np.arange(len(Y)), W[b].astype(np.intp))
            for metric, func in public.items():
                assert reps.loc[(b, "model"), metric] == pytest.approx(
                    func(Y[idx], P[idx]), rel=tol["rtol"], abs=tol["atol"]
                ), metric
            phi = predicted_disagreement(P[idx])
            assert reps.loc[(b, "model"), "disagreement_ce"] == pytest.approx(
                disagreement_calibration_error(Y[idx], phi),
                rel=tol["rtol"],
                abs=tol["atol"],
            )


def test_threaded_block_passes_equal_the_serial_pass_bit_for_bit(monkeypatch):
    # Many small blocks, so every metric's pass runs on several threads; the
    # block results are reduced in block order, so nothing may change.
    from sklearn_hcal import metrics as M
    from sklearn_hcal._validation import _core as _validation

    X, Y, _ = make_label_histograms(3000, 4, 5, random_state=3)
    P = softmax(X / 1.7, axis=1)
    funcs = [
        M.distribution_calibration_error,
        M.entropy_calibration_error,
        M.ranking_calibration_score,
        M.jensen_shannon_distance,
        M.kl_divergence,
        M.expected_calibration_error,
        M.classwise_expected_calibration_error,
        M.calibration_loss,
        M.dispersion_loss,
        M.epistemic_loss,
    ]
    monkeypatch.setattr(_validation, "_CHUNK_ROWS", 97)
    monkeypatch.setenv("HCAL_NUM_THREADS", "1")
    serial = [f(Y, P) for f in funcs]
    monkeypatch.setenv("HCAL_NUM_THREADS", "3")
    assert _validation._n_threads(31) == 3
    threaded = [f(Y, P) for f in funcs]
    assert threaded == serial
