"""Mimori et al. (2021) §7 claims on Mix-Digits (Tables 1-2, small scale).

A CNN is trained on ONE label per item, calibrated on 5-label validation
histograms and evaluated on 10-label test histograms (fixed seeds):

* α-calibration lowers the disagreement squared loss L̂_φD and the
  disagreement calibration error CE_φD of Raw and Raw+ts (Table 1);
* the posterior class probabilities after one extra label have a lower
  debiased epistemic loss than the prior ones (Table 2);
* α-calibration leaves accuracy and every class-probability metric unchanged.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.frozen import FrozenEstimator  # noqa: E402

from sklearn_hcal import make_soft_label_net  # noqa: E402
from sklearn_hcal.calibration import AlphaCalibrator, TemperatureScaler  # noqa: E402
from sklearn_hcal.datasets import make_mixed_digits  # noqa: E402
from sklearn_hcal.metrics import (  # noqa: E402
    disagreement_calibration_error,
    disagreement_squared_loss,
    epistemic_loss,
)


def _split_one_label(Y, rng):
    """Remove one random annotation per item: (update, remaining histogram).

    The annotations are i.i.d. given Q, so the removed label is independent
    of the remaining ones: evaluating the posterior built from it against the
    remaining histogram keeps the debiased EL unbiased.
    """
    u = rng.random_sample(len(Y))[:, None] * Y.sum(1, keepdims=True)
    k = (np.cumsum(Y, axis=1) <= u).sum(1)
    one = np.eye(Y.shape[1], dtype=Y.dtype)[k]
    return one, Y - one


@pytest.fixture(scope="module")
def experiment():
    torch.set_num_threads(2)
    from sklearn_hcal import SmallCNN

    d = make_mixed_digits(
        {"train": 1, "valid": 5, "test": 10},
        valid_size=0.25,
        test_size=0.35,
        random_state=0,
    )
    net = make_soft_label_net(
        SmallCNN, max_epochs=15, lr=3e-3, batch_size=64, random_state=0
    ).fit(d.train.images, d.train.counts)
    ts = TemperatureScaler(FrozenEstimator(net)).fit(d.valid.images, d.valid.counts)
    models = {
        "Raw": net,
        "Raw+ts": ts,
        "Raw+α": AlphaCalibrator(FrozenEstimator(net), random_state=0).fit(
            d.valid.images, d.valid.counts
        ),
        "Raw+ts+α": AlphaCalibrator(FrozenEstimator(ts), random_state=0).fit(
            d.valid.images, d.valid.counts
        ),
    }
    Xt, Yt = d.test.images, d.test.counts
    update, rest = _split_one_label(Yt, np.random.RandomState(0))
    rows = {}
    for name, m in models.items():
        P = m.predict_proba(Xt)
        phi = (
            m.predict_disagreement(Xt)
            if hasattr(m, "predict_disagreement")
            else 1 - (P**2).sum(1)
        )
        row = {
            "P": P,
            "L_phiD": disagreement_squared_loss(Yt, phi),
            "CE_phiD": disagreement_calibration_error(Yt, phi),
            "EL_prior": epistemic_loss(rest, P),
        }
        if hasattr(m, "predict_posterior"):
            row["EL_post"] = epistemic_loss(rest, m.predict_posterior(Xt, update))
        rows[name] = row
    return rows, Yt


def test_alpha_improves_disagreement_estimates(experiment):
    rows, _ = experiment
    for base in ("Raw", "Raw+ts"):
        for name in ("Raw+α", "Raw+ts+α"):
            assert rows[name]["L_phiD"] < rows[base]["L_phiD"], (name, base)
            assert rows[name]["CE_phiD"] < rows[base]["CE_phiD"], (name, base)


def test_posterior_beats_prior(experiment):
    rows, _ = experiment
    for name in ("Raw+α", "Raw+ts+α"):
        assert rows[name]["EL_post"] < rows[name]["EL_prior"], name


def test_alpha_leaves_class_probabilities_unchanged(experiment):
    rows, Yt = experiment
    np.testing.assert_allclose(rows["Raw+α"]["P"], rows["Raw"]["P"], atol=1e-7)
    np.testing.assert_array_equal(rows["Raw+ts+α"]["P"], rows["Raw+ts"]["P"])
    assert rows["Raw+α"]["EL_prior"] == pytest.approx(rows["Raw"]["EL_prior"])


def test_print_table(experiment, capsys):
    rows, Yt = experiment
    lines = [f"{'method':10s} {'L_phiD':>8s} {'CE_phiD':>8s} {'EL prior':>9s} post"]
    for name, r in rows.items():
        post = f"{r['EL_post']:.4f}" if "EL_post" in r else "NA"
        lines.append(
            f"{name:10s} {r['L_phiD']:8.4f} {r['CE_phiD']:8.4f} "
            f"{r['EL_prior']:9.4f} {post}"
        )
    with capsys.disabled():
        print(f"\nMix-Digits test items: {len(Yt)}\n" + "\n".join(lines))
    assert len(rows) == 4
