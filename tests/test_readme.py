"""The README's Python blocks run as written."""

import re

import pytest

from tests.conftest import PROJECT_ROOT


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


def test_quickstart_prints_the_numbers_the_readme_shows(tmp_path, monkeypatch, capsys):
    # The block after the quickstart is its output: a change that moves any
    # of those numbers (a metric, a calibrator, the data generator) must
    # update the README too.
    text = (PROJECT_ROOT / "README.md").read_text()
    match = re.search(r"```python\n(.*?)```\n\n```\n(.*?)```", text, flags=re.S)
    assert match, "the quickstart block must be followed by its output block"
    code, shown = match.groups()
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md quickstart", "exec"), {"__name__": "__readme__"})
    printed = capsys.readouterr().out

    def lines(s):
        return [line.split() for line in s.strip().splitlines()]

    assert lines(printed) == lines(shown)
