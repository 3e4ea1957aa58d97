"""A model's agreement with people, against the annotators' own.

The model is one more annotator (developer guide §agreement): its row of
:func:`~sklearn_hcal.metrics.annotator_agreement` set against the
distribution of the annotators' rows.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils._compat import validate_params
from ._input import ANNOTATOR_PARAMS
from ._tables import annotator_agreement

__all__ = ["model_agreement"]


@validate_params(ANNOTATOR_PARAMS, prefer_skip_nested_validation=True)
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
    # NaN where α without any one annotator is 0/0 (two annotators), not
    # numpy's "All-NaN slice" RuntimeWarning
    changes = humans["alpha_change"].dropna().to_numpy()
    change = float(np.median(changes)) if changes.size else np.nan
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
            "human_alpha_change_median": change,
        },
        name=model_name,
    )
