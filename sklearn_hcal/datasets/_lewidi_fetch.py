"""Download, verify and cache LeWiDi data sets (``fetch_lewidi``)."""

from __future__ import annotations

import numbers
import os
import re
from pathlib import Path
from urllib.parse import urlparse

from sklearn.utils import Bunch

from ..utils._compat import Interval, validate_params
from ..utils._warnings import warn_user
from ._base import get_data_home
from ._fetch import _download, _sha256, _use_cached
from ._lewidi import load_lewidi

__all__ = ["fetch_lewidi"]

#: The LeWiDi 2025 data sets as published in the task's repository
#: (github.com/Le-Wi-Di/le-wi-di.github.io, folder ``LeWiDi_3-2025``):
#: name -> (folder, file prefix). Files: ``<prefix>_<split>.json`` and
#: ``<prefix>_annotators_meta.json``.
LEWIDI_2025 = {
    "csc": ("CSC", "CSC"),
    "mp": ("MP", "MP"),
    "par": ("Paraphrase", "Paraphrase"),
    "varierrnli": ("VariErrNLI", "VariErrNLI"),
}
#: The splits published for every LeWiDi 2025 set.
LEWIDI_2025_SPLITS = ("train", "dev", "test")
_ALIASES = {"paraphrase": "par", "multipico": "mp", "varierr": "varierrnli"}
LEWIDI_2025_URL = (
    "https://raw.githubusercontent.com/Le-Wi-Di/le-wi-di.github.io/main/"
    "LeWiDi_3-2025/{folder}/{file}"
)

#: sha256 of the published files, by file name. The task publishes no
#: digests and none could be computed for this release (no network access
#: when it was written), so the table is empty: files are verified against
#: a digest given with ``sha256=``, else recorded on first download and
#: checked on every later read (see :func:`fetch_lewidi`).
LEWIDI_SHA256: dict[str, str] = {}

_FOLDER = "lewidi"
#: Where a copy of the whole 2025 release may sit in the data home, its files
#: named as the task publishes them: ``<data home>/lewidi/2025/MP_dev.json``.
_RELEASE_2025 = "2025"


def _canonical(name: str) -> str:
    key = re.sub(r"[\s_-]", "", str(name).lower())
    return _ALIASES.get(key, key)


def _lewidi_url(name: str, file: str) -> str:
    """The download URL of ``file`` of the known 2025 set ``name``."""
    folder = LEWIDI_2025[_canonical(name)][0]
    return LEWIDI_2025_URL.format(folder=folder, file=file)


def _expected_digest(file: str, sha256) -> str | None:
    if isinstance(sha256, str):
        return sha256.lower()
    if isinstance(sha256, dict) and file in sha256:
        return str(sha256[file]).lower()
    return LEWIDI_SHA256.get(file)


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _ensure(path: Path, url: str, digest, *, download_if_missing, timeout):
    """Make ``path`` a verified copy of ``url``; return nothing.

    ``digest`` (known sha256) verifies the download; without it the digest
    of the first download is recorded beside the file (``.sha256``) with a
    UserWarning, and later reads are checked against that record.
    """
    recorded = _sidecar(path)
    expected = digest
    if expected is None and recorded.is_file():
        expected = recorded.read_text(encoding="ascii").strip()
    if _use_cached(
        path,
        expected,
        download_if_missing=download_if_missing,
        what="LeWiDi",
    ):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp = _download(url, path.parent, timeout=timeout)
    except OSError as exc:
        raise OSError(
            f"{exc}. fetch_lewidi needs network access to download {path.name!r} "
            "once; offline, download the file yourself and read it with "
            "sklearn_hcal.datasets.load_lewidi(path)."
        ) from exc
    try:
        got = _sha256(tmp)
        if digest is not None and got != digest:
            raise OSError(
                f"Checksum mismatch for {path.name!r} downloaded from {url}: sha256 "
                f"{got}, expected {digest}. The file is corrupt or not the "
                "published one; nothing was cached."
            )
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    if digest is None:
        recorded.write_text(got + "\n", encoding="ascii")
        warn_user(
            f"No published checksum for {path.name!r}: it was downloaded from "
            f"{url} unverified, with sha256 {got} (recorded; later reads are "
            "checked against it). Pass sha256= to verify a download."
        )
    else:
        recorded.unlink(missing_ok=True)


@validate_params(
    {
        "name": [str],
        "split": [str],
        "data_home": [str, os.PathLike, None],
        "download_if_missing": ["boolean"],
        "url": [str, None],
        "sha256": [str, dict, None],
        "annotators_meta": ["boolean"],
        "label_map": [dict, callable, None],
        "timeout": [Interval(numbers.Real, 0, None, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def fetch_lewidi(
    name: str,
    split: str = "train",
    *,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    url: str | None = None,
    sha256: str | dict | None = None,
    annotators_meta: bool = True,
    label_map=None,
    timeout: float = 60.0,
) -> Bunch:
    """Load a LeWiDi data set, downloading its harmonised JSON file if needed.

    The file is cached in ``<data home>/lewidi/<name>/`` (see
    :func:`get_data_home`); later calls read the cache without network
    access. A copy of the 2025 release in ``<data home>/lewidi/2025/``,
    its files named as published (``Paraphrase_train.json``,
    ``Paraphrase_annotators_meta.json``, ...), is read where it is instead:
    point ``HCAL_DATA`` at a folder holding ``lewidi/2025/`` to work offline.
    A download is verified against its sha256 -- ``sha256=``, or the
    module's table ``LEWIDI_SHA256`` -- before anything is cached; when no
    digest is known the digest of the first download is recorded (with a
    UserWarning) and every later read of the cache is checked against it.

    Parameters
    ----------
    name : str
        ``"csc"``, ``"mp"``, ``"par"`` or ``"varierrnli"`` (LeWiDi 2025; case,
        spaces, ``-`` and ``_`` are ignored), or any other name with ``url``
        (e.g. a LeWiDi 2023 file such as ``HS-Brexit_train.json``).
    split : str, default="train"
        ``"train"``, ``"dev"`` or ``"test"`` for the 2025 sets.
    data_home : str or path-like, default=None
        Cache folder; see :func:`get_data_home`.
    download_if_missing : bool, default=True
        If False, raise ``FileNotFoundError`` instead of downloading.
    url : str, default=None
        Where to download the JSON file from (any URL ``urllib`` opens,
        ``file://`` included). Required for sets other than the four above.
    sha256 : str or dict, default=None
        The expected sha256 of the data file, or a mapping file name ->
        sha256 (to pin the annotator metadata file too).
    annotators_meta : bool, default=True
        Also fetch ``<Set>_annotators_meta.json`` (2025 sets only).
    label_map : dict or callable, default=None
        Passed to :func:`load_lewidi`.
    timeout : float, default=60.0
        Network timeout of each download, in seconds.

    Returns
    -------
    data : Bunch
        What :func:`load_lewidi` returns.

    Raises
    ------
    ValueError
        For an unknown ``name`` without ``url``, or a ``split`` other than
        ``"train"``, ``"dev"`` and ``"test"`` for the 2025 sets (before any
        download).
    FileNotFoundError
        If the file is not cached and ``download_if_missing=False``.
    OSError
        If a download fails (e.g. offline) or its sha256 differs.

    Examples
    --------
    >>> from sklearn_hcal.datasets import fetch_lewidi
    >>> data = fetch_lewidi("par", "dev")  # doctest: +SKIP
    >>> data.classes  # doctest: +SKIP
    array([-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5], dtype=object)
    """
    key = _canonical(name)
    known = key in LEWIDI_2025
    if not known and url is None:
        raise ValueError(
            f"{name!r} is not one of the LeWiDi 2025 sets {sorted(LEWIDI_2025)}; "
            "pass url= (and ideally sha256=) of its harmonised JSON file."
        )
    if known and split not in LEWIDI_2025_SPLITS:
        # checked before any download: a split that was never published would
        # otherwise surface as an HTTP 404, i.e. as a network problem
        raise ValueError(
            f"split={split!r} is not a LeWiDi 2025 split; the task publishes "
            f"{list(LEWIDI_2025_SPLITS)} for {name!r}."
        )
    home = get_data_home(data_home)
    folder = home / _FOLDER / key
    if known and url is None:
        local = _release_copy(home, key, split, sha256, annotators_meta, label_map)
        if local is not None:
            return local
    if known:
        file = f"{LEWIDI_2025[key][1]}_{split}.json"
        source = url or _lewidi_url(key, file)
    else:
        file = Path(urlparse(url).path).name or f"{key}_{split}.json"
        source = url
    options = {"download_if_missing": download_if_missing, "timeout": timeout}
    path = folder / file
    _ensure(path, source, _expected_digest(file, sha256), **options)

    meta = None
    if known and annotators_meta:
        meta_file = f"{LEWIDI_2025[key][1]}_annotators_meta.json"
        meta = folder / meta_file
        meta_url = _lewidi_url(key, meta_file)
        if url is not None:  # a mirror: the metadata file sits beside the data
            meta_url = url.rsplit("/", 1)[0] + "/" + meta_file
        _ensure(meta, meta_url, _expected_digest(meta_file, sha256), **options)
    return load_lewidi(path, annotators_meta=meta, label_map=label_map)


def _release_copy(home, key, split, sha256, annotators_meta, label_map):
    """The set from ``<data home>/lewidi/2025/`` when a copy of it is there.

    A copy of the release (e.g. a read-only shared folder) is read where it
    is, never written to; a digest given with ``sha256=`` is checked.
    """
    prefix = LEWIDI_2025[key][1]
    folder = home / _FOLDER / _RELEASE_2025
    path = folder / f"{prefix}_{split}.json"
    if not path.is_file():
        return None
    digest = _expected_digest(path.name, sha256)
    if digest is not None and _sha256(path) != digest:
        raise OSError(
            f"The LeWiDi file {str(path)!r} has sha256 {_sha256(path)}, expected "
            f"{digest}: it is not the published file."
        )
    meta = folder / f"{prefix}_annotators_meta.json"
    meta = meta if annotators_meta and meta.is_file() else None
    return load_lewidi(path, annotators_meta=meta, label_map=label_map)
