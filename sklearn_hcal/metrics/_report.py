"""``human_calibration_report``: the tables of the three papers, with intervals.

One row per classifier, one column per metric of the registry
(:mod:`sklearn_hcal.metrics._registry`), computed by the engine
(:mod:`sklearn_hcal.metrics._engine`) from the hooks declared next to each
metric's kernel, with paired bootstrap intervals
(:mod:`sklearn_hcal.metrics._bootstrap`), from inputs checked once
(:mod:`sklearn_hcal.metrics._report_inputs`).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..utils._compat import Interval, StrOptions
from ..utils._compat import validate_params as validate_checked_params
from ..utils._docstrings import fill_doc
from ..utils._warnings import warn_user
from . import _registry
from ._bootstrap import bootstrap, bootstrap_intervals
from ._dispatch import validate_params  # dask arrays: chunk-wise
from ._engine import (
    Source,
    as_prediction_dict,
    evaluate,
    resolve,
    warn_debiased,
)
from ._report_inputs import CheckedInputs, checked_disagreement, validate_predictions

__all__ = ["human_calibration_report", "report_table"]


def _with_disagreement(inputs: CheckedInputs, disagreement, columns) -> list:
    """One :class:`Source` per classifier, with its own ``φ`` when given."""
    out = []
    uses_phi = any(c.metric.response == "disagreement" for c in columns)
    for name, source in inputs.sources.items():
        phi = None
        if name in disagreement and uses_phi:
            _, phi, _ = checked_disagreement(inputs, name, disagreement[name])
        out.append(Source(source.pair, phi))
    return out


def _check_disagreement_names(disagreement, preds, columns) -> dict:
    disagreement = dict(disagreement or {})
    unknown = [k for k in disagreement if str(k) not in preds]
    if unknown:
        raise ValueError(
            f"disagreement has entries for {unknown}, which are not in "
            f"predictions ({list(preds)}); give each classifier's φ under its name."
        )
    if disagreement and not any(c.metric.response == "disagreement" for c in columns):
        warn_user(
            "disagreement is given but no disagreement metric is computed (they "
            "need integer label counts with items of two annotations or more, or "
            "ask for them in metrics=); the values are not used."
        )
    return {str(k): v for k, v in disagreement.items()}


_TEMPLATE = """Table of human-calibration metrics, one row per classifier.

    The columns are the measures of Nie et al. (2020, ChaosNLI Table 5),
    Baan et al. (2022, Table 1) and Mimori et al. (2021, Tables 1-5), each
    computed as the corresponding function of :mod:`sklearn_hcal.metrics`
    computes it (the same kernels; equal to ~1e-15), with its defaults unless
    ``metric_params`` says otherwise:

{table}

    By default the columns marked * are computed, those that the labels
    support: the ones needing integer counts are left out for rows of
    probabilities, the disagreement ones without an item of two annotations;
    asking for them explicitly raises an error. Long names and scorer names
    are accepted in ``metrics`` too.

    The disagreement columns compare the human labels with a predicted
    disagreement ``φ``: a classifier's own (``disagreement={{name: φ}}``, e.g.
    ``predict_disagreement`` of an α-calibrated or ensemble model), else the
    point prediction's ``φ = 1 − Σ_k q_k²``.

    Confidence intervals come from the bootstrap over items: each resample
    draws ``n_samples`` items with replacement and every metric is recomputed
    on it. The **same resamples are used for every classifier**, so
    differences between classifiers are paired (``return_bootstrap=True``
    gives the replicates to compute them); a report of other columns or
    labels on the same number of items with the same ``random_state`` uses the
    same resamples too. A resample on which a metric is undefined (e.g. no
    item with two annotations) is left out of that metric's interval.

    By default the intervals are *bias-corrected percentile* intervals: the
    percentiles of the replicates shifted by the bootstrap estimate of the
    bias, ``mean(replicates) − estimate``. For metrics that are means over
    items that shift is negligible and the interval is the plain percentile
    one. For Mimori et al.'s debiased binned estimators (``cl``, ``ce``,
    ``dl``, ``disagreement_ce``) it is not: a resample keeps each item's
    labels, so in the bootstrap world the label noise that the estimator
    removes is added back once more, and the replicates centre on the
    *plug-in* value rather than on the debiased estimate.
    ``ci_method="percentile"`` gives the plain percentile interval and
    ``"basic"`` the basic bootstrap ``2·estimate − q``. A ``UserWarning``
    names any metric whose interval still misses its estimate.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
        Label histograms (integer counts), rows of human probabilities, or 1-D
        labels.
    predictions : dict of str to array-like, or array-like
        ``{{name: probabilities of shape (n_samples, n_classes)}}``; a single
        array is reported under the name ``"model"``. 1-D arrays are
        P(second class) of a binary problem.
    %(counts)s
    labels : array-like of shape (n_classes,), default=None
        The class of each column of every prediction, as for the metric
        functions (e.g. :func:`distribution_calibration_error`): 1-D
        ``y_true`` labels are looked up among them, and they are matched by
        name with a DataFrame ``y_true``. Without it a DataFrame prediction's
        column names are its classes, matched by name with a DataFrame
        ``y_true`` or with 1-D labels; else the columns are positional. With
        an array ``y_true`` (no class names) the predictions that name their
        columns must name them in the same order: which order the labels'
        columns follow is ambiguous otherwise, and a ``ValueError`` says so.
    metrics : list of str, default=None
        Columns to compute, in order (names above); ``None`` = the default
        columns that the labels support.
    metric_params : dict of str to dict, default=None
        Keyword arguments of the metric functions per column, e.g.
        ``{{"ece": {{"n_bins": 15}}, "cl": {{"n_bins": 10}},
        "accuracy": {{"ties": "any"}}}}``; validated as the functions validate
        them.
    disagreement : dict of str to array-like of shape (n_samples,), default=None
        Predicted disagreement ``φ`` of some classifiers (by their name in
        ``predictions``) for the disagreement columns.
    n_bootstrap : int, default=0
        Number of bootstrap resamples; 0 gives point estimates only.
    confidence_level : float, default=0.95
        Coverage of the intervals, in ``(0, 1)``.
    ci_method : {{"bias_corrected", "percentile", "basic"}}, \
default="bias_corrected"
        How replicates become intervals (see above). Intervals are clipped to
        the range every value of the metric lies in (its registry ``bounds``,
        e.g. ``[-1, 1]`` for a correlation), which the shifted methods can
        otherwise leave on small samples.
    random_state : int, RandomState or Generator instance, or None, \
default=None
        Seeds the resampling. The resamples are drawn with
        :class:`numpy.random.Generator` streams spawned from
        ``numpy.random.SeedSequence(random_state)`` (an instance gives the
        seed sequence 128 bits of its own stream), one per chunk of
        resamples, so they do not depend on ``n_jobs``. The replicates of a
        given ``random_state`` differ from those of versions that drew with
        ``RandomState.randint``; their distribution does not.
    return_bootstrap : bool, default=False
        Also return the bootstrap replicates.
    n_jobs : int, default=None
        Number of jobs computing chunks of resamples, with
        :class:`sklearn.utils.parallel.Parallel` (``None`` means 1 unless in
        a :func:`joblib.parallel_backend` context). The resamples are drawn on
        the calling process, in order, and each chunk is computed
        independently of the process that computes it, so the result is
        **identical for every** ``n_jobs`` **and backend**.
    verbose : int, default=0
        ``>= 1`` shows the bootstrap's progress on standard error.

    Returns
    -------
    report : DataFrame of shape (n_classifiers, n_metrics) or \
(n_classifiers, 3 * n_metrics)
        Index: the classifier names (``"classifier"``). Without bootstrap one
        column per metric; with it, each metric ``m`` is followed by
        ``m_low`` and ``m_high``, the interval bounds. ``report.attrs``
        records ``n_samples``, ``n_bootstrap``, ``confidence_level`` and
        ``ci_method``.
    replicates : DataFrame of shape (n_bootstrap * n_classifiers, n_metrics)
        Only when ``return_bootstrap=True``: the metric values of every
        resample, indexed by ``(resample, classifier)``.

    See Also
    --------
    instance_calibration_errors : The per-item errors behind the means.
    metrics_by_agreement : The same metrics per bin of human entropy.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.metrics import human_calibration_report
    >>> Y = np.array([[8, 2], [5, 5], [1, 9], [7, 3]])
    >>> oracle = Y / Y.sum(axis=1, keepdims=True)
    >>> uniform = np.full((4, 2), 0.5)
    >>> report = human_calibration_report(
    ...     Y, {{"oracle": oracle, "uniform": uniform}},
    ...     metrics=["accuracy", "dist_ce", "jsd"])
    >>> report.round(3)
                accuracy  dist_ce    jsd
    classifier
    oracle          1.00    0.000  0.000
    uniform         0.75    0.225  0.172
    >>> ci = human_calibration_report(
    ...     Y, oracle, metrics=["dist_ce"], n_bootstrap=20, random_state=0)
    >>> list(ci.columns)
    ['dist_ce', 'dist_ce_low', 'dist_ce_high']
    >>> # an α-calibrated model's own disagreement probabilities
    >>> phi = np.array([0.3, 0.5, 0.2, 0.4])
    >>> human_calibration_report(
    ...     Y, {{"alpha": oracle}}, disagreement={{"alpha": phi}},
    ...     metrics=["disagreement_sq_loss"]).round(4)
                disagreement_sq_loss
    classifier
    alpha                     0.2239
    """


def _metric_table_rst() -> str:
    defaults = set(_registry.default_columns())
    rows = [
        (
            f"``{m.column}``" + (" *" if m.column in defaults else ""),
            (f":func:`{m.function.__name__}`" if m.function else m.description)
            + "".join(f", ``{k}={v!r}``" for k, v in m.kwargs.items()),
        )
        for m in _registry.metrics().values()
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    rule = f"    {'=' * w0} {'=' * w1}"
    lines = [rule, f"    {'column'.ljust(w0)} function", rule]
    lines += [f"    {a.ljust(w0)} {b}" for a, b in rows]
    return "\n".join(lines + [rule])


def _warn_shifted_intervals(point, low, high, columns) -> None:
    # The binned, debiased estimators (CL, CE, DL, ...) are not smooth functions
    # of the item distribution: a resample duplicates items, which empties or
    # thins bins and changes the bias corrections, so their bootstrap
    # distribution can sit beside the point estimate. Say so rather than
    # report an interval that silently excludes it.
    tol = 1e-12 * np.maximum(1.0, np.abs(point))
    outside = (point < low - tol) | (point > high + tol)
    if np.any(outside):
        names = [columns[j] for j in np.flatnonzero(outside.any(axis=0))]
        warn_user(
            f"The bootstrap intervals of {names} do not contain the "
            "point estimate for some classifiers. With few resamples this can "
            "happen by chance; otherwise the bootstrap distribution of these "
            "metrics is shifted (binned estimators with sparsely filled bins "
            "react to the items a resample duplicates). Treat those intervals "
            "with care: use more resamples, more items or fewer bins."
        )


#: The constraints of the report's parameters other than its data, shared by
#: the public function and the entry that takes validated inputs.
_REPORT_PARAMS = {
    "metrics": [list, tuple, str, None],
    "metric_params": [dict, None],
    "disagreement": [Mapping, None],
    "n_bootstrap": [Interval(numbers.Integral, 0, None, closed="left")],
    "confidence_level": [Interval(numbers.Real, 0, 1, closed="neither")],
    "ci_method": [StrOptions({"bias_corrected", "percentile", "basic"})],
    "random_state": ["random_state", np.random.Generator],
    "return_bootstrap": ["boolean"],
    "n_jobs": [numbers.Integral, None],
    "verbose": ["verbose"],
}


def _documented(function):
    """The report's docstring, its table of columns read from the registry."""
    function.__doc__ = _TEMPLATE.format(table=_metric_table_rst())
    return fill_doc(function)


@validate_params(
    {
        "y_true": ["array-like"],
        "predictions": [Mapping, "array-like"],
        "counts": ["array-like", None],
        "labels": ["array-like", None],
        **_REPORT_PARAMS,
    },
    prefer_skip_nested_validation=True,
)
@_documented
def human_calibration_report(
    y_true: ArrayLike,
    predictions,
    *,
    counts: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    metrics: list[str] | None = None,
    metric_params: dict | None = None,
    disagreement: dict | None = None,
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    ci_method: str = "bias_corrected",
    random_state=None,
    return_bootstrap: bool = False,
    n_jobs: int | None = None,
    verbose: int = 0,
):
    # The human labels are validated once; each further classifier only
    # checks its probabilities and shares n and μ̂. The parameters were
    # validated here: report_table, nested, does not validate them again.
    inputs = validate_predictions(
        y_true,
        as_prediction_dict(predictions),
        counts,
        labels,
        keyed=isinstance(predictions, Mapping),
    )
    return report_table(
        inputs,
        metrics=metrics,
        metric_params=metric_params,
        disagreement=disagreement,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level,
        ci_method=ci_method,
        random_state=random_state,
        return_bootstrap=return_bootstrap,
        n_jobs=n_jobs,
        verbose=verbose,
    )


@validate_checked_params(
    {"inputs": [CheckedInputs], **_REPORT_PARAMS},
    prefer_skip_nested_validation=True,
)
def report_table(
    inputs: CheckedInputs,
    *,
    metrics: list[str] | None = None,
    metric_params: dict | None = None,
    disagreement: dict | None = None,
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    ci_method: str = "bias_corrected",
    random_state=None,
    return_bootstrap: bool = False,
    n_jobs: int | None = None,
    verbose: int = 0,
):
    """The report's table of validated inputs (:class:`CheckedInputs`).

    What :func:`human_calibration_report` computes once its data are
    validated, and the entry of the layers that hold the labels and the
    predictions validated already (the HTML report, ``hcal evaluate``), so
    that nothing is scanned twice. Every other parameter is the report's,
    validated as it validates them.
    """
    human = inputs.human
    names = list(inputs.sources)
    columns = resolve(
        metrics, human, metric_params, default=_registry.default_columns()
    )
    disagreement = _check_disagreement_names(disagreement, inputs.sources, columns)
    sources = _with_disagreement(inputs, disagreement, columns)
    warn_debiased(columns, human)
    if n_bootstrap > 0 and human.n_samples < 2:
        warn_user(
            f"n_bootstrap={n_bootstrap} with {human.n_samples} item: every "
            "resample is that item, so the intervals have zero width; they say "
            "nothing about the uncertainty."
        )
    if any(c.metric.requires == "pairs" for c in columns):
        human.mu  # noqa: B018 -- computed once, before any thread needs it
    with warnings.catch_warnings():
        # The metric modules' warnings were raised once above.
        warnings.simplefilter("ignore", UserWarning)
        boot = None
        if n_bootstrap > 0:
            point, boot = bootstrap(
                columns, human, sources, n_bootstrap, random_state, n_jobs, verbose
            )
        else:
            point = np.array([evaluate(columns, human, s) for s in sources])
    column_names = [c.name for c in columns]
    index = pd.Index(names, name="classifier")
    if boot is None:
        report = pd.DataFrame(point, index=index, columns=column_names)
    else:
        with warnings.catch_warnings():
            # All-NaN columns (a metric undefined on every resample) stay NaN.
            warnings.simplefilter("ignore", RuntimeWarning)
            low, high = bootstrap_intervals(point, boot, confidence_level, ci_method)
        # A shifted interval ("bias_corrected", "basic") can leave the range
        # every value lies in (a correlation's 1.028 on 5 items); clip to it.
        lo, hi = np.array(
            [[np.nan if b is None else b for b in c.metric.bounds] for c in columns]
        ).T
        low = np.clip(
            low, np.nan_to_num(lo, nan=-np.inf), np.nan_to_num(hi, nan=np.inf)
        )
        high = np.clip(
            high, np.nan_to_num(lo, nan=-np.inf), np.nan_to_num(hi, nan=np.inf)
        )
        _warn_shifted_intervals(point, low, high, column_names)
        data = {}
        for j, metric in enumerate(column_names):
            data[metric] = point[:, j]
            data[f"{metric}_low"] = low[:, j]
            data[f"{metric}_high"] = high[:, j]
        report = pd.DataFrame(data, index=index)
    report.attrs.update(
        n_samples=human.n_samples,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level if n_bootstrap else None,
        ci_method=ci_method if n_bootstrap else None,
    )
    if not return_bootstrap:
        return report
    width = len(column_names)
    replicates = pd.DataFrame(
        np.empty((0, width)) if boot is None else boot.reshape(-1, width),
        index=pd.MultiIndex.from_product(
            [range(n_bootstrap if boot is not None else 0), names],
            names=["resample", "classifier"],
        ),
        columns=column_names,
    )
    return report, replicates
