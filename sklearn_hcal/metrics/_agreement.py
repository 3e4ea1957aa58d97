"""Agreement coefficients: how much the annotators agree with each other.

Every data set of human labels reports them; this library holds the data
they need (label histograms, long tables of annotations), so they are
computed here from either layout, vectorised over items:

* :func:`krippendorff_alpha` -- Krippendorff's α (2011, "Computing
  Krippendorff's alpha-reliability"; 2004, *Content Analysis*, ch. 11) at
  the nominal, ordinal, interval and ratio levels, from the coincidence
  matrix (:mod:`._agreement_kernels`); any number of annotators per item,
  items with fewer than two annotations left out; one α per label for
  multi-label data; a bootstrap interval over items;
* :func:`fleiss_kappa` -- Fleiss' κ (1971) for equal panels;
* :func:`pairwise_cohen_kappa` -- Cohen's κ (1960; weighted, 1968) of every
  pair of annotators on the items both labelled;
* :func:`item_agreement` -- per item: annotations, observed agreement,
  entropy;
* :func:`annotator_agreement` -- per annotator: α without the annotator
  and agreement with the leave-one-out majority, with a model scored as one
  more annotator; :func:`model_agreement` sets the model against the
  distribution of the annotators' values.

The design (two layouts, no reliability matrix, the interval on the
report's resamples) is developer guide §agreement.
"""

from __future__ import annotations

from collections.abc import Hashable
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..utils._compat import Interval, StrOptions, validate_params
from ..utils._threads import one_blas_thread
from . import _bootstrap
from ._agreement_input import Ratings, read_ratings
from ._agreement_kernels import (
    LEVELS,
    alpha_from_coincidences,
    annotator_coincidences,
    coincidences,
    distances,
    fleiss_from_counts,
    item_coincidences,
    loo_majority_agreement,
    pairwise_kappa,
)
from ._constraints import OPTIONAL_ARRAY

__all__ = [
    "AlphaInterval",
    "annotator_agreement",
    "fleiss_kappa",
    "item_agreement",
    "krippendorff_alpha",
    "model_agreement",
    "pairwise_cohen_kappa",
]

_KEYS = {
    "item": [Hashable, None],
    "annotator": [Hashable, None],
    "label": [Hashable, None],
}
_LONG_KEYS = {"item": [Hashable], "annotator": [Hashable], "label": [Hashable]}
_LEVEL = [StrOptions(set(LEVELS))]
_BOOTSTRAP = {
    "n_bootstrap": [Interval(Integral, 0, None, closed="left")],
    "confidence_level": [Interval(Real, 0, 1, closed="neither")],
    "ci_method": [StrOptions({"percentile", "basic", "bias_corrected"})],
    "random_state": ["random_state"],
}


class AlphaInterval(NamedTuple):
    """α and the ends of its bootstrap interval."""

    alpha: float
    low: float
    high: float


# --------------------------------------------------------------------------- #
# Krippendorff's alpha
# --------------------------------------------------------------------------- #
def _pairable(ratings: Ratings, owner: str, what: str = "") -> np.ndarray:
    """The counts of the items with two annotations or more; raise if none,
    or if they hold one value only (α is 0/0)."""
    Y = ratings.Y
    m = Y.sum(axis=1)
    keep = m >= 2
    if not keep.any():
        raise ValueError(
            f"{owner}: no item{what} has two annotations or more (the most is "
            f"{int(m.max()) if m.size else 0}); agreement needs pairs of "
            "annotations of one item."
        )
    Y = Y[keep]
    used = Y.sum(axis=0) > 0
    if used.sum() < 2:
        value = ratings.classes[np.flatnonzero(used)[0]]
        raise ValueError(
            f"{owner}: every annotation{what} of the items with two or more "
            f"annotations is {_plain(value)!r}: with a single value there is no "
            "disagreement to expect, and α (1 − D_o/D_e) is 0/0."
        )
    return Y


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _alpha_replicates(Y, values, level, n_bootstrap, random_state) -> np.ndarray:
    """α of ``n_bootstrap`` resamples of the items (rows of ``Y``).

    α is a function of sums over items, so a resample's α is read off the
    items' contributions weighted by their multiplicities, drawn by the
    report's bootstrap (:mod:`._bootstrap`: one ``SeedSequence`` stream per
    chunk of resamples, the same replicates for any chunking): ``o``'s
    entries for the ordinal level (its distance depends on the resample's
    totals), else each item's observed disagreement and counts.
    """
    N, K = Y.shape
    if level == "ordinal":
        features = item_coincidences(Y).reshape(N, K * K)
    else:
        d = distances(values, level, None)
        g = 1.0 / (Y.sum(axis=1) - 1.0)
        observed = ((Y @ d) * Y).sum(axis=1) * g
        features = np.column_stack([observed, Y])
    sizes = _bootstrap._chunk_sizes(N, n_bootstrap)
    seeds = _bootstrap.seed_sequence(random_state).spawn(len(sizes))
    sums = []
    for seed, size in zip(seeds, sizes):
        Wt = _bootstrap._chunk_weights(seed, N, size)  # (N, size) float32
        sums.append(features.T @ Wt.astype(np.float64))
    sums = np.concatenate(sums, axis=1).T  # (n_bootstrap, n_features)
    if level == "ordinal":
        return alpha_from_coincidences(sums.reshape(-1, K, K), values, level)
    observed, n_v = sums[:, 0], sums[:, 1:]
    n = n_v.sum(axis=1)
    expected = np.einsum("bc,ck,bk->b", n_v, d, n_v)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    return np.where(expected > 0, alpha, np.nan)


def _alpha(ratings, level, owner, boot, what=""):
    # The products are (K × N) @ (N × k): a long inner dimension that two
    # BLAS threads share badly on a busy machine (6.5 s instead of 0.08 s
    # for 100 resamples of 200,000 items; developer guide §speed).
    with one_blas_thread():
        return _alpha_on_one_thread(ratings, level, owner, boot, what)


def _alpha_on_one_thread(ratings, level, owner, boot, what):
    Y = _pairable(ratings, owner, what)
    alpha = float(alpha_from_coincidences(coincidences(Y), ratings.values, level))
    if not boot["n_bootstrap"]:
        return alpha
    replicates = _alpha_replicates(
        Y, ratings.values, level, boot["n_bootstrap"], boot["random_state"]
    )
    low, high = _bootstrap.bootstrap_intervals(
        alpha, replicates, boot["confidence_level"], boot["ci_method"]
    )
    return AlphaInterval(alpha, float(low), float(high))


_ALPHA_PARAMS = {
    "y": ["array-like"],
    "level": _LEVEL,
    "labels": OPTIONAL_ARRAY,
    **_KEYS,
    **_BOOTSTRAP,
}


@validate_params(_ALPHA_PARAMS, prefer_skip_nested_validation=True)
def krippendorff_alpha(
    y: ArrayLike,
    *,
    level: str = "nominal",
    labels: ArrayLike | None = None,
    item: Hashable | None = "item",
    annotator: Hashable | None = "annotator",
    label: Hashable | None = "label",
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    ci_method: str = "percentile",
    random_state=None,
):
    """Krippendorff's α: agreement among any number of annotators.

    ``α = 1 − D_o / D_e``: one minus the ratio of the disagreement observed
    between the annotations of the same item to the disagreement expected
    between annotations paired by chance (Krippendorff 2011, "Computing
    Krippendorff's alpha-reliability", §C-E; 2004, *Content Analysis*,
    §11.3). Both are read off the coincidence matrix
    ``o = Σ_u (Y_u Y_uᵀ − diag Y_u) / (m_u − 1)`` of the per-item counts
    ``Y_u`` (``m_u`` annotations): ``α = 1 − (n − 1) Σ o_ck δ²_ck /
    Σ n_c n_k δ²_ck``, with ``n_c`` the pairable values' totals and ``δ²``
    the level's distance. Items with fewer than two annotations cannot be
    paired and are left out, as Krippendorff defines it. α is 1 for perfect
    agreement, 0 when the annotations agree as if paired at random, and
    negative for systematic disagreement.

    Parameters
    ----------
    y : array-like or DataFrame
        Either a **counts table** of shape (n_items, n_classes) -- how many
        annotators gave each class to each item; a DataFrame's columns are
        the classes --, or a **long table**: a DataFrame with one row per
        (item, annotator) and the ``item`` and ``label`` columns (the layout
        of ``load_lewidi(...).frame`` and of the aggregators). A label that
        is a tuple is a label set: multi-label data get one α per label
        (present or absent).
    level : {"nominal", "ordinal", "interval", "ratio"}, default="nominal"
        The level of measurement, i.e. the distance ``δ²(c, k)``: ``c ≠ k``;
        the squared number of values between ``c`` and ``k`` (ranks, the
        values' totals ``n_g``: ``(Σ_{g=c}^{k} n_g − (n_c + n_k)/2)²``);
        ``(c − k)²``; ``((c − k)/(c + k))²``. Numeric class names are their
        values (sorted); other names need ``labels=`` in scale order for the
        ordinal level (a counts DataFrame's column order is taken as given)
        and are refused at the interval and ratio levels.
    labels : array-like of shape (n_classes,), default=None
        The classes: of each column of a counts table (matched by name with
        a DataFrame's columns), or of a long table's labels (a label outside
        them raises; a class nobody chose still counts for the ordinal
        distance). Its order is the scale's for non-numeric classes.
    item, annotator, label : hashable, default="item", "annotator", "label"
        The long table's columns (``annotator`` may be None: α needs only
        each item's labels; when given, an annotator labelling an item twice
        is refused).
    n_bootstrap : int, default=0
        Bootstrap resamples of the items for an interval (0: none). α is a
        ratio of sums over items, so each resample is the items' terms
        weighted by their multiplicities, drawn as the report's bootstrap
        draws them.
    confidence_level : float, default=0.95
        Coverage of the interval.
    ci_method : {"percentile", "basic", "bias_corrected"}, \
default="percentile"
        How the replicates become the interval, as in
        :func:`human_calibration_report`.
    random_state : int, RandomState or Generator instance, or None, \
default=None
        Seeds the resamples.

    Returns
    -------
    alpha : float, AlphaInterval or Series
        α; with ``n_bootstrap`` an ``AlphaInterval(alpha, low, high)``; for
        multi-label data a Series of α by label name (a DataFrame with
        columns ``alpha``, ``low``, ``high`` with ``n_bootstrap``).

    See Also
    --------
    fleiss_kappa : Fleiss' κ, for panels of equal size.
    annotator_agreement : α without each annotator.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
    Annenberg School for Communication, University of Pennsylvania.

    Examples
    --------
    Krippendorff's (2011, §A) example: 4 coders, 12 units, missing values.

    >>> import numpy as np, pandas as pd
    >>> from sklearn_hcal.metrics import krippendorff_alpha
    >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    ...         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    ...         [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    ...         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
    >>> long = (pd.DataFrame(data).rename_axis("annotator").reset_index()
    ...         .melt(id_vars="annotator", var_name="item", value_name="label")
    ...         .dropna())  # one row per annotation
    >>> round(krippendorff_alpha(long), 3)
    0.743
    >>> round(krippendorff_alpha(long, level="interval"), 3)
    0.849
    >>> counts = pd.crosstab(long["item"], long["label"])  # the same items
    >>> round(krippendorff_alpha(counts, level="ordinal"), 3)
    0.815
    >>> krippendorff_alpha(counts, n_bootstrap=200, random_state=0).low < 0.743
    True
    """
    owner = "krippendorff_alpha"
    boot = {
        "n_bootstrap": n_bootstrap,
        "confidence_level": confidence_level,
        "ci_method": ci_method,
        "random_state": random_state,
    }
    keys = {"item": item, "annotator": annotator, "label": label}
    sets = read_ratings(
        y, labels=labels, level=level, owner=owner, label_sets=True, **keys
    )
    if isinstance(sets, Ratings):
        return _alpha(sets, level, owner, boot)
    values = {
        name: _alpha(r, "nominal", owner, boot, what=f" of label {name!r}")
        for name, r in sets.items()
    }
    if not n_bootstrap:
        return pd.Series(values, name="alpha", dtype=np.float64).rename_axis("label")
    frame = pd.DataFrame.from_dict(
        {k: v._asdict() for k, v in values.items()}, orient="index"
    )
    return frame.rename_axis("label")


# --------------------------------------------------------------------------- #
# Fleiss' kappa
# --------------------------------------------------------------------------- #
@validate_params(
    {
        "counts": ["array-like"],
        "labels": OPTIONAL_ARRAY,
        "method": [StrOptions({"fleiss", "randolph"})],
    },
    prefer_skip_nested_validation=True,
)
def fleiss_kappa(
    counts: ArrayLike, *, labels: ArrayLike | None = None, method: str = "fleiss"
) -> float:
    """Fleiss' κ: agreement of a fixed number of annotators per item.

    ``κ = (P̄ − P̄_e) / (1 − P̄_e)`` (Fleiss 1971, eqs. 2-9): ``P̄`` the mean
    over items of the share of agreeing pairs among an item's ``m(m − 1)``
    ordered pairs, ``P̄_e = Σ_k p_k²`` the agreement of two annotations
    drawn from the pooled class shares ``p_k``. Every item must have the
    same number ``m ≥ 2`` of annotations; for anything else use
    :func:`krippendorff_alpha`, which is defined for any panel.

    Parameters
    ----------
    counts : array-like or DataFrame of shape (n_items, n_classes)
        How many annotators gave each class to each item.
    labels : array-like of shape (n_classes,), default=None
        The class of each column (matched by name with a DataFrame's).
    method : {"fleiss", "randolph"}, default="fleiss"
        ``"randolph"``: Randolph's (2005) free-marginal κ, ``P̄_e = 1/K``.

    Returns
    -------
    kappa : float
        NaN when every annotation is of one class (``P̄_e = 1``).

    Examples
    --------
    >>> from sklearn_hcal.metrics import fleiss_kappa
    >>> round(fleiss_kappa([[3, 0], [0, 3], [2, 1], [3, 0]]), 4)
    0.625
    >>> fleiss_kappa([[3, 0], [0, 2]])
    Traceback (most recent call last):
    ...
    ValueError: fleiss_kappa: Fleiss' κ needs the same number of annotations \
for every item; row 0 has 3 and row 1 has 2 (1 row(s) differ from row 0). \
Use krippendorff_alpha, defined for any number of annotators per item.
    """
    owner = "fleiss_kappa"
    ratings = read_ratings(
        counts,
        labels=labels,
        level="nominal",
        owner=owner,
        item=None,
        annotator=None,
        label=None,
    )
    Y = ratings.Y
    m = Y.sum(axis=1)
    differ = np.flatnonzero(m != m[0])
    if differ.size:
        row = int(differ[0])
        raise ValueError(
            f"{owner}: Fleiss' κ needs the same number of annotations for every "
            f"item; row 0 has {int(m[0])} and row {row} has {int(m[row])} "
            f"({differ.size} row(s) differ from row 0). Use krippendorff_alpha, "
            "defined for any number of annotators per item."
        )
    if m[0] < 2:
        raise ValueError(
            f"{owner}: every item has {int(m[0])} annotation(s); agreement needs "
            "two or more per item."
        )
    return fleiss_from_counts(Y, method)


# --------------------------------------------------------------------------- #
# Per item, per pair, per annotator
# --------------------------------------------------------------------------- #
@validate_params(
    {"y": ["array-like"], "labels": OPTIONAL_ARRAY, "base": [Real, None], **_KEYS},
    prefer_skip_nested_validation=True,
)
def item_agreement(
    y: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    item: Hashable | None = "item",
    annotator: Hashable | None = "annotator",
    label: Hashable | None = "label",
    base: float | None = None,
) -> pd.DataFrame:
    """Per-item agreement: annotations, observed agreement and entropy.

    Here disagreement is information about the item (an ambiguous sentence,
    a borderline image), not noise to average away: this table says which
    items people disagree on. ``observed_agreement`` is the share of
    agreeing pairs among the item's annotations, ``Σ_k n_k (n_k − 1) /
    (m (m − 1))`` (Fleiss' ``P_i``; NaN with a single annotation);
    ``entropy`` that of the label distribution ``n_k / m``.

    Parameters
    ----------
    y : array-like or DataFrame
        A counts table or a long table, as for :func:`krippendorff_alpha`.
    labels : array-like of shape (n_classes,), default=None
        The classes (see :func:`krippendorff_alpha`).
    item, annotator, label : hashable, default="item", "annotator", "label"
        The long table's columns.
    base : float, default=None
        Base of the entropy's logarithm (None: natural).

    Returns
    -------
    table : DataFrame of shape (n_items, 3)
        Columns ``n_annotations``, ``observed_agreement``, ``entropy``;
        indexed by item (a long table's sorted ids, a DataFrame's index).

    Examples
    --------
    >>> from sklearn_hcal.metrics import item_agreement
    >>> item_agreement([[3, 0], [2, 1], [1, 0]], base=2).round(3)
       n_annotations  observed_agreement  entropy
    0              3               1.000    0.000
    1              3               0.333    0.918
    2              1                 NaN    0.000
    """
    ratings = read_ratings(
        y,
        labels=labels,
        level="nominal",
        owner="item_agreement",
        item=item,
        annotator=annotator,
        label=label,
    )
    Y = ratings.Y
    m = Y.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        agree = (Y * (Y - 1.0)).sum(axis=1) / (m * (m - 1.0))
        p = Y / m[:, None]
        logs = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)
    entropy = -(p * logs).sum(axis=1)
    if base is not None:
        entropy = entropy / np.log(base)
    table = pd.DataFrame(
        {
            "n_annotations": m.astype(np.int64),
            "observed_agreement": np.where(m >= 2, agree, np.nan),
            "entropy": entropy + 0.0,
        },
        index=ratings.items,
    )
    return table


_KAPPA_WEIGHTS = {None: "nominal", "linear": "linear", "quadratic": "quadratic"}


@validate_params(
    {
        "X": [pd.DataFrame],
        "labels": OPTIONAL_ARRAY,
        "weights": [StrOptions({"linear", "quadratic"}), None],
        "min_items": [Interval(Integral, 1, None, closed="left")],
        **_LONG_KEYS,
    },
    prefer_skip_nested_validation=True,
)
def pairwise_cohen_kappa(
    X: pd.DataFrame,
    *,
    labels: ArrayLike | None = None,
    weights: str | None = None,
    min_items: int = 2,
    item: Hashable = "item",
    annotator: Hashable = "annotator",
    label: Hashable = "label",
) -> pd.DataFrame:
    """Cohen's κ of every pair of annotators, on the items both labelled.

    ``κ = 1 − Σ w_kl O_kl / Σ w_kl E_kl`` (Cohen 1960; weighted, Cohen 1968)
    with ``O`` the pair's confusion matrix on their common items and ``E``
    the product of its margins: scikit-learn's
    :func:`~sklearn.metrics.cohen_kappa_score` of each pair, all pairs at
    once (each pair's confusion matrix is a block of one sparse product).

    Parameters
    ----------
    X : DataFrame
        A long table, one row per (item, annotator).
    labels : array-like of shape (n_classes,), default=None
        The classes, in scale order for weighted κ (numeric labels are
        sorted by value).
    weights : {"linear", "quadratic"} or None, default=None
        Disagreement weights ``|k − l|`` or ``(k − l)²`` between the
        positions of the classes in scale order; None: unweighted.
    min_items : int, default=2
        Pairs sharing fewer items get NaN.
    item, annotator, label : hashable, default="item", "annotator", "label"
        The long table's columns.

    Returns
    -------
    kappa : DataFrame of shape (n_annotators, n_annotators)
        Symmetric, indexed by annotator on both axes (sorted ids); NaN for
        pairs with fewer than ``min_items`` common items or a κ of 0/0 (both
        annotators used one and the same class). ``kappa.attrs["n_items"]``
        holds the numbers of common items.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.metrics import pairwise_cohen_kappa
    >>> X = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3, 4, 4],
    ...                   "annotator": ["a", "b"] * 4,
    ...                   "label": ["x", "x", "y", "y", "x", "y", "y", "y"]})
    >>> pairwise_cohen_kappa(X)
    annotator    a    b
    annotator
    a          1.0  0.5
    b          0.5  1.0
    """
    level = "nominal" if weights is None else "ordinal"
    ratings = read_ratings(
        X,
        labels=labels,
        level=level,
        owner="pairwise_cohen_kappa",
        item=item,
        annotator=annotator,
        label=label,
    )
    K = len(ratings.classes)
    positions = np.arange(K, dtype=np.float64)
    diff = np.abs(positions[:, None] - positions[None, :])
    w = {None: 1.0 - np.eye(K), "linear": diff, "quadratic": diff**2}[weights]
    kappa, common = pairwise_kappa(
        ratings.item,
        ratings.annotator,
        ratings.code,
        len(ratings.items),
        len(ratings.annotators),
        w,
    )
    kappa = np.where(common >= min_items, kappa, np.nan)
    index = ratings.annotators.rename(annotator)
    frame = pd.DataFrame(kappa, index=index, columns=index)
    frame.attrs["n_items"] = pd.DataFrame(
        common.astype(np.int64), index=index, columns=index
    )
    return frame


def _annotator_rows(ratings: Ratings, level: str) -> pd.DataFrame:
    """The per-annotator table of one set of :class:`Ratings`."""
    with one_blas_thread():  # the products of _alpha's note
        return _annotator_rows_on_one_thread(ratings, level)


def _annotator_rows_on_one_thread(ratings: Ratings, level: str) -> pd.DataFrame:
    Y = ratings.Y
    n_annotators = len(ratings.annotators)
    alpha = float(alpha_from_coincidences(coincidences(Y), ratings.values, level))
    added = annotator_coincidences(
        Y, ratings.item, ratings.annotator, ratings.code, n_annotators
    )
    without = alpha_from_coincidences(
        coincidences(Y)[None] - added, ratings.values, level
    )
    agree = loo_majority_agreement(Y, ratings.item, ratings.code)
    counted = ~np.isnan(agree)
    n_rows = np.bincount(ratings.annotator, minlength=n_annotators)
    n_paired = np.bincount(ratings.annotator[counted], minlength=n_annotators)
    total = np.bincount(
        ratings.annotator[counted], weights=agree[counted], minlength=n_annotators
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        majority = total / n_paired
    table = pd.DataFrame(
        {
            "n_annotations": n_rows,
            "n_paired": n_paired,
            "alpha_without": without,
            "alpha_change": alpha - without,
            "majority_agreement": np.where(n_paired > 0, majority, np.nan),
        },
        index=ratings.annotators.rename("annotator"),
    )
    table.attrs["alpha"] = alpha
    return table


def _with_model(ratings: Ratings, y_pred, *, item, model_name, owner) -> Ratings:
    """The annotators' :class:`Ratings` with the model's labels as one more
    annotator's (its last code), without reading the table again."""
    if isinstance(y_pred.index, pd.RangeIndex):
        raise ValueError(
            f"{owner}: y_pred must be indexed by item (the items of X's column "
            f"{item!r}), got a RangeIndex: its rows cannot be matched to items."
        )
    if y_pred.index.duplicated().any():
        dup = _plain(y_pred.index[y_pred.index.duplicated()][0])
        raise ValueError(f"{owner}: y_pred names item {dup!r} twice.")
    position = y_pred.index.get_indexer(ratings.items)
    extra = y_pred.index.difference(ratings.items)
    if (position < 0).any() or len(extra):
        missing = ratings.items[position < 0]
        what = (
            f"lacks the item {_plain(missing[0])!r} ({len(missing)} missing)"
            if len(missing)
            else f"holds the item {_plain(extra[0])!r} not in X ({len(extra)} extra)"
        )
        raise ValueError(f"{owner}: y_pred {what}; it needs one label per item of X.")
    if model_name in ratings.annotators:
        raise ValueError(
            f"{owner}: X already has an annotator named {model_name!r}; pass "
            "another model_name."
        )
    values = y_pred.to_numpy()[position]  # in the order of ratings.items
    code = pd.Index(ratings.classes).get_indexer(values)
    if (code < 0).any():
        first = int(np.flatnonzero(code < 0)[0])
        raise ValueError(
            f"{owner}: y_pred holds {_plain(values[first])!r} for item "
            f"{_plain(ratings.items[first])!r}, not among the classes "
            f"{ratings.classes.tolist()} of the annotations."
        )
    n_items = len(ratings.items)
    Y = ratings.Y.copy()
    Y[np.arange(n_items), code] += 1.0
    annotators = ratings.annotators.append(pd.Index([model_name]))
    return Ratings(
        Y,
        ratings.classes,
        ratings.values,
        ratings.items,
        ratings.table,
        np.concatenate([ratings.item, np.arange(n_items)]),
        np.concatenate([ratings.annotator, np.full(n_items, len(annotators) - 1)]),
        np.concatenate([ratings.code, code]),
        annotators,
    )


_ANNOTATOR_PARAMS = {
    "X": [pd.DataFrame],
    "y_pred": [pd.Series, None],
    "level": _LEVEL,
    "labels": OPTIONAL_ARRAY,
    "model_name": [Hashable],
    **_LONG_KEYS,
}


@validate_params(_ANNOTATOR_PARAMS, prefer_skip_nested_validation=True)
def annotator_agreement(
    X: pd.DataFrame,
    y_pred: pd.Series | None = None,
    *,
    level: str = "nominal",
    labels: ArrayLike | None = None,
    item: Hashable = "item",
    annotator: Hashable = "annotator",
    label: Hashable = "label",
    model_name: Hashable = "model",
) -> pd.DataFrame:
    """How each annotator agrees with the others: one row per annotator.

    Columns:

    * ``n_annotations`` -- the annotator's labels; ``n_paired`` those on
      items that someone else labelled too;
    * ``alpha_without`` -- Krippendorff's α of the table without the
      annotator, and ``alpha_change`` = α − ``alpha_without``: negative for
      an annotator who lowers the agreement (an outlier, or a different
      perspective);
    * ``majority_agreement`` -- the share of the annotator's labels equal to
      the majority of the *other* annotators of the item (``1/t`` when it is
      one of ``t`` tied labels), over the paired items.

    All annotators are computed at once: removing an annotator changes the
    coincidence matrix by a sum of per-annotation terms
    (:func:`~sklearn_hcal.metrics._agreement_kernels.annotator_coincidences`).

    **A model as one more annotator.** With ``y_pred`` (the model's label of
    each item) a last row, ``model_name``, scores the model like an
    annotator: its ``alpha_without`` is α of the humans, its
    ``alpha_change`` what adding the model's labels changes, its
    ``majority_agreement`` its agreement with the humans' majority. The
    annotators' rows, computed without the model, are the reference: a
    model that agrees with people as well as a typical annotator does lies
    within their distribution (:func:`model_agreement` summarises it).

    Parameters
    ----------
    X : DataFrame
        A long table, one row per (item, annotator), as
        ``load_lewidi(...).frame``.
    y_pred : Series, default=None
        The model's label of every item of ``X``, indexed by item.
    level : {"nominal", "ordinal", "interval", "ratio"}, default="nominal"
        α's level of measurement (see :func:`krippendorff_alpha`).
    labels : array-like of shape (n_classes,), default=None
        The classes (see :func:`krippendorff_alpha`).
    item, annotator, label : hashable, default="item", "annotator", "label"
        The long table's columns.
    model_name : hashable, default="model"
        The model's row.

    Returns
    -------
    table : DataFrame of shape (n_annotators, 5) or (n_annotators + 1, 5)
        Indexed by annotator (sorted ids; the model last); ``attrs["alpha"]``
        is α of the annotators. Sort it to find the outliers:
        ``table.sort_values("alpha_change")``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.metrics import annotator_agreement
    >>> X = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...                   "annotator": ["a", "b", "c"] * 3,
    ...                   "label": [0, 0, 1, 1, 1, 0, 0, 0, 1]})
    >>> table = annotator_agreement(X)
    >>> round(table.attrs["alpha"], 3)
    -0.2
    >>> table[["alpha_without", "majority_agreement"]].round(3)
               alpha_without  majority_agreement
    annotator
    a                 -0.667                 0.5
    b                 -0.667                 0.5
    c                  1.000                 0.0
    """
    owner = "annotator_agreement"
    keys = {"item": item, "annotator": annotator, "label": label}
    ratings = read_ratings(X, labels=labels, level=level, owner=owner, **keys)
    table = _annotator_rows(ratings, level)
    if y_pred is None:
        return table
    both = _with_model(ratings, y_pred, item=item, model_name=model_name, owner=owner)
    rows = _annotator_rows(both, level)
    model = rows.loc[[model_name]]
    model = model.assign(
        alpha_without=table.attrs["alpha"],
        alpha_change=rows.attrs["alpha"] - table.attrs["alpha"],
    )
    out = pd.concat([table, model])
    out.index.name = "annotator"
    out.attrs["alpha"] = table.attrs["alpha"]
    out.attrs["alpha_with_model"] = rows.attrs["alpha"]
    return out


@validate_params(_ANNOTATOR_PARAMS, prefer_skip_nested_validation=True)
def model_agreement(
    X: pd.DataFrame,
    y_pred: pd.Series,
    *,
    level: str = "nominal",
    labels: ArrayLike | None = None,
    item: Hashable = "item",
    annotator: Hashable = "annotator",
    label: Hashable = "label",
    model_name: Hashable = "model",
) -> pd.Series:
    """A model's agreement with people, against the annotators' own.

    The model is scored as one more annotator (:func:`annotator_agreement`
    with ``y_pred``) and set against the distribution of the held-out
    annotators' values: each annotator's agreement with the majority of the
    others, and what each changes in α.

    Parameters
    ----------
    X : DataFrame
        A long table of the human annotations.
    y_pred : Series
        The model's label of every item of ``X``, indexed by item.
    level, labels, item, annotator, label, model_name
        As for :func:`annotator_agreement`.

    Returns
    -------
    summary : Series
        ``alpha`` (the annotators'), ``alpha_with_model``,
        ``model_majority_agreement``, the annotators'
        ``human_majority_agreement_median`` and its 25% and 75% quantiles,
        ``model_percentile`` (the share of annotators whose majority
        agreement is below the model's, ties counting half), and
        ``model_alpha_change`` beside ``human_alpha_change_median``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.metrics import model_agreement
    >>> X = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...                   "annotator": ["a", "b", "c"] * 3,
    ...                   "label": [0, 0, 1, 1, 1, 0, 0, 0, 1]})
    >>> summary = model_agreement(X, pd.Series([0, 1, 0], index=[1, 2, 3]))
    >>> summary[["model_majority_agreement", "model_percentile"]].tolist()
    [1.0, 1.0]
    """
    table = annotator_agreement(
        X,
        y_pred,
        level=level,
        labels=labels,
        item=item,
        annotator=annotator,
        label=label,
        model_name=model_name,
    )
    humans, model = table.iloc[:-1], table.iloc[-1]
    agree = humans["majority_agreement"].dropna().to_numpy()
    mine = model["majority_agreement"]
    if agree.size:
        below = np.mean(agree < mine) + 0.5 * np.mean(agree == mine)
        q25, q50, q75 = np.quantile(agree, [0.25, 0.5, 0.75])
    else:  # no annotator shares an item with another: no reference
        below = q25 = q50 = q75 = np.nan
    return pd.Series(
        {
            "alpha": table.attrs["alpha"],
            "alpha_with_model": table.attrs["alpha_with_model"],
            "model_majority_agreement": float(mine),
            "human_majority_agreement_q25": float(q25),
            "human_majority_agreement_median": float(q50),
            "human_majority_agreement_q75": float(q75),
            "model_percentile": float(below),
            "model_alpha_change": float(model["alpha_change"]),
            "human_alpha_change_median": float(
                np.nanmedian(humans["alpha_change"].to_numpy())
            ),
        },
        name=model_name,
    )
