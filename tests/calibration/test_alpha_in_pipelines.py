"""α-calibration, ensembles and skorch nets inside Pipelines and around modules."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn_hcal import make_soft_label_net  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _few_threads():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _histograms(n=100, n_features=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features).astype(np.float32)
    Y = rng.multinomial(5, [0.3, 0.3, 0.4], size=n)
    return X, Y


@pytest.mark.slow
def test_fit_leaves_a_module_instance_untouched_and_is_repeatable():
    # skorch trained a module instance in place: fit changed the `module`
    # parameter and a second fit went on from the trained weights
    # (predictions moved by 0.011 after 3 more epochs).
    X, Y = _histograms()
    module = torch.nn.Linear(4, 3)
    before = {k: v.clone() for k, v in module.state_dict().items()}
    net = make_soft_label_net(module, max_epochs=3, lr=0.05, random_state=0)
    first = net.fit(X, Y).predict_proba(X)
    assert net.module_ is not module
    for k, v in module.state_dict().items():
        assert torch.equal(v, before[k])
    second = net.fit(X, Y).predict_proba(X)
    np.testing.assert_array_equal(first, second)


@pytest.mark.slow
def test_mc_dropout_warns_when_all_dropout_layers_have_p_zero():
    # Dropout(p=0) passed the "has a dropout layer" check, and the ensemble
    # silently repeated one deterministic prediction (member spread 0.0).
    from sklearn.frozen import FrozenEstimator

    from sklearn_hcal.calibration import MCDropoutClassifier

    X, Y = _histograms()
    module = torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.Dropout(0.0), torch.nn.Linear(8, 3)
    )
    net = make_soft_label_net(module, max_epochs=1, random_state=0).fit(X, Y)
    with pytest.warns(UserWarning, match="p=0"):
        mc = MCDropoutClassifier(FrozenEstimator(net), n_samples=3).fit()
    assert np.ptp(mc.predict_proba_samples(X), axis=0).max() == 0.0


def test_ensemble_transform_with_pandas_output_names_set_output():
    # An ensemble's transform is 3-D; set_output(transform="pandas") failed in
    # pandas with "Must pass 2-d input. shape=(3, 60, 3)".
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    from sklearn_hcal.calibration import (
        AlphaCalibrator,
        TestTimeAugmentationClassifier,
    )

    rng = np.random.RandomState(0)
    X = rng.randn(60, 2)
    Y = rng.multinomial(4, [0.3, 0.3, 0.4], size=60)
    clf = LogisticRegression().fit(X, Y.argmax(1))
    tta = TestTimeAugmentationClassifier(
        FrozenEstimator(clf),
        augment=lambda X, random_state: X + random_state.standard_normal(X.shape),
        n_samples=3,
        random_state=0,
    ).fit()
    cal = AlphaCalibrator(FrozenEstimator(tta)).fit(X, Y)
    alpha = cal.transform(X)
    assert alpha.shape == (3, 60, 3)
    cal.set_output(transform="pandas")
    with pytest.raises(ValueError, match=r"set_output\(transform='pandas'\)"):
        cal.transform(X)


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(20, 100), (20, 10, 10), (20, 3, 8, 8)])
def test_small_cnn_names_image_shape_for_inputs_of_another_size(shape):
    # torch raised RuntimeErrors such as "shape '[20, 1, 8, 8]' is invalid for
    # input of size 2000" or "mat1 and mat2 shapes cannot be multiplied".
    from sklearn_hcal import SmallCNN

    X = np.random.RandomState(0).rand(*shape).astype(np.float32)
    Y = np.random.RandomState(1).multinomial(3, [0.5, 0.5], size=shape[0])
    net = make_soft_label_net(SmallCNN, max_epochs=1, random_state=0)
    with pytest.raises(ValueError, match="image_shape"):
        net.fit(X, Y)
    # the right size still works, flat or as images
    for X in (np.zeros((20, 64), np.float32), np.zeros((20, 1, 8, 8), np.float32)):
        assert net.fit(X, Y).predict_proba(X).shape == (20, 2)


@pytest.mark.slow
def test_alpha_logit_features_of_a_net_behind_a_pipeline_are_its_logits():
    # A skorch net at the end of a Pipeline gave log(predict_proba) as the
    # "logits" features (a per-row shift of the logits), so the same net gave
    # other concentrations alone and behind a scaler (alpha0 off by up to 14).
    from sklearn.frozen import FrozenEstimator
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_hcal.calibration import AlphaCalibrator

    rng = np.random.RandomState(0)
    X = rng.randn(200, 4) * 5 + 3
    Y = rng.multinomial(5, [0.3, 0.3, 0.4], size=200)
    torch.manual_seed(0)
    module = torch.nn.Sequential(
        torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)
    )
    net = make_soft_label_net(module, max_epochs=5, lr=0.05, random_state=0)
    pipe = make_pipeline(StandardScaler(), net).fit(X, Y)
    Xt = pipe[:-1].transform(X)
    alone = AlphaCalibrator(FrozenEstimator(pipe[-1])).fit(Xt, Y)
    piped = AlphaCalibrator(FrozenEstimator(pipe)).fit(X, Y)
    np.testing.assert_allclose(piped.feature_mean_, alone.feature_mean_)
    np.testing.assert_allclose(
        piped.predict_concentration(X), alone.predict_concentration(Xt), rtol=1e-9
    )


def test_alpha_keeps_the_members_of_an_ensemble_ending_a_pipeline():
    # FrozenEstimator(Pipeline(scaler, ensemble)) has no predict_proba_samples
    # itself, so the ensemble was read as one classifier (its mean): alpha0 of
    # shape (n,) instead of one per member, without the mixture of eq. 73.
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_hcal.calibration import (
        AlphaCalibrator,
        TestTimeAugmentationClassifier,
    )

    rng = np.random.RandomState(0)
    X = rng.randn(150, 3) * 3 + 1
    Y = rng.multinomial(5, [0.3, 0.3, 0.4], size=150)
    tta = TestTimeAugmentationClassifier(
        LogisticRegression(),
        augment=lambda X, random_state: X + random_state.standard_normal(X.shape),
        n_samples=4,
        random_state=0,
    )
    pipe = make_pipeline(StandardScaler(), tta).fit(X, Y.argmax(1))
    Xt = pipe[:-1].transform(X)
    piped = AlphaCalibrator(FrozenEstimator(pipe)).fit(X, Y)
    alone = AlphaCalibrator(FrozenEstimator(pipe[-1])).fit(Xt, Y)
    assert piped.predict_concentration(X).shape == (4, 150)
    np.testing.assert_allclose(
        piped.predict_disagreement(X), alone.predict_disagreement(Xt), rtol=1e-9
    )


def test_alpha_refuses_to_cross_fit_an_ensemble_ending_a_pipeline():
    # The refusal looked at the top-level estimator only: Pipeline(scaler,
    # TTA) was cloned and cross-fitted as a plain classifier (alpha0 of shape
    # (n,), members averaged away).
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_hcal.calibration import (
        AlphaCalibrator,
        TestTimeAugmentationClassifier,
    )

    rng = np.random.RandomState(0)
    X = rng.randn(60, 3)
    Y = rng.multinomial(5, [0.3, 0.3, 0.4], size=60)
    tta = TestTimeAugmentationClassifier(
        LogisticRegression(),
        augment=lambda X, random_state: X + random_state.standard_normal(X.shape),
        n_samples=3,
    )
    cal = AlphaCalibrator(make_pipeline(StandardScaler(), tta))
    with pytest.raises(ValueError, match="TestTimeAugmentationClassifier is a pre"):
        cal.fit(X, Y)
