"""Kernels of the disagreement metrics (Mimori et al. 2021, §4).

The job split off :mod:`sklearn_hcal.metrics._disagreement` (which keeps the
public, validated functions and their registry declarations): the unbiased
``μ̂`` of label histograms (eq. 16), the predicted ``φ`` of point, Dirichlet
and ensemble predictions, the validation of ``(μ̂, φ)`` inputs shared by the
metrics, the report and the Displays, and the binned sums of ``CL̂_φD``
(eq. 42–45) with leading resample axes for the bootstrap. Import them
from here, where they are defined (developer guide §layers).
"""

from __future__ import annotations

import numpy as np

from .._validation import (
    Pair,
    check_disagreement,
    check_labels,
    check_pair,
    checked_histograms,
    column_order,
    frame_names,
    match_rows,
    normalised_block,
    row_blocks,
    row_sums,
    scan_probabilities,
    shape_of,
)
from ..utils._warnings import warn_user
from ._bins import bin_indices
from ._cells import cell_sums

#: Up to this many labels per item, ``Y(Y − 1)`` is looked up.
_TABLE_MAX_N = 2**12
_AGREEING_PAIRS: dict = {}


def _agreeing_pairs(Y: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``Y(Y − 1)`` per entry in float64 (the ordered pairs that agree).

    Exact integers, whatever the order of the operations: for integer
    counts of at most :data:`_TABLE_MAX_N` labels per item they are looked
    up in ``k(k − 1)`` (one pass instead of a conversion and two), else
    computed.
    """
    if Y.dtype.kind in "iu" and n.size and n.max() <= _TABLE_MAX_N:
        top = int(n.max())
        table = _AGREEING_PAIRS.get(top)
        if table is None:
            k = np.arange(top + 1.0)
            table = _AGREEING_PAIRS[top] = k * (k - 1.0)
        return table.take(Y)
    Y = np.asarray(Y, dtype=np.float64)
    return Y * (Y - 1.0)


def _mu_rows(Y: np.ndarray, n: np.ndarray) -> np.ndarray:
    """μ̂ of a block of counts ``Y`` (any numeric dtype) with row sums ``n``."""
    valid = n >= 2
    every = bool(valid.all())  # the common case: no item to leave out
    pairs = n * (n - 1.0)
    if not every:
        pairs = np.where(valid, pairs, 1.0)
    mu = 1.0 - row_sums(_agreeing_pairs(np.asarray(Y), n)) / pairs
    if not every:
        mu[~valid] = np.nan
    return mu


def _pair_disagreement(Y: np.ndarray, n=None) -> tuple[np.ndarray, np.ndarray]:
    """``(μ̂, n)`` from counts; μ̂ is NaN where ``n < 2``.

    Of the ``n(n − 1)`` ordered pairs of distinct annotators, ``Σ_k Y_k(Y_k − 1)``
    agree, so ``1 − Σ_k Y_k(Y_k − 1)/(n(n − 1))`` is the fraction that disagree:
    eq. 16 with ``ϕ^D`` as the kernel, without enumerating pairs. Computed
    block by block of rows; ``n`` (the row sums) is reused when given.
    """
    n_rows, n_cols = np.shape(Y)
    if n is None:
        n = np.empty(n_rows)
        for sl in row_blocks(n_rows, n_cols):
            n[sl] = row_sums(np.asarray(Y[sl]))
    mu = np.empty(n_rows)
    for sl in row_blocks(n_rows, n_cols):
        mu[sl] = _mu_rows(Y[sl], n[sl])
    return mu, n


def _phi_rows(P: np.ndarray) -> np.ndarray:
    """``1 − Σ_k q_k²`` of a block of probabilities."""
    P = np.asarray(P, dtype=np.float64)
    return 1.0 - row_sums(P * P)


def _phi(P: np.ndarray, renormalise=None) -> np.ndarray:
    """``1 − Σ_k q_k²`` per row of checked probabilities (1-D: binary), by blocks.

    Rows off by rounding are renormalised first (``renormalise``: see
    :func:`~sklearn_hcal._validation.normalised_block`), so that a rounded
    row such as ``[1.0004, 0]`` gives 0, not ``-8e-4``.
    """
    n_rows = P.shape[0]
    phi = np.empty(n_rows)
    n_cols = 2 if P.ndim == 1 else P.shape[1]
    for sl in row_blocks(n_rows, n_cols):
        phi[sl] = _phi_rows(normalised_block(P, sl, renormalise=renormalise))
    return phi


def _check_concentration(concentration, n_samples: int) -> np.ndarray | None:
    if concentration is None:
        return None
    alpha = np.asarray(concentration, dtype=np.float64)
    if alpha.ndim == 1 and alpha.shape[0] != n_samples:
        raise ValueError(
            f"concentration has {alpha.shape[0]} values but there are "
            f"{n_samples} samples."
        )
    if alpha.ndim > 1:
        raise ValueError(
            "concentration must be a positive float or a 1-D array of shape "
            f"(n_samples,), got shape {alpha.shape}."
        )
    if np.any(np.isnan(alpha)) or np.any(alpha <= 0):
        raise ValueError(
            "concentration must be positive and not NaN (np.inf means a point "
            "prediction)."
        )
    return alpha


def _disagreement_from_probabilities(
    y_prob,
    *,
    concentration=None,
    name: str = "y_prob",
    n_classes=None,
    n_classes_from=None,
) -> np.ndarray:
    """``φ`` from (n, K), binary 1-D, or ensemble (S, n, K) probabilities."""
    raw = y_prob.to_numpy() if hasattr(y_prob, "to_numpy") else y_prob
    ndim = len(shape_of(raw, name=name))
    if ndim == 3:
        arr = np.asarray(raw)
        n_members, n_samples, n_classes_ = arr.shape
        if n_members == 0:
            raise ValueError(f"{name} has no ensemble members (shape {arr.shape}).")
        # Member by member (a loop over the S members, not the items), so
        # that an error names the member and its row: "y_prob[3] ... row 7".
        phi = np.empty((n_members, n_samples))
        for member in range(n_members):
            P, _, off = scan_probabilities(
                arr[member],
                name=f"{name}[{member}]",
                n_classes=n_classes,
                n_classes_from=n_classes_from,
            )
            phi[member] = _phi(P, off)
    elif ndim in (1, 2):
        P, _, off = scan_probabilities(
            raw, name=name, n_classes=n_classes, n_classes_from=n_classes_from
        )
        n_samples = P.shape[0]
        phi = _phi(P, off)
    else:
        raise ValueError(
            f"{name} must have shape (n_samples, n_classes), (n_samples,) for "
            f"two classes, or (n_members, n_samples, n_classes); got {ndim} "
            "dimensions."
        )
    alpha = _check_concentration(concentration, n_samples)
    if alpha is not None:
        # α0/(α0 + 1) written as 1/(1 + 1/α0) so that α0 = inf gives 1.
        phi = phi / (1.0 + 1.0 / alpha)
    if phi.ndim == 2:
        phi = phi.mean(axis=0)
    # Rounding can push 1 − Σq² a hair below 0 for one-hot predictions: the
    # one φ check clips it (and would name anything further out).
    return check_disagreement(phi, name=name)


def _disagreement_histograms(y_true, *, name, labels, n_classes=None):
    """``(Y, n)`` of integer label histograms (or 1-D labels) for ``μ̂``.

    ``labels`` maps 1-D labels to columns; with histograms it must name one
    class per column (and match a DataFrame's column names as a set: ``μ̂``
    does not depend on the class order).
    """
    Y, n, _, _ = checked_histograms(
        y_true,
        name=name,
        allow_probabilities=False,
        n_classes=n_classes,
        classes=labels,
    )
    shape = shape_of(y_true, name=name)
    if labels is not None and len(shape) == 2 and shape[1] > 1:
        labels = check_labels(labels, Y.shape[1], name=name)
        names = frame_names(y_true, name=name)
        if names is not None:
            column_order(labels, names, name="labels", target_name=name)
    return Y, n


def _warn_above_max_disagreement(phi, n_classes: int) -> None:
    """Warn when ``φ`` exceeds ``1 − 1/K``, which no prediction can reach.

    ``1 − Σ_k E[q_k²] <= 1 − Σ_k E[q_k]² <= 1 − 1/K`` for any distribution of
    ``q`` over K classes (a Dirichlet, an ensemble, a point prediction), so a
    larger value is most likely not a disagreement probability at all -- e.g.
    ``P(class 1)`` of a binary classifier (at most 0.5 as φ) passed where φ was
    expected. It is still scored, as given.
    """
    bound = 1.0 - 1.0 / n_classes
    if phi.size and phi.max() > bound + 1e-8:
        row = int(np.argmax(phi))
        warn_user(
            f"y_disagreement reaches {float(phi[row])!r} (row {row}), above 1 - 1/K = "
            f"{bound:.6g}, the largest disagreement probability of any "
            f"prediction over K={n_classes} classes; is it a class probability "
            "(e.g. P(class 1) of a binary classifier) rather than the predicted "
            "disagreement?"
        )


def check_disagreement_inputs(
    y_true, y_disagreement, counts, labels=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated ``(μ̂, φ, valid)``; error when no item has ``n_i >= 2``.

    A 1-D ``y_disagreement`` (or an ``(n, 1)`` column) is ``φ``, checked by
    :func:`~sklearn_hcal._validation.check_disagreement`; 2-D class
    probabilities go through the metrics' pair validation (classes aligned
    by name, rows off by rounding renormalised) and 3-D ensembles through
    :func:`predicted_disagreement`.

    ``y_true`` may be labels validated already (a
    :class:`~sklearn_hcal._validation.Pair`, as the report and the Displays
    hold them): only ``y_disagreement`` is then checked, against them, and
    their arrays are not scanned again (developer guide §checked-once).
    """
    name = "y_true"
    if counts is not None:
        y_true, name = counts, "counts"
    checked = y_true if isinstance(y_true, Pair) else None
    if checked is None:
        y_disagreement = match_rows(
            y_true, y_disagreement, name="y_disagreement", y_true_name=name
        )
    if checked is not None and not checked.is_counts:
        raise ValueError(
            f"{name} holds rows of human probabilities, not integer label "
            "counts; the disagreement between annotators needs the counts."
        )

    def histograms(n_classes=None):
        if checked is not None:
            return checked.Y, checked.n
        return _disagreement_histograms(
            y_true, name=name, labels=labels, n_classes=n_classes
        )

    raw = (
        y_disagreement.to_numpy()
        if hasattr(y_disagreement, "to_numpy")
        else y_disagreement
    )
    shape = shape_of(raw, name="y_disagreement")
    if len(shape) == 1 or (len(shape) == 2 and shape[1] == 1):
        phi = check_disagreement(raw, name="y_disagreement")
        Y, n = histograms()
        _warn_above_max_disagreement(phi, Y.shape[1])
    elif len(shape) == 2:
        # 1 − Σq² is the same in any class order
        if checked is not None:
            pair = checked.with_probabilities(
                y_disagreement,
                labels=labels,
                name="y_disagreement",
                y_true_name=name,
                class_order_matters=False,
            )
        else:
            pair = check_pair(
                y_true,
                y_disagreement,
                labels=labels,
                allow_probabilities=False,
                y_true_name=name,
                y_prob_name="y_disagreement",
                class_order_matters=False,
            )
        phi = np.empty(pair.n_samples)
        for block in pair.blocks():
            phi[block.sl] = _phi_rows(block.P)
        phi = check_disagreement(phi, name="y_disagreement")
        Y, n = pair.Y, pair.n
    else:
        # An ensemble (S, n, K) of class probabilities, turned into φ.
        y_shape = (
            checked.Y.shape if checked is not None else shape_of(y_true, name=name)
        )
        n_classes = None
        if len(y_shape) == 2 and y_shape[1] > 1:
            n_classes = y_shape[1]
        phi = _disagreement_from_probabilities(
            raw,
            name="y_disagreement",
            n_classes=n_classes,
            n_classes_from=None if n_classes is None else name,
        )
        Y, n = histograms(shape[-1] if n_classes is None else n_classes)
    if Y.shape[0] != phi.shape[0]:
        raise ValueError(
            f"{name} and y_disagreement have different numbers of samples: "
            f"{Y.shape[0]} and {phi.shape[0]}."
        )
    mu, n = _pair_disagreement(Y, n)
    valid = n >= 2
    if not np.any(valid):
        shape = Y.shape if checked is not None else shape_of(y_true, name=name)
        single = ""
        if len(shape) == 1 or shape[1] == 1:
            single = f" (a 1-D or (n, 1) {name} is one label per item; pass histograms)"
        raise ValueError(
            f"{name} has no item with at least two annotations; disagreement "
            f"between annotators cannot be estimated from single labels{single}."
        )
    return mu, phi, valid


def _disagreement_cl_cells(mu, phi, valid, n_bins: int):
    """Cells and values of :func:`_disagreement_cl_sums` (see :mod:`._cells`).

    One slot: the bin of ``φ``. Statistics: a count, ``φ``, ``1[valid]``,
    ``μ̂`` and ``μ̂²`` (both 0 for items with ``n_i < 2``).
    """
    cell = bin_indices(phi, n_bins)[:, None]
    mu0 = np.where(valid, mu, 0.0)
    values = np.empty((cell.shape[0], 1, 5))
    values[:, 0, 0] = 1.0
    values[:, 0, 1] = phi
    values[:, 0, 2] = valid
    values[:, 0, 3] = mu0
    np.multiply(mu0, mu0, out=values[:, 0, 4])
    return cell, values


def _disagreement_cl_sums(mu, phi, valid, n_bins: int, weights=None) -> np.ndarray:
    """Per-bin partial sums ``[|B|, Σφ, |B_valid|, Σμ̂, Σμ̂²]``, shape (5, n_bins).

    Bins are formed on ``φ``; the ``μ̂`` sums run over the valid items
    (``n_i >= 2``). ``weights`` are item multiplicities (bootstrap).
    """
    return cell_sums(*_disagreement_cl_cells(mu, phi, valid, n_bins), n_bins, weights)


def _disagreement_cl_from_sums(sums, n_samples, debiased: bool):
    """Eq. 42–45 from :func:`_disagreement_cl_sums` of all items.

    ``sums`` of shape ``(..., 5, n_bins)`` may carry leading axes (one set
    of sums per bootstrap resample, ``n_samples`` of the leading shape); the
    result then has them too, else it is a float.
    """
    sums = np.asarray(sums, dtype=np.float64)
    count, sum_phi, count_valid, sum_mu, sum_mu2 = np.moveaxis(sums, -2, 0)
    N = np.asarray(n_samples, dtype=np.float64)[..., None]
    has_valid = count_valid > 0
    mean_mu = sum_mu / np.where(has_valid, count_valid, 1.0)
    mean_phi = sum_phi / np.where(count > 0, count, 1.0)
    cl_bins = np.where(has_valid, count / N * (mean_mu - mean_phi) ** 2, 0.0)
    if debiased:
        # ddof=0 variance of μ̂ over the valid items (clipped against rounding)
        ss = np.maximum(sum_mu2 - count_valid * mean_mu**2, 0.0)
        var0 = ss / np.where(has_valid, count_valid, 1.0)
        multi = count >= 2
        # eq. 44: (|B|/N) σ̄²/(|B| − 1)
        cl_bins = cl_bins - np.where(
            multi, count / N * var0 / np.where(multi, count - 1.0, 1.0), 0.0
        )
    out = cl_bins.sum(axis=-1)
    return float(out) if out.ndim == 0 else out


def _disagreement_cl(
    mu, phi, valid, n_bins: int, debiased: bool, weights=None
) -> float:
    """Binned calibration loss of ``φ`` against ``μ̂`` (eq. 42–45).

    Reference behaviour (developer guide §metric-definitions): bins are formed on ``φ``
    of all items and ``|B|``, ``N`` count all items, while ``mean_B μ̂`` and the variance
    ``σ̄²_B`` (ddof=0) use only the items with ``n_i >= 2``. A bin without such
    an item has no estimate of ``E[ϕ | bin]`` and adds 0. ``weights`` are
    item multiplicities (a bootstrap resample without copying the items).
    """
    sums = _disagreement_cl_sums(mu, phi, valid, n_bins, weights)
    n_samples = phi.shape[0] if weights is None else float(np.sum(weights))
    return _disagreement_cl_from_sums(sums, n_samples, debiased)


def _block_disagreement_sq(block):
    """``(μ̂(1 − μ̂) + (μ̂ − φ)², 1)`` on valid items, ``(0, 0)`` elsewhere (eq. 40)."""
    valid = block.valid
    mu = np.nan_to_num(block.mu)  # NaN where n_i < 2; those items weigh 0
    loss = mu * (1.0 - mu) + (mu - block.phi) ** 2
    return np.where(valid, loss, 0.0), valid.astype(np.float64)


def _disagreement_terms(sums, n_samples, n_bins):
    # A resample (or agreement bin) without a pair of annotators has no
    # estimate: NaN, never a silent 0.
    defined = sums[..., 2, :].sum(axis=-1) > 0
    terms = {}
    for debiased, key in ((True, "cl"), (False, "cl_plugin")):
        cl = _disagreement_cl_from_sums(sums, n_samples, debiased)
        cl = np.where(defined, cl, np.nan)
        terms[key] = cl
        terms[key.replace("cl", "ce")] = np.sqrt(np.maximum(cl, 0.0))
    return terms
