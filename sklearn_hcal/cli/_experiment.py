"""The Mix-Digits experiment of ``hcal demo``, written once.

Mimori et al.'s (2021, §7.1) single-label experiment, small, on data that
ships with scikit-learn (no download). :func:`fit_methods` trains and
calibrates, :func:`predict_methods` gives every method's class probabilities,
disagreement ``φ`` and posterior after one extra label, and
:func:`evaluate_methods` turns them into the three papers' tables with
:func:`~sklearn_hcal.metrics.human_calibration_report`. The command line
(:mod:`sklearn_hcal.cli._demo`) and the tests run these functions.

1. **Data.** Mix-Digits (:func:`~sklearn_hcal.datasets.make_mixed_digits`): a
   third of the 8×8 digits blended in pairs, each annotation a draw from the
   item's true label distribution ``Q``; **one** label per training item,
   ``val_annotations`` per validation item, 10 per test item.
2. **Classifier.** A small CNN (:class:`~sklearn_hcal.SmallCNN`, dropout 0.5
   before its last layer) trained through skorch on the single labels.
3. **Calibration** on the validation split: temperature scaling (``Raw+ts``),
   α-calibration of the raw and of the temperature-scaled network (``Raw+α``,
   ``Raw+ts+α``), MC dropout (``MC-dropout``) and its α-calibration
   (``MC-dropout+α``). ``Oracle`` predicts the true ``Q``.
4. **Evaluation** on the 10-label test split with paired, bias-corrected
   bootstrap intervals (the same resampled items for every method and
   column).

Decisions:

* ``φ`` is ``predict_disagreement`` for the methods that have it (α-calibrated
  and MC-dropout, eq. 19/71-73) and ``1 − Σq²`` otherwise (Raw, Raw+ts; for
  the Oracle ``1 − ΣQ²``, the true disagreement probability); the report
  takes it with ``disagreement=``.
* *Prior vs posterior.* One label is removed at random from each test
  histogram and given to ``predict_posterior``; prior and posterior are scored
  with the debiased EL on the remaining 9 labels (the removed label is
  independent of them given ``Q``). Raw and Raw+ts have no posterior of their
  own: their posterior is their prior, the ``α0 → ∞`` limit of ``Dir(α0·q)``
  that also gives their ``φ = 1 − Σq²``. The Oracle's posterior is ``Q``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = ["fit_methods", "predict_methods", "evaluate_methods", "REPORT_COLUMNS"]

# Mix-Digits partitions: more test items than make_mixed_digits' default, for
# tighter intervals on the 10-label test split.
VALID_SIZE, TEST_SIZE = 0.25, 0.35
DROPOUT, LR, BATCH_SIZE = 0.5, 3e-3, 64

#: Columns of the report on the test labels, in the papers' terms; the EL of
#: the prior and of the posterior come from reports on the 9 remaining labels.
REPORT_COLUMNS = (
    "accuracy",
    "sq_loss",
    "el",
    "ce",
    "disagreement_sq_loss",
    "disagreement_ce",
    "ece",
    "rank_cs",
    "ent_ce",
    "dist_ce",
    "jsd",
    "kl",
)


def split_one_label(Y: np.ndarray, rng: np.random.RandomState):
    """``(update, rest)``: one annotation drawn from each histogram, the rest.

    The removed label is drawn uniformly among the item's annotations, i.e. a
    random annotator's label.
    """
    u = rng.random_sample(Y.shape[0]) * Y.sum(axis=1)
    k = (np.cumsum(Y, axis=1) <= u[:, None]).sum(axis=1)
    update = np.zeros_like(Y)
    update[np.arange(Y.shape[0]), k] = 1
    return update, Y - update


def fit_methods(config: dict, progress, callbacks=()) -> Bunch:
    """Build Mix-Digits, train the CNN, fit the calibrators.

    ``config`` has ``seed``, ``val_annotations``, ``max_epochs``,
    ``mc_samples`` and ``device``; ``progress`` is a
    :class:`~sklearn_hcal.utils._progress.Progress`; ``callbacks`` are extra
    skorch callbacks of the network (e.g. a progress line per epoch).
    """
    from sklearn.frozen import FrozenEstimator

    from .. import SmallCNN, make_soft_label_net
    from ..calibration import AlphaCalibrator, MCDropoutClassifier, TemperatureScaler
    from ..datasets import make_mixed_digits
    from ..utils._interrupt import reraise_interrupt

    seed, device = config["seed"], config["device"]
    progress.message("building Mix-Digits (scikit-learn's 8x8 digits, no download)")
    data = make_mixed_digits(
        {"train": 1, "valid": config["val_annotations"], "test": 10},
        valid_size=VALID_SIZE,
        test_size=TEST_SIZE,
        random_state=seed,
    )
    train, valid = data.train, data.valid
    progress.message(
        f"items: {len(train.counts)} train (1 label), {len(valid.counts)} valid "
        f"({config['val_annotations']} labels), {len(data.test.counts)} test "
        "(10 labels)"
    )
    net = make_soft_label_net(
        SmallCNN,
        n_classes=10,
        module__dropout=DROPOUT,
        max_epochs=config["max_epochs"],
        lr=LR,
        batch_size=BATCH_SIZE,
        device=device,
        random_state=seed,
        callbacks=list(callbacks),
    )
    # skorch swallows Ctrl-C and returns a half-trained network: stop instead
    with reraise_interrupt():
        net.fit(train.images, train.counts)
    Xv, Yv = valid.images, valid.counts
    progress.message("calibrating on the validation split: temperature scaling")
    ts = TemperatureScaler(FrozenEstimator(net)).fit(Xv, Yv)
    mc = MCDropoutClassifier(
        FrozenEstimator(net), n_samples=config["mc_samples"], random_state=seed
    ).fit()
    alpha_of = {"Raw+α": net, "Raw+ts+α": ts, "MC-dropout+α": mc}
    alphas = {}
    for i, (name, base) in enumerate(alpha_of.items(), start=1):
        alphas[name] = AlphaCalibrator(
            FrozenEstimator(base), device=device, random_state=seed
        ).fit(Xv, Yv)
        progress.update("α-calibration", i, len(alpha_of), name)
    models = {
        "Raw": net,
        "Raw+ts": ts,
        "Raw+α": alphas["Raw+α"],
        "Raw+ts+α": alphas["Raw+ts+α"],
        "MC-dropout": mc,
        "MC-dropout+α": alphas["MC-dropout+α"],
    }
    Xt = data.test.images
    return Bunch(
        models=models,
        test=data.test,
        n_items={
            "train": len(train.counts),
            "valid": len(valid.counts),
            "test": len(data.test.counts),
        },
        temperature=float(ts.temperature_),
        median_concentration={
            name: float(np.median(model.predict_concentration(Xt)))
            for name, model in alphas.items()
        },
    )


def predict_methods(fitted: Bunch, seed: int) -> Bunch:
    """Every method's ``(P, φ, posterior)`` on the test split, and the labels.

    Returns a Bunch with ``predictions`` (method → ``(P, φ, posterior)``, the
    Oracle last), ``counts`` (the 10 test labels) and ``rest`` (the 9 labels
    left after removing the one given to ``predict_posterior``).
    """
    from ..metrics import predicted_disagreement

    test = fitted.test
    Xt, Yt = test.images, test.counts
    update, rest = split_one_label(Yt, np.random.RandomState(seed))
    preds = {}
    for name, model in fitted.models.items():
        P = np.asarray(model.predict_proba(Xt), dtype=np.float64)
        if hasattr(model, "predict_disagreement"):
            phi = model.predict_disagreement(Xt)
        else:
            phi = predicted_disagreement(P)
        if hasattr(model, "predict_posterior"):
            post = model.predict_posterior(Xt, update)
        else:
            post = P  # the α0 → ∞ limit: a point prediction does not update
        preds[name] = (P, phi, post)
    Q = test.true_proba
    preds["Oracle"] = (Q, predicted_disagreement(Q), Q)
    return Bunch(predictions=preds, counts=Yt, rest=rest)


def evaluate_methods(
    predicted: Bunch, *, n_bootstrap: int, seed: int, verbose: int = 0
) -> pd.DataFrame:
    """One row per method: :data:`REPORT_COLUMNS`, ``el_prior``, ``el_posterior``.

    Three reports on the same items with the same ``random_state`` draw the
    same resamples, so every interval of a row is paired with every other.
    With a bootstrap each column ``m`` is followed by ``m_low`` and ``m_high``.
    """
    from ..metrics import human_calibration_report

    preds = predicted.predictions
    common = dict(n_bootstrap=n_bootstrap, random_state=seed, verbose=verbose)
    report = human_calibration_report(
        predicted.counts,
        {name: p[0] for name, p in preds.items()},
        disagreement={name: p[1] for name, p in preds.items()},
        metrics=list(REPORT_COLUMNS),
        **common,
    )
    for column, which in (("el_prior", 0), ("el_posterior", 2)):
        part = human_calibration_report(
            predicted.rest,
            {name: p[which] for name, p in preds.items()},
            metrics=["el"],
            **common,
        )
        for suffix in ("", "_low", "_high") if n_bootstrap else ("",):
            report[column + suffix] = part["el" + suffix]
    report.index.name = "method"
    return report
