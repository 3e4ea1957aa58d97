"""Random streams keyed by a row's content, for reproducible ensemble members.

An ensemble member drawn from one random generator for a whole call depends on
which other rows are in the call, their order and the batch size. Here every
random draw is a pure function of ``(seed, member, layer, row key, unit)``:

* the **row key** is a 64-bit BLAKE2b digest of the row's content (its bytes,
  dtype and shape), so the same row gets the same members wherever it appears;
* the draws come from a counter-based generator, the SplitMix64 finaliser
  (Steele, Lea and Flood 2014) applied to ``base + (unit + 1)·γ`` where the
  ``base`` chains the other indices through the same finaliser. Nothing is
  consumed from a shared generator, so no draw can shift another.

MC dropout (:func:`dropout_hooks`) applies such masks to the net's dropout
layers through forward hooks; test-time augmentation draws each row's
augmentations from a ``RandomState`` seeded by :func:`row_seed_sequence`.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager

import numpy as np

from ..utils._optional import import_optional

__all__ = [
    "dropout_hooks",
    "keep_masks",
    "row_keys",
    "row_seed_sequence",
    "seed_from_random_state",
    "supported_dropout",
]

_MASK64 = (1 << 64) - 1
_GAMMA = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio, SplitMix64's step
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
# A uniform in [0, 1) is the top 53 bits of a 64-bit draw (as numpy does).
_UNIFORM_BITS = 53


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of ``uint64`` values (arrays wrap modulo 2^64)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _chain(*values: int) -> np.uint64:
    """One 64-bit value from a sequence of integers, order-sensitive."""
    h = np.array([0x243F6A8885A308D3], dtype=np.uint64)  # digits of π
    for v in values:
        h = _mix(h ^ np.array([int(v) & _MASK64], dtype=np.uint64))
    return h[0]


def seed_from_random_state(random_state) -> int:
    """A 64-bit seed: an int ``random_state`` is the seed itself (reproducible).

    A ``RandomState`` instance or None draws one (fresh members each call, as
    scikit-learn does with such a ``random_state``).
    """
    if isinstance(random_state, (int, np.integer)) and not isinstance(
        random_state, bool
    ):
        return int(random_state) & _MASK64
    from sklearn.utils import check_random_state

    rng = check_random_state(random_state)
    return int(rng.randint(0, np.iinfo(np.int64).max, dtype=np.int64))


def _as_numpy(a):
    if hasattr(a, "detach"):  # a torch tensor
        a = a.detach().cpu()
        try:
            return a.numpy()
        except TypeError:  # dtypes numpy lacks (bfloat16): their float32 value
            return a.float().numpy()
    return np.asarray(a)


def _content_rows(a: np.ndarray, n_rows: int) -> np.ndarray:
    """``(n_rows, n_bytes)`` uint8 view of each row's content."""
    if a.dtype == object:
        from pandas.util import hash_array

        # Objects hash by value (strings by their characters), not by address.
        flat = hash_array(a.reshape(-1).astype(object), categorize=False)
        a = flat.reshape(a.shape)
    elif a.dtype.kind == "f":
        a = a + a.dtype.type(0)  # -0.0 and 0.0 are the same number
    a = np.ascontiguousarray(a.reshape(n_rows, -1))
    return a.view(np.uint8).reshape(n_rows, -1)


def row_keys(arrays, n_rows: int) -> np.ndarray:
    """64-bit content key of each row of one or several aligned arrays.

    Parameters
    ----------
    arrays : list of array-like or torch tensors
        Every array has ``n_rows`` rows (its first dimension).
    n_rows : int

    Returns
    -------
    keys : ndarray of shape (n_rows,), dtype uint64
        Equal for rows with equal content, dtype and shape, whatever else is
        in the arrays.
    """
    parts = []
    for a in arrays:
        a = _as_numpy(a)
        if a.ndim == 0 or a.shape[0] != n_rows:
            raise ValueError(
                f"Cannot identify rows: an input of shape {a.shape} does not have "
                f"the {n_rows} rows of the batch as its first dimension."
            )
        header = f"{a.dtype.str}{a.shape[1:]}".encode()
        parts.append((header, _content_rows(a, n_rows)))
    keys = np.empty(n_rows, dtype=np.uint64)
    for i in range(n_rows):
        h = hashlib.blake2b(digest_size=8)
        for header, rows in parts:
            h.update(header)
            h.update(rows[i].tobytes())
        keys[i] = int.from_bytes(h.digest(), "little")
    return keys


def keep_masks(keys, shape, p: float, *, seed: int, member: int, layer) -> np.ndarray:
    """Bernoulli(1 − p) keep masks, one per row, a function of the row only.

    Unit ``u`` of row ``r`` is kept when the top 53 bits of
    ``mix(base_r + (u + 1)·γ)`` are at least ``ceil(p·2^53)``, with
    ``base_r = mix(key_r ^ chain(seed, member, *layer))``: each unit is kept
    with probability ``1 − p`` (to within 2^-53) independently of every other
    (row, unit, member, layer).

    Parameters
    ----------
    keys : ndarray of shape (n_rows,), dtype uint64
        Row keys (:func:`row_keys`).
    shape : tuple of int
        Mask shape of one row.
    p : float
        Drop probability in [0, 1].
    seed, member : int
    layer : tuple of int
        Identifies the dropout call within a forward pass.

    Returns
    -------
    keep : ndarray of bool of shape (n_rows, *shape)
    """
    n_units = int(np.prod(shape, dtype=np.int64))
    stream = _chain(seed, member, *layer)
    base = _mix(np.asarray(keys, dtype=np.uint64) ^ stream)
    units = (np.arange(1, n_units + 1, dtype=np.uint64) * _GAMMA)[None, :]
    bits = _mix(base[:, None] + units) >> np.uint64(64 - _UNIFORM_BITS)
    threshold = np.uint64(int(np.ceil(float(p) * 2.0**_UNIFORM_BITS)))
    return (bits >= threshold).reshape((len(keys), *shape))


def row_seed_sequence(seed: int, key) -> list:
    """Seed of a row's ``RandomState``: 32-bit words of ``(seed, key)``."""
    words = []
    for v in (int(seed) & _MASK64, int(key) & _MASK64):
        words += [v & 0xFFFFFFFF, v >> 32]
    return words


# --------------------------------------------------------------------------- #
# dropout through forward hooks
# --------------------------------------------------------------------------- #
_SUPPORTED = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d")


def supported_dropout(module) -> bool:
    """Whether per-row masks can replace ``module``'s dropout.

    ``nn.Dropout`` (element-wise) and ``nn.Dropout1d/2d/3d`` (channel-wise),
    or subclasses that keep their ``forward``, are supported. The alpha
    dropouts are not: for SELU networks they set dropped units to a negative
    saturation value and re-affine the output, which a 0/1 mask cannot do.
    """
    nn = import_optional("torch").nn
    return any(
        isinstance(module, getattr(nn, name))
        and type(module).forward is getattr(nn, name).forward
        for name in _SUPPORTED
    )


def _channelwise(module) -> bool:
    nn = import_optional("torch").nn
    return isinstance(module, (nn.Dropout1d, nn.Dropout2d, nn.Dropout3d))


def _tensors(obj, out: list) -> list:
    """All tensors in (nested) args/kwargs, in a deterministic order."""
    if hasattr(obj, "detach") and hasattr(obj, "shape"):
        out.append(obj)
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            _tensors(obj[key], out)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _tensors(item, out)
    return out


class _MaskState:
    """What the hooks share during one call of ``predict_proba_samples``."""

    def __init__(self, seed: int):
        self.seed = seed
        self.member = 0
        self.keys = None
        self.calls = {}


@contextmanager
def dropout_hooks(module, dropouts, seed: int):
    """Per-row dropout masks on ``dropouts`` of ``module`` while in the context.

    A forward pre-hook on ``module`` keys the rows of each batch by the content
    of its input tensors; a forward hook on each dropout layer (in evaluation
    mode, hence the identity) multiplies its output by the row's keep mask
    scaled by ``1/(1 − p)``, as ``torch.nn.Dropout`` does in training mode.
    Yields the shared state: set ``state.member`` before each forward pass and
    ``state.keys = None`` when the batch changes.
    """
    torch = import_optional("torch")
    state = _MaskState(seed)
    index = {id(m): i for i, m in enumerate(dropouts)}

    def pre_hook(_module, args, kwargs):
        state.calls = {}
        if state.keys is None:
            tensors = _tensors((args, kwargs), [])
            if not tensors:
                raise ValueError(
                    "MC dropout keys each row by the content of the module's "
                    "input tensors, but the module received none."
                )
            n_rows = tensors[0].shape[0] if tensors[0].ndim else 0
            state.keys = row_keys(tensors, n_rows)
        return None

    def hook(drop, _inputs, output):
        i = index[id(drop)]
        call = state.calls.get(i, 0)
        state.calls[i] = call + 1
        p = float(drop.p)
        if p == 0.0:
            return output
        keys = state.keys
        if output.ndim == 0 or output.shape[0] != len(keys):
            raise ValueError(
                f"Dropout layer {i} ({type(drop).__name__}) received a tensor of "
                f"shape {tuple(output.shape)} whose first dimension is not the "
                f"batch of {len(keys)} rows; per-row MC-dropout masks need "
                "batch-first activations."
            )
        if _channelwise(drop) and output.ndim >= 2:
            shape = (output.shape[1],) + (1,) * (output.ndim - 2)
        else:
            shape = tuple(output.shape[1:])
        keep = keep_masks(
            keys, shape, p, seed=state.seed, member=state.member, layer=(i, call)
        )
        scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
        mask = torch.from_numpy(keep).to(device=output.device, dtype=output.dtype)
        return output * (mask * scale)

    handles = [module.register_forward_pre_hook(pre_hook, with_kwargs=True)]
    try:
        handles += [m.register_forward_hook(hook) for m in dropouts]
        yield state
    finally:
        for h in handles:
            h.remove()


# --------------------------------------------------------------------------- #
# rows of user inputs (test-time augmentation)
# --------------------------------------------------------------------------- #
def input_row_keys(X, n_rows: int) -> np.ndarray:
    """Content keys of the items of any input scikit-learn can index.

    Arrays and tensors hash by their bytes (:func:`row_keys`); numeric
    DataFrames by the bytes of their values, so that they key like the same
    numbers in an array; other DataFrames and Series by value
    (``pandas.util.hash_pandas_object``, index excluded); sparse matrices by
    the columns and values of each row; other sequences by the pickled item.
    """
    import pickle

    import scipy.sparse as sp

    if hasattr(X, "iloc") and hasattr(X, "columns"):
        from pandas.api.types import is_numeric_dtype

        if all(is_numeric_dtype(dtype) for dtype in X.dtypes):
            return row_keys([X.to_numpy()], n_rows)
    if hasattr(X, "iloc"):
        from pandas.util import hash_pandas_object

        return hash_pandas_object(X, index=False).to_numpy(dtype=np.uint64)
    if sp.issparse(X):
        X = sp.csr_matrix(X).sorted_indices()
        keys = np.empty(n_rows, dtype=np.uint64)
        for i in range(n_rows):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            h = hashlib.blake2b(digest_size=8)
            h.update(f"{X.dtype.str}{X.shape[1]}".encode())
            h.update(np.ascontiguousarray(X.indices[lo:hi], dtype=np.int64).tobytes())
            h.update(np.ascontiguousarray(X.data[lo:hi]).tobytes())
            keys[i] = int.from_bytes(h.digest(), "little")
        return keys
    if hasattr(X, "detach") or isinstance(X, np.ndarray):
        return row_keys([X], n_rows)
    try:
        arr = np.asarray(X)
    except ValueError:  # ragged sequences
        arr = None
    if arr is not None and arr.dtype != object and arr.shape[:1] == (n_rows,):
        return row_keys([arr], n_rows)
    keys = np.empty(n_rows, dtype=np.uint64)
    for i, item in enumerate(X):
        digest = hashlib.blake2b(pickle.dumps(item, protocol=4), digest_size=8)
        keys[i] = int.from_bytes(digest.digest(), "little")
    return keys


def take_rows(X, idx):
    """Rows ``idx`` of ``X`` (arrays, DataFrames, sparse, lists, tensors)."""
    if hasattr(X, "iloc"):
        return X.iloc[idx]
    if hasattr(X, "detach"):
        torch = import_optional("torch")
        return X[torch.as_tensor(np.asarray(idx), dtype=torch.long)]
    if isinstance(X, (list, tuple)):
        return [X[i] for i in idx]
    return X[np.asarray(idx)]


def concat_rows(parts: list):
    """Stack augmented inputs of the same kind along their rows."""
    import scipy.sparse as sp

    first = parts[0]
    if hasattr(first, "iloc"):
        import pandas as pd

        return pd.concat(parts)
    if sp.issparse(first):
        return sp.vstack(parts, format="csr")
    if hasattr(first, "detach"):
        return import_optional("torch").cat(parts)
    if isinstance(first, (list, tuple)):
        return [item for part in parts for item in part]
    if isinstance(first, np.ndarray):
        return np.concatenate(parts)
    raise ValueError(
        f"augment returned a {type(first).__name__}; with per_row=True its "
        "outputs are stacked, which needs arrays, DataFrames, sparse matrices, "
        "lists or torch tensors. Use per_row=False for other inputs."
    )
