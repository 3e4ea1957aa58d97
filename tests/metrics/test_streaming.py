"""MetricState: every registry metric from chunks equals the in-memory function.

The reference is each metric's public function on the whole arrays (its own
validation and kernels, one pass); the state sees the same items in chunks of
random sizes, of one item, and chunks that miss classes, and is merged in
different orders.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.metrics import (
    MetricState,
    human_calibration_report,
    kl_divergence,
    majority_accuracy_score,
    report_from_states,
)
from sklearn_hcal.metrics._registry import metrics

ALL = list(metrics())
TOL = {"rtol": 1e-12, "atol": 1e-12}


def _data(n=240, k=4, seed=0):
    """Counts with 1 to 6 annotations per item (some single) and predictions."""
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.full(k, 0.7), size=n)
    Y = rng.multinomial(rng.integers(1, 7, size=n), truth)
    P = 0.6 * truth + 0.4 * rng.dirichlet(np.ones(k), size=n)
    return Y, P


def _reference(Y, P, columns, **kw):
    """Each column by its own metric function on all items (the report for a
    column without one)."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for col in columns:
            m = metrics()[col]
            if m.function is None:
                out[col] = human_calibration_report(Y, P, metrics=[col], **kw)[
                    col
                ].iloc[0]
            else:
                out[col] = m.function(Y, P, **m.kwargs, **kw)
    return out


def _chunked(Y, P, bounds, names=ALL, **kw):
    state = MetricState(names, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in zip(bounds[:-1], bounds[1:]):
            state.update(Y[a:b], P[a:b])
        return state.compute()


def _assert_equal(got: dict, ref: dict):
    assert list(got) == list(ref)
    for col in ref:
        np.testing.assert_allclose(got[col], ref[col], **TOL, err_msg=col)


@pytest.fixture(scope="module")
def data():
    return _data()


@pytest.fixture(scope="module")
def reference(data):
    return _reference(*data, ALL)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_chunk_sizes_equal_in_memory(data, reference, seed):
    Y, P = data
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, len(Y)), size=17, replace=False))
    bounds = [0, *cuts.tolist(), len(Y)]
    _assert_equal(_chunked(Y, P, bounds), reference)


def test_chunks_of_one_item(data):
    Y, P = data[0][:60], data[1][:60]
    _assert_equal(_chunked(Y, P, list(range(61))), _reference(Y, P, ALL))


def test_chunks_missing_a_class_keep_all_columns(data):
    # sorted by majority class: most chunks hold only one or two majority
    # classes, and the 1-D labels of a chunk miss most classes
    Y, P = data
    order = np.argsort(Y.argmax(axis=1), kind="stable")
    Y, P = Y[order], P[order]
    bounds = list(range(0, len(Y), 50)) + [len(Y)]
    _assert_equal(_chunked(Y, P, bounds), _reference(Y, P, ALL))

    labels = np.array(["a", "b", "c", "d"])[Y.argmax(axis=1)]
    names = ["accuracy", "kl", "ece", "classwise_ece", "log_loss", "rank_cs"]
    ref = _reference(labels, P, names, labels=["a", "b", "c", "d"])
    _assert_equal(_chunked(labels, P, bounds, names, labels=list("abcd")), ref)
    # without labels= the first chunk (all four classes here) fixes them
    firsts = [np.flatnonzero(labels == c)[0] for c in "abcd"]
    rest = np.setdiff1d(np.arange(len(Y)), firsts)
    mixed = np.r_[firsts, rest]
    Ym, Pm = labels[mixed], P[mixed]
    ref = _reference(Ym, Pm, names)
    _assert_equal(_chunked(Ym, Pm, [0, 4, 60, 120, len(Ym)], names), ref)


def test_dataframe_chunks_are_matched_by_name(data):
    Y, P = data
    cols = ["w", "x", "y", "z"]
    names = ["kl", "classwise_ece", "cl", "wasserstein"]
    ref = _reference(pd.DataFrame(Y, columns=cols), P, names[:3], labels=cols)
    # word classes carry no scale order: the ordinal metric is told it
    ref["wasserstein"] = metrics()["wasserstein"].function(
        pd.DataFrame(Y, columns=cols), P, labels=cols, order=cols
    )
    state = MetricState(names, metric_params={"wasserstein": {"order": cols}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state.update(
            pd.DataFrame(Y[:100], columns=cols), pd.DataFrame(P[:100], columns=cols)
        )
        # the next chunk's columns come in another order: matched by name
        rev = cols[::-1]
        state.update(
            pd.DataFrame(Y[100:, ::-1], columns=rev),
            pd.DataFrame(P[100:, ::-1], columns=rev),
        )
        got = state.compute()
    assert state.classes_.tolist() == cols
    _assert_equal(got, ref)
    with pytest.raises(ValueError, match="do not match the classes"):
        state.update(pd.DataFrame(Y[:5], columns=list("abcd")), P[:5])


def test_merge_is_associative_and_commutative(data, reference):
    Y, P = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = MetricState(ALL).update(Y[:50], P[:50])
        b = MetricState(ALL).update(Y[50:170], P[50:170])
        c = MetricState(ALL).update(Y[170:], P[170:])
        before = a.compute()
        orders = [
            a.merge(b).merge(c),
            a.merge(b.merge(c)),
            c.merge(a).merge(b),
            b.merge(c.merge(a)),
        ]
        values = [s.compute() for s in orders]
        assert a.compute() == before  # merge leaves its operands alone
    for v in values:
        _assert_equal(v, reference)
    assert {s.n_samples_ for s in orders} == {len(Y)}
    # an empty state is the identity
    empty = MetricState(ALL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _assert_equal(empty.merge(a).compute(), a.compute())


def test_state_pickles_and_merges_after(data):
    Y, P = data
    a = MetricState(["kl", "ece"]).update(Y[:100], P[:100])
    b = pickle.loads(pickle.dumps(MetricState(["kl", "ece"]).update(Y[100:], P[100:])))
    got = a.merge(b).compute()
    np.testing.assert_allclose(got["kl"], kl_divergence(Y, P), **TOL)


def test_compute_is_always_a_mapping_and_report(data):
    Y, P = data
    s = MetricState("accuracy").update(Y[:7], P[:7]).update(Y[7:], P[7:])
    # one metric or several: compute() is {column: value}, one shape to read
    assert list(s.compute()) == ["accuracy"]
    assert isinstance(s.compute()["accuracy"], float)
    assert s.compute()["accuracy"] == pytest.approx(
        majority_accuracy_score(Y, P), abs=1e-15
    )
    states = {
        "model": MetricState(["jsd", "accuracy"]),
        "uniform": MetricState(["jsd", "accuracy"]),
    }
    for sl in (slice(0, 120), slice(120, None)):
        states["model"].update(Y[sl], P[sl])
        states["uniform"].update(Y[sl], np.full_like(P[sl], 0.25))
    report = report_from_states(states)
    expected = human_calibration_report(
        Y, {"model": P, "uniform": np.full_like(P, 0.25)}, metrics=["jsd", "accuracy"]
    )
    pd.testing.assert_index_equal(report.index, expected.index)
    np.testing.assert_allclose(report.to_numpy(), expected.to_numpy(), **TOL)
    assert report.attrs["n_samples"] == len(Y)


def test_default_columns_follow_the_labels_like_the_report(data):
    Y, P = data
    rows = Y / Y.sum(axis=1, keepdims=True)  # probability rows: no counts
    state = MetricState().update(rows[:100], P[:100]).update(rows[100:], P[100:])
    report = human_calibration_report(rows, P)
    got = state.compute()
    assert list(got) == list(report.columns)
    np.testing.assert_allclose(list(got.values()), report.iloc[0].to_numpy(), **TOL)


def test_torch_tensors(data):
    torch = pytest.importorskip("torch")
    Y, P = data
    P32 = P.astype(np.float32)
    ref = _chunked(Y, P32, [0, 100, len(Y)], ["kl", "ece", "cl"])
    state = MetricState(["kl", "ece", "cl"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state.update(torch.from_numpy(Y[:100]), torch.from_numpy(P32[:100]))
        state.update(torch.from_numpy(Y[100:]), torch.from_numpy(P32[100:]))
        got = state.compute()
    _assert_equal(got, ref)


@pytest.mark.skipif(
    not pytest.importorskip("torch").cuda.is_available(), reason="needs CUDA"
)
def test_cuda_tensors(data):
    import torch

    Y, P = data
    ref = _reference(Y, P, ["kl", "ece"])
    state = MetricState(["kl", "ece"])
    for sl in (slice(0, 100), slice(100, None)):
        state.update(torch.from_numpy(Y[sl]).cuda(), torch.from_numpy(P[sl]).cuda())
    _assert_equal(state.compute(), ref)


def test_errors(data):
    Y, P = data
    with pytest.raises(ValueError, match="not a report metric"):
        MetricState(["kl", "nope"])
    # what is not a sum over items says why and what to use instead
    with pytest.raises(ValueError, match="no mergeable state: its agreement bins"):
        MetricState("metrics_by_agreement")
    with pytest.raises(ValueError, match="map_blocks"):
        MetricState(["kl", "instance_calibration_errors"])
    with pytest.raises(ValueError, match="metric_params"):
        MetricState(["kl"], metric_params={"kl": {"bins": 3}})
    with pytest.raises(ValueError, match="seen no items"):
        MetricState("kl").compute()
    state = MetricState("kl").update(Y[:10], P[:10])
    with pytest.raises(ValueError, match="3 classes but the state has 4"):
        state.update(Y[:10, :3] + 1, P[:10, :3] / P[:10, :3].sum(1, keepdims=True))
    with pytest.raises(ValueError, match="same metrics"):
        state.merge(MetricState("jsd").update(Y[:10], P[:10]))
    with pytest.raises(ValueError, match="same metrics"):
        state.merge(MetricState("kl", metric_params={"kl": {"eps": 1e-3}}).update(Y, P))
    rows = Y / Y.sum(axis=1, keepdims=True)
    # asked for by name, a metric the labels cannot give raises at compute
    cl = MetricState(["kl", "cl"]).update(Y[:10], P[:10]).update(rows[10:], P[10:])
    with pytest.raises(ValueError, match="'cl' needs integer label counts"):
        cl.compute()
    ones = MetricState("disagreement_sq_loss").update(Y[:3] * 0 + np.eye(4)[:3], P[:3])
    with pytest.raises(ValueError, match="n_i >= 2"):
        ones.compute()
    with pytest.raises(ValueError, match="y_prob is required"):
        MetricState("kl").update(Y)


def test_disagreement_phi_without_probabilities(data):
    from sklearn_hcal.metrics import disagreement_squared_loss

    Y, P = data
    phi = np.random.default_rng(3).uniform(0, 0.7, size=len(Y))
    state = MetricState(["disagreement_sq_loss", "disagreement_ce"])
    for sl in (slice(0, 90), slice(90, None)):
        state.update(Y[sl], y_disagreement=phi[sl])
    got = state.compute()
    np.testing.assert_allclose(
        got["disagreement_sq_loss"], disagreement_squared_loss(Y, phi), **TOL
    )


def test_single_annotation_warning_once(data):
    Y, P = data
    state = MetricState(["el", "kl"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        state.update(Y[:100], P[:100]).update(Y[100:], P[100:])
        assert not caught
        state.compute()
    n_single = int((Y.sum(axis=1) < 2).sum())
    assert [str(w.message).split(" items")[0] for w in caught] == [
        f"{n_single} of {len(Y)}"
    ]


def test_one_engine_report_state_dask_and_states_report_agree(data):
    """The report, a chunked MetricState, the dask path and report_from_states
    compute every column with the one engine (``_engine.Sums``): equal to
    1e-12 on the same data, and the state holds the engine's object."""
    from sklearn_hcal.metrics._engine import Sums

    Y, P = data
    other = np.full_like(P, 0.25)
    columns = [c for c in ALL if metrics()[c].requires != "ordered"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = human_calibration_report(
            Y, {"model": P, "flat": other}, metrics=columns
        )
        states = {"model": MetricState(columns), "flat": MetricState(columns)}
        for sl in (slice(0, 77), slice(77, 78), slice(78, None)):
            states["model"].update(Y[sl], P[sl])
            states["flat"].update(Y[sl], other[sl])
        from_states = report_from_states(states)
        computed = states["model"].compute()
    assert isinstance(states["model"].sums_, Sums)
    assert list(computed) == columns
    np.testing.assert_allclose(
        [computed[c] for c in columns], report.loc["model", columns], **TOL
    )
    pd.testing.assert_index_equal(from_states.index, report.index)
    np.testing.assert_allclose(from_states.to_numpy(), report.to_numpy(), **TOL)
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    with dask.config.set(scheduler="threads"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_dask = human_calibration_report(
            da.from_array(Y, chunks=(50, 4)),
            {"model": da.from_array(P, chunks=(64, 4)), "flat": other},
            metrics=columns,
        )
    np.testing.assert_allclose(on_dask.to_numpy(), report.to_numpy(), **TOL)
