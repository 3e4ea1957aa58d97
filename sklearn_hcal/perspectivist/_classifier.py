"""The perspectivist classifier: each annotator's label on each item.

Why one module: one estimator; its checks, decisions, features and CV
live beside it, and some 240 of its lines are documentation.

LeWiDi 2025's perspectivist track asks for the label each annotator gives
each test item; its soft track for the distribution of the item's labels.
One model serves both: a classifier of ``(item, annotator)`` rows gives
each annotator's distribution, the Bayes decision of the track's loss
gives the label, and the mean over an item's annotators gives the item's
soft label (developer guide §perspectivist).
"""

from __future__ import annotations

from collections.abc import Hashable
from numbers import Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.dummy import DummyClassifier
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from .._frontend import ItemWeightsMixin, unseen_rows, warn_fallbacks
from .._validation import is_missing
from ..utils._compat import (
    HasMethods,
    Interval,
    StrOptions,
    fit_context,
    get_tags,
    validate_data,
)
from ..utils._threads import one_blas_thread
from ._decisions import median_decision, mode_decision, threshold_decision
from ._default_estimator import make_default_estimator
from ._evaluation import perspectivist_loss
from ._input import (
    as_sequence,
    check_labels,
    check_predict_table,
    check_table,
    resolve_scale,
    seen_annotators,
)

__all__ = ["PerspectivistClassifier"]


class PerspectivistClassifier(
    MetaEstimatorMixin, ClassifierMixin, ItemWeightsMixin, BaseEstimator
):
    """Predict each annotator's label, and each item's soft label.

    A classifier of the rows of a long table of annotations (one row per
    (item, annotator), e.g. ``load_lewidi(path).frame`` without its
    ``label``): the wrapped estimator learns each row's label from
    everything the row holds -- the item's text, the annotator's id and
    metadata, the annotator's own explanation -- and

    * :meth:`predict_proba` gives each annotator's label distribution;
    * :meth:`predict` the Bayes decision for the track's loss: the mode for
      the error rate, the median for the absolute distance on an ordinal
      scale, per-label thresholds for multi-label data (LeWiDi 2025's
      perspectivist scores);
    * :meth:`predict_soft_labels` each item's soft label, the mean of its
      annotators' predicted distributions (LeWiDi's soft track), as a
      DataFrame indexed by item that every metric, report and calibrator of
      the package takes.

    Rows whose annotator was not seen in ``fit`` are predicted by the
    *pool's* model (``unseen="pool"``): the estimator fitted without the
    annotator column, i.e. the distribution of a label drawn from the
    training pool of annotators given the rest of the row. Rows missing an
    ``optional_columns`` value (an explanation a test file does not ship)
    are predicted by the estimator fitted without those columns. Neither
    raises; a ``UserWarning`` says how many rows were concerned.

    Parameters
    ----------
    estimator : estimator or None, default=None
        A classifier (or Pipeline) taking the table's rows, without the
        ``item`` column, as ``X``: for a multi-label target it is fitted on
        the 0/1 indicator matrix and its ``predict_proba`` gives per-label
        probabilities (a ``MultiOutputClassifier``'s list, or one column
        per label). None builds :func:`make_default_estimator`:
        :class:`AnnotationVectorizer` (TF-IDF of the texts and the
        explanation, the similarity of an item's two texts, one-hot
        annotator and metadata) and logistic regressions, with
        :class:`OrdinalClassifier` on ordinal scales and one model per
        label for multi-label data. Cloned in ``fit``.
    item : hashable or None, default="item"
        The item column of ``X``. None: every row is its own item.
    annotator : hashable or None, default="annotator"
        The annotator column of ``X``. None: annotators are not told apart
        (a pooled model).
    classes : array-like or None, default=None
        The scale (or the labels of a multi-label target). Labels outside it
        raise naming their row; classes absent from ``y`` get probability 0.
        None: the labels of ``y``.
    ordinal : "auto" or bool, default="auto"
        Whether the classes are an ordered scale. ``"auto"``: numeric
        classes, more than two of them (LeWiDi's Likert scales: Par −5..5,
        CSC 1..6).
    decision : {"auto", "mode", "median", "threshold"}, default="auto"
        The Bayes decision of :meth:`predict`. ``"auto"``: ``"median"`` on an
        ordinal scale (absolute distance), ``"threshold"`` for multi-label
        data, ``"mode"`` otherwise (error rate).
    threshold : float, default=0.5
        Multi-label: a label is predicted where ``P(label) ≥ threshold``
        (0.5 minimises the error rate, a mean of per-label 0-1 losses).
    unseen : {"pool", "estimator"}, default="pool"
        Rows of annotators not seen in ``fit``: ``"pool"`` predicts them with
        the estimator fitted without the ``annotator`` column (which must
        then accept ``X`` without it); ``"estimator"`` with the estimator
        itself (e.g. a one-hot encoder's all-zero code).
    optional_columns : str, list or None, default="explanation"
        Columns that may be missing at prediction (the column absent, or a
        missing or blank value in a row). Those among ``X``'s columns in
        ``fit`` get a second estimator fitted without them, which predicts
        the rows that lack them.
    random_state : int, RandomState instance or None, default=None
        Passed to the default estimator (liblinear's coordinate order); an
        ``estimator`` given keeps its own.

    Attributes
    ----------
    estimator_ : estimator
        The estimator fitted on every column.
    fallback_estimators_ : dict
        ``{tuple of dropped columns: fitted estimator}``: the pool's model
        ``(annotator,)``, the model without the optional columns, and the
        model without both (a ``DummyClassifier(strategy="prior")`` when no
        column is left); empty when none applies.
    classes_ : ndarray of shape (n_classes,)
        The classes (multi-label: the labels), sorted.
    annotators_ : ndarray or None
        The annotators seen in ``fit``.
    multilabel_ : bool
        Whether the target is multi-label.
    ordinal_ : bool
        Whether the scale is ordinal.
    decision_ : str
        The decision :meth:`predict` makes.
    optional_columns_ : list
        The optional columns present in ``fit``.
    n_features_in_ : int
        Number of columns of ``X`` (the keys included).
    feature_names_in_ : ndarray
        The columns of ``X`` in ``fit``.

    See Also
    --------
    sklearn_hcal.datasets.load_lewidi : its ``frame`` is the long table.
    sklearn_hcal.metrics.perspectivist_error_rate : the track's error rate.
    sklearn_hcal.metrics.perspectivist_absolute_distance : its distance.

    Notes
    -----
    Cross-validate with groups by item (``GroupKFold(groups=X["item"])``)
    so that no item is in both folds: an item's other annotators are the
    best predictor of its label, which a new test item does not have. For
    annotators never seen in training, hold whole annotators out with
    :class:`~sklearn_hcal.model_selection.AnnotatorKFold` (it reads ``X``'s
    annotator column); to compare with an aggregator on the same held-out
    annotations, use
    :class:`~sklearn_hcal.model_selection.OneAnnotationPerItemSplit` and
    :func:`~sklearn_hcal.metrics.make_annotation_scorer`, which scores this
    classifier's ``predict_proba`` on them.

    ``score`` is ``1 −`` the track's loss of :meth:`predict` (the absolute
    distance divided by the number of points on an ordinal scale, the error
    rate otherwise), averaged over each item's annotators and then over the
    items, as LeWiDi scores; ``GridSearchCV`` uses it by default.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal.perspectivist import PerspectivistClassifier
    >>> X = pd.DataFrame({
    ...     "item": ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"],
    ...     "annotator": ["A", "B"] * 4,
    ...     "explanation": ["same meaning", "same question", "different topics",
    ...                     "not the same", "same meaning", "different topics",
    ...                     "different topics", "same question"],
    ... })
    >>> y = [1, 1, 0, 0, 1, 0, 0, 1]
    >>> clf = PerspectivistClassifier().fit(X, y)
    >>> clf.predict_soft_labels(X).shape  # one row per item, one column per class
    (4, 2)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "item": [Hashable, None],
        "annotator": [Hashable, None],
        "classes": ["array-like", None],
        "ordinal": ["boolean", StrOptions({"auto"})],
        "decision": [StrOptions({"auto", "mode", "median", "threshold"})],
        "threshold": [Interval(Real, 0, 1, closed="neither")],
        "unseen": [StrOptions({"pool", "estimator"})],
        "optional_columns": [str, list, tuple, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        item="item",
        annotator="annotator",
        classes=None,
        ordinal="auto",
        decision="auto",
        threshold=0.5,
        unseen="pool",
        optional_columns="explanation",
        random_state=None,
    ):
        self.estimator = estimator
        self.item = item
        self.annotator = annotator
        self.classes = classes
        self.ordinal = ordinal
        self.decision = decision
        self.threshold = threshold
        self.unseen = unseen
        self.optional_columns = optional_columns
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit the estimator (and its fallbacks) on the annotations.

        The fits run with one BLAS thread (developer guide §speed): the
        logistic regressions' short sparse products stalled on two threads
        whenever the other core was busy (a 0.15 s fit took 3 s).

        Parameters
        ----------
        X : DataFrame of shape (n_annotations, n_columns)
            One row per (item, annotator) with the ``item`` and
            ``annotator`` columns and the features; not the label.
        y : array-like of shape (n_annotations,) or (n_annotations, n_labels)
            Each row's label; multi-label: the labels chosen, as tuples,
            lists or sets (``frame["label"]`` of a multi-label file), or a
            0/1 indicator matrix (a DataFrame's columns name the labels).
        sample_weight : array-like of shape (n_annotations,), default=None
            Row weights, passed to the estimator's (or its last step's)
            ``fit``.

        Returns
        -------
        self : PerspectivistClassifier
        """
        with one_blas_thread():
            return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        if self._array_mode(X):
            X = validate_data(self, X, reset=True, **self._array_checks())
        table = check_table(X, item=self.item, annotator=self.annotator, y=y)
        target = check_labels(y, table, classes=self.classes)
        weights = self._item_weights(sample_weight, X)
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
            self.n_features_in_ = X.shape[1]
        self._take_scale(target, self.ordinal)
        base = self.estimator
        if base is None:
            base = make_default_estimator(
                ordinal=self.ordinal_,
                multilabel=self.multilabel_,
                n_classes=len(self.classes_),
                random_state=self.random_state,
            )
        features = self._features(X)
        self.estimator_ = _fit(clone(base), features, target.target, weights)
        self.annotators_ = None
        self.optional_columns_ = []
        self.fallback_estimators_ = {}
        if not isinstance(X, pd.DataFrame):
            return self
        self.annotators_ = seen_annotators(X, self.annotator)
        optional = [
            c
            for c in as_sequence(self.optional_columns)
            if c in features.columns and c != self.annotator
        ]
        self.optional_columns_ = optional
        for dropped in self._fallbacks(optional):
            rest = features.drop(columns=list(dropped))
            # nothing left to learn from: the training distribution of labels
            model = DummyClassifier(strategy="prior") if rest.shape[1] == 0 else base
            try:
                fitted = _fit(clone(model), rest, target.target, weights)
            except (ValueError, KeyError) as exc:
                raise ValueError(
                    f"The estimator could not be fitted without the columns "
                    f"{list(dropped)} ({type(exc).__name__}: {exc}). The fallback "
                    "models need it: pass unseen='estimator' and/or "
                    "optional_columns=None, or let the estimator find its columns "
                    "(e.g. AnnotationVectorizer, make_column_selector)."
                ) from exc
            self.fallback_estimators_[dropped] = fitted
        return self

    def _take_scale(self, target, ordinal, classes=None) -> None:
        """``classes_`` (``target``'s unless given), ``multilabel_``, the
        label format, ``ordinal_`` and the ``decision_`` of ``predict``."""
        self.classes_ = target.classes if classes is None else classes
        self.multilabel_ = target.multilabel
        self._label_format = target.label_format
        self.ordinal_, self.decision_ = resolve_scale(
            self.classes_, self.multilabel_, ordinal, self.decision
        )

    def _array_mode(self, X) -> bool:
        """A plain feature matrix: no keys, every row its own item."""
        return (
            self.item is None
            and self.annotator is None
            and not isinstance(X, pd.DataFrame)
        )

    def _array_checks(self) -> dict:
        tags = self.__sklearn_tags__().input_tags
        return {
            "accept_sparse": tags.sparse,
            "dtype": None,
            "ensure_all_finite": "allow-nan" if tags.allow_nan else True,
        }

    def _fallbacks(self, optional):
        pool = self.unseen == "pool" and self.annotator is not None
        drops = []
        if pool:
            drops.append((self.annotator,))
        if optional:
            drops.append(tuple(optional))
        if pool and optional:
            drops.append((self.annotator, *optional))
        return drops

    def _features(self, X):
        """The estimator's ``X``: the table without its item column."""
        if isinstance(X, pd.DataFrame) and self.item is not None:
            return X.drop(columns=[self.item])
        return X

    # -------------------------------------------------------------- predict
    def predict_proba(self, X) -> np.ndarray:
        """Each annotator's label distribution.

        Parameters
        ----------
        X : DataFrame of shape (n_annotations, n_columns)
            The rows to predict, with the columns of ``fit`` (those in
            ``optional_columns`` may be absent).

        Returns
        -------
        P : ndarray of shape (n_annotations, n_classes)
            Columns in the order of ``classes_``; for multi-label data the
            probability that each label is among the annotator's labels
            (rows need not sum to 1).
        """
        check_is_fitted(self)
        with one_blas_thread():
            return self._predict_proba(X)

    def _predict_proba(self, X) -> np.ndarray:
        X, _ = self._check_predict(X)
        features = self._features(X)
        if not isinstance(X, pd.DataFrame) or not self.fallback_estimators_:
            return self._proba(self.estimator_, features)
        unseen, lacking = self._fallback_rows(X)
        P = np.zeros((len(X), len(self.classes_)))
        for use_pool in (False, True):
            for use_lacking in (False, True):
                rows = (unseen == use_pool) & (lacking == use_lacking)
                if not rows.any():
                    continue
                dropped = (self.annotator,) if use_pool else ()
                dropped += tuple(self.optional_columns_) if use_lacking else ()
                est = self.fallback_estimators_[dropped] if dropped else self.estimator_
                part = features.iloc[np.flatnonzero(rows)]
                part = part.drop(columns=[c for c in dropped if c in part.columns])
                P[rows] = self._proba(est, part)
        self._warn_fallbacks(X, unseen, lacking)
        return P

    def _check_predict(self, X):
        """``(X, table)``: ``X`` restricted to the fitted columns, its rows."""
        if self._array_mode(X) or not hasattr(self, "feature_names_in_"):
            X = validate_data(self, X, reset=False, **self._array_checks())
            return X, check_table(X, item=None, annotator=None)
        table = check_predict_table(
            X,
            item=self.item,
            annotator=self.annotator,
            fitted_columns=getattr(self, "feature_names_in_", None)
            if isinstance(X, pd.DataFrame)
            else None,
            optional=self.optional_columns_,
        )
        return X[[c for c in self.feature_names_in_ if c in X.columns]], table

    def _fallback_rows(self, X):
        n = len(X)
        unseen = np.zeros(n, dtype=bool)
        if (self.annotator,) in self.fallback_estimators_:
            seen = pd.Index(self.annotators_)
            unseen = seen.get_indexer(X[self.annotator].astype(object)) < 0
        lacking = np.zeros(n, dtype=bool)
        for col in self.optional_columns_:
            lacking |= np.ones(n, bool) if col not in X.columns else is_missing(X[col])
        return unseen, lacking

    def _warn_fallbacks(self, X, unseen, lacking) -> None:
        lacks = None
        if lacking.any():
            lacks = (
                f"{int(lacking.sum())} of {len(X)} rows lack "
                f"{self.optional_columns_}, predicted by the model fitted without "
                "them"
            )
        stand_in = f"the pool's model (fitted without the column {self.annotator!r})"
        warn_fallbacks(
            type(self).__name__,
            [unseen_rows(X, self.annotator, unseen, stand_in), lacks],
        )

    def _proba(self, est, features) -> np.ndarray:
        """``est``'s probabilities with one column per class of ``classes_``."""
        out = est.predict_proba(features)
        inner = getattr(est, "classes_", None)
        if self.multilabel_:
            return _label_proba(out, inner, len(self.classes_))
        P = np.zeros((len(out), len(self.classes_)))
        lookup = {c: j for j, c in enumerate(self.classes_.tolist())}
        cols = [lookup[c] for c in np.asarray(inner).tolist()]
        P[:, cols] = out
        return P

    def predict(self, X) -> np.ndarray:
        """Each annotator's label: the Bayes decision of ``decision_``.

        Parameters
        ----------
        X : DataFrame of shape (n_annotations, n_columns)

        Returns
        -------
        y_pred : ndarray of shape (n_annotations,) or (n_annotations, n_labels)
            Labels; multi-label: tuples of labels when ``fit`` got label sets,
            a 0/1 indicator matrix when it got one.
        """
        P = self.predict_proba(X)
        if self.decision_ == "threshold":
            ind = threshold_decision(P, self.threshold)
            if self._label_format == "indicator":
                return ind
            labels = self.classes_.tolist()
            out = np.empty(len(ind), dtype=object)
            out[:] = [tuple(labels[j] for j in np.flatnonzero(r)) for r in ind]
            return out
        if self.decision_ == "median":
            return median_decision(P, self.classes_)
        return mode_decision(P, self.classes_)

    def predict_soft_labels(self, X) -> pd.DataFrame:
        """Each item's soft label: the mean of its annotators' distributions.

        The prediction of LeWiDi's soft track from a perspectivist model:
        for an item ``i`` with annotators ``A_i`` (its rows in ``X``),
        ``q_i = (1/|A_i|) Σ_{a ∈ A_i} P(label | i, a)``.

        Parameters
        ----------
        X : DataFrame of shape (n_annotations, n_columns)
            The annotators of each item, one row each (a test file's
            ``frame``).

        Returns
        -------
        soft_labels : DataFrame of shape (n_items, n_classes)
            Indexed by item, in order of first appearance in ``X``; columns
            ``classes_`` (multi-label: the probability that each label is
            chosen by an annotator of the item).
        """
        P = self.predict_proba(X)
        frame = pd.DataFrame(P, columns=pd.Index(self.classes_))
        if self.item is None or not isinstance(X, pd.DataFrame):
            frame.index.name = "item"
            return frame
        items = X[self.item].to_numpy()
        soft = frame.groupby(items, sort=False).mean()
        soft.index.name = self.item
        return soft

    def score(self, X, y, sample_weight=None) -> float:
        """``1 −`` the track's loss, the LeWiDi way (see Notes).

        Parameters
        ----------
        X : DataFrame of shape (n_annotations, n_columns)
        y : array-like of shape (n_annotations,) or (n_annotations, n_labels)
            The labels given, as in ``fit``.
        sample_weight : array-like of shape (n_annotations,), default=None
            Row weights within each item's mean (items count equally).

        Returns
        -------
        score : float
            In ``[0, 1]``, higher is better.
        """
        check_is_fitted(self)
        X, table = self._check_predict(X)
        truth = check_labels(y, table, classes=self.classes_, fitted=True)
        pred = self.predict(X)
        if self.multilabel_ and self._label_format == "tuple":
            pred = _indicators(pred, self.classes_)
        if sample_weight is None:
            return 1.0 - perspectivist_loss(self, X, truth.target, pred)
        if self.multilabel_:
            loss = np.abs(truth.target - pred).mean(axis=1)
        elif self.ordinal_:
            index = pd.Index(self.classes_)
            loss = np.abs(index.get_indexer(truth.target) - index.get_indexer(pred))
            loss = loss / len(self.classes_)
        else:
            loss = (
                np.asarray(truth.target, dtype=object) != pred.astype(object)
            ).astype(np.float64)
        weights = self._item_weights(sample_weight, X)
        weights = np.ones(len(loss)) if weights is None else weights
        if self.item is None or not isinstance(X, pd.DataFrame):
            items = np.arange(len(loss))
        else:
            items = X[self.item].to_numpy()
        num = pd.Series(loss * weights).groupby(items, sort=False).sum()
        den = pd.Series(weights).groupby(items, sort=False).sum()
        per_item = (num / den).dropna()
        return float(1.0 - per_item.mean())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.estimator is None:  # AnnotationVectorizer's inputs
            tags.input_tags.string = True
            tags.input_tags.categorical = True
            tags.input_tags.allow_nan = True
            tags.classifier_tags.multi_label = True
            return tags
        inner = get_tags(self.estimator)
        tags.input_tags.string = inner.input_tags.string
        tags.input_tags.categorical = inner.input_tags.categorical
        tags.input_tags.allow_nan = inner.input_tags.allow_nan
        tags.input_tags.sparse = inner.input_tags.sparse
        if inner.classifier_tags is not None:
            tags.classifier_tags.multi_label = inner.classifier_tags.multi_label
        return tags


def _fit(est, X, target, weights):
    kwargs = {}
    if weights is not None:
        last = est.steps[-1][1] if isinstance(est, Pipeline) else est
        if not has_fit_parameter(last, "sample_weight"):
            raise ValueError(
                f"sample_weight was given but {type(last).__name__}.fit does not "
                "take it."
            )
        key = (
            f"{est.steps[-1][0]}__sample_weight"
            if isinstance(est, Pipeline)
            else "sample_weight"
        )
        kwargs[key] = weights
    return est.fit(X, target, **kwargs)


def _label_proba(out, inner, n_labels) -> np.ndarray:
    """Per-label probabilities from a multi-label ``predict_proba``."""
    if isinstance(out, list):
        columns = []
        for j, proba in enumerate(out):
            classes = list(inner[j]) if inner is not None else [0, 1]
            if 1 in classes:
                columns.append(np.asarray(proba)[:, classes.index(1)])
            else:  # the label was never chosen in training
                columns.append(np.zeros(len(proba)))
        P = np.column_stack(columns)
    else:
        P = np.asarray(out, dtype=np.float64)
    if P.ndim != 2 or P.shape[1] != n_labels:
        raise ValueError(
            f"The estimator's predict_proba gives shape {P.shape} for a multi-label "
            f"target of {n_labels} labels; it must give one probability per label "
            "(wrap a single-label classifier in MultiOutputClassifier)."
        )
    return P


def _indicators(sets, labels) -> np.ndarray:
    index = {lab: j for j, lab in enumerate(np.asarray(labels).tolist())}
    out = np.zeros((len(sets), len(index)), dtype=np.int64)
    for i, row in enumerate(sets):
        out[i, [index[lab] for lab in row]] = 1
    return out
