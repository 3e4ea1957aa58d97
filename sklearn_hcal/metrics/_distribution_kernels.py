"""Per-item kernels of the distribution-level metrics, and their reductions.

The job split off :mod:`sklearn_hcal.metrics._distribution` (which keeps the
public, validated functions and their registry declarations): functions of
already-validated float arrays returning one value per item, their
per-block versions (a block of a validated
:class:`~sklearn_hcal._validation.Pair`, sharing ``p̂`` and the entropies
between the metrics of a report), and the chunked sums and means over a
pair that every metric module uses. Import them from here, where they
are defined (developer guide §layers).
"""

from __future__ import annotations

import numpy as np

from .._validation import Pair, check_pair, row_sums
from . import _distribution_compiled as _compiled


# --------------------------------------------------------------------------- #
# Validation shared by the public metrics
# --------------------------------------------------------------------------- #
def validate_pair(
    y_true, y_prob, counts=None, *, labels=None, allow_probabilities=True
) -> Pair:
    """Validated inputs as a :class:`~sklearn_hcal._validation.Pair`.

    The caller's arrays are kept (integer, float32 or memory-mapped input is
    not copied); the metrics walk them in blocks of rows and compute in
    float64 block by block, so a float32 call agrees with the float64 one to
    rounding.
    """
    return check_pair(
        y_true,
        y_prob,
        counts=counts,
        labels=labels,
        allow_probabilities=allow_probabilities,
    )


def _pair_sum(pair: Pair, per_item) -> float:
    """``Σ_i per_item(block)_i`` accumulated block by block."""
    total = 0.0
    # np.add.reduce: np.sum's reduction without its dispatch
    for block_sum in pair.map_blocks(lambda b: float(np.add.reduce(per_item(b)))):
        total += block_sum
    return total


def _pair_mean(pair: Pair, per_item) -> float:
    """``mean_i per_item(block)_i`` accumulated block by block."""
    return _pair_sum(pair, per_item) / pair.n_samples


def _to_distribution(Y):
    """Human distribution ``p̂ = Y / n`` (rows of probabilities stay as they are)."""
    Y = np.asarray(Y, dtype=np.float64)
    return Y / row_sums(Y)[:, None]


def _log_base(base):
    return 1.0 if base is None else float(np.log(base))


def _in_base(values, base):
    """``values`` in nats divided by ``log(base)``; as they are for the
    natural log (dividing by 1.0 changes no bit: one pass fewer)."""
    return values if base is None else values / _log_base(base)


def _log_or_zero(ratio: np.ndarray) -> np.ndarray:
    """``log(ratio)`` in place, with ``log 0`` replaced by 0.

    Multiplied by the numerator of the ratio this gives ``x log(x / y)`` with
    ``0 log 0 = 0`` exactly, using numpy's vectorised ``log`` (faster than
    ``scipy.special.xlogy``/``rel_entr``) on a buffer that is reused.
    """
    ratio += ratio == 0
    return np.log(ratio, out=ratio)


def _all_positive(P: np.ndarray) -> bool:
    """Whether every entry of ``P`` is > 0 (False for NaN and empty arrays):
    then ``log`` needs no guard against 0. One reduction."""
    return P.size > 0 and bool(P.min() > 0)


# --------------------------------------------------------------------------- #
# Per-item helpers (validated arrays in, one value per item out)
# --------------------------------------------------------------------------- #
def _tvd_per_item(p_hat, P):
    """Total variation distance ``½‖q_i − p̂_i‖₁`` per item (Baan eq. 7, 9b)."""
    diff = np.subtract(P, p_hat, dtype=np.float64)
    return 0.5 * row_sums(np.abs(diff, out=diff))


def _p_log_p(P):
    """``p log p`` elementwise, with ``0·log 0 = 0``."""
    P = np.asarray(P, dtype=np.float64)
    # no zero anywhere (a softmax): the guard of log 0 would add nothing
    terms = np.log(P) if _all_positive(P) else _log_or_zero(P.copy())
    terms *= P
    return terms


def _entropy(P, base=None, terms=None):
    """Row entropies ``−Σ_k p_k log p_k`` with ``0·log 0 = 0``.

    ``terms``: the ``p log p`` of ``P`` when known (``P`` is then unused).
    """
    if terms is None:
        terms = _p_log_p(P)
    # 0.0 − x, not −x: a unanimous row's entropy is 0.0, never a printed "-0.0"
    return 0.0 - _in_base(row_sums(terms), base)


def _entropy_error_per_item(p_hat, P, base=None):
    """Signed EntCE ``H(q_i) − H(p̂_i)`` per item (Baan eq. 5).

    Positive values mean the model is more uncertain than the humans
    (under-confident), negative values over-confident.
    """
    return _entropy(P, base) - _entropy(p_hat, base)


def _jsd_per_item(p_hat, P, base=None, squared=False):
    """Jensen-Shannon distance (or divergence) per item (ChaosNLI eq. 2).

    ``JSD = sqrt(½ KL(p̂‖m) + ½ KL(q‖m))`` with ``m = ½(p̂ + q)``, the quantity
    ``scipy.spatial.distance.jensenshannon`` returns; natural log by default.
    Each term ``x log(x / m) = x log(2x / (p̂ + q))`` is computed as scipy's
    ``rel_entr`` does (one rounding for the ratio), with numpy's ``log``.
    """
    p_hat = np.asarray(p_hat, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    # q > 0 everywhere (a softmax): no total and no ratio of the q side is
    # 0, so their guards would add nothing (the same bits without them)
    positive = _all_positive(P)
    total = p_hat + P
    if not positive:
        total += total == 0  # both zero: the ratios below are 0, their terms 0
    left = _log_or_zero(np.divide(p_hat + p_hat, total))
    left *= p_hat
    right = np.divide(P + P, total, out=total)
    right = np.log(right, out=right) if positive else _log_or_zero(right)
    right *= P
    left += right
    div = 0.5 * row_sums(left)
    # Rounding can leave -1e-17 for identical rows; the divergence is >= 0.
    div = _in_base(np.maximum(div, 0.0, out=div), base)
    return div if squared else np.sqrt(div)


def _compiled_operands(block):
    """``(values, divisor, q)`` of the compiled kernels, flat C-ordered rows
    with ``p̂ = values / divisor``; None when the kernels do not run, or the
    numpy path's row sums would meet another layout than C order."""
    if not _compiled.kernels_ready():
        return None
    P = block.P
    if not P.flags.c_contiguous or P.dtype != np.float64:
        return None
    if block.p_hat_table is not None:  # counts, one number of labels
        return block.Y.reshape(-1), float(block.n[0]), P.reshape(-1)
    p_hat = block.p_hat
    if not p_hat.flags.c_contiguous:
        return None
    return p_hat.reshape(-1), 1.0, P.reshape(-1)  # x / 1.0 is x


def _block_jsd(block, base=None, squared=False):
    """:func:`_jsd_per_item` of a block; by the compiled kernels when they
    run (the same bits: both sides' ratios in one buffer for one numpy
    ``log``, then the products and row sums)."""
    operands = _compiled_operands(block)
    if operands is None:
        return _jsd_per_item(block.p_hat, block.P, base, squared)
    values, divisor, q = operands
    buf = np.empty((3, q.shape[0]))  # left and right ratios, p̂
    _compiled.jsd_ratios.get()(values, divisor, q, buf[2], buf[0], buf[1])
    np.log(buf[:2], out=buf[:2])
    _compiled.jsd_terms.get()(buf[2], q, buf[0], buf[1])
    out = np.empty(block.P.shape[0])
    _compiled.row_sums.get()(buf[0].reshape(block.P.shape), out)
    _compiled.jsd_distance.get()(out, _log_base(base), squared)
    return out


def _block_kl(block, eps=1e-15):
    """:func:`kl_per_item` of a block; by the compiled kernels when they run
    (the same bits: the ratios, one numpy ``log``, the products' row sums)."""
    operands = _compiled_operands(block)
    if operands is None:
        return kl_per_item(block.p_hat, block.P, eps)
    values, divisor, q = operands
    shape = block.P.shape
    buf = np.empty((2,) + shape)  # q' then the ratios, p̂
    _compiled.kl_floor.get()(q, float(eps), buf[0].reshape(-1))
    sums = np.empty(shape[0])
    row_sums = _compiled.row_sums.get()
    row_sums(buf[0], sums)
    ratios, p_hat = buf[0].reshape(-1), buf[1].reshape(-1)
    _compiled.kl_ratios.get()(values, divisor, sums, p_hat, ratios)
    np.log(ratios, out=ratios)
    _compiled.kl_terms.get()(p_hat, ratios)
    row_sums(buf[0], sums)
    return sums


def _floor_renormalise(P, eps):
    """Floor probabilities at ``eps`` and renormalise the rows (ChaosNLI code)."""
    Q = np.maximum(np.asarray(P, dtype=np.float64), eps)
    Q /= row_sums(Q)[:, None]
    return Q


def kl_per_item(p_hat, P, eps=1e-15):
    """``KL(p̂_i ‖ q_i)`` per item, ``q`` floored at ``eps`` and renormalised.

    Terms with ``p̂_ik = 0`` contribute 0 (ChaosNLI eq. 1).
    """
    p_hat = np.asarray(p_hat, dtype=np.float64)
    ratio = np.divide(p_hat, _floor_renormalise(P, eps))
    terms = _log_or_zero(ratio)
    terms *= p_hat
    return row_sums(terms)


def _cross_entropy_per_item(Y, P, eps=1e-15):
    """``−Σ_k Y_ik log max(q_ik, eps)`` per item (counts, not normalised)."""
    logq = np.maximum(np.asarray(P, dtype=np.float64), eps)
    np.log(logq, out=logq)
    logq *= Y
    return -row_sums(logq)


def _sort_key(Y):
    """``Y`` in the dtype that argsorts fastest with the same stable order.

    Integer-valued float counts are exact in int64, whose stable argsort is
    several times faster than float64's.
    """
    Y = np.asarray(Y)
    if Y.dtype.kind == "f" and np.all(np.floor(Y) == Y) and np.abs(Y).max() < 2**53:
        return Y.astype(np.int64)
    return Y


#: Up to this many classes the stable orders are compared pair by pair
#: (K(K − 1)/2 vectorised comparisons of two columns: 3× faster than a sort
#: per row at K = 10, 16× at K = 3, still faster at 16).
_PAIRWISE_MAX_CLASSES = 16


def _same_stable_order(Y, P, small: bool = False) -> np.ndarray:
    """Whether ``argsort(Y_i, stable) == argsort(q_i, stable)``, per item.

    A stable argsort orders the pairs ``(a_k, k)``; for ``j < k``, ``(a_j, j)``
    comes first iff ``a_j <= a_k``. Two rows have the same stable order iff
    every pair of classes compares the same way on both sides. The
    ``K(K − 1)/2`` comparisons of each side are written class by class
    (class ``j`` against the classes after it: ``2(K − 1)`` numpy calls
    for all pairs, not four per pair) into two triangles, compared once.
    ``small``: ``Y`` holds integers in ``[0, 2**15)`` (counts), compared as
    int16 (the same comparisons on a quarter of the bytes).
    """
    if small:
        Yt = Y.T.astype(np.int16, order="C")
    else:
        Yt = np.ascontiguousarray(np.asarray(Y).T)
    Pt = np.ascontiguousarray(P.T)
    n_classes, n_items = Yt.shape
    n_pairs = n_classes * (n_classes - 1) // 2
    human = np.empty((n_pairs, n_items), dtype=bool)
    model = np.empty((n_pairs, n_items), dtype=bool)
    start = 0
    for j in range(n_classes - 1):
        stop = start + n_classes - 1 - j
        np.less_equal(Yt[j], Yt[j + 1 :], out=human[start:stop])
        np.less_equal(Pt[j], Pt[j + 1 :], out=model[start:stop])
        start = stop
    differ = np.not_equal(human, model, out=human)
    return ~differ.any(axis=0)


def _rank_match_per_item(Y, P, ties="strict", small: bool = False):
    """Whether the model's class ranking matches the human one, per item.

    ``ties="strict"`` (Baan et al.'s code): ``argsort(q_i, kind="stable")`` equals
    ``argsort(Y_i, kind="stable")`` element-wise, so tied classes must come in
    the same index order on both sides. Up to :data:`_PAIRWISE_MAX_CLASSES`
    classes computed pair by pair (:func:`_same_stable_order`), else with a
    single argsort: the stable argsort of ``q`` is the unique order in which
    the pairs
    ``(q_k, k)`` increase strictly, so it equals ``σ = argsort(Y_i)`` iff
    along ``σ`` every step increases ``q`` or keeps it and increases the
    class index.

    ``ties="weak"``: the model must reproduce every *strict* human preference
    strictly -- for all classes ``j, k``: ``Y_ij > Y_ik`` implies
    ``q_ij > q_ik`` -- while human ties impose nothing (the tied classes may
    come in any order). A model tie between classes that humans rank
    differently is a mismatch. Checked in ``O(K log K)`` per item: sort the
    classes by ``q`` ascending; the condition holds iff ``Y`` is non-decreasing
    along that order and constant within every run of equal ``q``. Ties in
    ``q`` are exact float equality. ``small``: see :func:`_same_stable_order`.
    """
    P = np.asarray(P, dtype=np.float64)
    if ties == "strict" and P.shape[1] <= _PAIRWISE_MAX_CLASSES:
        return _same_stable_order(Y, P, small)
    if ties == "strict":
        order = np.argsort(_sort_key(Y), axis=1, kind="stable")
        dq = np.diff(np.take_along_axis(P, order, axis=1), axis=1)
        ok = (dq > 0) | ((dq == 0) & (np.diff(order, axis=1) > 0))
        return np.all(ok, axis=1)
    if ties != "weak":
        raise ValueError(f"ties must be 'strict' or 'weak', got {ties!r}.")
    Y = np.asarray(Y, dtype=np.float64)
    order = np.argsort(P, axis=1, kind="stable")
    q_sorted = np.take_along_axis(P, order, axis=1)
    y_sorted = np.take_along_axis(Y, order, axis=1)
    dy = np.diff(y_sorted, axis=1)
    q_tied = np.diff(q_sorted, axis=1) == 0
    ok = (dy >= 0) & (~q_tied | (dy == 0))
    return np.all(ok, axis=1)


# Per-block versions: ``block`` is a ``Block`` (rows of a validated pair);
# the report calls the same functions, sharing each block's ``p_hat``.
def _block_entropies(block) -> tuple[np.ndarray, np.ndarray]:
    """``(H(p̂), H(q))`` of a block in nats, computed once per block."""
    if "entropies" not in block.cache:
        human = _entropy(None, terms=block.p_hat_map(_p_log_p, kept=True))
        block.cache["entropies"] = (human, _entropy(block.P))
    return block.cache["entropies"]


def _block_rank_match(block, ties="strict"):
    if ties == "strict" and block.Y.shape[1] <= _PAIRWISE_MAX_CLASSES:
        compiled = _compiled.same_stable_order.get()
        if compiled is not None:  # the same comparisons, item by item
            out = np.empty(block.Y.shape[0], dtype=bool)
            compiled(block.Y, block.P, out)
            return out
    Y = block.Y
    if (
        block.Y.dtype.kind == "f"
        and block.is_counts
        and (ties != "strict" or Y.shape[1] > _PAIRWISE_MAX_CLASSES)
    ):
        Y = Y.astype(np.int64)  # exact for counts; faster stable argsort
    # counts below 2**15 (each at most its row's sum) compare as int16
    small = block.is_counts and bool(block.n.max() < 2**15)
    return _rank_match_per_item(Y, block.P, ties, small)


def _block_entropy_error(block, absolute, base):
    """Per-item EntCE of a block, sharing the block's cached entropies."""
    h_human, h_model = _block_entropies(block)
    err = _in_base(h_model - h_human, base)
    return np.abs(err) if absolute else err


def _block_log_loss(block, eps):
    """Per-item terms of :func:`histogram_log_loss` for the report.

    Counts: ``(−Σ_k Y_ik log q_ik, n_i)``, a ratio of sums (per annotation).
    Rows of human probabilities: the cross-entropy of the renormalised rows
    ``p̂``, a plain mean over items, as the function computes it (a row
    rounded to sum 0.999 does not weigh less).
    """
    if block.is_counts:
        return _cross_entropy_per_item(block.Y, block.P, eps), block.n
    return _cross_entropy_per_item(block.p_hat, block.P, eps)
