"""dask arrays in the metric functions and the report: chunk-wise, exact.

Every registry metric function, and ``human_calibration_report``, given
:class:`dask.array.Array` inputs, reduces one :class:`MetricState` per block
(the extra ``dask``). The reference is the same call on the numpy arrays. The
threaded scheduler and a ``dask.distributed`` ``LocalCluster`` (worker
threads of this process, ``processes=False``) must give the in-memory values
to 1e-12, and the blocks of a generated array must each be made once, never
the whole array.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from sklearn_hcal import metrics as M  # noqa: E402
from sklearn_hcal.metrics._registry import metrics  # noqa: E402

TOL = {"rtol": 1e-12, "atol": 1e-12}
#: One metric per public function, at its defaults.
FUNCTIONS = [m for m in metrics().values() if m.function is not None and not m.kwargs]


def _data(n=600, k=4, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.full(k, 0.7), size=n)
    Y = rng.multinomial(rng.integers(1, 7, size=n), truth)
    P = 0.6 * truth + 0.4 * rng.dirichlet(np.ones(k), size=n)
    return Y, P


@pytest.fixture(scope="module")
def data():
    Y, P = _data()
    # irregular row chunks, and different ones for the two arrays
    Yd = da.from_array(Y, chunks=((37, 200, 1, 150, 212), (2, 2)))
    Pd = da.from_array(P, chunks=(128, 4))
    return Y, P, Yd, Pd


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,
    )
    client = distributed.Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def _check_functions(Y, P, Yd, Pd):
    for m in FUNCTIONS:
        expected = _quiet(m.function, Y, P)
        got = _quiet(m.function, Yd, Pd)
        assert isinstance(got, float), m.name
        np.testing.assert_allclose(got, expected, **TOL, err_msg=m.name)


def test_every_metric_function_threaded(data):
    with dask.config.set(scheduler="threads"):
        _check_functions(*data)


def test_every_metric_function_on_a_local_cluster(data, client):
    with dask.config.set(scheduler=client.get):
        with distributed.get_task_stream(client) as tasks:
            _check_functions(*data)
    # the blocks really were computed on the cluster's workers
    assert any("_block_state" in t["key"] for t in tasks.data)


def test_metric_parameters_and_labels(data):
    Y, P, Yd, Pd = data
    with dask.config.set(scheduler="threads"):
        for func, kwargs in [
            (M.kl_divergence, {"eps": 1e-3}),
            (M.expected_calibration_error, {"n_bins": 7}),
            (M.calibration_loss, {"n_bins": 5, "debiased": False}),
            (M.entropy_calibration_error, {"absolute": False, "base": 2}),
            (M.wasserstein_distance, {"order": [3, 1, 0, 2]}),
        ]:
            np.testing.assert_allclose(
                _quiet(func, Yd, Pd, **kwargs), _quiet(func, Y, P, **kwargs), **TOL
            )
        # 1-D labels sorted by class: most blocks miss classes
        y = np.sort(np.array(list("abcd"))[Y.argmax(axis=1)])
        yd = da.from_array(y, chunks=100)
        for kw in ({}, {"labels": list("abcd")}, {"labels": list("dbca")}):
            for func in (
                M.kl_divergence,
                M.majority_accuracy_score,
                M.histogram_log_loss,
            ):
                np.testing.assert_allclose(func(yd, Pd, **kw), func(y, P, **kw), **TOL)


def test_disagreement_phi_and_counts(data):
    Y, P, Yd, Pd = data
    phi = np.random.default_rng(1).uniform(0, 0.7, size=len(Y))
    phid = da.from_array(phi, chunks=111)
    with dask.config.set(scheduler="threads"):
        for func in (
            M.disagreement_squared_loss,
            M.disagreement_calibration_error,
            M.disagreement_calibration_loss,
        ):
            np.testing.assert_allclose(func(Yd, phid), func(Y, phi), **TOL)
        labels = np.zeros(len(Y))  # routed labels, replaced by counts=
        np.testing.assert_allclose(
            _quiet(M.calibration_error, labels, Pd, counts=Yd),
            _quiet(M.calibration_error, labels, P, counts=Y),
            **TOL,
        )


def _assert_frames(got, expected):
    pd.testing.assert_index_equal(got.index, expected.index)
    pd.testing.assert_index_equal(got.columns, expected.columns)
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), **TOL)
    assert got.attrs["n_samples"] == expected.attrs["n_samples"]


@pytest.mark.parametrize("where", ["threads", "cluster"])
def test_report(data, client, where):
    Y, P, Yd, Pd = data
    other = np.full_like(P, 0.25)
    phi = np.random.default_rng(2).uniform(0, 0.7, size=len(Y))
    scheduler = "threads" if where == "threads" else client.get
    kwargs = {
        "metric_params": {"ece": {"n_bins": 10}},
        "disagreement": {"uniform": phi},
    }
    with dask.config.set(scheduler=scheduler):
        for metrics_ in (None, list(metrics())):
            got = _quiet(
                M.human_calibration_report,
                Yd,
                {"model": Pd, "uniform": other},
                metrics=metrics_,
                **kwargs,
            )
            expected = _quiet(
                M.human_calibration_report,
                Y,
                {"model": P, "uniform": other},
                metrics=metrics_,
                **kwargs,
            )
            _assert_frames(got, expected)
        # labels in memory, one classifier in memory and one a dask array
        _assert_frames(
            _quiet(M.human_calibration_report, Y, {"model": P, "dask": Pd}),
            _quiet(M.human_calibration_report, Y, {"model": P, "dask": P}),
        )
        # probability rows: the default columns that need counts are left out
        rows = Y / Y.sum(axis=1, keepdims=True)
        _assert_frames(
            M.human_calibration_report(da.from_array(rows, chunks=90), Pd),
            M.human_calibration_report(rows, P),
        )


def test_blocks_are_generated_once_never_whole():
    """A generated array is read block by block, each block once."""
    n_blocks, rows, k = 12, 250, 5
    made = []
    lock = threading.Lock()

    def make(i, what):
        with lock:
            made.append((what, i))
        Y, P = _data(rows, k, seed=i)
        return Y if what == "Y" else P

    def lazy(what, dtype):
        return da.concatenate(
            [
                da.from_delayed(
                    dask.delayed(make)(i, what), shape=(rows, k), dtype=dtype
                )
                for i in range(n_blocks)
            ]
        )

    Yd, Pd = lazy("Y", np.int64), lazy("P", np.float64)
    parts = [_data(rows, k, seed=i) for i in range(n_blocks)]
    Y = np.concatenate([p[0] for p in parts])
    P = np.concatenate([p[1] for p in parts])
    with dask.config.set(scheduler="threads"):
        got = _quiet(M.human_calibration_report, Yd, Pd)
    _assert_frames(got, _quiet(M.human_calibration_report, Y, P))
    assert sorted(made) == sorted((what, i) for what in "YP" for i in range(n_blocks))


def test_what_is_not_a_sum_raises(data):
    Y, P, Yd, Pd = data
    with dask.config.set(scheduler="threads"):
        with pytest.raises(ValueError, match="n_bootstrap=0 for the point"):
            M.human_calibration_report(Yd, Pd, n_bootstrap=10)
        with pytest.raises(ValueError, match="quantiles .* MetricState"):
            M.metrics_by_agreement(Yd, Pd)
        with pytest.raises(ValueError, match="map_blocks"):
            M.instance_calibration_errors(Yd, Pd)
        with pytest.raises(ValueError, match="human_calibration_report"):
            M.loss_decomposition(Yd, Pd)
        with pytest.raises(ValueError, match="sample_weight"):
            M.expected_squared_loss(Yd, Pd, sample_weight=np.ones(len(Y)))
        with pytest.raises(ValueError, match="ensemble"):
            M.disagreement_squared_loss(Yd, da.stack([Pd, Pd]))
        # the parameters are validated as the in-memory function does
        with pytest.raises(ValueError, match="n_bins"):
            M.expected_calibration_error(Yd, Pd, n_bins=0)
        # an entropy correlation that is undefined raises, as in memory
        flat = da.from_array(np.full((len(Y), 4), 0.25), chunks=100)
        with pytest.raises(ValueError, match="same for every item"):
            M.entropy_correlation_score(Yd, flat)


# -- dask DataFrames by name, errors at the global row ------------------------


def _named(n=300, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.ones(3), size=n)
    Y = pd.DataFrame(rng.multinomial(5, truth), columns=list("abc"))
    P = pd.DataFrame(0.7 * truth + 0.1, columns=list("abc"))
    return Y, P


def test_dask_dataframes_are_aligned_by_name_like_pandas():
    dd = pytest.importorskip("dask.dataframe")
    Y, P = _named()
    shuffled = P[["c", "a", "b"]]
    with dask.config.set(scheduler="threads"):
        for func in (M.kl_divergence, M.expected_calibration_error, M.calibration_loss):
            expected = _quiet(func, Y, shuffled)  # pandas: aligned by name
            got = _quiet(
                func, dd.from_pandas(Y, npartitions=3), dd.from_pandas(shuffled, 4)
            )
            np.testing.assert_allclose(got, expected, **TOL, err_msg=func.__name__)
            # aligned, not read by position: the positional reading differs
            assert abs(_quiet(func, Y, shuffled.to_numpy()) - got) > 1e-3
        report = _quiet(
            M.human_calibration_report,
            dd.from_pandas(Y, npartitions=3),
            {"model": dd.from_pandas(shuffled, npartitions=2), "memory": P},
        )
        _assert_frames(
            report, _quiet(M.human_calibration_report, Y, {"model": P, "memory": P})
        )
        # a dask DataFrame naming other classes raises, as pandas does
        other = dd.from_pandas(P.rename(columns={"c": "z"}), npartitions=2)
        with pytest.raises(ValueError, match="z"):
            M.kl_divergence(dd.from_pandas(Y, npartitions=3), other)


@pytest.mark.parametrize("frame", [False, True])
def test_dask_errors_name_the_global_row(frame):
    Y, P = _named()
    bad_P, bad_Y = P.copy(), Y.copy()
    bad_P.iloc[257, 0] = -0.5
    bad_Y.iloc[157, 1] = -2
    if frame:
        dd = pytest.importorskip("dask.dataframe")

        def chunked(x):
            return dd.from_pandas(x, npartitions=3)
    else:

        def chunked(x):
            return da.from_array(x.to_numpy(), chunks=(100, 3))

    with dask.config.set(scheduler="threads"):
        with pytest.raises(ValueError, match=r"row 257, column 0: -0\.5") as err:
            M.kl_divergence(chunked(Y), chunked(bad_P))
        with pytest.raises(ValueError, match=r"row 157, column 1: -2"):
            M.kl_divergence(chunked(bad_Y), chunked(P))
        with pytest.raises(ValueError, match=r"row 257"):
            M.human_calibration_report(chunked(Y), {"m": chunked(bad_P)})
    # the in-memory message names the same row
    with pytest.raises(ValueError, match=str(err.value).split(";")[1].strip()):
        M.kl_divergence(Y.to_numpy(), bad_P.to_numpy())


@pytest.mark.parametrize("unknown", ["y_true", "y_prob"])
def test_unknown_chunk_sizes_are_named_with_the_way_out(data, unknown):
    # a boolean mask leaves a dask array's rows unknown; beside a known
    # y_true this was "different numbers of samples: 600 and nan"
    Y, P, Yd, Pd = data
    args = {"y_true": Yd, "y_prob": Pd}
    args[unknown] = args[unknown][args[unknown][:, 0] >= 0]
    with dask.config.set(scheduler="threads"):
        for call in (
            lambda: M.kl_divergence(args["y_true"], args["y_prob"]),
            lambda: M.human_calibration_report(args["y_true"], args["y_prob"]),
        ):
            with pytest.raises(
                ValueError,
                match=rf"{unknown} has unknown chunk sizes .* call "
                rf"{unknown}\.compute_chunk_sizes\(\) first",
            ):
                call()
        # the way out works
        args[unknown] = args[unknown].compute_chunk_sizes()
        assert M.kl_divergence(args["y_true"], args["y_prob"]) == pytest.approx(
            M.kl_divergence(Y, P), rel=1e-12
        )
