"""``hcal evaluate`` validates each input at most twice (developer guide §checked-once).

Its reader checks the files (naming their lines); the report then validates
the arrays once for the printed table, the HTML file and the ``--plots``
figures together. The scans are counted by :mod:`tests._scans`, the inputs
recognised by their values.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.cli import main
from tests._scans import count_scans

pytest.importorskip("matplotlib")


def _write(path, values, classes):
    frame = pd.DataFrame(values, columns=classes)
    frame.insert(0, "uid", [f"item{i}" for i in range(len(frame))])
    frame.to_csv(path, index=False)


@pytest.mark.filterwarnings("ignore:.*single annotation")
def test_evaluate_html_and_plots_scan_each_input_at_most_twice(tmp_path, capsys):
    rng = np.random.default_rng(0)
    classes = ["e", "n", "c"]
    Y = rng.multinomial(5, rng.dirichlet(np.ones(3), 200))
    P1 = np.round(rng.dirichlet(np.ones(3), 200), 4)
    P2 = np.round(rng.dirichlet(np.ones(3), 200), 4)
    _write(tmp_path / "y.csv", Y, classes)
    _write(tmp_path / "a.csv", P1, classes)
    # the second model's columns in another order: matched by name
    as_written = P2[:, [2, 0, 1]]
    _write(tmp_path / "b.csv", as_written, ["c", "e", "n"])
    argv = [
        "evaluate",
        str(tmp_path / "y.csv"),
        "--pred",
        f"a={tmp_path / 'a.csv'}",
        "--pred",
        f"b={tmp_path / 'b.csv'}",
        "--bootstrap",
        "20",
        "--html",
        str(tmp_path / "report.html"),
        "--plots",
        str(tmp_path / "plots"),
    ]
    with count_scans({"Y": Y, "P1": P1, "P2": (P2, as_written)}) as scans:
        assert main(argv) == 0, capsys.readouterr().err
    # the file reader once, the report once: the table, the file and the
    # figures read what the report validated
    assert scans.per_input() == {"Y": 2, "P1": 2, "P2": 2}
    html = (tmp_path / "report.html").read_text()
    assert html.count("<figure") == 5
    assert "<dd>3 (e, n, c)</dd>" in html  # the file's class names
    assert len(list((tmp_path / "plots").glob("*.png"))) == 4
