"""MC dropout and test-time augmentation ensembles (Mimori et al. App. D.4-D.5)."""

import pickle

import numpy as np
import pytest
from scipy.special import softmax

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from sklearn_hcal.calibration import (  # noqa: E402
    AlphaCalibrator,
    MCDropoutClassifier,
    TestTimeAugmentationClassifier,
)


class _Net(torch.nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.lin = torch.nn.Linear(4, 8)
        self.bn = torch.nn.BatchNorm1d(8)
        self.drop = torch.nn.Dropout(p)
        self.fc = torch.nn.Linear(8, 3)

    def forward(self, X):
        return self.fc(self.drop(torch.relu(self.bn(self.lin(X)))))


def _fitted_net(p=0.5):
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
        train_split=None,
        verbose=0,
    )
    return net.fit(X, y), X


def test_mc_dropout_members_and_modes():
    torch.set_num_threads(1)
    net, X = _fitted_net(0.5)
    mc = MCDropoutClassifier(net, n_samples=7, random_state=0).fit()
    mode = net.module_.training
    S = mc.predict_proba_samples(X)
    assert S.shape == (7, 120, 3)
    np.testing.assert_allclose(S.sum(-1), 1.0, atol=1e-6)
    assert np.std(S, axis=0).mean() > 1e-3  # dropout is active
    np.testing.assert_array_equal(mc.predict_proba_samples(X), S)  # seeded
    other = MCDropoutClassifier(net, n_samples=7, random_state=1)
    assert not np.allclose(other.predict_proba_samples(X), S)
    assert net.module_.training == mode  # mode restored
    np.testing.assert_allclose(mc.predict_proba(X), S.mean(0))
    np.testing.assert_array_equal(mc.predict(X), net.classes_[S.mean(0).argmax(1)])
    # eq. 72
    np.testing.assert_allclose(mc.predict_disagreement(X), (1 - (S**2).sum(-1)).mean(0))


def test_mc_dropout_keeps_batchnorm_in_eval_mode():
    # With p = 0 every member must equal the deterministic eval prediction,
    # which fails if batch norm used batch statistics (training mode).
    net, X = _fitted_net(0.0)
    mc = MCDropoutClassifier(net, n_samples=3, random_state=0)
    S = mc.predict_proba_samples(X[:17])
    for s in S:
        np.testing.assert_allclose(s, net.predict_proba(X[:17]), atol=1e-6)


def test_posterior_uses_product_likelihood():
    rng = np.random.RandomState(0)
    X = rng.randn(80, 2)
    clf = LogisticRegression().fit(X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 1))

    def jitter(X, random_state):
        return X + 0.8 * random_state.standard_normal(X.shape)

    tta = TestTimeAugmentationClassifier(
        clf, augment=jitter, n_samples=6, random_state=0
    )
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


def _identity(X, random_state):
    return X


def test_tta_identity_augmentation_is_the_model():
    rng = np.random.RandomState(0)
    X = rng.randn(50, 3)
    clf = LogisticRegression().fit(X, np.argmax(X, 1))
    tta = TestTimeAugmentationClassifier(clf, augment=_identity, n_samples=4)
    P = clf.predict_proba(X)
    np.testing.assert_allclose(tta.predict_proba(X), P)
    np.testing.assert_allclose(tta.predict_disagreement(X), 1 - (P**2).sum(1))
    back = pickle.loads(pickle.dumps(tta.fit()))
    assert back.n_samples == 4


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
        clf, augment=jitter, n_samples=5, random_state=0
    )
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


def test_bad_input():
    with pytest.raises(NotFittedError):
        TestTimeAugmentationClassifier(
            LogisticRegression(), augment=lambda X, r: X
        ).predict_proba(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="skorch"):
        MCDropoutClassifier(LogisticRegression()).fit()
    net, X = _fitted_net(0.5)
    with pytest.raises(ValueError, match="n_samples"):
        MCDropoutClassifier(net, n_samples=0).fit()
    with pytest.raises(ValueError, match="Y_new"):
        MCDropoutClassifier(net, n_samples=2).predict_posterior(X, -np.ones((120, 3)))

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
        MCDropoutClassifier(plain).fit()
