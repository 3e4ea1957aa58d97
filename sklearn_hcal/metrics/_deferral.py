"""Deferral to people by predicted disagreement: risk–coverage metrics.

A model keeps the items it is most sure of and defers the rest to a person.
A *deferral score* ranks the items (higher: defer first); keeping the
fraction ``c`` of items with the lowest scores gives one point
``(c, selective risk)`` of the risk–coverage curve (El-Yaniv and Wiener
2010; Geifman, Uziel and El-Yaniv 2019, "Bias-reduced uncertainty
estimation for deep neural classifiers", ICLR, for the AURC). The risk of
an item is measured against its human label distribution ``p̂_i``:

* ``risk="disagreement"``: ``1 − p̂_i[ŷ_i]``, the probability that a random
  annotator disagrees with the model's label ``ŷ_i = argmax_k q_ik``;
* ``risk="kl"``: ``KL(p̂_i ‖ q_i)`` (ChaosNLI eq. 1).

Deferral scores (:func:`deferral_score`): ``1 − max_k q_k`` (confidence),
the entropy of ``q``, a predicted disagreement probability ``φ(x)`` such as
:meth:`~sklearn_hcal.AlphaCalibrator.predict_disagreement` (Mimori et al.
2021, §5.3; pass it as ``y_score``), and two oracles from the histograms.

Ties in the deferral score are broken at random *in expectation*: the
selective risk at ``k`` kept items is its expected value over the orders of
the tied items, so the metrics do not depend on the input order.

Like the set metrics these are plain functions with their own scorers
(:func:`make_deferral_scorer`), not registry entries: they need two
predictions of the model (its probabilities and a deferral score), while a
registry metric compares the human labels with one.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from .._validation import check_probabilities, match_rows
from ..utils._compat import Interval, StrOptions, validate_params
from ..utils._docstrings import fill_doc
from ..utils._pipeline import disagreement_method
from ._constraints import ARRAY, COUNTS_AND_LABELS, OPTIONAL_ARRAY, PAIR
from ._distribution_kernels import kl_per_item, validate_pair
from ._scorer_objects import HumanScorer, func_name

__all__ = [
    "aurc_loss",
    "deferral_score",
    "make_deferral_scorer",
    "risk_at_coverage_loss",
    "risk_coverage_curve",
]

_RISKS = {"disagreement", "kl"}
_RISK = [StrOptions(_RISKS)]
_COMMON = {**PAIR, "y_score": OPTIONAL_ARRAY, "risk": _RISK}


def _human_and_model(y_true, y_prob, counts, labels):
    """``(p̂, q)`` as dense float64 arrays in one class order."""
    pair = validate_pair(y_true, y_prob, counts, labels=labels)
    parts = pair.map_blocks(lambda b: (b.p_hat, b.P))
    p_hat = np.concatenate([p for p, _ in parts])
    P = np.concatenate([q for _, q in parts])
    return p_hat, P


def _item_risk(p_hat, P, risk: str) -> np.ndarray:
    if risk == "disagreement":
        return 1.0 - p_hat[np.arange(P.shape[0]), P.argmax(axis=1)]
    return kl_per_item(p_hat, P)


def _confidence(P) -> np.ndarray:
    """``1 − max_k q_k`` of validated probabilities, in float64.

    The one computation of the default deferral score: ``deferral_score``
    and the metrics' ``y_score=None`` must give the same floats, or ties
    split differently (a second renormalisation moved rounded rows by one
    ulp: AURC 0.028458 against 0.028452).
    """
    return 1.0 - np.asarray(P, dtype=np.float64).max(axis=1)


def _entropy(P) -> np.ndarray:
    logs = np.log(P, where=P > 0, out=np.zeros_like(P))
    return -np.sum(P * logs, axis=1)


def _check_score(y_score, n: int) -> np.ndarray:
    raw = np.asarray(y_score)
    try:
        # text is not a score, not even "0.3" (numpy would parse it)
        if raw.dtype.kind in "USV" or (
            raw.dtype.kind == "O" and _TEXT(raw).astype(bool).any()
        ):
            raise ValueError
        s = raw.astype(np.float64)
    except (TypeError, ValueError):
        values = raw.astype(object).ravel()
        bad = next((v for v in values if not _is_number(v, raw.dtype)), None)
        raise ValueError(
            "y_score must hold numbers, one deferral score per item; got "
            f"{bad!r} (dtype {raw.dtype})."
        ) from None
    if s.ndim == 2 and s.shape[1] == 1:
        s = s.ravel()
    if s.ndim != 1 or s.shape[0] != n:
        raise ValueError(
            f"y_score must be a 1-D array with one deferral score per item "
            f"({n}), got shape {s.shape}."
        )
    if not np.all(np.isfinite(s)):
        row = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"y_score must be finite; item {row} is {s[row]}.")
    return s


_TEXT = np.frompyfunc(lambda v: isinstance(v, (str, bytes)), 1, 1)


def _is_number(value, dtype) -> bool:
    if dtype.kind in "USV" or isinstance(value, (str, bytes)):
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _selective_risks(risks, scores):
    """Expected selective risk for ``k = 1 … n`` kept items, and the tie groups.

    Returns ``(R, ends, sorted_scores)``: ``R[k-1]`` is the mean risk of the
    ``k`` lowest-scored items, each tie group's risks replaced by their mean
    (the expectation over random orders of the tied items); ``ends`` are
    the numbers of kept items at the distinct scores.
    """
    order = np.argsort(scores, kind="stable")
    s, r = scores[order], risks[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    sizes = np.diff(np.r_[starts, s.size])
    means = np.add.reduceat(r, starts) / sizes
    r = np.repeat(means, sizes)
    R = np.cumsum(r) / np.arange(1, r.size + 1)
    return R, starts + sizes, s[starts]


def _risks_and_scores(y_true, y_prob, y_score, risk, counts, labels):
    p_hat, P = _human_and_model(y_true, y_prob, counts, labels)
    risks = _item_risk(p_hat, P, risk)
    if y_score is None:
        scores = _confidence(P)
    else:
        y_score = match_rows(y_true, y_score, name="y_score", counts=counts)
        scores = _check_score(y_score, P.shape[0])
    return risks, scores


@validate_params(
    {
        "y_prob": ARRAY,
        "method": [
            StrOptions({"confidence", "entropy", "oracle", "human_disagreement"})
        ],
        "y_true": OPTIONAL_ARRAY,
        "risk": _RISK,
        **COUNTS_AND_LABELS,
    },
    prefer_skip_nested_validation=True,
)
@fill_doc
def deferral_score(
    y_prob,
    *,
    method: str = "confidence",
    y_true=None,
    risk: str = "disagreement",
    counts=None,
    labels=None,
) -> np.ndarray:
    """Per-item deferral scores (higher: defer first).

    Parameters
    ----------
    %(y_prob)s
    method : {"confidence", "entropy", "oracle", "human_disagreement"}, \
            default="confidence"
        ``"confidence"``: ``1 − max_k q_k``; ``"entropy"``: ``H(q)`` (nats);
        ``"oracle"``: the item's own risk (``risk=``) from its histogram --
        the best possible ranking, a lower bound of the AURC;
        ``"human_disagreement"``: ``1 − Σ_k p̂_k²``, the observed human
        disagreement that a predicted ``φ(x)`` estimates. The oracles need
        ``y_true``. For an α-calibrated ``φ`` use
        ``AlphaCalibrator.predict_disagreement(X)`` directly.
    y_true : array-like, default=None
        Label histograms (for the oracles).
    risk : {"disagreement", "kl"}, default="disagreement"
        The risk of ``method="oracle"``.
    counts, labels
        As in the other metrics (``counts`` replaces ``y_true``; ``labels``
        names ``y_prob``'s columns).

    Returns
    -------
    scores : ndarray of shape (n_samples,)

    Examples
    --------
    >>> from sklearn_hcal.metrics import deferral_score
    >>> deferral_score([[0.9, 0.1], [0.6, 0.4]]).round(2).tolist()
    [0.1, 0.4]
    >>> deferral_score([[0.9, 0.1]], method="oracle", y_true=[[1, 3]]).tolist()
    [0.75]
    """
    if method in ("confidence", "entropy"):
        # check_probabilities renormalises the rows that need it, exactly as
        # the metrics' validation does: no second division
        P = np.asarray(check_probabilities(y_prob), dtype=np.float64)
        return _confidence(P) if method == "confidence" else _entropy(P)
    if y_true is None and counts is None:
        raise ValueError(f"deferral_score(method={method!r}) needs y_true.")
    p_hat, P = _human_and_model(y_true, y_prob, counts, labels)
    if method == "oracle":
        return _item_risk(p_hat, P, risk)
    return 1.0 - np.sum(p_hat**2, axis=1)


@validate_params(_COMMON, prefer_skip_nested_validation=True)
@fill_doc
def risk_coverage_curve(
    y_true,
    y_prob,
    *,
    y_score=None,
    risk: str = "disagreement",
    counts=None,
    labels=None,
):
    """Selective risk against the fraction of items kept (not deferred).

    Items are kept in increasing order of ``y_score``; one point per
    distinct score, keeping every item scored at most that value.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(y_score)s
    risk : {"disagreement", "kl"}, default="disagreement"
        Per-item risk against the human distribution (see the module notes).
    %(counts)s
    %(labels)s

    Returns
    -------
    coverage : ndarray of shape (n_thresholds,)
        Fraction of items kept, increasing, ending at 1.
    selective_risk : ndarray of shape (n_thresholds,)
        Mean risk of the kept items.
    thresholds : ndarray of shape (n_thresholds,)
        The deferral score up to which items are kept.

    Examples
    --------
    >>> from sklearn_hcal.metrics import risk_coverage_curve
    >>> Y = [[4, 0], [2, 2], [0, 4]]
    >>> P = [[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]]
    >>> cov, r, t = risk_coverage_curve(Y, P)
    >>> cov.round(2).tolist(), r.round(3).tolist()
    ([0.33, 0.67, 1.0], [0.0, 0.0, 0.167])
    """
    risks, scores = _risks_and_scores(y_true, y_prob, y_score, risk, counts, labels)
    R, ends, thresholds = _selective_risks(risks, scores)
    return ends / risks.size, R[ends - 1], thresholds


@validate_params(_COMMON, prefer_skip_nested_validation=True)
@fill_doc
def aurc_loss(
    y_true,
    y_prob,
    *,
    y_score=None,
    risk: str = "disagreement",
    counts=None,
    labels=None,
) -> float:
    """Area under the risk–coverage curve (AURC; lower is better).

    ``AURC = (1/n) Σ_{k=1}^{n} R_k`` with ``R_k`` the mean risk of the ``k``
    items with the lowest deferral scores (Geifman et al. 2019), ties
    broken at random in expectation. With ``method="oracle"`` scores
    (:func:`deferral_score`) it is the best AURC any deferral score can
    reach for the model's labels.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(y_score)s
    %(risk)s
    %(counts)s
    %(labels)s

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import aurc_loss
    >>> Y = [[4, 0], [2, 2], [0, 4]]
    >>> P = [[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]]
    >>> round(aurc_loss(Y, P), 4)  # (0 + 0 + 0.5/3) / 3
    0.0556
    """
    risks, scores = _risks_and_scores(y_true, y_prob, y_score, risk, counts, labels)
    R, _, _ = _selective_risks(risks, scores)
    return float(R.mean())


@validate_params(
    {**_COMMON, "coverage": [Interval(Real, 0, 1, closed="right")]},
    prefer_skip_nested_validation=True,
)
@fill_doc
def risk_at_coverage_loss(
    y_true,
    y_prob,
    *,
    y_score=None,
    coverage: float = 0.8,
    risk: str = "disagreement",
    counts=None,
    labels=None,
) -> float:
    """Selective risk when the model keeps a fraction ``coverage`` of items.

    The mean risk of the ``⌈coverage · n⌉`` items with the lowest deferral
    scores (at least one), ties broken at random in expectation. Lower is
    better.

    Parameters
    ----------
    %(y_true)s
    %(y_prob)s
    %(y_score)s
    coverage : float, default=0.8
        Fraction of items the model keeps, in (0, 1].
    %(risk)s
    %(counts)s
    %(labels)s

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_hcal.metrics import risk_at_coverage_loss
    >>> Y = [[4, 0], [2, 2], [0, 4], [1, 3]]
    >>> P = [[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.3, 0.7]]
    >>> float(risk_at_coverage_loss(Y, P, coverage=0.5))  # items 0 and 2
    0.0
    """
    risks, scores = _risks_and_scores(y_true, y_prob, y_score, risk, counts, labels)
    R, _, _ = _selective_risks(risks, scores)
    # the tolerance keeps 0.8 * 10 at 8 items whatever its rounding
    k = max(1, int(np.ceil(coverage * risks.size - 1e-9)))
    return float(R[k - 1])


_DEFERRAL_METRICS = {
    "aurc_loss": aurc_loss,
    "risk_at_coverage_loss": risk_at_coverage_loss,
}


class _DeferralScorer(HumanScorer):
    """Scorer of a deferral policy: ``predict_proba`` plus a deferral score."""

    def __init__(self, score_func, sign, kwargs, deferral):
        super().__init__(score_func, sign, kwargs, "predict_proba")
        self._deferral = deferral

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        self._warn_overlap(
            message=(
                "There is an overlap between set kwargs of this scorer instance "
                "and passed metadata. Please pass them either as kwargs to "
                "`make_deferral_scorer` or metadata, but not both."
            ),
            kwargs=kwargs,
        )
        P = method_caller(estimator, "predict_proba", X, pos_label=None)
        scoring_kwargs = {**self._kwargs, **kwargs}
        classes = getattr(estimator, "classes_", None)
        if classes is not None and "labels" not in scoring_kwargs:
            scoring_kwargs["labels"] = np.asarray(classes)
        if self._deferral == "disagreement":
            label = type(estimator).__name__
            method = disagreement_method(
                estimator, label=label, user="the deferral scorer"
            )
            if method is None:
                raise ValueError(
                    f"{label} has no predict_disagreement (neither itself nor the "
                    "final step of a Pipeline); use deferral='confidence' or "
                    "'entropy', or an AlphaCalibrator."
                )
            y_score = np.asarray(method(X), dtype=np.float64)
        else:
            y_score = deferral_score(P, method=self._deferral)
        scoring_kwargs["y_score"] = y_score
        return self._sign * self._score_func(y_true, P, **scoring_kwargs)

    def __repr__(self):
        kwargs = "".join(f", {k}={v!r}" for k, v in self._kwargs.items())
        return (
            f"make_deferral_scorer({func_name(self._score_func)}, "
            f"deferral={self._deferral!r}{kwargs})"
        )


@validate_params(
    {
        "metric": [StrOptions(set(_DEFERRAL_METRICS))],
        "deferral": [StrOptions({"confidence", "entropy", "disagreement"})],
    },
    prefer_skip_nested_validation=True,
)
def make_deferral_scorer(metric="aurc_loss", *, deferral="confidence", **kwargs):
    """A scikit-learn scorer of a deferral policy (negated: greater is better).

    Parameters
    ----------
    metric : {"aurc_loss", "risk_at_coverage_loss"}, default="aurc_loss"
        The metric.
    deferral : {"confidence", "entropy", "disagreement"}, default="confidence"
        Where the deferral score comes from: ``1 − max_k q_k`` or the entropy
        of ``predict_proba``, or the estimator's ``predict_disagreement``
        (e.g. an :class:`~sklearn_hcal.AlphaCalibrator`, also as the final
        step of a Pipeline).
    **kwargs
        Fixed keyword arguments of the metric (``risk=``, ``coverage=``).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, **metadata)`` returning ``−metric``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_hcal.metrics import aurc_loss, make_deferral_scorer
    >>> X = np.array([[-2.0], [-1.0], [0.0], [1.0], [2.0], [3.0]])
    >>> Y = np.array([[5, 0], [4, 1], [3, 2], [2, 3], [1, 4], [0, 5]])
    >>> clf = LogisticRegression().fit(X, Y.argmax(axis=1))
    >>> scorer = make_deferral_scorer("aurc_loss")
    >>> bool(np.isclose(scorer(clf, X, Y), -aurc_loss(Y, clf.predict_proba(X))))
    True
    """
    return _DeferralScorer(_DEFERRAL_METRICS[metric], -1, kwargs, deferral)
