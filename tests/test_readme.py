"""The README's Python blocks and its commands run as written."""

import os
import re
import subprocess
import sys
from pathlib import Path

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


def _shell_blocks(section: str) -> list[str]:
    """The ```bash blocks of a README section (``## <section>``)."""
    text = (PROJECT_ROOT / "README.md").read_text()
    match = re.search(rf"^## {section}\n(.*?)(?=^## )", text, flags=re.S | re.M)
    assert match, f"README.md has no section {section!r}"
    return re.findall(r"```bash\n(.*?)```", match.group(1), flags=re.S)


def test_readme_says_where_hcal_is_and_how_to_install():
    text = (PROJECT_ROOT / "README.md").read_text()
    assert ".venv/bin/hcal" in text  # make demo installs it there
    assert "from a checkout" in text  # no release on PyPI yet
    assert "--index-url https://download.pytorch.org/whl/cpu" in text
    # every make target the README names exists
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    for target in set(re.findall(r"\bmake ([a-z-]+)", text)):
        assert re.search(rf"^{target}:", makefile, flags=re.M), target


@pytest.mark.slow
@pytest.mark.skipif(
    not (PROJECT_ROOT / ".git").exists(), reason="needs a git checkout to clone"
)
def test_readme_commands_run_as_printed_from_a_fresh_clone(tmp_path):
    # The "Try it" commands, in a fresh clone of the committed tree. `make`
    # runs dry (-n: the target exists, nothing is installed); everything else
    # runs as printed, with .venv the environment running these tests.
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "--quiet", str(PROJECT_ROOT), str(clone)],
        check=True,
        timeout=120,
    )
    (clone / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    assert (clone / ".venv" / "bin" / "hcal").is_file()
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(PROJECT_ROOT))
    dry_make = 'make() { command make -n "$@" > /dev/null; }\n'
    printed = ""
    for block in _shell_blocks("Try it"):
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", dry_make + block],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"{block}\n{proc.stdout}\n{proc.stderr}"
        printed += proc.stdout
    assert (clone / "hcal-demo-quick" / "mimori.csv").is_file()
    # hcal evaluate's table names each prediction by its file's stem (a row,
    # or a column once transposed to fit the terminal)
    cells = {c.strip() for line in printed.splitlines() for c in line.split("|")}
    assert {"truth", "uniform"} <= cells, printed
