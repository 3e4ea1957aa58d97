"""A report validates its inputs once (developer guide §checked-once).

The labels and every prediction are scanned by ``_validation``'s value
checks (counted by :mod:`tests._scans`); a two-model report with its HTML
file and figures may scan each at most twice (the bound that keeps a report
of large inputs within twice one pass) -- it scans each once, and drawing
the file adds no scan.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.metrics import human_calibration_report
from sklearn_hcal.report import CalibrationReport
from tests._scans import count_scans

pytest.importorskip("matplotlib")
pytestmark = pytest.mark.filterwarnings("ignore:3 of 300 items have a single")


def _data(n=300, k=3, seed=0):
    rng = np.random.default_rng(seed)
    Y = rng.multinomial(5, rng.dirichlet(np.ones(k), n))
    Y[:3] = [[1, 0, 0]] * 3  # items with a single annotation
    P1 = rng.dirichlet(np.ones(k), n)
    P2 = np.round(rng.dirichlet(np.ones(k), n), 3)  # rows renormalised
    phi = np.clip(1 - (P1**2).sum(axis=1) + 0.05, 0, 0.6)
    return Y, P1, P2, phi


@pytest.mark.parametrize("own_phi", [False, True], ids=["point_phi", "own_phi"])
def test_report_with_html_and_figures_scans_each_input_once(tmp_path, own_phi):
    Y, P1, P2, phi = _data()
    inputs = {"Y": Y, "P1": P1, "P2": P2, "phi": phi}
    params = {"disagreement": {"b": phi}} if own_phi else {}
    with count_scans(inputs) as scans:
        report = CalibrationReport.from_predictions(
            Y, {"a": P1, "b": P2}, n_bootstrap=20, random_state=0, **params
        )
        built = scans.per_input()
        report.to_html(tmp_path / "report.html")
        total = scans.per_input()
    assert (tmp_path / "report.html").read_text().count("<figure") == 5
    assert built == {"Y": 1, "P1": 1, "P2": 1, "phi": int(own_phi)}
    # the file reads what the report validated: nothing but φ, checked
    # against the labels it holds (the figure needs φ, the table validated
    # it for its columns)
    assert total == {"Y": 1, "P1": 1, "P2": 1, "phi": 2 * int(own_phi)}
    assert max(total.values()) <= 2  # the bound: at most two scans each


def test_report_of_a_table_validates_its_data_once_for_every_drawing(tmp_path):
    Y, P1, P2, _ = _data()
    table = human_calibration_report(Y, {"a": P1, "b": P2})
    frame = pd.DataFrame(Y, columns=["x", "y", "z"])
    with count_scans({"Y": Y, "P1": P1, "P2": P2}) as scans:
        report = CalibrationReport(table, y_true=frame, predictions={"a": P1, "b": P2})
        report.to_html(tmp_path / "one.html")
        report._repr_html_()
        report.to_html(tmp_path / "two.html", figures=False)
        assert scans.per_input() == {"Y": 1, "P1": 1, "P2": 1}
        # replaced data is data the report has not validated
        report.predictions = {"a": P2, "b": P1}
        report._repr_html_()
        assert scans.per_input() == {"Y": 2, "P1": 2, "P2": 2}
    # the frame's class names reach the summary
    assert "<dd>3 (x, y, z)</dd>" in (tmp_path / "one.html").read_text()


def test_human_calibration_report_scans_each_input_once():
    Y, P1, P2, phi = _data()
    with count_scans({"Y": Y, "P1": P1, "P2": P2, "phi": phi}) as scans:
        human_calibration_report(
            Y,
            {"a": P1, "b": P2},
            disagreement={"a": phi},
            n_bootstrap=10,
            random_state=0,
        )
    assert scans.per_input() == {"Y": 1, "P1": 1, "P2": 1, "phi": 1}
