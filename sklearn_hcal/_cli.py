"""The ``hcal`` command line (also ``python -m sklearn_hcal``).

Subcommands:

* ``hcal demo`` -- the library's main job on the embedded Mix-Digits data
  (:func:`sklearn_hcal._demo.run_demo`): train a CNN on one label per item,
  calibrate it on multi-label validation histograms, evaluate on 10-label
  test histograms; prints three tables and writes them (CSV, Markdown) to
  ``--out``.
* ``hcal evaluate COUNTS --pred NAME=FILE ...`` -- score users' prediction
  files against label-histogram files, without writing Python.

Exit status: 0 on success, 2 with a one-line ``hcal: error: ...`` message on
stderr for bad usage or bad files (no traceback), 130 when interrupted.
Unexpected internal errors keep their traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from collections.abc import Sequence

__all__ = ["main", "build_parser", "EVALUATE_METRICS"]

#: ``hcal evaluate`` columns: report column -> metric function name (the
#: names of :mod:`sklearn_hcal.metrics`), in the default order.
EVALUATE_METRICS = {
    "accuracy": "majority_accuracy_score",
    "ece": "expected_calibration_error",
    "classwise_ece": "classwise_expected_calibration_error",
    "rank_cs": "ranking_calibration_score",
    "ent_ce": "entropy_calibration_error",
    "dist_ce": "distribution_calibration_error",
    "jsd": "jensen_shannon_distance",
    "kl": "kl_divergence",
    "log_loss": "histogram_log_loss",
    "sq_loss": "expected_squared_loss",
    "el": "epistemic_loss",
    "cl": "calibration_loss",
    "ce": "calibration_error",
    "dl": "dispersion_loss",
    "disagreement_sq_loss": "disagreement_squared_loss",
    "disagreement_ce": "disagreement_calibration_error",
}
_BY_FUNCTION = {v: k for k, v in EVALUATE_METRICS.items()}
# Metrics that need integer counts (n_i) or pairs of annotators.
_NEEDS_COUNTS = {
    "sq_loss",
    "el",
    "cl",
    "ce",
    "dl",
    "disagreement_sq_loss",
    "disagreement_ce",
}
_NEEDS_PAIRS = {"disagreement_sq_loss", "disagreement_ce"}


class UsageError(Exception):
    """Bad usage or bad input: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the usage block and exits; the CLI wants one line and
    # lets main() decide the exit status.
    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


# --------------------------------------------------------------------------- #
# argument parsing
# --------------------------------------------------------------------------- #
def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"expected a non-negative integer, got {value}"
        )
    return value


def _pred_spec(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(
            f"expected NAME=FILE (e.g. --pred roberta=preds.json), got {text!r}"
        )
    return name.strip(), path.strip()


def build_parser() -> argparse.ArgumentParser:
    """The ``hcal`` argument parser (subcommands ``demo`` and ``evaluate``)."""
    from . import __version__

    parser = _Parser(
        prog="hcal",
        description=(
            "Calibrate classifiers to human label distributions and evaluate them "
            "against those distributions."
        ),
        epilog="Run 'hcal COMMAND --help' for the options of a command.",
    )
    parser.add_argument(
        "--version", action="version", version=f"hcal (sklearn-hcal) {__version__}"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    demo = sub.add_parser(
        "demo",
        help="train, calibrate and evaluate on the embedded Mix-Digits data",
        description=(
            "Mimori et al.'s single-label experiment on Mix-Digits (scikit-learn's "
            "8x8 digits, a third of them blended in pairs; no download): a small "
            "CNN trained on ONE label per item; temperature scaling, "
            "alpha-calibration and MC dropout fitted on multi-label validation "
            "histograms; evaluation on 10-label test histograms against the "
            "oracle. Prints the tables of Mimori et al. (2021), Baan et al. "
            "(2022) and ChaosNLI (Nie et al. 2020) with bootstrap intervals and "
            "writes them as CSV and Markdown. Needs the torch extra."
        ),
    )
    demo.add_argument(
        "--out",
        default="hcal-demo",
        metavar="DIR",
        help="output folder for the tables and figures (default: ./hcal-demo/)",
    )
    demo.add_argument(
        "--quick",
        action="store_true",
        help="seconds-long smoke run (4 epochs, 20 bootstrap resamples, 5 MC samples)",
    )
    demo.add_argument(
        "--seed", type=_positive_int, default=0, help="random seed (default: 0)"
    )
    demo.add_argument(
        "--val-annotations",
        type=_positive_int,
        default=5,
        metavar="N",
        help="labels per validation item, at least 2 (default: 5)",
    )
    demo.add_argument(
        "--device",
        choices=["cpu", "cuda", "auto"],
        default="cpu",
        help="torch device (default: cpu; auto picks CUDA when available)",
    )
    demo.add_argument(
        "--epochs",
        type=_positive_int,
        default=None,
        metavar="N",
        help="training epochs (default: 40, or 4 with --quick)",
    )
    demo.add_argument(
        "--bootstrap",
        type=_positive_int,
        default=None,
        metavar="N",
        help="bootstrap resamples, 0 for none (default: 1000, or 20 with --quick)",
    )
    demo.add_argument(
        "--threads",
        type=_positive_int,
        default=1,
        metavar="N",
        help="torch CPU threads (default: 1, fastest for this small CNN)",
    )
    demo.add_argument("--no-figures", action="store_true", help="do not write figures")
    demo.add_argument(
        "-q", "--quiet", action="store_true", help="no progress lines on stderr"
    )
    demo.set_defaults(handler=_cmd_demo)

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
            "otherwise by position; classes by name when both files name them."
        ),
        epilog=(
            "A ChaosNLI file with several models gives one row per model, named "
            "NAME/model; with one model the row is NAME. With --format json the "
            "output is {prediction: {metric function name: value}}, and with "
            '--bootstrap each value is {"value": v, "low": l, "high": h}.'
        ),
    )
    ev.add_argument("counts", metavar="COUNTS", help="label histograms file")
    ev.add_argument(
        "--pred",
        dest="preds",
        action="append",
        type=_pred_spec,
        metavar="NAME=FILE",
        required=True,
        help="a prediction file and its name in the table (repeatable)",
    )
    ev.add_argument(
        "--logits",
        action="store_true",
        help="the .npy/.csv predictions are logits: apply a softmax",
    )
    ev.add_argument(
        "--format",
        choices=["markdown", "csv", "json"],
        default="markdown",
        help="output table format on stdout (default: markdown)",
    )
    ev.add_argument(
        "--metrics",
        default=None,
        metavar="NAMES",
        help=(
            "comma-separated metric function names (default: all that the "
            "histograms support), e.g. jensen_shannon_distance,kl_divergence"
        ),
    )
    ev.add_argument(
        "--bootstrap",
        type=_positive_int,
        default=0,
        metavar="N",
        help="bootstrap resamples for 95%% intervals (default: 0, none)",
    )
    ev.add_argument(
        "--seed", type=_positive_int, default=0, help="bootstrap seed (default: 0)"
    )
    ev.add_argument(
        "--id-column",
        default=None,
        metavar="NAME",
        help="name of the item-id column of CSV files (default: uid or id if present)",
    )
    ev.add_argument(
        "--digits",
        type=_positive_int,
        default=4,
        metavar="N",
        help="decimals in the Markdown table (default: 4)",
    )
    ev.add_argument(
        "--plots",
        default=None,
        metavar="DIR",
        help="also save figures to DIR (needs matplotlib and sklearn_hcal.plotting)",
    )
    ev.set_defaults(handler=_cmd_evaluate)
    return parser


# --------------------------------------------------------------------------- #
# hcal demo
# --------------------------------------------------------------------------- #
def _cmd_demo(args) -> int:
    from ._demo import format_summary, run_demo

    if args.val_annotations < 2:
        raise UsageError(
            "--val-annotations must be at least 2: alpha-calibration learns from "
            f"disagreement between labels, got {args.val_annotations}"
        )
    try:
        from .utils._optional import import_optional

        import_optional("torch")
        import_optional("skorch")
    except ImportError as exc:
        raise UsageError(f"hcal demo needs PyTorch and skorch: {exc}") from None
    from .utils._optional import resolve_device

    try:
        resolve_device(args.device)
    except ValueError as exc:
        raise UsageError(f"--device {args.device}: {exc}") from None
    from pathlib import Path

    # Figures are files: never open a window from the command line.
    os.environ.setdefault("MPLBACKEND", "Agg")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {args.out}: exists and is not a folder")
    result = run_demo(
        out,
        quick=args.quick,
        seed=args.seed,
        val_annotations=args.val_annotations,
        device=args.device,
        max_epochs=args.epochs,
        n_bootstrap=args.bootstrap,
        n_threads=args.threads,
        figures=not args.no_figures,
        progress=not args.quiet,
    )
    sys.stdout.write(format_summary(result) + "\n")
    if result.figures_skipped and not args.quiet:
        sys.stderr.write(f"hcal: figures skipped: {result.figures_skipped}\n")
    return 0


# --------------------------------------------------------------------------- #
# hcal evaluate
# --------------------------------------------------------------------------- #
def _resolve_metric_names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise UsageError("--metrics is empty")
    out = []
    for name in names:
        if name in _BY_FUNCTION:
            out.append(_BY_FUNCTION[name])
        elif name in EVALUATE_METRICS:  # the report's short column names
            out.append(name)
        else:
            raise UsageError(
                f"--metrics: unknown metric {name!r}; choose from "
                f"{', '.join(EVALUATE_METRICS.values())}"
            )
    return out


def _load_inputs(args):
    from ._io import InputError, align_predictions, read_histograms, read_predictions

    try:
        hist = read_histograms(args.counts, id_column=args.id_column)
        predictions = {}
        for name, path in args.preds:
            models = read_predictions(
                path, id_column=args.id_column, logits=args.logits
            )
            for model, table in models.items():
                row = name if len(models) == 1 else f"{name}/{model}"
                if row in predictions:
                    raise InputError(
                        f"--pred {name}={path}: the name {row!r} is used twice; give "
                        "every prediction a different NAME"
                    )
                label = row if model else name
                predictions[row] = align_predictions(hist, table, name=label)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    return hist, predictions


def _evaluate_table(args, hist, predictions):
    import numpy as np

    from .metrics import human_calibration_report

    Y = hist.values
    metrics = _resolve_metric_names(args.metrics)
    integer = bool(np.all(np.mod(Y, 1) == 0))
    if metrics is not None:
        for m in metrics:
            if m in _NEEDS_COUNTS and not integer:
                raise UsageError(
                    f"--metrics {EVALUATE_METRICS[m]}: needs integer label counts, "
                    f"but {hist.path} holds probabilities"
                )
            if m in _NEEDS_PAIRS and not np.any(Y.sum(axis=1) >= 2):
                raise UsageError(
                    f"--metrics {EVALUATE_METRICS[m]}: needs items with at least 2 "
                    f"labels; every item of {hist.path} has one"
                )
    report = human_calibration_report(
        Y,
        predictions,
        metrics=metrics,
        n_bootstrap=args.bootstrap,
        random_state=args.seed,
    )
    rename = {}
    for col in report.columns:
        for suffix in ("", "_low", "_high"):
            base = col[: len(col) - len(suffix)] if suffix else col
            if col.endswith(suffix) and base in EVALUATE_METRICS:
                rename[col] = EVALUATE_METRICS[base] + suffix
                break
    report = report.rename(columns=rename)
    report.index.name = "prediction"
    return report


def _json_number(value):
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def _to_json(report, with_ci: bool) -> str:
    names = [c for c in report.columns if not c.endswith(("_low", "_high"))]
    out = {}
    for row, values in report.iterrows():
        entry = {}
        for m in names:
            if with_ci:
                entry[m] = {
                    "value": _json_number(values[m]),
                    "low": _json_number(values[f"{m}_low"]),
                    "high": _json_number(values[f"{m}_high"]),
                }
            else:
                entry[m] = _json_number(values[m])
        out[str(row)] = entry
    return json.dumps(out, indent=2, allow_nan=False)


def _cmd_evaluate(args) -> int:
    from ._io import markdown_table

    hist, predictions = _load_inputs(args)
    report = _evaluate_table(args, hist, predictions)
    with_ci = args.bootstrap > 0
    if args.format == "json":
        text = _to_json(report, with_ci)
    elif args.format == "csv":
        text = report.to_csv(float_format="%.10g").rstrip("\n")
    else:
        text = markdown_table(report, digits=args.digits)
    sys.stdout.write(text + "\n")
    if args.plots is not None:
        _evaluate_plots(args.plots, hist, predictions)
    return 0


def _evaluate_plots(folder: str, hist, predictions) -> None:
    from ._demo import plotting_unavailable, save_figures

    reason = plotting_unavailable()
    if reason is not None:
        warnings.warn(f"--plots: no figures written: {reason}", stacklevel=2)
        return
    os.environ.setdefault("MPLBACKEND", "Agg")
    for path in save_figures(folder, hist.values, predictions):
        sys.stderr.write(f"hcal: wrote {path}\n")


# --------------------------------------------------------------------------- #
# entry point
# --------------------------------------------------------------------------- #
def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())
    stream = sys.stderr if file is None else file
    try:
        stream.write(f"hcal: warning: {text}\n")
    except (OSError, ValueError):  # closed stream
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hcal`` command line.

    Parameters
    ----------
    argv : sequence of str, default=None
        Arguments without the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 2 on bad usage or bad input (one line on stderr),
        130 when interrupted.

    Examples
    --------
    >>> from sklearn_hcal._cli import main
    >>> main(["evaluate", "missing.npy", "--pred", "m=p.npy"])
    2
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if getattr(args, "handler", None) is None:
            parser.print_help(sys.stderr)
            raise UsageError("a command is required: demo or evaluate")
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            return args.handler(args)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    except UsageError as exc:
        sys.stderr.write(f"hcal: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("hcal: interrupted\n")
        return 130
