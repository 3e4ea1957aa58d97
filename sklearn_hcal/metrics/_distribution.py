"""Distribution-level metrics against human label distributions.

Every public metric compares a model's probabilities ``q_i`` with the human
distribution ``p̂_i = Y_i / n_i`` of each item and averages a per-item quantity:

* :func:`distribution_calibration_error` -- DistCE, total variation distance
  (Baan et al., 2022, eq. 7);
* :func:`entropy_calibration_error` -- EntCE, ``H(q_i) - H(p̂_i)`` (Baan eq. 5);
* :func:`ranking_calibration_score` -- RankCS, agreement of the class rankings
  (Baan eq. 6);
* :func:`jensen_shannon_distance` and :func:`kl_divergence` -- the measures of
  ChaosNLI (Nie et al., 2020, eqs. 1-2);
* :func:`histogram_log_loss` -- multinomial negative log-likelihood per
  annotation (Mimori et al., 2021, eq. 82).

The per-item kernels (``_*_per_item``, in
:mod:`~sklearn_hcal.metrics._distribution_kernels`) take already-validated
float arrays and return one value per item; the public functions are exactly
their means, and the registry declarations at the end of this module give
them to the report and to
:func:`sklearn_hcal.metrics.instance_calibration_errors`.

Class alignment (``labels=``): see "Classes" in :mod:`sklearn_hcal.metrics`.
"""

from __future__ import annotations

from numbers import Real

from ..utils._compat import Interval, StrOptions
from ..utils._docstrings import fill_doc
from ._constraints import PAIR
from ._dispatch import validate_params  # dask arrays: chunk-wise
from ._distribution_kernels import (
    _block_entropy_error,
    _block_jsd,
    _block_kl,
    _block_log_loss,
    _block_rank_match,
    _cross_entropy_per_item,
    _pair_mean,
    _pair_sum,
    _tvd_per_item,
    validate_pair,
)

__all__ = [
    "distribution_calibration_error",
    "entropy_calibration_error",
    "ranking_calibration_score",
    "jensen_shannon_distance",
    "kl_divergence",
    "histogram_log_loss",
]

# A base in (0, 1) would flip the sign of divergences and entropies.
_BASE_CONSTRAINT = [Interval(Real, 1, None, closed="neither"), None]
_EPS_CONSTRAINT = [Interval(Real, 0, 1, closed="neither")]


# --------------------------------------------------------------------------- #
# Public metrics
# --------------------------------------------------------------------------- #


@validate_params(PAIR, prefer_skip_nested_validation=True)
@fill_doc
def distribution_calibration_error(
    y_true, y_prob, *, counts=None, labels=None
) -> float:
    """Human distribution calibration error (DistCE), the mean total variation.

    ``DistCE = mean_i ½‖q_i − p̂_i‖₁`` with ``p̂_i = Y_i / n_i`` the human label
    distribution (Baan et al., 2022, eq. 7 and App. E). It lies in ``[0, 1]``;
    lower is better.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s

    Returns
    -------
    float
        The mean total variation distance.

    References
    ----------
    Baan, Aziz, Plank, Fernández (2022). Stop Measuring Calibration When Humans
    Disagree. EMNLP.

    Examples
    --------
    >>> from sklearn_hcal.metrics import distribution_calibration_error
    >>> Y = [[3, 1], [0, 4]]
    >>> P = [[0.5, 0.5], [0.0, 1.0]]
    >>> float(distribution_calibration_error(Y, P))  # (0.25 + 0) / 2
    0.125
    """
    pair = validate_pair(y_true, y_prob, counts, labels=labels)
    return _pair_mean(pair, lambda b: _tvd_per_item(b.p_hat, b.P))


@validate_params(
    {**PAIR, "absolute": ["boolean"], "base": _BASE_CONSTRAINT},
    prefer_skip_nested_validation=True,
)
@fill_doc
def entropy_calibration_error(
    y_true,
    y_prob,
    *,
    counts=None,
    labels=None,
    absolute: bool = True,
    base: float | None = None,
) -> float:
    """Human entropy calibration error (EntCE).

    Per item ``EntCE_i = H(q_i) − H(p̂_i)`` (Baan et al., 2022, eq. 5), positive
    when the model is less certain than the humans. The aggregate is the mean
    of ``|EntCE_i|`` (Baan's Table 1), or the signed mean with
    ``absolute=False``.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    absolute : bool, default=True
        Average the absolute per-item errors; ``False`` averages the signed
        errors (negative = over-confident on average).
    base : float, default=None
        Logarithm base (> 1) of the entropies; natural log when ``None``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics import entropy_calibration_error
    >>> Y = [[2, 2], [4, 0]]        # human entropies: log 2 and 0
    >>> P = [[1.0, 0.0], [0.5, 0.5]]  # model entropies: 0 and log 2
    >>> bool(np.isclose(entropy_calibration_error(Y, P), np.log(2)))
    True
    >>> float(entropy_calibration_error(Y, P, absolute=False))  # (-log2 + log2)/2
    0.0
    """
    pair = validate_pair(y_true, y_prob, counts, labels=labels)

    return _pair_mean(pair, lambda b: _block_entropy_error(b, absolute, base))


@validate_params(
    {**PAIR, "ties": [StrOptions({"strict", "weak"})]},
    prefer_skip_nested_validation=True,
)
@fill_doc
def ranking_calibration_score(
    y_true, y_prob, *, counts=None, labels=None, ties: str = "strict"
) -> float:
    """Human ranking calibration score (RankCS): fraction of matching rankings.

    An item counts when the model ranks all classes as the humans do (Baan et
    al., 2022, eq. 6). Higher is better; the oracle ``q = p̂`` scores 1.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    ties : {"strict", "weak"}, default="strict"
        ``"strict"`` compares ``argsort(q_i, kind="stable")`` with
        ``argsort(Y_i, kind="stable")``, as Baan et al.'s code does (tied
        classes must appear in the same index order on both sides).
        ``"weak"`` accepts any order of classes the humans tie, but requires
        every strict human preference ``Y_ij > Y_ik`` to be reproduced strictly,
        ``q_ij > q_ik`` (so a model tie between classes humans rank differently
        is a mismatch).

    Returns
    -------
    float
        Fraction of items in ``[0, 1]``.

    Examples
    --------
    >>> from sklearn_hcal.metrics import ranking_calibration_score
    >>> Y = [[5, 3, 2], [4, 4, 2]]
    >>> P = [[0.6, 0.3, 0.1], [0.5, 0.3, 0.2]]
    >>> float(ranking_calibration_score(Y, P))  # item 2: human tie in other order
    0.5
    >>> float(ranking_calibration_score(Y, P, ties="weak"))
    1.0
    """
    pair = validate_pair(y_true, y_prob, counts, labels=labels)
    return _pair_mean(pair, lambda b: _block_rank_match(b, ties))


@validate_params(
    {**PAIR, "squared": ["boolean"], "base": _BASE_CONSTRAINT},
    prefer_skip_nested_validation=True,
)
@fill_doc
def jensen_shannon_distance(
    y_true,
    y_prob,
    *,
    counts=None,
    labels=None,
    squared: bool = False,
    base: float | None = None,
) -> float:
    """Mean Jensen-Shannon distance between human and model distributions.

    ``JSD_i = sqrt(½ KL(p̂_i‖m_i) + ½ KL(q_i‖m_i))``, ``m_i = ½(p̂_i + q_i)``
    (Nie et al., 2020, ChaosNLI eq. 2), averaged over items. Per item this is
    ``scipy.spatial.distance.jensenshannon(p̂_i, q_i, base=base)``, the function
    ChaosNLI's evaluation code calls; its default, the **natural log**
    (``base=None``), is what reproduces ChaosNLI's Table 5 (e.g. the chance
    baseline: 0.3205 / 0.383 / 0.3023 on α / S / M); with ``base=2`` the
    distance is bounded by 1.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    squared : bool, default=False
        Return the mean Jensen-Shannon *divergence* (the square of the
        distance, averaged) instead.
    base : float, default=None
        Logarithm base (> 1); natural log when ``None`` (ChaosNLI).

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics import jensen_shannon_distance
    >>> Y = [[1, 0]]
    >>> P = [[0.0, 1.0]]  # disjoint supports: divergence log 2
    >>> bool(np.isclose(jensen_shannon_distance(Y, P, squared=True), np.log(2)))
    True
    >>> float(jensen_shannon_distance(Y, P, base=2))
    1.0
    """
    pair = validate_pair(y_true, y_prob, counts, labels=labels)
    return _pair_mean(pair, lambda b: _block_jsd(b, base, squared))


@validate_params({**PAIR, "eps": _EPS_CONSTRAINT}, prefer_skip_nested_validation=True)
@fill_doc
def kl_divergence(
    y_true, y_prob, *, counts=None, labels=None, eps: float = 1e-15
) -> float:
    """Mean Kullback-Leibler divergence ``KL(p̂_i ‖ q_i)`` (natural log).

    ``KL(p̂‖q) = Σ_k p̂_k log(p̂_k / q_k)`` (Nie et al., 2020, ChaosNLI eq. 1),
    with ``0·log 0 = 0``. As in ChaosNLI's evaluation code, ``q`` is floored at
    ``eps`` and renormalised first, so a zero predicted probability gives a
    large but finite divergence.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    eps : float, default=1e-15
        Floor applied to the predicted probabilities, in ``(0, 1)``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics import kl_divergence
    >>> Y = [[1, 1]]
    >>> P = [[0.25, 0.75]]  # ½ log(0.5/0.25) + ½ log(0.5/0.75)
    >>> bool(np.isclose(kl_divergence(Y, P), 0.5 * np.log(4 / 3)))
    True
    """
    pair = validate_pair(y_true, y_prob, counts, labels=labels)
    return _pair_mean(pair, lambda b: _block_kl(b, eps))


@validate_params({**PAIR, "eps": _EPS_CONSTRAINT}, prefer_skip_nested_validation=True)
@fill_doc
def histogram_log_loss(
    y_true, y_prob, *, counts=None, labels=None, eps: float = 1e-15
) -> float:
    """Multinomial negative log-likelihood per annotation.

    ``L = −Σ_i Σ_k Y_ik log q_ik / Σ_i n_i`` (Mimori et al., 2021, eq. 82): the
    log loss of every individual annotation, so items with more labels weigh
    more. With one label per item (1-D ``y_true``) it equals
    :func:`sklearn.metrics.log_loss`; with rows of probabilities it is the
    mean cross-entropy. ``q`` is floored at ``eps`` (not renormalised).

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(counts)s
    %(labels)s
    eps : float, default=1e-15
        Floor applied to the predicted probabilities, in ``(0, 1)``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics import histogram_log_loss
    >>> Y = [[3, 1], [0, 2]]
    >>> P = [[0.5, 0.5], [0.5, 0.5]]
    >>> bool(np.isclose(histogram_log_loss(Y, P), np.log(2)))
    True
    """
    pair = validate_pair(y_true, y_prob, counts, labels=labels)
    if not pair.is_counts:
        # Rows of human probabilities: their mean cross-entropy, each row
        # renormalised (rows off by rounding are accepted, developer guide §tolerances),
        # so that no item weighs by its rounding error.
        return _pair_mean(pair, lambda b: _cross_entropy_per_item(b.p_hat, b.P, eps))
    total = _pair_sum(pair, lambda b: _cross_entropy_per_item(b.Y, b.P, eps))
    return float(total / pair.n.sum())


# --------------------------------------------------------------------------- #
# Registry declarations: the report's columns, the scorers and the command
# line's metric names are derived from these (see ._registry).
# --------------------------------------------------------------------------- #
from ._registry import Metric, register  # noqa: E402

register(
    Metric(
        "distribution_calibration_error",
        "dist_ce",
        distribution_calibration_error,
        greater_is_better=False,
        description="DistCE: mean total variation ½‖q − p̂‖₁",
        source="Baan et al. 2022, eq. 7",
        proper=False,  # an L1 loss to p̂: best at a q sharper than q*
        per_item=lambda b: _tvd_per_item(b.p_hat, b.P),
        order=60,
        bounds=(0.0, 1.0),
    )
)
register(
    Metric(
        "entropy_calibration_error",
        "ent_ce",
        entropy_calibration_error,
        greater_is_better=False,
        description="EntCE: mean |H(q) − H(p̂)| (nats)",
        source="Baan et al. 2022, eq. 5",
        proper=False,  # only H(q) counts: a permutation of q* ties with it
        per_item=_block_entropy_error,
        order=50,
        bounds=(0.0, None),
    )
)
register(
    Metric(
        "entropy_calibration_error_signed",
        "ent_ce_signed",
        entropy_calibration_error,
        greater_is_better=False,
        description="signed EntCE: mean H(q) − H(p̂), > 0 under-confident",
        source="Baan et al. 2022, eq. 5",
        proper=None,  # a signed error, not a loss
        per_item=_block_entropy_error,
        kwargs={"absolute": False},
        scorer=False,  # a signed error has no better side
    )
)
register(
    Metric(
        "ranking_calibration_score",
        "rank_cs",
        ranking_calibration_score,
        greater_is_better=True,
        description="RankCS: fraction of items whose class ranking matches",
        source="Baan et al. 2022, eq. 6",
        proper=False,  # only the ranking of the classes counts
        per_item=_block_rank_match,
        order=40,
        bounds=(0.0, 1.0),
    )
)
register(
    Metric(
        "jensen_shannon_distance",
        "jsd",
        jensen_shannon_distance,
        greater_is_better=False,
        description="mean Jensen-Shannon distance (natural log)",
        source="Nie et al. 2020 (ChaosNLI), eq. 2",
        # not linear in p̂ (no Bregman divergence): with noisy p̂ its
        # expectation prefers a q sharper than q*
        proper=False,
        per_item=lambda b, squared, base: _block_jsd(b, base, squared),
        order=70,
        bounds=(0.0, None),
    )
)
register(
    Metric(
        "kl_divergence",
        "kl",
        kl_divergence,
        greater_is_better=False,
        description="mean KL(p̂ ‖ q), q floored at eps",
        source="Nie et al. 2020 (ChaosNLI), eq. 1",
        # KL(p̂ ‖ q) = const − Σ p̂ log q: the log score, linear in p̂,
        # so its expectation is best exactly at q = q*
        proper=True,
        per_item=lambda b, eps: _block_kl(b, eps),
        order=80,
        bounds=(0.0, None),
    )
)
register(
    Metric(
        "histogram_log_loss",
        "log_loss",
        histogram_log_loss,
        greater_is_better=False,
        description="negative log-likelihood per annotation",
        source="Mimori et al. 2021, eq. 82",
        # the log score per annotation: strictly proper
        proper=True,
        per_item=_block_log_loss,
        order=90,
        bounds=(0.0, None),
    )
)
