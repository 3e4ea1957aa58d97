"""Counting the value scans of the inputs (developer guide §checked-once).

Every check of a histogram's, a probability matrix's, a label vector's or a
``φ``'s values is one of :data:`SCANS`, the entries of
``sklearn_hcal._validation`` that read an array's values (the others only
read shapes or names, or call these). :func:`count_scans` wraps each of them
wherever a module of the package has imported it (the face, the module
that defines it, every ``from .._validation import ...``) and counts the
calls per input, recognising an input by its values: the command line
reads a copy from a file, a DataFrame arrives as its array.
"""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import contextmanager

import numpy as np
import pytest

from sklearn_hcal import _validation

#: The value scans: histograms (and, through them, ``checked_histograms``
#: and ``check_label_histograms``), probabilities (``check_probabilities``,
#: the pair checks, the command line's reader), label vectors, finiteness
#: (logits), the calibrators' detection of probabilities, and ``φ``.
SCANS = (
    "scan_histograms",
    "scan_probabilities",
    "labels_to_histograms",
    "check_finite",
    "all_finite",
    "looks_like_probabilities",
    "check_disagreement",
)


def _as_float(value):
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None


class Scans:
    """The calls counted: ``(input name, scan name) -> count``."""

    def __init__(self, inputs: dict):
        # an input given as a tuple has several forms: the same values in
        # another column order (a file's), each counting as that input
        self._inputs = {}
        for name, value in inputs.items():
            forms = value if isinstance(value, tuple) else (value,)
            self._inputs[name] = [_as_float(form) for form in forms]
        self.calls = Counter()

    def _which(self, value) -> str:
        arr = _as_float(value)
        if arr is not None:
            for name, forms in self._inputs.items():
                for ref in forms:
                    if arr.shape == ref.shape and np.array_equal(arr, ref):
                        return name
        return "other"

    def count(self, scan: str, value) -> None:
        self.calls[(self._which(value), scan)] += 1

    def per_input(self) -> dict:
        """``{input name: scans of it}`` for every input given (0 included)."""
        out = dict.fromkeys(self._inputs, 0)
        for (name, _), count in self.calls.items():
            if name in out:
                out[name] += count
        return out

    def reset(self) -> None:
        self.calls.clear()


@contextmanager
def count_scans(inputs: dict):
    """Count the value scans of ``inputs`` (``{name: array}``) in the block.

    An input may be a tuple of arrays: its forms (e.g. as a file holds it
    and as aligned to the labels), whose scans all count for it.

    Yields a :class:`Scans`. The modules imported in the block (lazily, by
    a function) import the wrapped scans from the face, so they count too.
    """
    scans = Scans(inputs)
    originals = {name: getattr(_validation, name) for name in SCANS}
    by_id = {id(func): name for name, func in originals.items()}

    def counted(name, func):
        def scan(*args, **kwargs):
            scans.count(name, args[0] if args else next(iter(kwargs.values())))
            return func(*args, **kwargs)

        return scan

    wrappers = {name: counted(name, func) for name, func in originals.items()}
    with pytest.MonkeyPatch.context() as patch:
        for module, attr, value in _bindings():
            name = by_id.get(id(value))
            if name is not None and value is originals[name]:
                patch.setattr(module, attr, wrappers[name])
        try:
            yield scans
        finally:
            # a module first imported in the block bound a wrapper itself
            restore = {id(wrappers[name]): originals[name] for name in wrappers}
            for module, attr, value in _bindings():
                if id(value) in restore:
                    setattr(module, attr, restore[id(value)])


def _bindings():
    """``(module, name, value)`` of every global of the package's modules."""
    for module_name, module in list(sys.modules.items()):
        if module is not None and module_name.startswith("sklearn_hcal"):
            for attr, value in list(vars(module).items()):
                yield module, attr, value
