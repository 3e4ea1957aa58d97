"""``hcal evaluate``: score prediction files against label-histogram files.

Reads the files (:mod:`sklearn_hcal.cli._files`), matches items and classes,
computes :func:`~sklearn_hcal.metrics.human_calibration_report` and prints
it (:mod:`sklearn_hcal.cli._output`). The metrics and their names come from
the metric registry (:mod:`sklearn_hcal.metrics._registry`).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from ._arguments import Options, positive_int, pred_spec
from ._errors import InputError

__all__ = ["add_subcommand"]


def _metric_help() -> str:
    from ..metrics._shared import metric_table

    rows = metric_table()
    default = ", ".join(r["column"] for r in rows if r["default"])
    others = ", ".join(r["column"] for r in rows if not r["default"])
    return (
        "comma-separated metrics: report columns or function names, e.g. "
        f"jsd,kl or jensen_shannon_distance (default: {default}, those the "
        f"histograms support; also available: {others})"
    )


#: The kinds of truth file ``hcal evaluate`` reads; every option declares
#: those it applies to (:class:`~sklearn_hcal.cli._arguments.Options`).
TRUTHS = {
    "histograms": "label histograms (.npy, .csv, .jsonl)",
    "lewidi": "a LeWiDi .json truth, which prints the track's official metrics",
}
HISTOGRAMS, LEWIDI = ("histograms",), ("lewidi",)


def add_subcommand(sub) -> None:
    """Register ``hcal evaluate`` on the subparsers ``sub``."""
    ev = sub.add_parser(
        "evaluate",
        help="score prediction files against label-histogram files",
        description=(
            "Score predicted class probabilities against human label histograms. "
            "COUNTS: .npy (n_items, n_classes) counts; .csv with a header of class "
            "names and an optional id column (uid or id, or --id-column); or a "
            "ChaosNLI .jsonl file (uid + label_count, classes [e, n, c] or [1, 2]). "
            "Predictions: .npy or .csv probabilities (or logits with --logits), or "
            "the ChaosNLI prediction .json format {model: {uid: "
            '{"predicted_probabilities": [...]}}} (same class order as '
            "label_count). Items are matched by uid when both files have ids, "
            "otherwise by position; classes by name (as text) when both files "
            "name them. A LeWiDi harmonised .json file as COUNTS is the truth of "
            "the official LeWiDi evaluation: predictions keyed by item id, the "
            "track's metrics (see --track, --official-rounding)."
        ),
    )
    options = Options(ev, TRUTHS)
    ev.add_argument("counts", metavar="COUNTS", help="label histograms file")
    options.add(
        "--pred",
        dest="preds",
        action="append",
        type=pred_spec,
        metavar="[NAME=]FILE",
        required=True,
        help="a prediction file and its name in the table (default: the "
        "file name without its extension); repeatable",
    )
    scale = ev.add_mutually_exclusive_group()
    options.add(
        "--logits",
        kinds=HISTOGRAMS,
        group=scale,
        action="store_true",
        help="the .npy/.csv predictions are logits: apply a softmax",
    )
    options.add(
        "--renormalize",
        group=scale,
        action="store_true",
        help="divide prediction rows (and rows of human probabilities in COUNTS) "
        "that do not sum to 1 by their sums, with a warning; rows off by "
        "rounding (e.g. probabilities rounded to 3 decimals, or to 2 in a LeWiDi "
        "submission) are accepted without this option",
    )
    options.add(
        "--format",
        choices=["markdown", "csv", "json"],
        default="markdown",
        help="output table format on stdout (default: markdown)",
    )
    layout = ev.add_mutually_exclusive_group()
    options.add(
        "--transpose",
        group=layout,
        action="store_true",
        help="one row per metric, one column per prediction",
    )
    options.add(
        "--long",
        group=layout,
        action="store_true",
        help="one row per prediction and metric (tidy data)",
    )
    options.add(
        "--names",
        kinds=HISTOGRAMS,
        choices=["short", "long"],
        default=None,
        help="metric names in the output: short (jsd) or long "
        "(jensen_shannon_distance); default short, long for JSON",
    )
    options.add(
        "--metrics",
        kinds=HISTOGRAMS,
        default=None,
        metavar="NAMES",
        help=_metric_help,  # called by --help only (it loads the registry)
    )
    options.add(
        "--ties",
        kinds=HISTOGRAMS,
        choices=["first", "last", "any"],
        default=None,
        help="majority accuracy with tied human majorities: first (argmax, the "
        "default), last (Baan et al.'s Table 1) or any of the tied classes",
    )
    options.add(
        "--bootstrap",
        kinds=HISTOGRAMS,
        type=positive_int,
        default=0,
        metavar="N",
        help="bootstrap resamples for 95%% intervals (default: 0, none)",
    )
    options.add(
        "--seed",
        kinds=HISTOGRAMS,
        type=positive_int,
        default=0,
        help="bootstrap seed (default: 0)",
    )
    options.add(
        "--progress",
        kinds=HISTOGRAMS,
        action="store_true",
        help="show the bootstrap's progress on stderr even when it is not a "
        "terminal (on a terminal it is shown anyway)",
    )
    options.add(
        "--labels",
        kinds=HISTOGRAMS,
        type=_class_list,
        default=None,
        metavar="NAMES",
        help="comma-separated class of each column of prediction files without "
        "class names (.npy); needed when COUNTS names its classes in an order "
        "other than sorted, the column order of predict_proba",
    )
    options.add(
        "--id-column",
        default=None,
        metavar="NAME",
        help="name of the item-id column of CSV files (default: uid or id if present)",
    )
    options.add(
        "--digits",
        type=positive_int,
        default=4,
        metavar="N",
        help="decimals in the Markdown table (default: 4; at least 5 with "
        "--official-rounding)",
    )
    options.add(
        "--width",
        type=positive_int,
        default=None,
        metavar="N",
        help="maximum line width of the Markdown output (default: the "
        "terminal's width, 80 when not a terminal): a wider table is "
        "transposed, then split into blocks of columns; 0 for no limit",
    )
    options.add(
        "--plots",
        kinds=HISTOGRAMS,
        default=None,
        metavar="DIR",
        help="also save figures to DIR (needs matplotlib and sklearn_hcal.plotting)",
    )
    options.add(
        "--order",
        default=None,
        metavar="A,B,C",
        help="the classes in scale order, for the ordinal metrics (wasserstein, "
        "rps); needed when the class names are words, or numbers out of order. "
        "It orders the scale only: lists in prediction files stay in the class "
        "order of the truth file",
    )
    options.add(
        "--html",
        kinds=HISTOGRAMS,
        default=None,
        metavar="FILE",
        help="also write the report as one self-contained HTML file: data "
        "summary, table with intervals, legend of the metrics and figures "
        "(figures need matplotlib)",
    )
    options.add(
        "--track",
        kinds=LEWIDI,
        choices=["soft", "perspectivist"],
        default=None,
        help="with a LeWiDi .json truth: score soft labels or per-annotator "
        "labels (default: by the prediction files' names, X_pe.tsv "
        "per-annotator, any other soft)",
    )
    options.add(
        "--official-rounding",
        kinds=LEWIDI,
        action="store_true",
        help="with a LeWiDi .json truth: round as the LeWiDi 2025 evaluation "
        "notebook does, metric by metric (the leaderboard's numbers; see "
        "the LeWiDi guide's table of rules)",
    )
    options.add(
        "--label-map",
        kinds=LEWIDI,
        type=_label_map,
        default=None,
        metavar="FROM:TO,...",
        help="with a LeWiDi .json truth: map each annotation onto a soft-label "
        "class, as load_lewidi(label_map=) does, e.g. ConvAbuse's severities "
        "--label-map=-3:1,-2:1,-1:1,0:0,1:0 (write '=' before a value that "
        "starts with '-')",
    )
    ev.set_defaults(handler=_cmd_evaluate, options=options)


def _label_map(text: str) -> dict:
    mapping = {}
    for pair in text.split(","):
        source, sep, target = pair.partition(":")
        source, target = source.strip(), target.strip()
        if not sep or not source or not target:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated FROM:TO pairs (e.g. -3:1,0:0), got {pair!r}"
            )
        if source in mapping:
            raise argparse.ArgumentTypeError(f"the label {source!r} is mapped twice")
        mapping[source] = target
    return mapping


def _resolve_metric_names(text: str | None) -> list[str] | None:
    from ..metrics._shared import get_metric, metrics

    if text is None:
        return None
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise InputError("--metrics is empty")
    out = []
    for name in names:
        try:
            out.append(get_metric(name).column)
        except ValueError:
            raise InputError(
                f"--metrics: unknown metric {name!r}; choose from "
                f"{', '.join(metrics())} (or their function names)"
            ) from None
    return out


def _class_list(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",")]
    if not all(names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"expected distinct comma-separated class names, got {text!r}"
        )
    return names


def _load_inputs(args):
    from ._align import align_predictions, with_labels
    from ._files import read_histograms, read_predictions

    hist = read_histograms(
        args.counts, id_column=args.id_column, renormalize=args.renormalize
    )
    predictions = {}
    for name, path in args.preds:
        models = read_predictions(
            path,
            id_column=args.id_column,
            logits=args.logits,
            renormalize=args.renormalize,
            n_classes=hist.values.shape[1],
            n_classes_from=hist.path,
        )
        for model, table in models.items():
            row = name if len(models) == 1 else f"{name}/{model}"
            if row in predictions:
                raise InputError(
                    f"--pred {name}={path}: the name {row!r} is used twice; give "
                    "every prediction a different NAME"
                )
            label = row if model else name
            table = with_labels(table, getattr(args, "labels", None), name=label)
            predictions[row] = align_predictions(hist, table, name=label)
    return hist, predictions


def _scale_order(args, hist, metrics) -> dict:
    """``metric_params`` giving the ordinal columns the scale order.

    By the library's own rule: ``--order`` when given; otherwise numbers in
    (increasing or decreasing) order, and anything else (words, numbers out
    of order) is refused. The report names the columns by the file's
    classes when it has them, so the order is given by name; a file
    without class names gives it by column position.
    """
    import numpy as np

    from ..metrics._shared import get_metric, scale_permutation
    from ._lewidi import order_positions

    ordinal = [m for m in metrics or [] if get_metric(m).requires == "ordered"]
    if not ordinal:
        if args.order is not None:
            raise InputError(
                "--order applies to the ordinal metrics (wasserstein, rps); "
                "pass them with --metrics"
            )
        return {}
    n_classes = hist.values.shape[1]
    if args.order is not None:
        order = [t.strip() for t in args.order.split(",") if t.strip()]
        classes = hist.classes
        if classes is None:
            classes = [str(j) for j in range(n_classes)]
        perm = order_positions([str(c) for c in classes], order, hist.path)
    elif hist.classes is None:
        return {}
    else:
        try:
            perm = scale_permutation(np.asarray(hist.classes, dtype=object), None)
        except ValueError as exc:
            raise InputError(
                f"{hist.path}: {exc} On the command line: --order A,B,C."
            ) from None
        if perm is None:
            return {}
    if hist.classes is None:
        scale = [int(j) for j in perm]
    else:
        scale = [hist.classes[int(j)] for j in perm]
    return {m: {"order": scale} for m in ordinal}


def _report(args, hist, predictions):
    """The report of the files, validated once for its table and its figures.

    A :class:`~sklearn_hcal.report.CalibrationReport`: the table printed,
    the HTML file and the ``--plots`` figures all read the inputs it
    validated (developer guide §checked-once). The predictions are in the
    histograms' item and class order already (:mod:`._align`); the class
    names of the histogram file name the columns of both.
    """
    from ..report import CalibrationReport

    metric_params = {"accuracy": {"ties": args.ties}} if args.ties else None
    metrics = _resolve_metric_names(args.metrics)
    if metric_params and metrics is not None and "accuracy" not in metrics:
        metric_params = None  # --ties only concerns the accuracy column
    scale = _scale_order(args, hist, metrics)
    if scale:
        metric_params = {**(metric_params or {}), **scale}
    interactive = getattr(sys.stderr, "isatty", lambda: False)()
    report = CalibrationReport.from_predictions(
        hist.values,
        predictions,
        labels=hist.classes,
        metrics=metrics,
        metric_params=metric_params,
        n_bootstrap=args.bootstrap,
        random_state=args.seed,
        verbose=int(args.progress or interactive),
        title=f"hcal evaluate {os.path.basename(hist.path)}",
    )
    report.table.index.name = "prediction"  # the command line's word, also in HTML
    return report


def _printed_table(args, table):
    """The report's table as printed: long metric names when asked."""
    from ..metrics._shared import get_metric

    names = args.names or ("long" if args.format == "json" else "short")
    if names == "long":
        metrics = {c for c in table.columns if not c.endswith(("_low", "_high"))}

        def long_name(col):
            for suffix in ("_low", "_high"):
                if col.endswith(suffix) and col[: -len(suffix)] in metrics:
                    return get_metric(col[: -len(suffix)]).name + suffix
            return get_metric(col).name

        table = table.rename(columns=long_name)
    return table


def _cmd_evaluate(args) -> int:
    from ._folders import prepare_output_dir
    from ._lewidi import is_lewidi_truth
    from ._terminal import render_for_terminal

    if is_lewidi_truth(args.counts):
        args.options.refuse(args, "lewidi")
        return _cmd_evaluate_lewidi(args)
    args.options.refuse(args, "histograms")
    hist, predictions = _load_inputs(args)
    if args.plots is not None:
        # before the (possibly long) report: a folder that cannot be written
        # is an error now, not after the table
        prepare_output_dir(args.plots, "--plots")
    if args.html is not None:
        if os.path.isdir(args.html):
            raise InputError(f"--html {args.html}: is a folder; give a file name")
        prepare_output_dir(os.path.dirname(args.html) or ".", "--html")
    report = _report(args, hist, predictions)
    layout = "transposed" if args.transpose else "long" if args.long else "wide"
    text = render_for_terminal(
        _printed_table(args, report.table),
        fmt=args.format,
        layout=layout,
        digits=args.digits,
        width=args.width,
    )
    sys.stdout.write(text + "\n")
    if args.plots is not None:
        _evaluate_plots(args.plots, report)
    if args.html is not None:
        _evaluate_html(args.html, report)
    return 0


def _cmd_evaluate_lewidi(args) -> int:
    from ._lewidi import lewidi_report
    from ._terminal import render_for_terminal

    report = lewidi_report(args)
    layout = "transposed" if args.transpose else "long" if args.long else "wide"
    # the rounded values have 5 decimals: the default 4 would hide the last
    digits = max(args.digits, 5) if args.official_rounding else args.digits
    text = render_for_terminal(
        report, fmt=args.format, layout=layout, digits=digits, width=args.width
    )
    sys.stdout.write(text + "\n")
    return 0


def _evaluate_plots(folder: str, report) -> None:
    from ..report._shared import report_inputs
    from ._figures import plotting_unavailable, save_figures

    reason = plotting_unavailable()
    if reason is not None:
        warnings.warn(f"--plots: no figures written: {reason}", stacklevel=2)
        return
    from ._folders import writing_to

    os.environ.setdefault("MPLBACKEND", "Agg")
    with writing_to(folder, "--plots"):
        paths = save_figures(folder, report_inputs(report))
    for path in paths:
        sys.stderr.write(f"hcal: wrote {path}\n")


def _evaluate_html(path: str, report) -> None:
    from ._folders import writing_to

    os.environ.setdefault("MPLBACKEND", "Agg")
    with writing_to(os.path.dirname(path) or ".", "--html"):
        report.to_html(path)
    sys.stderr.write(f"hcal: wrote {path}\n")
