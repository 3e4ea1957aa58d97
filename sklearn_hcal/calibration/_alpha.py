"""α-calibration: a Dirichlet distribution over class probabilities.

Mimori, Sasada, Matsui and Sato (2021), *Diagnostic Uncertainty Calibration:
Towards Reliable Machine Predictions in Medical Domain*, §5.3 and App. D.2–D.5.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import (
    _num_samples,
    check_is_fitted,
    validate_data,
)

from .._validation import (
    check_label_histograms,
    labels_to_histograms,
    looks_like_probabilities,
    probabilities_to_logits,
)
from ..utils._optional import import_optional, is_skorch_net, resolve_device
from ._alpha_features import extract_features
from ._alpha_solvers import fit_concentration_model, predict_log_alpha0
from ._base import _integer_codes

__all__ = ["AlphaCalibrator"]


def _scores(estimator, X):
    """Logit-like scores of a fitted classifier (SPEC §3, shared helper)."""
    from ._base import _get_scores

    return _get_scores(estimator, X)


def _is_ensemble(estimator):
    return estimator is not None and hasattr(estimator, "predict_proba_samples")


class AlphaCalibrator(ClassifierMixin, BaseEstimator):
    r"""α-calibration: a Dirichlet distribution over class probabilities.

    Models the distribution of the class probability vector ζ given x as
    ``Dir(α0(x)·f(x))`` (Mimori et al. 2021, §5.3), where ``f`` is the wrapped
    classifier's ``predict_proba`` and
    ``α0(x) = exp(MLP(g(x)))`` — by default ``exp(wᵀg(x) + b)`` — a per-item
    concentration learnt from label histograms by minimising the
    Dirichlet-multinomial NLL plus ``alpha_reg · mean_i (log α0_i)²``
    (App. D.2, eq. 50). ``f`` is never changed: ``predict_proba`` returns it,
    so accuracy and every metric of the class probabilities are unchanged;
    what changes are the *higher-order* predictions: the disagreement
    probability (eq. 19/71), posterior class probabilities after new labels
    (eq. 18–19/79) and draws of ζ.

    Parameters
    ----------
    estimator : estimator, default=None
        * None: ``X`` *is* the classifier output, logits of shape
          ``(n_samples, n_classes)`` (rows of probabilities are detected and
          converted with a log); ``f = softmax(X)``.
        * a fitted classifier wrapped in :class:`~sklearn.frozen.FrozenEstimator`
          (a raw classifier, a ``TemperatureScaler``, a ``SoftLabelClassifier``,
          a skorch net, an :class:`MCDropoutClassifier` ...).
        * an unfitted classifier: cross-fitted on ``cv`` folds (out-of-fold
          outputs train the calibrator), then refit on all the data; histogram
          targets are fitted through ``SoftLabelClassifier``.

        When the estimator has ``predict_proba_samples`` (an ensemble such as
        :class:`MCDropoutClassifier`), ζ follows the mixture
        ``(1/S) Σ_s Dir(α0^(s) f^(s))``, one Dirichlet per member, fitted on
        all members (App. D.4, eq. 73).
    features : {"logits", "penultimate"}, str or callable, default="logits"
        The input ``g(x)`` of the concentration model: the classifier's
        logits (decision function, skorch logits or log-probabilities);
        for a skorch net ``"penultimate"`` (the input of the module's last
        ``torch.nn.Linear``) or the name of a submodule of ``net.module_``
        (its output, flattened, captured with a forward hook); or a callable
        ``g(X) -> array of shape (n_samples, n_features)``. Features are
        computed once per fit and standardised.
    hidden_layer_sizes : tuple of int, default=()
        Hidden ReLU layers of the concentration model; ``()`` is the linear
        model of the paper.
    alpha_reg : float, default=0.005
        :math:`\lambda_\alpha`, the penalty on ``(log α0)²`` that keeps α0 away
        from 0 and ∞ (App. D.2). The loss is normalised as the reference
        implementation, ``mean_i (n_i / mean n)·NLL_i + alpha_reg·mean_i
        (log α0_i)²``; with a common ``n`` this is ``n`` × the paper's eq. 50
        with λ = ``alpha_reg / n``.
    solver : {"auto", "lbfgs", "adam"}, default="auto"
        ``"lbfgs"``: full-batch L-BFGS with strong-Wolfe line search in
        float64, converging on small data. ``"adam"``: mini-batch Adam with
        early stopping. ``"auto"`` picks L-BFGS for the linear model when it has
        at most ``max(50, n_samples // 10)`` parameters (enough items per
        parameter not to overfit without early stopping), Adam otherwise
        (hidden layers or wide features on few items).
    max_iter : int, default=200
        L-BFGS iterations, or Adam epochs.
    batch_size : int or "auto", default="auto"
        Adam mini-batch size; ``"auto"`` = ``min(512, n_samples)``.
    learning_rate : float, default=1e-2
        Adam step size.
    validation_fraction : float, default=0.2
        Share of the items held out for early stopping (Adam); the paper uses
        80/20.
    early_stopping : bool, default=True
        Adam: stop when the held-out loss has not improved by ``tol`` for
        ``n_iter_no_change`` epochs and restore the best parameters. If False,
        the training loss is monitored instead.
    n_iter_no_change : int, default=10
        Patience of early stopping (the paper's ten epochs).
    tol : float, default=1e-7
        L-BFGS: tolerance on the largest gradient component; Adam: smallest
        loss improvement that counts.
    cv : int, cross-validation generator or iterable, default=None
        Folds for an unfitted ``estimator`` (None = 5).
    device : {"cpu", "cuda", "auto"} or str, default="cpu"
        Torch device of the fit. Fitted parameters are stored as numpy arrays,
        so a calibrator fitted on a GPU predicts and unpickles on a CPU-only
        machine (prediction uses numpy only).
    random_state : int, RandomState instance or None, default=None
        Seeds the validation split, the mini-batch order and the hidden-layer
        initialisation; fits on the CPU are deterministic given it.
    verbose : int, default=0
        Print the loss per iteration/epoch to stdout when > 0 (as
        scikit-learn's ``MLPClassifier`` and skorch do); silent otherwise.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimator_ : estimator or None
        The classifier that produces ``f`` (refit on all data when
        cross-fitted).
    coefs_, intercepts_ : list of ndarray
        Weights of the concentration model (on standardised features).
    feature_mean_, feature_scale_ : ndarray of shape (n_features_g,)
        Standardisation of ``g``.
    solver_ : str
        The solver used.
    n_iter_ : int
        L-BFGS iterations or Adam epochs run.
    loss_ : float
        Final training objective.
    n_features_in_ : int
        Columns of ``X`` (when ``X`` is 2-D).

    Notes
    -----
    **Items with a single annotation.** The Dirichlet-multinomial probability
    of one label is ``f_y`` whatever α0 is, so such items carry no information
    about the concentration: they add a constant to the NLL and only the
    regulariser acts on their α0 (pulling towards α0 = 1), and they lower
    ``mean n`` in the weights ``n_i / mean n``. A warning is raised when no
    item has two or more labels (α0 then stays at 1).

    The closed forms come from the Dirichlet: ``E[ζ] = f``,
    ``1 − E[Σ ζ_k²] = α0/(α0 + 1)·(1 − Σ f_k²)`` (eq. 71) and the conjugate
    update ``Dir(α0 f + y)`` (eq. 79).

    References
    ----------
    Mimori, Sasada, Matsui and Sato (2021). Diagnostic Uncertainty Calibration:
    Towards Reliable Machine Predictions in Medical Domain. AISTATS.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal.calibration import AlphaCalibrator
    >>> from sklearn_hcal.datasets import make_label_histograms
    >>> Z, Y, Q = make_label_histograms(2000, n_classes=3, n_annotations=5,
    ...                                 concentration=4.0, random_state=0)
    >>> cal = AlphaCalibrator(alpha_reg=0.0).fit(Z, Y)
    >>> alpha0 = cal.predict_concentration(Z)
    >>> bool(2.5 < np.median(alpha0) < 6.5)  # the truth is 4
    True
    >>> np.allclose(cal.predict_proba(Z).sum(axis=1), 1.0)
    True
    >>> cal.predict_disagreement(Z[:2]).shape
    (2,)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "features": [StrOptions({"logits", "penultimate"}), str, callable],
        "hidden_layer_sizes": ["array-like"],
        "alpha_reg": [Interval(numbers.Real, 0, None, closed="left")],
        "solver": [StrOptions({"auto", "lbfgs", "adam"})],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "batch_size": [
            Interval(numbers.Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
        "early_stopping": ["boolean"],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "cv": ["cv_object"],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        features="logits",
        hidden_layer_sizes=(),
        alpha_reg=0.005,
        solver="auto",
        max_iter=200,
        batch_size="auto",
        learning_rate=1e-2,
        validation_fraction=0.2,
        early_stopping=True,
        n_iter_no_change=10,
        tol=1e-7,
        cv=None,
        device="cpu",
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.features = features
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha_reg = alpha_reg
        self.solver = solver
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.cv = cv
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------
    # outputs of the wrapped classifier
    # ------------------------------------------------------------------
    def _features(self, estimator, X, logits):
        return extract_features(self.features, estimator, X, logits)

    def _outputs(self, estimator, X):
        """``(F, G)``: f(x) and g(x); with a leading member axis for ensembles."""
        if estimator is None:
            Z = self._input_logits(X)
            return softmax(Z, axis=1), self._features(None, X, Z)
        if _is_ensemble(estimator):
            if not (self.features == "logits" or callable(self.features)):
                raise ValueError(
                    "With an ensemble estimator, features must be 'logits' or a "
                    f"callable, got {self.features!r}."
                )
            F = np.asarray(estimator.predict_proba_samples(X), dtype=np.float64)
            if callable(self.features):
                G = self._features(estimator, X, None)
                G = np.broadcast_to(G, (F.shape[0],) + G.shape)
            else:
                G = np.log(np.clip(F, 1e-300, None))
            return F, G
        F = np.asarray(estimator.predict_proba(X), dtype=np.float64)
        if F.ndim == 1:
            F = np.column_stack([1.0 - F, F])
        G = self._features(estimator, X, lambda: _scores(estimator, X))
        return F, G

    # ------------------------------------------------------------------
    # fit
    # ------------------------------------------------------------------
    def _input_logits(self, X):
        """Logits from the ``estimator=None`` input (probabilities get a log)."""
        if self.input_type_ == "proba":
            return probabilities_to_logits(X)
        return X

    def _validate_X(self, X, reset):
        if self.estimator is None:
            X = validate_data(self, X, reset=reset, dtype=np.float64)
            if X.shape[1] < 2:
                raise ValueError(
                    "With estimator=None, X must be logits of shape (n_samples, "
                    f"n_classes) with n_classes >= 2, got {X.shape[1]} column(s)."
                )
            if reset:
                self.input_type_ = (
                    "proba" if looks_like_probabilities(X) else ("logits")
                )
            return X
        if reset and hasattr(X, "shape") and len(X.shape) == 2:
            self.n_features_in_ = X.shape[1]
        return X

    def _cross_fit(self, X, Y, y_raw):
        """Out-of-fold (F, G) for an unfitted estimator, then refit on all."""
        base = self.estimator
        if np.ndim(y_raw) == 2 and not is_skorch_net(base):
            if type(base).__name__ != "SoftLabelClassifier":
                from .._soft_label import SoftLabelClassifier

                base = SoftLabelClassifier(base)
            target = Y
        else:
            target = y_raw
        cv = check_cv(
            self.cv if self.cv is not None else 5,
            None if np.ndim(target) == 2 else target,
            classifier=np.ndim(target) == 1,
        )
        F_parts, G_parts, idx_parts = [], [], []
        for train, test in cv.split(np.zeros(_num_samples(X)), target):
            est = clone(base).fit(_take(X, train), _take(target, train))
            F, G = self._outputs(est, _take(X, test))
            F_parts.append(F)
            G_parts.append(G)
            idx_parts.append(test)
        order = np.concatenate(idx_parts)
        axis = 1 if F_parts[0].ndim == 3 else 0
        F = np.concatenate(F_parts, axis=axis)
        G = np.concatenate(G_parts, axis=axis)
        inv = np.empty_like(order)
        inv[order] = np.arange(order.size)
        F = np.take(F, inv, axis=axis)
        G = np.take(G, inv, axis=axis)
        self.estimator_ = clone(base).fit(X, target)
        return F, G

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the concentration model on label histograms.

        Parameters
        ----------
        X : array-like
            Logits (``estimator=None``) or the estimator's input.
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Label histograms (counts; a DataFrame's columns are the classes) or
            one label per item.

        Returns
        -------
        self : AlphaCalibrator
        """
        if y is None:
            raise ValueError(
                "AlphaCalibrator requires y to be passed, but the target y is None."
            )
        if not hasattr(y, "columns"):
            y = np.asarray(y)
        self.input_type_ = None
        X = self._validate_X(X, reset=True)
        n = _num_samples(X)
        hidden = tuple(int(h) for h in np.atleast_1d(self.hidden_layer_sizes))
        if any(h < 1 for h in hidden):
            raise ValueError(
                "hidden_layer_sizes must hold positive integers, got "
                f"{self.hidden_layer_sizes!r}."
            )
        device = resolve_device(self.device)

        if self.estimator is None:
            n_classes = X.shape[1]
            self.estimator_ = None
        else:
            est = self.estimator
            if _is_fitted(est):
                self.estimator_ = est
            else:
                self.estimator_ = None
            n_classes = None
        if self.estimator_ is not None or self.estimator is None:
            F, G = self._outputs(self.estimator_, X)
            n_classes = F.shape[-1]
            est_classes = _estimator_classes(self.estimator_, n_classes)
            if est_classes is None and _integer_codes(y, n_classes):
                # integer labels name the score columns 0 .. K-1
                est_classes = np.arange(n_classes)
            Y, classes = check_label_histograms(
                y,
                name="y",
                n_classes=n_classes,
                return_classes=True,
                classes=est_classes,
            )
            if est_classes is not None and not hasattr(y, "columns"):
                classes = est_classes
        else:
            Y, classes = check_label_histograms(y, name="y", return_classes=True)
            F, G = self._cross_fit(X, Y, y)
            n_classes = F.shape[-1]
        if Y.shape[0] != n:
            raise ValueError(
                f"X and y have inconsistent numbers of samples: {n} and {Y.shape[0]}."
            )
        if Y.shape[1] != F.shape[-1]:
            raise ValueError(
                f"y has {Y.shape[1]} classes but the classifier predicts {F.shape[-1]}."
            )
        if not np.all(np.isfinite(G)):
            raise ValueError("The features g(X) contain NaN or infinity.")
        self.classes_ = np.asarray(classes)
        counts = Y.sum(axis=1)
        if not np.any(counts >= 2):
            warnings.warn(
                "No item has two or more annotations: the Dirichlet-multinomial "
                "likelihood of a single label does not depend on alpha0, so the "
                "concentration cannot be learnt (alpha0 stays at 1).",
                UserWarning,
                stacklevel=2,
            )

        if F.ndim == 3:  # ensemble members stacked as items (weights 1/S each)
            S = F.shape[0]
            F = F.reshape(-1, F.shape[-1])
            G = np.asarray(G).reshape(S * n, -1)
            Y = np.tile(Y, (S, 1))
        G = np.asarray(G, dtype=np.float64)
        mean = G.mean(axis=0)
        scale = G.std(axis=0)
        scale[scale < 1e-12] = 1.0
        self.feature_mean_, self.feature_scale_ = mean, scale
        H = (G - mean) / scale

        result = fit_concentration_model(
            H,
            F,
            Y,
            hidden=hidden,
            solver=self.solver,
            alpha_reg=self.alpha_reg,
            max_iter=self.max_iter,
            tol=self.tol,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            validation_fraction=self.validation_fraction,
            early_stopping=self.early_stopping,
            n_iter_no_change=self.n_iter_no_change,
            device=device,
            random_state=self.random_state,
            verbose=self.verbose,
        )
        self.solver_ = result.solver
        self.coefs_, self.intercepts_ = result.coefs, result.intercepts
        self.n_iter_, self.loss_ = result.n_iter, result.loss
        return self

    def _predict_outputs(self, X):
        check_is_fitted(self, "coefs_")
        X = self._validate_X(X, reset=False)
        F, G = self._outputs(self.estimator_, X)
        G = np.asarray(G, dtype=np.float64)
        if not np.all(np.isfinite(G)):
            raise ValueError("The features g(X) contain NaN or infinity.")
        if G.shape[-1] != self.feature_mean_.shape[0]:
            raise ValueError(
                f"The features g(X) have {G.shape[-1]} columns but the calibrator "
                f"was fitted with {self.feature_mean_.shape[0]}."
            )
        H = (G - self.feature_mean_) / self.feature_scale_
        log_a0 = predict_log_alpha0(
            H.reshape(-1, H.shape[-1]), self.coefs_, self.intercepts_
        ).reshape(H.shape[:-1])
        return F, np.exp(log_a0)

    def predict_proba(self, X):
        """The wrapped classifier's class probabilities ``f(x) = E[ζ|x]``.

        Parameters
        ----------
        X : array-like

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "coefs_")
        X = self._validate_X(X, reset=False)
        if self.estimator_ is None:
            return softmax(self._input_logits(X), axis=1)
        P = np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)
        return np.column_stack([1.0 - P, P]) if P.ndim == 1 else P

    def predict(self, X):
        """Class with the highest ``f(x)``, mapped to ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the wrapped estimator, or logits when ``estimator=None``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def fit_transform(self, X, y):
        """Fit, then return the Dirichlet parameters of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the wrapped estimator, or logits when ``estimator=None``.
        y : array-like of shape (n_samples, n_classes)
            Label histograms.

        Returns
        -------
        alpha : ndarray of shape (n_samples, n_classes)
        """
        return self.fit(X, y).transform(X)

    def predict_concentration(self, X):
        """The concentration α0(x).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the wrapped estimator, or logits when ``estimator=None``.

        Returns
        -------
        alpha0 : ndarray of shape (n_samples,), or (n_members, n_samples) when
            the estimator is an ensemble.
        """
        return self._predict_outputs(X)[1]

    def transform(self, X):
        """Dirichlet parameters ``α0(x)·f(x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the wrapped estimator, or logits when ``estimator=None``.

        Returns
        -------
        alpha : ndarray of shape (n_samples, n_classes), or
            (n_members, n_samples, n_classes) for an ensemble.
        """
        F, a0 = self._predict_outputs(X)
        return a0[..., None] * F

    def predict_disagreement(self, X):
        r"""Probability that two annotators disagree (eq. 19/71; eq. 73).

        :math:`\varphi = \frac{\alpha_0}{\alpha_0 + 1}(1 - \sum_k f_k^2)`,
        averaged over members for an ensemble.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the wrapped estimator, or logits when ``estimator=None``.

        Returns
        -------
        phi : ndarray of shape (n_samples,)
        """
        F, a0 = self._predict_outputs(X)
        phi = a0 / (a0 + 1.0) * (1.0 - np.sum(F**2, axis=-1))
        return phi.mean(axis=0) if phi.ndim == 2 else phi

    def _check_new_labels(self, Y_new, n):
        K = self.classes_.shape[0]
        arr = Y_new.to_numpy() if hasattr(Y_new, "to_numpy") else np.asarray(Y_new)
        if arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 1 and K != 1):
            arr, _ = labels_to_histograms(arr, classes=self.classes_, name="Y_new")
        arr = np.asarray(arr, dtype=np.float64)
        if arr.ndim != 2 or arr.shape != (n, K):
            raise ValueError(
                f"Y_new must be labels of shape ({n},) or counts of shape ({n}, {K}),"
                f" got shape {arr.shape}."
            )
        if not np.all(np.isfinite(arr)) or arr.min() < 0 or np.any(arr % 1 != 0):
            raise ValueError("Y_new must hold finite non-negative integer counts.")
        return arr

    def predict_posterior(self, X, Y_new):
        r"""Posterior class probabilities after observing new labels.

        The conjugate update of Mimori et al.'s eq. 18–19/79, generalised to
        several new labels: :math:`E[\zeta|x, y] = (\alpha_0 f + y) /
        (\alpha_0 + n_{new})`. Items with no new label (a zero row) keep ``f``.
        For an ensemble the prior is the mixture ``(1/S) Σ_s Dir(α0^(s)f^(s))``
        and the posterior mean is the mixture of the member posteriors weighted
        by their Dirichlet-multinomial evidence.

        Parameters
        ----------
        X : array-like
        Y_new : array-like of shape (n_samples, n_classes) or (n_samples,)
            New label counts (zeros allowed) or one new label per item.

        Returns
        -------
        posterior : ndarray of shape (n_samples, n_classes)
        """
        F, a0 = self._predict_outputs(X)
        Yn = self._check_new_labels(Y_new, F.shape[-2])
        alpha = a0[..., None] * F
        post = (alpha + Yn) / (a0[..., None] + Yn.sum(axis=1)[:, None])
        if F.ndim == 2:
            return post
        from ._dirichlet import dirichlet_multinomial_log_likelihood

        torch = import_optional("torch")
        ll = dirichlet_multinomial_log_likelihood(
            torch.as_tensor(alpha),
            torch.as_tensor(np.ascontiguousarray(np.broadcast_to(Yn, alpha.shape))),
        ).numpy()
        w = softmax(ll, axis=0)
        return np.einsum("sn,snk->nk", w, post)

    def sample(self, X, n_draws=1, random_state=None):
        """Draws of ζ from ``Dir(α0(x)·f(x))`` (or the ensemble mixture).

        Parameters
        ----------
        X : array-like
        n_draws : int, default=1
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        draws : ndarray of shape (n_draws, n_samples, n_classes)
        """
        if not isinstance(n_draws, numbers.Integral) or n_draws < 1:
            raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}.")
        rng = check_random_state(random_state)
        alpha = self.transform(X)
        if alpha.ndim == 3:
            member = rng.randint(alpha.shape[0], size=(n_draws, alpha.shape[1]))
            alpha = alpha[member, np.arange(alpha.shape[1])]
        else:
            alpha = np.broadcast_to(alpha, (n_draws,) + alpha.shape)
        g = rng.standard_gamma(np.clip(alpha, 1e-300, None))
        s = g.sum(axis=-1, keepdims=True)
        # Tiny concentrations can underflow every gamma draw: the limit of
        # Dir(α) as α -> 0 puts the mass on a vertex, chosen with prob. f.
        empty = s[..., 0] == 0
        if np.any(empty):
            p = alpha[empty] / alpha[empty].sum(axis=-1, keepdims=True)
            u = rng.random_sample(p.shape[0])[:, None]
            pick = (np.cumsum(p, axis=-1) < u).sum(axis=-1)
            g[empty] = 0.0
            g[empty, np.minimum(pick, p.shape[-1] - 1)] = 1.0
            s[empty] = 1.0
        return g / s

    def score(self, X, y):
        """Majority accuracy (histograms) or accuracy (labels).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the wrapped estimator, or logits when ``estimator=None``.
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Label histograms or labels.

        Returns
        -------
        score : float
        """
        y_arr = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
        pred = self.predict(X)
        if y_arr.ndim == 2 and y_arr.shape[1] > 1:
            Y = check_label_histograms(y, name="y", n_classes=len(self.classes_))
            truth = self.classes_[np.argmax(Y, axis=1)]
        else:
            truth = y_arr.ravel()
        return float(np.mean(pred == truth))

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        # transform() returns Dirichlet parameters, so it is also a transformer
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64"])
        tags.non_deterministic = False
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags


def _take(X, idx):
    if hasattr(X, "iloc"):
        return X.iloc[idx]
    return X[idx]


def _is_fitted(est):
    from sklearn.exceptions import NotFittedError

    if is_skorch_net(est):
        return bool(getattr(est, "initialized_", False))
    try:
        check_is_fitted(est)
        return True
    except (NotFittedError, TypeError):
        return False


def _estimator_classes(est, n_classes):
    classes = getattr(est, "classes_", None) if est is not None else None
    if classes is None or len(classes) != n_classes:
        return None
    return np.asarray(classes)
