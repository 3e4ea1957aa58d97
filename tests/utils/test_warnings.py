"""Warnings point at the user's line, and each is worded once.

A warning's file and line are what the user reads and what ``warnings``
filters key on; the package's warnings find the first frame outside the
package, scikit-learn, joblib and skorch (``utils/_warnings.py``) instead of
counting frames by hand, so a wrapper added between the entry point and
the warning cannot make them point into the library (developer guide
§warnings).
"""

import ast
import re
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV

import sklearn_hcal
from sklearn_hcal import TemperatureScaler
from sklearn_hcal.aggregation import DawidSkene, MajorityVote, Wawa
from sklearn_hcal.metrics import epistemic_loss, human_calibration_report
from sklearn_hcal.perspectivist import PerspectivistClassifier
from sklearn_hcal.utils._warnings import library_prefixes, warn_user

PACKAGE = Path(sklearn_hcal.__file__).parent


def _caught(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    assert caught, "no warning"
    return caught


def _constant_scores():
    Y = np.array([[3, 1], [1, 3], [2, 2], [0, 4]])
    return np.zeros((4, 2)), Y


def _crowd():
    return pd.DataFrame(
        {
            "item": ["a", "a", "b", "b", "c", "c"],
            "annotator": ["u", "v", "u", "v", "u", "v"],
            "label": ["x", "y", "x", "x", "y", "y"],
        }
    )


def _unseen_annotator():
    return pd.DataFrame({"item": ["a"], "annotator": ["new"]})


def _perspectivist_unseen():
    X = _crowd().assign(text=["p q", "p r", "q r", "r s", "s t", "t p"])
    y = X.pop("label")
    clf = PerspectivistClassifier(classes=["x", "y"]).fit(X, y)
    clf.predict_proba(X.assign(annotator="new").iloc[:1])


def _grid_search():
    Z, Y = _constant_scores()
    search = GridSearchCV(TemperatureScaler(), {"max_iter": [50]}, cv=2)
    search.fit(np.vstack([Z, Z]), np.vstack([Y, Y]))


ENTRY_POINTS = {
    "an estimator's fit (fit_context)": lambda: TemperatureScaler().fit(
        *_constant_scores()
    ),
    "a metric (validate_params)": lambda: epistemic_loss(
        np.array([[1, 0], [2, 1]]), np.array([[0.6, 0.4], [0.3, 0.7]])
    ),
    "the report": lambda: human_calibration_report(
        np.array([[3, 1]]), {"m": np.array([[0.6, 0.4]])}, n_bootstrap=5
    ),
    "an aggregator's prediction": lambda: (
        DawidSkene(classes=["x", "y"])
        .fit(_crowd())
        .predict_annotator_proba(_unseen_annotator())
    ),
    "the perspectivist classifier's prediction": _perspectivist_unseen,
    "a scikit-learn meta-estimator": _grid_search,
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_the_warning_points_at_the_callers_line(entry):
    caught = _caught(ENTRY_POINTS[entry])
    ours = [w for w in caught if w.category is not FutureWarning]
    assert ours
    for w in ours:
        assert Path(w.filename).resolve() == Path(__file__).resolve(), (
            f"{w.category.__name__} {str(w.message)[:60]!r} points at "
            f"{w.filename}:{w.lineno}"
        )


def test_the_library_frames_are_looked_through():
    prefixes = library_prefixes()
    assert any(Path(p).resolve() == PACKAGE.resolve() for p in prefixes)
    assert all(p.endswith(("/", "\\")) for p in prefixes)  # not a sibling folder
    caught = _caught(lambda: warn_user("here", RuntimeWarning))
    assert caught[0].category is RuntimeWarning
    assert caught[0].filename == __file__


def test_the_package_counts_no_frames_by_hand():
    # The command line is the exception: its warnings become "hcal: warning:"
    # lines and no frame is shown.
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("cli/") or rel == "utils/_warnings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "stacklevel":
                offenders.append(f"{rel}:{node.value.lineno}")
    assert offenders == [], offenders


def _shape(message, owner, column, stand_in):
    return (
        message.replace(stand_in, "<stand-in>")
        .replace(owner, "<owner>")
        .replace(column, "<column>")
    )


def test_rows_of_unseen_annotators_are_worded_once():
    # The aggregators and the perspectivist classifier say the same thing
    # about the same rows: only the owner and the stand-in differ.
    messages = {}
    for Model in (DawidSkene, Wawa):
        model = Model(classes=["x", "y"]).fit(_crowd())
        (w,) = _caught(partial(model.predict_annotator_proba, _unseen_annotator()))
        messages[Model.__name__] = _shape(
            str(w.message), Model.__name__, "annotator", "the fitted pool"
        )
    (w,) = _caught(_perspectivist_unseen)
    stand_in = re.search(r"predicted by (.*)\.$", str(w.message)).group(1)
    assert "pool" in stand_in
    messages["PerspectivistClassifier"] = _shape(
        str(w.message), "PerspectivistClassifier", "annotator", stand_in
    )
    assert len(set(messages.values())) == 1, messages
    assert next(iter(messages.values())) == (
        "<owner>: 1 of 1 rows have <column> values not seen in fit (e.g. 'new'), "
        "predicted by <stand-in>."
    )
    # the majority vote's annotators are all alike: nothing to say
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MajorityVote(classes=["x", "y"]).fit(_crowd()).predict_annotator_proba(
            _unseen_annotator()
        )
