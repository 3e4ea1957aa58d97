"""Docstring blocks written once and substituted where they are used.

The metric functions, report functions and Displays share the description of
their data arguments (``y_true``, ``y_prob``, ``counts``, ``labels``), and the
transformers what ``get_feature_names_out`` takes. Each
block is written once here; a docstring names it with a ``%(name)s`` token on
a line of its own, and :func:`fill_doc` replaces the token with the block,
indented like the token. Only these tokens are replaced, so a literal ``%``
elsewhere in a docstring needs no escaping.

Apply :func:`fill_doc` *below* ``validate_params`` (it must run first), so
the validated wrapper copies the filled docstring.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["DOC_BLOCKS", "fill_doc"]

#: The shared blocks, numpydoc parameter entries without indentation.
DOC_BLOCKS = {
    "y_true": """\
y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
    Label histograms (non-negative integer counts), rows of human
    probabilities summing to one, or 1-D class labels (one annotation per
    item). A DataFrame's columns are the classes.""",
    "y_true_counts": """\
y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
    Label histograms: non-negative integer counts (the estimator needs the
    number of annotations of each item), or 1-D class labels (one annotation
    per item). A DataFrame's columns are the classes.""",
    "y_prob": """\
y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
    Predicted probabilities; for two classes a 1-D array is the probability
    of the second class.""",
    "counts": """\
counts : array-like of shape (n_samples, n_classes), default=None
    When given, replaces ``y_true`` as the human histograms (for metadata
    routing, where ``y_true`` is a label vector).""",
    "y_set": """\
y_set : array-like of bool, shape (n_samples, n_classes)
    Prediction sets.""",
    "set_labels": """\
labels : array-like of shape (n_classes,), default=None
    The class of each column of ``y_set``.""",
    "y_score": """\
y_score : array-like of shape (n_samples,), default=None
    Deferral scores (higher: deferred first); ``None``: ``1 − max_k q_k``.""",
    "risk": """\
risk : {"disagreement", "kl"}, default="disagreement"
    Per-item risk against the human distribution.""",
    "aggregation_table": """\
classes : array-like of shape (n_classes,), default=None
    The classes, in the order of the posterior columns; a class nobody
    chose gets a column, and a label outside ``classes`` is an error.
    None: the sorted distinct labels (at least two).
item : hashable, default="item"
    The column of ``X`` identifying the item.
annotator : hashable, default="annotator"
    The column of ``X`` identifying the annotator.
label : hashable, default="label"
    The column of ``X`` holding the label (unless ``y`` is passed to
    ``fit``). The defaults are the columns of
    ``load_lewidi(...).annotations``.""",
    "annotations": """\
X : DataFrame
    One row per annotation: item, annotator and label columns.""",
    "annotations_fit": """\
X : DataFrame
    One row per annotation: item, annotator and label columns.
y : array-like of shape (n_annotations,), default=None
    The labels, when ``X`` has no label column.""",
    "aggregation_fitted": """\
classes_ : ndarray of shape (n_classes,)
    The classes, the columns of the posteriors.
items_ : Index of shape (n_items,)
    The items seen in ``fit``, sorted: the rows of ``posteriors_``.
annotators_ : Index of shape (n_annotators,)
    The annotators seen in ``fit``, sorted: the order of every
    per-annotator attribute.
posteriors_ : DataFrame of shape (n_items, n_classes)
    Each item's posterior distribution of its true class (what
    ``fit_transform`` returns).
class_prior_ : ndarray of shape (n_classes,)
    The truth's distribution for an item without annotations (the
    posterior of items unseen in ``fit``).""",
    "names_out_ignored": """\
Parameters
----------
input_features : None
    Ignored.

Returns
-------
names : ndarray of str""",
    "labels": """\
labels : array-like of shape (n_classes,), default=None
    The class of each column of ``y_prob`` (default: a DataFrame's column
    names, else positional); see "Classes" in :mod:`sklearn_hcal.metrics`.""",
}

#: The data arguments of the metrics on an ordered scale (``_ordinal``).
DOC_BLOCKS["ordinal_data"] = "\n".join(
    [
        """\
y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
    Label histograms, rows of human probabilities or 1-D labels; the
    columns are the scale, in order (see ``order``).""",
        DOC_BLOCKS["y_prob"],
        DOC_BLOCKS["counts"],
        DOC_BLOCKS["labels"],
        """\
order : array-like of shape (n_classes,), default=None
    The class names in scale order; columns are matched to it by name.
    None: the column order is the scale order.""",
    ]
)

_TOKEN = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$", re.M)


def fill_doc(obj):
    """Replace each ``%(name)s`` line of ``obj.__doc__`` with ``DOC_BLOCKS[name]``.

    Parameters
    ----------
    obj : function or class
        Its docstring is rewritten in place.

    Returns
    -------
    obj
        The same object, so ``fill_doc`` can be used as a decorator.

    Examples
    --------
    >>> from sklearn_hcal.utils._docstrings import fill_doc
    >>> @fill_doc
    ... def f(y_prob):
    ...     '''Parameters
    ...     ----------
    ...     %(y_prob)s
    ...     '''
    >>> print(f.__doc__.splitlines()[2].strip())
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
    """
    doc = obj.__doc__
    if not doc:
        return obj

    def substitute(match):
        name = match.group("name")
        if name not in DOC_BLOCKS:
            raise KeyError(f"{obj.__qualname__}: no shared docstring block {name!r}")
        return textwrap.indent(DOC_BLOCKS[name], match.group("indent"))

    obj.__doc__ = _TOKEN.sub(substitute, doc)
    return obj
