"""scikit-learn's estimator checks that apply, and their long-table versions.

The aggregators are fitted on a long table of annotations (a DataFrame with
item, annotator and label columns) and return one row per *item*, not per
input row. scikit-learn's common checks feed numeric arrays of features, so
every check that fits on such data cannot apply; they are listed below with
that reason, and the properties they check are tested on annotation tables
further down (clone, get/set_params, pickling, idempotent fits, fit
returning self, not overwriting parameters or the input, unfitted errors,
``n_iter_``, sample-order and subset invariance, ``random_state``).
"""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import check_estimator

from sklearn_hcal import aggregation
from sklearn_hcal.aggregation import (
    MACE,
    DawidSkene,
)
from sklearn_hcal.model_selection import OneAnnotationPerItemSplit

from ._models import AGGREGATORS, aggregators
from ._tables import crowd_table

ESTIMATORS = aggregators(
    GLAD={"max_iter": 20}, MACE={"n_restarts": 2, "max_iter": 15, "random_state": 0}
)


def test_the_list_holds_every_public_aggregator():
    public = {
        name
        for name in aggregation.__all__
        if isinstance(getattr(aggregation, name), type)
        and issubclass(getattr(aggregation, name), BaseEstimator)
    }
    assert public == {Model.__name__ for Model in AGGREGATORS}


_ARRAY = (
    "fits on a numeric feature array; the aggregators take a long table of "
    "annotations (a DataFrame with item, annotator and label columns)"
)
_ROWS = (
    "expects one output row per input row; transform returns one row per "
    "item of the table"
)
_FEATURES = "checks n_features_in_; a table of annotations has no features"
_NOT_APPLICABLE = {
    name: _ARRAY
    for name in (
        "check_complex_data",
        "check_dict_unchanged",
        "check_dont_overwrite_parameters",
        "check_dtype_object",
        "check_estimator_sparse_array",
        "check_estimator_sparse_matrix",
        "check_estimator_sparse_tag",
        "check_estimators_dtypes",
        "check_estimators_empty_data_messages",
        "check_estimators_fit_returns_self",
        "check_estimators_nan_inf",
        "check_estimators_overwrite_params",
        "check_estimators_pickle",
        "check_estimators_pickle(readonly_memmap=True)",
        "check_f_contiguous_array_estimator",
        "check_fit2d_1feature",
        "check_fit2d_1sample",
        "check_fit2d_predict1d",
        "check_fit_check_is_fitted",
        "check_fit_idempotent",
        "check_fit_score_takes_y",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_pipeline_consistency",
        "check_positive_only_tag_during_fit",
        "check_readonly_memmap_input",
        "check_transformer_n_iter",
    )
}
_NOT_APPLICABLE.update(
    {
        "check_transformer_general": _ROWS,
        "check_transformer_general(readonly_memmap=True)": _ROWS,
        "check_transformer_data_not_an_array": _ROWS,
        "check_transformer_preserve_dtypes": _ROWS,
        "check_n_features_in": _FEATURES,
        "check_n_features_in_after_fitting": _FEATURES,
    }
)


def _expected_failures(estimator):
    if hasattr(estimator, "max_iter"):
        return _NOT_APPLICABLE
    # the check does nothing without max_iter
    return {k: v for k, v in _NOT_APPLICABLE.items() if k != "check_transformer_n_iter"}


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_sklearn_checks(estimator):
    # check_estimator rather than parametrize_with_checks: the ~30 expected
    # failures per estimator would each cost pytest a formatted traceback
    # (two minutes for the six estimators on a busy machine)
    expected = _expected_failures(estimator)
    results = check_estimator(
        estimator, expected_failed_checks=expected, on_skip=None, on_fail=None
    )
    status = {r["check_name"]: r["status"] for r in results}
    failed = {name: s for name, s in status.items() if s == "failed"}
    assert failed == {}
    # the list stays honest: every check listed as not applicable fails
    stale = [name for name in expected if status.get(_base(name)) == "passed"]
    assert stale == []
    applicable = [n for n, s in status.items() if s == "passed"]
    assert {
        "check_estimator_cloneable",
        "check_set_params",
        "check_estimator_repr",
    } <= set(applicable)


def _base(name: str) -> str:
    return name.split("(")[0]


# ---------------------------------------------------------------- long tables
ids = [type(e).__name__ for e in ESTIMATORS]


@pytest.fixture(scope="module")
def crowd():
    return crowd_table(40, 7, per_item=4, seed=5)[0]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=ids)
def test_clone_and_params(estimator):
    params = estimator.get_params()
    assert set(params) >= {"item", "annotator", "label", "classes"}
    copy = clone(estimator)
    assert copy.get_params() == params and copy is not estimator
    copy.set_params(item="tweet")
    assert copy.item == "tweet" and estimator.item == "item"


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=ids)
def test_fit_returns_self_and_leaves_input_and_params_alone(estimator, crowd):
    model = clone(estimator)
    params = model.get_params()
    before = crowd.copy()
    assert model.fit(crowd) is model
    pd.testing.assert_frame_equal(crowd, before)
    assert model.get_params() == params
    # prediction methods do not change the fitted state
    state = pickle.dumps(model)
    model.transform(crowd)
    model.predict(crowd)
    model.predict_annotator_proba(crowd)
    model.score(crowd)
    assert pickle.dumps(model) == state


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=ids)
def test_pickle_and_idempotent_fit(estimator, crowd):
    model = clone(estimator).fit(crowd)
    first = model.posteriors_.copy()
    restored = pickle.loads(pickle.dumps(model))
    pd.testing.assert_frame_equal(restored.transform(crowd), model.transform(crowd))
    # to rounding: unpickled arrays are contiguous copies of strided views
    np.testing.assert_allclose(
        restored.predict_annotator_proba(crowd),
        model.predict_annotator_proba(crowd),
        rtol=1e-13,
    )
    # fitting again gives the same model
    model.fit(crowd)
    pd.testing.assert_frame_equal(model.posteriors_, first)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=ids)
def test_fitted_attributes_and_n_iter(estimator, crowd):
    with pytest.raises(NotFittedError):
        clone(estimator).transform(crowd)
    model = clone(estimator).fit(crowd)
    assert list(model.posteriors_.columns) == list(model.classes_)
    np.testing.assert_allclose(model.posteriors_.sum(axis=1), 1.0)
    assert model.posteriors_.index.equals(model.items_)
    assert model.class_prior_.shape == (len(model.classes_),)
    if hasattr(estimator, "max_iter"):
        assert 1 <= model.n_iter_ <= estimator.max_iter


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=ids)
def test_subset_invariance_of_annotator_predictions(estimator, crowd):
    model = clone(estimator).fit(crowd)
    full = model.predict_annotator_proba(crowd)
    part = crowd.iloc[5:17]
    np.testing.assert_allclose(model.predict_annotator_proba(part), full[5:17])


def test_random_state():
    X = crowd_table(40, 7, per_item=4, seed=5)[0]
    a = MACE(n_restarts=1, random_state=3).fit(X)
    b = MACE(n_restarts=1, random_state=3).fit(X)
    c = MACE(n_restarts=1, random_state=np.random.RandomState(3)).fit(X)
    pd.testing.assert_frame_equal(a.posteriors_, b.posteriors_)
    pd.testing.assert_frame_equal(a.posteriors_, c.posteriors_)
    # another seed starts elsewhere (the strategies are not identified by
    # the labels alone, so their estimates differ)
    d = MACE(n_restarts=1, max_iter=3, random_state=4).fit(X)
    e = MACE(n_restarts=1, max_iter=3, random_state=3).fit(X)
    assert not np.allclose(d.strategies_, e.strategies_)


def test_grid_search_on_held_out_annotations(crowd):
    search = GridSearchCV(
        DawidSkene(),
        {"alpha": [0.0, 1.0]},
        cv=OneAnnotationPerItemSplit(3, random_state=0),
    ).fit(crowd)
    assert search.best_params_["alpha"] in (0.0, 1.0)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert isinstance(search.best_estimator_, DawidSkene)
