"""Numbers published by ChaosNLI (Nie et al., 2020) and Baan et al. (2022).

Everything here is recomputed from the ChaosNLI data alone (the predictions are
the uniform distribution or the human distribution itself), so the published
tables are an independent check of the metric definitions.
"""

import numpy as np
import pytest

from sklearn_hcal.datasets import load_chaosnli
from sklearn_hcal.metrics import (
    classwise_expected_calibration_error,
    distribution_calibration_error,
    entropy_calibration_error,
    expected_calibration_error,
    jensen_shannon_distance,
    kl_divergence,
    majority_accuracy_score,
    ranking_calibration_score,
)
from tests.conftest import require_data

# ChaosNLI Table 5, row "Chance": (JSD, KL, old acc., new acc.).
CHANCE_ROW = {
    "alphanli": (0.3205, 0.406, 0.5098, 0.5052),
    "snli": (0.383, 0.5457, 0.4472, 0.5370),
    "mnli": (0.3023, 0.3559, 0.4509, 0.4634),
}


def _load(subset):
    return load_chaosnli(subset, path=require_data("chaosnli_v1.0"))


@pytest.mark.parametrize("subset", sorted(CHANCE_ROW))
def test_chaosnli_chance_row_jsd_kl(subset):
    # Uniform prediction; JSD with scipy's default natural log (base=None) and
    # KL in nats reproduce the table (base 2 would give e.g. 0.460 for S).
    data = _load(subset)
    Y = data.counts
    uniform = np.full(Y.shape, 1.0 / Y.shape[1])
    jsd, kl, _, _ = CHANCE_ROW[subset]
    assert jensen_shannon_distance(Y, uniform) == pytest.approx(jsd, abs=5e-4)
    assert kl_divergence(Y, uniform) == pytest.approx(kl, abs=5e-4)
    assert jensen_shannon_distance(Y, uniform, base=2) != pytest.approx(jsd, abs=5e-3)


@pytest.mark.parametrize("subset", sorted(CHANCE_ROW))
def test_chaosnli_chance_row_accuracy(subset):
    # The "chance" accuracy is that of always predicting the most frequent
    # majority class ("the proportion of the examples with the majority label"),
    # against the new (100-label) and the old majority labels. ChaosNLI breaks
    # the few exact ties among the 100 labels in its ``majority_label`` field
    # in a way the counts cannot reproduce, so the new labels come from that
    # field (1-D labels, i.e. plain accuracy).
    data = _load(subset)
    Y = data.counts
    K = Y.shape[1]
    classes = list(data.classes)
    new = np.array([classes.index(lab) for lab in data.majority_label])
    old = np.array([classes.index(lab) for lab in data.old_label])
    constant = [np.tile(np.eye(K)[k] * 0.9 + 0.1 / K, (len(Y), 1)) for k in range(K)]
    _, _, old_ref, new_ref = CHANCE_ROW[subset]
    assert max(majority_accuracy_score(new, P) for P in constant) == pytest.approx(
        new_ref, abs=5e-4
    )
    assert max(majority_accuracy_score(old, P) for P in constant) == pytest.approx(
        old_ref, abs=5e-4
    )
    # The field's label is always one of the tied top classes of the counts, so
    # ties="any" on the counts can only be more lenient, and without ties all
    # rules coincide with the field.
    n_tied = np.sum((Y == Y.max(axis=1, keepdims=True)).sum(axis=1) > 1)
    for P in constant:
        field = majority_accuracy_score(new, P)
        assert majority_accuracy_score(Y, P, ties="any") >= field
        for ties in ("first", "last"):
            assert abs(majority_accuracy_score(Y, P, ties=ties) - field) <= (
                n_tied / len(Y)
            )


def test_baan_table1_oracle_on_chaosnli_snli():
    # Baan et al. Table 1, column "Oracle": the prediction is p̂ = Y / n.
    Y = _load("snli").counts
    p_hat = Y / Y.sum(axis=1, keepdims=True)
    assert expected_calibration_error(Y, p_hat, n_bins=10) == pytest.approx(
        0.245, abs=1e-3
    )
    assert majority_accuracy_score(Y, p_hat) == 1.0
    assert majority_accuracy_score(Y, p_hat, ties="last") == 1.0
    assert ranking_calibration_score(Y, p_hat) == 1.0
    assert ranking_calibration_score(Y, p_hat, ties="weak") == 1.0
    assert entropy_calibration_error(Y, p_hat) == 0.0
    assert distribution_calibration_error(Y, p_hat) == 0.0
    # Baan et al. App. D, Table 5: classwise ECE of the oracle, 16 %.
    assert classwise_expected_calibration_error(Y, p_hat) == pytest.approx(
        0.16, abs=5e-3
    )
