"""The HTML report opened in a real browser: headless Chromium, network off.

Two runs of the browser's command line per page (no driver package needed):

* the file itself, with ``--screenshot`` and the browser's log on standard
  error (``--enable-logging=stderr``): a page without scripts must log no
  console message, and the screenshot must not be blank;
* an instrumented copy of it -- the same page with a probe script that the
  test injects, which records load errors (images, blocked fetches, policy
  violations), every image's ``naturalWidth`` once the page has loaded and
  the rendered text of each legend line -- read back with ``--dump-dom``.

The network is disabled by an unusable proxy and a host resolver that
resolves nothing. A control page with a broken image, a remote image and a
console error shows that each check can fail. Chromium comes from the system
packages (``.ci/run`` installs it); without it the tests skip, except in CI
(``CI=true`` or ``HCAL_REQUIRE_DATA=1``), where they fail.
"""

import json
import re
import subprocess
import warnings

import numpy as np
import pytest

from sklearn_hcal.metrics import _registry
from sklearn_hcal.report import CalibrationReport
from tests.conftest import require_chromium

pytest.importorskip("matplotlib")


_PROBE = """<script>
window.__errors = [];
window.addEventListener('error', function (e) {
  var t = e.target;
  window.__errors.push(t && t !== window
    ? 'load error: ' + t.tagName + ' ' + String(t.src || t.href || '').slice(0, 80)
    : 'script error: ' + e.message);
}, true);
document.addEventListener('securitypolicyviolation', function (e) {
  window.__errors.push('blocked: ' + e.blockedURI);
});
var error = console.error;
console.error = function () {
  window.__errors.push('console: ' + Array.prototype.join.call(arguments, ' '));
  error.apply(console, arguments);
};
window.addEventListener('load', function () {
  var images = Array.prototype.map.call(document.images, function (i) {
    return [i.complete, i.naturalWidth, i.naturalHeight];
  });
  var legend = Array.prototype.map.call(
    document.querySelectorAll('tr.legend'), function (r) { return r.innerText; });
  var box = function (e) {
    var r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, width: r.width};
  };
  var layout = {
    viewport: window.innerWidth,
    scroll_width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
    tables: Array.prototype.map.call(document.querySelectorAll('table'), box),
    figures: Array.prototype.map.call(document.images, function (i) {
      var b = box(i);
      b.natural = i.naturalWidth;
      b.id = i.parentNode.id;
      return b;
    })
  };
  var out = document.createElement('pre');
  out.id = 'hcal-probe';
  out.textContent = JSON.stringify(
    {errors: window.__errors, images: images, legend: legend, layout: layout});
  document.body.appendChild(out);
});
</script>"""


def _run(browser, page, tmp_path, *extra):
    profile = tmp_path / f"profile-{page.stem}"
    command = [
        browser,
        "--headless",
        "--no-sandbox",  # as root in a container; harmless otherwise
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        f"--user-data-dir={profile}",
        # the network is off: every address resolves nowhere, through a
        # proxy that does not exist
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        *extra,
        page.as_uri(),
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def _console_lines(stderr: str) -> list:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def _probe(browser, page, tmp_path, *extra) -> dict:
    html = page.read_text(encoding="utf-8")
    # The report forbids scripts (its Content-Security-Policy); the probe is
    # the test's, so the copy allows inline scripts and nothing more.
    html = html.replace(
        "default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';", 1
    )
    html = html.replace("<head>", "<head>" + _PROBE, 1)
    copy = page.with_name(page.stem + "-probe.html")
    copy.write_text(html, encoding="utf-8")
    dom = _run(browser, copy, tmp_path, *extra, "--dump-dom").stdout
    found = re.search(r'<pre id="hcal-probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    text = found.group(1)
    for entity, char in (("&quot;", '"'), ("&lt;", "<"), ("&gt;", ">")):
        text = text.replace(entity, char)
    return json.loads(text.replace("&amp;", "&"))


def _report_file(folder, *, n_classes, noise, n_bootstrap, seed, uniform=False):
    """A report of the oracle and a noisy model (and the uniform prediction)
    on 400 items of five labels, written to ``folder/report.html``."""
    rng = np.random.default_rng(seed)
    Q = rng.dirichlet(np.ones(n_classes), size=400)
    Y = np.array([rng.multinomial(5, q) for q in Q])
    noisy = Q + rng.uniform(0, noise, Q.shape)
    preds = {"oracle": Q, "noisy": noisy / noisy.sum(1, keepdims=True)}
    if uniform:
        preds["uniform"] = np.full(Q.shape, 1.0 / n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        report = CalibrationReport.from_predictions(
            Y, preds, n_bootstrap=n_bootstrap, random_state=0
        )
    path = folder / "report.html"
    report.to_html(path)
    return path, report


@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    return _report_file(
        tmp_path_factory.mktemp("report"),
        n_classes=3,
        noise=0.5,
        n_bootstrap=30,
        seed=0,
    )


@pytest.mark.slow
def test_report_in_headless_chromium(report_file, tmp_path):
    browser = require_chromium()
    page, report = report_file
    shot = tmp_path / "report.png"
    proc = _run(
        browser,
        page,
        tmp_path,
        "--enable-logging=stderr",
        "--v=0",
        "--hide-scrollbars",
        "--window-size=1280,2400",
        f"--screenshot={shot}",
    )
    assert _console_lines(proc.stderr) == []
    # the screenshot is not blank: many colours, and ink on a good part of it
    from matplotlib.image import imread

    pixels = imread(shot)[..., :3]
    assert pixels.shape[:2] == (2400, 1280)
    ink = np.any(pixels < 0.9, axis=-1).mean()
    colours = len(np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert ink > 0.02 and colours > 100, (ink, colours)

    found = _probe(browser, page, tmp_path)
    assert found["errors"] == []
    assert len(found["images"]) == 5  # the five figures
    for complete, width, height in found["images"]:
        assert complete and width > 0 and height > 0
    # each metric's legend line, as the browser renders it
    columns = list(report.legend().index)
    assert len(found["legend"]) == len(columns)
    for column, line in zip(columns, found["legend"]):
        metric = _registry.get_metric(column)
        line = " ".join(line.split())
        assert line.startswith(column)
        words = "higher is better" if metric.greater_is_better else "lower is better"
        for part in (words, metric.description, metric.source):
            assert " ".join(part.split()) in line, (column, part, line)


@pytest.mark.slow
def test_the_browser_checks_can_fail(tmp_path):
    browser = require_chromium()
    page = tmp_path / "control.html"
    page.write_text(
        "<!DOCTYPE html><html><head><title>control</title></head><body>"
        '<img src="http://example.com/x.png"><img src="data:image/png;base64,AAAA">'
        "<script>console.error('control error')</script></body></html>",
        encoding="utf-8",
    )
    # (a headless run without --dump-dom or --screenshot never ends)
    proc = _run(
        browser, page, tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom"
    )
    assert any("control error" in line for line in _console_lines(proc.stderr))
    found = _probe(browser, page, tmp_path)
    assert [w for _, w, _ in found["images"]] == [0, 0]
    assert any("example.com" in e for e in found["errors"])
    assert any(e.startswith("load error: IMG data:") for e in found["errors"])
    assert "console: control error" in found["errors"]


@pytest.fixture(scope="module")
def ten_class_report(tmp_path_factory):
    # the report people share: ten classes, three models, intervals, the 16
    # default columns, every figure
    return _report_file(
        tmp_path_factory.mktemp("report10"),
        n_classes=10,
        noise=0.3,
        n_bootstrap=20,
        seed=1,
        uniform=True,
    )


@pytest.mark.slow
def test_ten_classes_fit_a_1280_px_page(ten_class_report, tmp_path):
    # The marginals strip was 3072 px wide (its legend centred off-screen)
    # and the 16-column table 2400 px: both needed horizontal scrolling.
    browser = require_chromium()
    page, report = ten_class_report
    assert len(report.legend()) == 16
    window = ("--hide-scrollbars", "--window-size=1280,1000")
    layout = _probe(browser, page, tmp_path, *window)["layout"]
    assert layout["viewport"] == 1280
    assert layout["scroll_width"] <= 1280  # nothing to scroll sideways
    assert len(layout["tables"]) >= 3  # the metric blocks and the legend
    for table in layout["tables"]:
        assert table["right"] <= 1280, table
    figures = {f["id"]: f for f in layout["figures"]}
    assert len(figures) == 5 and "figure-marginals" in figures
    for figure in figures.values():
        # drawn for the page: shown at its own size, not shrunk to fit
        assert figure["natural"] <= 1280 - 16, figure
        assert figure["width"] == pytest.approx(figure["natural"], abs=2), figure
        assert figure["right"] <= 1280, figure
    # the screenshot of the whole page: no ink reaches its right edge, where
    # anything wider than the page would be cut
    shot = tmp_path / "report10.png"
    _run(
        browser,
        page,
        tmp_path,
        "--hide-scrollbars",
        f"--window-size=1280,{int(layout['height']) + 20}",
        f"--screenshot={shot}",
    )
    from matplotlib.image import imread

    pixels = imread(shot)[..., :3]
    assert pixels.shape[1] == 1280
    ink = np.any(pixels < 0.9, axis=-1)
    assert ink.mean() > 0.02  # the page was drawn
    columns = np.flatnonzero(ink.any(axis=0))
    assert columns.max() < 1280 - 4, columns.max()
