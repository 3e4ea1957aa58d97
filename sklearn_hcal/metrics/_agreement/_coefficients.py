"""The agreement coefficients: Krippendorff's α, Fleiss' κ, Cohen's κ.

* :func:`krippendorff_alpha` -- from the coincidence matrix
  (:mod:`._kernels`), any number of annotators per item, one α per label
  for multi-label data, an interval over items (:mod:`._interval`);
* :func:`fleiss_kappa` -- for equal panels;
* :func:`pairwise_cohen_kappa` -- every pair of annotators on the items
  both labelled, all pairs at once.
"""

from __future__ import annotations

from collections.abc import Hashable
from numbers import Integral

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils._compat import Interval, StrOptions, validate_params
from ...utils._threads import one_blas_thread
from .._constraints import OPTIONAL_ARRAY
from ._input import KEYS, LEVEL, LONG_KEYS, Ratings, plain, read_ratings
from ._interval import BOOTSTRAP, alpha_interval
from ._kernels import (
    alpha_from_coincidences,
    coincidences,
    fleiss_from_counts,
    pairwise_kappa,
)

__all__ = ["fleiss_kappa", "krippendorff_alpha", "pairwise_cohen_kappa"]


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
            f"annotations is {plain(value)!r}: with a single value there is no "
            "disagreement to expect, and α (1 − D_o/D_e) is 0/0."
        )
    return Y


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
    return alpha_interval(alpha, Y, ratings.values, level, boot)


_ALPHA_PARAMS = {
    "y": ["array-like"],
    "level": LEVEL,
    "labels": OPTIONAL_ARRAY,
    **KEYS,
    **BOOTSTRAP,
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
# Cohen's kappa of every pair
# --------------------------------------------------------------------------- #
@validate_params(
    {
        "X": [pd.DataFrame],
        "labels": OPTIONAL_ARRAY,
        "weights": [StrOptions({"linear", "quadratic"}), None],
        "min_items": [Interval(Integral, 1, None, closed="left")],
        **LONG_KEYS,
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
