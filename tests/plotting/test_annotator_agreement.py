"""The annotator-agreement figure draws annotator_agreement's own values."""

import numpy as np
import pandas as pd
import pytest

from sklearn_hcal.metrics import annotator_agreement
from sklearn_hcal.plotting import AnnotatorAgreementDisplay

pytest.importorskip("matplotlib")


def _table(seed=0, n_items=40, n_annotators=6):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n_items)
    items = [f"q{i}" for i in range(n_items)]
    rows = []
    for a in range(n_annotators):
        # the last annotator answers at random: the outlier
        labels = rng.integers(0, 3, n_items) if a == n_annotators - 1 else truth
        rows.append(
            pd.DataFrame({"item": items, "annotator": f"A{a}", "label": labels})
        )
    return pd.concat(rows, ignore_index=True), pd.Series(truth, index=items)


def test_points_are_the_table_values_and_the_outlier_is_named():
    import matplotlib.pyplot as plt

    X, truth = _table()
    disp = AnnotatorAgreementDisplay.from_annotations(X, annotate=1)
    table = annotator_agreement(X)
    offsets = disp.artists_["annotators"].get_offsets()
    np.testing.assert_allclose(offsets[:, 0], table["majority_agreement"])
    np.testing.assert_allclose(offsets[:, 1], table["alpha_change"])
    names = [t.get_text() for t in disp.ax_.texts]
    assert names == ["A5"]  # the random annotator lowers α most
    assert "model" not in disp.artists_
    plt.close(disp.figure_)


def test_model_is_drawn_as_one_more_annotator():
    import matplotlib.pyplot as plt

    X, truth = _table(1)
    disp = AnnotatorAgreementDisplay.from_annotations(X, truth, model_name="clf")
    star = disp.artists_["model"].get_offsets()[0]
    assert star[0] == pytest.approx(disp.table.loc["clf", "majority_agreement"])
    assert star[1] == pytest.approx(disp.table.loc["clf", "alpha_change"])
    assert len(disp.artists_["annotators"].get_offsets()) == 6
    plt.close(disp.figure_)


def test_a_table_without_the_columns_is_refused():
    with pytest.raises(ValueError, match="lacks the columns"):
        AnnotatorAgreementDisplay(pd.DataFrame({"x": [1]})).plot()
