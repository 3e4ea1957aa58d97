"""The one wording of rows predicted by a fallback at prediction time.

An estimator fitted on a long table of annotations predicts a row whose
item or annotator it did not see in ``fit`` by a stand-in (the class prior,
the pool of annotators, the pool's model) and says so in one warning, worded
alike by the aggregators and the perspectivist classifier (developer guide
§estimators)::

    DawidSkene: 1 of 2 rows have annotator values not seen in fit (e.g. 'z'),
    predicted by the fitted pool.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..utils._warnings import warn_user

__all__ = ["unseen_rows", "warn_fallbacks"]


def unseen_rows(X, column, mask: np.ndarray, stand_in: str) -> str | None:
    """The phrase for the rows of ``X`` in ``mask`` (values of ``column`` not
    seen in fit) predicted by ``stand_in``; None when there are none.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn_hcal._frontend import unseen_rows
    >>> X = pd.DataFrame({"annotator": ["a", "z"]})
    >>> phrase = unseen_rows(X, "annotator", np.array([False, True]), "the pool")
    >>> phrase.split(" (e.g. ")
    ['1 of 2 rows have annotator values not seen in fit', "'z'), predicted by the pool"]
    """
    if not mask.any():
        return None
    first = X[column].iloc[int(np.flatnonzero(mask)[0])]
    first = first.item() if isinstance(first, np.generic) else first
    return (
        f"{int(mask.sum())} of {len(mask)} rows have {column} values not seen "
        f"in fit (e.g. {first!r}), predicted by {stand_in}"
    )


def warn_fallbacks(owner: str, parts: Iterable[str | None]) -> None:
    """One warning, ``"<owner>: <part>; <part>."``, for the parts that are
    not None (none: no warning), attributed to the user's line."""
    parts = [part for part in parts if part]
    if parts:
        warn_user(f"{owner}: " + "; ".join(parts) + ".")
