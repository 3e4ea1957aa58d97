"""The perspectivist model's cross-validated LeWiDi scores.

Item-grouped cross-validation on the training files only (the official
Paraphrase and VariErrNLI test files are deliberately absent): Paraphrase
and VariErrNLI train + dev, ``CSC_dev.json``, ``MP_test.json`` from
``../shared/data/lewidi/2025``. For each data set it prints, as mean ±
standard deviation over the folds:

* the default :class:`~sklearn_hcal.perspectivist.PerspectivistClassifier`;
* the issue's reference model: TF-IDF of the item text and the annotator's
  explanation, pooled over annotators (no annotator feature), a default
  ``LogisticRegression`` (one per label for VariErrNLI), its most probable
  label -- 0.127 / 0.172 on the official test sets, per the issue;
* the baselines: the most frequent label, each annotator's own most
  frequent training label, the training prior (the soft track's constant);

then the targets: the cross-validated score against the issue's target and
the published Opt-ICL and twinhter test scores, and the soft track against
the prior. ``--timing`` runs ``hcal lewidi`` end to end in a subprocess per
data set (5-fold CV, final fit, two files written) with its wall time and
peak memory; CSC and MP, which have one file each here, are split 80/20 by
item, and "MP x4" repeats MP's training items four times (the size of the
official MP training split). ``--select`` prints the grid the default was
chosen from (``C`` of the logistic regressions, the explanation's weight);
``--select-pair`` the weight of the similarity of an item's two texts
(None: no similarity features, the default before 2026-11-27).

Run from the project root::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_perspectivist.py --timing
    PYTHONPATH=. .venv/bin/python benchmarks/bench_perspectivist.py --select
    PYTHONPATH=. .venv/bin/python benchmarks/bench_perspectivist.py --no-cv \
        --select-pair

About 3 minutes on 2 busy cores; ``--timing`` adds about 8, ``--select``
about 10, ``--select-pair`` about 5. Prints tables and exits 0 whether or
not a target is met.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold
from sklearn.multioutput import MultiOutputClassifier
from sklearn.pipeline import make_pipeline

from sklearn_hcal.datasets import load_lewidi
from sklearn_hcal.metrics import manhattan_distance, wasserstein_distance
from sklearn_hcal.perspectivist import PerspectivistClassifier, make_default_estimator
from sklearn_hcal.perspectivist._evaluation import cross_val_tracks

ROOT = Path(__file__).resolve().parents[1]
DATA = (
    Path(os.environ.get("HCAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
    / "lewidi"
    / "2025"
)

SETS = {
    "Paraphrase": ["Paraphrase_train.json", "Paraphrase_dev.json"],
    "VariErrNLI": ["VariErrNLI_train.json", "VariErrNLI_dev.json"],
    "CSC": ["CSC_dev.json"],
    "MP": ["MP_test.json"],
}
#: The track metric of each set and the issue's numbers on the official test
#: sets (target; Opt-ICL, twinhter: the published results).
TARGETS = {
    "Paraphrase": ("perspectivist_absolute_distance", 0.12, 0.119, 0.080),
    "VariErrNLI": ("perspectivist_error_rate", 0.17, 0.270, 0.124),
    "CSC": ("perspectivist_absolute_distance", None, None, None),
    "MP": ("perspectivist_error_rate", None, None, None),
}
SOFT = {
    "Paraphrase": "wasserstein_distance",
    "VariErrNLI": "multilabel_manhattan_distance",
    "CSC": "wasserstein_distance",
    "MP": "manhattan_distance",
}
#: The issue's reference model's official test scores.
REFERENCE_TEST = {"Paraphrase": 0.127, "VariErrNLI": 0.172}


def load(name):
    """``(X, y, groups, data)``: the joined training table of one set."""
    frames = []
    seen = set()
    first = None
    for file in SETS[name]:
        data = load_lewidi(DATA / file)
        first = first or data
        frame = data.frame.assign(group=data.frame["item"])
        clash = frame["item"].isin(seen)
        frame.loc[clash, "item"] = Path(file).stem + ":" + frame.loc[clash, "item"]
        seen |= set(frame["item"])
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    groups = table.pop("group")
    y = table.pop("label")
    return table, y, groups, first


def reference_model(data):
    """The issue's pooled TF-IDF model (text + explanation, default LR)."""
    text = [str(c) for c in data.text.columns]
    parts = [(f"t{j}", TfidfVectorizer(), c) for j, c in enumerate(text)]
    if "explanation" in data.frame.columns:
        parts.append(("e", TfidfVectorizer(), "explanation"))
    lr = LogisticRegression()
    last = MultiOutputClassifier(lr) if data.multilabel else lr
    est = make_pipeline(ColumnTransformer(parts), last)
    decision = "threshold" if data.multilabel else "mode"
    return PerspectivistClassifier(
        est, annotator=None, decision=decision, optional_columns=None
    )


def _summary(scores):
    mean = scores.groupby("model").mean().drop(columns="fold")
    std = scores.groupby("model").std(ddof=1).drop(columns="fold")
    return mean, std


def cross_validation(name, folds, seed):
    X, y, groups, data = load(name)
    classes = None if data.multilabel else list(data.classes)
    start = time.perf_counter()
    scores, oof, model = cross_val_tracks(
        PerspectivistClassifier(classes=classes, random_state=seed),
        X,
        y,
        groups=groups,
        n_splits=folds,
        random_state=seed,
    )
    elapsed = time.perf_counter() - start
    parts = [scores]
    reference = reference_model(data)
    runs = [("reference (pooled TF-IDF)", reference)]
    if model.ordinal_:  # the same model with the absolute distance's decision
        runs.append(
            ("reference, median", clone(reference).set_params(decision="median"))
        )
    for label, clf in runs:
        ref, _, _ = cross_val_tracks(
            clf, X, y, groups=groups, n_splits=folds, random_state=seed
        )
        parts.append(ref[ref["model"] == "model"].assign(model=label))
    if not model.multilabel_:
        parts.append(temperature_rows(X, y, groups, oof, model, folds, seed))
    return pd.concat(parts, ignore_index=True), elapsed, X, data


def temperature_rows(X, y, groups, oof, model, folds, seed):
    """The model's marginal with a temperature fitted on the other folds.

    Per fold, a TemperatureScaler is fitted on the out-of-fold soft labels
    of the other folds' items against their label histograms and applied to
    this fold's; scored with the soft metrics and the histogram log loss,
    beside the uncalibrated marginal.
    """
    from sklearn_hcal import TemperatureScaler
    from sklearn_hcal.metrics import histogram_log_loss

    classes = list(model.classes_)
    items = X["item"].to_numpy()
    soft = pd.DataFrame(oof, columns=classes).groupby(items, sort=False).mean()
    onehot = pd.get_dummies(pd.Categorical(y, categories=classes)).astype(float)
    onehot.columns = classes
    counts = onehot.groupby(items, sort=False).sum().loc[soft.index]
    item_fold = pd.Series(-1, index=soft.index)
    cv = GroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fold, (_, held) in enumerate(cv.split(X, y, groups=groups)):
        item_fold[pd.unique(items[held])] = fold
    rows = []
    for fold in range(folds):
        test = (item_fold == fold).to_numpy()
        ts = TemperatureScaler().fit(soft[~test], counts[~test])
        cal = ts.predict_proba(soft[test])
        for label, q in (("marginal", soft[test].to_numpy()), ("marginal, T", cal)):
            row = {"fold": fold, "model": label, "T": ts.temperature_}
            row["histogram_log_loss"] = histogram_log_loss(counts[test], q)
            row["manhattan_distance"] = manhattan_distance(counts[test], q)
            if model.ordinal_:
                row["wasserstein_distance"] = wasserstein_distance(counts[test], q)
            rows.append(row)
    return pd.DataFrame(rows)


def _cell(mean, std, model, metric):
    if metric not in mean.columns or model not in mean.index:
        return "—"
    return f"{mean.loc[model, metric]:.4f} ± {std.loc[model, metric]:.4f}"


def print_set(name, scores, elapsed, X, data, folds):
    kinds = ["marginal", "marginal, T"]
    calibration = scores[scores["model"].isin(kinds)]
    scores = scores[~scores["model"].isin(kinds)]
    scores = scores.drop(columns=["T", "histogram_log_loss"], errors="ignore")
    scores = scores.dropna(axis=1, how="all")
    mean, std = _summary(scores)
    order = [
        "model",
        "reference (pooled TF-IDF)",
        "reference, median",
        "most frequent label",
        "annotator's most frequent label",
        "prior",
    ]
    order = [m for m in order if m in mean.index]
    metrics = [c for c in scores.columns if c not in ("fold", "model")]
    print(
        f"\n### {name}: {X['item'].nunique()} items, {len(X)} annotations, "
        f"{X['annotator'].nunique()} annotators ({' + '.join(SETS[name])}); "
        f"{folds}-fold item-grouped CV of the model in {elapsed:.0f} s\n"
    )
    print("| prediction | " + " | ".join(metrics) + " |")
    print("|---|" + "---|" * len(metrics))
    for model in order:
        cells = [_cell(mean, std, model, m) for m in metrics]
        print(f"| {model} | " + " | ".join(cells) + " |")
    metric = TARGETS[name][0]
    diff = _paired(scores, metric, "annotator's most frequent label")
    print(
        f"\nmodel − annotator's most frequent label ({metric}), paired by fold: "
        f"{diff.mean():+.4f} ± {diff.std(ddof=1):.4f}, lower in "
        f"{int((diff < 0).sum())} of {len(diff)} folds"
    )
    if len(calibration):
        cols = ["histogram_log_loss", "manhattan_distance", "wasserstein_distance"]
        cols = [c for c in cols if c in calibration and calibration[c].notna().any()]
        cm = calibration.groupby("model")[[*cols, "T"]].mean()
        print(
            "\nSoft labels with a temperature fitted on the other folds' items "
            f"(mean T = {cm.loc['marginal, T', 'T']:.3f}):\n"
        )
        print("| soft labels | " + " | ".join(cols) + " |")
        print("|---|" + "---|" * len(cols))
        for label in kinds:
            cells = [f"{cm.loc[label, c]:.4f}" for c in cols]
            print(f"| {label} | " + " | ".join(cells) + " |")
    return mean, std


def _paired(scores, metric, baseline):
    by = scores.pivot(index="fold", columns="model", values=metric)
    return by["model"] - by[baseline]


def print_targets(results):
    print(
        "\n### Targets (lower is better; CV on the training files, "
        "published numbers on the official test sets)\n"
    )
    print(
        "| data set | metric | model (CV) | reference (CV) | reference (test) "
        "| target | Opt-ICL | twinhter | − Opt-ICL | − twinhter | below the "
        "annotator's own most frequent label |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, (mean, std) in results.items():
        metric, target, opt, twin = TARGETS[name]
        ours = mean.loc["model", metric]
        ref = mean.loc["reference (pooled TF-IDF)", metric]
        own = mean.loc["annotator's most frequent label", metric]

        def num(v):
            return "—" if v is None else f"{v:.3f}"

        def diff(v, ours=ours):
            return "—" if v is None else f"{ours - v:+.4f}"

        print(
            f"| {name} | {metric} | {ours:.4f} ± {std.loc['model', metric]:.4f} | "
            f"{ref:.4f} | {num(REFERENCE_TEST.get(name))} | {num(target)} | "
            f"{num(opt)} | {num(twin)} | {diff(opt)} | {diff(twin)} | "
            f"{'yes' if ours < own else 'NO'} ({own:.4f}) |"
        )
    print("\n### Soft track: the marginal against the training prior\n")
    print("| data set | metric | model (CV) | prior (CV) | below the prior |")
    print("|---|---|---|---|---|")
    for name, (mean, std) in results.items():
        metric = SOFT[name]
        ours, prior = mean.loc["model", metric], mean.loc["prior", metric]
        print(
            f"| {name} | {metric} | {ours:.4f} ± {std.loc['model', metric]:.4f} | "
            f"{prior:.4f} | {'yes' if ours < prior else 'NO'} |"
        )


# --------------------------------------------------------------------------- #
# --timing: hcal lewidi end to end
# --------------------------------------------------------------------------- #
_CHILD = (
    "import sys, time\n"
    "from sklearn_hcal.cli import main\n"
    "t = time.perf_counter(); code = main(sys.argv[1:])\n"
    "wall = time.perf_counter() - t\n"
    # VmHWM: this process's peak resident memory. (getrusage's ru_maxrss
    # keeps the parent's peak across fork and exec on Linux.)
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
    "peak = int(hwm[0].split()[1]) / 1024 if hwm else float('nan')\n"
    "print(f'@@ {code} {wall:.1f} {peak:.0f}', file=sys.stderr)\n"
)


def _split(tmp, file, *, repeat=1):
    """80/20 by item into ``<Set>_train.json`` / ``<Set>_split.json``."""
    src = DATA / file
    with open(src, encoding="utf-8") as f:
        records = json.load(f)
    ids = list(records)
    cut = int(0.8 * len(ids))
    prefix = file.split("_")[0]
    train = {}
    for r in range(repeat):
        for i in ids[:cut]:
            train[i if r == 0 else f"{i}#{r}"] = records[i]
    paths = []
    for part, content in (
        ("train", train),
        ("split", {i: records[i] for i in ids[cut:]}),
    ):
        path = tmp / f"{prefix}_{part}.json"
        path.write_text(json.dumps(content), encoding="utf-8")
        paths.append(path)
    shutil.copy(DATA / f"{prefix}_annotators_meta.json", tmp)
    return paths


def timing():
    runs = {
        "Paraphrase": ([DATA / "Paraphrase_train.json"], DATA / "Paraphrase_dev.json"),
        "VariErrNLI": ([DATA / "VariErrNLI_train.json"], DATA / "VariErrNLI_dev.json"),
    }
    print("\n### `hcal lewidi` end to end (5-fold CV, final fit, two files)\n")
    print(
        "| data set | training items | wall time (s) | peak memory (MB) | "
        "load average before |"
    )
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for name, file, repeat in (
            ("CSC", "CSC_dev.json", 1),
            ("MP", "MP_test.json", 1),
            ("MP x4", "MP_test.json", 4),
        ):
            sub = tmp / name.replace(" ", "")
            sub.mkdir()
            train, split = _split(sub, file, repeat=repeat)
            runs[name] = ([train], split)
        for name, (trains, predict) in runs.items():
            n_items = sum(len(json.loads(Path(t).read_text())) for t in trains)
            load = os.getloadavg()[0]
            args = [a for t in trains for a in ("--train", str(t))]
            args += ["--predict", str(predict), "--out", str(tmp / "out"), "--quiet"]
            proc = subprocess.run(
                [sys.executable, "-c", _CHILD, "lewidi", *args],
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            line = [x for x in proc.stderr.splitlines() if x.startswith("@@")]
            if proc.returncode or not line:
                print(f"| {name} | {n_items} | failed: {proc.stderr[-300:]} | | |")
                continue
            _, code, wall, peak = line[-1].split()
            print(f"| {name} | {n_items} | {wall} | {peak} | {load:.2f} |")


# --------------------------------------------------------------------------- #
# --select: the grid the default was chosen from
# --------------------------------------------------------------------------- #
def _grid_row(name, cells, data, X, y, groups, folds, seed, C=1.0, **params):
    """One row of a selection table: the default with ``params`` changed."""
    est = make_default_estimator(
        ordinal=not data.multilabel and len(data.classes) > 2,
        multilabel=data.multilabel,
        n_classes=len(data.classes),
        C=C,
        random_state=seed,
    ).set_params(**{f"annotationvectorizer__{k}": v for k, v in params.items()})
    scores, _, _ = cross_val_tracks(
        PerspectivistClassifier(est),
        X,
        y,
        groups=groups,
        n_splits=folds,
        random_state=seed,
    )
    mean, std = _summary(scores)
    metric, soft = TARGETS[name][0], SOFT[name]
    print(
        f"| {name} | {' | '.join(map(str, cells))} | "
        f"{mean.loc['model', metric]:.4f} ± {std.loc['model', metric]:.4f} | "
        f"{mean.loc['model', soft]:.4f} |",
        flush=True,
    )


def select(folds, seed):
    grid = {
        "Paraphrase": [(c, w) for c in (0.3, 1, 3, 10) for w in (1, 4, 8, 16)],
        "VariErrNLI": [(c, w) for c in (0.3, 1, 3, 10) for w in (1, 4, 8, 16)],
        "CSC": [(c, 8) for c in (0.3, 1, 3)],
        "MP": [(c, 8) for c in (0.3, 1, 3)],
    }
    print(
        "\n### Model selection (item-grouped CV; the default is C = 1, "
        "explanation weight 8)\n"
    )
    print("| data set | C | explanation weight | track metric | soft metric |")
    print("|---|---|---|---|---|")
    for name, configs in grid.items():
        X, y, groups, data = load(name)
        for C, weight in configs:
            _grid_row(
                name,
                (C, weight),
                data,
                X,
                y,
                groups,
                folds,
                seed,
                C=C,
                explanation_weight=weight,
            )


def select_pair(folds, seed, names):
    """The similarity block's weight, every other setting at its default."""
    print(
        "\n### The weight of the two texts' similarity (item-grouped CV; the "
        "default is 4, None the model without it)\n"
    )
    print("| data set | pair weight | track metric | soft metric |")
    print("|---|---|---|---|")
    for name in names:
        X, y, groups, data = load(name)
        for weight in (None, 1.0, 4.0, 8.0):
            _grid_row(
                name, (weight,), data, X, y, groups, folds, seed, pair_weight=weight
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="+", choices=sorted(SETS), default=None)
    parser.add_argument("--timing", action="store_true")
    parser.add_argument("--select", action="store_true")
    parser.add_argument("--select-pair", action="store_true")
    parser.add_argument("--no-cv", action="store_true", help="skip the CV tables")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the fallbacks' notes, once per fold
    print(
        f"Perspectivist CV, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} cores; load average "
        + ", ".join(f"{v:.2f}" for v in os.getloadavg())
    )
    results = {}
    for name in [] if args.no_cv else args.only or SETS:
        scores, elapsed, X, data = cross_validation(name, args.folds, args.seed)
        results[name] = print_set(name, scores, elapsed, X, data, args.folds)
    if results:
        print_targets(results)
    if args.timing:
        timing()
    if args.select:
        select(args.folds, args.seed)
    if args.select_pair:
        select_pair(args.folds, args.seed, args.only or list(SETS))
    print("\nload average after: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    return 0


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    raise SystemExit(main())
