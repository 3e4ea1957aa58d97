"""The same model-selection code on a dask.distributed cluster (extra ``dask``).

scikit-learn dispatches folds and parameter candidates through joblib, and
``human_calibration_report`` dispatches its bootstrap batches the same way, so
``with joblib.parallel_backend("dask"):`` sends that work to a cluster without
any change to the calling code. These tests start a real two-worker
``LocalCluster`` on 127.0.0.1 and check that

* the work really runs on the cluster's workers (dask's task stream), and
* every number (cv scores, fitted parameters, best parameters, bootstrap
  intervals and replicates) equals the local, sequential run *exactly*,
* with the same warnings (none, where the local run has none).

The workers are threads of the test process talking over TCP (``processes=
False, protocol="tcp"``): messages, estimators and arrays are still pickled
through the comm, warnings raised on a worker reach ``warnings.catch_warnings``
here, and the cluster starts in well under a second, where worker processes
take several seconds on a small machine.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")

from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, cross_validate  # noqa: E402

from sklearn_hcal import MatrixScaler, TemperatureScaler  # noqa: E402
from sklearn_hcal.datasets import make_label_histograms  # noqa: E402
from sklearn_hcal.metrics import HUMAN_SCORERS, human_calibration_report  # noqa: E402
from sklearn_hcal.model_selection import cross_val_predict_proba  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _run(func, client=None):
    """``func()`` locally or under the dask backend; result, warnings, tasks.

    Every warning is recorded (``"always"``: none is swallowed by the
    once-per-location registry), including those raised in the worker threads.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if client is None:
            result = func()
            tasks = None
        else:
            with (
                distributed.get_task_stream(client) as stream,
                joblib.parallel_backend("dask"),
            ):
                result = func()
            tasks = stream.data
    messages = sorted((w.category.__name__, str(w.message)) for w in caught)
    return result, messages, tasks


def _assert_ran_on(client, tasks, at_least):
    workers = set(client.scheduler_info()["workers"])
    assert len(tasks) >= at_least
    assert {task["worker"] for task in tasks} <= workers


@pytest.fixture(scope="module")
def features_and_histograms():
    X, Y, _ = make_label_histograms(
        200, n_classes=3, n_annotations=5, n_features=4, random_state=0
    )
    return X, Y


@pytest.fixture(scope="module")
def logits_and_histograms():
    # logits that are too sharp for the human distributions (true T = 2)
    Z, Y, _ = make_label_histograms(
        200, n_classes=3, n_annotations=5, temperature=2.0, random_state=1
    )
    return Z, Y


def test_cross_validate_on_cluster_equals_local(client, features_and_histograms):
    X, Y = features_and_histograms

    def run():
        return cross_validate(
            TemperatureScaler(LogisticRegression(), cv=3),
            X,
            Y,
            cv=KFold(4, shuffle=True, random_state=0),
            scoring=HUMAN_SCORERS,
            return_estimator=True,
            error_score="raise",
        )

    local, local_warnings, _ = _run(run)
    remote, remote_warnings, tasks = _run(run, client)
    _assert_ran_on(client, tasks, at_least=1)

    assert local_warnings == remote_warnings == []
    score_keys = [key for key in local if key.startswith("test_")]
    assert len(score_keys) == len(HUMAN_SCORERS)
    for key in score_keys:
        assert np.all(np.isfinite(local[key])), key
        np.testing.assert_array_equal(remote[key], local[key], err_msg=key)
    for ours, theirs in zip(local["estimator"], remote["estimator"]):
        assert ours.temperature_ == theirs.temperature_
        np.testing.assert_array_equal(
            ours.predict_proba(X), theirs.predict_proba(X), strict=True
        )


def test_grid_search_on_cluster_equals_local(client, logits_and_histograms):
    Z, Y = logits_and_histograms
    grid = {"reg_weight": [0.01, 1.0, 100.0]}

    def run():
        return GridSearchCV(
            MatrixScaler(),
            grid,
            cv=KFold(3, shuffle=True, random_state=0),
            scoring=HUMAN_SCORERS["neg_histogram_log_loss"],
            error_score="raise",
        ).fit(Z, Y)

    local, local_warnings, _ = _run(run)
    remote, remote_warnings, tasks = _run(run, client)
    _assert_ran_on(client, tasks, at_least=1)

    assert local_warnings == remote_warnings == []
    assert remote.best_params_ == local.best_params_
    assert remote.best_index_ == local.best_index_
    for key in ("mean_test_score", "std_test_score", "rank_test_score"):
        np.testing.assert_array_equal(
            remote.cv_results_[key], local.cv_results_[key], err_msg=key
        )
    # the refit on all data happens on the driver in both cases
    np.testing.assert_array_equal(
        remote.best_estimator_.coef_, local.best_estimator_.coef_, strict=True
    )
    # a search whose candidates differ: the equality above is not vacuous
    assert np.ptp(local.cv_results_["mean_test_score"]) > 0


def test_cross_val_predict_proba_on_cluster_equals_local(
    client, features_and_histograms
):
    X, Y = features_and_histograms

    def run():
        return cross_val_predict_proba(
            TemperatureScaler(LogisticRegression(), cv=3),
            X,
            Y,
            cv=KFold(4, shuffle=True, random_state=0),
        )

    local, local_warnings, _ = _run(run)
    remote, remote_warnings, tasks = _run(run, client)
    _assert_ran_on(client, tasks, at_least=1)
    assert local_warnings == remote_warnings == []
    assert local.shape == Y.shape
    np.testing.assert_array_equal(remote, local, strict=True)


def test_report_bootstrap_on_cluster_equals_local(client, logits_and_histograms):
    Z, Y = logits_and_histograms
    rng = np.random.RandomState(0)
    sharp = np.exp(Z - Z.max(axis=1, keepdims=True))
    sharp /= sharp.sum(axis=1, keepdims=True)
    noisy = rng.dirichlet(np.ones(3), size=len(Y))
    predictions = {"sharp": sharp, "noisy": noisy}

    def run(n_jobs):
        return human_calibration_report(
            Y,
            predictions,
            n_bootstrap=64,
            random_state=0,
            return_bootstrap=True,
            n_jobs=n_jobs,
        )

    (local, local_reps), local_warnings, _ = _run(lambda: run(None))
    (remote, remote_reps), remote_warnings, tasks = _run(lambda: run(2), client)
    _assert_ran_on(client, tasks, at_least=1)

    # same warnings (the binned metrics may legitimately warn about shifted
    # intervals); they must not differ between the two runs
    assert remote_warnings == local_warnings
    assert local.filter(like="_low").notna().any().any()
    pd.testing.assert_frame_equal(remote, local, check_exact=True)
    pd.testing.assert_frame_equal(remote_reps, local_reps, check_exact=True)
