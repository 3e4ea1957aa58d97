"""Each Display validates its inputs once (developer guide §checked-once).

``from_predictions`` validates the labels and the predictions, then draws
from the validated objects: the metric numbers it shows (ECE, CL/DL, the
per-item errors, CL_φD) come from them, not from metric functions that
would validate the same arrays again. Scans counted by :mod:`tests._scans`.
"""

import numpy as np
import pytest

from sklearn_hcal.plotting import (
    CalibrationDispersionDisplay,
    DisagreementReliabilityDisplay,
    HumanModelMarginalDisplay,
    InstanceErrorDisplay,
    MajorityReliabilityDisplay,
)
from tests._scans import count_scans

plt = pytest.importorskip("matplotlib.pyplot")


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    Y = rng.multinomial(4, rng.dirichlet(np.ones(3), n))
    P1 = rng.dirichlet(np.ones(3), n)
    P2 = rng.dirichlet(np.ones(3), n)
    return Y, P1, P2


@pytest.mark.parametrize(
    "draw",
    [
        lambda Y, P1, P2: MajorityReliabilityDisplay.from_predictions(Y, P1),
        lambda Y, P1, P2: CalibrationDispersionDisplay.from_predictions(
            Y, {"a": P1, "b": P2}
        ),
        lambda Y, P1, P2: InstanceErrorDisplay.from_predictions(Y, {"a": P1, "b": P2}),
        lambda Y, P1, P2: HumanModelMarginalDisplay.from_predictions(
            Y, {"a": P1, "b": P2}
        ),
        lambda Y, P1, P2: DisagreementReliabilityDisplay.from_predictions(Y, P1),
    ],
    ids=["majority", "calibration_map", "instance_errors", "marginals", "phi"],
)
def test_display_scans_each_input_once(draw):
    Y, P1, P2 = _data()
    with count_scans({"Y": Y, "P1": P1, "P2": P2}) as scans:
        disp = draw(Y, P1, P2)
    plt.close(disp.figure_)
    counts = scans.per_input()
    assert counts["Y"] == 1 and counts["P1"] == 1
    assert counts["P2"] in (0, 1)
