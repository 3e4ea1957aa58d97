"""A skorch callback that scores human metrics on the validation split.

skorch is optional: this module imports it, and the package faces import
this module only when :class:`HumanMetricsCallback` is first used.
"""

from __future__ import annotations

import numpy as np

from ..utils._optional import import_optional
from ..utils._warnings import warn_user

__all__ = ["HumanMetricsCallback"]

skorch = import_optional("skorch")


def _record_names(metrics):
    """``[(column, history key, sign, greater_is_better)]``: a scorer's name
    and sign (its values are greater-is-better), else the column as it is."""
    from ..metrics._shared import get_metric

    out = []
    for name in metrics:
        m = get_metric(name)
        if m.scorer_name is None:
            out.append((m.column, m.column, 1.0, m.greater_is_better))
        else:
            sign = 1.0 if m.greater_is_better else -1.0
            out.append((m.column, m.scorer_name, sign, True))
    return out


def _metric_column(name):
    """The report column of a metric name, ``None`` for other history keys."""
    from ..metrics._shared import get_metric

    try:
        return get_metric(name).column
    except ValueError:
        return None


def _check_monitors(callbacks, names) -> None:
    """A callback monitoring a recorded metric by another of its names raises.

    ``HumanMetricsCallback(["kl"])`` records ``neg_kl_divergence``; an
    ``EarlyStopping(monitor="kl")`` beside it would fail after the first
    epoch with skorch's missing-key error (or, were both recorded, stop on
    the wrong sign).
    """
    recorded = {column: (key, greater) for column, key, _, greater in names}
    keys = {key for key, _ in recorded.values()}
    for name, cb in callbacks:
        monitor = getattr(cb, "monitor", None)
        if not isinstance(monitor, str):
            continue
        base, best = monitor, ""
        if monitor.endswith("_best"):
            base, best = monitor[: -len("_best")], "_best"
        if base in keys:
            continue
        column = _metric_column(base)
        if column not in recorded:
            continue
        key, greater = recorded[column]
        advice = f"monitor={key + best!r}"
        if not best:
            advice += ", lower_is_better=" + str(not greater)
        raise ValueError(
            f"Callback {name!r} monitors {monitor!r}, but HumanMetricsCallback "
            f"records that metric in net.history as {key + best!r}"
            + (" (the scorer's sign: greater is better)" if key != column else "")
            + f"; use {advice}."
        )


class HumanMetricsCallback(skorch.callbacks.Callback):
    """Human-calibration metrics of the validation split, every epoch.

    Each validation batch's targets (label histograms, or their rows
    ``Y / n`` as :class:`SoftLabelNetClassifier` trains on them, or
    class indices) and predicted probabilities (the net's
    ``predict_nonlinearity`` applied to the module's output, as
    ``predict_proba`` applies it) update a
    :class:`~sklearn_hcal.metrics.MetricState`; at the end of the epoch
    every metric is recorded in ``net.history`` under its **scorer
    name** with the scorer's sign (``neg_kl_divergence`` holds ``−KL``:
    greater is better, as in :data:`~sklearn_hcal.metrics.HUMAN_SCORERS`),
    with ``<name>_best`` telling whether the epoch is the best so far.
    The values equal the metric functions on the epoch's validation
    predictions; no second pass over the validation data is made.

    Parameters
    ----------
    metrics : str or list of str, default=("neg_kl_divergence", \
"neg_expected_calibration_error")
        Metric names (scorer names, long names or report columns; see
        :func:`~sklearn_hcal.metrics.human_calibration_report`). A metric
        without a scorer (e.g. ``"ent_ce_signed"``) is recorded under its
        column name with its own sign.
    metric_params : dict of str to dict, default=None
        Keyword arguments of the metric functions per metric, e.g.
        ``{"ece": {"n_bins": 10}}``.

    Notes
    -----
    Put the callback **before** ``EarlyStopping`` and ``Checkpoint`` in
    ``callbacks``: skorch calls the callbacks in that order at the end of
    an epoch, and they read what this one records (a ``ValueError`` at
    the start of training says so otherwise). Use
    ``EarlyStopping(monitor="neg_kl_divergence", lower_is_better=False)``
    and ``Checkpoint(monitor="neg_kl_divergence_best")``: a callback that
    monitors a recorded metric by another of its names (``monitor="kl"``)
    raises at the start of training, naming the key to monitor.

    Metrics that need integer label counts (Mimori et al.'s estimators)
    need counts as validation targets: pass them with
    ``train_split=skorch.helper.predefined_split(Dataset(X_valid,
    Y_valid))``; a split of ``fit``'s ``y`` holds the normalised rows.

    Examples
    --------
    >>> import numpy as np
    >>> import torch
    >>> from skorch.callbacks import EarlyStopping
    >>> from skorch.dataset import ValidSplit
    >>> from sklearn_hcal import HumanMetricsCallback, make_soft_label_net
    >>> from sklearn_hcal.datasets import make_label_histograms
    >>> X, Y, _ = make_label_histograms(200, n_classes=3, n_features=4,
    ...                                 random_state=0)
    >>> net = make_soft_label_net(
    ...     torch.nn.Linear(4, 3), max_epochs=3, random_state=0,
    ...     train_split=ValidSplit(4, stratified=False),
    ...     callbacks=[
    ...         HumanMetricsCallback(["neg_kl_divergence", "ece"]),
    ...         EarlyStopping(monitor="neg_kl_divergence",
    ...                       lower_is_better=False),
    ...     ])
    >>> _ = net.fit(X.astype(np.float32), Y)
    >>> len(net.history[:, "neg_kl_divergence"])
    3
    """

    def __init__(
        self,
        metrics=("neg_kl_divergence", "neg_expected_calibration_error"),
        *,
        metric_params=None,
    ):
        self.metrics = metrics
        self.metric_params = metric_params

    def initialize(self):
        from ..metrics import MetricState

        names = [self.metrics] if isinstance(self.metrics, str) else self.metrics
        names = list(names)
        # validates the names and parameters before training starts
        MetricState(names, metric_params=self.metric_params)
        self.names_ = _record_names(names)
        self.state_ = None
        self.best_ = {}
        self.warned_ = False
        return self

    def on_train_begin(self, net, **kwargs):
        keys = {key for _, key, _, _ in self.names_}
        keys |= {f"{key}_best" for key in keys}
        me = next((i for i, (_, cb) in enumerate(net.callbacks_) if cb is self), None)
        for i, (name, cb) in enumerate(net.callbacks_):
            if me is not None and i < me and getattr(cb, "monitor", None) in keys:
                raise ValueError(
                    f"Callback {name!r} monitors {cb.monitor!r}, which "
                    "HumanMetricsCallback records, but comes before it in "
                    "callbacks: put HumanMetricsCallback first."
                )
        _check_monitors(net.callbacks_, self.names_)
        self.best_ = {}

    def on_epoch_begin(self, net, **kwargs):
        self.state_ = None

    def on_batch_end(self, net, batch=None, training=None, **kwargs):
        if training or batch is None:
            return
        y_pred = kwargs.get("y_pred")
        y = batch[1] if isinstance(batch, (tuple, list)) and len(batch) > 1 else None
        if y is None or y_pred is None:
            return
        from ..metrics import MetricState
        from ..utils._compat import skorch_predict_nonlinearity

        proba = skorch_predict_nonlinearity(net)(y_pred)
        if self.state_ is None:
            # class indices of 1-D targets name the columns 0 .. K-1 (a
            # batch may miss a class)
            labels = np.arange(proba.shape[-1])
            self.state_ = MetricState(
                [c for c, _, _, _ in self.names_],
                metric_params=self.metric_params,
                labels=labels,
            )
        self.state_.update(y, proba)

    def on_epoch_end(self, net, **kwargs):
        if self.state_ is None:
            if not self.warned_:
                warn_user(
                    "HumanMetricsCallback saw no validation batch with "
                    "targets: give the net a train_split (e.g. "
                    "skorch.dataset.ValidSplit(5, stratified=False))."
                )
                self.warned_ = True
            return
        values = self.state_.compute()
        for column, key, sign, greater in self.names_:
            score = sign * values[column]
            best = self.best_.get(key)
            is_best = best is None or (score > best if greater else score < best)
            if is_best:
                self.best_[key] = score
            net.history.record(key, score)
            net.history.record(f"{key}_best", bool(is_best))
        self.state_ = None
