"""Tests of skorch networks trained on label histograms, and skorch_logits."""

import pickle

import numpy as np
import pytest
from scipy.special import log_softmax, softmax
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

torch = pytest.importorskip("torch")
skorch = pytest.importorskip("skorch")

from sklearn_hcal import (  # noqa: E402
    SmallCNN,
    make_soft_label_net,  # noqa: E402
    skorch_logits,
)
from sklearn_hcal.datasets import (  # noqa: E402
    make_label_histograms,
    make_mixed_digits,
)


class Linear(torch.nn.Module):
    """Linear logits (module level so that nets holding it pickle)."""

    def __init__(self, n_features=4, n_classes=3):
        super().__init__()
        self.lin = torch.nn.Linear(n_features, n_classes)

    def forward(self, X):
        return self.lin(X)


class SoftmaxLinear(Linear):
    """Outputs probabilities: skorch's default NLLLoss convention."""

    def forward(self, X):
        return torch.softmax(self.lin(X), dim=-1)


class Logit1(torch.nn.Module):
    def __init__(self, n_features=4):
        super().__init__()
        self.lin = torch.nn.Linear(n_features, 1)

    def forward(self, X):
        return self.lin(X)[:, 0]


@pytest.fixture(autouse=True, scope="module")
def _few_threads():
    # two cores are shared by the whole suite; one thread is as fast here
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def digits():
    return make_mixed_digits(
        n_annotations={"train": 5, "valid": 5, "test": 10}, random_state=0
    )


@pytest.fixture(scope="module")
def cnn_on_histograms(digits):
    net = make_soft_label_net(
        SmallCNN, module__n_classes=10, max_epochs=10, lr=3e-3, random_state=0
    )
    return net.fit(digits.train.data, digits.train.counts)


@pytest.fixture(scope="module")
def tabular():
    X, Y, Q = make_label_histograms(200, 3, 5, n_features=4, random_state=0)
    return X.astype(np.float32), Y, Q


def test_cnn_fits_histograms_of_mixed_digits(digits, cnn_on_histograms):
    net = cnn_on_histograms
    test = digits.test
    P = net.predict_proba(test.data)
    assert P.shape == (len(test.data), 10)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(net.classes_, np.arange(10))
    majority = test.counts.argmax(axis=1)
    acc = np.mean(P.argmax(axis=1) == majority)
    # measured 0.933 (10 epochs, ~2-3 s on 2 CPU threads); chance is 0.1
    assert acc > 0.85
    assert net.score(test.data, test.counts) == pytest.approx(acc)
    np.testing.assert_array_equal(net.predict(test.data), P.argmax(axis=1))
    # the soft labels are learnt: on mixed test images the predicted
    # distribution is closer to the truth than a one-hot of its own argmax
    mixed = test.mixed & (test.true_proba.max(axis=1) < 0.8)
    tvd_soft = 0.5 * np.abs(P[mixed] - test.true_proba[mixed]).sum(axis=1)
    onehot = np.eye(10)[P[mixed].argmax(axis=1)]
    tvd_hard = 0.5 * np.abs(onehot - test.true_proba[mixed]).sum(axis=1)
    assert tvd_soft.mean() < tvd_hard.mean() - 0.05  # measured 0.29 vs 0.38


@pytest.mark.slow
def test_cnn_trains_on_1d_labels(digits):
    net = make_soft_label_net(SmallCNN, max_epochs=8, lr=3e-3, random_state=0)
    net.fit(digits.train.data, digits.train.target)
    np.testing.assert_array_equal(net.classes_, np.arange(10))
    assert net.predict_proba(digits.test.data).shape == (len(digits.test.data), 10)
    assert net.score(digits.test.data, digits.test.target) > 0.85


def test_pickle_round_trip_and_clone(digits, cnn_on_histograms):
    X = digits.test.data[:50]
    again = pickle.loads(pickle.dumps(cnn_on_histograms))
    np.testing.assert_array_equal(
        again.predict_proba(X), cnn_on_histograms.predict_proba(X)
    )
    fresh = clone(cnn_on_histograms)
    assert type(fresh) is type(cnn_on_histograms)
    assert fresh.random_state == 0 and fresh.max_epochs == 10
    assert not getattr(fresh, "initialized_", False)


def test_skorch_logits_cross_entropy(digits, cnn_on_histograms):
    X = digits.test.data[:100]
    z = skorch_logits(cnn_on_histograms, X)
    assert z.shape == (100, 10) and z.dtype == np.float64
    np.testing.assert_allclose(
        softmax(z, axis=1), cnn_on_histograms.predict_proba(X), atol=1e-6
    )
    # CE setup: the raw module output, not log-probabilities
    with torch.no_grad():
        raw = cnn_on_histograms.module_(torch.as_tensor(X)).numpy()
    np.testing.assert_allclose(z, raw, rtol=1e-5, atol=1e-5)
    # float64 input is accepted (cast to float32)
    np.testing.assert_allclose(
        skorch_logits(cnn_on_histograms, X.astype(np.float64)), z, atol=1e-6
    )


@pytest.mark.slow
def test_skorch_logits_probability_module(tabular):
    X, _, Q = tabular
    y = Q.argmax(axis=1)
    net = skorch.NeuralNetClassifier(
        SoftmaxLinear, max_epochs=3, train_split=None, verbose=0
    ).fit(X, y)
    z = skorch_logits(net, X)
    P = net.predict_proba(X)
    np.testing.assert_allclose(np.exp(z), P, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(log_softmax(z, axis=1), z, atol=1e-5)


@pytest.mark.slow
def test_skorch_logits_binary_net(tabular):
    X, _, Q = tabular
    y = (Q[:, 0] > 0.4).astype(np.float32)
    net = skorch.NeuralNetBinaryClassifier(
        Logit1, max_epochs=3, train_split=None, verbose=0
    ).fit(X, y)
    z = skorch_logits(net, X)
    assert z.shape == (len(X), 2)
    np.testing.assert_array_equal(z[:, 0], 0.0)
    np.testing.assert_allclose(softmax(z, axis=1), net.predict_proba(X), atol=1e-6)


@pytest.mark.slow
def test_skorch_logits_is_deterministic_with_dropout(digits):
    net = make_soft_label_net(
        SmallCNN, module__dropout=0.5, max_epochs=1, random_state=0
    ).fit(digits.train.data[:200], digits.train.counts[:200])
    X = digits.test.data[:30]
    np.testing.assert_array_equal(skorch_logits(net, X), skorch_logits(net, X))


@pytest.mark.slow
def test_soft_cross_entropy_loss(tabular):
    X, Y, _ = tabular
    net = make_soft_label_net(Linear, max_epochs=1, random_state=0).fit(X, Y)
    logits = torch.as_tensor(np.random.RandomState(0).normal(size=(len(Y), 3)))
    targets = (Y / Y.sum(axis=1, keepdims=True)).astype(np.float64)
    loss = net.get_loss(logits, torch.as_tensor(targets)).item()
    expected = -np.mean(np.sum(targets * log_softmax(logits.numpy(), axis=1), 1))
    assert loss == pytest.approx(expected, rel=1e-10)
    # NLLLoss + probability module: the soft NLL of the probabilities
    nll = make_soft_label_net(
        SoftmaxLinear, criterion=torch.nn.NLLLoss, max_epochs=1, random_state=0
    ).fit(X, Y)
    probs = torch.softmax(logits, dim=1)
    loss = nll.get_loss(probs, torch.as_tensor(targets)).item()
    assert loss == pytest.approx(expected, rel=1e-6)
    np.testing.assert_allclose(
        np.exp(skorch_logits(nll, X)), nll.predict_proba(X), rtol=1e-5, atol=1e-7
    )


@pytest.mark.slow
def test_counts_are_normalised(tabular):
    # Y and 3*Y have the same human distribution: identical training
    X, Y, _ = tabular
    a = make_soft_label_net(Linear, max_epochs=5, random_state=1).fit(X, Y)
    b = make_soft_label_net(Linear, max_epochs=5, random_state=1).fit(X, 3 * Y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-6)


@pytest.mark.slow
def test_linear_net_full_batch_equals_soft_label_mle(tabular):
    # a linear module trained to convergence on the histograms (full-batch
    # L-BFGS) is the soft-label MLE, i.e. the weighted LogisticRegression
    # (equal n_i here, so the per-item normalisation Y / n changes nothing)
    from sklearn_hcal import SoftLabelClassifier

    X, Y, _ = tabular
    ref = SoftLabelClassifier(
        LogisticRegression(C=np.inf, tol=1e-10, max_iter=5000), strategy="weighted"
    ).fit(X, Y)
    net = make_soft_label_net(
        Linear,
        optimizer=torch.optim.LBFGS,
        optimizer__line_search_fn="strong_wolfe",
        optimizer__max_iter=50,
        optimizer__tolerance_grad=1e-9,
        lr=1.0,
        batch_size=-1,
        max_epochs=5,
        random_state=0,
    ).fit(X, Y)
    # float32 training: measured max difference 1.7e-4
    np.testing.assert_allclose(net.predict_proba(X), ref.predict_proba(X), atol=1e-3)


@pytest.mark.slow
def test_seeding_is_local_and_reproducible(tabular):
    X, Y, _ = tabular
    state = torch.get_rng_state()
    a = make_soft_label_net(Linear, max_epochs=2, random_state=5).fit(X, Y)
    assert torch.equal(state, torch.get_rng_state())
    b = make_soft_label_net(Linear, max_epochs=2, random_state=5).fit(X, Y)
    c = make_soft_label_net(Linear, max_epochs=2, random_state=6).fit(X, Y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert np.abs(a.predict_proba(X) - c.predict_proba(X)).max() > 1e-4


@pytest.mark.slow
def test_grid_search_and_pipeline_on_histograms(tabular):
    X, Y, _ = tabular
    X = X.astype(np.float64) * 5 + 2  # StandardScaler outputs float64
    pipe = make_pipeline(
        StandardScaler(), make_soft_label_net(Linear, max_epochs=5, random_state=0)
    )
    grid = GridSearchCV(
        pipe, {"softlabelnetclassifier__lr": [1e-4, 1e-1]}, cv=3, error_score="raise"
    ).fit(X, Y)
    assert grid.best_params_ == {"softlabelnetclassifier__lr": 1e-1}
    # fold scores equal a manual KFold run (scikit-learn uses KFold for 2-D y)
    for j, lr in enumerate([1e-4, 1e-1]):
        manual = []
        for tr, te in KFold(3).split(X):
            fitted = clone(pipe).set_params(softlabelnetclassifier__lr=lr)
            fitted.fit(X[tr], Y[tr])
            P = fitted.predict_proba(X[te])
            manual.append(np.mean(P.argmax(1) == Y[te].argmax(1)))
        np.testing.assert_allclose(
            grid.cv_results_["mean_test_score"][j], np.mean(manual)
        )
    assert grid.predict_proba(X).shape == (len(X), 3)


@pytest.mark.slow
def test_validation_split_with_histograms(tabular):
    X, Y, _ = tabular
    net = make_soft_label_net(
        Linear,
        max_epochs=2,
        random_state=0,
        train_split=skorch.dataset.ValidSplit(4, stratified=False),
    ).fit(X, Y)
    acc = net.history[-1, "valid_acc"]
    assert 0.0 <= acc <= 1.0 and np.isfinite(net.history[-1, "valid_loss"])


@pytest.mark.slow
def test_classes_and_string_labels(tabular):
    X, Y, Q = tabular
    names = np.array(["a", "b", "c"])
    net = make_soft_label_net(Linear, max_epochs=3, random_state=0)
    net.fit(X, names[Q.argmax(axis=1)])
    np.testing.assert_array_equal(net.classes_, names)
    assert set(net.predict(X)) <= set(names)
    # n_classes keeps every column when a class is missing from 1-D labels
    y = np.where(Q.argmax(axis=1) == 2, 0, Q.argmax(axis=1))
    net = make_soft_label_net(Linear, n_classes=3, max_epochs=2, random_state=0)
    net.fit(X, y)
    np.testing.assert_array_equal(net.classes_, [0, 1, 2])
    assert net.predict_proba(X).shape == (len(X), 3)
    # DataFrame columns become classes_
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(Y, columns=["x", "y", "z"])
    net = make_soft_label_net(Linear, max_epochs=1, random_state=0).fit(X, frame)
    np.testing.assert_array_equal(net.classes_, ["x", "y", "z"])


@pytest.mark.slow
def test_bad_input(tabular):
    X, Y, _ = tabular
    net = make_soft_label_net(Linear, max_epochs=1, random_state=0)
    with pytest.raises(NotFittedError):
        net.predict_proba(X)
    with pytest.raises(NotFittedError):
        skorch_logits(net, X)
    with pytest.raises(ValueError, match="skorch NeuralNet"):
        skorch_logits(LogisticRegression(), X)
    with pytest.raises(ValueError, match="non-negative"):
        clone(net).fit(X, Y - 2)
    with pytest.raises(ValueError, match="sum"):
        clone(net).fit(X, Y + 0.5)
    with pytest.raises(ValueError, match="NaN"):
        clone(net).fit(X, np.where(Y == 0, np.nan, Y))
    Y4 = np.column_stack([Y, np.ones(len(Y), dtype=int)])
    fixed_width = clone(net).set_params(module__n_classes=3)
    with pytest.raises(ValueError, match="module outputs 3 columns but y has 4"):
        fixed_width.fit(X, Y4)
    with pytest.raises(ValueError, match="outputs 3 columns but there are 4 classes"):
        fixed_width.fit(X, np.arange(len(X)) % 4)
    with pytest.raises(ValueError, match="NaN"):
        clone(net).fit(np.where(X > 2, np.nan, X), Y)
    with pytest.raises(ValueError, match="requires y to be passed"):
        clone(net).fit(X, None)
    with pytest.raises(ValueError, match="classes"):
        make_soft_label_net(Linear, n_classes=4, max_epochs=1).fit(X, Y)
    with pytest.raises(ValueError, match="optimizer"):
        make_soft_label_net(Linear, optimizer="rmsprop-ish")
    with pytest.raises(ValueError, match="n_classes"):
        make_soft_label_net(Linear, n_classes=1)
    with pytest.raises(ValueError, match="random_state"):
        make_soft_label_net(Linear, random_state="seed")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            make_soft_label_net(Linear, device="cuda")
    fitted = clone(net).fit(X, Y)
    with pytest.raises(ValueError, match="classes"):
        fitted.score(X, Y4)
    with pytest.raises(ValueError, match="X has 3 features, but .* expecting 4"):
        fitted.predict_proba(X[:, :3])
    with pytest.raises(ValueError, match="Reshape your data"):
        fitted.predict(X[0])
    with pytest.raises(ValueError, match="n_classes"):
        SmallCNN(n_classes=1)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_predefined_validation_counts_give_the_soft_cross_entropy(tabular, dtype):
    # fit's targets are normalised to Y / n, a predefined validation set's
    # were not: valid_loss was n = 5 times the soft cross-entropy, and
    # integer counts crashed inside torch
    from skorch.dataset import Dataset
    from skorch.helper import predefined_split

    X, Y, _ = tabular
    valid = Dataset(X[150:], Y[150:].astype(dtype))
    net = make_soft_label_net(
        Linear, max_epochs=2, random_state=0, train_split=predefined_split(valid)
    ).fit(X[:150], Y[:150])
    P_hat = Y[150:] / Y[150:].sum(axis=1, keepdims=True)
    logits = skorch_logits(net, X[150:])
    expected = -(P_hat * log_softmax(logits, axis=1)).sum(axis=1).mean()
    assert net.history[-1, "valid_loss"] == pytest.approx(expected, rel=1e-5)
    majority = np.mean(logits.argmax(axis=1) == Y[150:].argmax(axis=1))
    assert net.history[-1, "valid_acc"] == pytest.approx(majority)


@pytest.mark.slow
def test_bad_predefined_validation_targets(tabular):
    from skorch.dataset import Dataset
    from skorch.helper import predefined_split

    X, Y, _ = tabular
    Yv = Y[150:].copy()
    Yv[3] = 0
    net = make_soft_label_net(
        Linear,
        max_epochs=1,
        random_state=0,
        train_split=predefined_split(Dataset(X[150:], Yv)),
    )
    with pytest.raises(ValueError, match=r"validation targets.*row 3"):
        net.fit(X[:150], Y[:150])
    Yv[3] = -1
    with pytest.raises(ValueError, match="validation targets"):
        net.fit(X[:150], Y[:150])


@pytest.mark.slow
def test_module_width_follows_the_classes(tabular):
    # A module class taking n_classes gets one output per class of the data
    # unless module__n_classes is given; an instance is used as it is.
    X, Y, Q = tabular
    Y4 = np.column_stack([Y, np.ones(len(Y), dtype=int)])
    net = make_soft_label_net(Linear, max_epochs=1, random_state=0).fit(X, Y4)
    assert net.module_.lin.out_features == 4
    assert net.predict_proba(X).shape == (len(X), 4)
    labels = np.array(["a", "b"])[(Q[:, 0] > 0.3).astype(int)]
    binary = make_soft_label_net(Linear, max_epochs=1, random_state=0).fit(X, labels)
    assert binary.module_.lin.out_features == 2
    assert set(binary.predict(X)) <= {"a", "b"}
    given = make_soft_label_net(
        Linear, module__n_classes=3, max_epochs=1, random_state=0
    ).fit(X, Y)
    assert given.module_.lin.out_features == 3
    # an instance keeps its width: a mismatch is an error, not a wrong answer
    with pytest.raises(ValueError, match="outputs 3 columns but y has 4"):
        make_soft_label_net(Linear(), max_epochs=1).fit(X, Y4)
