"""The report's inputs, checked once: the human labels and each classifier.

:func:`validate_predictions` (with :func:`validate_human` and
:func:`check_prediction`) is the one place the report functions, the
per-item tables and the Displays check their data; :class:`CheckedInputs`
carries the result down to every inner layer (developer guide
§checked-once), whose per-classifier values (:func:`column_value`) and
predicted disagreement (:func:`checked_disagreement`) read it without
scanning the caller's arrays again.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validation import check_pair, item_index, match_rows
from ._disagreement_kernels import check_disagreement_inputs
from ._engine import Human, Source, evaluate, resolve

__all__ = [
    "CheckedInputs",
    "check_prediction",
    "checked_disagreement",
    "column_value",
    "validate_human",
    "validate_predictions",
]


def validate_human(
    y_true,
    y_prob,
    counts=None,
    labels=None,
    *,
    y_prob_name="y_prob",
    allow_probabilities: bool = True,
) -> tuple[Human, Source]:
    """``(Human, Source)``: the human labels and the first classifier, validated.

    With :func:`check_prediction` the one place the report functions and the
    Displays check their inputs; classes are aligned by name as the metric
    functions align them (``labels=``, DataFrame columns; see
    :func:`~sklearn_hcal._validation.check_histograms_and_probabilities`).

    Validated inputs pass through: a ``y_true`` that is already a
    :class:`Human` is used as it is (its arrays are not scanned again) and
    only ``y_prob`` is checked against it, and a ``y_prob`` that is already
    a :class:`Source` of those labels is returned as it is -- so an inner
    layer given what an entry point validated does not re-check it.
    """
    if isinstance(y_true, Human):
        return y_true, check_prediction(y_true, y_prob, y_prob_name, labels)
    pair = check_pair(
        y_true,
        y_prob,
        counts=counts,
        labels=labels,
        allow_probabilities=allow_probabilities,
        y_prob_name=y_prob_name,
    )
    human = Human(pair, y_true_name="y_true" if counts is None else "counts")
    return human, Source(pair)


def check_prediction(human: Human, value, name: str, labels=None) -> Source:
    """A further classifier's probabilities against the validated labels.

    Checked and aligned by name exactly as the first classifier's
    (:meth:`~sklearn_hcal._validation.Pair.with_probabilities`): a DataFrame
    ``value`` has its columns put in the labels' class order. When the human
    labels are an array without class names, every prediction that names its
    columns must name them in the same order (else which order the labels'
    columns follow is ambiguous, and a ValueError says so). A ``value`` that
    is already a :class:`Source` of these labels is returned as it is.
    """
    if isinstance(value, Source):
        if value.pair.Y is not human.pair.Y:
            raise ValueError(
                f"{name} was validated against other human labels; pass its "
                "probabilities, or the labels it was validated with."
            )
        return value
    pair = human.reference.with_probabilities(
        value, labels=labels, name=name, y_true_name=human.y_true_name
    )
    if human.reference.classes is None and pair.classes is not None:
        human.reference = pair
    return Source(pair)


class CheckedInputs:
    """The validated inputs of a report: the human labels and each classifier.

    Built once by a public entry point (:func:`validate_predictions`) and
    handed down as it is: the report's table (:func:`report_table`), the
    per-item tables, the Displays' inner functions and the HTML file read
    ``human`` (a :class:`Human`) and ``sources`` (``{name: Source}``, each
    classifier's probabilities in the labels' class order), never the
    caller's arrays again (developer guide §checked-once). ``items`` are the
    labels' items when they came indexed by item (else None): the per-item
    inputs given later (a report's ``disagreement``) are matched to them
    (developer guide §rows).
    """

    def __init__(self, human: Human, sources: dict, items=None) -> None:
        self.human = human
        self.sources = dict(sources)
        self.items = items

    @property
    def classes(self):
        """The class names of the columns (None: positional)."""
        return self.human.reference.classes

    def probabilities(self) -> dict:
        """``{name: (n_samples, n_classes) probabilities}`` in the labels' order.

        Float64 rows summing to 1 (renormalised where off by rounding),
        made once from the checked arrays.
        """
        cached = self.__dict__.get("_probabilities")
        if cached is None:
            cached = self._probabilities = {
                name: np.asarray(source.pair.probabilities(), dtype=np.float64)
                for name, source in self.sources.items()
            }
        return cached


def validate_predictions(
    y_true,
    predictions: Mapping,
    counts=None,
    labels=None,
    *,
    what: str = "predictions",
    allow_probabilities: bool = True,
    keyed: bool = False,
) -> CheckedInputs:
    """:class:`CheckedInputs` of the labels and ``{name: probabilities}``.

    The labels and the first classifier are checked by :func:`validate_human`,
    every further classifier by :func:`check_prediction` against them (the
    labels are scanned once, each prediction once). Messages name one of
    several predictions, or one the caller gave in a dict (``keyed``),
    ``what[name]``, and a single prediction given alone ``y_prob``.
    """
    names = list(predictions)
    single = len(names) == 1 and not keyed
    first = "y_prob" if single else f"{what}[{names[0]!r}]"
    human, source = validate_human(
        y_true,
        predictions[names[0]],
        counts,
        labels,
        y_prob_name=first,
        allow_probabilities=allow_probabilities,
    )
    sources = {names[0]: source}
    items = item_index(y_true if counts is None else counts)
    for name in names[1:]:
        value = match_rows(
            items,
            predictions[name],
            name=f"{what}[{name!r}]",
            y_true_name=human.y_true_name,
        )
        sources[name] = check_prediction(human, value, f"{what}[{name!r}]", labels)
    return CheckedInputs(human, sources, items)


def column_value(human: Human, source: Source, column: str, **params) -> float:
    """One report column of one validated classifier, with ``params``.

    The engine's value (:func:`~._engine.evaluate`), as the report's table
    has it, without the table: a Display's number (the ECE in its legend).
    """
    columns = resolve([column], human, {column: params} if params else None)
    return float(evaluate(columns, human, source)[0])


def checked_disagreement(inputs: CheckedInputs, name: str, value):
    """``(μ̂, φ, valid)`` of a classifier's own predicted disagreement ``value``.

    The disagreement metrics' own validation of ``φ`` (values, shape,
    tolerance) against the validated labels, which are not scanned again;
    rows matched to the labels' items (developer guide §rows). One function
    for the report's table and its figure, so the two read ``φ`` alike.
    """
    human = inputs.human
    value = match_rows(
        inputs.items,
        value,
        name=f"disagreement[{name!r}]",
        y_true_name=human.y_true_name,
    )
    try:
        return check_disagreement_inputs(human.pair, value, None)
    except ValueError as exc:
        raise ValueError(f"disagreement[{name!r}]: {exc}") from None
