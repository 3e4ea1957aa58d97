"""The ``hcal`` entry point: the parser, and the one place errors are reported.

Subcommands (each in its own module):

* ``hcal demo`` (:mod:`sklearn_hcal.cli._demo`) -- the library's main job on
  the embedded Mix-Digits data;
* ``hcal evaluate`` (:mod:`sklearn_hcal.cli._evaluate`) -- score prediction
  files against label-histogram files;
* ``hcal lewidi`` (:mod:`sklearn_hcal.cli._submit`) -- train a per-annotator
  model and write a LeWiDi 2025 submission.

Exit status: 0 on success; 2 with a one-line ``hcal: error: ...`` on stderr
for bad usage or bad input -- a :class:`UsageError`, or any ``ValueError``
the library raises about the input (its message names the argument or the
file and row); 130 when interrupted. Other exceptions keep their traceback:
they are bugs.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main", "build_parser", "UsageError"]


class UsageError(Exception):
    """Bad usage or bad input: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the usage block and exits; the CLI wants one line with
    # a hint and lets main() decide the exit status.
    def error(self, message):
        raise UsageError(f"{message} (try '{self.prog} --help')")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"expected a non-negative integer, got {value}"
        )
    return value


def _pred_spec(text: str) -> tuple[str, str]:
    """``NAME=FILE``, or ``FILE`` named by its stem (``a/roberta.json``: roberta).

    A bare ``FILE`` is read as such only when it contains no ``=``; a path
    with ``=`` in it needs an explicit ``NAME=``.
    """
    name, sep, path = text.partition("=")
    if not sep and text.strip():
        path = text.strip()
        name = Path(path).stem
        if name:
            return name, path
    if not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(
            f"expected NAME=FILE or FILE (e.g. --pred roberta=preds.json), got {text!r}"
        )
    return name.strip(), path.strip()


def build_parser() -> argparse.ArgumentParser:
    """The ``hcal`` argument parser (subcommands ``demo`` and ``evaluate``).

    Returns
    -------
    parser : argparse.ArgumentParser
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
    from . import _demo, _evaluate, _submit

    parser = _Parser(
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
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _demo.add_subcommand(sub, _positive_int)
    _evaluate.add_subcommand(sub, _positive_int, _pred_spec)
    _submit.add_subcommand(sub, _positive_int)
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
            raise UsageError(
                "a command is required: demo or evaluate (try 'hcal --help')"
            )
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            return args.handler(args)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    except (UsageError, ValueError) as exc:
        # The one place errors become the CLI's answer: the library's
        # ValueErrors name the argument, file and row already.
        message = " ".join(str(exc).split())
        sys.stderr.write(f"hcal: error: {message}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("hcal: interrupted\n")
        return 130
