"""Per-item and per-bin tables: instance errors, loss decomposition, agreement.

* :func:`instance_calibration_errors` -- one row per item, the instance-level
  view Baan et al. (2022, §4 and App. B) argue for;
* :func:`loss_decomposition` -- Mimori et al.'s (2021, eq. 6) decomposition of
  the expected squared loss ``L = EL + IL`` and ``EL = CL + DL``, plug-in and
  debiased;
* :func:`metrics_by_agreement` -- registry metrics per bin of human entropy
  (Nie et al., 2020, ChaosNLI §5.4, Figs. 4-5).

The per-item errors are the registry's ``per_item`` hooks and the binned
tables its columns (:mod:`sklearn_hcal.metrics._registry`), so every table
agrees with the metric functions by construction; the loss decomposition
reads Mimori et al.'s terms from the sufficient statistics that their
binned metrics share.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._validation import Pair, check_pair
from ..utils._compat import StrOptions
from ..utils._docstrings import fill_doc
from ..utils._warnings import warn_user
from ._constraints import N_BINS, OPTIONAL_ARRAY, PAIR, REPORT_COLUMNS
from ._disagreement_kernels import (
    _disagreement_cl,
    _phi_rows,
    check_disagreement_inputs,
)
from ._dispatch import validate_params  # dask arrays: a clear error
from ._distribution_kernels import _block_entropies, _entropy
from ._engine import Human, Source, evaluate, resolve, warn_debiased
from ._mimori_kernels import _pair_cell_sums, _warn_single_annotations
from ._mimori_terms import _terms_from_sums
from ._registry import get_metric
from ._report_inputs import validate_human

__all__ = [
    "decomposition_table",
    "disagreement_calibration_terms",
    "instance_calibration_errors",
    "instance_errors_table",
    "loss_decomposition",
    "metrics_by_agreement",
]


# --------------------------------------------------------------------------- #
# instance_calibration_errors
# --------------------------------------------------------------------------- #
#: Columns of :func:`instance_calibration_errors` that are a registry
#: metric's per-item values (its ``per_item`` hook at the function's
#: defaults), so that their means are the metrics by construction.
_PER_ITEM = {
    "dist_ce": "dist_ce",
    "ent_ce": "ent_ce_signed",
    "jsd": "jsd",
    "kl": "kl",
    "rank_match": "rank_cs",
    "majority_correct": "accuracy",
}
_INSTANCE_COLUMNS = (
    "dist_ce",
    "ent_ce",
    "jsd",
    "kl",
    "human_entropy",
    "model_entropy",
    "rank_match",
    "majority_correct",
    "human_disagreement",
    "n_annotations",
)


def _pick_index(index, n_samples: int, *candidates):
    if index is not None:
        index = pd.Index(index)
        if len(index) != n_samples:
            raise ValueError(
                f"index has {len(index)} entries but there are {n_samples} samples."
            )
        return index
    for candidate in candidates:
        if isinstance(candidate, (pd.DataFrame, pd.Series)):
            return candidate.index
    return pd.RangeIndex(n_samples)


@validate_params({**PAIR, "index": OPTIONAL_ARRAY}, prefer_skip_nested_validation=True)
@fill_doc
def instance_calibration_errors(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    index: ArrayLike | None = None,
) -> pd.DataFrame:
    """Instance-level calibration errors against the human label distribution.

    One row per item, so that the *distribution* of errors can be inspected
    (Baan et al., 2022, §4, Fig. 1 and App. B) rather than only their mean.
    Natural logarithms throughout. The column means are the aggregate metrics:
    ``dist_ce`` → :func:`distribution_calibration_error`, ``|ent_ce|`` →
    :func:`entropy_calibration_error`, ``jsd`` → :func:`jensen_shannon_distance`,
    ``kl`` → :func:`kl_divergence`, ``rank_match`` →
    :func:`ranking_calibration_score`, ``majority_correct`` →
    :func:`majority_accuracy_score`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (integer counts), rows of human probabilities, or 1-D
        labels (one annotation per item). A DataFrame's index becomes the
        index of the result.
    %(y_prob)s
    %(counts)s
    %(labels)s
    index : array-like of shape (n_samples,), default=None
        Index of the result; by default the index of ``counts`` or ``y_true``
        when it is a DataFrame, else ``0, ..., n_samples - 1``.

    Returns
    -------
    errors : DataFrame of shape (n_samples, 10)
        Columns:

        - ``dist_ce``: total variation ``½‖q_i − p̂_i‖₁`` (Baan eq. 7);
        - ``ent_ce``: signed ``H(q_i) − H(p̂_i)`` (Baan eq. 5), positive when
          the model is less certain than the humans;
        - ``jsd``: Jensen-Shannon distance (ChaosNLI eq. 2);
        - ``kl``: ``KL(p̂_i ‖ q_i)``, ``q`` floored at 1e-15 (ChaosNLI eq. 1);
        - ``human_entropy``, ``model_entropy``: ``H(p̂_i)``, ``H(q_i)``;
        - ``rank_match``: the class rankings agree (Baan eq. 6, strict ties);
        - ``majority_correct``: ``argmax q_i`` is the human majority (first
          maximum on ties);
        - ``human_disagreement``: probability that two annotators disagree.
          From counts, the **unbiased** estimate ``1 − Σ_k Y_ik(Y_ik − 1) /
          (n_i(n_i − 1))`` (Mimori et al., 2021, eq. 16; see
          :func:`disagreement_probability`), NaN for items with a single
          annotation. From rows of human *probabilities* there is no sample
          to correct for, so it is the disagreement probability of that
          distribution, ``1 − Σ_k p̂_ik²``;
        - ``n_annotations``: ``n_i`` (nullable integer; missing for rows of
          probabilities).

    See Also
    --------
    human_calibration_report : The aggregate metrics for several classifiers.

    Examples
    --------
    >>> from sklearn_hcal.metrics import instance_calibration_errors
    >>> Y = [[3, 1], [0, 4]]
    >>> P = [[0.5, 0.5], [0.0, 1.0]]
    >>> errors = instance_calibration_errors(Y, P)
    >>> errors[["dist_ce", "rank_match", "human_disagreement"]]
       dist_ce  rank_match  human_disagreement
    0     0.25       False                 0.5
    1     0.00        True                 0.0
    >>> float(errors["dist_ce"].mean())  # = distribution_calibration_error(Y, P)
    0.125
    """
    human, source = validate_human(y_true, y_prob, counts, labels)
    return instance_errors_table(
        human, source, _pick_index(index, human.n_samples, counts, y_true)
    )


def instance_errors_table(human: Human, source: Source, index=None) -> pd.DataFrame:
    """:func:`instance_calibration_errors` of validated inputs.

    ``human`` and ``source`` as :func:`~._report_inputs.validate_human` returns
    them (the Displays and the HTML report hold them): nothing is checked or
    scanned again. ``index`` (default ``0 .. n_samples - 1``) indexes the rows.
    """
    n_samples = human.n_samples
    idx = pd.RangeIndex(n_samples) if index is None else index
    hooks = []
    for column, name in _PER_ITEM.items():
        metric = get_metric(name)
        hooks.append((column, metric.per_item, metric.resolve_kwargs()))
    parts = {column: [] for column in (*_PER_ITEM, "human_entropy", "model_entropy")}
    if not human.is_counts:
        parts["human_disagreement"] = []
    for block in source.pair.blocks():
        for column, per_item, kwargs in hooks:
            parts[column].append(per_item(block, **kwargs))
        h_human, h_model = _block_entropies(block)  # cached by ent_ce's hook
        parts["human_entropy"].append(h_human)
        parts["model_entropy"].append(h_model)
        if not human.is_counts:
            parts["human_disagreement"].append(
                np.clip(_phi_rows(block.p_hat), 0.0, 1.0)
            )
    columns = {column: np.concatenate(values) for column, values in parts.items()}
    if human.is_counts:
        columns["human_disagreement"] = human.mu
        n_annotations = pd.array(human.n.astype(np.int64), dtype="Int64")
    else:
        n_annotations = pd.array([pd.NA] * n_samples, dtype="Int64")
    columns["n_annotations"] = n_annotations
    return pd.DataFrame({c: columns[c] for c in _INSTANCE_COLUMNS}, index=idx)


# --------------------------------------------------------------------------- #
# loss_decomposition
# --------------------------------------------------------------------------- #
@validate_params(
    {**PAIR, "n_bins": N_BINS},
    prefer_skip_nested_validation=True,
)
@fill_doc
def loss_decomposition(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_bins: int = 15,
) -> pd.DataFrame:
    """Decomposition of the expected squared loss, plug-in and debiased.

    Mimori et al. (2021, eq. 6, after Kull and Flach 2015) split the expected
    squared loss of a single annotation into ``L = EL + IL`` and the epistemic
    loss into ``EL = CL + DL`` (calibration + dispersion, i.e. grouping, loss
    under class-wise binning). From label histograms:

    - ``L``: :func:`expected_squared_loss`, the unbiased ``L̂_sq`` (Prop. 1);
      the same number in both columns (there is no separate plug-in);
    - ``EL``: :func:`epistemic_loss`, eq. 9 (plug-in) and eq. 10 (debiased);
    - ``IL``: the irreducible (aleatoric) loss ``E Σ_k Q_k(1 − Q_k)``, defined
      as ``L − EL``. Debiased, this is the mean unbiased disagreement
      probability ``n_i/(n_i − 1) Σ_k p̂_ik(1 − p̂_ik)`` (items with one
      annotation contribute 0); plug-in it is ``mean_i Σ_k p̂_ik(1 − p̂_ik)``,
      biased downwards by the factor ``(n_i − 1)/n_i``;
    - ``CL``, ``CE``, ``DL``: :func:`calibration_loss`,
      :func:`calibration_error` and :func:`dispersion_loss` with ``n_bins``
      class-wise bins.

    ``L = EL + IL`` holds in both columns by construction and
    ``EL = CL + DL`` exactly for the plug-in estimates; for the debiased ones
    it holds when no bin is a singleton (see :func:`dispersion_loss`).

    Parameters
    ----------
    %(y_true_counts)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    n_bins : int, default=15
        Equal-width bins per class for ``CL`` and ``DL``.

    Returns
    -------
    decomposition : DataFrame of shape (6, 2)
        Index ``["L", "EL", "IL", "CL", "DL", "CE"]`` (name ``"term"``),
        columns ``["plugin", "debiased"]``.

    Examples
    --------
    >>> from sklearn_hcal.metrics import loss_decomposition
    >>> Y = [[2, 0], [1, 1]]
    >>> P = [[1.0, 0.0], [1.0, 0.0]]
    >>> loss_decomposition(Y, P).loc[["L", "EL", "IL"]]
          plugin  debiased
    term
    L       0.50      0.50
    EL      0.25      0.00
    IL      0.25      0.50
    """
    pair = check_pair(
        y_true, y_prob, counts=counts, labels=labels, allow_probabilities=False
    )
    _warn_single_annotations(pair.n, "epistemic and dispersion losses")
    return decomposition_table(pair, n_bins)


def decomposition_table(pair: Pair, n_bins: int = 15) -> pd.DataFrame:
    """:func:`loss_decomposition` of a validated pair of integer counts.

    ``pair`` is a :class:`~sklearn_hcal._validation.Pair` (a ``Source``'s,
    as the Displays hold it), not checked or scanned again; the warning on
    items with a single annotation is the caller's.
    """
    if not pair.is_counts:
        raise ValueError(
            "The loss decomposition needs integer label counts (the number of "
            "annotations per item), not rows of human probabilities."
        )
    t = _terms_from_sums(_pair_cell_sums(pair, n_bins), pair.n_samples, n_bins)
    rows = {
        "L": (t["sq_loss"], t["sq_loss"]),
        "EL": (t["el_plugin"], t["el"]),
        "IL": (t["il_plugin"], t["il"]),
        "CL": (t["cl_plugin"], t["cl"]),
        "DL": (t["dl_plugin"], t["dl"]),
        "CE": (t["ce_plugin"], t["ce"]),
    }
    out = pd.DataFrame.from_dict(rows, orient="index", columns=["plugin", "debiased"])
    out.index.name = "term"
    return out


def disagreement_calibration_terms(
    mu: np.ndarray, phi: np.ndarray, valid: np.ndarray, n_bins: int = 15
) -> tuple[float, float]:
    """``(CL_φD, CE_φD)``, debiased, of validated ``(μ̂, φ, valid)``.

    The numbers of :func:`disagreement_calibration_loss` and
    :func:`disagreement_calibration_error` (the same kernel), from what
    :func:`~._disagreement_kernels.check_disagreement_inputs` returns, for
    the disagreement Display: the labels are not checked again.
    """
    cl = _disagreement_cl(mu, phi, valid, n_bins, True)
    return cl, float(np.sqrt(max(cl, 0.0)))


# --------------------------------------------------------------------------- #
# metrics_by_agreement
# --------------------------------------------------------------------------- #
@validate_params(
    {
        **PAIR,
        "n_bins": N_BINS,
        "strategy": [StrOptions({"quantile", "uniform"})],
        **REPORT_COLUMNS,
        "disagreement": OPTIONAL_ARRAY,
    },
    prefer_skip_nested_validation=True,
)
@fill_doc
def metrics_by_agreement(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    n_bins: int = 5,
    strategy: str = "quantile",
    metrics: list[str] | None = None,
    metric_params: dict | None = None,
    disagreement: ArrayLike | None = None,
) -> pd.DataFrame:
    """Metrics per bin of human agreement (entropy of the label distribution).

    Following Nie et al. (2020, ChaosNLI §5.4, Figs. 4-5), each item's human
    entropy ``H(p̂_i)`` is computed in **base 2** and the items are split at
    the entropy quantiles: edges ``[min, q(1/B), ..., q((B−1)/B), max]``
    (``strategy="quantile"``, :func:`numpy.quantile` with linear
    interpolation) or ``B`` equal-width bins between min and max
    (``"uniform"``). Bins are ``[a, b)`` except the last, ``[a, b]``, so every
    item falls in exactly one bin. Tied entropies can make quantile bins
    empty; such bins are kept (``n_items = 0``, NaN metrics) and a warning is
    raised.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes)
        Label histograms (integer counts) or rows of human probabilities.
    %(y_prob)s
    %(counts)s
    %(labels)s
    n_bins : int, default=5
        Number of agreement bins.
    strategy : {"quantile", "uniform"}, default="quantile"
        How the bin edges are placed.
    metrics : list of str, default=None
        Report metric names (see :func:`human_calibration_report`); by default
        ``["jsd", "kl", "accuracy"]``, ChaosNLI's measures.
    metric_params : dict of str to dict, default=None
        Keyword arguments of the metric functions per column (see
        :func:`human_calibration_report`).
    disagreement : array-like of shape (n_samples,), default=None
        The classifier's own predicted disagreement ``φ`` for the
        disagreement columns; default ``1 − Σ_k q_k²``.

    Returns
    -------
    table : DataFrame of shape (n_bins, 5 + n_metrics)
        Index ``bin`` (0 = most agreement); columns ``entropy_low``,
        ``entropy_high`` (the bin edges, bits), ``n_items``, ``mean_entropy``
        (bits), then one column per metric.

    Examples
    --------
    >>> from sklearn_hcal.metrics import metrics_by_agreement
    >>> Y = [[4, 0], [3, 1], [1, 3], [4, 0]]
    >>> P = [[0.9, 0.1]] * 4
    >>> table = metrics_by_agreement(Y, P, n_bins=2, metrics=["accuracy"])
    >>> table[["n_items", "accuracy"]]
         n_items  accuracy
    bin
    0          2       1.0
    1          2       0.5
    """
    human, source = validate_human(y_true, y_prob, counts, labels)
    columns = resolve(metrics, human, metric_params, default=("jsd", "kl", "accuracy"))
    if disagreement is not None:
        _, source.phi, _ = check_disagreement_inputs(human.pair, disagreement, None)
    entropy = np.empty(human.n_samples)
    for block in human.pair.blocks():
        entropy[block.sl] = _entropy(block.p_hat, 2)
    lo, hi = float(entropy.min()), float(entropy.max())
    if strategy == "quantile":
        edges = np.quantile(entropy, np.linspace(0.0, 1.0, n_bins + 1))
    else:
        edges = np.linspace(lo, hi, n_bins + 1)
    # Pin the outer edges to the data so that the last bin is closed at the
    # maximum whatever the rounding of quantile/linspace.
    edges[0], edges[-1] = lo, hi
    which = np.clip(np.searchsorted(edges, entropy, side="right") - 1, 0, n_bins - 1)
    order = np.argsort(which, kind="stable")
    splits = np.searchsorted(which[order], np.arange(1, n_bins))
    members = np.split(order, splits)
    n_items = np.array([len(m) for m in members])
    if np.any(n_items == 0):
        warn_user(
            f"{int(np.sum(n_items == 0))} of {n_bins} agreement bins are empty "
            "(tied entropies); their metrics are NaN."
        )
    warn_debiased(columns, human)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for b, items in enumerate(members):
            row = {
                "entropy_low": edges[b],
                "entropy_high": edges[b + 1],
                "n_items": len(items),
                "mean_entropy": entropy[items].mean() if len(items) else np.nan,
            }
            values = (
                evaluate(columns, human.take(items), source.take(items))
                if len(items)
                else np.full(len(columns), np.nan)
            )
            row.update(zip([c.name for c in columns], values))
            rows.append(row)
    table = pd.DataFrame(rows)
    table.index.name = "bin"
    return table
