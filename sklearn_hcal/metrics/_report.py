"""Reports: instance-level errors, loss decompositions, agreement bins, tables.

These functions assemble the metrics of :mod:`sklearn_hcal.metrics` into the
pandas tables of the three papers:

* :func:`instance_calibration_errors` -- one row per item, the instance-level
  view Baan et al. (2022, §4 and App. B) argue for;
* :func:`loss_decomposition` -- Mimori et al.'s (2021, eq. 6) decomposition of
  the expected squared loss ``L = EL + IL`` and ``EL = CL + DL``, plug-in and
  debiased;
* :func:`metrics_by_agreement` -- metrics per bin of human entropy (Nie et al.,
  2020, ChaosNLI §5.4, Figs. 4-5);
* :func:`human_calibration_report` -- one row per classifier, one column per
  metric, with paired percentile-bootstrap confidence intervals.

Every number comes from the metric modules' own code (public functions or
their private per-item helpers); this module only validates once, indexes and
aggregates. The registry :data:`_REPORT_METRICS` maps each report column to the
code that computes it, so a metric is defined in exactly one place.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from joblib import effective_n_jobs
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions, validate_params
from sklearn.utils.parallel import Parallel, delayed

from .._validation import (
    _check_pair,
    _chunk_rows,
    _Pair,
    _probabilities,
    _row_blocks,
)
from ._disagreement import (
    _disagreement_cl_from_sums,
    _disagreement_cl_sums,
    _pair_disagreement,
    _phi_rows,
)
from ._distribution import (
    _block_entropies,
    _block_rank_match,
    _cross_entropy_per_item,
    _entropy,
    _jsd_per_item,
    _kl_per_item,
    _tvd_per_item,
)
from ._majority import (
    _binned_gap_from_sums,
    _binned_gap_sums,
    _block_classwise_sums,
    _block_top,
    _classwise_from_sums,
)
from ._mimori import (
    _cell_sums,
    _pair_cell_sums,
    _terms_from_sums,
    _warn_single_annotations,
)

__all__ = [
    "instance_calibration_errors",
    "loss_decomposition",
    "metrics_by_agreement",
    "human_calibration_report",
]


# --------------------------------------------------------------------------- #
# Validated inputs, with the per-item quantities computed at most once
# --------------------------------------------------------------------------- #
class _Inputs:
    """A validated ``_Pair`` of one classifier and shared per-item arrays.

    ``pair.Y`` holds label counts or, where the caller allowed it, rows of
    human probabilities; ``is_counts`` says which. The arrays are the
    caller's (integer, float32 or memory-mapped input is not copied); every
    metric walks them in blocks of rows. Classifiers evaluated on the same
    labels pass ``human=`` (another ``_Inputs``) to share its human-side
    arrays (``n``, the disagreement estimates ``mu``).
    """

    def __init__(self, pair: _Pair, human=None) -> None:
        self.pair = pair
        self.is_counts = pair.is_counts
        self._human = human
        # Kept only when the per-item values are used again (bootstrap);
        # a single evaluation only accumulates sums, to cap peak memory.
        self.keep_per_item = True
        self.per_item_cache: dict = {}

    def __getstate__(self):
        # What a bootstrap worker needs: the inputs and the shared per-item
        # vectors of the binned groups, not the cache of mean-type values.
        return {
            "pair": self.pair,
            "is_counts": self.is_counts,
            "mu": self.mu if self.is_counts else None,
        }

    def __setstate__(self, state) -> None:
        self.pair = state["pair"]
        self.is_counts = state["is_counts"]
        self._human = None
        self.keep_per_item = False
        self.per_item_cache = {}
        if state["mu"] is not None:
            self.__dict__["mu"] = state["mu"]

    @property
    def n(self) -> np.ndarray:
        return self.pair.n

    @property
    def n_samples(self) -> int:
        return self.pair.n_samples

    @cached_property
    def mu(self) -> np.ndarray:
        """Unbiased disagreement probability per item (NaN where ``n < 2``)."""
        if self._human is not None:
            return self._human.mu
        return _pair_disagreement(self.pair.Y, self.pair.n)[0]

    @cached_property
    def valid_pairs(self) -> np.ndarray:
        return self.n >= 2


def _block_phi(block) -> np.ndarray:
    """Predicted disagreement ``1 − Σ_k q_k²`` of a block (clipped to [0, 1])."""
    if "phi" not in block.cache:
        block.cache["phi"] = np.clip(_phi_rows(block.P), 0.0, 1.0)
    return block.cache["phi"]


def _disagreement_sq_per_item(mu: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Per-item ``μ̂(1 − μ̂) + (μ̂ − φ)²`` (Mimori et al. 2021, eq. 40).

    The term :func:`disagreement_squared_loss` averages over items with
    ``n_i >= 2``; that module has no per-item helper, and the bootstrap needs
    the per-item values to resample them.
    """
    return mu * (1.0 - mu) + (mu - phi) ** 2


def _validate_pair(y_true, y_prob, counts) -> _Inputs:
    return _Inputs(_check_pair(y_true, y_prob, counts=counts))


# --------------------------------------------------------------------------- #
# Metric registry
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class _ReportMetric:
    """How one report column is computed.

    Exactly one of ``per_item`` and ``group`` is set. ``per_item(inputs,
    block)`` returns ``(numerator, denominator)`` for the items of a block of
    rows, the metric being ``Σ num / Σ den`` over the items (``den=None``:
    the plain mean); such metrics are bootstrapped from their cached
    per-item values. ``group`` names an entry of :data:`_GROUPS`, a pair of
    functions: ``sums(inputs, block, weights)`` returns the partial sums of
    a block (``weights``: item multiplicities of a bootstrap resample, or
    ``None``), and ``finish(sums, n_samples)`` the dict of the group's
    metrics from the sums over all blocks.
    """

    description: str
    greater_is_better: bool
    requires: str  # "distribution", "counts" or "pairs"
    per_item: Callable | None = None
    group: str | None = None


def _mean_of(fn: Callable) -> Callable:
    return lambda d, block: (np.asarray(fn(block), dtype=np.float64), None)


def _ece_sums(d: _Inputs, block, w) -> np.ndarray:
    # expected_calibration_error's own computation on the block's cached
    # top class, confidence and correctness.
    _, conf, correct = _block_top(block)
    return _binned_gap_sums(conf, correct, 10, w)


def _ece_finish(sums, n_samples) -> dict:
    return {"ece": _binned_gap_from_sums(sums)}


def _classwise_sums(d: _Inputs, block, w) -> np.ndarray:
    return _block_classwise_sums(block, 10, w)


def _classwise_finish(sums, n_samples) -> dict:
    return {"classwise_ece": _classwise_from_sums(sums)}


_MIMORI_KEYS = (
    "sq_loss",
    "el",
    "el_plugin",
    "il",
    "il_plugin",
    "cl",
    "cl_plugin",
    "ce",
    "ce_plugin",
    "dl",
    "dl_plugin",
)


def _mimori_sums(d: _Inputs, block, w) -> np.ndarray:
    return _cell_sums(block.p_hat, block.P, block.n, 15, w)


def _mimori_finish(sums, n_samples) -> dict:
    terms = _terms_from_sums(sums, n_samples, 15)
    return {key: terms[key] for key in _MIMORI_KEYS}


def _disagreement_sums(d: _Inputs, block, w) -> np.ndarray:
    sl = block.sl
    return _disagreement_cl_sums(d.mu[sl], _block_phi(block), d.valid_pairs[sl], 15, w)


def _disagreement_finish(sums, n_samples) -> dict:
    if not np.any(sums[2] > 0):
        # A resample (or agreement bin) without a pair of annotators has no
        # estimate; the full data set was checked to have one.
        return dict.fromkeys(("disagreement_cl", "disagreement_ce"), np.nan)
    cl = _disagreement_cl_from_sums(sums, n_samples, True)
    return {"disagreement_cl": cl, "disagreement_ce": float(np.sqrt(max(cl, 0.0)))}


def _disagreement_sq(d: _Inputs, block):
    sl = block.sl
    valid = d.valid_pairs[sl]
    # NaN μ̂ (n_i < 2) would poison the sums; those items have weight 0.
    mu = np.nan_to_num(d.mu[sl])
    values = np.where(valid, _disagreement_sq_per_item(mu, _block_phi(block)), 0)
    return values, valid.astype(np.float64)


def _entropy_error(block) -> np.ndarray:
    h_human, h_model = _block_entropies(block)
    return h_model - h_human


_GROUPS: dict[str, tuple[Callable, Callable]] = {
    "ece": (_ece_sums, _ece_finish),
    "classwise_ece": (_classwise_sums, _classwise_finish),
    "mimori": (_mimori_sums, _mimori_finish),
    "disagreement": (_disagreement_sums, _disagreement_finish),
}

_REPORT_METRICS: dict[str, _ReportMetric] = {
    "accuracy": _ReportMetric(
        "majority_accuracy_score (argmax, first on ties)",
        True,
        "distribution",
        per_item=_mean_of(lambda b: _block_top(b)[2]),
    ),
    "ece": _ReportMetric(
        "expected_calibration_error (10 bins)",
        False,
        "distribution",
        group="ece",
    ),
    "classwise_ece": _ReportMetric(
        "classwise_expected_calibration_error (10 bins)",
        False,
        "distribution",
        group="classwise_ece",
    ),
    "rank_cs": _ReportMetric(
        "ranking_calibration_score (ties='strict')",
        True,
        "distribution",
        per_item=_mean_of(lambda b: _block_rank_match(b, "strict")),
    ),
    "ent_ce": _ReportMetric(
        "entropy_calibration_error (mean |EntCE|, natural log)",
        False,
        "distribution",
        per_item=_mean_of(lambda b: np.abs(_entropy_error(b))),
    ),
    "ent_ce_signed": _ReportMetric(
        "entropy_calibration_error(absolute=False)",
        False,
        "distribution",
        per_item=_mean_of(_entropy_error),
    ),
    "dist_ce": _ReportMetric(
        "distribution_calibration_error (mean TVD)",
        False,
        "distribution",
        per_item=_mean_of(lambda b: _tvd_per_item(b.p_hat, b.P)),
    ),
    "jsd": _ReportMetric(
        "jensen_shannon_distance (natural log)",
        False,
        "distribution",
        per_item=_mean_of(lambda b: _jsd_per_item(b.p_hat, b.P, None, False)),
    ),
    "kl": _ReportMetric(
        "kl_divergence (eps=1e-15)",
        False,
        "distribution",
        per_item=_mean_of(lambda b: _kl_per_item(b.p_hat, b.P, 1e-15)),
    ),
    "log_loss": _ReportMetric(
        "histogram_log_loss (per annotation)",
        False,
        "distribution",
        per_item=lambda d, b: (_cross_entropy_per_item(b.Y, b.P, 1e-15), b.n),
    ),
    "sq_loss": _ReportMetric(
        "expected_squared_loss (L̂_sq)", False, "counts", group="mimori"
    ),
    "el": _ReportMetric("epistemic_loss (debiased)", False, "counts", group="mimori"),
    "cl": _ReportMetric(
        "calibration_loss (debiased, 15 bins)", False, "counts", group="mimori"
    ),
    "ce": _ReportMetric(
        "calibration_error (debiased, 15 bins)", False, "counts", group="mimori"
    ),
    "dl": _ReportMetric(
        "dispersion_loss (debiased, 15 bins)", False, "counts", group="mimori"
    ),
    "disagreement_sq_loss": _ReportMetric(
        "disagreement_squared_loss, φ = 1 − Σq²",
        False,
        "pairs",
        per_item=_disagreement_sq,
    ),
    "disagreement_ce": _ReportMetric(
        "disagreement_calibration_error (debiased, 15 bins), φ = 1 − Σq²",
        False,
        "pairs",
        group="disagreement",
    ),
    "el_plugin": _ReportMetric(
        "epistemic_loss(debiased=False)", False, "counts", group="mimori"
    ),
    "il": _ReportMetric(
        "irreducible loss L̂_sq − EL (debiased)", False, "counts", group="mimori"
    ),
    "il_plugin": _ReportMetric(
        "irreducible loss L̂_sq − EL_plugin", False, "counts", group="mimori"
    ),
    "cl_plugin": _ReportMetric(
        "calibration_loss(debiased=False)", False, "counts", group="mimori"
    ),
    "ce_plugin": _ReportMetric(
        "calibration_error(debiased=False)", False, "counts", group="mimori"
    ),
    "dl_plugin": _ReportMetric(
        "dispersion_loss(debiased=False)", False, "counts", group="mimori"
    ),
    "disagreement_cl": _ReportMetric(
        "disagreement_calibration_loss (debiased, 15 bins)",
        False,
        "pairs",
        group="disagreement",
    ),
}

#: Columns of :func:`human_calibration_report` by default (the tables of Nie et
#: al. 2020, Baan et al. 2022 and Mimori et al. 2021), in this order.
DEFAULT_REPORT_METRICS = (
    "accuracy",
    "ece",
    "classwise_ece",
    "rank_cs",
    "ent_ce",
    "dist_ce",
    "jsd",
    "kl",
    "log_loss",
    "sq_loss",
    "el",
    "cl",
    "ce",
    "dl",
    "disagreement_sq_loss",
    "disagreement_ce",
)

_REQUIREMENT_TEXT = {
    "counts": "integer label counts (it needs the number of annotations n_i)",
    "pairs": "integer label counts with at least one item of n_i >= 2 annotations",
}


def _met(requirement: str, d: _Inputs) -> bool:
    if requirement == "distribution":
        return True
    if requirement == "counts":
        return d.is_counts
    return d.is_counts and bool(d.valid_pairs.any())


def _resolve_metrics(metrics, d: _Inputs, *, default) -> dict:
    """``{column: _ReportMetric}``; defaults drop metrics the data cannot give."""
    if metrics is None:
        return {
            name: _REPORT_METRICS[name]
            for name in default
            if _met(_REPORT_METRICS[name].requires, d)
        }
    if isinstance(metrics, str):
        metrics = [metrics]
    resolved = {}
    for name in metrics:
        if not isinstance(name, str) or name not in _REPORT_METRICS:
            raise ValueError(
                f"metrics contains {name!r}, which is not a report metric; valid "
                f"names: {sorted(_REPORT_METRICS)}."
            )
        spec = _REPORT_METRICS[name]
        if not _met(spec.requires, d):
            raise ValueError(
                f"Metric {name!r} needs {_REQUIREMENT_TEXT[spec.requires]}; the "
                "given human labels do not provide them."
            )
        resolved[name] = spec
    if not resolved:
        raise ValueError("metrics is empty: at least one metric name is required.")
    return resolved


def _evaluate(specs: Mapping[str, _ReportMetric], d: _Inputs) -> dict:
    """Metric values of all items, in one chunked pass over the rows.

    Per block of rows the shared arrays (``p̂``, entropies, top class, ``φ``)
    are computed once and fed to every column; mean-type metrics accumulate
    their sums (and keep their per-item values when ``d.keep_per_item``, for
    the bootstrap), binned ones their per-bin sums.
    """
    means = {name: spec for name, spec in specs.items() if spec.per_item is not None}
    groups = list(dict.fromkeys(s.group for s in specs.values() if s.group))
    n_samples = d.n_samples
    todo = [name for name in means if name not in d.per_item_cache]
    store = {}
    if d.keep_per_item:
        for name in todo:
            store[name] = [np.empty(n_samples), None]
    num_total = dict.fromkeys(todo, 0.0)
    den_total = dict.fromkeys(todo, 0.0)
    has_den = dict.fromkeys(todo, False)
    group_sums = dict.fromkeys(groups, 0.0)
    if todo or groups:
        for block in d.pair.blocks():
            for name in todo:
                num, den = means[name].per_item(d, block)
                num = np.asarray(num, dtype=np.float64)
                num_total[name] += float(num.sum())
                if den is None:
                    den_total[name] += num.shape[0]
                else:
                    has_den[name] = True
                    den_total[name] += float(np.sum(den))
                if name in store:
                    store[name][0][block.sl] = num
                    if den is not None:
                        if store[name][1] is None:
                            store[name][1] = np.ones(n_samples)
                        store[name][1][block.sl] = den
            for group in groups:
                group_sums[group] = group_sums[group] + _GROUPS[group][0](
                    d, block, None
                )
    for name in todo:
        if name in store:
            d.per_item_cache[name] = tuple(store[name])
    out = {}
    finished = {g: _GROUPS[g][1](group_sums[g], n_samples) for g in groups}
    for name, spec in specs.items():
        if spec.per_item is None:
            out[name] = float(finished[spec.group][name])
            continue
        if name in num_total:
            num, total = num_total[name], den_total[name]
        else:
            num_arr, den_arr = d.per_item_cache[name]
            num = float(num_arr.sum())
            total = num_arr.shape[0] if den_arr is None else float(den_arr.sum())
        out[name] = float(num / total) if total > 0 else np.nan
    return out


def _weighted_groups(specs, d: _Inputs, weights, chunk_rows) -> dict:
    """Binned metrics of a bootstrap resample given by item multiplicities.

    Weighting each item by its multiplicity gives the same per-bin sums as
    copying the resampled rows, without the copy.
    """
    groups = list(dict.fromkeys(s.group for s in specs.values() if s.group))
    sums = dict.fromkeys(groups, 0.0)
    for block in d.pair.blocks(chunk_rows):
        w = weights[block.sl]
        for group in groups:
            sums[group] = sums[group] + _GROUPS[group][0](d, block, w)
    n_samples = float(weights.sum())
    out = {}
    for group in groups:
        out.update(_GROUPS[group][1](sums[group], n_samples))
    return out


def _warn_debiased(specs, d: _Inputs) -> None:
    if any(name in specs for name in ("el", "dl", "il")):
        _warn_single_annotations(d.n, "epistemic and dispersion losses")


# --------------------------------------------------------------------------- #
# instance_calibration_errors
# --------------------------------------------------------------------------- #
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


_COMMON = {
    "y_true": ["array-like"],
    "y_prob": ["array-like"],
    "counts": ["array-like", None],
}


@validate_params(
    {**_COMMON, "index": ["array-like", None]}, prefer_skip_nested_validation=True
)
def instance_calibration_errors(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
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
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities (1-D: P(second class) of a binary problem).
    counts : array-like of shape (n_samples, n_classes), default=None
        When given, replaces ``y_true`` as the human histograms.
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
    d = _validate_pair(y_true, y_prob, counts)
    n_samples = d.n_samples
    idx = _pick_index(index, n_samples, counts, y_true)
    columns = {
        name: np.empty(n_samples)
        for name in (
            "dist_ce",
            "ent_ce",
            "jsd",
            "kl",
            "human_entropy",
            "model_entropy",
        )
    }
    rank_match = np.empty(n_samples, dtype=bool)
    majority_correct = np.empty(n_samples, dtype=bool)
    human_phi = None if d.is_counts else np.empty(n_samples)
    for block in d.pair.blocks():
        sl = block.sl
        h_human, h_model = _block_entropies(block)
        columns["dist_ce"][sl] = _tvd_per_item(block.p_hat, block.P)
        columns["ent_ce"][sl] = h_model - h_human
        columns["jsd"][sl] = _jsd_per_item(block.p_hat, block.P)
        columns["kl"][sl] = _kl_per_item(block.p_hat, block.P)
        columns["human_entropy"][sl] = h_human
        columns["model_entropy"][sl] = h_model
        rank_match[sl] = _block_rank_match(block, "strict")
        majority_correct[sl] = _block_top(block)[2]
        if human_phi is not None:
            human_phi[sl] = np.clip(_phi_rows(block.p_hat), 0.0, 1.0)
    if d.is_counts:
        disagreement = d.mu
        n_annotations = pd.array(d.n.astype(np.int64), dtype="Int64")
    else:
        disagreement = human_phi
        n_annotations = pd.array([pd.NA] * n_samples, dtype="Int64")
    return pd.DataFrame(
        {
            **columns,
            "rank_match": rank_match,
            "majority_correct": majority_correct,
            "human_disagreement": disagreement,
            "n_annotations": n_annotations,
        },
        index=idx,
    )


# --------------------------------------------------------------------------- #
# loss_decomposition
# --------------------------------------------------------------------------- #
@validate_params(
    {**_COMMON, "n_bins": [Interval(numbers.Integral, 1, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def loss_decomposition(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
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
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (non-negative integer counts) or 1-D labels.
        Probabilities are rejected: the estimators need ``n_i``.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities (1-D: P(second class) of a binary problem).
    counts : array-like of shape (n_samples, n_classes), default=None
        When given, replaces ``y_true`` as the human histograms.
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
    pair = _check_pair(y_true, y_prob, counts=counts, allow_probabilities=False)
    _warn_single_annotations(pair.n, "epistemic and dispersion losses")
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


# --------------------------------------------------------------------------- #
# metrics_by_agreement
# --------------------------------------------------------------------------- #
_METRICS_ARG = [list, tuple, str, None]


@validate_params(
    {
        **_COMMON,
        "n_bins": [Interval(numbers.Integral, 1, None, closed="left")],
        "strategy": [StrOptions({"quantile", "uniform"})],
        "metrics": _METRICS_ARG,
    },
    prefer_skip_nested_validation=True,
)
def metrics_by_agreement(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    n_bins: int = 5,
    strategy: str = "quantile",
    metrics: list[str] | None = None,
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
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities (1-D: P(second class) of a binary problem).
    counts : array-like of shape (n_samples, n_classes), default=None
        When given, replaces ``y_true`` as the human histograms.
    n_bins : int, default=5
        Number of agreement bins.
    strategy : {"quantile", "uniform"}, default="quantile"
        How the bin edges are placed.
    metrics : list of str, default=None
        Report metric names (see :func:`human_calibration_report`); by default
        ``["jsd", "kl", "accuracy"]``, ChaosNLI's measures.

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
    d = _validate_pair(y_true, y_prob, counts)
    specs = _resolve_metrics(metrics, d, default=("jsd", "kl", "accuracy"))
    entropy = np.empty(d.n_samples)
    for block in d.pair.blocks():
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
        warnings.warn(
            f"{int(np.sum(n_items == 0))} of {n_bins} agreement bins are empty "
            "(tied entropies); their metrics are NaN.",
            UserWarning,
            stacklevel=3,
        )
    _warn_debiased(specs, d)
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
            if len(items):
                sub = _Inputs(d.pair.take(items))
                sub.keep_per_item = False
                row.update(_evaluate(specs, sub))
            else:
                row.update(dict.fromkeys(specs, np.nan))
            rows.append(row)
    table = pd.DataFrame(rows)
    table.index.name = "bin"
    return table


# --------------------------------------------------------------------------- #
# human_calibration_report
# --------------------------------------------------------------------------- #
def _as_prediction_dict(predictions) -> dict:
    if isinstance(predictions, Mapping):
        if len(predictions) == 0:
            raise ValueError(
                "predictions is an empty dict: pass at least one classifier's "
                "probabilities, e.g. {'model': P}."
            )
        named = {str(name): value for name, value in predictions.items()}
        if len(named) != len(predictions):
            raise ValueError(
                "predictions has keys that are equal as strings "
                f"({list(predictions)}); the report's index needs unique names."
            )
        return named
    return {"model": predictions}


@validate_params(
    {
        "y_true": ["array-like"],
        "predictions": [Mapping, "array-like"],
        "counts": ["array-like", None],
        "metrics": _METRICS_ARG,
        "n_bootstrap": [Interval(numbers.Integral, 0, None, closed="left")],
        "confidence_level": [Interval(numbers.Real, 0, 1, closed="neither")],
        "ci_method": [StrOptions({"bias_corrected", "percentile", "basic"})],
        "random_state": ["random_state"],
        "return_bootstrap": ["boolean"],
        "n_jobs": [numbers.Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def human_calibration_report(
    y_true: ArrayLike,
    predictions,
    *,
    counts: ArrayLike | None = None,
    metrics: list[str] | None = None,
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    ci_method: str = "bias_corrected",
    random_state=None,
    return_bootstrap: bool = False,
    n_jobs: int | None = None,
):
    """Table of human-calibration metrics, one row per classifier.

    The columns are the measures of Nie et al. (2020, ChaosNLI Table 5),
    Baan et al. (2022, Table 1) and Mimori et al. (2021, Tables 1-5), each
    computed by the corresponding function of :mod:`sklearn_hcal.metrics`
    with its defaults:

    ======================== ===================================================
    column                   function
    ======================== ===================================================
    ``accuracy``             :func:`majority_accuracy_score`
    ``ece``                  :func:`expected_calibration_error` (10 bins)
    ``classwise_ece``        :func:`classwise_expected_calibration_error`
    ``rank_cs``              :func:`ranking_calibration_score`
    ``ent_ce``               :func:`entropy_calibration_error` (mean ``|EntCE|``)
    ``dist_ce``              :func:`distribution_calibration_error`
    ``jsd``                  :func:`jensen_shannon_distance`
    ``kl``                   :func:`kl_divergence`
    ``log_loss``             :func:`histogram_log_loss`
    ``sq_loss``              :func:`expected_squared_loss` (``L̂_sq``)
    ``el``, ``cl``           :func:`epistemic_loss`, :func:`calibration_loss`
    ``ce``, ``dl``           :func:`calibration_error`, :func:`dispersion_loss`
    ``disagreement_sq_loss`` :func:`disagreement_squared_loss`, ``φ = 1 − Σq²``
    ``disagreement_ce``      :func:`disagreement_calibration_error`, same ``φ``
    ======================== ===================================================

    Mimori's estimators are debiased. Also available by name: ``el_plugin``,
    ``cl_plugin``, ``ce_plugin``, ``dl_plugin``, ``il``, ``il_plugin`` (see
    :func:`loss_decomposition`), ``ent_ce_signed`` and ``disagreement_cl``.
    By default the columns that the labels cannot support are left out: those
    from ``sq_loss`` on need integer counts, the disagreement ones at least one
    item with two annotations; asking for them explicitly raises an error.

    Confidence intervals come from the bootstrap over items: each resample
    draws ``n_samples`` items with replacement and every metric is recomputed
    on it. The **same resamples are used for every classifier**, so
    differences between classifiers are paired (``return_bootstrap=True``
    gives the replicates to compute them). A resample on which a metric is
    undefined (e.g. no item with two annotations) is left out of that
    metric's interval.

    By default the intervals are *bias-corrected percentile* intervals: the
    percentiles of the replicates shifted by the bootstrap estimate of the
    bias, ``mean(replicates) − estimate``. For metrics that are means over
    items (accuracy, DistCE, JSD, KL, ``el``, ...) that shift is negligible
    and the interval is the plain percentile one. For Mimori et al.'s debiased
    binned estimators (``cl``, ``ce``, ``dl``, ``disagreement_ce``) it is
    not: a resample keeps each item's labels, so in the bootstrap world the
    label noise that the estimator removes is added back once more, and the
    replicates centre on the *plug-in* value rather than on the debiased
    estimate (the plain percentile interval then often excludes the
    estimate). ``ci_method="percentile"`` gives the plain percentile
    interval and ``"basic"`` the basic bootstrap ``2·estimate − q``. A
    ``UserWarning`` names any metric whose interval still misses its
    estimate.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (integer counts), rows of human probabilities, or 1-D
        labels.
    predictions : dict of str to array-like, or array-like
        ``{name: probabilities of shape (n_samples, n_classes)}``; a single
        array is reported under the name ``"model"``. 1-D arrays are
        P(second class) of a binary problem.
    counts : array-like of shape (n_samples, n_classes), default=None
        When given, replaces ``y_true`` as the human histograms.
    metrics : list of str, default=None
        Columns to compute, in order (names above); ``None`` = all that the
        labels support.
    n_bootstrap : int, default=0
        Number of bootstrap resamples; 0 gives point estimates only.
    confidence_level : float, default=0.95
        Coverage of the intervals, in ``(0, 1)``.
    ci_method : {"bias_corrected", "percentile", "basic"}, default="bias_corrected"
        How replicates become intervals (see above).
    random_state : int, RandomState instance or None, default=None
        Seeds the resampling.
    return_bootstrap : bool, default=False
        Also return the bootstrap replicates.
    n_jobs : int, default=None
        Number of jobs computing the bootstrap replicates, dispatched in
        batches with :class:`sklearn.utils.parallel.Parallel` (``None``
        means 1 unless in a :func:`joblib.parallel_backend` context, -1 all
        processors). The resamples are drawn on the calling process, in
        order, from ``random_state``, and each replicate is computed
        independently of the batch and process that computes it, so the
        result is **identical for every** ``n_jobs`` **and backend** (e.g.
        ``with joblib.parallel_backend("dask"): ...`` on a dask cluster).

    Returns
    -------
    report : DataFrame of shape (n_classifiers, n_metrics) or \
            (n_classifiers, 3 * n_metrics)
        Index: the classifier names (``"classifier"``). Without bootstrap one
        column per metric; with it, each metric ``m`` is followed by
        ``m_low`` and ``m_high``, the interval bounds. Flat column names keep
        ``report.to_csv()`` and ``report.to_markdown()`` one header line.
        ``report.attrs`` records ``n_samples``, ``n_bootstrap`` and
        ``confidence_level``.
    replicates : DataFrame of shape (n_bootstrap * n_classifiers, n_metrics)
        Only when ``return_bootstrap=True``: the metric values of every
        resample, indexed by ``(resample, classifier)``. Paired differences:
        ``replicates.xs("a", level="classifier") - replicates.xs("b",
        level="classifier")``.

    See Also
    --------
    instance_calibration_errors : The per-item errors behind the means.
    metrics_by_agreement : The same metrics per bin of human entropy.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics import human_calibration_report
    >>> Y = np.array([[8, 2], [5, 5], [1, 9], [7, 3]])
    >>> oracle = Y / Y.sum(axis=1, keepdims=True)
    >>> uniform = np.full((4, 2), 0.5)
    >>> report = human_calibration_report(
    ...     Y, {"oracle": oracle, "uniform": uniform},
    ...     metrics=["accuracy", "dist_ce", "jsd"])
    >>> report.round(3)
                accuracy  dist_ce    jsd
    classifier
    oracle          1.00    0.000  0.000
    uniform         0.75    0.225  0.172
    >>> ci = human_calibration_report(
    ...     Y, oracle, metrics=["dist_ce"], n_bootstrap=20, random_state=0)
    >>> list(ci.columns)
    ['dist_ce', 'dist_ce_low', 'dist_ce_high']
    """
    preds = _as_prediction_dict(predictions)
    names = list(preds)
    # The human labels are validated once; each further classifier only
    # checks its probabilities and shares n, p̂'s inputs and μ̂.
    first = _validate_pair(y_true, preds[names[0]], counts)
    pair = first.pair
    n_samples, n_classes = pair.n_samples, pair.n_classes
    first.keep_per_item = n_bootstrap > 0
    inputs = {names[0]: first}
    for name in names[1:]:
        P = _probabilities(
            preds[name], name=f"predictions[{name!r}]", n_classes=n_classes
        )
        if P.shape[0] != n_samples:
            raise ValueError(
                f"predictions[{name!r}] has {P.shape[0]} samples but the human "
                f"labels have {n_samples}."
            )
        inputs[name] = _Inputs(_Pair(pair.Y, P, pair.n, pair.is_counts), human=first)
        inputs[name].keep_per_item = n_bootstrap > 0
    specs = _resolve_metrics(metrics, first, default=DEFAULT_REPORT_METRICS)
    _warn_debiased(specs, first)

    with warnings.catch_warnings():
        # The metric modules' warnings were raised once above.
        warnings.simplefilter("ignore", UserWarning)
        point = np.array([list(_evaluate(specs, inputs[n]).values()) for n in names])
        boot = (
            _bootstrap(specs, inputs, n_bootstrap, random_state, n_jobs)
            if n_bootstrap > 0
            else None
        )

    columns = list(specs)
    if boot is None:
        report = pd.DataFrame(
            point, index=pd.Index(names, name="classifier"), columns=columns
        )
    else:
        with warnings.catch_warnings():
            # All-NaN columns (a metric undefined on every resample) stay NaN.
            warnings.simplefilter("ignore", RuntimeWarning)
            low, high = _bootstrap_intervals(point, boot, confidence_level, ci_method)
        _warn_shifted_intervals(point, low, high, columns)
        data = {}
        for j, metric in enumerate(columns):
            data[metric] = point[:, j]
            data[f"{metric}_low"] = low[:, j]
            data[f"{metric}_high"] = high[:, j]
        report = pd.DataFrame(data, index=pd.Index(names, name="classifier"))
    report.attrs.update(
        n_samples=n_samples,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level if n_bootstrap else None,
        ci_method=ci_method if n_bootstrap else None,
    )
    if not return_bootstrap:
        return report
    if boot is None:
        replicates = pd.DataFrame(
            np.empty((0, len(columns))),
            index=pd.MultiIndex.from_arrays([[], []], names=["resample", "classifier"]),
            columns=columns,
        )
    else:
        replicates = pd.DataFrame(
            boot.reshape(-1, len(columns)),
            index=pd.MultiIndex.from_product(
                [range(n_bootstrap), names], names=["resample", "classifier"]
            ),
            columns=columns,
        )
    return report, replicates


def _bootstrap_intervals(point, boot, confidence_level, ci_method):
    """``(low, high)`` from replicates ``boot`` (resamples first) and ``point``.

    See :func:`human_calibration_report` for the three methods; NaN
    replicates (a metric undefined on a resample) are left out.
    """
    alpha = 1.0 - confidence_level
    low, high = np.nanquantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
    if ci_method == "bias_corrected":
        bias = np.nanmean(boot, axis=0) - point
        return low - bias, high - bias
    if ci_method == "basic":
        return 2 * point - high, 2 * point - low
    return low, high


def _warn_shifted_intervals(point, low, high, columns) -> None:
    # The binned, debiased estimators (CL, CE, DL, ...) are not smooth functions
    # of the item distribution: a resample duplicates items, which empties or
    # thins bins and changes the bias corrections, so their bootstrap
    # distribution can sit beside the point estimate. Say so rather than
    # report an interval that silently excludes it.
    tol = 1e-12 * np.maximum(1.0, np.abs(point))
    outside = (point < low - tol) | (point > high + tol)
    if np.any(outside):
        names = [columns[j] for j in np.flatnonzero(outside.any(axis=0))]
        warnings.warn(
            f"The bootstrap intervals of {names} do not contain the "
            "point estimate for some classifiers. With few resamples this can "
            "happen by chance; otherwise the bootstrap distribution of these "
            "metrics is shifted (binned estimators with sparsely filled bins "
            "react to the items a resample duplicates). Treat those intervals "
            "with care: use more resamples, more items or fewer bins.",
            UserWarning,
            stacklevel=4,
        )


def _bootstrap_batch(
    metric_names, inputs: dict, mean_num, mean_den, mults, chunk_rows
) -> np.ndarray:
    """Replicates of the resamples of one batch, shape (batch, n_clf, n_metrics).

    Runs in a joblib worker. ``mults`` holds the item multiplicities of each
    resample (drawn on the driver). Mean-type metrics are
    ``Σ_i m_i num_i / Σ_i m_i den_i`` over the cached per-item values,
    summed block by block with numpy (not BLAS, whose summation order can
    depend on the number of threads), and binned metrics are recomputed with
    the multiplicities as weights, so a replicate does not depend on the
    process or the batch that computes it.
    """
    specs = {name: _REPORT_METRICS[name] for name in metric_names}
    names = list(inputs)
    mean_cols = [j for j, m in enumerate(metric_names) if specs[m].per_item]
    group_specs = {m: s for m, s in specs.items() if s.per_item is None}
    out = np.empty((len(mults), len(names), len(metric_names)))
    for b, mult in enumerate(mults):
        mult = np.asarray(mult, dtype=np.float64)
        if mean_cols:
            den_rows, den_mat = mean_den
            num = np.zeros(mean_num.shape[0])
            den = np.full(mean_num.shape[0], float(mult.sum()))
            den_part = np.zeros(len(den_rows))
            for sl in _row_blocks(mult.shape[0], mean_num.shape[0], chunk_rows):
                num += np.sum(mean_num[:, sl] * mult[sl], axis=1)
                if den_rows:
                    den_part += np.sum(den_mat[:, sl] * mult[sl], axis=1)
            den[den_rows] = den_part
            with np.errstate(invalid="ignore", divide="ignore"):
                values = num / den
            out[b][:, mean_cols] = values.reshape(len(names), len(mean_cols))
        if group_specs:
            for i, name in enumerate(names):
                vals = _weighted_groups(group_specs, inputs[name], mult, chunk_rows)
                for metric in group_specs:
                    out[b, i, metric_names.index(metric)] = vals[metric]
    return out


def _bootstrap(
    specs, inputs: dict, n_bootstrap: int, random_state, n_jobs=None
) -> np.ndarray:
    """Replicates of shape (n_bootstrap, n_classifiers, n_metrics).

    The resamples are drawn on the driver, in order, from
    ``check_random_state(random_state)`` (resample ``b`` is the ``b``-th
    ``randint(0, n_samples, n_samples)``), lazily batch by batch, and the
    batches are dispatched with :class:`sklearn.utils.parallel.Parallel`; as
    each replicate is computed independently of its batch and process, the
    result is identical for every ``n_jobs`` and joblib backend.
    """
    rng = check_random_state(random_state)
    names = list(inputs)
    columns = list(specs)
    first = next(iter(inputs.values()))
    n_samples = first.n_samples
    mean_cols = [j for j, m in enumerate(columns) if specs[m].per_item is not None]
    mean_num = mean_den = None
    if mean_cols:
        # rows: (classifier, metric); a metric without denominator is a plain
        # mean, whose resampled denominator is Σ m_i = n_samples (NaN row).
        mean_num = np.empty((len(names) * len(mean_cols), n_samples))
        dens = {}
        for r, (name, j) in enumerate((name, j) for name in names for j in mean_cols):
            num, den = inputs[name].per_item_cache.pop(columns[j])
            mean_num[r] = num
            if den is not None:
                dens[r] = den
        mean_den = (list(dens), np.vstack(list(dens.values())) if dens else None)
        del dens
    for d in inputs.values():
        d.per_item_cache.clear()  # now in mean_num / mean_den
    chunk_rows = _chunk_rows(first.pair.n_classes)
    # About 4 batches per worker balance the load; multiplicities of a batch
    # take batch_size * n_samples * 4 bytes, so batches stay small.
    n_workers = max(effective_n_jobs(n_jobs), 1)
    batch_size = int(np.clip(n_bootstrap // (4 * n_workers), 1, 64))
    batch_size = min(batch_size, max(1, 2**26 // max(n_samples, 1)))

    def batches():
        for start in range(0, n_bootstrap, batch_size):
            stop = min(start + batch_size, n_bootstrap)
            mults = np.empty((stop - start, n_samples), dtype=np.int32)
            for b in range(stop - start):
                idx = rng.randint(0, n_samples, size=n_samples)
                mults[b] = np.bincount(idx, minlength=n_samples)
            yield delayed(_bootstrap_batch)(
                columns, inputs, mean_num, mean_den, mults, chunk_rows
            )

    parts = Parallel(n_jobs=n_jobs)(batches())
    return np.concatenate(parts, axis=0)
