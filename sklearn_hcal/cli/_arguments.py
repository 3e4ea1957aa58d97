"""The parts of ``hcal``'s parser that every subcommand shares.

* :class:`Parser` -- an ``ArgumentParser`` whose usage errors raise
  :class:`~sklearn_hcal.cli._errors.InputError` (one line, exit status 2)
  instead of printing the usage block and exiting, and whose help texts may
  be functions, called when the help is shown;
* the argument types (:func:`positive_int`, :func:`pred_spec`);
* :class:`Options` -- options declared with the kinds of input they apply
  to. ``hcal evaluate`` reads two kinds of truth file (label histograms,
  and a LeWiDi ``.json`` file scored by the official track metrics); an
  option declares the kinds it applies to where it is added, and an option
  given with the other kind is refused in one line, so that a new option
  never relies on a list kept elsewhere (developer guide §cli).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from ._errors import InputError

__all__ = ["Options", "Parser", "positive_int", "pred_spec"]


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors raise ``InputError``."""

    # argparse prints the usage block and exits; the CLI wants one line with
    # a hint and lets main() decide the exit status.
    def error(self, message):
        raise InputError(f"{message} (try '{self.prog} --help')")

    def format_help(self):
        # A help text may be a function, called only when the help is shown:
        # texts built from the metric registry would import the library
        # (seconds) every time the parser is built.
        for action in self._actions:
            if callable(action.help):
                action.help = action.help()
        return super().format_help()


def positive_int(text: str) -> int:
    """A non-negative integer (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"expected a non-negative integer, got {value}"
        )
    return value


def pred_spec(text: str) -> tuple[str, str]:
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


class Options:
    """A subcommand's options, each declared with the kinds of input it takes.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    kinds : dict of str to str
        ``{kind: how the help and the errors name it}``, e.g.
        ``{"lewidi": "a LeWiDi .json truth"}``.

    Examples
    --------
    >>> from sklearn_hcal.cli._arguments import Options, Parser
    >>> parser = Parser(prog="hcal x")
    >>> options = Options(parser, {"a": "an A file", "b": "a B file"})
    >>> _ = options.add("--fast", kinds=("a",), action="store_true")
    >>> options.refuse(parser.parse_args(["--fast"]), "b")
    Traceback (most recent call last):
    ...
    sklearn_hcal.cli._errors.InputError: --fast: not available with a B file
    """

    def __init__(self, parser: argparse.ArgumentParser, kinds: dict[str, str]):
        self.parser = parser
        self.kinds = dict(kinds)
        self._declared: list[tuple[argparse.Action, tuple[str, ...]]] = []

    def add(self, *flags, kinds: Iterable[str] | None = None, group=None, **kwargs):
        """``(group or parser).add_argument(*flags, **kwargs)``; ``kinds``
        (default: every kind) are the inputs the option applies to."""
        kinds = tuple(self.kinds) if kinds is None else tuple(kinds)
        unknown = sorted(set(kinds) - set(self.kinds))
        if unknown:  # a programming error, caught by the tests
            raise ValueError(f"{flags[0]}: unknown kinds {unknown}")
        action = (group or self.parser).add_argument(*flags, **kwargs)
        self._declared.append((action, kinds))
        return action

    def only(self, kind: str) -> list[str]:
        """The flags of the options that apply to ``kind`` alone."""
        return [a.option_strings[-1] for a, k in self._declared if k == (kind,)]

    def refuse(self, args: argparse.Namespace, kind: str) -> None:
        """Raise ``InputError`` naming every option given (not at its
        default) that does not apply to ``kind``."""
        given = [
            action.option_strings[-1]
            for action, kinds in self._declared
            if kind not in kinds and getattr(args, action.dest) != action.default
        ]
        if given:
            raise InputError(
                f"{', '.join(given)}: not available with {self.kinds[kind]}"
            )
