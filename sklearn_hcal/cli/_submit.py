"""``hcal lewidi``: a LeWiDi 2025 submission in one command.

Trains the perspectivist model of ``--model`` (:mod:`._submit_models`: the
default :class:`~sklearn_hcal.perspectivist.PerspectivistClassifier`, the
fine-tuned transformer or the ensemble of both) on the annotations of the
``--train`` files, prints its item-grouped cross-validated scores on both
tracks beside the reference baselines (with and without the annotators'
explanations, when the files carry them), and writes the official 2025
submission files for ``--predict``:

* ``DIR/<stem>_soft.tsv`` -- ``item_id<TAB>[p, ...]``: each item's soft
  label, the mean of its annotators' predicted distributions, in the class
  order of the data set (numeric scales increasing; VariErrNLI: the pair
  ``[1 − p, p]`` of each label);
* ``DIR/<stem>_pe.tsv`` -- ``item_id<TAB>[label, ...]``: one predicted
  label per distinct annotator of the item, in the order of its
  ``annotators`` field (VariErrNLI: each annotator's list of labels) --
  the Bayes decision of the track's score (the median on a Likert scale,
  the mode for a binary one, per-label thresholds for VariErrNLI).

One ``predict_proba`` gives both; the files are written by
:func:`~sklearn_hcal.datasets.write_lewidi_submission` (byte for byte what
Python writes), the training files joined by
:func:`~sklearn_hcal.datasets.combine_lewidi_splits`, and the
cross-validation scored by :func:`~sklearn_hcal.metrics.lewidi_scores`.
Before it the command says which columns of ``--predict`` the model reads;
``--no-explanations`` drops the annotators' explanations everywhere.
``hcal evaluate TRUTH.json --pred FILE`` reads both files. The options are
declared in :mod:`._submit_command`, which imports this module only to run.
"""

from __future__ import annotations

import hashlib
import os
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ._errors import InputError
from ._submit_models import build_model, check_model_options, default_folds
from ._submit_scores import (
    EXPLANATION,
    WIDTH,
    epochs_to_stderr,
    print_cross_validation,
)

__all__ = ["run_lewidi"]


# --------------------------------------------------------------------------- #
# Reading and checking the files
# --------------------------------------------------------------------------- #
def _load(path, *, annotators_meta="auto"):
    from ..datasets import load_lewidi
    from ._files import _check_file

    p = _check_file(path)
    try:
        return load_lewidi(p, annotators_meta=annotators_meta)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _text_fields(data) -> list:
    return [str(c) for c in data.text.columns]


def _describe(data) -> str:
    kind = "multi-label" if data.multilabel else "classes"
    return (
        f"task {data.task!r}, text fields {_text_fields(data)}, {kind} "
        f"{[str(c) for c in data.classes]}"
    )


def _check_training(path, data) -> None:
    """Every item annotated, every label on the scale, by item and annotator."""
    frame = data.frame
    listed = frame.groupby("item", sort=False).size()
    ids = [str(i) for i in data.item_info.index]
    missing = [i for i in ids if i not in listed.index]
    if missing:
        raise InputError(
            f"{path}: item {missing[0]!r} has no annotators; a training file needs "
            "every item's annotations."
        )
    unlabelled = frame["label"].isna().to_numpy()
    if unlabelled.any():
        row = frame.iloc[int(np.flatnonzero(unlabelled)[0])]
        raise InputError(
            f"{path}: item {row['item']!r} has no annotations (annotator "
            f"{row['annotator']!r} is listed without a label); a training file "
            "needs every item's annotations."
        )
    scale = set(data.soft_labels.columns) if data.soft_labels is not None else None
    if scale is None:
        return
    for item, who, label in frame[["item", "annotator", "label"]].itertuples(
        index=False
    ):
        chosen = label if isinstance(label, tuple) else (label,)
        outside = [lab for lab in chosen if lab not in scale]
        if outside:
            raise InputError(
                f"{path}: item {item!r}, annotator {who!r}: the label "
                f"{outside[0]!r} is outside the scale {sorted(scale, key=str)} of "
                "the file's soft labels."
            )


def _same_data_set(first_path, first, path, data, role) -> None:
    same = (
        data.task == first.task
        and _text_fields(data) == _text_fields(first)
        and data.multilabel == first.multilabel
    )
    if same and data.soft_labels is not None:
        same = set(data.classes.tolist()) <= set(first.classes.tolist())
    if not same:
        raise InputError(
            f"{role} {path} is not of the data set of {first_path}: it has "
            f"{_describe(data)}, where {first_path} has {_describe(first)}."
        )


def _digest(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check_not_a_training_file(predict, trains) -> None:
    digest = _digest(predict)
    for path in trains:
        if os.path.samefile(predict, path) or _digest(path) == digest:
            raise InputError(
                f"--predict {predict} is the training file {path}: predict a file "
                "the model was not trained on (its test split)."
            )


def _training_table(paths, datasets):
    """One long table of every training file; item ids made unique.

    :func:`~sklearn_hcal.datasets.combine_lewidi_splits` with the files'
    stems as names: an id repeated across files (VariErrNLI's train and dev
    splits share premise ids for different statements) is qualified with
    its file's stem, and the original id stays the cross-validation group.
    """
    from ..datasets import combine_lewidi_splits

    both = combine_lewidi_splits(datasets, names=[Path(p).stem for p in paths])
    table = both.frame
    y = table.pop("label")
    table = table.drop(columns=[c for c in ("raw_label",) if c in table.columns])
    return table, y, both.groups


def _check_predict_items(path, data) -> None:
    listed = data.frame.groupby("item", sort=False).size()
    for item in data.item_info.index:
        if str(item) not in listed.index:
            raise InputError(
                f"{path}: item {str(item)!r} has no annotators; the perspectivist "
                "track predicts the label of each annotator listed in the "
                "item's annotators field."
            )


# --------------------------------------------------------------------------- #
# The command
# --------------------------------------------------------------------------- #
def run_lewidi(args) -> int:
    from ..datasets import write_lewidi_submission
    from ..perspectivist._shared import predict_tracks
    from ..utils._progress import Progress
    from ._folders import prepare_output_dir, writing_to

    start = time.perf_counter()
    prog = Progress(enabled=not args.quiet)
    check_model_options(args)
    trains = list(dict.fromkeys(args.train))
    datasets = []
    for path in trains:
        data = _load(path)
        _check_training(path, data)
        if data.counts is None or not len(data.annotations):
            raise InputError(
                f"--train {path}: the file has no annotations to train on."
            )
        if datasets:
            _same_data_set(trains[0], datasets[0], path, data, "--train")
        datasets.append(data)
    predict_path = args.predict
    from ._files import _check_file

    _check_file(predict_path, option="--predict ")
    _check_not_a_training_file(predict_path, trains)
    test = _load(predict_path)
    _same_data_set(trains[0], datasets[0], predict_path, test, "--predict")
    _check_predict_items(predict_path, test)
    out = prepare_output_dir(args.out, "--out")

    X, y, groups = _training_table(trains, datasets)
    n_groups = groups.nunique()
    if args.folds is not None and args.folds > n_groups:
        # not silently one fit per item (hours with a transformer)
        raise InputError(
            f"--folds {args.folds}: the training files hold {n_groups} items "
            f"(item groups), so at most {n_groups} folds; give fewer, or 0 to "
            "skip the cross-validation."
        )
    X_test = _predict_table(test, datasets, trains, X)
    if not args.explanations:
        # the explanations never reach the model: not in fit, not in predict
        X = X.drop(columns=[c for c in EXPLANATION if c in X.columns])
        X_test = X_test.drop(columns=[c for c in EXPLANATION if c in X_test.columns])
    first = datasets[0]
    scale = "labels" if first.multilabel else "classes"
    names = [str(c) for c in first.classes]
    # a long scale as its ends, so that the line keeps within 80 columns
    shown = f"{names[0]} .. {names[-1]}" if len(names) > 4 else ", ".join(names)
    prog.message(
        f"{first.task or 'LeWiDi data'}: {X['item'].nunique()} training items, "
        f"{len(X)} annotations by {X['annotator'].nunique()} annotators; "
        f"{scale} {shown}"
    )
    print(_inputs_statement(X_test, test, predict_path, args.explanations))
    clf = build_model(args, first)
    folds, note = default_folds(args)
    if note is not None:
        print(textwrap.fill(note, width=WIDTH))
    if folds:
        print_cross_validation(clf, X, y, groups, args, folds, first, prog)
    prog.message(
        f"fitting the model on every training annotation (--model {args.model})"
    )
    with epochs_to_stderr():
        model = clf.fit(X, y)
    prog.message(f"predicting {len(X_test)} annotations of {Path(predict_path).name}")
    # one predict_proba for both tracks
    soft, labels = predict_tracks(model, X_test)
    with writing_to(out, "--out"):
        paths = write_lewidi_submission(
            out,
            test,
            soft=soft,
            perspectivist=labels,
            stem=Path(predict_path).stem,
        )
    prog.message(f"wrote {paths['soft']} ({len(soft)} items)")
    prog.message(f"wrote {paths['perspectivist']} ({len(X_test)} annotations)")
    prog.message(f"done in {time.perf_counter() - start:.1f}s")
    return 0


def _inputs_statement(X_test, test, predict_path, explanations) -> str:
    """Which columns of the file to predict the model reads (stdout)."""
    name = Path(predict_path).name
    texts = [str(c) for c in test.text.columns if c in X_test.columns]
    meta = [
        str(c)
        for c in X_test.columns
        if c not in ("item", "annotator", "in_metadata", *texts, *EXPLANATION)
    ]
    parts = [f"the item texts {texts}", "the annotator ids"]
    if meta:
        parts.append(f"their metadata {meta}")
    has = X_test["explanation"] if "explanation" in X_test.columns else None
    written = (
        0 if has is None else int((has.fillna("").astype(str).str.strip() != "").sum())
    )
    if explanations and written:
        parts.append(
            f"the annotators' own explanations of {written} of its {len(X_test)} "
            "rows (written with the label being predicted)"
        )
    note = ""
    if not explanations:
        note = " The annotators' explanations are not read (--no-explanations)."
    elif written:
        note = (
            " --no-explanations predicts without them, as from the item and the "
            "annotator alone."
        )
    return textwrap.fill(
        f"Reads from {name}: " + ", ".join(parts) + "." + note, width=WIDTH
    )


def _predict_table(test, datasets, trains, X):
    """The long table of ``--predict``, with the training files' metadata."""
    frame = test.frame
    meta = [c for c in X.columns if c not in frame.columns and c != "explanation"]
    if meta and datasets[0].annotators is not None:
        # a test file away from the metadata file: use the training files'
        known = datasets[0].annotators
        frame = frame.drop(columns=[c for c in known.columns if c in frame.columns])
        frame = frame.join(known, on="annotator")
        for col in known.columns:
            if col == "in_metadata":
                frame[col] = frame[col].fillna(False).astype(bool)
            elif not pd.api.types.is_numeric_dtype(known[col]):
                frame[col] = frame[col].fillna("unknown")
    keep = [c for c in frame.columns if c in X.columns or c == "explanation"]
    return frame[keep]
