"""Vector and matrix scaling fitted on label histograms.

Mimori et al. (2021), App. D.1 (eq. 46–49) and F.3; Kull et al. (2019) for
the off-diagonal and intercept regularisation (ODIR).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from .._frontend import log_softmax
from ..utils._compat import Interval, fit_context
from ..utils._threads import one_blas_thread
from ..utils._warnings import warn_user
from ._base import _BaseLogitCalibrator
from ._rescaling import power_of_two_scale

__all__ = ["MatrixScaler", "VectorScaler"]


def _histogram_nll_and_grad(U, Y, w, n, total):
    """Multinomial NLL per annotation of histograms ``Y`` under softmax(U).

    Returns the loss ``-Σ_i w_i Σ_k Y_ik log softmax(U_i)_k / total`` and its
    gradient with respect to ``U``, ``w_i (n_i softmax(U_i) − Y_i) / total``.
    """
    logp = log_softmax(U)
    loss = -(w @ np.einsum("ij,ij->i", Y, logp)) / total
    G = np.exp(logp)
    G *= (w * n)[:, None]
    G -= w[:, None] * Y
    G /= total
    return loss, G


def _score_scale(Z, w):
    """Weighted RMS of the row-centred scores; rescales the parameters only.

    Weighted, so that integer weights and repeated rows give the same
    parametrisation (and the same L-BFGS path).
    """
    centred = Z - Z.mean(axis=1, keepdims=True)
    total = w.sum()
    if not total > 0:
        return 1.0
    scale = float(np.sqrt(w @ np.mean(centred * centred, axis=1) / total))
    return scale if scale > 0 and np.isfinite(scale) else 1.0


class _Scale:
    """The score scale ``unit * c`` of :class:`_BaseLinearScaler`.

    The optimiser works on ``Zs = Z / (unit * c)`` with parameters
    ``theta = W * unit * c``; :meth:`divide` maps ``theta`` back to ``W``
    dividing by ``unit`` and ``c`` in turn, never by their product (which
    overflows for logits near the float range).
    """

    def __init__(self, unit: float, c: float):
        self.unit, self.c = unit, c

    @property
    def start(self) -> float:
        """``theta`` of the starting map: the identity, or the map to unit
        RMS when the scores are larger (a saturated softmax has vanishing
        gradients, so L-BFGS would stop at once)."""
        return min(self.unit * self.c, 1.0)

    def divide(self, A):
        return A / self.unit / self.c


def _divide(A, scale):
    """``A / scale`` for a float or a :class:`_Scale`."""
    return scale.divide(A) if isinstance(scale, _Scale) else A / scale


class _BaseLinearScaler(_BaseLogitCalibrator):
    """Shared fitting code: ``u = A(z) + b`` minimised by L-BFGS.

    The objective (Mimori et al. 2021, eq. 82 plus eq. 48/49) is

        Σ_i w_i NLL_i / Σ_i w_i n_i + Ω(W, b),

    i.e. the penalty is added to the *per-annotation* mean NLL and does not
    scale with the number of items (as in Kull et al.'s ODIR code, where it is
    added to the mean log-loss). The optimisation runs on scores divided by
    their RMS (a reparametrisation that leaves the minimiser unchanged but
    conditions L-BFGS for logits of any magnitude).
    """

    _parameter_constraints: dict = {
        **_BaseLogitCalibrator._parameter_constraints,
        "reg_bias": [Interval(Real, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def _objective(self, theta, Zs, scale, Y, w, n, total):  # pragma: no cover
        raise NotImplementedError

    def _initial_parameters(self, K, scale):  # pragma: no cover
        raise NotImplementedError

    def _store_parameters(self, theta, K, scale):  # pragma: no cover
        raise NotImplementedError

    def _fit_logits(self, Z, Y, sample_weight):
        K = Z.shape[1]
        n = Y.sum(axis=1)
        w = np.ones(Z.shape[0]) if sample_weight is None else sample_weight
        # The RMS is taken of Z / c (c a power of two, an exact division), so
        # logits of ±1e300 give a finite scale instead of an overflow.
        c = power_of_two_scale(Z)
        unit = _score_scale(Z / c, w)
        scale = _Scale(unit, c)
        Zs = (Z / c) / unit
        total = w @ n
        if not total > 0:
            raise ValueError(
                "The total weight of the annotations (sum of sample_weight times "
                "annotations per item) must be positive."
            )
        with one_blas_thread():  # short products stall on a busy second core
            result = minimize(
                self._objective,
                self._initial_parameters(K, scale.start),
                args=(Zs, scale, Y, w, n, total),
                jac=True,
                method="L-BFGS-B",
                options={
                    "maxiter": self.max_iter,
                    "gtol": self.tol,
                    "ftol": 64 * np.finfo(float).eps,
                },
            )
        if result.status == 1:
            warn_user(
                f"{type(self).__name__} did not converge in {self.max_iter} "
                "iterations; increase max_iter.",
                ConvergenceWarning,
            )
        self.n_iter_ = int(result.nit)
        self._store_parameters(result.x, K, scale)
        self._warn_if_degenerate(Z, Y, w, total)

    def _warn_if_degenerate(self, Z, Y, w, total):
        """Warn when the fitted map sits where the solver stopped, not at an
        optimum (developer guide §never-degrade: a degenerate fit warns).

        Two cases have no finite optimum: a class without annotations and
        ``reg_bias=0`` (its intercept decreases for ever), and scores that
        separate the annotations (every annotation on a top-scoring class of
        the fitted map, predictions near one-hot: scaling the map up keeps
        lowering the loss), as TemperatureScaler warns for T → 0.
        """
        name = type(self).__name__
        unseen = (w @ Y) <= 0
        if self.reg_bias == 0 and np.any(unseen):
            warn_user(
                f"{name}: class(es) {self.classes_[unseen].tolist()} have no "
                "annotation, so with reg_bias=0 their intercepts decrease without "
                "bound and intercept_ is where the solver stopped; set reg_bias > 0."
            )
        U = self._transform_logits(Z)
        annotated = (Y > 0) & (w[:, None] > 0)
        on_top = U >= U.max(axis=1, keepdims=True)
        if not np.all(on_top[annotated]):
            return
        logp = np.where(annotated, log_softmax(U), 0.0)
        nll = -float(w @ (Y * logp).sum(axis=1)) / total
        if nll < 1e-3:
            warn_user(
                f"{name}: every annotation falls on a top-scoring class of the "
                f"fitted map (mean negative log-likelihood {nll:.2g} per "
                "annotation): the scores separate the labels, the likelihood keeps "
                "increasing as the map is scaled up, and the fit stops where the "
                "solver does, with near one-hot predictions. Check the labels or "
                "calibrate on held-out data the classifier was not trained on."
            )


class VectorScaler(_BaseLinearScaler):
    """Vector scaling ``z ↦ v ⊙ z + b`` fitted on label histograms.

    Minimises the multinomial negative log-likelihood of the label histograms
    per annotation (Mimori et al. 2021, eq. 82) plus the L2 penalty on the
    intercept of their eq. 48,

        λ_b / K · Σ_k b_k²,

    added to the per-annotation mean (so ``reg_bias`` does not scale with the
    number of items). L-BFGS with analytic gradients, started at the identity
    map (``v = 1``, ``b = 0``), or at the map to unit RMS for scores with a
    larger RMS (where the softmax would be saturated). Unlike temperature
    scaling it can change the predicted class.

    Parameters
    ----------
    estimator : estimator instance or None, default=None
        As in :class:`TemperatureScaler`: ``None`` (``X`` are scores),
        ``FrozenEstimator(fitted_clf)`` (prefit), or any other classifier,
        which is cloned and cross-fitted.
    cv : int, cross-validation generator or iterable, default=None
        Splits for the cross-fitted mode.
    input : {"auto", "logits", "proba"}, default="auto"
        With ``estimator=None``: whether ``X`` holds logits or probabilities.
    classes : array-like of shape (n_classes,), default=None
        Names of the columns of an array ``y``; columns are matched to the
        wrapped classifier's ``classes_`` by name, as in
        :class:`TemperatureScaler`.
    reg_bias : float, default=0.1
        λ_b, the intercept penalty (Mimori et al. chose 0.1 on MDS, App. F.3).
    tol : float, default=1e-8
        L-BFGS tolerance on the projected gradient.
    max_iter : int, default=1000
        Maximum number of L-BFGS iterations.

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes,)
        Per-class scale ``v``.
    intercept_ : ndarray of shape (n_classes,)
        Intercept ``b``.
    n_iter_ : int
        L-BFGS iterations.
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    estimator_ : estimator or None
    input_type_ : {"logits", "proba"} or None
    n_features_in_ : int

    See Also
    --------
    TemperatureScaler, MatrixScaler

    References
    ----------
    Guo et al. (2017), On calibration of modern neural networks.
    Mimori et al. (2021), Diagnostic uncertainty calibration, App. D.1, F.3.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.calibration import VectorScaler
    >>> from sklearn_hcal.datasets import make_label_histograms
    >>> Z, Y, Q = make_label_histograms(500, 3, 5, temperature=2.0, random_state=0)
    >>> vs = VectorScaler(reg_bias=1.0).fit(Z, Y)
    >>> vs.coef_.shape, vs.intercept_.shape
    ((3,), (3,))
    >>> bool(np.all(vs.coef_ < 1))  # the logits were too sharp by a factor 2
    True
    """

    def __init__(
        self,
        estimator=None,
        *,
        cv=None,
        input="auto",
        classes=None,
        reg_bias=0.1,
        tol=1e-8,
        max_iter=1000,
    ):
        self.estimator = estimator
        self.cv = cv
        self.input = input
        self.classes = classes
        self.reg_bias = reg_bias
        self.tol = tol
        self.max_iter = max_iter

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, sample_weight=None, counts=None):
        """Fit ``v`` and ``b``.

        Parameters
        ----------
        X : array-like
            Scores of shape (n_samples, n_classes) when ``estimator=None``,
            else the input of the classifier.
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Class labels or label histograms (a DataFrame's columns name the
            classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Item weights (also passed to a cross-fitted classifier that
            accepts them).
        counts : array-like of shape (n_samples, n_classes), default=None
            Label histograms routed as metadata (convention B, request with
            ``set_fit_request(counts=True)``); they replace ``y``.

        Returns
        -------
        self : VectorScaler
        """
        return self._fit(X, y, sample_weight, counts)

    def _initial_parameters(self, K, scale):
        return np.concatenate([np.full(K, scale), np.zeros(K)])

    def _objective(self, theta, Zs, scale, Y, w, n, total):
        K = Zs.shape[1]
        v, b = theta[:K], theta[K:]
        loss, G = _histogram_nll_and_grad(Zs * v + b, Y, w, n, total)
        loss += self.reg_bias / K * (b @ b)
        grad_v = np.einsum("ij,ij->j", G, Zs)
        grad_b = G.sum(axis=0) + 2.0 * self.reg_bias / K * b
        return loss, np.concatenate([grad_v, grad_b])

    def _store_parameters(self, theta, K, scale):
        self.coef_ = scale.divide(theta[:K])
        self.intercept_ = theta[K:].copy()

    def _transform_logits(self, Z):
        return Z * self.coef_ + self.intercept_


class MatrixScaler(_BaseLinearScaler):
    """Matrix scaling ``z ↦ W z + b`` with ODIR, fitted on label histograms.

    Minimises the multinomial negative log-likelihood of the label histograms
    per annotation (Mimori et al. 2021, eq. 82) plus the off-diagonal and
    intercept regularisation (ODIR, their eq. 49; Kull et al. 2019),

        λ_w / (K(K−1)) · Σ_{k≠k'} W_kk'² + λ_b / K · Σ_k b_k²,

    added to the per-annotation mean (the penalty does not scale with the
    number of items). L-BFGS with analytic gradients, started at the identity
    map (or the map to unit RMS for larger scores). With a very large
    ``reg_weight`` the off-diagonal entries vanish and matrix scaling becomes
    :class:`VectorScaler` with the same ``reg_bias``.

    Parameters
    ----------
    estimator : estimator instance or None, default=None
        As in :class:`TemperatureScaler`.
    cv : int, cross-validation generator or iterable, default=None
        Splits for the cross-fitted mode.
    input : {"auto", "logits", "proba"}, default="auto"
        With ``estimator=None``: whether ``X`` holds logits or probabilities.
    classes : array-like of shape (n_classes,), default=None
        Names of the columns of an array ``y``; columns are matched to the
        wrapped classifier's ``classes_`` by name, as in
        :class:`TemperatureScaler`.
    reg_weight : float, default=10.0
        λ_w, the off-diagonal penalty (Mimori et al. chose 10 on MDS,
        App. F.3).
    reg_bias : float, default=0.1
        λ_b, the intercept penalty.
    tol : float, default=1e-8
        L-BFGS tolerance on the projected gradient.
    max_iter : int, default=1000
        Maximum number of L-BFGS iterations.

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_classes)
        ``W``; calibrated logits are ``z @ coef_.T + intercept_``.
    intercept_ : ndarray of shape (n_classes,)
        ``b``.
    n_iter_ : int
        L-BFGS iterations.
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    estimator_ : estimator or None
    input_type_ : {"logits", "proba"} or None
    n_features_in_ : int

    See Also
    --------
    TemperatureScaler, VectorScaler

    References
    ----------
    Kull et al. (2019), Beyond temperature scaling: obtaining well-calibrated
    multi-class probabilities with Dirichlet calibration.
    Mimori et al. (2021), Diagnostic uncertainty calibration, eq. 49, App. F.3.

    Examples
    --------
    >>> from sklearn_hcal.calibration import MatrixScaler
    >>> from sklearn_hcal.datasets import make_label_histograms
    >>> Z, Y, Q = make_label_histograms(500, 3, 5, random_state=0)
    >>> ms = MatrixScaler(reg_weight=1.0, reg_bias=1.0).fit(Z, Y)
    >>> ms.coef_.shape
    (3, 3)
    >>> ms.predict_proba(Z[:4]).sum(axis=1)
    array([1., 1., 1., 1.])
    """

    _parameter_constraints: dict = {
        **_BaseLinearScaler._parameter_constraints,
        "reg_weight": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        estimator=None,
        *,
        cv=None,
        input="auto",
        classes=None,
        reg_weight=10.0,
        reg_bias=0.1,
        tol=1e-8,
        max_iter=1000,
    ):
        self.estimator = estimator
        self.cv = cv
        self.input = input
        self.classes = classes
        self.reg_weight = reg_weight
        self.reg_bias = reg_bias
        self.tol = tol
        self.max_iter = max_iter

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, sample_weight=None, counts=None):
        """Fit ``W`` and ``b``.

        Parameters
        ----------
        X : array-like
            Scores of shape (n_samples, n_classes) when ``estimator=None``,
            else the input of the classifier.
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Class labels or label histograms (a DataFrame's columns name the
            classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Item weights (also passed to a cross-fitted classifier that
            accepts them).
        counts : array-like of shape (n_samples, n_classes), default=None
            Label histograms routed as metadata (convention B, request with
            ``set_fit_request(counts=True)``); they replace ``y``.

        Returns
        -------
        self : MatrixScaler
        """
        return self._fit(X, y, sample_weight, counts)

    def _initial_parameters(self, K, scale):
        return np.concatenate([(scale * np.eye(K)).ravel(), np.zeros(K)])

    def _objective(self, theta, Zs, scale, Y, w, n, total):
        # theta holds scale * W (see _BaseLinearScaler), so the ODIR penalty
        # on W is the penalty on theta divided by scale².
        K = Zs.shape[1]
        Ws = theta[: K * K].reshape(K, K)
        b = theta[K * K :]
        loss, G = _histogram_nll_and_grad(Zs @ Ws.T + b, Y, w, n, total)
        off = Ws - np.diag(np.diag(Ws))
        # 1 / (unit·c)² in turn: 0 rather than an overflow for huge scores
        coef_w = self.reg_weight / (K * (K - 1))
        coef_w = _divide(_divide(coef_w, scale), scale)
        loss += coef_w * np.sum(off * off) + self.reg_bias / K * (b @ b)
        grad_W = G.T @ Zs + 2.0 * coef_w * off
        grad_b = G.sum(axis=0) + 2.0 * self.reg_bias / K * b
        return loss, np.concatenate([grad_W.ravel(), grad_b])

    def _store_parameters(self, theta, K, scale):
        self.coef_ = scale.divide(theta[: K * K].reshape(K, K))
        self.intercept_ = theta[K * K :].copy()

    def _transform_logits(self, Z):
        return Z @ self.coef_.T + self.intercept_
