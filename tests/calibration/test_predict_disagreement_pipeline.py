"""``sklearn_hcal.predict_disagreement``: a model's own φ through Pipelines.

A Pipeline exposes only scikit-learn's methods; the helper reaches the
final step's ``predict_disagreement`` after the earlier steps' transforms.
Checked against eq. 19 of Mimori et al. (2021), φ = α0/(α0+1)·(1 − Σ f²),
from the final step's own concentration and the Pipeline's probabilities.
"""

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

import sklearn_hcal
from sklearn_hcal import AlphaCalibrator, predict_disagreement
from sklearn_hcal.datasets import make_label_histograms

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def data():
    X, Y, _ = make_label_histograms(240, 3, 5, n_features=5, random_state=0)
    return X, Y


def _alpha():
    return AlphaCalibrator(LogisticRegression(), cv=2, random_state=0)


def _eq19(alpha, Xt, P):
    a0 = alpha.predict_concentration(Xt)
    return a0 / (a0 + 1) * (1 - (P**2).sum(axis=1))


def test_pipeline_ending_with_alpha_calibrator(data):
    X, Y = data
    X = X * np.array([1.0, 3.0, 0.3, 2.0, 1.0]) + 1.0  # so that scaling matters
    pipe = make_pipeline(StandardScaler(), _alpha()).fit(X, Y)
    assert not hasattr(pipe, "predict_disagreement")  # why the helper exists
    phi = predict_disagreement(pipe, X)
    Xt = pipe[0].transform(X)
    np.testing.assert_allclose(phi, _eq19(pipe[-1], Xt, pipe.predict_proba(X)))
    # not the model on the raw features: the scaler was applied
    assert not np.allclose(phi, pipe[-1].predict_disagreement(X))


def test_nested_pipeline_and_plain_estimator(data):
    X, Y = data
    inner = make_pipeline(PCA(n_components=3), _alpha())
    pipe = make_pipeline(StandardScaler(), inner).fit(X, Y)
    Xt = inner[0].transform(pipe[0].transform(X))
    np.testing.assert_allclose(
        predict_disagreement(pipe, X), _eq19(inner[-1], Xt, pipe.predict_proba(X))
    )
    alone = _alpha().fit(X, Y)
    np.testing.assert_array_equal(
        predict_disagreement(alone, X), alone.predict_disagreement(X)
    )


def test_public_name():
    assert sklearn_hcal.predict_disagreement is predict_disagreement
    assert "predict_disagreement" in sklearn_hcal.__all__


def test_model_without_disagreement_names_the_alternative(data):
    X, Y = data
    pipe = make_pipeline(StandardScaler(), LogisticRegression())
    pipe.fit(X, Y.argmax(axis=1))
    with pytest.raises(ValueError, match="estimator: Pipeline has no") as info:
        predict_disagreement(pipe, X)
    assert "predicted_disagreement(estimator.predict_proba(X))" in str(info.value)


def test_component_out_of_reach_is_named(data):
    X, Y = data
    pipe = make_pipeline(_alpha(), FunctionTransformer()).fit(X, Y)
    with pytest.raises(ValueError, match="AlphaCalibrator, a component of Pipeline"):
        predict_disagreement(pipe, X)
