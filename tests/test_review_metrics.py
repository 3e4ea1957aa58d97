"""Regressions found by reviewing the metrics, report, scorers and CLI.

Each test checks a value against an independent computation, or a bad input
against a clear ValueError naming the argument.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.metrics import (
    human_calibration_report,
    jensen_shannon_distance,
    kl_divergence,
)


@pytest.mark.parametrize("where", ["y_true", "y_prob"])
def test_dataframe_with_a_repeated_column_name_raises(where):
    # Columns are matched by name, so a DataFrame naming two columns "a" cannot
    # say which one is class "a". labels=["a", "a", "b"] already raised; the
    # same names as DataFrame columns were taken silently: with 1-D labels
    # y_true, "a" went to the first "a" column (KL 1.27 where the second
    # column gives 1.10), a guess.
    rng = np.random.default_rng(14)
    P = rng.dirichlet(np.ones(3), size=30)
    C = np.array([rng.multinomial(4, p) for p in P])
    frame = pd.DataFrame(P if where == "y_prob" else C, columns=["a", "a", "b"])
    if where == "y_prob":
        args = (rng.choice(["a", "b"], 30), frame)
    else:
        args = (frame, P)
    for metric in (kl_divergence, jensen_shannon_distance):
        with pytest.raises(ValueError, match=rf"columns of {where}.*'a' occurs"):
            metric(*args)
    with pytest.raises(ValueError, match="'a' occurs"):
        human_calibration_report(args[0], {"m": args[1]}, metrics=["kl"])
