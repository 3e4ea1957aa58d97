"""The parser's structure: one error class, no import of the entry point,
subcommands from a list, options declared with the truths they apply to."""

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import sklearn_hcal.cli as cli
from sklearn_hcal.cli import build_parser, main
from sklearn_hcal.cli._errors import InputError
from sklearn_hcal.cli._main import SUBCOMMANDS

CLI = Path(inspect.getfile(cli)).parent


def _tree(path):
    return ast.parse(path.read_text(encoding="utf-8"))


def test_no_module_imports_the_entry_point():
    # _main imports the subcommands; a subcommand importing _main back (for
    # an error class) was an import cycle
    for path in CLI.glob("_*.py"):
        if path.name in ("_main.py", "__init__.py"):  # the face re-exports it
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.module.split(".")[-1] != "_main", path.name


def test_the_package_defines_one_error_class():
    errors = [
        (path.name, node.name)
        for path in CLI.glob("*.py")
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.ClassDef)
        and any(
            getattr(b, "id", "").endswith(("Error", "Exception")) for b in node.bases
        )
    ]
    assert errors == [("_errors.py", "InputError")]
    assert issubclass(InputError, ValueError)


def test_subcommands_come_from_the_list():
    parser = build_parser()
    assert parser.commands == ["demo", "evaluate", "lewidi", "agreement"]
    assert SUBCOMMANDS == (
        "_demo_command",
        "_evaluate",
        "_submit_command",
        "_agreement",
    )


def test_building_the_parser_imports_no_numerical_library():
    # every hcal command builds every subcommand's parser: a subcommand
    # module that imported numpy at its top would delay `hcal demo`'s
    # first line by the import's time
    code = (
        "import sys; from sklearn_hcal.cli import build_parser; build_parser(); "
        "print([m for m in ('numpy', 'pandas', 'sklearn') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_every_evaluate_option_declares_its_truths():
    args = build_parser().parse_args(["evaluate", "c.npy", "--pred", "p.npy"])
    declared = {a.dest for a, _ in args.options._declared}
    optional = {
        a.dest
        for a in args.options.parser._actions
        if a.option_strings and a.dest != "help"
    }
    assert optional == declared
    assert set(args.options.only("lewidi")) == {
        "--track",
        "--official-rounding",
        "--label-map",
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--official-rounding"], "--official-rounding: not available with label"),
        (["--track", "perspectivist"], "--track: not available with label"),
        (["--label-map=a:b"], "--label-map: not available with label"),
    ],
)
def test_lewidi_options_given_with_histograms_are_refused(argv, message, capsys):
    assert main(["evaluate", "c.npy", "--pred", "m=p.npy", *argv]) == 2
    assert message in capsys.readouterr().err


def test_no_command_names_the_commands(capsys):
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err == (
        "hcal: error: a command is required: demo, evaluate, lewidi or agreement "
        "(try 'hcal --help')\n"
    )
