"""``hcal demo``: the Mix-Digits experiment, its tables, notes and figures.

The experiment itself is :mod:`sklearn_hcal.cli._experiment`; this module
runs it with a preset, lays its report out as the tables of the three papers
and writes them (CSV, Markdown, ``report.md``) and the figures.
"""

from __future__ import annotations

import numbers
import os
import sys
import time
from pathlib import Path

from sklearn.utils import Bunch

from ..utils._compat import Interval, StrOptions, validate_params
from ..utils._interrupt import reraise_interrupt
from ..utils._progress import Progress
from . import _experiment
from ._demo_notes import demo_notes, legend_entries
from ._demo_report import write_html_report
from ._errors import InputError
from ._folders import prepare_output_dir, writing_to
from ._output import markdown_table
from ._terminal import fit_table, legend_lines, terminal_width

__all__ = [
    "DEMO_METHODS",
    "DEMO_TABLES",
    "demo_command",
    "format_summary",
    "run_demo",
]

#: Rows of every table, in order.
DEMO_METHODS = (
    "Raw",
    "Raw+ts",
    "Raw+α",
    "Raw+ts+α",
    "MC-dropout",
    "MC-dropout+α",
    "Oracle",
)

#: ``table -> [(column, header in the paper's terms), ...]``. Column names are
#: those of :func:`~sklearn_hcal.metrics.human_calibration_report`, plus
#: ``el_prior`` and ``el_posterior``.
DEMO_TABLES = {
    "mimori": [
        ("accuracy", "Acc"),
        ("sq_loss", "L̂_sq"),
        ("el", "EL"),
        ("ce", "CE"),
        ("disagreement_sq_loss", "L̂_φD"),
        ("disagreement_ce", "CE_φD"),
        ("el_prior", "EL prior"),
        ("el_posterior", "EL post."),
    ],
    "baan": [
        ("accuracy", "Acc"),
        ("ece", "ECE"),
        ("rank_cs", "RankCS"),
        ("ent_ce", "EntCE (abs)"),
        ("dist_ce", "DistCE"),
    ],
    "chaosnli": [("jsd", "JSD"), ("kl", "KL")],
}

_TITLES = {
    "mimori": "Mimori et al. (2021): squared-loss decomposition and disagreement",
    "baan": "Baan et al. (2022): calibration against the human distribution",
    "chaosnli": "Nie et al. (2020, ChaosNLI): divergence from the human distribution",
}

#: Settings of the full run and of ``quick=True``.
_PRESETS = {
    "full": {"max_epochs": 40, "n_bootstrap": 1000, "mc_samples": 20},
    "quick": {"max_epochs": 4, "n_bootstrap": 20, "mc_samples": 5},
}
_CONFIDENCE = 0.95


def _epoch_progress_callback(progress: Progress, total: int):
    from ._epoch_progress import EpochProgress

    return EpochProgress(progress, total)


def _tables(report, with_ci: bool) -> dict:
    tables = {}
    for key, spec in DEMO_TABLES.items():
        cols = []
        for col, _ in spec:
            cols += [col, f"{col}_low", f"{col}_high"] if with_ci else [col]
        tables[key] = report[cols].copy()
    return tables


def _check_device(device: str):
    from ..utils._optional import resolve_device

    return resolve_device(device)


@validate_params(
    {
        "out": [str, Path, None],
        "quick": ["boolean"],
        "seed": [Interval(numbers.Integral, 0, 2**32 - 1, closed="both")],
        "val_annotations": [Interval(numbers.Integral, 2, None, closed="left")],
        "device": [StrOptions({"cpu", "cuda", "auto"}), str],
        "max_epochs": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_bootstrap": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "mc_samples": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "n_threads": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "figures": ["boolean"],
        "progress": ["boolean", None],
        "stream": [None, object],
    },
    prefer_skip_nested_validation=True,
)
def run_demo(
    out: str | Path | None = None,
    *,
    quick: bool = False,
    seed: int = 0,
    val_annotations: int = 5,
    device: str = "cpu",
    max_epochs: int | None = None,
    n_bootstrap: int | None = None,
    mc_samples: int | None = None,
    n_threads: int | None = 1,
    figures: bool = True,
    progress: bool | None = True,
    stream=None,
) -> Bunch:
    """Run the Mix-Digits demo: train on one label, calibrate, evaluate.

    The pipeline of ``hcal demo`` (see the module notes for the steps and the
    decisions). Needs the ``torch`` extra.

    Parameters
    ----------
    out : str or path, default=None
        Folder for the tables (``mimori``, ``baan``, ``chaosnli`` as ``.csv``
        and ``.md``, plus ``report.md`` with all three and the notes, and
        ``report.html``, the whole report in one file) and the figures;
        created if needed, and checked to be writable before training
        (``ValueError`` otherwise). None writes nothing.
    quick : bool, default=False
        A seconds-long smoke run: 4 epochs, 20 bootstrap resamples, 5 MC-dropout
        members (instead of 40, 1000 and 20).
    seed : int, default=0
        Seeds the data, the network, the calibrators, the removed test labels
        and the bootstrap: the same seed gives the same tables on the CPU.
    val_annotations : int, default=5
        Labels per validation item (at least 2: α-calibration learns from
        disagreement between labels).
    device : {"cpu", "cuda", "auto"} or str, default="cpu"
        Torch device for training the CNN and fitting α; ``ValueError`` when
        CUDA is asked for and absent.
    max_epochs, n_bootstrap, mc_samples : int, default=None
        Override the preset (training epochs, bootstrap resamples -- 0 for
        none --, MC-dropout members).
    n_threads : int or None, default=1
        Torch CPU threads during the run (restored afterwards); one thread is
        fastest for this small CNN on a shared machine. None keeps torch's
        setting.
    figures : bool, default=True
        Save figures to ``out`` when matplotlib and
        :mod:`sklearn_hcal.plotting` are available.
    progress : bool, default=True
        Write progress lines (stages, epochs) to ``stream``.
    stream : file-like, default=None
        Where progress goes; None is ``sys.stderr``.

    Returns
    -------
    result : Bunch
        ``tables`` (dict ``mimori``/``baan``/``chaosnli`` -> DataFrame, one row
        per method, each metric ``m`` followed by ``m_low`` and ``m_high``
        when bootstrapped), ``markdown`` (dict of the Markdown tables),
        ``notes`` (list of str), ``files`` (paths written), ``figures``
        (figure paths, possibly empty), ``figures_skipped`` (reason or None),
        ``config``, ``n_items``, ``temperature``, ``median_concentration``
        and ``elapsed`` (seconds).

    Examples
    --------
    A one-epoch run without bootstrap (seconds; the tables are then rough):

    >>> from sklearn_hcal.cli._demo import run_demo
    >>> result = run_demo(quick=True, max_epochs=1, n_bootstrap=0, mc_samples=2,
    ...                   progress=False)
    >>> list(result.tables)
    ['mimori', 'baan', 'chaosnli']
    >>> list(result.tables["chaosnli"].index)
    ['Raw', 'Raw+ts', 'Raw+α', 'Raw+ts+α', 'MC-dropout', 'MC-dropout+α', 'Oracle']
    >>> list(result.tables["chaosnli"].columns)
    ['jsd', 'kl']
    """
    from ..utils._optional import import_optional

    torch = import_optional("torch")
    import_optional("skorch")
    start = time.perf_counter()
    if out is not None:
        # before training: a folder that cannot be written fails now
        prepare_output_dir(out, "out=")
    torch_device = _check_device(device)
    preset = dict(_PRESETS["quick" if quick else "full"])
    for key, value in (
        ("max_epochs", max_epochs),
        ("n_bootstrap", n_bootstrap),
        ("mc_samples", mc_samples),
    ):
        if value is not None:
            preset[key] = int(value)
    config = dict(
        preset,
        seed=int(seed),
        val_annotations=int(val_annotations),
        device=str(torch_device),
        quick=bool(quick),
    )
    prog = Progress(stream, enabled=bool(progress))
    previous_threads = torch.get_num_threads()
    if n_threads is not None:
        torch.set_num_threads(int(n_threads))
    try:
        # the report's bootstrap bar goes on from the demo's clock
        with prog.shared_clock():
            result = _run(config, prog, stream is None)
    finally:
        torch.set_num_threads(previous_threads)
    result.config = config
    result.notes = demo_notes(result, _CONFIDENCE)
    result.markdown = {
        key: markdown_table(result.tables[key], DEMO_TABLES[key], index_name="method")
        for key in DEMO_TABLES
    }
    result.files, result.figures = [], []
    result.figures_skipped = None
    if out is not None:
        with writing_to(out, "out="):
            result.files = _write_tables(Path(out), result)
            result.files.append(write_html_report(Path(out), result, figures))
            if figures:
                result.figures, result.figures_skipped = _save_figures(
                    Path(out), result
                )
            else:
                result.figures_skipped = "figures=False"
        for path in result.files + result.figures:
            prog.message(f"wrote {path}")
    result.elapsed = time.perf_counter() - start
    prog.message(f"done in {result.elapsed:.1f}s")
    return result


def _run(config: dict, prog: Progress, to_stderr: bool) -> Bunch:
    """The experiment with this run's settings, evaluated into the tables."""
    callback = _epoch_progress_callback(prog, config["max_epochs"])
    # skorch's fit loop swallows Ctrl-C and returns a half-trained model:
    # fit_methods stops right after the CNN's training; this block also
    # covers the calibrators (AlphaCalibrator's Adam solver is a skorch net)
    with reraise_interrupt():
        fitted = _experiment.fit_methods(
            config, prog, callbacks=[("progress", callback)]
        )
    prog.message("predicting on the test split")
    predicted = _experiment.predict_methods(fitted, config["seed"])
    B = config["n_bootstrap"]
    prog.message(
        f"evaluating {len(predicted.predictions)} methods"
        + (f" with {B} bootstrap resamples" if B else "")
    )
    # The report's own progress bar writes to standard error.
    verbose = int(prog.enabled and to_stderr)
    report = _experiment.evaluate_methods(
        predicted, n_bootstrap=B, seed=config["seed"], verbose=verbose
    )
    return Bunch(
        tables=_tables(report, with_ci=B > 0),
        report=report,
        n_items=fitted.n_items,
        temperature=fitted.temperature,
        median_concentration=fitted.median_concentration,
        predictions=predicted.predictions,
        test_counts=predicted.counts,
    )


def _write_tables(out: Path, result: Bunch) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    files = []
    sections = ["# hcal demo: Mix-Digits, one training label per item", ""]
    for key in DEMO_TABLES:
        csv_path = out / f"{key}.csv"
        result.tables[key].to_csv(csv_path, float_format="%.6g")
        md_path = out / f"{key}.md"
        md_path.write_text(result.markdown[key] + "\n", encoding="utf-8")
        files += [str(csv_path), str(md_path)]
        sections += [f"## {_TITLES[key]}", "", result.markdown[key], ""]
    legend = legend_lines(legend_entries(DEMO_TABLES), None)
    sections += ["## Columns", ""] + legend + [""]
    sections += ["## Notes", ""] + [f"* {note}" for note in result.notes]
    report = out / "report.md"
    report.write_text("\n".join(sections) + "\n", encoding="utf-8")
    files.append(str(report))
    return files


def _save_figures(out: Path, result: Bunch) -> tuple[list[str], str | None]:
    from ._figures import plotting_unavailable, save_figures

    reason = plotting_unavailable()
    if reason is not None:
        return [], reason
    from ..metrics._shared import validate_predictions

    preds = result.predictions
    inputs = validate_predictions(
        result.test_counts, {name: p[0] for name, p in preds.items()}
    )
    paths = save_figures(
        out,
        inputs,
        {name: p[1] for name, p in preds.items()},
        dotted=("Raw", "Raw+ts", "MC-dropout"),
    )
    return paths, None


def format_summary(result: Bunch, width: int | None = None) -> str:
    """The three tables, a legend of their columns and the notes as Markdown
    text (what ``hcal demo`` prints).

    Parameters
    ----------
    result : Bunch
        The return value of :func:`run_demo`.
    width : int, default=None
        Maximum line width (``hcal demo`` passes the terminal's): a table
        wider than that is transposed, then split into blocks of columns
        (:func:`~sklearn_hcal.cli._terminal.fit_table`), and legend lines
        are wrapped. None: the tables as written to the files.

    Returns
    -------
    text : str
    """
    parts = []
    for key in DEMO_TABLES:
        if width:
            table = fit_table(
                result.tables[key],
                DEMO_TABLES[key],
                width=width,
                index_name="method",
                transposed_name="column",
            )
        else:
            table = result.markdown[key]
        parts += [f"## {_TITLES[key]}", "", table, ""]
    parts += legend_lines(legend_entries(DEMO_TABLES), width) + [""]
    parts += legend_lines([(None, note) for note in result.notes], width)
    return "\n".join(parts)


def demo_command(args) -> int:
    """Run ``hcal demo`` with the parsed arguments (its exit status);
    ``_demo_command`` has checked what needs no PyTorch."""
    from ..utils._optional import import_optional

    try:
        import_optional("torch")
        import_optional("skorch")
    except ImportError as exc:
        raise InputError(f"hcal demo needs PyTorch and skorch: {exc}") from None
    try:
        _check_device(args.device)
    except ValueError as exc:
        raise InputError(f"--device {args.device}: {exc}") from None
    # The output folder is checked (created, probed) before training.
    out = prepare_output_dir(args.out, "--out")
    # Figures are files: never open a window from the command line.
    os.environ.setdefault("MPLBACKEND", "Agg")
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
    sys.stdout.write(format_summary(result, width=terminal_width()) + "\n")
    if result.figures_skipped and not args.quiet:
        sys.stderr.write(f"hcal: figures skipped: {result.figures_skipped}\n")
    return 0
