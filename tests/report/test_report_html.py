"""CalibrationReport: the notebook display, the HTML file and the registry.

The browser checks of the file are in ``test_html_browser.py``.
"""

import base64
import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.cli import main
from sklearn_hcal.metrics import _registry, annotator_report, human_calibration_report
from sklearn_hcal.report import CalibrationReport
from sklearn_hcal.report._calibration_report import report_inputs
from sklearn_hcal.report._figures import figure_disagreement
from tests.report._html_parse import metric_table, read_tables

pytest.importorskip("matplotlib")


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    Q = rng.dirichlet([1.0, 1.0, 1.0], size=n)
    Y = np.array([rng.multinomial(5, q) for q in Q])
    noisy = Q + rng.uniform(0, 0.5, Q.shape)
    preds = {
        "oracle": Q,
        "noisy": noisy / noisy.sum(1, keepdims=True),
        "uniform": np.full(Q.shape, 1 / 3),
    }
    return Y, preds


@pytest.fixture(scope="module")
def boot_report():
    Y, preds = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return CalibrationReport.from_predictions(
            Y, preds, n_bootstrap=40, random_state=0
        )


def _metric_rows(html):
    """The header of the metric table and ``{row name: [cell, ...]}``."""
    return metric_table(html)


def test_notebook_shows_the_dataframe_values_to_the_printed_precision(boot_report):
    table = boot_report.table
    metrics = [c for c in table.columns if not c.endswith(("_low", "_high"))]
    for digits in (4, 2):
        boot_report.digits = digits
        header, body = _metric_rows(boot_report._repr_html_())
        # header: the index name, then each metric with its arrow
        assert [h.split()[0] for h in header[1:]] == metrics
        for name in table.index:
            for cell, metric in zip(body[name], metrics):
                text = cell[0].replace("★", "")
                value, low, high = (
                    table.at[name, metric],
                    table.at[name, f"{metric}_low"],
                    table.at[name, f"{metric}_high"],
                )
                expected = f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"
                assert " ".join(text.split()) == expected, (name, metric)
    boot_report.digits = 4


def test_best_model_marked_by_the_registry_direction():
    index = pd.Index(["a", "b", "c"], name="classifier")
    table = pd.DataFrame(
        {
            "accuracy": [0.5, 0.7, 0.7],  # higher is better: b and c tie
            "jsd": [0.3, 0.1, 0.2],  # lower is better: b
            "ent_ce_signed": [-0.1, 0.0, 0.2],  # a signed error: no best
            "not_a_metric": [1.0, 2.0, 3.0],
        },
        index=index,
    )
    _, body = _metric_rows(CalibrationReport(table)._repr_html_())
    best = {
        name: [c for c, (_, cls) in zip(table.columns, cells) if cls == "best"]
        for name, cells in body.items()
    }
    assert best == {"a": [], "b": ["accuracy", "jsd"], "c": ["accuracy"]}
    # one classifier is the best of nothing
    _, body = _metric_rows(CalibrationReport(table.iloc[:1])._repr_html_())
    assert all(cls != "best" for _, cls in body["a"])


def test_legend_lines_come_from_the_registry(boot_report):
    legend = read_tables(boot_report._repr_html_()).tables["legend"]
    lines = {row[0][0]: " ".join(t for t, _ in row) for row in legend[1:]}
    table = boot_report.table
    columns = [c for c in table.columns if not c.endswith(("_low", "_high"))]
    assert list(lines) == columns
    for column in columns:
        metric = _registry.get_metric(column)
        line = lines[column]
        assert metric.description in line and metric.source in line
        words = "higher is better" if metric.greater_is_better else "lower is better"
        assert words in line
        proper = {True: "yes", False: "no", None: "–"}[getattr(metric, "proper", None)]
        assert f"proper score: {proper}" in line
    frame = boot_report.legend()
    assert list(frame.index) == columns
    assert frame.loc["accuracy", "direction"] == "higher is better"


def test_file_is_self_contained(boot_report):
    html = boot_report.to_html()
    reader = read_tables(html)
    assert "<script" not in html.lower() and "@import" not in html
    assert "url(" not in html and "<link" not in html.lower()
    # no reference to another host: no scheme, no protocol-relative address
    assert not re.search(r"(?i)\b(?:https?|ftp|wss?):", html)
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?//""", html)
    for tag, attrs in reader.tags:
        if "href" in attrs:
            assert attrs["href"].startswith("#"), (tag, attrs)
        if "src" in attrs:
            assert attrs["src"].startswith("data:image/png;base64,"), tag
    # the figures: reliability, disagreement reliability, instance errors,
    # human-model marginals (and the calibration-dispersion map)
    ids = {attrs.get("id") for tag, attrs in reader.tags if tag == "figure"}
    assert ids == {
        "figure-majority_reliability",
        "figure-disagreement_reliability",
        "figure-instance_errors",
        "figure-marginals",
        "figure-calibration_dispersion",
    }
    from matplotlib.image import imread

    for img in reader.images:
        data = base64.b64decode(img["src"].split(",", 1)[1])
        pixels = imread(io.BytesIO(data), format="png")
        assert pixels.shape[:2] == (int(img["height"]), int(img["width"]))
        assert pixels[..., :3].std() > 0.05  # not a blank image
    # the data summary
    assert "<dt>items</dt><dd>300</dd>" in html
    assert "<dt>annotations per item</dt><dd>5 on every item</dd>" in html


def test_registered_metric_appears_in_all_three_outputs(tmp_path, capsys):
    metric = _registry.Metric(
        name="test_top_probability",
        column="test_top",
        function=None,
        greater_is_better=True,
        description="mean largest predicted probability (a metric of a test)",
        source="the report tests",
        per_item=lambda block, **kwargs: block.P.max(axis=1),
    )
    _registry.metrics()  # the declared metrics first
    _registry.register(metric)
    try:
        Y, preds = _data(n=60)
        expected = {name: P.max(axis=1).mean() for name, P in preds.items()}
        report = CalibrationReport.from_predictions(
            Y, preds, metrics=["jsd", "test_top"]
        )
        for html in (report._repr_html_(), report.to_html(figures=False)):
            header, body = _metric_rows(html)
            assert header[2] == "test_top ↑"
            for name, value in expected.items():
                assert body[name][1][0].split()[0] == f"{value:.4f}"
            assert metric.description in html and metric.source in html
        # the command line: its table and its HTML file
        np.save(tmp_path / "y.npy", Y)
        args = ["evaluate", str(tmp_path / "y.npy"), "--metrics", "jsd,test_top"]
        for name, P in preds.items():
            np.save(tmp_path / f"{name}.npy", P)
            args += ["--pred", f"{name}={tmp_path / name}.npy"]
        html_path = tmp_path / "out" / "report.html"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            assert main(args + ["--html", str(html_path)]) == 0
        out = capsys.readouterr().out
        rows = [
            [cell.strip() for cell in line.strip("|").split("|")]
            for line in out.splitlines()
            if line.startswith("|")
        ]
        assert rows[0] == ["prediction", "jsd", "test_top"]
        for name, value in expected.items():
            assert [name, f"{value:.4f}"] == [r for r in rows if r[0] == name][0][::2]
        assert "* test_top: " + metric.description in out  # the legend line
        html = html_path.read_text(encoding="utf-8")
        assert metric.description in html
        header, body = _metric_rows(html)
        assert header[2] == "test_top ↑"
        assert "figure-instance_errors" in html
    finally:
        _registry._REGISTRY.pop("test_top", None)
    assert "test_top" not in _registry.metrics()


def test_wrapped_table_without_data():
    Y, preds = _data(n=50)
    table = human_calibration_report(Y, preds, metrics=["jsd", "accuracy"])
    report = CalibrationReport(table)
    html = report.to_html()
    assert "<img" not in html and "Figures" not in html
    assert "<dt>items</dt><dd>50</dd>" in html
    assert "<dt>intervals</dt><dd>none (no bootstrap)</dd>" in html
    assert report.formatted().shape == (3, 2)
    assert repr(report).startswith("CalibrationReport\n")
    # a column the registry does not know: no direction, said so
    legend = CalibrationReport(table.assign(extra=1.0)).legend()
    assert legend.loc["extra", "direction"] == "no better side"
    assert legend.loc["extra", "description"] == "not a metric of the registry"
    legend = CalibrationReport(table.assign(jsd_2=1.0), aliases={"jsd_2": "jsd"})
    assert legend.legend().loc["jsd_2", "direction"] == "lower is better"
    jsd = _registry.get_metric("jsd")
    assert legend.legend().loc["jsd_2", "description"] == f"{jsd.description} (as jsd)"
    # the command line's --names long tables: the long names are the metrics
    long = table.rename(columns=lambda c: _registry.get_metric(c).name)
    legend = CalibrationReport(long).legend()
    assert legend.loc["jensen_shannon_distance", "description"] == jsd.description
    assert legend.loc["majority_accuracy_score", "direction"] == "higher is better"


def test_per_annotator_table_and_counts_in_summary():
    ann = pd.DataFrame(
        {"item": [0, 0, 1, 1], "annotator": ["A", "B"] * 2, "label": [0, 1, 1, 1]}
    )
    pred = ann.assign(label=[0, 0, 1, 0])
    Y, preds = _data(n=40)
    for groups, words in ((None, "annotators</dt><dd>2<"), ({"A": 1, "B": 1}, "")):
        table = annotator_report(ann, pred, groups=groups)
        html = CalibrationReport.from_predictions(
            Y, preds, metrics=["jsd"], annotator_table=table
        ).to_html(figures=False)
        plain = read_tables(html).tables["plain"]
        assert [t for t, _ in plain[0]] == [table.index.name, *table.columns]
        assert len(plain) == len(table) + 1
        assert words in html
    assert "annotator groups</dt><dd>1<" in html


def test_bad_arguments():
    Y, preds = _data(n=20)
    table = human_calibration_report(Y, preds, metrics=["jsd"])
    with pytest.raises(ValueError, match="y_true and predictions go together"):
        CalibrationReport(table, y_true=Y).to_html()
    with pytest.raises(ValueError, match="table must be a DataFrame"):
        CalibrationReport(table.to_numpy())._repr_html_()
    with pytest.raises(ValueError, match="digits must be a non-negative integer"):
        CalibrationReport(table, digits=-1).formatted()
    with pytest.raises(ValueError, match="return_bootstrap"):
        CalibrationReport.from_predictions(Y, preds, return_bootstrap=True)
    with pytest.raises(ValueError, match="digits"):
        CalibrationReport.from_predictions(Y, preds, digits=-2)


def test_repeated_names_are_named():
    # pandas answered "The truth value of a Series is ambiguous"
    Y, preds = _data(n=20)
    table = human_calibration_report(Y, preds, metrics=["jsd", "kl"], n_bootstrap=5)
    twice = pd.concat([table, table.iloc[[1]]])
    for show in (CalibrationReport.to_html, CalibrationReport._repr_html_):
        with pytest.raises(
            ValueError, match=r"classifier 'noisy' more than once .*\[1, 3\]"
        ):
            show(CalibrationReport(twice))
    with pytest.raises(ValueError, match="classifier 'noisy' more than once"):
        CalibrationReport(twice).formatted()
    columns = pd.concat([table[["jsd"]], table[["jsd", "kl"]]], axis=1)
    with pytest.raises(ValueError, match="column 'jsd' more than once"):
        CalibrationReport(columns).to_html()


_PLANTED = "<b id='planted'>x</b>&amp;"


def test_every_value_that_reaches_the_page_is_escaped():
    # a string in an interval cell reached the HTML as markup
    index = pd.Index([f"model {_PLANTED}", "other"], name=f"by {_PLANTED}")
    table = pd.DataFrame(
        {
            "jsd": [0.1, _PLANTED],
            "jsd_low": [_PLANTED, 0.05],
            "jsd_high": [0.2, _PLANTED],
            f"col {_PLANTED}": [1.0, 2.0],
        },
        index=index,
    )
    annotators = pd.DataFrame({f"n {_PLANTED}": [_PLANTED]}, index=[_PLANTED])
    report = CalibrationReport(
        table,
        title=f"title {_PLANTED}",
        notes=[f"note {_PLANTED}"],
        annotator_table=annotators,
        aliases={f"col {_PLANTED}": "jsd"},
    )
    for html in (report.to_html(), report._repr_html_()):
        reader = read_tables(html)
        assert not any(
            tag == "b" or attrs.get("id") == "planted" for tag, attrs in reader.tags
        )
        header, body = metric_table(html)
        assert header[0] == f"by {_PLANTED}"
        assert header[2] == f"col {_PLANTED} ↓"
        assert body[f"model {_PLANTED}"][0][0] == f"0.1000 [{_PLANTED}, 0.2000]"
        assert body["other"][0][0] == f"{_PLANTED} [0.0500, {_PLANTED}]"
        assert reader.tables["plain"][1][0][0] == _PLANTED
        assert f"title {_PLANTED}" not in html  # only its escaped form
        assert "title &lt;b id=&#x27;planted&#x27;&gt;x&lt;/b&gt;&amp;amp;" in html


@pytest.fixture(scope="module")
def fitted():
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    from sklearn_hcal import AlphaCalibrator
    from sklearn_hcal.datasets import make_label_histograms

    X, Y, _ = make_label_histograms(
        900, n_classes=3, n_annotations=5, concentration=1.0, random_state=0
    )
    clf = LogisticRegression().fit(X[:300], Y[:300].argmax(axis=1))
    alpha = AlphaCalibrator(FrozenEstimator(clf)).fit(X[300:600], Y[300:600])
    return X[600:], Y[600:], clf, alpha


def test_from_estimator_uses_an_alpha_models_own_disagreement(fitted):
    # the user need not remember disagreement=alpha.predict_disagreement(X)
    X, Y, clf, alpha = fitted
    report = CalibrationReport.from_estimator(
        {"raw": clf, "alpha": alpha}, X, Y, n_bootstrap=10, random_state=0
    )
    expected = human_calibration_report(
        Y,
        {"raw": clf.predict_proba(X), "alpha": alpha.predict_proba(X)},
        disagreement={"alpha": alpha.predict_disagreement(X)},
        n_bootstrap=10,
        random_state=0,
    )
    pd.testing.assert_frame_equal(report.table, expected)
    # α-calibration lowers the disagreement losses (Mimori et al., Table 2)
    table = report.table
    assert table.loc["alpha", "disagreement_ce"] < table.loc["raw", "disagreement_ce"]
    # the figure draws the same φ, and the summary says whose it is
    drawn = figure_disagreement(report_inputs(report), report.disagreement)
    phi = {name: values[1] for name, values in drawn.items()}
    np.testing.assert_array_equal(phi["alpha"], alpha.predict_disagreement(X))
    P = clf.predict_proba(X)
    np.testing.assert_allclose(phi["raw"], 1 - (P**2).sum(axis=1), atol=1e-12)
    html = report.to_html(figures=False)
    assert (
        "<dt>predicted disagreement φ</dt><dd>alpha: the classifier&#x27;s own; "
        "raw: 1 − Σ q² of its probabilities</dd>"
    ) in html
    # the point prediction for all when asked
    plain = CalibrationReport.from_estimator(
        {"raw": clf, "alpha": alpha}, X, Y, response_method="predict_proba"
    )
    pd.testing.assert_frame_equal(
        plain.table,
        human_calibration_report(
            Y, {"raw": clf.predict_proba(X), "alpha": alpha.predict_proba(X)}
        ),
    )
    assert "<dt>predicted disagreement φ</dt>" not in plain.to_html(figures=False)


def test_from_estimator_names_and_classes(fitted):
    X, Y, clf, _ = fitted
    one = CalibrationReport.from_estimator(clf, X, Y, metrics=["kl"])
    assert list(one.table.index) == ["LogisticRegression"]
    named = CalibrationReport.from_estimator(clf, X, Y, name="lr", metrics=["kl"])
    assert list(named.table.index) == ["lr"]
    # predict_proba's columns are the classes_: matched by name with a
    # DataFrame in another column order, and with 1-D labels
    frame = pd.DataFrame(Y, columns=clf.classes_)[[2, 0, 1]]
    shuffled = CalibrationReport.from_estimator(clf, X, frame, metrics=["kl"])
    assert shuffled.table.loc["LogisticRegression", "kl"] == pytest.approx(
        one.table.loc["LogisticRegression", "kl"], rel=1e-12
    )
    labels = CalibrationReport.from_estimator(
        clf, X, Y.argmax(axis=1), metrics=["accuracy"]
    )
    assert labels.table.iloc[0, 0] == pytest.approx(
        np.mean(clf.predict(X) == Y.argmax(axis=1))
    )


def test_from_estimator_bad_arguments(fitted):
    from sklearn.linear_model import LinearRegression

    X, Y, clf, _ = fitted
    for param in ("disagreement", "labels"):
        with pytest.raises(ValueError, match=f"{param} is not a parameter of from_e"):
            CalibrationReport.from_estimator(clf, X, Y, **{param: None})
    with pytest.raises(ValueError, match="estimator"):
        CalibrationReport.from_estimator(LinearRegression().fit(X, Y[:, 0]), X, Y)
    with pytest.raises(ValueError, match="estimator 'bad' .* no predict_proba"):
        CalibrationReport.from_estimator(
            {"ok": clf, "bad": LinearRegression().fit(X, Y[:, 0])}, X, Y
        )
    with pytest.raises(ValueError, match="response_method"):
        CalibrationReport.from_estimator(clf, X, Y, response_method="nope")


def test_without_matplotlib_the_file_says_so(monkeypatch):
    Y, preds = _data(n=30)
    report = CalibrationReport.from_predictions(Y, preds, metrics=["jsd"])
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    with pytest.warns(UserWarning, match="no figures: matplotlib is not installed"):
        html = report.to_html()
    assert "No figures: matplotlib is not installed" in html and "<img" not in html


def test_cli_html_refuses_a_folder(tmp_path, capsys):
    Y, preds = _data(n=20)
    np.save(tmp_path / "y.npy", Y)
    np.save(tmp_path / "p.npy", preds["noisy"])
    code = main(
        ["evaluate", str(tmp_path / "y.npy"), "--pred", str(tmp_path / "p.npy")]
        + ["--html", str(tmp_path)]
    )
    assert code == 2
    assert "--html" in capsys.readouterr().err
