"""HumanMetricsCallback: history values equal the metric functions.

A tiny linear net trains one epoch per ``partial_fit``; after each, the
history's values must equal the metric functions on that epoch's validation
predictions (``predict_proba`` with the same weights), and skorch's
``EarlyStopping`` and ``Checkpoint`` must act on what the callback records.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
skorch = pytest.importorskip("skorch")

from skorch.callbacks import Checkpoint, EarlyStopping  # noqa: E402
from skorch.dataset import Dataset  # noqa: E402
from skorch.helper import predefined_split  # noqa: E402

from sklearn_hcal import HumanMetricsCallback, make_soft_label_net  # noqa: E402
from sklearn_hcal.datasets import make_label_histograms  # noqa: E402
from sklearn_hcal.metrics import (  # noqa: E402
    entropy_calibration_error,
    expected_calibration_error,
    jensen_shannon_distance,
    kl_divergence,
    majority_accuracy_score,
)

TOL = {"rtol": 1e-12, "atol": 1e-12}

# every test here trains a (tiny) network
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def data():
    X, Y, _ = make_label_histograms(
        300, n_classes=3, n_features=6, n_annotations=5, random_state=0
    )
    X = X.astype(np.float32)
    T = (Y / Y.sum(axis=1, keepdims=True)).astype(np.float32)  # the net's targets
    return X[:240], Y[:240], X[240:], T[240:]


def _net(valid, callbacks, max_epochs=1, **kwargs):
    return make_soft_label_net(
        torch.nn.Linear(6, 3),
        max_epochs=max_epochs,
        lr=0.05,
        batch_size=16,
        train_split=predefined_split(Dataset(*valid)),
        callbacks=callbacks,
        random_state=0,
        **kwargs,
    )


def test_history_equals_the_metric_functions(data):
    X, Y, Xv, Tv = data
    cb = HumanMetricsCallback(
        ["neg_kl_divergence", "ece", "jsd", "ent_ce_signed"],
        metric_params={"ece": {"n_bins": 5}},
    )
    net = _net((Xv, Tv), [cb])
    for _ in range(3):
        net.partial_fit(X, Y)
        proba = net.predict_proba(Xv)
        last = net.history[-1]
        np.testing.assert_allclose(
            last["neg_kl_divergence"], -kl_divergence(Tv, proba), **TOL
        )
        np.testing.assert_allclose(
            last["neg_expected_calibration_error"],
            -expected_calibration_error(Tv, proba, n_bins=5),
            **TOL,
        )
        np.testing.assert_allclose(
            last["neg_jensen_shannon_distance"],
            -jensen_shannon_distance(Tv, proba),
            **TOL,
        )
        # no scorer: recorded under the column, with its own sign
        np.testing.assert_allclose(
            last["ent_ce_signed"],
            entropy_calibration_error(Tv, proba, absolute=False),
            **TOL,
        )
    kl = net.history[:, "neg_kl_divergence"]
    best = net.history[:, "neg_kl_divergence_best"]
    assert best == [v == max(kl[: i + 1]) for i, v in enumerate(kl)]


def test_label_targets(data):
    X, Y, Xv, Tv = data
    y, yv = Y.argmax(axis=1), Tv.argmax(axis=1)  # a batch may miss a class
    net = _net((Xv, yv.astype(np.int64)), [HumanMetricsCallback(["accuracy", "kl"])])
    net.partial_fit(X, y)
    proba = net.predict_proba(Xv)
    np.testing.assert_allclose(
        net.history[-1, "majority_accuracy"],
        majority_accuracy_score(yv, proba, labels=[0, 1, 2]),
        **TOL,
    )
    np.testing.assert_allclose(
        net.history[-1, "neg_kl_divergence"],
        -kl_divergence(yv, proba, labels=[0, 1, 2]),
        **TOL,
    )


def test_early_stopping_and_checkpoint(data, tmp_path):
    X, Y, Xv, Tv = data
    cp = Checkpoint(monitor="neg_kl_divergence_best", dirname=str(tmp_path))
    # an improvement must exceed 10 nats: none does, so training stops
    # after the first epoch plus `patience` epochs
    stop = EarlyStopping(
        monitor="neg_kl_divergence",
        lower_is_better=False,
        patience=2,
        threshold=10.0,
        threshold_mode="abs",
    )
    net = _net((Xv, Tv), [HumanMetricsCallback("kl"), cp, stop], max_epochs=10)
    net.fit(X, Y)
    assert len(net.history) == 3
    assert net.history[:, "event_cp"] == net.history[:, "neg_kl_divergence_best"]
    assert (tmp_path / "params.pt").exists()


def test_callback_after_its_monitor_raises(data):
    X, Y, Xv, Tv = data
    stop = EarlyStopping(monitor="neg_kl_divergence", lower_is_better=False)
    net = _net((Xv, Tv), [stop, HumanMetricsCallback("kl")])
    with pytest.raises(ValueError, match="put HumanMetricsCallback first"):
        net.fit(X, Y)


def test_errors_and_no_validation(data):
    X, Y, Xv, Tv = data
    with pytest.raises(ValueError, match="not a report metric"):
        _net((Xv, Tv), [HumanMetricsCallback(["nope"])]).fit(X, Y)
    net = make_soft_label_net(
        torch.nn.Linear(6, 3),
        max_epochs=1,
        callbacks=[HumanMetricsCallback("kl")],
        random_state=0,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net.fit(X, Y)
    assert any("no validation batch" in str(w.message) for w in caught)
    assert "neg_kl_divergence" not in net.history[-1]


@pytest.mark.parametrize(
    ("monitor", "match"),
    [
        ("kl", "records that metric in net.history as 'neg_kl_divergence'"),
        ("kl_divergence", "monitor='neg_kl_divergence', lower_is_better=False"),
        ("kl_best", "monitor='neg_kl_divergence_best'"),
    ],
)
def test_monitor_under_another_name_of_a_recorded_metric_raises(data, monitor, match):
    # the user wrote "kl" for both; the history holds neg_kl_divergence
    # (−KL): skorch failed after an epoch with a missing key
    X, Y, Xv, Tv = data
    stop = EarlyStopping(monitor=monitor)
    net = _net((Xv, Tv), [HumanMetricsCallback(["kl"]), stop], max_epochs=2)
    with pytest.raises(ValueError, match=match):
        net.fit(X, Y)


def test_counts_through_a_predefined_split_reach_the_count_metrics(data):
    # the documented way to score Mimori et al.'s estimators: integer counts
    # as validation targets (crashed inside torch's loss)
    from sklearn_hcal.metrics import expected_squared_loss

    X, Y, _, _ = data
    Xv, Yv = X[200:], Y[200:]
    cb = HumanMetricsCallback(["sq_loss", "kl"])
    net = _net((Xv, Yv), [cb], max_epochs=2)
    net.fit(X[:200], Y[:200])
    proba = net.predict_proba(Xv)
    last = net.history[-1]
    np.testing.assert_allclose(
        last["neg_expected_squared_loss"], -expected_squared_loss(Yv, proba), **TOL
    )
    np.testing.assert_allclose(
        last["neg_kl_divergence"], -kl_divergence(Yv, proba), **TOL
    )
    # the validation loss is the soft cross-entropy against Y / n, as in fit
    P_hat = Yv / Yv.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(
        last["valid_loss"], -(P_hat * np.log(proba)).sum(axis=1).mean(), rtol=1e-5
    )


def test_history_equals_the_report_and_a_state_through_one_engine(data):
    # the callback's MetricState, a state updated at once, and the report:
    # the same engine, equal to 1e-12 on the epoch's validation predictions
    from sklearn_hcal.metrics import MetricState, human_calibration_report

    X, Y, Xv, Tv = data
    names = ["kl", "ece", "jsd", "classwise_ece", "entropy_corr"]
    cb = HumanMetricsCallback(names)
    net = _net((Xv, Tv), [cb], max_epochs=2)
    net.fit(X, Y)
    proba = net.predict_proba(Xv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = human_calibration_report(Tv, proba, metrics=names)
        state = MetricState(names).update(Tv, proba).compute()
    last = net.history[-1]
    for column, key, sign, _ in cb.names_:
        np.testing.assert_allclose(last[key], sign * state[column], **TOL)
        np.testing.assert_allclose(last[key], sign * report.loc["model", column], **TOL)
