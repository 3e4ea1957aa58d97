"""The aggregators' common face: a long table in, item posteriors out.

:class:`BaseAggregator` reads the table once (:mod:`._input`, on the
estimators' one reader of long tables), hands the
integer codes to the model and turns what it returns into the public
outputs, identically for every aggregator:

* ``fit(X, y=None)`` / ``fit_transform`` → ``posteriors_``, an items ×
  classes DataFrame;
* ``transform(X)``: the posteriors of ``X``'s items under the fitted
  annotator parameters;
* ``predict(X)``: the most probable class per item (the first of tied
  classes in ``classes_`` order);
* ``predict_annotator_proba(X)``: per (item, annotator) row, the
  distribution of that annotator's label (the item's posterior through the
  annotator's confusion matrix; unseen items and annotators get the
  model's pool, developer guide §aggregation);
* ``score(X, y=None)``: the mean log-likelihood of ``X``'s labels under
  ``predict_annotator_proba``.

A model implements ``_fit(data)`` (returns the fitted posterior array),
``_transform(data, item_map, annotator_map)`` and
``_annotator_proba(posterior, item_idx, annotator_idx)``, and may override
``_unseen_item_posterior()`` and ``_check_data(data)``.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._frontend import unseen_rows, warn_fallbacks
from ..metrics import make_annotation_scorer
from ..utils._compat import fit_context
from ..utils._docstrings import fill_doc
from ..utils._threads import one_blas_thread
from ._input import align_to_fitted, read_annotations, read_pairs

__all__ = ["BaseAggregator", "with_pool"]


def _warn_unseen(owner: str, X, unseen: dict, stand_in: dict) -> None:
    """Say which rows were predicted by a fallback, and by which.

    ``unseen`` maps a column to a boolean mask of ``X``'s rows whose value
    was not seen in ``fit``; ``stand_in`` names what predicts them.
    """
    warn_fallbacks(
        owner,
        [unseen_rows(X, col, mask, stand_in[col]) for col, mask in unseen.items()],
    )


def with_pool(params: np.ndarray) -> np.ndarray:
    """``params`` with one more row, their mean over annotators (or items).

    An unseen annotator is the fitted annotators' average: with the pool as
    the last row, position ``-1`` (what :mod:`._input` gives an unseen
    annotator) picks it.
    """
    return np.concatenate([params, params.mean(axis=0, keepdims=True)], axis=0)


class BaseAggregator(TransformerMixin, BaseEstimator):
    """Base class of the aggregators (not public)."""

    #: Whether annotators have parameters of their own (an unseen one is
    #: then predicted by the pool's, a fallback that warns).
    _per_annotator = True

    _parameter_constraints: dict = {
        "item": [Hashable],
        "annotator": [Hashable],
        "label": [Hashable],
        "classes": ["array-like", None],
    }

    # ------------------------------------------------------------ the hooks
    def _check_data(self, data) -> None:
        """Model-specific refusals of a training table (default: none)."""

    def _fit(self, data) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _transform(self, data, item_map, annotator_map) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - abstract

    def _annotator_proba(self, posterior, item_idx, annotator_idx) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - abstract

    def _unseen_item_posterior(self) -> np.ndarray:
        """The truth's distribution for an item without annotations."""
        return self.class_prior_

    # ------------------------------------------------------------ shared
    def _read(self, X, y, classes, *, fitted=False):
        return read_annotations(
            X,
            y,
            item=self.item,
            annotator=self.annotator,
            label=self.label,
            classes=classes,
            fitted=fitted,
            owner=type(self).__name__,
        )

    def _frame(self, posterior: np.ndarray, items) -> pd.DataFrame:
        return pd.DataFrame(
            posterior,
            index=pd.Index(items, name=self.item),
            columns=pd.Index(self.classes_, name=self.label),
        )

    @fit_context(prefer_skip_nested_validation=True)
    @fill_doc
    def fit(self, X, y=None):
        """Fit the model to the annotations (the class says what it estimates).

        Parameters
        ----------
        %(annotations_fit)s

        Returns
        -------
        self : object
            The fitted aggregator.
        """
        return self._fit_table(X, y)

    def _fit_table(self, X, y):
        """Validate, code and fit: what every ``fit`` does."""
        data = self._read(X, y, self.classes)
        self._check_data(data)
        self.classes_ = data.classes
        self.items_ = data.items
        self.annotators_ = data.annotators
        # EM repeats short passes (dot products of n_annotations entries):
        # on two BLAS threads each ends in a barrier that stalls whenever
        # the other core is busy (developer guide §speed; GLAD's fit on
        # MultiPICo took 2 s instead of 0.15 s at load 8)
        with one_blas_thread():
            posterior = self._fit(data)
        self.posteriors_ = self._frame(posterior, data.items)
        return self

    @fill_doc
    def fit_transform(self, X, y=None) -> pd.DataFrame:
        """Fit on the annotations and return the items' posteriors.

        Parameters
        ----------
        %(annotations_fit)s

        Returns
        -------
        posteriors : DataFrame of shape (n_items, n_classes)
            ``posteriors_``: per item (index, sorted), the distribution of its
            true class (columns ``classes_``).
        """
        return self.fit(X, y).posteriors_.copy()

    @fill_doc
    def transform(self, X) -> pd.DataFrame:
        """Posteriors of the items of ``X`` under the fitted annotator parameters.

        Only the annotator parameters are kept from ``fit``: an item's
        posterior is computed from ``X``'s annotations of it alone
        (annotators unseen in ``fit`` count as the pool of fitted ones, with a
        warning).

        Parameters
        ----------
        %(annotations)s

        Returns
        -------
        posteriors : DataFrame of shape (n_items, n_classes)
            Items of ``X`` (index, sorted) by ``classes_``.
        """
        check_is_fitted(self)
        data = self._read(X, None, self.classes_, fitted=True)
        item_map, annotator_map = align_to_fitted(data, self.items_, self.annotators_)
        _warn_unseen(
            type(self).__name__,
            X,
            {self.annotator: (annotator_map[data.annotator] < 0) & self._per_annotator},
            {self.annotator: "the fitted pool"},
        )
        with one_blas_thread():
            posterior = self._transform(data, item_map, annotator_map)
        return self._frame(posterior, data.items)

    @fill_doc
    def predict(self, X) -> pd.Series:
        """The most probable true class of each item of ``X``.

        Parameters
        ----------
        %(annotations)s

        Returns
        -------
        labels : Series
            Indexed by item (sorted); ties go to the first class of
            ``classes_``.
        """
        posterior = self.transform(X)
        best = np.argmax(posterior.to_numpy(), axis=1)
        return pd.Series(
            np.asarray(self.classes_)[best], index=posterior.index, name=self.label
        )

    def predict_annotator_proba(self, X) -> np.ndarray:
        """Distribution of each (item, annotator) row's label.

        ``P(annotator w labels item i with k) = Σ_z posterior_i(z) ·
        confusion_w(z, k)``: the fitted posterior of the item's truth through
        the annotator's confusion matrix. An item unseen in ``fit`` has the
        class prior as its posterior; an unseen annotator is the average of
        the fitted annotators (their parameters' mean). Both fall-backs warn
        (a ``UserWarning`` counting the rows they predict), as the
        perspectivist classifier's do.

        Parameters
        ----------
        X : DataFrame
            One row per (item, annotator) pair, with the item and annotator
            columns (a label column is ignored; pairs may repeat).

        Returns
        -------
        proba : ndarray of shape (n_rows, n_classes)
            Columns in ``classes_`` order; rows sum to 1.
        """
        check_is_fitted(self)
        item_idx, annotator_idx = read_pairs(
            X,
            item=self.item,
            annotator=self.annotator,
            items=self.items_,
            annotators=self.annotators_,
            owner=type(self).__name__,
        )
        _warn_unseen(
            type(self).__name__,
            X,
            {
                self.item: item_idx < 0,
                self.annotator: (annotator_idx < 0) & self._per_annotator,
            },
            {self.item: "the class prior", self.annotator: "the fitted pool"},
        )
        table = np.concatenate(
            [self.posteriors_.to_numpy(), self._unseen_item_posterior()[None, :]]
        )
        return self._annotator_proba(table[item_idx], item_idx, annotator_idx)

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of ``X``'s labels under ``predict_annotator_proba``.

        Greater is better; on held-out annotations it is the negated log
        loss of :func:`~sklearn_hcal.metrics.make_annotation_scorer`, so
        ``GridSearchCV`` without ``scoring`` chooses by it.

        Parameters
        ----------
        X : DataFrame
            Item, annotator and (unless ``y`` is given) label columns.
        y : array-like of shape (n_rows,), default=None
            The labels, when ``X`` has no label column.

        Returns
        -------
        score : float
        """
        return make_annotation_scorer("log_loss", label=self.label)(self, X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags
