"""The fine-tuned transformer per annotator, as a perspectivist classifier."""

from __future__ import annotations

from collections.abc import Hashable
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..._frontend import unseen_rows, warn_fallbacks
from ..._validation import refuse_first
from ...utils._compat import Interval, StrOptions, fit_context, validate_data
from ...utils._optional import import_optional, resolve_device
from .._classifier import PerspectivistClassifier
from .._column_roles import _infer_role, check_explanation
from .._encoders import resolve_model_path
from .._input import (
    check_labels,
    check_table,
    require_frame,
    seen_annotators,
)
from ._inputs import head_kind, head_probabilities, head_targets, n_outputs, row_texts

__all__ = ["TransformerPerspectivistClassifier"]


class TransformerPerspectivistClassifier(PerspectivistClassifier):
    """A pretrained transformer fine-tuned on each annotator's labels (skorch).

    The same long table and methods as :class:`PerspectivistClassifier`
    (``fit``, :meth:`predict_proba`, and the inherited ``predict`` with the
    Bayes decision of each track, ``predict_soft_labels`` and ``score``),
    with a network that reads the text: a row's item text fields, joined
    by the tokenizer's separator (``"text1 [SEP] text2"``) and paired with
    the annotator's explanation (when ``explanation`` names a column of
    ``X``), go through a pretrained encoder; the mean of its token vectors
    plus the annotator's embedding (``annotator_dim`` numbers, learned,
    projected to the encoder's width) goes through an MLP head:

    * categorical classes: softmax over the classes (cross-entropy);
    * an ordinal (Likert) scale: K − 1 cumulative sigmoids
      ``P(y > c_k)`` (binary cross-entropy), whose differences are the
      class probabilities and whose median ``predict`` gives;
    * multi-label targets: one sigmoid per label, cut at ``threshold``.

    Nothing is downloaded: ``model`` is a local folder, loaded with
    ``local_files_only=True``. The word embeddings stay frozen; the rest of
    the encoder is trained at ``lr``, the embedding and head at
    ``head_lr`` (AdamW). Annotator metadata columns are not read (the
    annotator's embedding learns what it needs of the annotator).

    Rows of annotators not seen in ``fit`` get the mean of the learned
    annotator embeddings (the pool's average reader), with a
    ``UserWarning``; rows without an explanation get an empty one.

    Parameters
    ----------
    model : str, path or None, default=None
        A local Hugging Face model folder (``config.json``, weights,
        tokenizer). None: all-MiniLM-L6-v2 as packaged by the ``nlp`` extra;
        its pretraining data include Quora duplicate questions and MultiNLI,
        the sources of LeWiDi's Paraphrase and VariErrNLI items.
    text_columns : str, list or None, default=None
        The item's text fields, in the order they are joined. None: the
        free-text columns of ``X`` other than the keys and the explanation
        (as :class:`AnnotationVectorizer` finds them).
    explanation : str or None, default="explanation"
        The column of the annotator's explanation, paired with the text when
        ``X`` has it; None: explanations are not read.
    item, annotator : hashable, default="item", "annotator"
        The key columns (``annotator=None``: one embedding for all rows).
    classes, ordinal, decision, threshold :
        As in :class:`PerspectivistClassifier`.
    max_epochs : int, default=3
        Passes over the training rows.
    lr : float, default=5e-5
        AdamW's learning rate of the encoder.
    head_lr : float, default=1e-3
        AdamW's learning rate of the annotator embedding and the head.
    batch_size : int, default=16
        Rows per step (length-bucketed batches).
    max_length : int, default=128
        Tokens per row (text and explanation together), cut beyond.
    annotator_dim : int, default=16
        Width of the annotator embedding.
    hidden : int, default=256
        Width of the head's hidden layer.
    dropout : float, default=0.1
        Dropout in the head.
    device : str, default="cpu"
        ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``.
    random_state : int or None, default=None
        Seeds torch's global generator at the start of ``fit``
        (initialisation, dropout, batch order): a fit on the CPU is then
        reproducible. None leaves the generator as it is.
    verbose : int, default=0
        1: a line per epoch (skorch's log: loss and duration).

    Attributes
    ----------
    net_ : skorch.NeuralNet
        The trained net.
    tokenizer_ : transformers tokenizer
    n_positions_ : int or None
        The token positions the model reads (its ``max_position_embeddings``):
        a row tokenized longer is refused, naming it.
    head_ : {"categorical", "ordinal", "multilabel"}
    text_columns_ : list
        The text fields read, in order.
    explanation_ : str or None
        The explanation column read, if any.
    model_path_ : str
        The model folder.
    classes_, annotators_, multilabel_, ordinal_, decision_, \
n_features_in_, feature_names_in_ :
        As in :class:`PerspectivistClassifier`.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.perspectivist import TransformerPerspectivistClassifier
    >>> X = pd.DataFrame({
    ...     "item": ["q1", "q1", "q2", "q2"],
    ...     "annotator": ["A", "B", "A", "B"],
    ...     "text": ["How do I learn Python fast?"] * 2
    ...     + ["Why is the sky blue at noon?"] * 2,
    ... })
    >>> clf = TransformerPerspectivistClassifier(
    ...     text_columns="text", max_epochs=1, random_state=0
    ... ).fit(X, [1, 0, 0, 0])
    >>> clf.predict_proba(X).shape
    (4, 2)
    """

    _parameter_constraints = {
        "model": [str, Path, None],
        "text_columns": [str, list, tuple, None],
        "explanation": [Hashable, None],
        "item": [Hashable, None],
        "annotator": [Hashable, None],
        "classes": ["array-like", None],
        "ordinal": ["boolean", StrOptions({"auto"})],
        "decision": [StrOptions({"auto", "mode", "median", "threshold"})],
        "threshold": [Interval(Real, 0, 1, closed="neither")],
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "head_lr": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_length": [Interval(Integral, 2, None, closed="left")],
        "annotator_dim": [Interval(Integral, 1, None, closed="left")],
        "hidden": [Interval(Integral, 1, None, closed="left")],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "device": [str],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        model=None,
        *,
        text_columns=None,
        explanation="explanation",
        item="item",
        annotator="annotator",
        classes=None,
        ordinal="auto",
        decision="auto",
        threshold=0.5,
        max_epochs=3,
        lr=5e-5,
        head_lr=1e-3,
        batch_size=16,
        max_length=128,
        annotator_dim=16,
        hidden=256,
        dropout=0.1,
        device="cpu",
        random_state=None,
        verbose=0,
    ):
        self.model = model
        self.text_columns = text_columns
        self.explanation = explanation
        self.item = item
        self.annotator = annotator
        self.classes = classes
        self.ordinal = ordinal
        self.decision = decision
        self.threshold = threshold
        self.max_epochs = max_epochs
        self.lr = lr
        self.head_lr = head_lr
        self.batch_size = batch_size
        self.max_length = max_length
        self.annotator_dim = annotator_dim
        self.hidden = hidden
        self.dropout = dropout
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fine-tune the encoder, the annotator embedding and the head.

        Parameters
        ----------
        X : DataFrame of shape (n_annotations, n_columns)
            One row per (item, annotator): the keys, the text fields and
            (optionally) the explanation; not the label.
        y : array-like of shape (n_annotations,) or (n_annotations, n_labels)
            Each row's label, as in :meth:`PerspectivistClassifier.fit`.

        Returns
        -------
        self : TransformerPerspectivistClassifier
        """
        require_frame(X)
        table = check_table(X, item=self.item, annotator=self.annotator, y=y)
        target = check_labels(y, table, classes=self.classes)
        validate_data(self, X, reset=True, skip_check_array=True)
        self._take_scale(target, self.ordinal)
        self.text_columns_ = self._text_columns(X)
        check_explanation(X, self.explanation)
        self.explanation_ = self.explanation if self.explanation in X.columns else None
        self.optional_columns_ = [self.explanation_] if self.explanation_ else []
        self.fallback_estimators_ = {}
        self.model_path_ = resolve_model_path(self.model)
        device = resolve_device(self.device)
        self.head_ = head_kind(self.multilabel_, self.ordinal_)
        self.annotators_ = seen_annotators(X, self.annotator)
        transformers = import_optional("transformers")
        self.tokenizer_ = transformers.AutoTokenizer.from_pretrained(
            self.model_path_, local_files_only=True
        )
        # longer token rows would fail in torch with a tensor-size error
        self.n_positions_ = getattr(
            transformers.AutoConfig.from_pretrained(
                self.model_path_, local_files_only=True
            ),
            "max_position_embeddings",
            None,
        )
        torch = import_optional("torch")
        from ._net import build_net  # torch, skorch, transformers

        inputs, _ = self._inputs(X)
        targets = head_targets(self.head_, target.target, self.classes_)
        if self.random_state is not None:
            torch.manual_seed(self.random_state)
        self.net_ = build_net(
            model_path=self.model_path_,
            n_annotators=1 if self.annotators_ is None else len(self.annotators_),
            n_outputs=n_outputs(self.head_, len(self.classes_)),
            kind=self.head_,
            annotator_dim=self.annotator_dim,
            hidden=self.hidden,
            dropout=self.dropout,
            lr=self.lr,
            head_lr=self.head_lr,
            batch_size=self.batch_size,
            max_epochs=self.max_epochs,
            device=str(device),
            verbose=self.verbose,
        )
        self.net_.fit(inputs, targets)
        return self

    def _text_columns(self, X: pd.DataFrame) -> list:
        keys = {self.item, self.annotator, self.explanation}
        if self.text_columns is not None:
            names = (
                [self.text_columns]
                if isinstance(self.text_columns, str)
                else list(self.text_columns)
            )
            absent = [c for c in names if c not in X.columns]
            if absent:
                raise ValueError(
                    f"text_columns names {absent[0]!r}, not a column of X "
                    f"{list(X.columns)}."
                )
            return names
        names = [c for c in X.columns if c not in keys and _infer_role(X[c]) == "text"]
        if not names:
            raise ValueError(
                f"X has no free-text column for the transformer to read (columns "
                f"{list(X.columns)}); name the item's text fields with "
                "text_columns=."
            )
        return names

    def _inputs(self, X: pd.DataFrame):
        """``(inputs, unseen)``: the net's dict of arrays, the unseen rows."""
        first, second = row_texts(
            X, self.text_columns_, self.explanation_, self.tokenizer_.sep_token
        )
        tokens = self.tokenizer_(
            first,
            second,
            truncation=True,
            max_length=self.max_length,
            padding="longest",
            return_tensors="np",
        )
        positions = getattr(self, "n_positions_", None)
        lengths = tokens["attention_mask"].sum(axis=1)
        if positions is not None:
            refuse_first(
                lengths > positions,
                lambda row: (
                    f"X at row {row} is {int(lengths[row])} tokens long, more than "
                    f"the {positions} token positions of the model "
                    f"{self.model_path_}; give max_length={positions} or less "
                    f"(it is {self.max_length})."
                ),
            )
        if self.annotators_ is None:
            codes = np.zeros(len(X), dtype=np.int64)
        else:
            codes = pd.Index(self.annotators_).get_indexer(
                X[self.annotator].astype(object)
            )
        inputs = {
            "input_ids": tokens["input_ids"].astype(np.int64),
            "attention_mask": tokens["attention_mask"].astype(np.int64),
            "annotator": codes.astype(np.int64),
        }
        return inputs, codes < 0

    def predict_proba(self, X) -> np.ndarray:
        """Each annotator's label distribution.

        Parameters
        ----------
        X : DataFrame of shape (n_annotations, n_columns)
            With the columns of ``fit`` (the explanation may be absent).

        Returns
        -------
        P : ndarray of shape (n_annotations, n_classes)
            Columns in the order of ``classes_``; multi-label: the
            probability of each label (rows need not sum to 1).
        """
        check_is_fitted(self)
        X, _ = self._check_predict(X)
        from ._net import logits

        inputs, unseen = self._inputs(X)
        # the one wording of rows predicted by a stand-in (developer guide
        # §estimators), as the perspectivist classifier and the aggregators say it
        warn_fallbacks(
            type(self).__name__,
            [
                unseen_rows(
                    X,
                    self.annotator,
                    np.asarray(unseen, dtype=bool),
                    "the mean of the learned annotator embeddings",
                )
            ],
        )
        return head_probabilities(self.head_, logits(self.net_, inputs))

    def __sklearn_tags__(self):
        # the parent's tags describe its wrapped estimator; this one has none
        tags = super(PerspectivistClassifier, self).__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        tags.classifier_tags.multi_label = True
        tags.non_deterministic = self.random_state is None
        return tags
