"""``CalibrationReport``: the metric table for people, in a notebook or a file.

Why one module: one class; the HTML, the table's layout and the figures
live beside it (``_html``, ``_table``, ``_figures``), and some 240 of its
lines are documentation.

The numbers are those of :func:`~sklearn_hcal.metrics.human_calibration_report`
(its DataFrame is kept unchanged in :attr:`CalibrationReport.table`); this
object only lays them out: intervals in the value's cell, the best value of
each column marked, direction arrows and a legend from the metric registry
(:mod:`sklearn_hcal.report._legend`), and -- when it holds the data -- a
summary of the labels and the figures of :mod:`sklearn_hcal.plotting`.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..utils._compat import HasMethods, Interval, StrOptions, validate_params
from ..utils._pipeline import disagreement_method, labelled_proba
from ..utils._warnings import warn_user
from . import _html
from ._figures import CAPTIONS, draw_figures, plotting_unavailable, png_data_uri
from ._legend import legend_rows
from ._table import cell_texts, metric_columns, plain_table_html, table_html

__all__ = ["CalibrationReport", "report_inputs"]

_TITLE = "Human-calibration report"


class CalibrationReport:
    """A human-calibration report with a rich display and a single-file HTML form.

    In a notebook (Jupyter, sphinx-gallery) the object renders as the metric
    table with each bootstrap interval in its value's cell (``value [low,
    high]``), a direction arrow per column (↑ higher is better, ↓ lower is
    better), the best model of each column in bold with a ``★``, and a legend
    generated from the metric registry: what each metric measures, its
    direction, whether it is a proper score, and the paper it comes from.
    :meth:`to_html` writes the same, with a summary of the data and the
    figures, as one HTML file that loads nothing from anywhere (figures are
    embedded PNG images; no script).

    Build it with :meth:`from_estimator` (fitted classifiers and the items'
    features: each one's ``predict_proba`` and, when it has one, its own
    ``predict_disagreement``), with :meth:`from_predictions` (their
    probabilities; both compute the table and keep the data for the summary
    and the figures), or wrap a table that
    :func:`~sklearn_hcal.metrics.human_calibration_report` returned (then the
    file has no figures unless ``y_true`` and ``predictions`` are given too).
    The table itself stays a plain DataFrame: use :attr:`table` for
    computations.

    Parameters
    ----------
    table : DataFrame
        A :func:`~sklearn_hcal.metrics.human_calibration_report` table: one
        row per classifier, a column per metric ``m``, followed by ``m_low``
        and ``m_high`` when bootstrapped. Columns may be short names
        (``jsd``), long names (``jensen_shannon_distance``) or scorer names.
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,), \
default=None
        The human labels the table was computed from (label histograms, rows
        of human probabilities or 1-D labels): the data summary and figures.
    predictions : dict of str to array-like of shape (n_samples, n_classes), \
default=None
        The classifiers' probabilities, by name (needed with ``y_true``).
    labels : array-like of shape (n_classes,), default=None
        The class of each column of the predictions, as for the report.
    disagreement : dict of str to array-like of shape (n_samples,), default=None
        A classifier's own predicted disagreement ``φ`` for the disagreement
        figure (default ``1 − Σ_k q_k²``).
    annotator_table : DataFrame, default=None
        A per-annotator or per-group table
        (:func:`~sklearn_hcal.metrics.annotator_report`), shown as is.
    aliases : dict of str to str, default=None
        Columns that report a registry metric under another name, e.g.
        ``{"el_prior": "el"}``: they get its direction and legend line.
        Other columns that are not registry metrics are shown without a
        direction.
    notes : list of str, default=None
        Paragraphs shown after the figures.
    title : str, default=None
        The heading (default "Human-calibration report").
    digits : int, default=4
        Decimals of every number, as in the command line's tables.

    See Also
    --------
    sklearn_hcal.metrics.human_calibration_report : The table's numbers.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.report import CalibrationReport
    >>> Y = np.array([[8, 2], [5, 5], [1, 9], [7, 3]])
    >>> report = CalibrationReport.from_predictions(
    ...     Y, {"oracle": Y / 10, "uniform": np.full((4, 2), 0.5)},
    ...     metrics=["accuracy", "jsd"], n_bootstrap=50, random_state=0)
    >>> list(report.table.columns)  # the DataFrame of human_calibration_report
    ['accuracy', 'accuracy_low', 'accuracy_high', 'jsd', 'jsd_low', 'jsd_high']
    >>> print(report.formatted(digits=2))  # what the displays show
                         accuracy                jsd
    classifier
    oracle      1.00 [1.00, 1.00]  0.00 [0.00, 0.00]
    uniform     0.75 [0.31, 1.00]  0.17 [0.06, 0.28]
    >>> report.legend().loc["jsd", "direction"]
    'lower is better'
    >>> html = report.to_html()  # a complete page; to_html("r.html") writes it
    >>> html.startswith("<!DOCTYPE html>"), "<script" in html
    (True, False)
    """

    def __init__(
        self,
        table,
        *,
        y_true=None,
        predictions=None,
        labels=None,
        disagreement=None,
        annotator_table=None,
        aliases=None,
        notes=None,
        title=None,
        digits=4,
    ):
        self.table = table
        self.y_true = y_true
        self.predictions = predictions
        self.labels = labels
        self.disagreement = disagreement
        self.annotator_table = annotator_table
        self.aliases = aliases
        self.notes = notes
        self.title = title
        self.digits = digits

    @classmethod
    @validate_params(
        {
            "y_true": ["array-like"],
            "predictions": [Mapping, "array-like"],
            "counts": ["array-like", None],
            "annotator_table": [pd.DataFrame, None],
            "title": [str, None],
            "digits": [Interval(numbers.Integral, 0, None, closed="left")],
        },
        prefer_skip_nested_validation=False,
    )
    def from_predictions(
        cls,
        y_true,
        predictions,
        *,
        counts=None,
        labels=None,
        annotator_table=None,
        title=None,
        digits=4,
        **report_params,
    ):
        """Compute the report and keep the data for the summary and figures.

        Parameters
        ----------
        y_true, predictions, counts, labels
            As for :func:`~sklearn_hcal.metrics.human_calibration_report`.
        annotator_table, title, digits
            See the class parameters.
        **report_params
            The other keyword arguments of
            :func:`~sklearn_hcal.metrics.human_calibration_report`
            (``metrics``, ``metric_params``, ``disagreement``,
            ``n_bootstrap``, ``confidence_level``, ``ci_method``,
            ``random_state``, ``n_jobs``, ``verbose``).

        Returns
        -------
        report : CalibrationReport
        """
        from ..metrics._shared import (
            as_prediction_dict,
            report_table,
            validate_predictions,
        )

        if report_params.get("return_bootstrap"):
            raise ValueError(
                "return_bootstrap is not a parameter of from_predictions; call "
                "human_calibration_report(..., return_bootstrap=True) for the "
                "replicates and wrap its table in CalibrationReport(table, ...)."
            )
        keyed = isinstance(predictions, Mapping)
        predictions = as_prediction_dict(predictions)
        # Validated once: the table, the summary and the figures all read
        # these (developer guide §checked-once).
        inputs = validate_predictions(y_true, predictions, counts, labels, keyed=keyed)
        report = cls(
            report_table(inputs, **report_params),
            y_true=y_true if counts is None else counts,
            predictions=predictions,
            labels=labels,
            disagreement=report_params.get("disagreement"),
            annotator_table=annotator_table,
            title=title,
            digits=digits,
        )
        report._keep_inputs(inputs)
        return report

    @classmethod
    @validate_params(
        {
            "estimator": [Mapping, HasMethods(["predict_proba"])],
            "X": ["array-like", "sparse matrix"],
            "y": ["array-like", None],
            "counts": ["array-like", None],
            "name": [str, None],
            "response_method": [StrOptions({"auto", "predict_proba"})],
            "annotator_table": [pd.DataFrame, None],
            "title": [str, None],
            "digits": [Interval(numbers.Integral, 0, None, closed="left")],
        },
        prefer_skip_nested_validation=False,
    )
    def from_estimator(
        cls,
        estimator,
        X,
        y=None,
        *,
        counts=None,
        name=None,
        response_method="auto",
        annotator_table=None,
        title=None,
        digits=4,
        **report_params,
    ):
        """The report of fitted classifiers on the items ``X`` and their labels.

        Each classifier's ``predict_proba(X)`` is the prediction, its columns
        named by its ``classes_`` (matched by name with a DataFrame ``y`` or
        1-D labels). A classifier with a ``predict_disagreement`` (an
        :class:`~sklearn_hcal.AlphaCalibrator`, an ensemble, also as the last
        step of a Pipeline) is scored on its own predicted disagreement in
        the disagreement columns and figure; the others on their point
        prediction's ``1 − Σ_k q_k²``. The data summary says which.

        Parameters
        ----------
        estimator : fitted classifier or dict of str to fitted classifier
            One classifier (named ``name``, by default its class name), or
            ``{name: classifier}`` for several, compared row by row.
        X : array-like of shape (n_samples, n_features)
            The items, as each classifier takes them.
        y : array-like of shape (n_samples, n_classes) or (n_samples,), \
default=None
            The human labels: label histograms (a DataFrame's columns name
            the classes), rows of human probabilities, or 1-D labels.
        counts : array-like of shape (n_samples, n_classes), default=None
            Histograms that replace ``y``, as for the metrics.
        name : str, default=None
            The name of a single classifier (a dict's keys name its own).
        response_method : {"auto", "predict_proba"}, default="auto"
            Where the predicted disagreement comes from: ``"auto"`` a
            classifier's ``predict_disagreement`` when it has one, else
            ``1 − Σ_k q_k²`` of ``predict_proba``; ``"predict_proba"`` the
            latter for every classifier.
        annotator_table, title, digits
            See the class parameters.
        **report_params
            The other keyword arguments of
            :func:`~sklearn_hcal.metrics.human_calibration_report`
            (``metrics``, ``metric_params``, ``n_bootstrap``,
            ``confidence_level``, ``ci_method``, ``random_state``,
            ``n_jobs``, ``verbose``); ``labels`` and ``disagreement`` come
            from the classifiers.

        Returns
        -------
        report : CalibrationReport

        Raises
        ------
        ValueError
            When a component of a classifier has ``predict_disagreement`` out
            of reach (e.g. behind ``GridSearchCV``): ``1 − Σ q²`` would then
            score another model than the one fitted; pass that component.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.frozen import FrozenEstimator
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn_hcal import AlphaCalibrator
        >>> from sklearn_hcal.datasets import make_label_histograms
        >>> from sklearn_hcal.report import CalibrationReport
        >>> X, Y, _ = make_label_histograms(1500, n_classes=3, n_annotations=5,
        ...                                 concentration=1.0, random_state=0)
        >>> clf = LogisticRegression().fit(X[:500], Y[:500].argmax(axis=1))
        >>> alpha = AlphaCalibrator(FrozenEstimator(clf)).fit(X[500:1000],
        ...                                                 Y[500:1000])
        >>> report = CalibrationReport.from_estimator(
        ...     {"raw": clf, "alpha": alpha}, X[1000:], Y[1000:],
        ...     metrics=["kl", "disagreement_sq_loss"])
        >>> table = report.table
        >>> bool(table.loc["raw", "kl"] == table.loc["alpha", "kl"])  # same f
        True
        >>> bool(table.loc["alpha", "disagreement_sq_loss"]
        ...      < table.loc["raw", "disagreement_sq_loss"])  # its own φ
        True
        """
        for param in ("labels", "disagreement", "return_bootstrap"):
            if param in report_params:
                raise ValueError(
                    f"{param} is not a parameter of from_estimator: the classes "
                    "and the predicted disagreement come from the classifiers; "
                    f"call from_predictions to give {param}= yourself."
                )
        from ..metrics._shared import as_prediction_dict

        default = "" if isinstance(estimator, Mapping) else type(estimator).__name__
        estimators = as_prediction_dict(
            estimator, name, default=default, what="estimator"
        )
        predictions, disagreement = {}, {}
        for key, model in estimators.items():
            label = f"estimator {key!r} ({type(model).__name__})"
            predictions[key] = labelled_proba(model, X, label)
            if response_method == "auto":
                method = disagreement_method(model, label=label, user="the report")
                if method is not None:
                    disagreement[key] = np.asarray(method(X), dtype=np.float64)
        with warnings.catch_warnings():
            # φ is given whenever a classifier has it; without a disagreement
            # column (no item with two labels, or metrics=) it is simply unused
            warnings.filterwarnings(
                "ignore", message="disagreement is given but no disagreement"
            )
            return cls.from_predictions(
                y,
                predictions,
                counts=counts,
                annotator_table=annotator_table,
                title=title,
                digits=digits,
                disagreement=disagreement or None,
                **report_params,
            )

    # ------------------------------------------------------------------ #
    # the pieces
    # ------------------------------------------------------------------ #
    def _check(self) -> None:
        if not isinstance(self.table, pd.DataFrame):
            raise ValueError(
                "table must be a DataFrame returned by human_calibration_report, "
                f"got {type(self.table).__name__}."
            )
        for axis, what in (
            (self.table.index, "classifier"),
            (self.table.columns, "column"),
        ):
            repeated = axis[axis.duplicated()]
            if len(repeated):
                # each row is a classifier and each cell is looked up by name:
                # pandas would answer "the truth value of a Series is ambiguous"
                where = np.flatnonzero(axis == repeated[0]).tolist()
                raise ValueError(
                    f"The table names the {what} {repeated[0]!r} more than once "
                    f"(positions {where}); each {what} needs its own name, e.g. "
                    "rename one or build the table with unique names."
                )
        digits = self.digits
        if not isinstance(digits, numbers.Integral) or isinstance(digits, bool):
            raise ValueError(f"digits must be a non-negative integer, got {digits!r}.")
        if digits < 0:
            raise ValueError(f"digits must be a non-negative integer, got {digits}.")
        if (self.y_true is None) != (self.predictions is None):
            raise ValueError(
                "y_true and predictions go together: pass both (for the data "
                "summary and the figures) or neither."
            )
        if self.annotator_table is not None and not isinstance(
            self.annotator_table, pd.DataFrame
        ):
            raise ValueError(
                "annotator_table must be a DataFrame (annotator_report's), got "
                f"{type(self.annotator_table).__name__}."
            )

    def formatted(self, digits: int | None = None) -> pd.DataFrame:
        """The table as text: ``value [low, high]`` per metric column.

        Parameters
        ----------
        digits : int, default=None
            Decimals; by default the report's ``digits``.

        Returns
        -------
        cells : DataFrame of str
            One row per classifier, one column per metric (the interval
            bounds are in the cells).
        """
        self._check()
        return cell_texts(self.table, self.digits if digits is None else digits)

    def legend(self) -> pd.DataFrame:
        """The legend, one row per metric column, from the metric registry.

        Returns
        -------
        legend : DataFrame
            Index: the columns; columns ``metric`` (the long name),
            ``direction`` ("higher is better", "lower is better" or "no
            better side"), ``proper`` ("yes", "no" or "–" when the registry
            does not say), ``description`` and ``source``.
        """
        self._check()
        rows = legend_rows(metric_columns(self.table), self.aliases)
        frame = pd.DataFrame(rows).set_index("column")
        return frame.drop(columns="arrow")

    def _data_key(self) -> tuple:
        """What the validated inputs were made from: the objects themselves."""
        predictions = self.predictions
        if isinstance(predictions, Mapping):
            predictions = tuple(predictions.items())
        return (self.y_true, predictions, self.labels)

    def _keep_inputs(self, inputs) -> None:
        self._inputs = (self._data_key(), inputs)

    def _checked_inputs(self):
        """The labels and predictions validated, once per report.

        Kept with the objects they were made from, and made again only when
        ``y_true``, ``predictions`` or ``labels`` were replaced (compared by
        identity: comparing the values would scan them).
        """
        key = self._data_key()
        kept = self.__dict__.get("_inputs")
        if kept is not None and _same_objects(kept[0], key):
            return kept[1]
        from ..metrics._shared import as_prediction_dict, validate_predictions

        inputs = validate_predictions(
            self.y_true,
            as_prediction_dict(self.predictions),
            None,
            self.labels,
            keyed=isinstance(self.predictions, Mapping),
        )
        self._keep_inputs(inputs)
        return inputs

    def __getstate__(self) -> dict:
        # the validated inputs are a cache: a copy made from the state
        # validates its data again when it draws
        state = dict(self.__dict__)
        state.pop("_inputs", None)
        return state

    def _data(self):
        """``(validated inputs, class names)`` of the summary and the figures."""
        inputs = self._checked_inputs()
        classes = inputs.human.pair.classes
        class_names = None if classes is None else [str(c) for c in classes]
        return inputs, class_names

    def _summary(self, human=None, class_names=None) -> list:
        table = self.table
        items = []
        n_samples = (
            human.n_samples if human is not None else table.attrs.get("n_samples")
        )
        if n_samples is not None:
            items.append(("items", f"{n_samples:,}"))
        if human is not None:
            k = human.n_classes
            named = f" ({', '.join(class_names)})" if class_names else ""
            items.append(("classes", f"{k}{named}"))
            if human.is_counts:
                n = np.asarray(human.n, dtype=np.float64)
                lo, hi = int(n.min()), int(n.max())
                text = (
                    f"{lo} on every item"
                    if lo == hi
                    else f"{lo} to {hi} (mean {n.mean():.2f}); "
                    f"{int(np.sum(n >= 2)):,} items have 2 or more"
                )
            else:
                text = "none known: the human labels are rows of probabilities"
            items.append(("annotations per item", text))
        names = [str(i) for i in table.index]
        items.append(("classifiers", f"{len(names)} ({', '.join(names)})"))
        if human is not None and self.disagreement:
            # which φ the disagreement columns and figure show, per classifier
            own = [n for n in names if n in self.disagreement]
            point = [n for n in names if n not in self.disagreement]
            words = [f"{', '.join(own)}: the classifier's own"]
            if point:
                words.append(f"{', '.join(point)}: 1 − Σ q² of its probabilities")
            items.append(("predicted disagreement φ", "; ".join(words)))
        annot = self.annotator_table
        if annot is not None:
            if "n_annotators" in annot.columns:
                items.append(("annotator groups", f"{len(annot):,}"))
                items.append(("annotators", f"{int(annot['n_annotators'].sum()):,}"))
            else:
                items.append(("annotators", f"{len(annot):,}"))
        items.append(("intervals", self._interval_words()))
        return items

    def _interval_words(self) -> str:
        attrs = self.table.attrs
        n_boot = attrs.get("n_bootstrap")
        has_bounds = any(str(c).endswith("_low") for c in self.table.columns)
        if not has_bounds:
            return "none (no bootstrap)"
        if not n_boot:
            return "in brackets"
        level = attrs.get("confidence_level")
        method = str(attrs.get("ci_method") or "").replace("_", "-")
        level = f"{level:.0%} " if level else ""
        return (
            f"{level}{method} bootstrap intervals over the items in brackets "
            f"({n_boot:,} resamples, the same for every classifier)"
        )

    def _caption(self) -> str:
        words = "★ best of its column; ↑ higher is better, ↓ lower is better."
        if any(str(c).endswith("_low") for c in self.table.columns):
            interval = self._interval_words()
            return f"{interval[0].upper()}{interval[1:]}. {words}"
        return words

    def _body(self, *, figures: bool, anchors: bool, heading: str) -> str:
        self._check()
        human = class_names = None
        shown, note = [], None
        if self.y_true is not None:
            inputs, class_names = self._data()
            human = inputs.human
            if figures:
                shown, note = self._figures(inputs, self.disagreement, class_names)
        annotators = None
        if self.annotator_table is not None:
            annotators = plain_table_html(self.annotator_table, digits=self.digits)
        return _html.fragment(
            title=self.title or _TITLE,
            summary=self._summary(human, class_names),
            table=table_html(
                self.table,
                digits=self.digits,
                aliases=self.aliases,
                caption=self._caption(),
                links=anchors,
            ),
            legend=_html.legend_html(
                legend_rows(metric_columns(self.table), self.aliases), anchors=anchors
            ),
            figures=shown,
            figures_note=note,
            annotators=annotators,
            notes=list(self.notes or ()),
            heading=heading,
        )

    @staticmethod
    def _figures(inputs, disagreement, class_names):
        reason = plotting_unavailable()
        if reason is not None:
            warn_user(f"The HTML report has no figures: {reason}.")
            return [], f"No figures: {reason}."
        from ..utils._optional import import_optional

        plt = import_optional("matplotlib.pyplot")
        shown = []
        for stem, fig in draw_figures(
            inputs, disagreement, marginals=True, class_names=class_names
        ):
            try:
                uri, width, height = png_data_uri(fig)
            finally:
                plt.close(fig)
            shown.append((stem, uri, width, height, CAPTIONS[stem]))
        return shown, None

    # ------------------------------------------------------------------ #
    # the displays
    # ------------------------------------------------------------------ #
    def _repr_html_(self) -> str:
        # The notebook display: no figures (they belong in the file), no ids
        # (several reports share a notebook page).
        return self._body(figures=False, anchors=False, heading="h3")

    def __repr__(self) -> str:
        try:
            text = self.formatted().to_string()
        except ValueError:
            return f"{type(self).__name__}(<invalid table>)"
        return f"{type(self).__name__}\n{text}"

    def to_html(self, path=None, *, figures: bool = True):
        """The report as one self-contained HTML page.

        The page holds a summary of the data (when the report has it), the
        metric table, the legend, the figures as embedded PNG images, the
        per-annotator table and the notes. It loads nothing: no script, no
        style or font from another host (its Content-Security-Policy forbids
        any fetch), and reads the same without JavaScript.

        Parameters
        ----------
        path : str or path-like, default=None
            Where to write it (UTF-8); None returns the text.
        figures : bool, default=True
            Draw the figures (needs matplotlib; without it the page says so
            and a ``UserWarning`` is raised). Ignored without data.

        Returns
        -------
        html : str or None
            The page when ``path`` is None, else None.
        """
        from .. import __version__

        body = self._body(figures=figures, anchors=True, heading="h2")
        page = _html.document(
            body,
            title=self.title or _TITLE,
            footer=f"Written by sklearn-hcal {__version__}.",
        )
        if path is None:
            return page
        Path(path).write_text(page, encoding="utf-8")
        return None


def _same_objects(kept: tuple, key: tuple) -> bool:
    """Whether two ``_data_key`` tuples hold the same objects, one by one."""
    y_true, predictions, labels = kept
    y_true_now, predictions_now, labels_now = key
    if y_true is not y_true_now or labels is not labels_now:
        return False
    if isinstance(predictions, tuple) and isinstance(predictions_now, tuple):
        return len(predictions) == len(predictions_now) and all(
            a == c and b is d for (a, b), (c, d) in zip(predictions, predictions_now)
        )
    return predictions is predictions_now


def report_inputs(report: CalibrationReport):
    """The validated labels and predictions of ``report`` (``CheckedInputs``).

    Those its table was computed from (:meth:`CalibrationReport.from_predictions`),
    else validated now, once: the command line draws its ``--plots`` from
    them without checking the data again.
    """
    report._check()
    if report.y_true is None:
        raise ValueError("The report holds no data (y_true and predictions).")
    return report._checked_inputs()
