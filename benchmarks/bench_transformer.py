"""The fine-tuned transformer's and the ensembles' cross-validated LeWiDi scores.

Item-grouped 5-fold cross-validation on the training files only (Paraphrase
and VariErrNLI train + dev from ``../shared/data/lewidi/2025``; the official
test files are deliberately absent), with the library's folds (``hcal
lewidi``'s: ``GroupKFold(5, shuffle=True, random_state=fold_seed)``). One
fold is one process run::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_transformer.py fold \\
        VariErrNLI --fold-seed 1 --fold 0 [--torch-offset 100] [--no-explanations]

It fits the default :class:`~sklearn_hcal.perspectivist.PerspectivistClassifier`
and :class:`~sklearn_hcal.perspectivist.TransformerPerspectivistClassifier`
with its defaults (``random_state = fold seed + torch offset``, one torch
thread) on the other four folds, and saves both models' per-annotator
distributions of the held-out rows, the fit time and the peak memory under
``--out`` (default ``benchmarks/transformer_cv/``); a fold already saved is
skipped, so an interrupted run resumes. ::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_transformer.py table

prints, per data set, setting and fold seed, the mean over the folds of
the track metric (perspectivist error rate for VariErrNLI, absolute distance
for Paraphrase; lower is better) of the default model, one transformer, the
mean of both, the mean of two transformer seeds (torch offsets 0 and 100)
and the mean of the default model and both seeds (``hcal lewidi --model
ensemble``), with the baselines, and in how many folds each beats the
default. One fold takes 2-6 minutes on one core (VariErrNLI, 1,624 rows of
train + dev, less without the explanations), so the 15 folds of fold seeds
0-2 take about an hour per data set and setting; the GPU path
(``device="cuda"``) is not what these numbers measure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import GroupKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_perspectivist import load  # noqa: E402

from sklearn_hcal.perspectivist import (  # noqa: E402
    PerspectivistClassifier,
    TransformerPerspectivistClassifier,
)
from sklearn_hcal.perspectivist._evaluation import fold_track_scores  # noqa: E402

OUT = Path(__file__).resolve().parent / "transformer_cv"

#: The track metric of each data set (lower is better).
METRIC = {
    "VariErrNLI": "perspectivist_error_rate",
    "Paraphrase": "perspectivist_absolute_distance",
}


def _tag(name, fold_seed, fold, explanations, offset):
    tag = f"{name}_s{fold_seed}_f{fold}_e{int(explanations)}"
    return tag + (f"_t{offset}" if offset else "")


def _split(name, fold_seed, fold, explanations):
    X, y, groups, data = load(name)
    if not explanations:
        X = X.drop(columns="explanation")
    cv = GroupKFold(n_splits=5, shuffle=True, random_state=fold_seed)
    train, test = list(cv.split(X, y, groups=groups))[fold]
    return X, y, data, train, test


def _scores(model, X, y, train, test, probabilities):
    """Track scores of each named distribution on the held-out rows."""
    return fold_track_scores(
        model,
        y,
        X["item"].to_numpy(),
        X["annotator"].to_numpy(),
        train,
        test,
        probabilities,
    )


def run_fold(args) -> None:
    import torch

    torch.set_num_threads(1)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tag = _tag(args.name, args.fold_seed, args.fold, args.explanations, args.offset)
    args.out.mkdir(parents=True, exist_ok=True)
    if (args.out / f"{tag}.json").exists():
        print(tag, "already saved")
        return
    X, y, data, train, test = _split(
        args.name, args.fold_seed, args.fold, args.explanations
    )
    classes = None if data.multilabel else list(data.classes)
    default = PerspectivistClassifier(classes=classes, random_state=args.fold_seed)
    default.fit(X.iloc[train], y.iloc[train])
    start = time.perf_counter()
    transformer = TransformerPerspectivistClassifier(
        classes=classes,
        random_state=args.fold_seed + args.offset,
        explanation="explanation" if args.explanations else None,
        verbose=1,
    ).fit(X.iloc[train], y.iloc[train])
    fit = time.perf_counter() - start
    Pd = default.predict_proba(X.iloc[test])
    Pt = transformer.predict_proba(X.iloc[test])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    scores = _scores(default, X, y, train, test, {"default": Pd, "transformer": Pt})
    np.savez_compressed(args.out / f"{tag}.npz", test=test, Pd=Pd, Pt=Pt)
    record = {"tag": tag, "scores": scores, "fit_s": fit, "peak_gb": peak}
    (args.out / f"{tag}.json").write_text(json.dumps(record, indent=1))
    print(tag, json.dumps(scores["transformer"]), f"{fit:.0f} s, {peak:.2f} GB")


def table(args) -> None:
    rows = {}
    for path in sorted(args.out.glob("*.npz")):
        parts = path.stem.split("_")
        if len(parts) != 4:
            continue
        name, seed, fold, expl = parts
        rows.setdefault((name, expl, int(seed[1:])), []).append(path)
    for (name, expl, seed), paths in sorted(rows.items()):
        X, y, data, *_ = _split(name, seed, 0, expl == "e1")
        classes = None if data.multilabel else list(data.classes)
        ref = PerspectivistClassifier(classes=classes).fit(X.iloc[:300], y.iloc[:300])
        per_fold = []
        for path in paths:
            z = np.load(path)
            test = z["test"]
            train = np.setdiff1d(np.arange(len(X)), test)
            kinds = {
                "default": z["Pd"],
                "transformer": z["Pt"],
                "mean of both": (z["Pd"] + z["Pt"]) / 2,
            }
            second = path.with_name(path.stem + "_t100.npz")
            if second.exists():
                Pt2 = np.load(second)["Pt"]
                kinds["two seeds"] = (z["Pt"] + Pt2) / 2
                kinds["default + two seeds"] = (z["Pd"] + z["Pt"] + Pt2) / 3
            scores = _scores(ref, X, y, train, test, kinds)
            per_fold.append({k: v[METRIC[name]] for k, v in scores.items()})
        print(
            f"\n{name}, {'with' if expl == 'e1' else 'without'} explanations, "
            f"fold seed {seed}, {len(per_fold)} folds ({METRIC[name]}):"
        )
        for kind in per_fold[0]:
            values = [f[kind] for f in per_fold if kind in f]
            lower = sum(f[kind] < f["default"] for f in per_fold if kind in f)
            print(
                f"  {kind:<34} {np.mean(values):.4f} ± {np.std(values, ddof=1):.4f}"
                f"  (below the default in {lower} of {len(values)} folds)"
            )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    sub = parser.add_subparsers(dest="command", required=True)
    fold = sub.add_parser("fold", help="fit and save one fold")
    fold.add_argument("name", choices=sorted(METRIC))
    fold.add_argument("--fold-seed", type=int, default=0)
    fold.add_argument("--fold", type=int, choices=range(5), default=0)
    fold.add_argument("--torch-offset", dest="offset", type=int, default=0)
    fold.add_argument("--no-explanations", dest="explanations", action="store_false")
    fold.set_defaults(func=run_fold)
    tab = sub.add_parser("table", help="print the saved folds' scores")
    tab.set_defaults(func=table)
    args = parser.parse_args(argv)
    args.func(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
