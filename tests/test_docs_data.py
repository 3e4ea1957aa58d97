"""The gallery's data: found by the docs configuration, not by the examples.

``make docs`` runs ``docs/_gallery_data.py`` before Sphinx: with no data and
no network it must stop with one line naming ``HCAL_DATA`` (Sphinx's own
answer was an "Extension error, please report a bug" after every example
had failed). The examples carry no code that finds the project's checkout.
"""

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import PROJECT_ROOT

EXAMPLES = sorted((PROJECT_ROOT / "examples").glob("plot_*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_carry_no_checkout_plumbing(path):
    source = path.read_text(encoding="utf-8")
    assert "shared/data" not in source and 'shared" / "data' not in source
    assert not re.search(r"os\.environ\[[\"']HCAL_DATA[\"']\]\s*=", source)
    assert "sphinx_gallery_start_ignore" not in source


def test_docs_without_data_stop_with_one_line_naming_hcal_data(tmp_path):
    env = dict(
        os.environ,
        HCAL_DATA=str(tmp_path),
        HCAL_SHARED_DATA=str(tmp_path / "none"),
        # never download in a test: a proxy nobody listens on refuses at once
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
        https_proxy="http://127.0.0.1:9",
        http_proxy="http://127.0.0.1:9",
    )
    proc = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "docs" / "_gallery_data.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "HCAL_DATA" in lines[0] and "chaosnli_v1.0/" in lines[0]
    assert "Traceback" not in proc.stderr
