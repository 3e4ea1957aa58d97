"""The agreement tables: per item and per annotator.

* :func:`item_agreement` -- per item: annotations, observed agreement,
  entropy (which items people disagree on);
* :func:`annotator_agreement` -- per annotator: α without the annotator and
  agreement with the leave-one-out majority, every annotator at once
  (:func:`~sklearn_hcal.metrics._agreement._kernels.annotator_coincidences`),
  with a model scored as one more annotator.
"""

from __future__ import annotations

from collections.abc import Hashable
from numbers import Real

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils._compat import validate_params
from ...utils._threads import one_blas_thread
from .._constraints import OPTIONAL_ARRAY
from ._input import ANNOTATOR_PARAMS, KEYS, Ratings, read_ratings, with_model
from ._kernels import (
    alpha_from_coincidences,
    annotator_coincidences,
    coincidences,
    loo_majority_agreement,
)

__all__ = ["annotator_agreement", "item_agreement"]


@validate_params(
    {"y": ["array-like"], "labels": OPTIONAL_ARRAY, "base": [Real, None], **KEYS},
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


def _annotator_rows(ratings: Ratings, level: str) -> pd.DataFrame:
    """The per-annotator table of one set of :class:`Ratings`."""
    with one_blas_thread():  # long (K × N) @ (N × k) products, as α's
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


@validate_params(ANNOTATOR_PARAMS, prefer_skip_nested_validation=True)
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
    (:func:`~sklearn_hcal.metrics._agreement._kernels.annotator_coincidences`).

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
    most = int(ratings.Y.sum(axis=1).max())
    if y_pred is None and most < 2:
        # every column would be NaN: nobody shares an item with anybody
        raise ValueError(
            f"{owner}: no item has two annotations or more (the most is {most}); "
            "agreement needs pairs of annotations of one item."
        )
    table = _annotator_rows(ratings, level)
    if y_pred is None:
        return table
    both = with_model(ratings, y_pred, item=item, model_name=model_name, owner=owner)
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
