"""Where data sets live on disk."""

from __future__ import annotations

import json
import os
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


def read_json(path, *, repeats: str):
    """The JSON document of ``path``, every error naming the file.

    Invalid JSON, a file that is not UTF-8 and a key repeated in one object
    (which ``json.load`` would drop without a word; ``repeats`` says what such
    a key is, e.g. ``"a uid or model given twice"``) raise ValueError.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})."
        ) from None
    except RepeatedKeyError as exc:
        raise ValueError(
            f"{path} repeats the key {exc.args[0]!r} in one JSON object "
            f"({repeats}); only one could be kept."
        ) from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file.") from None
