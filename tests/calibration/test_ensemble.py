"""MC dropout and test-time augmentation ensembles (Mimori et al. App. D.4-D.5)."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.special import softmax

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold  # noqa: E402

from sklearn_hcal import SoftLabelClassifier, make_soft_label_net  # noqa: E402
from sklearn_hcal.calibration import (  # noqa: E402
    AlphaCalibrator,
    MCDropoutClassifier,
    TestTimeAugmentationClassifier,
)
from sklearn_hcal.datasets import make_label_histograms  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # two cores are shared by the whole suite; one thread is as fast here
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


class _Net(torch.nn.Module):
    def __init__(self, p=0.5, n_classes=3):
        super().__init__()
        self.lin = torch.nn.Linear(4, 8)
        self.bn = torch.nn.BatchNorm1d(8)
        self.drop = torch.nn.Dropout(p)
        self.fc = torch.nn.Linear(8, n_classes)

    def forward(self, X):
        return self.fc(self.drop(torch.relu(self.bn(self.lin(X)))))


def _fitted_net(p=0.5, batch_size=32):
    from skorch import NeuralNetClassifier

    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    X = rng.randn(120, 4).astype(np.float32)
    y = np.argmax(X[:, :3], axis=1)
    net = NeuralNetClassifier(
        _Net,
        module__p=p,
        criterion=torch.nn.CrossEntropyLoss,
        max_epochs=3,
        batch_size=batch_size,
        train_split=None,
        verbose=0,
    )
    return net.fit(X, y), X


def _mc(net, **kwargs):
    return MCDropoutClassifier(FrozenEstimator(net), **kwargs).fit()


def _jitter(X, random_state):
    return X + 0.8 * random_state.standard_normal(X.shape)


def _identity(X, random_state):
    return X


# --------------------------------------------------------------------------- #
# prediction API (eq. 72, 80-81)
# --------------------------------------------------------------------------- #
@pytest.mark.slow
def test_mc_dropout_members_and_modes():
    net, X = _fitted_net(0.5)
    mc = _mc(net, n_samples=7, random_state=0)
    mode = net.module_.training
    S = mc.predict_proba_samples(X)
    assert S.shape == (7, 120, 3)
    np.testing.assert_allclose(S.sum(-1), 1.0, atol=1e-6)
    assert np.std(S, axis=0).mean() > 1e-3  # dropout is active
    np.testing.assert_array_equal(mc.predict_proba_samples(X), S)  # seeded
    other = _mc(net, n_samples=7, random_state=1)
    assert not np.allclose(other.predict_proba_samples(X), S)
    assert net.module_.training == mode  # mode restored
    np.testing.assert_allclose(mc.predict_proba(X), S.mean(0))
    np.testing.assert_array_equal(mc.predict(X), net.classes_[S.mean(0).argmax(1)])
    # eq. 72
    np.testing.assert_allclose(mc.predict_disagreement(X), (1 - (S**2).sum(-1)).mean(0))


@pytest.mark.slow
def test_mc_dropout_keeps_batchnorm_in_eval_mode():
    # With p = 0 every member must equal the deterministic eval prediction,
    # which fails if batch norm used batch statistics (training mode).
    net, X = _fitted_net(0.0)
    with pytest.warns(UserWarning, match="p=0"):  # the degenerate case, on purpose
        S = _mc(net, n_samples=3, random_state=0).predict_proba_samples(X[:17])
    for s in S:
        np.testing.assert_allclose(s, net.predict_proba(X[:17]), atol=1e-6)


def test_posterior_uses_product_likelihood():
    rng = np.random.RandomState(0)
    X = rng.randn(80, 2)
    clf = LogisticRegression().fit(X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 1))
    tta = TestTimeAugmentationClassifier(
        FrozenEstimator(clf), augment=_jitter, n_samples=6, random_state=0
    ).fit()
    F = tta.predict_proba_samples(X)
    Y = rng.multinomial(3, [0.3, 0.3, 0.4], size=80)
    post = tta.predict_posterior(X, Y)
    # brute force Bayes: P(ζ = f_s | y) ∝ Π_k f_sk^y_k (eq. 80-81)
    for i in range(0, 80, 7):
        w = np.array([np.prod(F[s, i] ** Y[i]) for s in range(6)])
        np.testing.assert_allclose(post[i], w @ F[:, i] / w.sum(), rtol=1e-10)
    # the reference code's sum over classes is not the same thing
    w_sum = (F * Y).sum(-1)
    buggy = np.einsum("sn,snk->nk", w_sum / w_sum.sum(0), F)
    assert np.abs(buggy - post).max() > 1e-3
    np.testing.assert_allclose(tta.predict_posterior(X, np.zeros_like(Y)), F.mean(0))


def test_new_labels_and_scores_are_matched_to_classes_by_name():
    # One reader of Y_new (shared with α-calibration): a DataFrame of counts
    # is put in classes_ order by its column names; score matches named
    # histogram columns as fit does and takes counts= like the other models.
    import pandas as pd

    X, Y, _ = make_label_histograms(150, 3, 5, n_features=4, random_state=3)
    names = ["neg", "neu", "pos"]
    frame = pd.DataFrame(Y, columns=names)
    tta = TestTimeAugmentationClassifier(
        LogisticRegression(), augment=_jitter, n_samples=4, random_state=0
    ).fit(X, frame)
    np.testing.assert_array_equal(tta.classes_, names)
    shuffled = frame[["pos", "neg", "neu"]]
    np.testing.assert_allclose(
        tta.predict_posterior(X, shuffled), tta.predict_posterior(X, Y)
    )
    with pytest.raises(ValueError, match="classes"):
        tta.predict_posterior(X, shuffled.rename(columns={"pos": "other"}))
    acc = np.mean(tta.predict_proba(X).argmax(1) == Y.argmax(1))  # first on ties
    assert tta.score(X, shuffled) == pytest.approx(acc)
    assert tta.score(X, Y.argmax(1), counts=Y) == pytest.approx(acc)


def test_tta_identity_augmentation_is_the_model():
    rng = np.random.RandomState(0)
    X = rng.randn(50, 3)
    clf = LogisticRegression().fit(X, np.argmax(X, 1))
    tta = TestTimeAugmentationClassifier(
        FrozenEstimator(clf), augment=_identity, n_samples=4
    ).fit()
    P = clf.predict_proba(X)
    np.testing.assert_allclose(tta.predict_proba(X), P)
    np.testing.assert_allclose(tta.predict_disagreement(X), 1 - (P**2).sum(1))
    back = pickle.loads(pickle.dumps(tta))
    np.testing.assert_allclose(back.predict_proba(X), P)


def test_alpha_on_ensemble_gives_eq73():
    rng = np.random.RandomState(0)
    X = rng.randn(400, 2)
    Z = np.column_stack([X[:, 0], -X[:, 0], X[:, 1]])
    Q = np.stack([rng.dirichlet(3 * softmax(z)) for z in Z])
    Y = np.stack([rng.multinomial(5, q) for q in Q])
    clf = LogisticRegression().fit(X, Y.argmax(1))

    def jitter(X, random_state):
        return X + 0.3 * random_state.standard_normal(X.shape)

    tta = TestTimeAugmentationClassifier(
        FrozenEstimator(clf), augment=jitter, n_samples=5, random_state=0
    ).fit()
    cal = AlphaCalibrator(FrozenEstimator(tta)).fit(X, Y)
    F = tta.predict_proba_samples(X)
    a0 = cal.predict_concentration(X)
    assert a0.shape == (5, 400)
    np.testing.assert_allclose(
        cal.predict_disagreement(X), (a0 / (a0 + 1) * (1 - (F**2).sum(-1))).mean(0)
    )
    np.testing.assert_allclose(cal.predict_proba(X), F.mean(0))
    # mixture posterior: weights ∝ DM evidence of each member's Dirichlet
    from scipy.stats import dirichlet_multinomial

    post = cal.predict_posterior(X[:3], Y[:3])
    F, a0 = tta.predict_proba_samples(X[:3]), cal.predict_concentration(X[:3])
    for i in range(3):
        al = a0[:, i, None] * F[:, i]
        ev = np.array([dirichlet_multinomial.pmf(Y[i], a, Y[i].sum()) for a in al])
        means = (al + Y[i]) / (a0[:, i, None] + Y[i].sum())
        np.testing.assert_allclose(post[i], ev @ means / ev.sum(), rtol=1e-8)


# --------------------------------------------------------------------------- #
# fitting: scikit-learn's meta-estimator rules
# --------------------------------------------------------------------------- #
@pytest.mark.slow
def test_fit_trains_a_clone_and_frozen_means_prefit():
    X, Y, _ = make_label_histograms(200, 3, 5, n_features=4, random_state=0)
    X = X.astype(np.float32)
    net = make_soft_label_net(_Net, max_epochs=2, random_state=0)
    mc = MCDropoutClassifier(net, n_samples=4, random_state=0).fit(X, Y)
    assert not getattr(net, "initialized_", False)  # the parameter is untouched
    assert mc.net_ is not net and mc.net_.initialized_
    np.testing.assert_array_equal(mc.classes_, [0, 1, 2])
    assert mc.n_features_in_ == 4 and mc.dropout_layers_ == ["drop"]
    # the fitted net used as is: the same members without training again
    frozen = _mc(mc.net_, n_samples=4, random_state=0)
    assert frozen.net_ is mc.net_
    np.testing.assert_array_equal(
        frozen.predict_proba_samples(X), mc.predict_proba_samples(X)
    )
    # a fitted but unfrozen model is retrained, with a warning (developer guide §prefit)
    with pytest.warns(UserWarning, match="FrozenEstimator"):
        again = MCDropoutClassifier(mc.net_, n_samples=4).fit(X, Y)
    assert again.net_ is not mc.net_
    with pytest.raises(ValueError, match="FrozenEstimator"):
        MCDropoutClassifier(mc.net_).fit()
    with pytest.raises(NotFittedError, match="not fitted"):
        MCDropoutClassifier(FrozenEstimator(clone(net))).fit()
    with pytest.raises(NotFittedError):
        MCDropoutClassifier(net).predict_proba(X)
    # histograms reach a plain classifier through SoftLabelClassifier
    tta = TestTimeAugmentationClassifier(
        LogisticRegression(), augment=_jitter, n_samples=3, random_state=0
    ).fit(X, Y)
    assert isinstance(tta.estimator_, SoftLabelClassifier)
    ref = SoftLabelClassifier(LogisticRegression()).fit(X, Y)
    ident = clone(tta).set_params(augment=_identity).fit(X, Y)
    np.testing.assert_allclose(ident.predict_proba(X), ref.predict_proba(X))


def test_grid_search_over_an_ensemble():
    # clone() used to drop the wrapped fit; now every candidate trains its own
    X, Y, _ = make_label_histograms(150, 3, 5, n_features=2, random_state=1)
    tta = TestTimeAugmentationClassifier(
        LogisticRegression(), augment=_jitter, n_samples=3, random_state=0
    )
    grid = GridSearchCV(tta, {"n_samples": [2, 4]}, cv=KFold(3)).fit(X, Y)
    assert grid.best_estimator_.n_samples in (2, 4)
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))


@pytest.mark.slow
def test_bad_input():
    with pytest.raises(NotFittedError):
        TestTimeAugmentationClassifier(
            LogisticRegression(), augment=_identity
        ).predict_proba(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="skorch"):
        MCDropoutClassifier(LogisticRegression()).fit()
    net, X = _fitted_net(0.5)
    with pytest.raises(ValueError, match="n_samples"):
        _mc(net, n_samples=0)
    with pytest.raises(ValueError, match="Y_new"):
        _mc(net, n_samples=2).predict_posterior(X, -np.ones((120, 3)))

    class NoDrop(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

        def forward(self, X):
            return self.fc(X)

    from skorch import NeuralNetClassifier

    plain = NeuralNetClassifier(
        NoDrop,
        criterion=torch.nn.CrossEntropyLoss,
        max_epochs=1,
        train_split=None,
        verbose=0,
    ).fit(X, np.arange(120) % 3)
    with pytest.raises(ValueError, match="no dropout"):
        _mc(plain)


# --------------------------------------------------------------------------- #
# per-row reproducibility: a row's members do not depend on its batch
# --------------------------------------------------------------------------- #
@pytest.mark.slow
def test_mc_members_of_a_row_do_not_depend_on_the_batch():
    net, X = _fitted_net(0.5, batch_size=32)
    mc = _mc(net, n_samples=9, random_state=0)
    state = torch.get_rng_state()
    full = mc.predict_proba_samples(X)
    assert torch.equal(state, torch.get_rng_state())  # global RNG untouched
    # float32 matrix products of different batch shapes may round the last
    # bit differently; the masks themselves are identical (next test)
    close = {"rtol": 0, "atol": 1e-6}
    np.testing.assert_allclose(
        full[:, 5:10], mc.predict_proba_samples(X[5:10]), **close
    )
    np.testing.assert_allclose(full[:, 7:8], mc.predict_proba_samples(X[7:8]), **close)
    order = np.random.RandomState(1).permutation(len(X))
    np.testing.assert_allclose(
        full[:, order], mc.predict_proba_samples(X[order]), **close
    )
    net.set_params(batch_size=5)
    np.testing.assert_allclose(full, mc.predict_proba_samples(X), **close)
    # float64 input is the same row once cast to float32
    np.testing.assert_allclose(
        full[:, :4], mc.predict_proba_samples(X[:4].astype(np.float64)), **close
    )
    # the same row twice in a call: the same members; other rows differ
    twice = mc.predict_proba_samples(X[[3, 3, 4]])
    np.testing.assert_array_equal(twice[:, 0], twice[:, 1])
    assert np.abs(twice[:, 0] - twice[:, 2]).max() > 1e-3
    # members differ from each other, and with the seed
    assert np.abs(full[0] - full[1]).max() > 1e-3
    assert (
        np.abs(
            _mc(net, n_samples=9, random_state=1).predict_proba_samples(X) - full
        ).max()
        > 1e-3
    )
    # without an int seed each call draws new members
    free = _mc(net, n_samples=9)
    assert (
        np.abs(free.predict_proba_samples(X) - free.predict_proba_samples(X)).max()
        > 1e-3
    )


class _MaskRecorder(torch.nn.Module):
    """Dropout applied to ones: what the layer outputs is its mask."""

    def __init__(self, n_classes=2, kind="Dropout", p=0.3, shape=(32,), reuse=False):
        super().__init__()
        self.shape = tuple(shape)
        self.first = getattr(torch.nn, kind)(p)
        self.second = self.first if reuse else getattr(torch.nn, kind)(p)
        self.fc = torch.nn.Linear(4, n_classes)
        self.seen = []

    def forward(self, X):
        ones = torch.ones((X.shape[0], *self.shape), dtype=X.dtype)
        a, b = self.first(ones), self.second(ones)
        self.seen.append((a.clone(), b.clone()))
        return self.fc(X) + 0.0 * (a.sum() + b.sum())


def _recorded_masks(X, *, n_samples=5, **module_kwargs):
    from skorch import NeuralNetClassifier

    net = NeuralNetClassifier(
        _MaskRecorder,
        **{f"module__{k}": v for k, v in module_kwargs.items()},
        classes=[0, 1],
        batch_size=256,
        verbose=0,
    ).initialize()
    mc = _mc(net, n_samples=n_samples, random_state=0)
    net.module_.seen = []
    mc.predict_proba_samples(X)
    seen = net.module_.seen
    # forwards run batch by batch, member by member within a batch
    n_batches = len(seen) // n_samples
    first = [
        torch.cat([seen[b * n_samples + s][0] for b in range(n_batches)])
        for s in range(n_samples)
    ]
    second = [
        torch.cat([seen[b * n_samples + s][1] for b in range(n_batches)])
        for s in range(n_samples)
    ]
    return torch.stack(first).numpy(), torch.stack(second).numpy()


def _within_binomial(k, n, p, z=4.5):
    return abs(k / n - p) <= z * np.sqrt(p * (1 - p) / n)


def test_dropout_masks_are_unbiased_and_independent():
    p = 0.3
    X = np.random.RandomState(0).randn(1000, 4).astype(np.float32)
    A, B = _recorded_masks(X, p=p)  # (members, rows, units)
    scale = 1.0 / (1.0 - p)
    np.testing.assert_allclose(np.unique(A), [0.0, scale], rtol=1e-6)
    n = A.size
    # each unit dropped with probability p: a binomial count of zeros
    assert _within_binomial(int((A == 0).sum()), n, p)
    assert _within_binomial(int((B == 0).sum()), n, p)
    # so the masks average to 1 (inverted dropout keeps the mean)
    assert abs(A.mean() - 1.0) <= 4.5 * scale * np.sqrt(p * (1 - p) / n)
    # no dependence between members, layers or neighbouring units
    keep_a, keep_b = (A > 0).astype(float), (B > 0).astype(float)
    bound = 4.5 / np.sqrt(keep_a[0].size)
    for x, y in [
        (keep_a[0], keep_a[1]),  # two members
        (keep_a[0], keep_b[0]),  # two layers
        (keep_a[0][:, :-1], keep_a[0][:, 1:]),  # adjacent units
        (keep_a[0][:-1], keep_a[0][1:]),  # adjacent rows
    ]:
        assert abs(np.corrcoef(x.ravel(), y.ravel())[0, 1]) < bound
    # the same masks for a row whatever the batch (exact, not approximate)
    A_sub, _ = _recorded_masks(X[[10, 500, 11]], p=p)
    np.testing.assert_array_equal(A_sub, A[:, [10, 500, 11]])


def test_reused_dropout_layer_draws_a_new_mask_per_call():
    X = np.random.RandomState(1).randn(400, 4).astype(np.float32)
    A, B = _recorded_masks(X, p=0.5, reuse=True)
    keep_a, keep_b = (A > 0).ravel(), (B > 0).ravel()
    assert abs(np.corrcoef(keep_a, keep_b)[0, 1]) < 4.5 / np.sqrt(keep_a.size)


@pytest.mark.parametrize(
    "kind, shape",
    [("Dropout1d", (16, 5)), ("Dropout2d", (16, 3, 3)), ("Dropout3d", (8, 2, 2, 2))],
)
def test_channel_dropout_masks_whole_channels(kind, shape):
    p = 0.4
    X = np.random.RandomState(2).randn(600, 4).astype(np.float32)
    A, _ = _recorded_masks(X, kind=kind, p=p, shape=shape)
    channels = A.reshape(*A.shape[:3], -1)  # (members, rows, channels, positions)
    assert np.all(channels.min(-1) == channels.max(-1))  # one value per channel
    dropped = channels[..., 0] == 0
    assert _within_binomial(int(dropped.sum()), dropped.size, p)


def test_unsupported_dropout_is_refused_clearly():
    from skorch import NeuralNetClassifier

    class Alpha(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = torch.nn.AlphaDropout(0.2)
            self.fc = torch.nn.Linear(4, 2)

        def forward(self, X):
            return self.fc(self.drop(X))

    net = NeuralNetClassifier(Alpha, classes=[0, 1], verbose=0).initialize()
    with pytest.raises(ValueError, match="AlphaDropout"):
        _mc(net)

    class TimeFirst(torch.nn.Module):
        # activations laid out (features, batch): the batch is not dim 0
        def __init__(self):
            super().__init__()
            self.drop = torch.nn.Dropout(0.2)
            self.fc = torch.nn.Linear(4, 2)

        def forward(self, X):
            return self.fc(self.drop(X.T).T)

    net = NeuralNetClassifier(TimeFirst, classes=[0, 1], verbose=0).initialize()
    X = np.zeros((10, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="batch-first"):
        _mc(net, n_samples=2).predict_proba(X)

    class Custom(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = torch.nn.Dropout(0.2)
            self.extra = MyDropout()
            self.fc = torch.nn.Linear(4, 2)

        def forward(self, X):
            return self.fc(self.extra(self.drop(X)))

    net = NeuralNetClassifier(Custom, classes=[0, 1], verbose=0).initialize()
    with pytest.warns(UserWarning, match="MyDropout"):
        _mc(net)


class MyDropout(torch.nn.Module):
    def forward(self, X):
        return torch.nn.functional.dropout(X, 0.5, self.training)


def test_tta_members_of_a_row_do_not_depend_on_the_batch():
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    X = rng.randn(200, 3)
    clf = LogisticRegression().fit(X, np.argmax(X, 1))
    tta = TestTimeAugmentationClassifier(
        FrozenEstimator(clf), augment=_jitter, n_samples=6, random_state=0
    ).fit()
    full = tta.predict_proba_samples(X)
    np.testing.assert_array_equal(full[:, 5:10], tta.predict_proba_samples(X[5:10]))
    order = rng.permutation(len(X))
    np.testing.assert_allclose(
        full[:, order], tta.predict_proba_samples(X[order]), rtol=0, atol=1e-12
    )
    twice = tta.predict_proba_samples(X[[3, 3]])
    np.testing.assert_array_equal(twice[:, 0], twice[:, 1])
    assert np.abs(full[0] - full[1]).max() > 1e-3  # members still differ
    # a numeric DataFrame keys its rows like the array of the same values
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # fitted without names
        from_frame = tta.predict_proba_samples(frame)
    np.testing.assert_allclose(from_frame, full, rtol=0, atol=1e-12)
    # per_row=False: one generator for the whole call, so a row's members
    # depend on the call (the documented trade-off)
    batch = clone(tta).set_params(per_row=False).fit()
    whole = batch.predict_proba_samples(X)
    assert np.abs(whole[:, 5:10] - batch.predict_proba_samples(X[5:10])).max() > 1e-3
