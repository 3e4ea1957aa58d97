"""``hcal demo``: the subcommand's options; the demo itself is :mod:`._demo`.

Kept apart from :mod:`._demo` so that building the parser imports neither
scikit-learn nor PyTorch, and ``hcal demo`` prints its first line at once.
"""

from __future__ import annotations

from ..utils._progress import Progress
from ._arguments import positive_int

__all__ = ["add_subcommand"]


def add_subcommand(sub) -> None:
    """Register ``hcal demo`` on the subparsers ``sub``."""
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
        "--seed", type=positive_int, default=0, help="random seed (default: 0)"
    )
    demo.add_argument(
        "--val-annotations",
        type=positive_int,
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
    for flag, what in (
        ("--epochs", "training epochs (default: 40, or 4 with --quick)"),
        (
            "--bootstrap",
            "bootstrap resamples, 0 for none (default: 1000, or 20 with --quick)",
        ),
    ):
        demo.add_argument(flag, type=positive_int, default=None, metavar="N", help=what)
    demo.add_argument(
        "--threads",
        type=positive_int,
        default=1,
        metavar="N",
        help="torch CPU threads (default: 1, fastest for this small CNN)",
    )
    demo.add_argument("--no-figures", action="store_true", help="do not write figures")
    demo.add_argument(
        "-q", "--quiet", action="store_true", help="no progress lines on stderr"
    )
    demo.set_defaults(handler=_cmd_demo)


def _cmd_demo(args) -> int:
    import importlib.util

    from ._errors import InputError
    from ._folders import prepare_output_dir

    # What can be checked without PyTorch is checked first: an error is the
    # only line of a failed command.
    if args.val_annotations < 2:
        raise InputError(
            "--val-annotations must be at least 2: alpha-calibration learns from "
            f"disagreement between labels, got {args.val_annotations}"
        )
    # the output folder is checked (created, probed) before training
    prepare_output_dir(args.out, "--out")
    installed = all(importlib.util.find_spec(m) for m in ("torch", "skorch"))
    # The first line within a second of the command: importing PyTorch takes
    # seconds, and a silent terminal looks hung. A CUDA device can only be
    # checked once PyTorch is loaded: then the line waits for that check.
    prog = Progress(None, enabled=not args.quiet)
    if installed and args.device == "cpu":
        prog.message("hcal demo: loading PyTorch and skorch")
    with prog.shared_clock():
        from ._demo import demo_command

        return demo_command(args)
