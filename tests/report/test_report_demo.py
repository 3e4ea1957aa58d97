"""``hcal demo`` writes report.html beside its tables."""

from html import escape as html_escape

import pytest

from sklearn_hcal.metrics import _registry
from tests.report._html_parse import metric_table, read_tables

pytest.importorskip("torch")
pytest.importorskip("skorch")
pytest.importorskip("matplotlib")


@pytest.mark.slow
def test_demo_writes_the_html_report(tmp_path):
    from sklearn_hcal.cli._demo import DEMO_METHODS, run_demo

    result = run_demo(
        tmp_path,
        quick=True,
        max_epochs=1,
        n_bootstrap=5,
        mc_samples=2,
        progress=False,
    )
    path = tmp_path / "report.html"
    assert str(path) in result.files
    html = path.read_text(encoding="utf-8")
    reader = read_tables(html)
    _, rows = metric_table(html)
    assert list(rows) == list(DEMO_METHODS)
    # every column of the demo's report, the two EL columns as el
    legend = {r[0][0]: " ".join(t for t, _ in r) for r in reader.tables["legend"][1:]}
    columns = [c for c in result.report.columns if not c.endswith(("_low", "_high"))]
    assert list(legend) == columns
    el = _registry.get_metric("el")
    for column in ("el_prior", "el_posterior"):
        assert f"{el.description} (as el)" in legend[column]
        assert "lower is better" in legend[column]
    # the Oracle's EL is the best of the EL column (it is the truth)
    j = columns.index("el")
    assert rows["Oracle"][j][1] == "best"
    assert len(reader.images) == 5
    assert html_escape(result.notes[0]) in html
