"""``hcal lewidi``'s cross-validation: both settings run, one table printed.

The item-grouped cross-validation of the chosen model on the training files
(with and without the annotators' explanations, when the files carry them),
scored by the tracks' metrics beside the reference baselines and the
published results on the official test sets (:mod:`._submit` runs it before
fitting the model it writes the submission of).
"""

from __future__ import annotations

import contextlib
import re
import sys
import textwrap
import warnings

__all__ = [
    "EXPLANATION",
    "WIDTH",
    "epochs_to_stderr",
    "print_cross_validation",
]

#: The published best results on the official test sets (the issue's numbers,
#: LeWiDi 2025 leaderboard), printed beside the cross-validated scores.
PUBLISHED = {
    "paraphrase detection": {
        "metric": "perspectivist_absolute_distance",
        "Opt-ICL": 0.119,
        "twinhter": 0.080,
    },
    "natural language inference": {
        "metric": "perspectivist_error_rate",
        "Opt-ICL": 0.270,
        "twinhter": 0.124,
    },
}


#: The columns that hold the annotator's own explanation of the label.
EXPLANATION = ("explanation",)


def epochs_to_stderr():
    """The transformer's line per epoch (skorch prints it) with the progress
    on stderr: stdout keeps the statement and the scores only."""
    return contextlib.redirect_stdout(sys.stderr)


def print_cross_validation(clf, X, y, groups, args, folds, data, prog) -> None:
    """Both settings when the training files carry explanations: the model
    as asked for, and the same model without the explanations."""
    from .._validation import is_missing
    from ..perspectivist._shared import cross_val_tracks

    folds = min(folds, groups.nunique())
    if folds < 2:
        prog.message("too few items to cross-validate; skipped")
        return
    settings = {"": X}
    explained = [c for c in EXPLANATION if c in X.columns]
    if explained and (~is_missing(X[explained[0]])).any():
        settings[" without the explanations"] = X.drop(columns=explained)
    runs = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for setting, table in settings.items():
            prog.message(f"item-grouped {folds}-fold cross-validation{setting}")

            def progress(done, total, setting=setting):
                prog.message(f"cross-validation{setting}: fold {done}/{total} done")

            with epochs_to_stderr():
                runs[setting], _, _ = cross_val_tracks(
                    clf,
                    table,
                    y,
                    groups=groups,
                    n_splits=folds,
                    random_state=args.seed,
                    progress=progress,
                )
    _warn_once(caught)
    without = runs.get(" without the explanations")
    explanations = args.explanations and bool(explained)
    print(
        _cv_table(
            runs[""],
            folds,
            data,
            explanations,
            without=without,
            model=args.model,
            encoder=args.encoder is not None,
        )
    )


def _warn_once(caught) -> None:
    """Each kind of warning once, however many folds raised it."""
    seen = {}
    for w in caught:
        key = (w.category, re.sub(r"\d+", "#", str(w.message)))
        seen.setdefault(key, []).append(w)
    for (category, _), ws in seen.items():
        text = str(ws[0].message)
        if len(ws) > 1:
            text += f" ({len(ws)} times over the folds; the first shown)"
        warnings.warn(text, category, stacklevel=3)


#: Output width of the command (``hcal evaluate``'s).
WIDTH = 80

#: Short names of the printed metrics: (short, long, what it measures).
METRIC_NAMES = {
    "perspectivist_error_rate": ("pe-error", "perspectivist error rate"),
    "perspectivist_absolute_distance": (
        "pe-distance",
        "perspectivist absolute distance / points of the scale",
    ),
    "manhattan_distance": ("manhattan", "soft track: Manhattan distance"),
    "wasserstein_distance": ("wasserstein", "soft track: Wasserstein distance"),
    "multilabel_manhattan_distance": (
        "ml-manhattan",
        "soft track: multi-label Manhattan distance",
    ),
}

#: The baselines, as :func:`~sklearn_hcal.perspectivist._shared.cross_val_tracks`
#: names them, with their column headers.
BASELINES = {
    "most frequent label": "A",
    "annotator's most frequent label": "B",
    "prior": "C",
}


def _cv_table(
    scores, folds, data, explanations, without=None, model="default", encoder=False
) -> str:
    """The table of the model and the baselines; ``without``: the same
    model's scores without the explanations, a block of its own."""
    metrics = [c for c in scores.columns if c not in ("fold", "model")]
    order = ["model", *BASELINES]
    mean = scores.groupby("model").mean().reindex(order)
    std = scores.groupby("model").std(ddof=1).reindex(order)
    published = PUBLISHED.get(data.task)
    track = published["metric"] if published else None
    heads = ["model", *BASELINES.values()]
    width = 16
    lines = [
        "",
        f"Item-grouped {folds}-fold cross-validation on the training files",
        "(mean ± standard deviation over folds; every metric: lower is better):",
        "",
        f"{'metric':<13}" + "".join(f"{h:>{width}}" for h in heads),
    ]
    for m in metrics:
        short = METRIC_NAMES.get(m, (m,))[0] + ("*" if m == track else "")
        cells = [f"{a:.4f} ± {s:.4f}" for a, s in zip(mean[m], std[m])]
        lines.append(f"{short:<13}" + "".join(f"{c:>{width}}" for c in cells))
    lines.append("")
    legend = [
        f"model: the {model} perspectivist model (--model {model}"
        + (" --encoder" if encoder else "")
        + ") "
        + ("reading" if explanations else "not reading")
        + " the annotators' explanations",
        *(f"{h}: {name} (baseline)" for name, h in BASELINES.items()),
        *(
            f"{METRIC_NAMES[m][0]}: {METRIC_NAMES[m][1]}"
            + (" (* the data set's track metric)" if m == track else "")
            for m in metrics
            if m in METRIC_NAMES
        ),
    ]
    lines.extend(textwrap.fill(t, width=WIDTH, subsequent_indent="  ") for t in legend)
    other = None
    if without is not None:
        model = without[without["model"] == "model"]
        other_mean, other_std = model[metrics].mean(), model[metrics].std(ddof=1)
        other = other_mean.get(track)
        lines += [
            "",
            "The same model without the explanations (--no-explanations):",
            f"{'metric':<13}{'model':>{width}}",
        ]
        for m in metrics:
            short = METRIC_NAMES.get(m, (m,))[0] + ("*" if m == track else "")
            cell = f"{other_mean[m]:.4f} ± {other_std[m]:.4f}"
            lines.append(f"{short:<13}{cell:>{width}}")
    if published is not None:
        ours = mean.loc["model", track]
        teams = ", ".join(
            f"{team} {published[team]:.3f}" for team in ("Opt-ICL", "twinhter")
        )
        if other is not None:
            setting = (
                f"{ours:.4f} with the explanations of the rows predicted, "
                f"{other:.4f} without them"
            )
        elif explanations:
            setting = f"{ours:.4f} with the explanations of the rows predicted"
        else:
            setting = f"{ours:.4f} without the explanations"
        lines.append("")
        lines.append(
            textwrap.fill(
                f"{METRIC_NAMES[track][0]}, cross-validated here: {setting}. On "
                f"the official test set: {teams}. Whether the competition's test "
                "inputs carried the explanations is not stated in the files, so "
                "these are not measured alike.",
                width=WIDTH,
            )
        )
    return "\n".join(lines)
