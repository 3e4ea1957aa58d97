"""The metric registry: one declaration per metric, every consumer derived.

Each declared metric must give the same number as its public metric function
(the independent reference) through all three consumers: the report column,
the scorer and ``hcal evaluate --metrics``.
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin

from sklearn_hcal import metrics as M
from sklearn_hcal.cli import main
from sklearn_hcal.datasets import make_label_histograms
from sklearn_hcal.metrics import (
    HUMAN_SCORERS,
    get_human_scorer,
    get_human_scorer_names,
    human_calibration_report,
    loss_decomposition,
)
from sklearn_hcal.metrics import _registry as R
from tests._tables import DISAGREEMENT, EXPECTED, NOT_FOR_ALL_LABELS

ENTRIES = R.metrics()
ROOT = Path(__file__).resolve().parents[2] / "sklearn_hcal"


class FixedPredictions(ClassifierMixin, BaseEstimator):
    """Returns given probabilities and disagreement for items ``X[:, 0]``."""

    def __init__(self, P=None, phi=None):
        self.P = P
        self.phi = phi

    def fit(self, X, y=None):
        self.classes_ = np.arange(self.P.shape[1])
        return self

    def predict_proba(self, X):
        return self.P[np.asarray(X)[:, 0].astype(int)]

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)

    def predict_disagreement(self, X):
        return self.phi[np.asarray(X)[:, 0].astype(int)]


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    rng = np.random.RandomState(0)
    n_ann = rng.randint(1, 8, size=250)  # some items with one label
    Z, Y, _ = make_label_histograms(250, 3, n_ann, random_state=0)
    P = softmax(Z + rng.normal(scale=1.0, size=Z.shape), axis=1)
    phi = 0.8 * (1.0 - np.sum(P * P, axis=1))  # a model's own φ
    folder = tmp_path_factory.mktemp("registry")
    np.save(folder / "Y.npy", Y)
    np.save(folder / "P.npy", P)
    return Y, P, phi, folder


def _reference(metric, Y, P, phi):
    """The public function's value (the IL columns: loss_decomposition's)."""
    if metric.function is None:
        table = loss_decomposition(Y, P)
        return table.loc["IL", "debiased" if metric.kwargs["debiased"] else "plugin"]
    pred = phi if metric.response == "disagreement" else P
    return metric.function(Y, pred, **metric.kwargs)


@pytest.mark.parametrize("column", list(ENTRIES))
def test_every_entry_is_a_report_column_a_scorer_and_a_cli_metric(
    column, problem, capsys
):
    Y, P, phi, folder = problem
    metric = ENTRIES[column]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # single-label items
        want = _reference(metric, Y, P, phi)
        report = human_calibration_report(
            Y, {"m": P}, metrics=[column], disagreement={"m": phi}
        )
        assert report.loc["m", column] == pytest.approx(want, rel=1e-12, abs=1e-14)

        if metric.scorer_name is None:
            # a signed error has no better side; IL has no metric function
            assert column in ("ent_ce_signed", "il", "il_plugin")
        else:
            X = np.arange(len(Y))[:, None]
            est = FixedPredictions(P, phi).fit(X)
            sign = 1 if metric.greater_is_better else -1
            score = get_human_scorer(metric.scorer_name)(est, X, Y)
            assert score == pytest.approx(sign * want, rel=1e-12, abs=1e-14)

        # The command line has no φ file: the disagreement metrics use
        # 1 − Σq², as the report does without disagreement=.
        cli_want = human_calibration_report(Y, {"m": P}, metrics=[column])
        for name in (column, metric.name):
            status = main(
                [
                    "evaluate",
                    str(folder / "Y.npy"),
                    "--pred",
                    f"m={folder / 'P.npy'}",
                    "--metrics",
                    name,
                    "--format",
                    "json",
                    "--names",
                    "short",
                ]
            )
            out = capsys.readouterr()
            assert status == 0, out.err
            assert json.loads(out.out)["m"][column] == pytest.approx(
                cli_want.loc["m", column], rel=1e-12, abs=1e-14
            )


def test_derived_names_keep_todays_scorers_and_columns():
    # scorer names of the metrics at their defaults (the shared independent table)
    expected_human = set(EXPECTED)
    assert set(HUMAN_SCORERS) == expected_human
    # undefined on some labels (n_i >= 2, unanimous items) or meaningful only
    # on ordered classes: scorers, but not in HUMAN_SCORERS
    assert set(DISAGREEMENT) | set(NOT_FOR_ALL_LABELS) <= (
        set(get_human_scorer_names()) - expected_human
    )
    assert R.default_columns() == [
        "accuracy",
        "ece",
        "classwise_ece",
        "rank_cs",
        "ent_ce",
        "dist_ce",
        "jsd",
        "kl",
        "log_loss",
        "sq_loss",
        "el",
        "cl",
        "ce",
        "dl",
        "disagreement_sq_loss",
        "disagreement_ce",
    ]


def test_lookup_by_column_long_name_and_scorer_name():
    assert R.get_metric("jsd") is R.get_metric("jensen_shannon_distance")
    assert R.get_metric("neg_kl_divergence").column == "kl"
    assert R.get_metric("epistemic_loss_plugin").kwargs == {"debiased": False}
    with pytest.raises(ValueError, match="not a report metric.*valid names"):
        R.get_metric("nope")


def test_register_refuses_a_clash_and_inconsistent_hooks():
    kl = R.get_metric("kl")
    with pytest.raises(ValueError, match="clashes"):
        R.register(
            R.Metric(
                "kl_divergence_again",
                "kl",
                M.kl_divergence,
                greater_is_better=False,
                description="",
                source="",
                per_item=kl.per_item,
            )
        )
    with pytest.raises(ValueError, match="exactly one of per_item, stats"):
        R.Metric("x", "x", None, greater_is_better=False, description="", source="")
    assert "kl_divergence_again" not in {m.name for m in R.metrics().values()}


def test_metric_params_are_validated_like_the_metric_function(problem):
    Y, P, _, _ = problem
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = human_calibration_report(
            Y,
            {"m": P},
            metrics=["ece", "cl", "accuracy", "jsd"],
            metric_params={
                "ece": {"n_bins": 20},
                "cl": {"n_bins": 5, "debiased": False},
                "majority_accuracy_score": {"ties": "any"},  # a long name
                "jsd": {"base": 2},
            },
        )
    assert got.loc["m", "ece"] == pytest.approx(
        M.expected_calibration_error(Y, P, n_bins=20), rel=1e-12
    )
    assert got.loc["m", "cl"] == pytest.approx(
        M.calibration_loss(Y, P, n_bins=5, debiased=False), rel=1e-12
    )
    assert got.loc["m", "accuracy"] == pytest.approx(
        M.majority_accuracy_score(Y, P, ties="any"), rel=1e-12
    )
    assert got.loc["m", "jsd"] == pytest.approx(
        M.jensen_shannon_distance(Y, P, base=2), rel=1e-12
    )
    with pytest.raises(
        ValueError, match=r"'n_bins' parameter of metric_params\['ece'\]"
    ):
        human_calibration_report(
            Y, P, metrics=["ece"], metric_params={"ece": {"n_bins": 0}}
        )
    with pytest.raises(ValueError, match="unknown parameter.*'bins'"):
        human_calibration_report(
            Y, P, metrics=["ece"], metric_params={"ece": {"bins": 3}}
        )
    with pytest.raises(ValueError, match="not among the report's columns"):
        human_calibration_report(
            Y, P, metrics=["jsd"], metric_params={"ece": {"n_bins": 3}}
        )


def test_metric_table_documents_every_entry():
    rows = R.metric_table()
    assert [r["column"] for r in rows] == list(ENTRIES)
    for row in rows:
        assert row["description"] and row["source"], row["column"]
        assert row["requires"] in R.REQUIREMENTS


def test_core_library_never_imports_the_command_line():
    core = [p for p in ROOT.rglob("*.py") if "cli" not in p.relative_to(ROOT).parts]
    offenders = [
        str(p.relative_to(ROOT))
        for p in core
        if p.name != "__main__.py"
        and any(
            needle in p.read_text(encoding="utf-8")
            for needle in ("from .cli", "from ..cli", "sklearn_hcal.cli")
        )
    ]
    assert offenders == []


def test_compat_exports_resolve():
    from sklearn_hcal.utils import _compat

    for name in _compat.__all__:
        assert getattr(_compat, name) is not None, name
    constraints = _compat.get_parameter_constraints(M.expected_calibration_error)
    assert "n_bins" in constraints
    assert _compat.get_parameter_constraints(len) == {}
