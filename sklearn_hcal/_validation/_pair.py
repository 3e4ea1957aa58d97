"""A validated (human labels, model probabilities) pair for the metrics.

Why one module: the pair, the blocks of rows the metrics read it by (with
the arrays derived from them, looked up or computed once per block) and
the one check that builds it (its general path and the plain call's
shortcut, which must build the same pair) are one job; about 315 lines
are code, the rest the alignment rules they document.

:func:`check_pair` is the one place where a metric's inputs are validated
and their classes aligned (developer guide §class-names and §tolerances):

* the classes of ``y_prob``'s columns are ``labels=`` when given, else the
  column names of a DataFrame ``y_prob``, else positional;
* 1-D labels (``y_true`` or ``counts``) are mapped to columns through those
  classes; without them the sorted distinct labels must number ``K``;
* when the human histograms and ``y_prob`` both carry class names, ``y_prob``'s
  columns are put in the histograms' order (different names raise); when
  only the histograms do, their names must be in sorted order (the order of
  ``predict_proba``'s columns), else the positions are a guess and raise;
* probability rows within :func:`row_sum_tolerance` of 1 are accepted and
  renormalised.

Nothing is copied wholesale: the reordering and the renormalisation are
applied block by block when a metric reads :attr:`Block.P`, so a float32 or
memory-mapped input is read once, a block at a time.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ._core import map_row_blocks, row_blocks, rows_from, shape_of
from ._labels import (
    check_class_names,
    check_positional_classes,
    column_order,
    frame_names,
    labels_to_histograms,
)
from ._rows import match_rows
from ._scan import (
    checked_histograms,
    normalised_block,
    scan_histograms,
    scan_probabilities,
)

__all__ = ["check_histograms_and_probabilities"]


#: Largest common number of labels per item whose ``p̂`` is looked up
#: (:attr:`Block.p_hat_table`); the tables are kept per ``n``.
_TABLE_MAX_N = 2**12
_P_HAT_TABLES: dict = {}
#: Tables (and function values) kept at most: a few MB whatever the data.
_TABLES_KEPT = 64
_P_HAT_VALUES: dict = {}


class Block:
    """Rows ``sl`` of a :class:`Pair`; float64 views are made on first use.

    Metrics that are computed together (the report) share one block, so
    ``p_hat`` and the other derived arrays are computed once per block.
    """

    def __init__(self, pair: Pair, sl: slice) -> None:
        self.sl = sl
        self.Y = pair.Y[sl]  # raw dtype: integer, float32 or float64
        self.n = pair.n[sl]
        self.is_counts = pair.is_counts
        self._pair = pair
        self.cache: dict = {}

    @cached_property
    def P(self) -> np.ndarray:
        """Probabilities in the class order of ``Y``, rows summing to 1."""
        pair = self._pair
        return normalised_block(
            pair.P, self.sl, renormalise=pair.renormalise, order=pair.order
        )

    @cached_property
    def p_hat_table(self) -> np.ndarray | None:
        """``t`` with ``t[k] = k / n`` and ``p̂ = t[Y]``, or None.

        When every item has the same number ``n`` of integer labels (at
        most :data:`_TABLE_MAX_N`, in a C-ordered array), ``p̂`` takes only
        the values ``k / n``: looking them up is twice as fast as converting
        and dividing, and an
        elementwise function of ``p̂`` is that function of ``n + 1`` numbers
        (:meth:`p_hat_map`). The same quotients (``float(k) / n``, the
        division of the general path), kept per ``n`` for the process.
        """
        n, Y = self.n, self.Y
        # C order only: the general path keeps Y's layout (``np.array``), and
        # row sums of another layout add in another order
        if Y.dtype.kind not in "iu" or not n.size or not Y.flags.c_contiguous:
            return None
        first = n[0]
        if not (first <= _TABLE_MAX_N and n.min() == n.max()):
            return None
        table = _P_HAT_TABLES.get(first)
        if table is None:
            table = np.arange(int(first) + 1) / first
            table.flags.writeable = False
            if len(_P_HAT_TABLES) >= _TABLES_KEPT:  # bounded, as a process
                _P_HAT_TABLES.clear()  # may see many different n
            _P_HAT_TABLES[first] = table
        return table

    def p_hat_map(self, func, *, kept: bool = False) -> np.ndarray:
        """``func(p̂)`` for an elementwise ``func`` (numpy's ufuncs give each
        element the same bits whatever the array): from :attr:`p_hat_table`
        when there is one, without forming ``p̂``. ``kept``: ``func`` is a
        module-level function, whose values on the table are kept for the
        process (a lambda made per call would fill the store)."""
        table = self.p_hat_table
        if table is None:
            return func(self.p_hat)
        if not kept:
            return func(table).take(self.Y)
        key = (func, table.shape[0])  # the function of k / n, k = 0..n
        values = _P_HAT_VALUES.get(key)
        if values is None:
            if len(_P_HAT_VALUES) >= _TABLES_KEPT:
                _P_HAT_VALUES.clear()
            values = _P_HAT_VALUES[key] = func(table)
            values.flags.writeable = False
        return values.take(self.Y)

    @cached_property
    def p_hat(self) -> np.ndarray:
        table = self.p_hat_table
        if table is not None:
            return table.take(self.Y)
        # Converting first is twice as fast as a mixed int/float division
        # and gives the same quotients.
        p_hat = np.array(self.Y, dtype=np.float64)
        n = self.n
        if n.size and n.min() == n.max():
            # every item has the same number of labels: one scalar divisor,
            # the same quotients a third faster than the broadcast column
            p_hat /= n[0]
        else:
            p_hat /= n[:, None]
        return p_hat

    @cached_property
    def Yf(self) -> np.ndarray:
        """Counts as float64 (``Y(Y - 1)`` would overflow small int dtypes)."""
        return np.asarray(self.Y, dtype=np.float64)


class Pair:
    """Validated ``(Y, P)`` for the chunked metric passes.

    ``Y`` and ``P`` are the caller's arrays (integer, float32, float64, or a
    memory map; ``P`` may be the 1-D P(second class) of a binary problem):
    nothing is copied to float64 wholesale. ``n`` holds the float64 row sums
    of ``Y`` and ``is_counts`` whether ``Y`` is integer-valued.

    ``order`` (None: as given) puts ``P``'s columns in ``Y``'s class order
    and ``renormalise`` says whether rows of ``P`` off by rounding must be
    renormalised (None: unknown, checked per block); :attr:`Block.P`
    applies both. ``classes`` are the class names of ``Y``'s columns when
    known (DataFrame columns, ``labels=``, or the values of 1-D labels),
    else None (positional). ``named`` says whether those names belong to the
    human labels themselves (a DataFrame, ``labels=``, 1-D labels mapped
    through them); False when only a prediction named its columns and the
    human labels are a positional array.
    """

    def __init__(
        self,
        Y,
        P,
        n,
        is_counts: bool,
        *,
        order=None,
        renormalise=None,
        classes=None,
        named: bool | None = None,
    ) -> None:
        self.Y = Y
        self.P = P
        self.n = n
        self.is_counts = bool(is_counts)
        self.order = order
        self.renormalise = renormalise
        self.classes = classes
        self.named = classes is not None if named is None else bool(named)
        self.n_samples, self.n_classes = Y.shape

    def blocks(self, chunk_rows: int | None = None):
        """:class:`Block` objects covering all rows, in order."""
        for sl in row_blocks(self.n_samples, self.n_classes, chunk_rows):
            yield Block(self, sl)

    def map_blocks(self, fn, chunk_rows: int | None = None) -> list:
        """``[fn(block) for block in self.blocks()]``, run on threads.

        See :func:`map_row_blocks`: results in block order, so they do not
        depend on the number of threads. Each block (and the float64 arrays
        it caches) lives only for its call, so memory stays at one block's
        temporaries per thread, a few MB whatever the number of rows.
        """
        return map_row_blocks(
            lambda sl: fn(Block(self, sl)), self.n_samples, self.n_classes, chunk_rows
        )

    def take(self, idx) -> Pair:
        """The pair restricted to the items ``idx`` (a copy of those rows)."""
        return Pair(
            self.Y[idx],
            self.P[idx],
            self.n[idx],
            self.is_counts,
            order=self.order,
            renormalise=self.renormalise,
            classes=self.classes,
            named=self.named,
        )

    def probabilities(self) -> np.ndarray:
        """``P`` as an ``(n_samples, n_classes)`` array in ``Y``'s class order.

        The caller's array itself when nothing is to be changed; else a
        float64 array built block by block.
        """
        if self.order is None and self.renormalise is False and self.P.ndim == 2:
            return self.P
        out = np.empty((self.n_samples, self.n_classes), dtype=np.float64)
        for block in self.blocks():
            out[block.sl] = block.P
        return out

    def with_probabilities(
        self,
        y_prob,
        *,
        labels=None,
        name: str = "y_prob",
        y_true_name="y_true",
        class_order_matters: bool = True,
        row_offset: int = 0,
    ) -> Pair:
        """The same human labels with the probabilities ``y_prob`` checked.

        Validates ``y_prob`` against this pair's class count and sample count
        and aligns its columns by name with ``Y``'s classes (see
        :func:`check_pair`). A report evaluating several classifiers on the
        same labels calls it once per classifier; ``Y`` and ``n`` are shared.
        ``class_order_matters=False`` (a quantity that no permutation of the
        classes changes, such as ``1 − Σ q²``) lets an unnamed ``y_prob``
        follow named human labels whatever their order (see
        :func:`check_positional_classes`). ``row_offset`` is the position of
        the first row among all items (a chunk's), for the rows messages name.
        """
        P, _, off = scan_probabilities(
            y_prob,
            name=name,
            n_classes=self.n_classes,
            n_classes_from=y_true_name,
            where=rows_from(row_offset),
        )
        if P.shape[0] != self.n_samples:
            raise ValueError(
                f"{y_true_name} and {name} have different numbers of samples: "
                f"{self.n_samples} and {P.shape[0]} (one row per item; {name} "
                f"has {P.shape[0]} samples)."
            )
        prob_classes = _probability_classes(
            labels, frame_names(y_prob, name=name), self.n_classes, name=name
        )
        order, classes, named = None, self.classes, self.named
        if classes is None:
            # labels= names the columns of both; a DataFrame's names are only
            # the prediction's (the human labels stay positional)
            classes, named = prob_classes, labels is not None
        elif prob_classes is None:
            if named and class_order_matters:
                check_positional_classes(classes, name=name, y_true_name=y_true_name)
        else:
            order = column_order(
                prob_classes,
                classes,
                name=name if labels is None else f"{name} (labels=)",
                target_name=y_true_name,
            )
            if order is not None and not named:
                _ambiguous_order(prob_classes, classes, name, y_true_name)
        return Pair(
            self.Y,
            P,
            self.n,
            self.is_counts,
            order=order,
            renormalise=off,
            classes=classes,
            named=named,
        )


def _ambiguous_order(names, earlier, name: str, y_true_name: str):
    """Raise: two predictions name the columns of positional labels differently.

    When the human labels are an array without names, the class names come
    from the predictions alone; two predictions whose names come in
    different orders cannot both follow the labels' columns, and which one
    does is a guess (developer guide §class-names). Each on its own is positional, as a
    metric function reads it.
    """
    raise ValueError(
        f"{name} names its columns {np.asarray(names).tolist()} but another "
        f"prediction names them {np.asarray(earlier).tolist()}, and "
        f"{y_true_name} is an array without class names, so which order its "
        f"columns follow is ambiguous; pass {y_true_name} as a DataFrame whose "
        "columns name the classes (the predictions are then matched to it by "
        "name), or give every prediction its columns in the same order."
    )


def check_labels(labels, n_columns: int, *, name: str) -> np.ndarray:
    """``labels=`` as an array: 1-D, one distinct class per column of ``name``."""
    return check_class_names(labels, param="labels", n_columns=n_columns, of=name)


def _probability_classes(labels, names, n_columns: int, *, name: str):
    """Classes of ``y_prob``'s columns: ``labels``, else its names, else None."""
    if labels is None:
        return names
    labels = check_labels(labels, n_columns, name=name)
    if names is not None and labels.tolist() != names.tolist():
        raise ValueError(
            f"labels={labels.tolist()} contradict the column names of {name} "
            f"{names.tolist()}; labels= gives the class of each column of "
            f"{name}, so pass a DataFrame with the right columns or labels=, not "
            "both."
        )
    return labels


def _plain_pair(
    y_true, y_prob, allow_probabilities, y_true_name, y_prob_name, row_offset
) -> Pair | None:
    """The :class:`Pair` of the common call, or None: the general path decides.

    Counts as a plain 2-D integer (or float64) ndarray and probabilities as
    a plain ndarray, neither with names: everything the general path does
    to them besides the two scans is a no-op (no rows to match by item, no
    conversion, no classes to align), so this runs the same scans with the
    same arguments and builds the same ``Pair`` without those calls
    (developer guide §speed). Anything else, and a row count that differs
    (the general path raises), returns None.
    """
    if type(y_true) is not np.ndarray or type(y_prob) is not np.ndarray:
        return None
    if y_true.ndim != 2 or y_true.shape[1] < 2 or not y_true.shape[0]:
        return None
    if y_true.dtype.kind not in "iu" and y_true.dtype != np.float64:
        return None
    where = rows_from(row_offset)
    n, is_counts = scan_histograms(
        y_true, name=y_true_name, allow_probabilities=allow_probabilities, where=where
    )
    P, _, off = scan_probabilities(
        y_prob,
        name=y_prob_name,
        n_classes=y_true.shape[1],
        n_classes_from=y_true_name,
        where=where,
    )
    if P.shape[0] != y_true.shape[0]:
        return None
    return Pair(y_true, P, n, is_counts, renormalise=off)


def check_pair(
    y_true,
    y_prob,
    *,
    counts=None,
    labels=None,
    allow_probabilities: bool = True,
    y_true_name: str = "y_true",
    y_prob_name: str = "y_prob",
    class_order_matters: bool = True,
    row_offset: int = 0,
) -> Pair:
    """:func:`check_histograms_and_probabilities` without copies: a :class:`Pair`.

    See :func:`check_histograms_and_probabilities` for the parameters and
    the rules; the reordering of ``y_prob``'s columns and the renormalisation
    of its rows are applied block by block (:attr:`Block.P`). ``row_offset``
    is the position of the first row among all items when the arrays are a
    chunk of them (a dask block, a :class:`~sklearn_hcal.metrics.MetricState`
    update): messages then name the row as the whole array's call would.
    """
    if counts is None and labels is None:
        pair = _plain_pair(
            y_true, y_prob, allow_probabilities, y_true_name, y_prob_name, row_offset
        )
        if pair is not None:
            return pair
    if counts is not None:
        y_true, y_true_name = counts, "counts"
    y_prob = match_rows(y_true, y_prob, name=y_prob_name, y_true_name=y_true_name)
    raw = y_true.to_numpy() if hasattr(y_true, "to_numpy") else y_true
    shape = shape_of(raw, name=y_true_name)
    if len(shape) == 2 and shape[1] > 1:
        Y, n, is_counts, _ = checked_histograms(
            y_true,
            name=y_true_name,
            allow_probabilities=allow_probabilities,
            row_offset=row_offset,
        )
        human = Pair(
            Y, None, n, is_counts, classes=frame_names(y_true, name=y_true_name)
        )
        return human.with_probabilities(
            y_prob,
            labels=labels,
            name=y_prob_name,
            y_true_name=y_true_name,
            class_order_matters=class_order_matters,
            row_offset=row_offset,
        )
    # 1-D labels: the columns (and their classes) come from y_prob.
    P, _, off = scan_probabilities(
        y_prob, name=y_prob_name, where=rows_from(row_offset)
    )
    n_columns = 2 if P.ndim == 1 else P.shape[1]
    classes = _probability_classes(
        labels, frame_names(y_prob, name=y_prob_name), n_columns, name=y_prob_name
    )
    if classes is None:
        Y, classes = labels_to_histograms(
            raw,
            n_classes=n_columns,
            name=y_true_name,
            classes_param="labels",
            row_offset=row_offset,
        )
    else:
        source = "labels=" if labels is not None else f"the columns of {y_prob_name}"
        Y, _ = labels_to_histograms(
            raw,
            classes=classes,
            name=y_true_name,
            classes_param=source,
            row_offset=row_offset,
        )
    if Y.shape[0] != P.shape[0]:
        raise ValueError(
            f"{y_true_name} and {y_prob_name} have different numbers of samples: "
            f"{Y.shape[0]} and {P.shape[0]}."
        )
    return Pair(Y, P, np.ones(Y.shape[0]), True, renormalise=off, classes=classes)


def check_histograms_and_probabilities(
    y_true,
    y_prob,
    *,
    counts=None,
    labels=None,
    allow_probabilities: bool = True,
    y_true_name: str = "y_true",
    y_prob_name: str = "y_prob",
):
    """Validate a (histogram, probability) pair for a metric.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (a DataFrame's columns are the classes), rows of
        human probabilities (when ``allow_probabilities``), or 1-D labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities; a 1-D array is P(second class) of a binary
        problem. Rows within :func:`row_sum_tolerance` of 1 are accepted and
        renormalised.
    counts : array-like of shape (n_samples, n_classes), default=None
        When given, replaces ``y_true`` as the human histograms (developer guide
        §scorers, convention B: the label ``y_true`` that scikit-learn routes is
        ignored).
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob`` (in the columns' order; unlike
        :func:`sklearn.metrics.log_loss`, which assumes the columns follow
        the sorted labels, any order is allowed). Without it the classes are
        the column names of a DataFrame ``y_prob``, else positional. With a
        2-D array ``y_true`` (no names of its own) ``labels`` names the
        columns of both.
    allow_probabilities : bool, default=True
        Accept rows of human probabilities as ``y_true``.
    y_true_name, y_prob_name : str
        Argument names used in error messages.

    Returns
    -------
    Y : ndarray of shape (n_samples, n_classes)
    P : ndarray of shape (n_samples, n_classes)
        In ``Y``'s class order, rows summing to 1.

    Notes
    -----
    Class alignment (developer guide §class-names): 1-D labels map to columns through
    the classes of ``y_prob`` (an unknown label raises); without classes the
    sorted distinct labels must number ``K`` (else a ``ValueError`` asks for
    ``labels=``). When the histograms (DataFrame columns) and ``y_prob``
    (``labels`` or DataFrame columns) both carry class names, ``y_prob``'s
    columns are reordered to the histograms'; different names raise. When
    only the histograms name their classes, an unnamed ``y_prob`` follows
    them by position only if the names are in sorted order -- the order of
    every scikit-learn classifier's ``classes_``, hence of ``predict_proba``
    -- and raises otherwise, asking for ``labels=``. A DataFrame whose
    columns are the default ``RangeIndex`` carries no names.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_hcal._validation import check_histograms_and_probabilities
    >>> Y = pd.DataFrame([[3, 1]], columns=["cat", "dog"])
    >>> P = pd.DataFrame([[0.8, 0.2]], columns=["dog", "cat"])
    >>> check_histograms_and_probabilities(Y, P)[1]  # reordered to cat, dog
    array([[0.2, 0.8]])
    >>> Y, P = check_histograms_and_probabilities(
    ...     ["dog"], [[0.8, 0.2]], labels=["dog", "cat"])
    >>> Y
    array([[1., 0.]])
    """
    pair = check_pair(
        y_true,
        y_prob,
        counts=counts,
        labels=labels,
        allow_probabilities=allow_probabilities,
        y_true_name=y_true_name,
        y_prob_name=y_prob_name,
    )
    Y = pair.Y
    if Y.dtype not in (np.float64, np.float32):
        Y = Y.astype(np.float64)
    return Y, pair.probabilities()
