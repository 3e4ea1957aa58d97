"""An ordinal classifier from binary ones (Frank and Hall, 2001).

A rating on a scale ``c_1 < ... < c_K`` is ``K − 1`` binary questions "is
it above ``c_k``?". One binary classifier per threshold estimates
``G_k(x) = P(y > c_k | x)``; the class probabilities are the differences
``P(y = c_1) = 1 − G_1``, ``P(y = c_k) = G_{k−1} − G_k``,
``P(y = c_K) = G_{K−1}``. Every threshold sees all the data, so the scale's
order is used without assuming one shape of the distribution (unlike the
proportional-odds model), and any scikit-learn binary classifier fits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, has_fit_parameter

from .._frontend import check_item_weights
from ..utils._compat import HasMethods, fit_context, num_samples, validate_data

__all__ = ["OrdinalClassifier", "cumulative_to_proba"]


def cumulative_to_proba(G: np.ndarray) -> np.ndarray:
    """Class probabilities from ``G[:, k] = P(y > c_k)``, ``k < K − 1``.

    Independent binary fits need not give a non-increasing ``G``; crossing
    estimates are replaced by the mean of the running minimum from the left
    and the running maximum from the right, which is non-increasing and
    treats both ends of the scale alike (the running minimum alone pushes
    mass towards the low end).
    """
    G = np.clip(np.asarray(G, dtype=np.float64), 0.0, 1.0)
    low = np.minimum.accumulate(G, axis=1)
    high = np.maximum.accumulate(G[:, ::-1], axis=1)[:, ::-1]
    G = 0.5 * (low + high)
    n = G.shape[0]
    S = np.column_stack([np.ones(n), G, np.zeros(n)])
    P = S[:, :-1] - S[:, 1:]
    return P / P.sum(axis=1, keepdims=True)


def _check_text_order(classes: np.ndarray) -> None:
    """Refuse numbers written as text whose text order is not their order.

    The scale is the sorted classes (scikit-learn's ``classes_``): text sorts
    ``'10'`` before ``'2'``. Words keep their sorted order (there is no other
    to guess); numbers as text are refused only where the two orders
    differ, as :class:`PerspectivistClassifier` (``ordinal=True``) refuses a
    scale that is not numeric.
    """
    if classes.dtype.kind not in "OUS":
        return
    values = pd.to_numeric(pd.Series(classes, dtype=object), errors="coerce")
    if values.isna().any():
        return
    by_value = classes[np.argsort(values.to_numpy(), kind="stable")]
    if not np.array_equal(by_value, classes):
        raise ValueError(
            "OrdinalClassifier: y holds numbers written as text, whose text "
            f"order {classes.tolist()} (the scale, as sorted) is not their "
            f"numeric order {by_value.tolist()}; map them onto numbers, e.g. "
            "y.astype(int), so that the scale is ordered by value."
        )


class OrdinalClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Ordinal classification with one binary classifier per threshold.

    Frank and Hall's (2001) reduction: for a scale ``c_1 < ... < c_K`` (the
    sorted classes), ``K − 1`` clones of ``estimator`` learn
    ``P(y > c_k | x)``, and ``predict_proba`` returns their differences
    (crossing estimates made non-increasing first). The median of that
    distribution is the Bayes decision for the absolute distance on the
    scale (LeWiDi's perspectivist score for Likert data);
    :class:`PerspectivistClassifier` makes it, ``predict`` here gives the
    most probable class as every scikit-learn classifier does.

    Parameters
    ----------
    estimator : classifier, default=None
        A binary classifier with ``predict_proba``; None is
        ``LogisticRegression(solver="liblinear")``, fast on sparse text
        features.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The scale, sorted.
    estimators_ : list of (estimator or float)
        The fitted binary classifier of each threshold ``y > classes_[k]``;
        a float where the training labels answer it the same way for every
        row (the constant ``P(y > c_k)``).
    n_features_in_ : int
        Number of features of ``X``.
    feature_names_in_ : ndarray
        The columns of a DataFrame ``X``.

    References
    ----------
    Frank, E. and Hall, M. (2001). A simple approach to ordinal
    classification. ECML, LNCS 2167, 145-156.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.perspectivist import OrdinalClassifier
    >>> X = np.linspace(-3, 3, 60).reshape(-1, 1)
    >>> y = np.digitize(X.ravel(), [-1, 1])  # 0 < 1 < 2
    >>> clf = OrdinalClassifier().fit(X, y)
    >>> clf.predict_proba([[0.0]]).round(2).sum()
    np.float64(1.0)
    >>> clf.predict([[-3.0], [3.0]])
    array([0, 2])
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
    }

    def __init__(self, estimator=None):
        self.estimator = estimator

    def _base(self):
        if self.estimator is None:
            return LogisticRegression(solver="liblinear")
        return self.estimator

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit one binary classifier per threshold of the scale.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features, as the estimator takes them.
        y : array-like of shape (n_samples,)
            Ratings; their sorted distinct values are the scale. Numbers
            written as text whose text order is not their numeric order
            (``'1', '2', '10'``) are refused: map them onto numbers.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, passed to each binary classifier.

        Returns
        -------
        self : OrdinalClassifier
        """
        if y is None:
            raise ValueError(
                "OrdinalClassifier requires y to be passed, but the target y is None."
            )
        validate_data(self, X, reset=True, skip_check_array=True)
        y = column_or_1d(y, warn=True)
        if num_samples(X) != len(y):
            raise ValueError(
                f"X and y have different numbers of samples: {num_samples(X)} and "
                f"{len(y)}."
            )
        if len(y) == 0:
            raise ValueError(
                "Found array with 0 sample(s) (shape=(0,)); a minimum of 1 is required."
            )
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(f"y holds one class only ({self.classes_[0]!r}).")
        _check_text_order(self.classes_)
        kwargs = {}
        weights = check_item_weights(sample_weight, X)
        if weights is not None:
            if not has_fit_parameter(self._base(), "sample_weight"):
                raise ValueError(
                    f"{type(self._base()).__name__} does not take sample_weight."
                )
            kwargs["sample_weight"] = weights
        self.estimators_ = []
        for threshold in self.classes_[:-1]:
            above = (y > threshold).astype(np.int64)
            if above.min() == above.max():
                self.estimators_.append(float(above[0]))
                continue
            self.estimators_.append(clone(self._base()).fit(X, above, **kwargs))
        return self

    def predict_cumulative(self, X) -> np.ndarray:
        """``P(y > classes_[k])`` for every threshold, as estimated.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        G : ndarray of shape (n_samples, n_classes - 1)
            Not yet made non-increasing.
        """
        check_is_fitted(self)
        if isinstance(X, np.ndarray) and X.ndim == 1:
            raise ValueError(
                "Expected a 2D array, got a 1D array instead. Reshape your data "
                "either using array.reshape(-1, 1) if it has a single feature or "
                "array.reshape(1, -1) if it contains a single sample."
            )
        validate_data(self, X, reset=False, skip_check_array=True)
        n = num_samples(X)
        columns = []
        for est in self.estimators_:
            if isinstance(est, float):
                columns.append(np.full(n, est))
                continue
            proba = est.predict_proba(X)
            columns.append(proba[:, list(est.classes_).index(1)])
        return np.column_stack(columns)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities on the scale.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        return cumulative_to_proba(self.predict_cumulative(X))

    def predict(self, X) -> np.ndarray:
        """The most probable class (first of tied classes).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        P = self.predict_proba(X)
        return self.classes_[P.argmax(axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        base = self._base()
        if hasattr(base, "__sklearn_tags__"):
            inner = base.__sklearn_tags__()
            tags.input_tags.string = inner.input_tags.string
            tags.input_tags.allow_nan = inner.input_tags.allow_nan
        return tags
