"""The notes and the column legend of ``hcal demo``'s tables.

The notes say what was run (data, network, calibrators, intervals) and how
to read the tables; :func:`temperature_note` explains, with the run's own
numbers, why temperature scaling improves KL while it can worsen EL, JSD and
DistCE. The legend gives each column header one line: a report metric's
registry description and direction, or the demo's own text.
"""

from __future__ import annotations

from sklearn.utils import Bunch

from . import _experiment

__all__ = ["OWN_LEGEND", "demo_notes", "legend_entries", "temperature_note"]

#: Legend of the columns that are not report metrics (the others come from
#: the metric registry).
OWN_LEGEND = {
    "el_prior": "debiased EL of the prediction on the 9 test labels left after "
    "removing one (see the notes); lower is better",
    "el_posterior": "debiased EL of predict_posterior given the removed label, "
    "on the same 9 labels; lower is better",
}


def legend_entries(tables) -> list[tuple[str, str]]:
    """``(header, text)`` for every column header of ``tables`` (the demo's
    ``DEMO_TABLES``), once.

    The text of a report metric is its registry description and direction
    (:func:`~sklearn_hcal.cli._terminal.metric_legend`).
    """
    from ._terminal import metric_legend

    entries, seen = [], set()
    for spec in tables.values():
        for column, header in spec:
            if header in seen:
                continue
            seen.add(header)
            text = OWN_LEGEND.get(column) or metric_legend(column)
            entries.append((header, _without_the_header(header, text)))
    return entries


def _without_the_header(header: str, text: str) -> str:
    """``text`` less a leading ``"Name: "`` that the header already says.

    Registry descriptions start with the paper's name ("RankCS: fraction
    ..."), which the demo's headers are: the line read "RankCS: RankCS: ...".
    """
    name, sep, rest = text.partition(": ")
    return rest if sep and header.split(" ")[0] == name else text


def temperature_note(info: Bunch) -> str | None:
    """Why temperature scaling moves KL one way and EL, JSD, DistCE another.

    Temperature scaling minimises the histogram log loss of the validation
    labels, i.e. their mean KL(p̂ ‖ q) up to a constant: a proper score,
    minimised in expectation by the true distribution, so KL is the column
    the fit improves. EL (the debiased squared distance to the true Q) is
    proper too, but weighs errors otherwise; one temperature is the best for
    both only when the network's only error is its temperature. JSD and
    DistCE are not proper: against a 10-label histogram, spikier than the
    true Q, their expectation is smallest for a prediction sharper than Q.
    The note states the run's numbers and explains only what they show.
    """
    report = getattr(info, "report", None)
    if report is None or not {"Raw", "Raw+ts"} <= set(report.index):
        return None
    raw, ts = report.loc["Raw"], report.loc["Raw+ts"]
    names = {"kl": "KL", "el": "EL", "jsd": "JSD", "dist_ce": "DistCE"}

    def change(col):
        return f"{names[col]} {raw[col]:.4f} → {ts[col]:.4f}"

    T = info.temperature
    text = (
        f"Temperature scaling (T = {T:.3f}) fits T by the histogram log loss "
        "of the validation labels, which (with the same number of labels per "
        "item) is their mean KL(p̂ ‖ q) up to a constant: a proper score, whose "
        "expectation is smallest for the true distribution"
        + (
            f". So KL is the column it improves: {change('kl')} on the test split."
            if ts["kl"] < raw["kl"]
            else f"; on the test split {change('kl')}."
        )
    )
    worse = [c for c in ("el", "jsd", "dist_ce") if ts[c] > raw[c]]
    if not worse:
        return text
    text += f" It worsens {', '.join(change(c) for c in worse)}."
    if "el" in worse:
        text += (
            " EL, the debiased squared distance to the true Q, is proper too, "
            "but it weighs errors differently: the log loss punishes a small "
            "probability on a class people chose without bound, the squared "
            "loss does not, so one temperature is the best for both only when "
            "the network's only error is its temperature."
        )
    if "jsd" in worse or "dist_ce" in worse:
        oracle = report.loc["Oracle"] if "Oracle" in report.index else None
        text += (
            " JSD and DistCE are not proper: they compare q with the 10-label "
            "histogram p̂, which is spikier than the true Q, so their expectation "
            "is smallest for a prediction sharper than Q"
            + (
                f" (the Oracle, q = Q, scores JSD {oracle['jsd']:.4f}, not 0)"
                if oracle is not None
                else ""
            )
            + (", and they penalise the softening (T > 1)." if T > 1 else ".")
        )
    return text


def demo_notes(info: Bunch, confidence: float) -> list[str]:
    """The notes under the demo's tables: data, models, intervals, readings."""
    c = info.config
    alpha = ", ".join(
        f"{name} {value:.3g}" for name, value in info.median_concentration.items()
    )
    ci = (
        f"{int(confidence * 100)}% bias-corrected bootstrap intervals over test items "
        f"({c['n_bootstrap']} resamples, the same items for every method) in "
        "brackets."
        if c["n_bootstrap"]
        else "No bootstrap (n_bootstrap=0)."
    )
    return [
        f"Mix-Digits (scikit-learn's 8×8 digits, a third of the items mixed), "
        f"seed {c['seed']}: {info.n_items['train']} training items with 1 label, "
        f"{info.n_items['valid']} validation items with {c['val_annotations']} "
        f"labels, {info.n_items['test']} test items with 10 labels.",
        f"SmallCNN (dropout {_experiment.DROPOUT}) trained {c['max_epochs']} "
        f"epochs on the single labels (Adam, lr {_experiment.LR}); temperature "
        f"T = {info.temperature:.3f}; "
        f"MC dropout with {c['mc_samples']} members; median α0 on the test items: "
        f"{alpha}.",
        ci,
        "Lower is better except Acc and RankCS. EL, CE and the disagreement "
        "columns are Mimori et al.'s debiased estimators (15 bins); Acc and ECE are "
        "against the majority of the 10 test labels.",
        *filter(None, [temperature_note(info)]),
        "φ (disagreement probability) = predict_disagreement for α-calibrated and "
        "MC-dropout methods, 1 − Σq² for Raw and Raw+ts, 1 − ΣQ² for the Oracle.",
        "α-calibration leaves the class probabilities unchanged, so a method and "
        "its +α version share every column but L̂_φD, CE_φD and EL post.",
        "Intervals are bias-corrected: a resample keeps each item's labels, so the "
        "replicates of the debiased binned estimators (CE, CE_φD) centre on the "
        "plug-in value and are shifted back by that bias. RankCS (strict ties, "
        "Baan et al.'s code) is near 0 for a model: "
        "a full ranking of 10 classes rarely matches the tie order of a 10-label "
        "histogram.",
        "EL prior / EL post.: one label is removed at random from each test "
        "histogram and given to predict_posterior; prior and posterior are scored "
        "(debiased EL) on the remaining 9 labels. Raw and Raw+ts have no posterior: "
        "their posterior is their prior (the α0 → ∞ limit of Dir(α0·q), the same "
        "limit that gives φ = 1 − Σq²). The Oracle's posterior is the true Q.",
    ]
