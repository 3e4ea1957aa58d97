"""The ``hcal`` entry point: the parser, and the one place errors are reported.

Subcommands, each in its own module listed in :data:`SUBCOMMANDS`:

* ``hcal demo`` (:mod:`sklearn_hcal.cli._demo_command`, running
  :mod:`sklearn_hcal.cli._demo`) -- the library's main job on the embedded
  Mix-Digits data;
* ``hcal evaluate`` (:mod:`sklearn_hcal.cli._evaluate`) -- score prediction
  files against label-histogram files;
* ``hcal lewidi`` (:mod:`sklearn_hcal.cli._submit_command`, running
  :mod:`sklearn_hcal.cli._submit`) -- train a per-annotator
  model and write a LeWiDi 2025 submission;
* ``hcal agreement`` (:mod:`sklearn_hcal.cli._agreement`) -- how much the
  annotators of a file agree.

A subcommand module defines ``add_subcommand(sub)``, which adds its parser
to the subparsers ``sub`` (built with :class:`~sklearn_hcal.cli._arguments.
Parser`) and sets ``handler`` (a function of the parsed arguments returning
the exit status); adding a subcommand is adding its module's name to
:data:`SUBCOMMANDS`. The module is imported to build every parser: it
imports its heavy parts (scikit-learn, PyTorch) inside the handler.
Subcommand modules never import this one: the error class is
:mod:`sklearn_hcal.cli._errors`, the shared argument types are in
:mod:`sklearn_hcal.cli._arguments` (developer guide §cli).

Exit status: 0 on success; 2 with a one-line ``hcal: error: ...`` on stderr
for bad usage or bad input -- an
:class:`~sklearn_hcal.cli._errors.InputError`, or any ``ValueError`` the
library raises about the input (its message names the argument or the file
and row); 130 when interrupted. Other exceptions keep their traceback: they
are bugs.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence

from ._arguments import Parser
from ._errors import InputError

__all__ = ["main", "build_parser", "SUBCOMMANDS"]

#: The modules of the subcommands, in the order ``hcal --help`` lists them.
SUBCOMMANDS = ("_demo_command", "_evaluate", "_submit_command", "_agreement")


def build_parser() -> Parser:
    """The ``hcal`` argument parser, with the subcommands of :data:`SUBCOMMANDS`.

    Returns
    -------
    parser : Parser
        The parser :func:`main` uses; a usage error raises instead of
        exiting, so that :func:`main` can report it in one line.

    Examples
    --------
    >>> from sklearn_hcal.cli import build_parser
    >>> args = build_parser().parse_args(
    ...     ["evaluate", "counts.npy", "--pred", "runs/roberta.json",
    ...      "--pred", "base=b.npy"])
    >>> args.command, args.counts
    ('evaluate', 'counts.npy')
    >>> args.preds  # --pred FILE is named by the file's stem
    [('roberta', 'runs/roberta.json'), ('base', 'b.npy')]
    """
    from .. import __version__

    parser = Parser(
        prog="hcal",
        description=(
            "Calibrate classifiers to human label distributions and evaluate them "
            "against those distributions."
        ),
        epilog="Run 'hcal COMMAND --help' for the options of a command.",
    )
    parser.add_argument(
        "--version", action="version", version=f"hcal (sklearn-hcal) {__version__}"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__package__}.{name}").add_subcommand(sub)
    parser.commands = list(sub.choices)  # for the error without a command
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())
    stream = sys.stderr if file is None else file
    try:
        stream.write(f"hcal: warning: {text}\n")
    except (OSError, ValueError):  # closed stream
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hcal`` command line.

    Parameters
    ----------
    argv : sequence of str, default=None
        Arguments without the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 2 on bad usage or bad input (one line on stderr),
        130 when interrupted.

    Examples
    --------
    >>> from sklearn_hcal.cli import main
    >>> main(["evaluate", "missing.npy", "--pred", "m=p.npy"])
    2
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if getattr(args, "handler", None) is None:
            # one line, like every other usage error (not the whole help)
            *first, last = parser.commands
            commands = f"{', '.join(first)} or {last}" if first else last
            raise InputError(f"a command is required: {commands} (try 'hcal --help')")
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            return args.handler(args)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    except ValueError as exc:  # InputError included
        # The one place errors become the CLI's answer: the library's
        # ValueErrors name the argument, file and row already.
        message = " ".join(str(exc).split())
        sys.stderr.write(f"hcal: error: {message}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("hcal: interrupted\n")
        return 130
