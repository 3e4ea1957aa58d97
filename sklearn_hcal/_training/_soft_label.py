"""Fit any scikit-learn classifier on label histograms."""

from __future__ import annotations

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    clone,
    is_classifier,
)
from sklearn.frozen import FrozenEstimator
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._frontend import HumanTargetMixin
from ..datasets._shared import draw_annotation
from ..utils._compat import (
    HasMethods,
    StrOptions,
    fit_context,
    get_tags,
    safe_indexing,
    validate_data,
)
from ..utils._pipeline import final_estimator
from ..utils._sample_weight import fit_with_sample_weight, sample_weight_key
from ..utils._warnings import warn_user

__all__ = ["SoftLabelClassifier"]

#: Score gap (in the units of the inner ``decision_function``) between the
#: lowest score of a row and a class the inner estimator never saw. For logits
#: this is ``log(1e10)``: the unseen class gets at most 1e-10 of the weakest
#: seen class's probability, while staying finite for downstream calibrators.
MISSING_CLASS_MARGIN = float(np.log(1e10))


def _estimator_has(attr):
    """Check the fitted ``estimator_`` if present, else the unfitted one."""

    def check(self):
        if hasattr(self, "estimator_"):
            return hasattr(self.estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


class SoftLabelClassifier(
    MetaEstimatorMixin, HumanTargetMixin, ClassifierMixin, BaseEstimator
):
    """Fit any scikit-learn classifier on label histograms (soft labels).

    Each item ``i`` comes with a histogram ``y[i]`` of annotation counts over
    the classes (developer guide §data-conventions). The histogram is turned into
    ordinary single-label training rows for the wrapped classifier according to
    ``strategy``.

    Parameters
    ----------
    estimator : classifier
        An unfitted scikit-learn classifier, or a Pipeline ending in one. It
        is cloned in :meth:`fit`. Row weights go to ``fit``'s
        ``sample_weight``, or to a Pipeline's final step
        (``<step>__sample_weight``, nested Pipelines too) and to every earlier
        step whose ``fit`` takes them. With ``strategy="weighted"`` an earlier
        step that takes no ``sample_weight`` (``PCA``, ``SelectKBest``,
        ``TfidfVectorizer``) is fitted on the expanded rows unweighted, so an
        item counts once per class it received; put such a step before the
        SoftLabelClassifier (``make_pipeline(PCA(), SoftLabelClassifier(...))``)
        to fit it on one row per item.
    strategy : {"auto", "weighted", "majority", "sample"}, default="auto"
        How histograms become training rows.

        - ``"weighted"``: one row per (item, class with a count > 0),
          weighted according to ``weighting`` (times the user's
          ``sample_weight``). With ``weighting="annotation"`` the weighted
          log-likelihood is ``sum_i sum_k Y_ik log q_k(x_i)``, the exact
          multinomial (soft-label) likelihood of the histograms (Mimori et al.
          2021, eq. 82). Needs an estimator (or a Pipeline's final step) whose
          ``fit`` accepts ``sample_weight``.
        - ``"majority"``: one row per item labelled with its most frequent
          class. Ties are broken **uniformly at random** among the tied
          classes using ``random_state`` (always taking the first tied class
          would systematically favour the classes listed first).
        - ``"sample"``: one row per item labelled with a single annotation
          drawn from the histogram (class ``k`` with probability
          ``Y_ik / n_i``) using ``random_state`` -- the single-label setting
          of Mimori et al. (2021, §7.1).
        - ``"auto"``: ``"weighted"`` when the estimator (or a Pipeline's
          final step) accepts ``sample_weight``, else ``"majority"`` **with a
          UserWarning** (the histograms are then reduced to majority votes).

        With 1-D labels ``y`` (one annotation per item) all strategies fit the
        estimator on the labels directly.
    weighting : {"annotation", "item"}, default="annotation"
        Weights of the rows of ``strategy="weighted"``.

        - ``"annotation"``: row ``(i, k)`` weighs the count ``Y_ik``: every
          annotation counts once, so items with more annotations weigh more
          and the total weight is the number of annotations.
        - ``"item"``: row ``(i, k)`` weighs ``Y_ik / n_i``: every item weighs
          1 in total, split by its human distribution (the soft cross-entropy
          against ``Y / n``). The total weight is the number of items, as
          with majority labels, so a regularisation strength (e.g. ``C``)
          tuned on majority labels keeps its meaning.
    classes : array-like of shape (n_classes,), default=None
        The class names: of the columns of an array histogram (which are
        otherwise ``0 .. n_classes - 1``), or of 1-D labels (which are then
        looked up by name, and a class without labels still gets a column).
        A DataFrame histogram's columns are reordered to ``classes`` (their
        name sets must agree).
    random_state : int, RandomState instance or None, default=None
        Seeds the tie breaking of ``"majority"`` and the draws of
        ``"sample"``. It is not passed to the wrapped estimator.

    Attributes
    ----------
    estimator_ : classifier
        The fitted clone of ``estimator``. It is trained on class *indices*
        (positions in ``classes_``), so its own ``classes_`` holds the
        indices of the classes it saw.
    classes_ : ndarray of shape (n_classes,)
        The classes in column order: ``classes`` if given, else the columns of
        a DataFrame ``y`` (``0 .. n_classes - 1`` for an array), or the sorted
        labels of a 1-D ``y``.
    n_classes_ : int
        Number of classes.
    strategy_ : str
        The strategy that was used (``"auto"`` resolved).
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during :meth:`fit`, when ``X`` has string
        column names.

    Notes
    -----
    :meth:`predict_proba` always returns one column per class of
    ``classes_``, in histogram order, even when a class is absent from the
    training rows (a cross-validation fold without that class, or a class
    that never wins a majority); such a column is 0. In
    :meth:`decision_function` such a class gets the row's lowest score minus
    ``MISSING_CLASS_MARGIN`` (``log(1e10)`` ~ 23.03), a finite value below all
    other classes (``-inf`` would break any calibrator or metric using the
    scores).

    A 2-D ``y`` makes scikit-learn's model selection use ``KFold`` instead of
    ``StratifiedKFold``; :meth:`score` then returns the accuracy against the
    human majority. With metadata routing, ``set_fit_request(counts=True)``
    lets ``y`` stay 1-D labels (e.g. for stratified splits) while ``fit``
    trains on the histograms passed as ``counts`` (developer guide §scorers, convention
    B).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_hcal import SoftLabelClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> Y = np.array([[3, 0, 0], [2, 1, 0], [1, 2, 0], [0, 3, 0]])
    >>> clf = SoftLabelClassifier(LogisticRegression()).fit(X, Y)
    >>> clf.strategy_
    'weighted'
    >>> clf.predict_proba(X).shape  # the third class is never observed
    (4, 3)
    >>> clf.predict_proba(X)[:, 2]
    array([0., 0., 0., 0.])
    >>> clf.predict(X)
    array([0, 0, 1, 1])
    """

    #: fits on label histograms (cross-fitting calibrators do not wrap it)
    _fits_histograms = True

    #: rows of probabilities are soft labels (e.g. an aggregator's item
    #: posteriors): such an item weighs 1, split by its distribution
    _allow_probability_targets = True

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "strategy": [StrOptions({"auto", "weighted", "majority", "sample"})],
        "weighting": [StrOptions({"annotation", "item"})],
        "classes": ["array-like", None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator,
        *,
        strategy="auto",
        weighting="annotation",
        classes=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.strategy = strategy
        self.weighting = weighting
        self.classes = classes
        self.random_state = random_state

    def _resolve_strategy(self, is_hist, weight_key):
        strategy = self.strategy
        name = type(self.estimator).__name__
        if strategy == "auto":
            strategy = "weighted" if weight_key is not None else "majority"
            if strategy == "majority" and is_hist:
                warn_user(
                    f"SoftLabelClassifier(strategy='auto'): {name}.fit accepts "
                    "no sample_weight (nor does a Pipeline's final step), so it "
                    "is trained on the majority label of each histogram, not on "
                    "the histograms. Pass strategy='majority' to say that this "
                    "is intended, or use a classifier that takes sample_weight."
                )
        if strategy == "weighted" and weight_key is None:
            raise ValueError(
                "strategy='weighted' needs an estimator whose fit accepts "
                f"sample_weight (or a Pipeline whose final step does); {name}.fit "
                "does not. Use strategy='majority' or 'sample'."
            )
        return strategy

    @fit_context(
        # the wrapped estimator is user-supplied and must validate itself
        prefer_skip_nested_validation=False
    )
    def fit(self, X, y=None, sample_weight=None, counts=None):
        """Fit the wrapped classifier on label histograms or labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, in any form the wrapped estimator accepts.
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Label histograms (non-negative integer counts, at least one
            annotation per row; a DataFrame's columns name the classes; a
            sparse matrix is densified), rows of probabilities (soft labels,
            e.g. the posteriors of :mod:`sklearn_hcal.aggregation`: each item
            weighs 1 in total) or 1-D class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-item weights, multiplied into the rows of each item.
        counts : array-like of shape (n_samples, n_classes), default=None
            Label histograms routed as metadata (convention B, request with
            ``set_fit_request(counts=True)``); they replace ``y``.

        Returns
        -------
        self : SoftLabelClassifier
            The fitted estimator.
        """
        if not is_classifier(self.estimator):
            raise ValueError(
                "estimator must be a scikit-learn classifier (is_classifier() is "
                f"False for {type(self.estimator).__name__})."
            )
        if isinstance(final_estimator(self.estimator), FrozenEstimator):
            # The wrapped estimator is trained on class indices (positions in
            # classes_); a frozen one keeps its own classes_, so its columns
            # would be read as the histogram's classes by position.
            raise ValueError(
                "SoftLabelClassifier trains its estimator on y (as class indices), "
                "but a FrozenEstimator is not trained: its predict_proba columns "
                "would be taken for the histogram's classes by position. To "
                "calibrate a fitted classifier on histograms use e.g. "
                "TemperatureScaler(FrozenEstimator(clf)); to score it, pass its "
                "classes_ as labels= to the metrics."
            )
        # the estimators' front end, targets only (developer guide §estimators)
        targets = self._read_targets(X, y, counts)
        validate_data(self, X, skip_check_array=True, reset=True)
        is_hist = targets.is_histogram
        weight_key = sample_weight_key(self.estimator)
        strategy = self._resolve_strategy(is_hist, weight_key)
        if sample_weight is not None and weight_key is None:
            raise ValueError(
                "sample_weight was given but "
                f"{type(self.estimator).__name__}.fit does not accept it (nor "
                "does a Pipeline's final step)."
            )
        sample_weight = self._item_weights(sample_weight, X)
        Y = self._resolve_targets(targets)  # sets classes_
        if is_hist:
            rows, y_fit, weight = self._histogram_rows(Y, strategy)
            if sample_weight is not None:
                weight = (
                    sample_weight[rows]
                    if weight is None
                    else weight * sample_weight[rows]
                )
            X_fit = X if rows is None else safe_indexing(X, rows)
        else:
            y_fit = Y.argmax(axis=1)
            X_fit, weight = X, sample_weight

        self.strategy_ = strategy
        self.estimator_ = fit_with_sample_weight(
            clone(self.estimator), X_fit, y_fit, weight
        )
        seen = np.asarray(self.estimator_.classes_)
        if not np.array_equal(seen, np.unique(y_fit)):
            raise ValueError(
                f"{type(self.estimator).__name__} was trained on the class "
                f"indices {np.unique(y_fit).tolist()[:10]} but its classes_ are "
                f"{seen.tolist()[:10]}; SoftLabelClassifier needs an estimator "
                "whose fit learns the classes of y."
            )
        self._seen = seen.astype(np.intp)
        return self

    def __sklearn_is_fitted__(self):
        # fitted once the wrapped estimator is (a failed fit may have set
        # n_features_in_ already)
        return hasattr(self, "estimator_")

    def _histogram_rows(self, Y, strategy):
        """Training rows ``(item index or None, class index, weight or None)``."""
        n_samples, n_classes = Y.shape
        if strategy == "weighted":
            # row-major: the rows of one item stay together, classes in order
            rows, cols = np.nonzero(Y)
            weight = Y[rows, cols]
            if self.weighting == "item":
                weight = weight / Y.sum(axis=1)[rows]
            return rows, cols, weight
        rng = check_random_state(self.random_state)
        if strategy == "majority":
            top = Y == Y.max(axis=1, keepdims=True)
            # random tie breaking: the tied class with the largest random key
            keys = np.where(top, rng.random_sample(Y.shape), -1.0)
            return None, keys.argmax(axis=1), None
        # "sample": one annotation per item, the draw sample_annotations makes
        return None, draw_annotation(Y, rng), None

    def _check_features(self, X):
        # Only the feature count and names: the array itself is validated by
        # the wrapped estimator, which may accept NaN, sparse or text input.
        ndim = getattr(X, "ndim", None)
        if ndim is None:  # lists and other array-likes
            ndim = np.asarray(X).ndim
        if ndim == 1:
            return  # the wrapped estimator raises scikit-learn's 1-D error
        validate_data(self, X, skip_check_array=True, reset=False)

    def _expand(self, values, fill):
        """Put the inner estimator's columns in ``classes_`` order."""
        if values.shape[1] != len(self._seen):
            raise ValueError(
                f"The wrapped estimator returned {values.shape[1]} columns but "
                f"was fitted on {len(self._seen)} classes; its output columns "
                "must follow its classes_."
            )
        out = np.full((values.shape[0], len(self.classes_)), fill, dtype=np.float64)
        out[:, self._seen] = values
        return out

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities, one column per class of ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` (histogram) order; a class the wrapped
            estimator never saw during fit has probability 0.
        """
        check_is_fitted(self)
        self._check_features(X)
        proba = np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)
        return self._expand(proba.reshape(proba.shape[0], -1), 0.0)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (``-inf`` for unseen classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision scores of the wrapped estimator in ``classes_`` order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            One column per class of ``classes_``; for two classes a 1-D array,
            the score of ``classes_[1]`` (scikit-learn's convention). When
            the wrapped estimator saw only two classes out of more, its 1-D
            score ``s`` becomes the columns ``(-s/2, s/2)`` (the same softmax
            as its sigmoid). A class it never saw gets the row's lowest score
            minus ``MISSING_CLASS_MARGIN``.
        """
        check_is_fitted(self)
        self._check_features(X)
        scores = np.asarray(self.estimator_.decision_function(X), dtype=np.float64)
        n_classes = len(self.classes_)
        n_seen = len(self._seen)
        if scores.ndim == 1 or (scores.ndim == 2 and scores.shape[1] == 1):
            scores = scores.reshape(-1)
            if n_seen == 2:
                if n_classes == 2:
                    return scores
                scores = np.column_stack([-scores / 2, scores / 2])
            else:
                scores = scores[:, None]
        if n_seen == n_classes:
            full = scores
        else:
            fill = scores.min(axis=1) - MISSING_CLASS_MARGIN
            full = self._expand(scores, 0.0)
            missing = np.setdiff1d(np.arange(n_classes), self._seen)
            full[:, missing] = fill[:, None]
        if n_classes == 2:
            return full[:, 1] - full[:, 0]
        return full

    def predict(self, X):
        """Most probable class (argmax of :meth:`predict_proba`, first on ties).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Elements of ``classes_``.
        """
        check_is_fitted(self)
        if hasattr(self.estimator_, "predict_proba"):
            idx = self.predict_proba(X).argmax(axis=1)
        else:
            self._check_features(X)
            idx = np.asarray(self.estimator_.predict(X)).astype(np.intp)
        return self.classes_[idx]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.allow_nan = inner.input_tags.allow_nan
        return tags
