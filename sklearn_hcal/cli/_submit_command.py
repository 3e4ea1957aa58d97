"""``hcal lewidi``: the subcommand's options; the run itself is :mod:`._submit`.

Kept apart from :mod:`._submit` so that building the parser imports neither
numpy, pandas nor scikit-learn (every ``hcal`` command builds every parser).
"""

from __future__ import annotations

import argparse

from ._arguments import positive_int

__all__ = ["add_subcommand"]


def add_subcommand(sub) -> None:
    """Register ``hcal lewidi`` on the subparsers ``sub``."""
    cmd = sub.add_parser(
        "lewidi",
        help="train a per-annotator model and write a LeWiDi 2025 submission",
        description=(
            "Train the default perspectivist model (TF-IDF of the item's text and "
            "of the annotator's explanation unless --no-explanations, how alike "
            "the item's two texts are, "
            "one-hot annotator and metadata, "
            "logistic regressions; ordinal on Likert scales, one model per label "
            "for VariErrNLI) on the annotations of the --train files, print its "
            "item-grouped cross-validated scores on both tracks beside the "
            "baselines (with and without the explanations), and write "
            "DIR/<stem>_soft.tsv and DIR/<stem>_pe.tsv for "
            "the --predict file in the official 2025 submission layouts (read by "
            "'hcal evaluate'). --model transformer fine-tunes a small pretrained "
            "transformer with an embedding per annotator instead (the 'torch' and "
            "'nlp' extras; minutes a fit on a CPU), --model ensemble averages the "
            "two models' per-annotator distributions; --encoder adds a frozen "
            "sentence encoder's vectors to the default model's features."
        ),
    )
    cmd.add_argument(
        "--train",
        action="append",
        required=True,
        metavar="FILE.json",
        help="a LeWiDi harmonised training file with annotations; repeatable "
        "(e.g. the train and dev splits of one data set)",
    )
    cmd.add_argument(
        "--predict",
        required=True,
        metavar="TEST.json",
        help="the file to predict (its annotators field lists whose labels to "
        "predict); not one of the training files",
    )
    cmd.add_argument(
        "--out", required=True, metavar="DIR", help="folder for the two .tsv files"
    )
    cmd.add_argument(
        "--model",
        choices=("default", "transformer", "ensemble"),
        default="default",
        help="default: TF-IDF and logistic regressions (seconds); transformer: "
        "all-MiniLM-L6-v2 fine-tuned with an embedding per annotator (minutes "
        'on a CPU; needs pip install "sklearn-hcal[torch,nlp]"); ensemble: '
        "the mean of the default model's and --transformer-seeds transformers' "
        "per-annotator distributions (default: default)",
    )
    cmd.add_argument(
        "--transformer-model",
        metavar="DIR",
        default=None,
        help="a local Hugging Face model folder for --model transformer or "
        "ensemble (default: all-MiniLM-L6-v2 as packaged by the 'nlp' extra); "
        "nothing is downloaded",
    )
    cmd.add_argument(
        "--transformer-seeds",
        type=_at_least_one,
        default=None,
        metavar="N",
        help="fine-tune N transformers of torch seeds --seed, --seed + 1, ... and "
        "average them (default 2 for --model ensemble, chosen by "
        "cross-validation; 1 for --model transformer); each is a fit of minutes "
        "on a CPU",
    )
    cmd.add_argument(
        "--encoder",
        nargs="?",
        const="minilm",
        default=None,
        metavar="DIR",
        help="add a frozen sentence encoder's vectors of the item's texts and "
        "of the explanation to the default model's features (--model default "
        "or ensemble): all-MiniLM-L6-v2 as packaged by the 'nlp' extra, or the "
        "local model folder DIR, reduced by a PCA (the configuration chosen by "
        "cross-validation; 'pip install \"sklearn-hcal[torch,nlp]\"'; about "
        "half a minute of encoding on a CPU); nothing is downloaded",
    )
    cmd.add_argument(
        "--device",
        choices=("cpu", "cuda", "auto"),
        default=None,
        help="where the transformer trains (default cpu; auto: cuda when there is one)",
    )
    cmd.add_argument(
        "--folds",
        type=_folds,
        default=None,
        help="item-grouped cross-validation folds for the printed scores "
        "(at least 2; 0 skips the cross-validation; default 5 for --model "
        "default, 0 for the transformer models, whose every fold is a fit of "
        "minutes)",
    )
    cmd.add_argument(
        "--no-explanations",
        dest="explanations",
        action="store_false",
        help="do not read the annotators' own explanations (other_info."
        "explanations), in training or in the file to predict: the model "
        "predicts from the item's text and the annotator alone",
    )
    cmd.add_argument(
        "--seed",
        type=positive_int,
        default=0,
        help="seed of the folds' shuffle and of the model (default 0)",
    )
    cmd.add_argument(
        "--quiet", action="store_true", help="no progress messages on stderr"
    )
    cmd.set_defaults(handler=_cmd_lewidi)


def _at_least_one(text: str) -> int:
    """``--transformer-seeds``: a whole number of at least 1 (argparse type)."""
    value = positive_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _folds(text: str) -> int:
    """``--folds``: 0 (no cross-validation) or at least 2 (argparse type)."""
    value = positive_int(text)
    if value == 1:
        raise argparse.ArgumentTypeError(
            "1 fold leaves nothing to test on: give at least 2, or 0 to skip the "
            "cross-validation"
        )
    return value


def _cmd_lewidi(args) -> int:
    from ._submit import run_lewidi

    return run_lewidi(args)
