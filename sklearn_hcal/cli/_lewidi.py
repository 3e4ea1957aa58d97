"""``hcal evaluate`` on a LeWiDi file: the official tracks' scores.

When ``COUNTS`` is a LeWiDi harmonised ``.json`` file (2023 or 2025 format,
read by :func:`sklearn_hcal.datasets.load_lewidi`), the truth is that file
and every prediction file is keyed by item id. The printed metrics are the
track's official ones (LeWiDi 2025 evaluation notebook, LeWiDi 2023
starting kit):

* soft track (``--track soft``, or a file not named ``*_pe``): Manhattan
  distance; the Wasserstein distance for ordinal sets (numeric scales of more than two
  points: Paraphrase −5..5, CSC 1..6, or any set given ``--order``); the
  soft cross-entropy for files in the 2023 format; for multi-label sets
  (VariErrNLI) the multi-label Manhattan distance;
* perspectivist track (``--track perspectivist``, or ``X_pe.tsv``): the
  error rate and, for ordinal sets, the normalised absolute distance
  (divided by the number of points of the scale).

The truth of an item is the share of its annotations (the counts); an item
without annotations (a test split) uses its shipped soft label. With
``--official-rounding`` the arithmetic is the LeWiDi 2025 evaluation
notebook's (:func:`sklearn_hcal.metrics.lewidi_scores`): each metric's
rounding rule (``OfficialRounding`` in :mod:`sklearn_hcal.metrics._registry`),
file-order sums, ``ot.emd2`` per item when POT is installed, predictions as
written and, as in the notebook, the shipped soft labels as the soft truth.

This module only parses and prints: the files are read by
:func:`~sklearn_hcal.datasets.read_lewidi_submission` and scored by
:func:`~sklearn_hcal.metrics.lewidi_scores`, as from Python.

Prediction files (every item of the truth, matched by id; an item given
twice is refused):

* soft, ``.json``: ``{item_id: {class: p, ...}}`` or ``{item_id: [p, ...]}``
  (a list in the class order of the truth file, whatever ``--order`` says);
  multi-label: ``{item_id: {label: P(label applies)}}`` or a list, each
  entry a probability or a pair ``[1 − p, p]`` (VariErrNLI's layout);
* soft, ``.tsv`` (the official submission layout, no header): ``item_id``,
  a tab, then the list ``[p, ...]`` in class order (multi-label: the nested
  ``[[1 − p, p], ...]`` or flat);
* soft, ``.csv``: a header ``id,<class>,<class>...`` (the id column named
  ``id``, ``uid`` or ``--id-column``);
* perspectivist, ``.json``: ``{item_id: {annotator: label}}`` (multi-label:
  a list of labels or a comma-separated string); ``.tsv``: ``item_id``, a
  tab, the list of labels in the order of the item's annotators (one entry
  per distinct annotator).

Single-label soft rows are divided by their sums as the metric functions do
(rows rounded to 2 decimals with a warning; rows further off need
``--renormalize``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from ._errors import InputError

__all__ = ["is_lewidi_truth", "lewidi_report"]


def is_lewidi_truth(path) -> bool:
    """Whether ``COUNTS`` names a LeWiDi harmonised JSON file."""
    return Path(path).suffix.lower() == ".json"


def load_truth(path, label_map=None):
    """The LeWiDi file ``path`` (:func:`~sklearn_hcal.datasets.load_lewidi`)."""
    from ..datasets import load_lewidi
    from ._files import _check_file

    p = _check_file(path)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data = load_lewidi(p, annotators_meta=None, label_map=label_map)
    except ValueError as exc:
        prefix = "--label-map: " if "label_map" in str(exc) else ""
        raise InputError(f"{prefix}{exc}") from None
    if label_map is not None:
        _check_label_map_targets(p, data, label_map)
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    return data


def _check_label_map_targets(path, data, label_map) -> None:
    """Refuse a ``--label-map`` onto labels that are not the truth's classes.

    ``load_lewidi`` then drops the counts (with a warning) and the truth
    falls back to the file's soft labels: the map was silently ignored.
    """
    if data.multilabel or data.soft_labels is None or data.counts is not None:
        return
    classes = data.soft_labels.columns.tolist()
    mapped = pd.unique(data.annotations["label"])
    outside = [c for c in mapped.tolist() if c not in set(classes)]
    if not outside:
        return
    target = outside[0]
    pairs = [f"{k}:{v}" for k, v in label_map.items() if str(v) == str(target)]
    raise InputError(
        f"--label-map: the target {target!r} ({', '.join(pairs[:3])}) is not a "
        f"class of {path.name} (its soft labels' classes are {classes}); map each "
        "annotation onto one of those classes."
    )


def order_positions(classes, order, where) -> list[int]:
    """Column positions of ``order`` (class names, compared as text)."""
    from ..metrics._shared import order_positions as positions

    try:
        return positions(classes, order, where)
    except ValueError as exc:
        raise InputError(f"--{exc}") from None


def lewidi_report(args) -> pd.DataFrame:
    """The report of ``hcal evaluate`` with a LeWiDi truth file.

    Reading and scoring are the library's
    (:func:`~sklearn_hcal.datasets.read_lewidi_submission`,
    :func:`~sklearn_hcal.metrics.lewidi_scores`): the command only parses
    and prints, so Python gives the same numbers bit for bit.
    """
    from ..datasets import read_lewidi_submission
    from ..metrics import lewidi_scores

    order = None
    if args.order is not None:
        order = [t.strip() for t in args.order.split(",") if t.strip()]
    data = load_truth(args.counts, label_map=args.label_map)
    if order is not None:
        if data.multilabel:
            raise InputError("--order does not apply to a multi-label file.")
        order_positions([str(c) for c in data.classes], order, args.counts)
    track = _track(args)
    if track == "perspectivist" and (data.counts is None or not len(data.annotations)):
        raise InputError(f"{args.counts}: no annotations, so no per-annotator truth.")
    rows = {}
    for name, path in args.preds:
        if name in rows:
            raise InputError(f"--pred {name}={path}: the name {name!r} is used twice.")
        try:
            pred = read_lewidi_submission(
                path, data, track=track, id_column=args.id_column
            )
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                rows[name] = lewidi_scores(
                    data,
                    **{track: pred},
                    official_rounding=args.official_rounding,
                    order=order,
                    renormalize=args.renormalize,
                )
        except ValueError as exc:
            raise InputError(_with_file(exc, path)) from None
        for w in caught:
            warnings.warn(_with_file(w.message, path), w.category, stacklevel=2)
    report = pd.DataFrame.from_dict(rows, orient="index")
    report.index.name = "prediction"
    return report


def _track(args) -> str:
    """``--track``, else the one track the prediction files' names say
    (``X_pe.tsv``: per-annotator labels); files of both tracks are refused,
    since their scores are other metrics."""
    from ..datasets._shared import submission_track

    if args.track is not None:
        return args.track
    tracks = {path: submission_track(path) for _, path in args.preds}
    if len(set(tracks.values())) > 1:
        named = ", ".join(f"{path} ({track})" for path, track in tracks.items())
        raise InputError(
            f"--pred: files of both tracks ({named}); score each track in a run "
            "of its own, or pass --track."
        )
    return next(iter(tracks.values()), "soft")


def _with_file(exc, path) -> str:
    """The library's message in the command's words: the prediction file
    named, options as options."""
    text = str(exc).replace("renormalize=True", "--renormalize")
    if text.startswith("test: "):
        return text
    if text.startswith(str(path)):
        return text
    for word in ("soft: ", "perspectivist: "):
        if text.startswith(word):
            return f"{path}: {text[len(word) :]}"
    return f"{path}: {text}"
