"""Soft metrics for human label variation: LeWiDi and Kurniawan et al. (2025).

The shared tasks on *Learning with Disagreements* (LeWiDi) and the study of
Kurniawan et al. (2025) compare a predicted distribution ``q_i`` with the
human distribution ``p̂_i`` of each item:

* :func:`soft_cross_entropy` -- LeWiDi 2021/2023's soft evaluation;
* :func:`manhattan_distance` -- LeWiDi 2025's "average MD" (Rizzi et al.,
  2024, recommended it over cross-entropy);
* :func:`soft_accuracy_score`, :func:`soft_micro_f1_score`,
  :func:`po_jsd_score`, :func:`entropy_correlation_score` -- Kurniawan,
  Mistica, Baldwin and Lau (2025), arXiv:2502.01891.

None of them needs the number of annotations ``n_i``: rows of human
probabilities (LeWiDi's ``soft_label``) are accepted as well as histograms.
Ordinal metrics are in :mod:`._ordinal`, multi-label ones in
:mod:`._multilabel`. Each metric has a private per-item kernel
``_<name>_per_item(p_hat, P, ...)`` on validated float arrays.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from .._validation import (
    Pair,
    check_pair,
)
from ..utils._compat import Interval
from ..utils._docstrings import fill_doc
from ._cells import cell_sums
from ._constraints import PAIR
from ._dispatch import validate_params  # dask arrays: chunk-wise
from ._distribution_kernels import _pair_mean
from ._hlv_kernels import (
    _block_entropy_correlation_cells,
    _po_jsd_per_item,
    _soft_accuracy_per_item,
    _soft_micro_f1_parts_per_item,
    manhattan_per_item,
    soft_cross_entropy_per_item,
)
from ._pearson import _pearson_or_raise, _pearson_terms

__all__ = [
    "soft_cross_entropy",
    "manhattan_distance",
    "soft_accuracy_score",
    "soft_micro_f1_score",
    "po_jsd_score",
    "entropy_correlation_score",
]


# --------------------------------------------------------------------------- #
# Validation with class names
# --------------------------------------------------------------------------- #
def _check_named_pair(y_true, y_prob, *, counts=None, labels=None):
    """``(pair, classes)``: the validated pair and the class of each column.

    :func:`~sklearn_hcal._validation.check_pair` aligns the classes by name
    (developer guide §class-names); the ordinal metrics also need the class names, to
    put the columns in scale order.
    """
    pair = check_pair(y_true, y_prob, counts=counts, labels=labels)
    return pair, _class_names(pair.classes, pair.n_classes)


def _class_names(classes, n_classes: int) -> np.ndarray:
    """The class of each column: its name, or its position when unnamed."""
    return np.arange(n_classes) if classes is None else np.asarray(classes)


# --------------------------------------------------------------------------- #
# Public metrics
# --------------------------------------------------------------------------- #
@validate_params(
    {
        **PAIR,
        "eps": [Interval(Real, 0, 0.5, closed="neither")],
        "offset": [Interval(Real, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
@fill_doc
def soft_cross_entropy(
    y_true, y_prob, *, counts=None, labels=None, eps=1e-12, offset=1e-9
) -> float:
    """Soft cross-entropy of LeWiDi 2021 and 2023 (mean per item, natural log).

    ``CE = −(1/N) Σ_i Σ_k p̂_ik log(clip(q_ik, ε, 1 − ε) + δ)`` with
    ``ε = 1e-12`` and ``δ = 1e-9``: the cross-entropy between the human soft
    label and the prediction, summed over classes and averaged over items,
    exactly as the scorer of SemEval-2023 Task 11 (Leonardelli et al., 2023;
    the ``cross_entropy`` of its starting kit) computes it. SemEval-2021
    Task 12 (Uma et al., 2021) used the same cross-entropy. Rizzi et al.
    (2024) clip at ``1e-12`` without the offset: pass ``offset=0``.

    Unlike :func:`histogram_log_loss`, which weighs every annotation, every
    item weighs the same here.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms, rows of human probabilities (LeWiDi's soft labels)
        or 1-D labels. A DataFrame's columns are the classes.
    %(y_prob)s
    %(counts)s
    %(labels)s
    eps : float, default=1e-12
        Predictions are clipped to ``[eps, 1 − eps]``.
    offset : float, default=1e-9
        Added to the clipped prediction inside the log (LeWiDi 2023).

    Returns
    -------
    float
        Lower is better; the minimum ``H(p̂)`` is reached at ``q = p̂``.

    References
    ----------
    Leonardelli et al. (2023). SemEval-2023 Task 11: Learning with
    Disagreements (LeWiDi). SemEval. Uma et al. (2021). SemEval-2021 Task 12:
    Learning with Disagreements. SemEval.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics import soft_cross_entropy
    >>> soft = [[0.5, 0.5], [1.0, 0.0]]
    >>> P = [[0.5, 0.5], [0.25, 0.75]]
    >>> expected = (np.log(2) + np.log(4)) / 2  # the offset is negligible here
    >>> bool(np.isclose(soft_cross_entropy(soft, P), expected))
    True
    """
    pair, _ = _check_named_pair(y_true, y_prob, counts=counts, labels=labels)
    return _pair_mean(
        pair, lambda b: soft_cross_entropy_per_item(b.p_hat, b.P, eps, offset)
    )


@validate_params(PAIR, prefer_skip_nested_validation=True)
@fill_doc
def manhattan_distance(y_true, y_prob, *, counts=None, labels=None) -> float:
    """Average Manhattan distance of LeWiDi 2025 (soft evaluation).

    ``MD = (1/N) Σ_i Σ_k |q_ik − p̂_ik|`` (LeWiDi 2025 evaluation notebook,
    "Average MD"; Rizzi et al., 2024). It is twice
    :func:`distribution_calibration_error` and lies in ``[0, 2]``. The
    official script rounds each item's distance and the mean to 5 decimals
    (``hcal evaluate --official-rounding``); no rounding is done here
    (results differ by less than ``1e-5``).

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s

    Returns
    -------
    float
        Lower is better.

    References
    ----------
    Rizzi, Leonardelli, Poesio, Uma, Pavlovic, Paun, Rosso, Fersini (2024).
    Soft metrics for evaluation with disagreements: an assessment.
    NLPerspectives workshop.

    Examples
    --------
    >>> from sklearn_hcal.metrics import manhattan_distance
    >>> Y = [[3, 1], [2, 2]]            # p̂ = [.75, .25], [.5, .5]
    >>> P = [[0.5, 0.5], [0.5, 0.5]]
    >>> float(manhattan_distance(Y, P))  # (0.25 + 0.25 + 0) / 2
    0.25
    """
    pair, _ = _check_named_pair(y_true, y_prob, counts=counts, labels=labels)
    return _pair_mean(pair, lambda b: manhattan_per_item(b.p_hat, b.P))


@validate_params(PAIR, prefer_skip_nested_validation=True)
@fill_doc
def soft_accuracy_score(y_true, y_prob, *, counts=None, labels=None) -> float:
    """Soft accuracy: mean overlap ``Σ_k min(p̂_ik, q_ik)`` (Kurniawan et al.).

    The fuzzy-set accuracy of Kurniawan et al. (2025, §3): per item the
    intersection of the human and predicted distributions, averaged over
    items. It equals ``1 − DistCE`` and lies in ``[0, 1]``; higher is better.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s

    Returns
    -------
    float

    References
    ----------
    Kurniawan, Mistica, Baldwin, Lau (2025). Training and Evaluating with
    Human Label Variation: An Empirical Study. arXiv:2502.01891.

    Examples
    --------
    >>> from sklearn_hcal.metrics import soft_accuracy_score
    >>> soft = [[0.2, 0.8]]
    >>> P = [[0.6, 0.4]]
    >>> round(soft_accuracy_score(soft, P), 12)  # min(.2, .6) + min(.8, .4)
    0.6
    """
    pair, _ = _check_named_pair(y_true, y_prob, counts=counts, labels=labels)
    return _pair_mean(pair, lambda b: _soft_accuracy_per_item(b.p_hat, b.P))


@validate_params(PAIR, prefer_skip_nested_validation=True)
@fill_doc
def soft_micro_f1_score(y_true, y_prob, *, counts=None, labels=None) -> float:
    """Soft micro-F1 of Kurniawan et al. (2025).

    ``F1 = 2 Σ_i Σ_k min(p̂_ik, q_ik) / Σ_i Σ_k (p̂_ik + q_ik)``: soft
    precision and recall pooled over all items and classes. For single-label
    data both distributions sum to one per item, so it equals
    :func:`soft_accuracy_score`; the two differ for multi-label data (see
    :func:`multilabel_soft_micro_f1_score`). Higher is better.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s

    Returns
    -------
    float

    References
    ----------
    Kurniawan, Mistica, Baldwin, Lau (2025). arXiv:2502.01891.

    Examples
    --------
    >>> from sklearn_hcal.metrics import soft_micro_f1_score
    >>> soft = [[0.2, 0.8], [1.0, 0.0]]
    >>> P = [[0.6, 0.4], [0.5, 0.5]]
    >>> round(soft_micro_f1_score(soft, P), 12)  # 2 (0.6 + 0.5) / (2 + 2)
    0.55
    """
    pair, _ = _check_named_pair(y_true, y_prob, counts=counts, labels=labels)
    parts = pair.map_blocks(
        lambda b: [
            float(np.sum(a)) for a in _soft_micro_f1_parts_per_item(b.p_hat, b.P)
        ]
    )
    num = sum(p[0] for p in parts)
    den = sum(p[1] for p in parts)
    return num / den


@validate_params(PAIR, prefer_skip_nested_validation=True)
@fill_doc
def po_jsd_score(y_true, y_prob, *, counts=None, labels=None) -> float:
    """PO-JSD: one minus the mean Jensen-Shannon divergence in bits.

    ``PO-JSD = 1 − (1/N) Σ_i JSD(p̂_i, q_i)`` with the *divergence* (not its
    square root) in base 2, so that it lies in ``[0, 1]``; higher is better
    (Kurniawan et al., 2025, after Nie et al., 2020's JSD). Compare
    :func:`jensen_shannon_distance`, the mean of the square roots in nats.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s

    Returns
    -------
    float

    References
    ----------
    Kurniawan, Mistica, Baldwin, Lau (2025). arXiv:2502.01891.

    Examples
    --------
    >>> from sklearn_hcal.metrics import po_jsd_score
    >>> float(po_jsd_score([[1, 0]], [[0.0, 1.0]]))  # disjoint: JSD = 1 bit
    0.0
    >>> float(po_jsd_score([[1, 1]], [[0.5, 0.5]]))
    1.0
    """
    pair, _ = _check_named_pair(y_true, y_prob, counts=counts, labels=labels)
    return _pair_mean(pair, lambda b: _po_jsd_per_item(b.p_hat, b.P))


@validate_params(PAIR, prefer_skip_nested_validation=True)
@fill_doc
def entropy_correlation_score(y_true, y_prob, *, counts=None, labels=None) -> float:
    """Pearson correlation of human and model entropies across items.

    ``r = pearson_i(H(p̂_i) / log K, H(q_i) / log K)`` (Kurniawan et al.,
    2025): does the model find the items humans disagree on? It lies in
    ``[−1, 1]``; higher is better. It is a correlation across items, not a
    mean of per-item values, so it needs at least two items and is undefined
    (ValueError) when either side has the same entropy for every item.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s

    Returns
    -------
    float

    References
    ----------
    Kurniawan, Mistica, Baldwin, Lau (2025). arXiv:2502.01891.

    Examples
    --------
    >>> from sklearn_hcal.metrics import entropy_correlation_score
    >>> Y = [[2, 2], [3, 1], [4, 0]]            # entropies fall
    >>> P = [[0.5, 0.5], [0.7, 0.3], [0.9, 0.1]]  # and so do the model's
    >>> entropy_correlation_score(Y, P) > 0.9
    True
    """
    pair, _ = _check_named_pair(y_true, y_prob, counts=counts, labels=labels)
    return _entropy_correlation(pair)


def _entropy_correlation(pair: Pair) -> float:
    sums = sum(
        pair.map_blocks(lambda b: cell_sums(*_block_entropy_correlation_cells(b), 1))
    )
    return float(_pearson_or_raise(sums, "normalised entropies")[0])


# --------------------------------------------------------------------------- #
# Registry declarations: the report's columns, the scorers and the command
# line's metric names are derived from these (see ._registry).
# --------------------------------------------------------------------------- #
from ._registry import Metric, OfficialRounding, Stats, register  # noqa: E402

_ENTROPY_MOMENTS = Stats(
    "entropy_moments",
    cells=_block_entropy_correlation_cells,
    n_cells=lambda n_classes: (1, 1),
    finish=lambda sums, n_samples: {"r": _pearson_terms(sums)["r"][..., 0]},
)

register(
    Metric(
        "soft_cross_entropy",
        "soft_ce",
        soft_cross_entropy,
        greater_is_better=False,
        description="mean soft cross-entropy −Σ p̂ log q per item (nats)",
        source="LeWiDi 2021/2023 (Uma et al. 2021; Leonardelli et al. 2023)",
        # −Σ p̂ log q: the log score, linear in p̂ (proper; the tiny
        # offset aside)
        proper=True,
        per_item=lambda b, eps, offset: soft_cross_entropy_per_item(
            b.p_hat, b.P, eps, offset
        ),
        bounds=(0.0, None),
        # the 2023 starting kit's cross_entropy returns the exact mean
        official_rounding=OfficialRounding("cross_entropy"),
    )
)
register(
    Metric(
        "manhattan_distance",
        "manhattan",
        manhattan_distance,
        greater_is_better=False,
        description="mean Manhattan distance ‖q − p̂‖₁ (LeWiDi 2025's MD)",
        source="LeWiDi 2025; Rizzi et al. 2024",
        # an L1 loss (2 × DistCE): best at a sharper q than q*
        proper=False,
        per_item=lambda b: manhattan_per_item(b.p_hat, b.P),
        bounds=(0.0, None),
        official_rounding=OfficialRounding("average_MD", rounds=("item", "mean")),
    )
)
register(
    Metric(
        "soft_accuracy_score",
        "soft_accuracy",
        soft_accuracy_score,
        greater_is_better=True,
        description="soft accuracy: mean overlap Σ min(p̂, q)",
        source="Kurniawan et al. 2025, §3",
        # Σ min(p̂, q) = 1 − TVD: an L1 score, not proper
        proper=False,
        per_item=lambda b: _soft_accuracy_per_item(b.p_hat, b.P),
        scorer="soft_accuracy",
        bounds=(0.0, 1.0),
    )
)
register(
    Metric(
        "soft_micro_f1_score",
        "soft_micro_f1",
        soft_micro_f1_score,
        greater_is_better=True,
        description="soft micro-F1: 2 Σ min(p̂, q) / Σ (p̂ + q) over all items",
        source="Kurniawan et al. 2025, §3",
        # built on Σ min(p̂, q), an L1 overlap: not proper
        proper=False,
        per_item=lambda b: _soft_micro_f1_parts_per_item(b.p_hat, b.P),
        scorer="soft_micro_f1",
        bounds=(0.0, 1.0),
    )
)
register(
    Metric(
        "po_jsd_score",
        "po_jsd",
        po_jsd_score,
        greater_is_better=True,
        description="PO-JSD: 1 − mean Jensen-Shannon divergence (bits)",
        source="Kurniawan et al. 2025, §3",
        # 1 − JSD of the per-class binary distributions: not proper
        proper=False,
        per_item=lambda b: _po_jsd_per_item(b.p_hat, b.P),
        scorer="po_jsd",
        bounds=(0.0, 1.0),
    )
)
register(
    Metric(
        "entropy_correlation_score",
        "entropy_corr",
        entropy_correlation_score,
        greater_is_better=True,
        description="Pearson r of human and model entropies across items "
        "(NaN where either is constant)",
        source="Kurniawan et al. 2025, §3",
        # a correlation of entropies across items, not a loss per item
        proper=False,
        stats=_ENTROPY_MOMENTS,
        value=lambda t: t["r"],
        requires="variation",
        scorer="entropy_correlation",
        bounds=(-1.0, 1.0),
    )
)
