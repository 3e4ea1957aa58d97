"""Where data sets live on disk."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Return the folder that caches downloaded data sets, creating it.

    Precedence: the ``data_home`` argument, the ``HCAL_DATA`` environment
    variable, then ``~/hcal_data``.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder to use instead of the default.

    Returns
    -------
    path : pathlib.Path
        The (existing) data folder.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn_hcal.datasets import get_data_home
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     home = get_data_home(Path(tmp) / "hcal_data")
    ...     print(home.name, home.is_dir())
    hcal_data True
    """
    if data_home is None:
        data_home = os.environ.get("HCAL_DATA", Path("~") / "hcal_data")
    path = Path(data_home).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def local_file(path, folder: str, fname: str, *, what: str, how: str) -> Path:
    """The data file ``fname`` a loader reads: given, in a folder, or cached.

    ``path`` is the file itself or the folder holding ``fname``; None: the
    ``folder`` of :func:`get_data_home`. One rule for every loader of a
    file the user (or a fetcher) put on disk.

    Parameters
    ----------
    path : str, path-like or None
        The file or its folder.
    folder : str
        The data set's folder under the data home.
    fname : str
        The file's name inside a folder.
    what : str
        The data set, for the error message (``"ChaosNLI"``).
    how : str
        How to get the file, the end of the error message.

    Returns
    -------
    file : pathlib.Path
        An existing file.

    Raises
    ------
    FileNotFoundError
        Naming the file, where it was looked for, and ``how``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn_hcal.datasets._base import local_file
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "a.txt").write_text("x")
    ...     print(local_file(tmp, "demo", "a.txt", what="Demo", how="").name)
    a.txt
    """
    if path is None:
        path = get_data_home() / folder
    path = Path(path).expanduser()
    file = path / fname if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(
            f"{what} file {fname!r} not found at {str(path)!r}. {how}"
        )
    return file


class RepeatedKeyError(ValueError):
    """A JSON object repeats a key (raised by :func:`unique_keys`)."""


def unique_keys(pairs) -> dict:
    """``object_pairs_hook`` for :func:`json.load` that refuses repeated keys.

    ``json.load`` keeps the last of repeated keys without a word: a repeated
    item id (or annotator, or uid) would silently drop annotations or
    predictions. The caller catches :class:`RepeatedKeyError` (its argument
    is the key) and names the file.
    """
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise RepeatedKeyError(key)
        obj[key] = value
    return obj


#: A comma before a closing bracket, outside strings (the strings are matched
#: first and kept as they are, so a comma inside a string is never touched).
_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*")|,(\s*[}\]])')


def _drop_trailing_commas(text: str) -> str:
    return _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), text)


def read_json(path, *, repeats: str, trailing_commas: bool = False):
    """The JSON document of ``path``, every error naming the file.

    Invalid JSON, a file that is not UTF-8 and a key repeated in one object
    (which ``json.load`` would drop without a word; ``repeats`` says what such
    a key is, e.g. ``"a uid or model given twice"``) raise ValueError.
    ``trailing_commas=True`` also reads a comma before a closing ``}`` or
    ``]`` (not strict JSON, but what some published files contain, e.g. the
    LeWiDi 2025 Paraphrase and VariErrNLI annotator metadata); nothing else
    outside strict JSON is accepted.
    """
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"{path}: not a UTF-8 text file (byte 0x{raw[exc.start]:02x} at "
            f"offset {exc.start}, line {line})."
        ) from None
    try:
        try:
            return json.loads(text, object_pairs_hook=unique_keys)
        except json.JSONDecodeError:
            if not trailing_commas:
                raise
            text = _drop_trailing_commas(text)
            return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})."
        ) from None
    except RepeatedKeyError as exc:
        raise ValueError(
            f"{path} repeats the key {exc.args[0]!r} in one JSON object "
            f"({repeats}); only one could be kept."
        ) from None
