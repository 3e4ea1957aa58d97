"""Displays bin every row.

A uniform row's entropy (a few ulps above log K) stays in the last bin.

Each test recomputes the expected numbers independently (closed forms).
"""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sklearn_hcal.plotting import (  # noqa: E402
    HumanModelMarginalDisplay,
    InstanceErrorDisplay,
)


def _uniform_model(n_classes, n_items=20):
    # One-hot humans, a uniform model: EntCE = log K exactly in theory.
    Y = np.zeros((n_items, n_classes))
    Y[np.arange(n_items), np.arange(n_items) % n_classes] = 10
    return Y, np.full((n_items, n_classes), 1.0 / n_classes)


@pytest.mark.parametrize("n_classes", [5, 12])
@pytest.mark.parametrize("kind", ["ent_ce", "abs_ent_ce"])
def test_instance_error_uniform_model_counted_in_last_bin(n_classes, kind):
    # H(uniform) computes to a few ulps above log K for K = 5, 12; the item
    # used to fall outside the histogram's last edge and the display showed
    # an empty histogram (fractions summing to 0).
    Y, P = _uniform_model(n_classes)
    disp = InstanceErrorDisplay.from_predictions(Y, {"uniform": P}, kind=kind)
    fractions = disp.fractions()["uniform"]
    assert fractions.sum() == pytest.approx(1.0)
    assert fractions[-1] == pytest.approx(1.0)
    np.testing.assert_allclose(disp.errors["uniform"], np.log(n_classes))
    plt.close(disp.figure_)


@pytest.mark.parametrize("view", ["marginal", "absolute_error", "error"])
def test_marginal_display_uniform_entropy_counted(view):
    n_classes = 5
    Y, P = _uniform_model(n_classes)
    disp = HumanModelMarginalDisplay.from_predictions(Y, {"uniform": P}, view=view)
    key = ("entropy", 0)
    counted = np.histogram(disp.panels[key]["uniform"], bins=disp.bin_edges[key])[0]
    assert counted.sum() == len(Y)
    plt.close(disp.figure_)


def test_marginal_display_uniform_humans_counted():
    # The humans' entropy, too: five votes spread over five classes.
    n_classes = 5
    Y = np.full((4, n_classes), 2)
    P = np.tile(np.eye(n_classes)[0] * 0.6 + 0.08, (4, 1))
    disp = HumanModelMarginalDisplay.from_predictions(Y, P)
    key = ("entropy", 0)
    human = disp.panels[key]["Human"]
    assert np.histogram(human, bins=disp.bin_edges[key])[0].sum() == 4
    plt.close(disp.figure_)
