"""Splitters that hold annotations out of a long table.

A model of annotators (an aggregator's ``predict_annotator_proba``, a
perspectivist classifier) is judged on annotations it did not see. The rows
of ``X`` are annotations (item, annotator, label columns, the layout of
``load_lewidi(...).annotations``); these splitters read the item or
annotator column of ``X`` (through the estimators' reader of long tables,
so that a bad table gets the estimators' error) and work as ``cv=`` in
``cross_validate`` and ``GridSearchCV``:

* :class:`OneAnnotationPerItemSplit`: each split holds out one annotation
  of every item with enough annotations; the items and (usually) the
  annotators stay in training;
* :class:`AnnotatorKFold`: annotator-disjoint folds, for annotators never
  seen in training.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.model_selection import BaseCrossValidator, GroupKFold
from sklearn.utils import check_random_state

from .._validation import read_annotation_table

__all__ = ["AnnotatorKFold", "OneAnnotationPerItemSplit"]


def _ids(X, key, role: str, owner: str) -> np.ndarray:
    """Each row's item or annotator, read by the estimators' table reader."""
    keys = {"item": None, "annotator": None, role: key}
    table = read_annotation_table(X, **keys, owner=owner, unique_pairs=False)
    return getattr(table, role)


def _check_no_groups(groups, owner: str, column: str) -> None:
    if groups is not None:
        raise ValueError(
            f"{owner} reads its groups from X's column {column!r}; groups= must "
            "be None."
        )


class OneAnnotationPerItemSplit(BaseCrossValidator):
    """Hold out one annotation of every item with enough annotations.

    Each split's test set holds one annotation (a row of ``X``) of every
    item with at least ``min_annotations`` annotations, drawn at random; the
    training set holds all the other rows, so every held-out item keeps at
    least ``min_annotations − 1`` annotations and its annotators usually
    keep others. An item's annotations are held out in the order of one
    random permutation: an item with at least ``n_splits`` annotations has a
    different one held out in each split. The test sets do not partition
    the rows (items with fewer annotations are never held out), so use the
    splitter with ``cross_validate`` or ``GridSearchCV``, not
    ``cross_val_predict``.

    Parameters
    ----------
    n_splits : int, default=5
        The number of splits.
    min_annotations : int, default=2
        Items with fewer annotations are never held out.
    item : hashable, default="item"
        The column of ``X`` identifying the item.
    random_state : int, RandomState instance or None, default=None
        Draws the held-out annotations; an int gives the same splits on
        every call to ``split``.

    See Also
    --------
    AnnotatorKFold : hold out whole annotators.
    sklearn_hcal.metrics.make_annotation_scorer : the score on the held-out
        annotations.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.model_selection import OneAnnotationPerItemSplit
    >>> X = pd.DataFrame({"item": ["a", "a", "a", "b", "b", "c"],
    ...                   "annotator": [1, 2, 3, 1, 2, 1],
    ...                   "label": [0, 1, 1, 0, 0, 1]})
    >>> cv = OneAnnotationPerItemSplit(2, random_state=0)
    >>> for train, test in cv.split(X):
    ...     print(X["item"].iloc[test].tolist(), len(train))
    ['a', 'b'] 4
    ['a', 'b'] 4
    """

    def __init__(
        self,
        n_splits: int = 5,
        *,
        min_annotations: int = 2,
        item="item",
        random_state=None,
    ):
        self.n_splits = n_splits
        self.min_annotations = min_annotations
        self.item = item
        self.random_state = random_state

    def _check_params(self, owner: str) -> None:
        if not isinstance(self.n_splits, Integral) or self.n_splits < 1:
            raise ValueError(
                f"{owner}: n_splits must be an int >= 1, got {self.n_splits!r}."
            )
        if not isinstance(self.min_annotations, Integral) or self.min_annotations < 2:
            raise ValueError(
                f"{owner}: min_annotations must be an int >= 2 (an item must keep an "
                f"annotation in training), got {self.min_annotations!r}."
            )

    def _iter_test_indices(self, X, y=None, groups=None):
        owner = type(self).__name__
        self._check_params(owner)
        _check_no_groups(groups, owner, self.item)
        codes, _ = pd.factorize(_ids(X, self.item, "item", owner))
        counts = np.bincount(codes)
        eligible = counts[codes] >= self.min_annotations
        if not eligible.any():
            raise ValueError(
                f"{owner}: no item has min_annotations={self.min_annotations} "
                f"annotations (the most is {int(counts.max())}); nothing to hold out."
            )
        rng = check_random_state(self.random_state)
        # rank of each row among its item's rows, in a random order
        order = np.lexsort((rng.random_sample(len(codes)), codes))
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rank = np.empty(len(codes), dtype=np.intp)
        rank[order] = np.arange(len(codes)) - starts[codes[order]]
        for split in range(self.n_splits):
            yield np.flatnonzero(eligible & (rank == split % counts[codes]))

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """The number of splits, ``n_splits``.

        Parameters
        ----------
        X, y, groups : object
            Ignored; present for scikit-learn's API.

        Returns
        -------
        n_splits : int
        """
        return self.n_splits


class AnnotatorKFold(GroupKFold):
    """Annotator-disjoint folds: no annotator in both training and test.

    :class:`~sklearn.model_selection.GroupKFold` with the groups read from
    ``X``'s annotator column: each annotator's annotations are all in one
    test fold, so a model is scored on annotators it never saw (what an
    aggregator's or a perspectivist classifier's fall-back for unseen
    annotators is judged on).

    Parameters
    ----------
    n_splits : int, default=5
        The number of folds (at most the number of annotators).
    shuffle : bool, default=False
        Shuffle the annotators before assigning them to folds (otherwise
        folds are balanced by number of annotations, as ``GroupKFold``).
    random_state : int, RandomState instance or None, default=None
        The shuffle's seed.
    annotator : hashable, default="annotator"
        The column of ``X`` identifying the annotator.

    See Also
    --------
    OneAnnotationPerItemSplit : hold out one annotation per item.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.model_selection import AnnotatorKFold
    >>> X = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3],
    ...                   "annotator": ["a", "b", "a", "c", "b", "c"],
    ...                   "label": [0, 1, 0, 0, 1, 1]})
    >>> folds = AnnotatorKFold(3).split(X)
    >>> sorted(X["annotator"].iloc[test].unique().tolist() for _, test in folds)
    [['a'], ['b'], ['c']]
    """

    def __init__(
        self,
        n_splits: int = 5,
        *,
        shuffle: bool = False,
        random_state=None,
        annotator="annotator",
    ):
        super().__init__(n_splits, shuffle=shuffle, random_state=random_state)
        self.annotator = annotator

    def split(self, X, y=None, groups=None):
        """Generate the indices of the annotator-disjoint folds.

        Parameters
        ----------
        X : DataFrame
            The long table, with the annotator column.
        y : object
            Ignored.
        groups : None
            Must be None: the groups are the annotator column.

        Yields
        ------
        train, test : ndarray
            Row positions of the training and test annotations.
        """
        owner = type(self).__name__
        _check_no_groups(groups, owner, self.annotator)
        annotators = _ids(X, self.annotator, "annotator", owner)
        return super().split(X, y, groups=annotators)
