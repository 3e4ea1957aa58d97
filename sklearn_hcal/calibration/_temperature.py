"""Temperature scaling fitted on label histograms (Mimori et al. 2021, App. D.1)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..utils._compat import Interval, fit_context
from ..utils._threads import one_blas_thread
from ..utils._warnings import warn_user
from ._base import _BaseLogitCalibrator
from ._rescaling import power_of_two_scale

__all__ = ["TemperatureScaler"]

#: In the separable case (β → ∞) β is set so that the largest per-row logit
#: range times β equals this value: predictions are then one-hot to machine
#: precision for that row.
_SEPARABLE_BETA_RANGE = 1e4


def _inverse_temperature_derivatives(beta, Zc, wn, A, W, buf):
    """Loss and its first three derivatives in β for the histogram NLL.

    With p_i = softmax(β z_i) and weights ω_i = w_i n_i,
    ``L(β) = [Σ_i ω_i logΣ_k exp(β z_ik) − β A] / W`` with
    ``A = Σ_i w_i Σ_k Y_ik z_ik`` and ``W = Σ_i ω_i``. The derivatives are the
    cumulants of z under p_i (L is a log-partition function):
    ``L' = [Σ_i ω_i E[z_i] − A] / W``, ``L'' = Σ_i ω_i Var[z_i] / W ≥ 0`` (so
    L is convex in β) and ``L''' = Σ_i ω_i κ3[z_i] / W``.
    ``Zc`` is z minus its row maximum, so ``exp(β Zc) ≤ 1`` and the row sums
    are ≥ 1: no overflow and no log(0) for any β ≥ 0. All passes reuse the
    one work buffer ``buf`` (fresh large arrays are costly to touch).
    """
    # Block by block, so that the cumulants' temporaries stay in the cache.
    totals = np.zeros(4)
    step = _block_rows(Zc.shape[1])
    for start in range(0, Zc.shape[0], step):
        rows = slice(start, start + step)
        S, m1, m2, m3 = _row_moments(beta, Zc[rows], buf, 3)
        var = np.maximum(m2 - m1 * m1, 0.0)
        # m1 * m1 * m1, not m1**3: numpy's pow for a cube costs 30 times as much
        kappa3 = m3 - 3.0 * m1 * m2 + 2.0 * (m1 * m1 * m1)
        w = wn[rows]
        totals += (w @ np.log(S), w @ m1, w @ var, w @ kappa3)
    log_s, mean, var, kappa3 = totals
    return (log_s - beta * A) / W, (mean - A) / W, var / W, kappa3 / W


def _row_moments(beta, Zc, buf, order):
    """``(S, m_1, …, m_order)`` per row under ``p_i = softmax(β z_i)``.

    ``S_i = Σ_k exp(β z_ik)`` and ``m_j = E_{p_i}[z_i^j]``, the raw moments.
    ``buf`` is a work array of at least ``min(n_samples, block)`` rows
    (:func:`_moment_buffer`).
    """
    n_samples, n_classes = Zc.shape
    ones = np.ones(n_classes)
    S = np.empty(n_samples)
    moments = [np.empty(n_samples) for _ in range(order)]
    # Row blocks small enough for the cache: the exp, the products and the
    # row sums of a block then read memory once instead of once per pass.
    step = _block_rows(n_classes)
    for start in range(0, n_samples, step):
        rows = slice(start, min(start + step, n_samples))
        z = Zc[rows]
        work = buf[: z.shape[0]]
        if beta == 0.0:
            work.fill(1.0)  # uniform p
        else:
            np.multiply(z, beta, out=work)
            np.exp(work, out=work)
        # matrix-vector products sum short rows much faster than .sum(axis=1)
        s = np.matmul(work, ones, out=S[rows])
        for m in moments:
            np.multiply(work, z, out=work)
            np.divide(np.matmul(work, ones, out=m[rows]), s, out=m[rows])
    return (S, *moments)


#: Entries of one row block of :func:`_row_moments` (256 KiB of float64).
_BLOCK_ENTRIES = 32768


def _block_rows(n_classes):
    return max(64, _BLOCK_ENTRIES // n_classes)


def _moment_buffer(Zc):
    """Work array for :func:`_row_moments` (one row block)."""
    return np.empty((min(Zc.shape[0], _block_rows(Zc.shape[1])), Zc.shape[1]))


def _inverse_temperature_se(beta, Zc, Y, w) -> float:
    """Sandwich (robust) standard error of the fitted inverse temperature.

    β̂ solves the estimating equation ``Σ_i w_i g_i(β) = 0`` with the item
    scores ``g_i = n_i E_{p_i}[z_i] − Σ_k Y_ik z_ik`` (the derivative of item
    i's NLL in β, ``p_i = softmax(β z_i)``). Taking the items as independent
    units (Huber, 1967; White, 1982), ``Var(β̂) ≈ Σ_i w_i g_i² / H²`` with
    ``H = Σ_i w_i n_i Var_{p_i}[z_i]``, the observed information; weights
    count as item repetitions (frequency weights). The labels need not
    follow the model: the variance is that of the per-annotation NLL's
    minimiser, for one label per item or for histograms. NaN when ``H = 0``.
    """
    _, m1, m2 = _row_moments(beta, Zc, _moment_buffer(Zc), 2)
    n = Y @ np.ones(Y.shape[1])
    g = n * m1 - np.einsum("ij,ij->i", Y, Zc)
    H = w @ (n * np.maximum(m2 - m1 * m1, 0.0))
    return float(np.sqrt(w @ (g * g)) / H) if H > 0 else np.nan


def _newton_halley(beta, Zc, wn, A, W, buf, *, tol, max_iter):
    """Safeguarded Newton–Halley iterations for the root of L'(β) from β > 0.

    Returns ``(beta, n_iter, converged)``.
    """
    lo, hi = 0.0, np.inf
    for n_iter in range(1, max_iter + 1):
        _, g, h, t = _inverse_temperature_derivatives(beta, Zc, wn, A, W, buf)
        if g == 0:
            return beta, n_iter, True
        if g < 0:
            lo = beta
        else:
            hi = beta
        step = -g / h if h > 0 else np.nan
        # Halley's correction (cubic convergence, so fewer O(nK) passes) when
        # it agrees in direction with the Newton step
        denom = 2.0 * h * h - g * t
        if h > 0 and denom > 0:
            halley = -2.0 * g * h / denom
            if halley * step > 0:
                step = halley
        if abs(step) <= tol * beta:  # checked first: β + step may round to β
            return beta + step, n_iter, True
        new = beta + step
        if not (lo < new < hi):
            if np.isinf(hi):
                new = 4.0 * beta
            elif lo == 0.0:
                new = hi / 4.0
            elif hi > 4.0 * lo:
                new = np.sqrt(lo * hi)
            else:
                new = 0.5 * (lo + hi)
        if abs(new - beta) <= tol * beta or (hi - lo) <= tol * lo:
            return new, n_iter, True
        beta = new
    return beta, max_iter, False


def _fit_inverse_temperature(
    Z: np.ndarray,
    Y: np.ndarray,
    sample_weight: np.ndarray | None = None,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> tuple[float, int]:
    """Inverse temperature β ≥ 0 minimising the multinomial NLL of histograms.

    A safeguarded Newton–Halley method on the convex objective, started at
    the Newton step from β = 0: the root of the monotone derivative is kept
    inside a bracket ``[lo, hi]`` and a step leaving the bracket is replaced
    by a bisection (geometric when the bracket spans more than a factor 4).
    Each iteration is a few O(n K) passes.

    Degenerate cases, each with a warning:

    * every row of ``Z`` constant: the loss does not depend on β; β = 1;
    * the derivative at β = 0 is ≥ 0 (scores uninformative or anti-informative
      for the histograms): the optimum over β ≥ 0 is β = 0 (T = ∞, uniform
      predictions);
    * every annotation lies on a top-scoring class: the loss decreases for
      ever (T → 0); β is capped so that the largest row range of ``Z`` times β
      is 1e4.

    Returns
    -------
    beta : float
    n_iter : int
        Number of Newton–Halley (or bisection) iterations.
    beta_se : float
        Sandwich standard error of ``beta`` (:func:`_inverse_temperature_se`);
        NaN in the three degenerate cases, where β̂ is not an interior
        minimum.
    """
    # Work on Z / c (c a power of two, so exactly): logits of any finite
    # magnitude, ±1e300 included, neither overflow in the moments below nor
    # change the result, since β(Z / c) = c·β(Z).
    c = power_of_two_scale(Z)
    Zc = Z / c
    Zc -= Zc.max(axis=1, keepdims=True)
    n = Y @ np.ones(Y.shape[1])
    w = np.ones(Z.shape[0]) if sample_weight is None else sample_weight
    wn = w * n
    W = wn.sum()
    if not W > 0:
        raise ValueError(
            "The total weight of the annotations (sum of sample_weight times "
            "annotations per item) must be positive."
        )
    A = w @ np.einsum("ij,ij->i", Y, Zc)
    g_inf = -A / W  # L'(β → ∞) ≥ 0, zero iff all annotations are on row maxima
    if g_inf <= 0:
        if not np.any(Zc):
            warn_user(
                "Every row of scores is constant, so the temperature does not "
                "change the predictions; temperature_ is set to 1 and its "
                "standard error to NaN."
            )
            return 1.0, 0, np.nan
        spread = -Zc.min()
        warn_user(
            "Every annotation falls on a top-scoring class, so the likelihood "
            "increases as the temperature goes to 0; temperature_ is set to "
            f"{spread * c / _SEPARABLE_BETA_RANGE:.3g} (near one-hot predictions) "
            "and its standard error to NaN."
        )
        return float(_SEPARABLE_BETA_RANGE / spread / c), 0, np.nan

    buf = _moment_buffer(Zc)
    _, g0, h0, _ = _inverse_temperature_derivatives(0.0, Zc, wn, A, W, buf)
    if g0 >= 0:
        warn_user(
            "The scores are not positively related to the labels (the loss "
            "does not decrease with the inverse temperature at 0), so the best "
            "temperature is infinite; temperature_ is set to inf (uniform "
            "predictions) and its standard error to NaN."
        )
        return 0.0, 0, np.nan

    beta = -g0 / h0  # Newton step from β = 0: scale-adaptive starting point
    beta, n_iter, converged = _newton_halley(
        beta, Zc, wn, A, W, buf, tol=tol, max_iter=max_iter
    )
    if not converged:
        warn_user(
            f"Temperature scaling did not converge in {max_iter} iterations; "
            "increase max_iter.",
            ConvergenceWarning,
        )
    # β(Z) = β(Zc)/c, so its standard error scales the same way
    return float(beta / c), n_iter, _inverse_temperature_se(beta, Zc, Y, w) / c


class TemperatureScaler(_BaseLogitCalibrator):
    """Temperature scaling fitted on label histograms.

    One temperature ``T`` is chosen to minimise the multinomial negative
    log-likelihood of the label histograms under ``softmax(z / T)``, i.e. the
    :func:`~sklearn_hcal.metrics.histogram_log_loss` (Mimori et al. 2021,
    eq. 82; temperature scaling as in their App. D.1 with ``W = I/T``,
    ``b = 0``). With 1-D labels it is exactly scikit-learn's
    ``CalibratedClassifierCV(method="temperature")`` objective. Temperature
    scaling never changes the predicted class.

    The objective is convex in the inverse temperature ``β = 1/T``; it is
    minimised by a safeguarded Newton–Halley method with analytic derivatives (a
    handful of O(n_samples × n_classes) passes), stable for logits of any
    magnitude.

    Parameters
    ----------
    estimator : estimator instance or None, default=None
        ``None``: ``X`` is the classifier output (logits, or probabilities, see
        ``input``). ``FrozenEstimator(fitted_clf)``: calibrate a fitted
        classifier (only ``FrozenEstimator`` means prefit). Any other
        classifier -- fitted or not -- is cloned and cross-fitted: out-of-fold
        scores train the temperature, then the classifier is refitted on all
        data; histogram targets go through
        :class:`~sklearn_hcal.SoftLabelClassifier`, row weights reach a
        Pipeline's final step. A fitted one warns; a skorch net raises (fit it,
        then pass ``FrozenEstimator(net)``). Scores are taken from
        ``decision_function``, else a skorch net's logits, else
        ``log(predict_proba)``.
    cv : int, cross-validation generator or iterable, default=None
        Splits for the cross-fitted mode (5 folds by default; stratified for
        1-D labels, ``KFold`` for histograms). Ignored otherwise.
    input : {"auto", "logits", "proba"}, default="auto"
        With ``estimator=None``: whether ``X`` holds logits or probabilities.
        ``"auto"`` takes ``X`` as probabilities when no entry is below 0 by
        more than a rounding error (``1e-8``; ``1e-6`` in float32) and all
        rows sum to 1 within the rounding tolerance of
        :func:`~sklearn_hcal._validation.row_sum_tolerance` (decided in
        ``fit``); probabilities are renormalised and floored at 1e-12 before
        the log.
    classes : array-like of shape (n_classes,), default=None
        Names of the columns of an array ``y`` (and of 1-D labels' classes).
        Histogram columns are matched to the wrapped classifier's
        ``classes_`` by name: a DataFrame's columns (or, for an array, these
        names) are reordered to it, and differing name sets raise. Without
        names an array's columns are positional.
    tol : float, default=1e-10
        Relative tolerance on ``β``.
    max_iter : int, default=100
        Maximum number of Newton–Halley iterations.

    Attributes
    ----------
    temperature_ : float
        Fitted temperature ``T = 1/β`` (``inf`` when ``β = 0``).
    beta_ : float
        Fitted inverse temperature.
    beta_se_ : float
        Standard error of ``beta_``: the sandwich (robust) estimate, items as
        independent units (see Notes). NaN, with the fit's warning, when
        ``beta_`` is not an interior minimum (constant scores, ``β = 0``,
        separable labels).
    temperature_se_ : float
        Standard error of ``temperature_`` by the delta method,
        ``beta_se_ / beta_**2``; NaN where ``beta_se_`` is or ``beta_ = 0``.
    n_iter_ : int
        Number of Newton–Halley iterations.
    classes_ : ndarray of shape (n_classes,)
        Class of each column of ``predict_proba``: the wrapped classifier's
        ``classes_``; with ``estimator=None`` ``classes``, a DataFrame's
        columns, the sorted labels or ``0 .. n_classes - 1``.
    n_classes_ : int
    estimator_ : estimator or None
        The classifier used at prediction time.
    input_type_ : {"logits", "proba"} or None
        How ``X`` is read when ``estimator=None``.
    n_features_in_ : int
        Number of features seen during ``fit`` (when known).

    See Also
    --------
    VectorScaler, MatrixScaler : more flexible linear logit maps.
    sklearn.calibration.CalibratedClassifierCV : the 1-D-label version.

    Notes
    -----
    **One label per item.** The objective is the NLL per annotation, so with
    one label per item drawn from the human distribution (1-D ``y``, e.g.
    from :func:`~sklearn_hcal.datasets.sample_annotations`) its expectation
    is the NLL of the full histograms (up to the weights ``n_i``): the fitted
    temperature is consistent for the same temperature, only noisier. Mimori
    et al. (2021, §7.1) train on one label per item and calibrate on several;
    this lets the calibration set have one label per item too. Majority
    labels are not draws from the distribution -- they are more confident
    than it -- and pick too low a temperature (Tao et al., 2026); see
    :ref:`which_calibrator`.

    **How far from the full-histogram fit.** ``beta_se_`` is the sandwich
    standard error of the M-estimator β̂ (Huber, 1967; White, 1982):
    ``Var(β̂) ≈ Σ_i w_i g_i² / H²`` with the item scores
    ``g_i = n_i E_{p_i}[z_i] − Σ_k Y_ik z_ik`` and
    ``H = Σ_i w_i n_i Var_{p_i}[z_i]`` at ``p_i = softmax(β̂ z_i)``; it does
    not assume that the model is right, and ``sample_weight`` counts as item
    repetitions. With one label per item the fitted temperature is typically
    within ``± 2 · temperature_se_`` of the full-histogram fit on the same
    items. In the cross-fitted mode the out-of-fold scores are taken as
    given (the classifier's own uncertainty is not included).

    References
    ----------
    Guo et al. (2017), On calibration of modern neural networks.
    Mimori et al. (2021), Diagnostic uncertainty calibration, eq. 82,
    App. D.1 and §7.1.
    Tao et al. (2026), arXiv:2603.22879 (majority-label temperature scaling
    picks too low a temperature).
    Huber (1967), The behavior of maximum likelihood estimates under
    nonstandard conditions; White (1982), Maximum likelihood estimation of
    misspecified models (the sandwich variance).

    Examples
    --------
    >>> from sklearn_hcal.calibration import TemperatureScaler
    >>> from sklearn_hcal.datasets import make_label_histograms
    >>> Z, Y, Q = make_label_histograms(
    ...     2000, 3, 5, temperature=2.0, random_state=0
    ... )
    >>> ts = TemperatureScaler().fit(Z, Y)
    >>> bool(abs(ts.temperature_ - 2.0) < 0.2)
    True
    >>> ts.predict_proba(Z[:2]).shape
    (2, 3)

    One label per item, drawn from each histogram:

    >>> from sklearn_hcal.datasets import sample_annotations
    >>> y = sample_annotations(Y, random_state=0)
    >>> single = TemperatureScaler().fit(Z, y)
    >>> bool(abs(single.temperature_ - ts.temperature_) < 3 * single.temperature_se_)
    True
    """

    _parameter_constraints: dict = {
        **_BaseLogitCalibrator._parameter_constraints,
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        estimator=None,
        *,
        cv=None,
        input="auto",
        classes=None,
        tol=1e-10,
        max_iter=100,
    ):
        self.estimator = estimator
        self.cv = cv
        self.input = input
        self.classes = classes
        self.tol = tol
        self.max_iter = max_iter

    @fit_context(
        # the wrapped estimator is validated when it is fitted
        prefer_skip_nested_validation=False
    )
    def fit(self, X, y=None, sample_weight=None, counts=None):
        """Fit the temperature.

        Parameters
        ----------
        X : array-like
            Scores of shape (n_samples, n_classes) when ``estimator=None``,
            else the input of the classifier.
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Class labels, or label histograms (counts; a DataFrame's columns
            name the classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Item weights (also passed to a cross-fitted classifier that
            accepts them).
        counts : array-like of shape (n_samples, n_classes), default=None
            Label histograms routed as metadata (convention B, request with
            ``set_fit_request(counts=True)``); they replace ``y``.

        Returns
        -------
        self : TemperatureScaler
        """
        return self._fit(X, y, sample_weight, counts)

    def _fit_logits(self, Z, Y, sample_weight):
        with one_blas_thread():  # short products stall on a busy second core
            beta, n_iter, beta_se = _fit_inverse_temperature(
                Z, Y, sample_weight, tol=self.tol, max_iter=self.max_iter
            )
        self.beta_ = beta
        self.temperature_ = np.inf if beta == 0 else 1.0 / beta
        self.beta_se_ = beta_se
        # delta method: dT/dβ = −1/β², as (se/β)/β: β² underflows for logits
        # near 1e300
        self.temperature_se_ = np.nan if beta == 0 else beta_se / beta / beta
        self.n_iter_ = n_iter

    def _transform_logits(self, Z):
        return Z * self.beta_
