"""The ``hcal demo`` pipeline: Mimori et al.'s single-label experiment, small.

The library's main job on data that ships with scikit-learn (no download):

1. **Data.** Mix-Digits (:func:`~sklearn_hcal.datasets.make_mixed_digits`),
   Mimori et al.'s (2021, §7.1) Mix-MNIST recipe on the 8×8 digits: a third of
   the items are two digits blended with a random ratio, and each annotation
   is a draw from the item's true label distribution ``Q``. The training
   items have **one** label each, the validation items ``val_annotations``
   (5 by default; the paper uses 2 or 5), the test items 10.
2. **Classifier.** A small CNN (:class:`~sklearn_hcal.SmallCNN` with dropout
   0.5 before its last layer) trained through skorch on the single labels
   (:func:`~sklearn_hcal.make_soft_label_net`).
3. **Calibration** on the validation split: temperature scaling
   (``Raw+ts``), α-calibration of the raw and of the temperature-scaled
   network (``Raw+α``, ``Raw+ts+α``), MC dropout with 20 members
   (``MC-dropout``) and its α-calibration (``MC-dropout+α``, a mixture of
   Dirichlets). ``Oracle`` predicts the true ``Q``.
4. **Evaluation** on the 10-label test split, in the terms of the three
   papers, with bias-corrected bootstrap confidence intervals (the same resampled
   items for every method).

Three tables come out:

* **Mimori** (Tables 1-2): majority accuracy, ``L̂_sq``
  (:func:`~sklearn_hcal.metrics.expected_squared_loss`), the debiased
  epistemic loss EL and calibration error CE, the disagreement squared loss
  ``L̂_φD`` and calibration error ``CE_φD`` of the predicted disagreement
  ``φ``, and the debiased EL of the prior and of the posterior class
  probabilities after one extra label (*EL prior*, *EL post.*).
* **Baan** (Table 1): accuracy, ECE (against the majority), RankCS, mean
  ``|EntCE|`` and DistCE.
* **ChaosNLI** (Table 5): JSD and KL.

Decisions (documented in the tables' notes):

* ``φ`` is ``predict_disagreement`` for the methods that have it (α-calibrated
  and MC-dropout: ``α0/(α0+1)(1 − Σf²)``, eq. 19/71, and eq. 72-73) and
  ``1 − Σq²`` otherwise (Raw, Raw+ts; for the Oracle ``1 − ΣQ²``, the true
  disagreement probability).
* *Prior vs posterior.* One label is removed at random from each 10-label
  test histogram; it is the "extra label" given to ``predict_posterior`` and
  both the prior and the posterior are scored with the debiased EL on the
  remaining 9 labels (the removed label is independent of them given ``Q``,
  so the estimate stays unbiased). Raw and Raw+ts have no posterior of their
  own: their posterior is their prior, which is the ``α0 → ∞`` limit of
  ``Dir(α0·q)`` -- the same limit that gives their ``φ = 1 − Σq²``, so each
  row is one consistent model. The Oracle's posterior is ``Q`` itself (labels
  are independent given ``Q``).
* ``human_calibration_report`` derives ``φ`` from the probabilities only, so
  the ``L̂_φD``/``CE_φD`` and EL prior/posterior columns are computed with
  the metric functions (:func:`~sklearn_hcal.metrics.disagreement_squared_loss`,
  :func:`~sklearn_hcal.metrics.disagreement_calibration_error`,
  :func:`~sklearn_hcal.metrics.epistemic_loss`) and bootstrapped here with
  the same bias-corrected method; every other column comes from the report.
"""

from __future__ import annotations

import numbers
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ._io import markdown_table

__all__ = ["run_demo", "DEMO_TABLES", "DEMO_METHODS"]

#: Rows of every table, in order.
DEMO_METHODS = (
    "Raw",
    "Raw+ts",
    "Raw+α",
    "Raw+ts+α",
    "MC-dropout",
    "MC-dropout+α",
    "Oracle",
)

#: ``table -> [(column, header in the paper's terms), ...]``. Column names are
#: those of :func:`~sklearn_hcal.metrics.human_calibration_report`, plus
#: ``el_prior`` and ``el_posterior``.
DEMO_TABLES = {
    "mimori": [
        ("accuracy", "Acc"),
        ("sq_loss", "L̂_sq"),
        ("el", "EL"),
        ("ce", "CE"),
        ("disagreement_sq_loss", "L̂_φD"),
        ("disagreement_ce", "CE_φD"),
        ("el_prior", "EL prior"),
        ("el_posterior", "EL post."),
    ],
    "baan": [
        ("accuracy", "Acc"),
        ("ece", "ECE"),
        ("rank_cs", "RankCS"),
        ("ent_ce", "EntCE (abs)"),
        ("dist_ce", "DistCE"),
    ],
    "chaosnli": [("jsd", "JSD"), ("kl", "KL")],
}

_TITLES = {
    "mimori": "Mimori et al. (2021): squared-loss decomposition and disagreement",
    "baan": "Baan et al. (2022): calibration against the human distribution",
    "chaosnli": "Nie et al. (2020, ChaosNLI): divergence from the human distribution",
}

#: Columns computed here (``φ`` from ``predict_disagreement``; posteriors).
_EXTRA_COLUMNS = ("disagreement_sq_loss", "disagreement_ce", "el_prior", "el_posterior")

#: Settings of the full run and of ``quick=True``.
_PRESETS = {
    "full": {"max_epochs": 40, "n_bootstrap": 1000, "mc_samples": 20},
    "quick": {"max_epochs": 4, "n_bootstrap": 20, "mc_samples": 5},
}

# Mix-Digits partitions: more test items than make_mixed_digits' default, for
# tighter intervals on the 10-label test split.
_VALID_SIZE, _TEST_SIZE = 0.25, 0.35
_DROPOUT, _LR, _BATCH_SIZE = 0.5, 3e-3, 64
_CONFIDENCE = 0.95


# --------------------------------------------------------------------------- #
# progress on stderr
# --------------------------------------------------------------------------- #
class _Progress:
    """Dependency-free progress lines on a text stream.

    On a terminal a bar is redrawn in place (``\\r``); otherwise (a log file,
    a pipe, pytest's capture) only complete lines are written: the stage
    messages and one line per quarter of a long step.
    """

    def __init__(self, stream=None, enabled: bool = True) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty()) if callable(isatty) else False
        self._open_bar = False
        self._last_quarter = -1
        self._start = time.perf_counter()

    def _stamp(self) -> str:
        return f"[{time.perf_counter() - self._start:6.1f}s]"

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def message(self, text: str) -> None:
        if not self.enabled:
            return
        if self._open_bar:
            self._write("\n")
            self._open_bar = False
        self._write(f"{self._stamp()} {text}\n")

    def update(self, label: str, done: int, total: int, info: str = "") -> None:
        if not self.enabled:
            return
        info = f" {info}" if info else ""
        if self.tty:
            width = 24
            filled = int(round(width * done / total))
            bar = "#" * filled + "." * (width - filled)
            self._write(f"\r{self._stamp()} {label} [{bar}] {done}/{total}{info}\033[K")
            self._open_bar = done < total
            if done >= total:
                self._write("\n")
            return
        quarter = (4 * done) // total
        if done == 1:
            self._last_quarter = -1
        if quarter > self._last_quarter and (quarter > 0 or done == total):
            self._last_quarter = quarter
            self._write(f"{self._stamp()} {label} {done}/{total}{info}\n")


def _epoch_progress_callback(progress: _Progress, total: int):
    from skorch.callbacks import Callback

    class _EpochProgress(Callback):
        # Reports each finished epoch and its training loss.
        def on_epoch_end(self, net, **kwargs):
            loss = net.history[-1].get("train_loss", float("nan"))
            progress.update(
                "training CNN epoch", len(net.history), total, f"loss {loss:.4f}"
            )

    return _EpochProgress()


# --------------------------------------------------------------------------- #
# the experiment
# --------------------------------------------------------------------------- #
def _split_one_label(Y: np.ndarray, rng: np.random.RandomState):
    """``(update, rest)``: one annotation drawn from each histogram, the rest.

    The removed label is drawn uniformly among the item's annotations, i.e. a
    random annotator's label.
    """
    u = rng.random_sample(Y.shape[0]) * Y.sum(axis=1)
    k = (np.cumsum(Y, axis=1) <= u[:, None]).sum(axis=1)
    update = np.zeros_like(Y)
    update[np.arange(Y.shape[0]), k] = 1
    return update, Y - update


def _extra_columns(Y, rest, preds, n_bootstrap, random_state):
    """Point values and bootstrap intervals of the columns computed here.

    ``preds[name] = (P, phi, posterior)``. Every resample draws the same item
    indices for all methods (paired), as ``human_calibration_report`` does.
    """
    from .metrics import (
        disagreement_calibration_error,
        disagreement_squared_loss,
        epistemic_loss,
    )
    from .metrics._report import _bootstrap_intervals

    def values(idx):
        out = {}
        for name, (P, phi, post) in preds.items():
            Yb, Rb = Y[idx], rest[idx]
            out[name] = [
                disagreement_squared_loss(Yb, phi[idx]),
                disagreement_calibration_error(Yb, phi[idx]),
                epistemic_loss(Rb, P[idx]),
                epistemic_loss(Rb, post[idx]),
            ]
        return out

    everything = np.arange(Y.shape[0])
    point = values(everything)
    names = list(preds)
    frame = pd.DataFrame(
        [point[n] for n in names],
        index=pd.Index(names, name="method"),
        columns=list(_EXTRA_COLUMNS),
    )
    if n_bootstrap == 0:
        return frame
    rng = np.random.RandomState(random_state)
    boot = np.empty((n_bootstrap, len(names), len(_EXTRA_COLUMNS)))
    with warnings.catch_warnings():
        # Raised once on the full data above.
        warnings.simplefilter("ignore", UserWarning)
        for b in range(n_bootstrap):
            idx = rng.randint(0, Y.shape[0], size=Y.shape[0])
            vals = values(idx)
            boot[b] = [vals[n] for n in names]
    point_array = np.array([point[n] for n in names])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns stay NaN
        low, high = _bootstrap_intervals(
            point_array, boot, _CONFIDENCE, "bias_corrected"
        )
    for j, col in enumerate(_EXTRA_COLUMNS):
        frame[f"{col}_low"] = low[:, j]
        frame[f"{col}_high"] = high[:, j]
    return frame


def _report_metrics() -> list[str]:
    cols = []
    for spec in DEMO_TABLES.values():
        for col, _ in spec:
            if col not in _EXTRA_COLUMNS and col not in cols:
                cols.append(col)
    return cols


def _assemble(report: pd.DataFrame, extra: pd.DataFrame, with_ci: bool) -> dict:
    tables = {}
    for key, spec in DEMO_TABLES.items():
        data = {}
        for col, _ in spec:
            source = extra if col in _EXTRA_COLUMNS else report
            data[col] = source[col].to_numpy()
            if with_ci:
                data[f"{col}_low"] = source[f"{col}_low"].to_numpy()
                data[f"{col}_high"] = source[f"{col}_high"].to_numpy()
        tables[key] = pd.DataFrame(
            data, index=pd.Index(list(report.index), name="method")
        )
    return tables


def _notes(info: Bunch) -> list[str]:
    c = info.config
    alpha = ", ".join(
        f"{name} {value:.3g}" for name, value in info.median_concentration.items()
    )
    ci = (
        f"{int(_CONFIDENCE * 100)}% bias-corrected bootstrap intervals over test items "
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
        f"SmallCNN (dropout {_DROPOUT}) trained {c['max_epochs']} epochs on the single "
        f"labels (Adam, lr {_LR}); temperature T = {info.temperature:.3f}; "
        f"MC dropout with {c['mc_samples']} members; median α0 on the test items: "
        f"{alpha}.",
        ci,
        "Lower is better except Acc and RankCS. EL, CE and the disagreement "
        "columns are Mimori et al.'s debiased estimators (15 bins); Acc and ECE are "
        "against the majority of the 10 test labels.",
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


def _check_device(device: str):
    from .utils._optional import resolve_device

    return resolve_device(device)


@validate_params(
    {
        "out": [str, Path, None],
        "quick": ["boolean"],
        "seed": [Interval(numbers.Integral, 0, 2**32 - 1, closed="both")],
        "val_annotations": [Interval(numbers.Integral, 2, None, closed="left")],
        "device": [StrOptions({"cpu", "cuda", "auto"}), str],
        "max_epochs": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_bootstrap": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "mc_samples": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "n_threads": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "figures": ["boolean"],
        "progress": ["boolean", None],
        "stream": [None, object],
    },
    prefer_skip_nested_validation=True,
)
def run_demo(
    out: str | Path | None = None,
    *,
    quick: bool = False,
    seed: int = 0,
    val_annotations: int = 5,
    device: str = "cpu",
    max_epochs: int | None = None,
    n_bootstrap: int | None = None,
    mc_samples: int | None = None,
    n_threads: int | None = 1,
    figures: bool = True,
    progress: bool | None = True,
    stream=None,
) -> Bunch:
    """Run the Mix-Digits demo: train on one label, calibrate, evaluate.

    The pipeline of ``hcal demo`` (see the module notes for the steps and the
    decisions). Needs the ``torch`` extra.

    Parameters
    ----------
    out : str or path, default=None
        Folder for the tables (``mimori``, ``baan``, ``chaosnli`` as ``.csv``
        and ``.md``, plus ``report.md`` with all three and the notes) and the
        figures; created if needed. None writes nothing.
    quick : bool, default=False
        A seconds-long smoke run: 4 epochs, 20 bootstrap resamples, 5 MC-dropout
        members (instead of 40, 1000 and 20).
    seed : int, default=0
        Seeds the data, the network, the calibrators, the removed test labels
        and the bootstrap: the same seed gives the same tables on the CPU.
    val_annotations : int, default=5
        Labels per validation item (at least 2: α-calibration learns from
        disagreement between labels).
    device : {"cpu", "cuda", "auto"} or str, default="cpu"
        Torch device for training the CNN and fitting α; ``ValueError`` when
        CUDA is asked for and absent.
    max_epochs, n_bootstrap, mc_samples : int, default=None
        Override the preset (training epochs, bootstrap resamples -- 0 for
        none --, MC-dropout members).
    n_threads : int or None, default=1
        Torch CPU threads during the run (restored afterwards); one thread is
        fastest for this small CNN on a shared machine. None keeps torch's
        setting.
    figures : bool, default=True
        Save figures to ``out`` when matplotlib and
        :mod:`sklearn_hcal.plotting` are available.
    progress : bool, default=True
        Write progress lines (stages, epochs) to ``stream``.
    stream : file-like, default=None
        Where progress goes; None is ``sys.stderr``.

    Returns
    -------
    result : Bunch
        ``tables`` (dict ``mimori``/``baan``/``chaosnli`` -> DataFrame, one row
        per method, each metric ``m`` followed by ``m_low`` and ``m_high``
        when bootstrapped), ``markdown`` (dict of the Markdown tables),
        ``notes`` (list of str), ``files`` (paths written), ``figures``
        (figure paths, possibly empty), ``figures_skipped`` (reason or None),
        ``config``, ``n_items``, ``temperature``, ``median_concentration``
        and ``elapsed`` (seconds).

    Examples
    --------
    A one-epoch run without bootstrap (seconds; the tables are then rough):

    >>> from sklearn_hcal._demo import run_demo
    >>> result = run_demo(quick=True, max_epochs=1, n_bootstrap=0, mc_samples=2,
    ...                   progress=False)
    >>> list(result.tables)
    ['mimori', 'baan', 'chaosnli']
    >>> list(result.tables["chaosnli"].index)
    ['Raw', 'Raw+ts', 'Raw+α', 'Raw+ts+α', 'MC-dropout', 'MC-dropout+α', 'Oracle']
    >>> list(result.tables["chaosnli"].columns)
    ['jsd', 'kl']
    """
    from .utils._optional import import_optional

    torch = import_optional("torch")
    import_optional("skorch")
    start = time.perf_counter()
    if out is not None and Path(out).exists() and not Path(out).is_dir():
        raise ValueError(f"out={str(out)!r} exists and is not a folder.")
    torch_device = _check_device(device)
    preset = dict(_PRESETS["quick" if quick else "full"])
    for key, value in (
        ("max_epochs", max_epochs),
        ("n_bootstrap", n_bootstrap),
        ("mc_samples", mc_samples),
    ):
        if value is not None:
            preset[key] = int(value)
    config = dict(
        preset,
        seed=int(seed),
        val_annotations=int(val_annotations),
        device=str(torch_device),
        quick=bool(quick),
    )
    prog = _Progress(stream, enabled=bool(progress))
    previous_threads = torch.get_num_threads()
    if n_threads is not None:
        torch.set_num_threads(int(n_threads))
    try:
        result = _run(config, prog, torch_device)
    finally:
        torch.set_num_threads(previous_threads)
    result.config = config
    result.notes = _notes(result)
    result.markdown = {
        key: markdown_table(result.tables[key], DEMO_TABLES[key], index_name="method")
        for key in DEMO_TABLES
    }
    result.files, result.figures = [], []
    result.figures_skipped = None
    if out is not None:
        result.files = _write_tables(Path(out), result)
        if figures:
            result.figures, result.figures_skipped = _save_figures(Path(out), result)
        else:
            result.figures_skipped = "figures=False"
        for path in result.files + result.figures:
            prog.message(f"wrote {path}")
    result.elapsed = time.perf_counter() - start
    prog.message(f"done in {result.elapsed:.1f}s")
    return result


def _run(config: dict, prog: _Progress, torch_device) -> Bunch:
    from sklearn.frozen import FrozenEstimator

    from ._skorch import SmallCNN, make_soft_label_net
    from .calibration import AlphaCalibrator, MCDropoutClassifier, TemperatureScaler
    from .datasets import make_mixed_digits
    from .metrics import human_calibration_report, predicted_disagreement

    seed = config["seed"]
    device = str(torch_device)
    prog.message("building Mix-Digits (scikit-learn's 8x8 digits, no download)")
    data = make_mixed_digits(
        {"train": 1, "valid": config["val_annotations"], "test": 10},
        valid_size=_VALID_SIZE,
        test_size=_TEST_SIZE,
        random_state=seed,
    )
    train, valid, test = data.train, data.valid, data.test
    prog.message(
        f"items: {len(train.counts)} train (1 label), {len(valid.counts)} valid "
        f"({config['val_annotations']} labels), {len(test.counts)} test (10 labels)"
    )

    net = make_soft_label_net(
        SmallCNN,
        n_classes=10,
        module__dropout=_DROPOUT,
        max_epochs=config["max_epochs"],
        lr=_LR,
        batch_size=_BATCH_SIZE,
        device=device,
        random_state=seed,
        callbacks=[("progress", _epoch_progress_callback(prog, config["max_epochs"]))],
    )
    net.fit(train.images, train.counts)

    Xv, Yv = valid.images, valid.counts
    prog.message("calibrating on the validation split: temperature scaling")
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
        prog.update("α-calibration", i, len(alpha_of), name)
    models = {
        "Raw": net,
        "Raw+ts": ts,
        "Raw+α": alphas["Raw+α"],
        "Raw+ts+α": alphas["Raw+ts+α"],
        "MC-dropout": mc,
        "MC-dropout+α": alphas["MC-dropout+α"],
    }

    prog.message("predicting on the test split")
    Xt, Yt = test.images, test.counts
    update, rest = _split_one_label(Yt, np.random.RandomState(seed))
    preds = {}
    for name, model in models.items():
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

    B = config["n_bootstrap"]
    prog.message(
        f"evaluating {len(preds)} methods"
        + (f" with {B} bootstrap resamples" if B else "")
    )
    report = human_calibration_report(
        Yt,
        {name: p[0] for name, p in preds.items()},
        metrics=_report_metrics(),
        n_bootstrap=B,
        random_state=seed,
    )
    extra = _extra_columns(Yt, rest, preds, B, seed)
    tables = _assemble(report, extra, with_ci=B > 0)
    return Bunch(
        tables=tables,
        n_items={
            "train": len(train.counts),
            "valid": len(valid.counts),
            "test": len(test.counts),
        },
        temperature=float(ts.temperature_),
        median_concentration={
            name: float(np.median(alphas[name].predict_concentration(Xt)))
            for name in alphas
        },
        predictions=preds,
        test_counts=Yt,
    )


# --------------------------------------------------------------------------- #
# output
# --------------------------------------------------------------------------- #
def _write_tables(out: Path, result: Bunch) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    files = []
    sections = ["# hcal demo: Mix-Digits, one training label per item", ""]
    for key in DEMO_TABLES:
        csv_path = out / f"{key}.csv"
        result.tables[key].to_csv(csv_path, float_format="%.6g")
        md_path = out / f"{key}.md"
        md_path.write_text(result.markdown[key] + "\n", encoding="utf-8")
        files += [str(csv_path), str(md_path)]
        sections += [f"## {_TITLES[key]}", "", result.markdown[key], ""]
    sections += ["## Notes", ""] + [f"* {note}" for note in result.notes]
    report = out / "report.md"
    report.write_text("\n".join(sections) + "\n", encoding="utf-8")
    files.append(str(report))
    return files


def plotting_unavailable() -> str | None:
    """Why figures cannot be drawn (None when they can)."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        return "matplotlib is not installed (pip install 'sklearn-hcal[plot]')"
    if importlib.util.find_spec("sklearn_hcal.plotting") is None:
        return "sklearn_hcal.plotting is not available"
    return None


def save_figures(
    folder,
    Y: np.ndarray,
    probabilities: dict,
    disagreement: dict | None = None,
    *,
    dotted=(),
) -> list[str]:
    """Save the diagnostic figures of several predictions on the same items.

    Draws, with the displays of :mod:`sklearn_hcal.plotting`:

    * ``disagreement_reliability.png`` -- predicted vs observed disagreement
      (Mimori et al. 2021, Figs. 1/5b), when some item has two labels;
    * ``calibration_dispersion.png`` -- the (CL, DL) map (Mimori Fig. 5a),
      for integer counts, one point per distinct probability matrix;
    * ``majority_reliability.png`` -- confidence vs majority accuracy (Baan
      et al. 2022, Fig. 1c-d);
    * ``instance_errors.png`` -- histograms of the per-item DistCE (Baan
      Figs. 1a-b).

    Parameters
    ----------
    folder : str or path
        Created if needed.
    Y : ndarray of shape (n_samples, n_classes)
        Label histograms (or human probabilities).
    probabilities : dict of str to ndarray of shape (n_samples, n_classes)
        Predicted class probabilities by name.
    disagreement : dict of str to ndarray of shape (n_samples,), default=None
        Predicted disagreement ``φ`` by name; default ``1 − Σq²`` of each
        probability matrix.
    dotted : collection of str, default=()
        Names drawn dotted in the disagreement diagram (Mimori et al. draw the
        methods without α-calibration dotted).

    Returns
    -------
    paths : list of str
    """
    reason = plotting_unavailable()
    if reason is not None:
        raise ImportError(reason)
    from .plotting import (
        CalibrationDispersionDisplay,
        DisagreementReliabilityDisplay,
        InstanceErrorDisplay,
        MajorityReliabilityDisplay,
    )
    from .utils._optional import import_optional

    plt = import_optional("matplotlib.pyplot")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    integer = bool(np.all(np.mod(Y, 1) == 0))
    pairs = integer and bool(np.any(Y.sum(axis=1) >= 2))
    if disagreement is None:
        disagreement = {n: 1.0 - np.sum(P**2, axis=1) for n, P in probabilities.items()}
    # Methods that share their class probabilities (α-calibration keeps f)
    # would draw the same curve twice in the class-probability figures.
    distinct = {}
    for name, P in probabilities.items():
        if not any(np.array_equal(P, Q) for Q in distinct.values()):
            distinct[name] = P
    paths = []

    def save(fig, stem):
        path = folder / f"{stem}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(str(path))

    # The reliability diagrams keep no title: their legend sits above the axes.
    with warnings.catch_warnings():
        # Single-annotation and similar notes were given with the tables.
        warnings.simplefilter("ignore", UserWarning)
        if pairs:
            ax = None
            for name, phi in disagreement.items():
                disp = DisagreementReliabilityDisplay.from_predictions(
                    Y,
                    phi,
                    name=name,
                    ax=ax,
                    show_counts=ax is None,
                    linestyle=":" if name in dotted else "-",
                )
                ax = disp.ax_
            save(disp.figure_, "disagreement_reliability")
        if integer:
            disp = CalibrationDispersionDisplay.from_predictions(Y, distinct)
            disp.ax_.set_title("Calibration-dispersion map (Mimori et al. 2021)")
            save(disp.figure_, "calibration_dispersion")
        ax = None
        for name, P in distinct.items():
            disp = MajorityReliabilityDisplay.from_predictions(
                Y, P, name=name, ax=ax, show_counts=ax is None
            )
            ax = disp.ax_
        save(disp.figure_, "majority_reliability")
        disp = InstanceErrorDisplay.from_predictions(Y, distinct, kind="dist_ce")
        disp.ax_.set_title("Instance-level DistCE (Baan et al. 2022)")
        save(disp.figure_, "instance_errors")
    return paths


def _save_figures(out: Path, result: Bunch) -> tuple[list[str], str | None]:
    reason = plotting_unavailable()
    if reason is not None:
        return [], reason
    preds = result.predictions
    paths = save_figures(
        out,
        result.test_counts,
        {name: p[0] for name, p in preds.items()},
        {name: p[1] for name, p in preds.items()},
        dotted=("Raw", "Raw+ts", "MC-dropout"),
    )
    return paths, None


def format_summary(result: Bunch) -> str:
    """The three tables and the notes as Markdown text (what ``hcal demo`` prints).

    Parameters
    ----------
    result : Bunch
        The return value of :func:`run_demo`.

    Returns
    -------
    text : str
    """
    parts = []
    for key in DEMO_TABLES:
        parts += [f"## {_TITLES[key]}", "", result.markdown[key], ""]
    parts += [f"* {note}" for note in result.notes]
    return "\n".join(parts)
