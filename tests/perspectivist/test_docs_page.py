"""The user-guide page and the API reference of the perspectivist package.

The page's ``code-block:: python`` snippets run top to bottom in one
namespace, on the official Paraphrase files read through the data home
(``HCAL_DATA`` pointed at the shared copy, which holds ``lewidi/2025/``).
"""

import re
import textwrap

import numpy as np
import pytest

import sklearn_hcal.perspectivist as perspectivist
from tests.conftest import PROJECT_ROOT, SHARED_DATA, require_data

DOCS = PROJECT_ROOT / "docs"


def test_every_public_name_is_in_the_api_reference():
    api = (DOCS / "api.rst").read_text(encoding="utf-8")
    assert ".. currentmodule:: sklearn_hcal.perspectivist\n" in api
    missing = [n for n in perspectivist.__all__ if not re.search(rf"\b{n}\b", api)]
    assert missing == []


def test_the_page_is_in_the_user_guide():
    guide = (DOCS / "user_guide.rst").read_text(encoding="utf-8")
    assert re.search(r"^   perspectivist$", guide, flags=re.MULTILINE)


def _blocks(text):
    lines, blocks, i = text.splitlines(), [], 0
    while i < len(lines):
        i += 1
        if not re.match(r"^\.\. code-block:: python\s*$", lines[i - 1]):
            continue
        body = []
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
            body.append(lines[i])
            i += 1
        blocks.append(textwrap.dedent("\n".join(body)))
    return blocks


@pytest.mark.slow
def test_the_user_guide_code_runs(monkeypatch, tmp_path):
    require_data("lewidi", "2025", "Paraphrase_train.json")
    monkeypatch.setenv("HCAL_DATA", str(SHARED_DATA))
    monkeypatch.chdir(tmp_path)  # the page writes a submission folder
    ns = {"__name__": "docs_perspectivist"}
    with pytest.warns(UserWarning, match="not seen in fit"):  # by annotator
        for block in _blocks((DOCS / "perspectivist.rst").read_text("utf-8")):
            exec(compile(block, "perspectivist.rst", "exec"), ns)
    assert ns["P"].shape == (200, 11) and ns["soft"].shape == (50, 11)
    distance = ns["scores"]["perspectivist_absolute_distance"]
    assert ns["clf"].score(ns["X_dev"], ns["dev"].frame["label"]) == pytest.approx(
        1 - distance, abs=1e-12
    )
    # the files written and read back score as the predictions in memory
    assert ns["paths"]["soft"].is_file()
    np.testing.assert_allclose(
        ns["again"].to_numpy(), ns["soft"].loc[ns["again"].index].to_numpy()
    )
    # the temperature improves the proper score on new items
    histogram = ns["histogram_log_loss"]
    assert histogram(ns["dev"].counts, ns["calibrated"]) < histogram(
        ns["dev"].counts, ns["soft"]
    )
    assert np.all(ns["by_item"]["test_score"] > 0.8)
