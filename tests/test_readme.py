"""The README's Python blocks run as written."""

import re

import pytest

from .conftest import PROJECT_ROOT


def _python_blocks():
    text = (PROJECT_ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_has_a_quickstart():
    assert _python_blocks(), "README.md has no ```python block"


@pytest.mark.parametrize("i", range(len(_python_blocks())))
def test_readme_block_runs(i, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = _python_blocks()[i]
    exec(compile(code, f"README.md block {i}", "exec"), {"__name__": "__readme__"})
