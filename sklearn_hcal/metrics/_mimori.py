"""Mimori et al.'s (2021) estimators of squared-loss terms from label histograms.

With ``n_i`` annotations per item, the empirical distribution
``p̂_i = Y_i / n_i`` is an unbiased but noisy estimate of the true label
distribution ``Q_i``. Plugging it into squared-loss terms biases them upwards
by the sampling variance of ``p̂``; Mimori et al. (2021, §3, App. B) give
corrections:

* ``expected_squared_loss`` — unbiased estimator of ``E‖e_Y − q‖²``
  (Prop. 1, eq. 8);
* ``epistemic_loss`` — ``EL = E‖Q − q‖²`` (eq. 9–10, Prop. 2);
* ``calibration_loss`` / ``calibration_error`` — class-wise binned
  ``CL`` (eq. 12–14, Prop. 3) and ``CE = sqrt(CL)``;
* ``dispersion_loss`` — ``DL = EL − CL`` (App. B.4, eq. 35–36).

Reference: T. Mimori, K. Sasada, H. Matsui, I. Sato. *Diagnostic Uncertainty
Calibration: Towards Reliable Machine Predictions in Medical Domain*. AISTATS
2021.

Class alignment (``labels=``): see "Classes" in :mod:`sklearn_hcal.metrics`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_weight_values
from ..utils._compat import check_sample_weight
from ..utils._docstrings import fill_doc
from ._constraints import BINNED_ESTIMATOR, DEBIASED, OPTIONAL_ARRAY, PAIR
from ._dispatch import validate_params  # dask arrays: chunk-wise
from ._distribution_kernels import _pair_mean
from ._mimori_items import (
    _epistemic_per_item,
    _gini_per_item,
    _squared_loss_per_item,
)
from ._mimori_kernels import (
    _cell_sums,
    _cell_values,
    _pair_cell_sums,
    _validate_counts,
    _warn_single_annotations,
)
from ._mimori_terms import _terms_from_sums

__all__ = [
    "expected_squared_loss",
    "epistemic_loss",
    "calibration_loss",
    "calibration_error",
    "dispersion_loss",
]


_BINNED = {**PAIR, **BINNED_ESTIMATOR}


@validate_params(
    {**PAIR, "sample_weight": OPTIONAL_ARRAY},
    prefer_skip_nested_validation=True,
)
@fill_doc
def expected_squared_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Unbiased estimate of the expected squared loss from label histograms.

    ``L̂_sq = Σ_i (w_i / W) Σ_k [(p̂_ik − q_ik)² + p̂_ik(1 − p̂_ik)]``
    (Mimori et al. 2021, Prop. 1, eq. 8), with ``p̂_i = Y_i / n_i``. Its
    expectation is ``E‖e_Y − q‖²``, the Brier score of a single random
    annotation, whatever the number of annotations; with one label per item
    it *is* the Brier score (sum over classes).

    Parameters
    ----------
    %(y_true_counts)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative item weights ``w_i``; unit weights by default.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import expected_squared_loss
    >>> Y = [[2, 0], [1, 1]]          # p̂ = [1, 0] and [0.5, 0.5]
    >>> q = [[1.0, 0.0], [1.0, 0.0]]
    >>> # item 0: 0 + 0; item 1: 0.25 + 0.25 + 0.25 + 0.25 = 1
    >>> expected_squared_loss(Y, q)
    0.5
    """
    pair = _validate_counts(y_true, y_prob, counts, labels)
    w = None
    if sample_weight is not None:
        # the row and value of a bad weight first (scikit-learn names neither)
        w = check_weight_values(sample_weight, pair.n_samples)
        w = check_sample_weight(w, pair.n, ensure_non_negative=True)
        if w.sum() <= 0:
            raise ValueError("sample_weight must have a positive sum.")
    total = 0.0
    for block in pair.blocks():
        per_item = _squared_loss_per_item(block)
        if w is not None:
            per_item *= w[block.sl]
        total += float(per_item.sum())
    return total / (pair.n_samples if w is None else float(w.sum()))


@validate_params({**PAIR, "debiased": DEBIASED}, prefer_skip_nested_validation=True)
@fill_doc
def epistemic_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    debiased: bool = True,
) -> float:
    """Epistemic loss ``EL = E‖Q − q‖²`` estimated from label histograms.

    Plug-in (eq. 9): ``(1/N) Σ_i Σ_k (p̂_ik − q_ik)²``, biased upwards by the
    sampling variance of ``p̂``. Debiased (Prop. 2, eq. 10, unbiased when every
    ``n_i >= 2``): subtract ``(1/N) Σ_i Σ_k p̂_ik(1 − p̂_ik)/(n_i − 1)``, the sum
    over items with ``n_i >= 2``; items with one annotation get no correction
    (a ``UserWarning`` says so). The debiased value can be negative.

    Parameters
    ----------
    %(y_true_counts)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    debiased : bool, default=True
        Apply the bias correction of Prop. 2.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import epistemic_loss
    >>> Y = [[1, 1], [2, 0]]
    >>> q = [[0.5, 0.5], [0.5, 0.5]]
    >>> # plug-in: (0 + 0.5) / 2; correction: (0.25 + 0.25) / 1 / 2
    >>> epistemic_loss(Y, q, debiased=False)
    0.25
    >>> epistemic_loss(Y, q)
    0.0
    """
    pair = _validate_counts(y_true, y_prob, counts, labels)
    if debiased:
        _warn_single_annotations(pair.n, "epistemic loss")
    return _pair_mean(pair, lambda b: _epistemic_per_item(b, debiased))


def _binned(
    y_true, y_prob, counts, n_bins, labels, *, dispersion=True
) -> tuple[dict, np.ndarray]:
    """The scalar terms; ``dispersion=False``: the calibration terms only
    (fewer statistics per entry)."""
    pair = _validate_counts(y_true, y_prob, counts, labels)
    sums = _pair_cell_sums(pair, n_bins, dispersion=dispersion)
    terms = _terms_from_sums(
        sums, pair.n_samples, n_bins, tables=False, dispersion=dispersion
    )
    return terms, pair.n


@validate_params(_BINNED, prefer_skip_nested_validation=True)
@fill_doc
def calibration_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    debiased: bool = True,
) -> float:
    """Class-wise binned calibration loss ``CL`` from label histograms.

    For each class ``k``, items are binned by ``q_ik`` into ``n_bins``
    equal-width bins ``[j/B, (j+1)/B)``, the last one closed ``[1 − 1/B, 1]``.
    Plug-in (eq. 13): ``CL = Σ_k Σ_b (|B|/N)(mean_B p̂_k − mean_B q_k)²``.
    Debiased (Prop. 3, eq. 14): each bin with at least two items subtracts
    ``s²_B / N``, ``s²_B`` the ddof=1 sample variance of ``p̂_k`` in the bin
    (eq. 14's ``(|B|/N) σ̄²/(|B| − 1)``); bins with one item are not corrected
    and empty bins add 0. The correction also holds for single-label data,
    where it is Bröcker's (2012) debiased reliability. Can be negative.

    Parameters
    ----------
    %(y_true_counts)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    n_bins : int, default=15
        Equal-width bins per class.
    debiased : bool, default=True
        Apply the bias correction of Prop. 3.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import calibration_loss
    >>> Y = [[2, 0], [0, 2]]
    >>> q = [[0.5, 0.5], [0.5, 0.5]]
    >>> # one bin per class holds both items: mean p̂ = 0.5 = mean q
    >>> calibration_loss(Y, q, debiased=False)
    0.0
    >>> # s² = 0.5 in each class's bin: 0 - 2 * 0.5 / 2
    >>> calibration_loss(Y, q)
    -0.5
    """
    terms, _ = _binned(y_true, y_prob, counts, n_bins, labels, dispersion=False)
    return terms["cl"] if debiased else terms["cl_plugin"]


@validate_params(_BINNED, prefer_skip_nested_validation=True)
@fill_doc
def calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    debiased: bool = True,
) -> float:
    """Calibration error ``CE = sqrt(max(CL, 0))`` (Mimori et al. 2021, §2.1).

    See :func:`calibration_loss` for ``CL``; a negative debiased ``CL`` (an
    estimate that cannot tell the model from a calibrated one) gives 0.

    Parameters
    ----------
    %(y_true_counts)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    n_bins : int, default=15
        Equal-width bins per class.
    debiased : bool, default=True
        Use the debiased ``CL``.

    Returns
    -------
    error : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import calibration_error
    >>> Y = [[2, 0], [2, 0]]
    >>> q = [[0.5, 0.5], [0.5, 0.5]]
    >>> # CL = 0.25 + 0.25 (no within-bin variance), CE = sqrt(0.5)
    >>> round(calibration_error(Y, q), 6)
    0.707107
    """
    terms, _ = _binned(y_true, y_prob, counts, n_bins, labels, dispersion=False)
    return terms["ce"] if debiased else terms["ce_plugin"]


@validate_params(_BINNED, prefer_skip_nested_validation=True)
@fill_doc
def dispersion_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_bins: int = 15,
    debiased: bool = True,
) -> float:
    """Dispersion loss ``DL = EL − CL`` (Mimori et al. 2021, App. B.4).

    Plug-in (eq. 35): ``(1/N) Σ_k Σ_b Σ_{i∈B} ((p̂_ik − c̄_kb) − (q_ik − z̄_kb))²``
    with the bin means ``c̄``, ``z̄`` of :func:`calibration_loss`; it equals
    ``EL_plugin − CL_plugin`` exactly. Debiased (eq. 36): each bin with at
    least two items, one of them or more with ``n_i >= 2``, subtracts
    ``(1/N) Σ_{i∈B, n_i≥2} p̂_ik(1 − p̂_ik)/(n_i − 1) − s²_B/N``. Singleton bins
    are not corrected, so ``EL = CL + DL`` holds for the debiased estimates only
    when no bin is a singleton and every corrected bin has an item with
    ``n_i >= 2`` (the reference implementation's behaviour). A ``UserWarning``
    is raised when some items have a single annotation.

    Parameters
    ----------
    %(y_true_counts)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    n_bins : int, default=15
        Equal-width bins per class.
    debiased : bool, default=True
        Apply the bias correction of eq. 36.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_hcal.metrics import dispersion_loss
    >>> Y = [[2, 0], [0, 2]]
    >>> q = [[0.5, 0.5], [0.5, 0.5]]
    >>> # each class's bin: residuals ±0.5 around the bin means, 2 * 0.25 / 2
    >>> dispersion_loss(Y, q, debiased=False)
    0.5
    >>> # p̂(1 − p̂) = 0 and s² = 0.5 per class: 0.5 - 2 * (0 - 0.5 / 2)
    >>> dispersion_loss(Y, q)
    1.0
    """
    terms, n = _binned(y_true, y_prob, counts, n_bins, labels)
    if not debiased:
        return terms["dl_plugin"]
    _warn_single_annotations(n, "dispersion loss")
    return terms["dl"]


# --------------------------------------------------------------------------- #
# Registry declarations: the report's columns, the scorers and the command
# line's metric names are derived from these (see ._registry).
# --------------------------------------------------------------------------- #
from ._registry import Metric, Stats, register  # noqa: E402

_CLASSWISE_15 = Stats(
    "classwise_squared_bins",
    cells=lambda b, n_bins: _cell_values(b.p_hat, b.P, b.n, n_bins),
    n_cells=lambda n_classes, n_bins: (n_classes, n_bins),
    finish=lambda sums, n_samples, n_bins: _terms_from_sums(
        sums, n_samples, n_bins, tables=False
    ),
    params=("n_bins",),
    # counts by bincount, five statistics in one pass (the same sums)
    sums=lambda b, n_bins: _cell_sums(b.p_hat, b.P, b.n, n_bins),
)


def _debiased_term(name):
    return lambda t, debiased: t[name if debiased else f"{name}_plugin"]


register(
    Metric(
        "expected_squared_loss",
        "sq_loss",
        expected_squared_loss,
        greater_is_better=False,
        description="unbiased expected squared loss L̂_sq of one annotation",
        source="Mimori et al. 2021, Prop. 1",
        # the Brier score of one annotation (unbiased): strictly proper
        proper=True,
        per_item=_squared_loss_per_item,
        requires="counts",
        order=100,
    )
)
for _column, _function, _source, _order in (
    ("el", epistemic_loss, "Prop. 2, eq. 9–10", 110),
    ("cl", calibration_loss, "eq. 12–14", 120),
    ("ce", calibration_error, "§2.1", 130),
    ("dl", dispersion_loss, "eq. 35–36", 140),
):
    _hooks = (
        {"per_item": _epistemic_per_item}
        if _column == "el"
        else {"stats": _CLASSWISE_15, "value": _debiased_term(_column)}
    )
    _what = _function.__name__.replace("_", " ")
    for _debiased in (True, False):
        register(
            Metric(
                _function.__name__ + ("" if _debiased else "_plugin"),
                _column + ("" if _debiased else "_plugin"),
                _function,
                greater_is_better=False,
                description=f"{_what} ({'debiased' if _debiased else 'plug-in'})",
                source=f"Mimori et al. 2021, {_source}",
                kwargs={} if _debiased else {"debiased": False},
                requires="counts",
                order=_order if _debiased else None,
                # EL estimates ‖q − q*‖² (the plug-in adds a bias free of q):
                # proper. CL, CE and DL are parts of it: the constant
                # prediction of the marginal has CL = CE = 0, so not proper.
                proper=_column == "el",
                **_hooks,
            )
        )
for _debiased in (True, False):
    register(
        Metric(
            "irreducible_loss" + ("" if _debiased else "_plugin"),
            "il" + ("" if _debiased else "_plugin"),
            None,  # loss_decomposition's IL row: L̂_sq − EL
            greater_is_better=False,
            description="irreducible loss L̂_sq − EL "
            + ("(debiased)" if _debiased else "(plug-in)"),
            source="Mimori et al. 2021, eq. 6",
            per_item=lambda b, debiased: _gini_per_item(b.p_hat, b.n, debiased),
            kwargs={"debiased": _debiased},
            requires="counts",
            proper=None,  # the Gini impurity of p̂: does not depend on q
        )
    )
