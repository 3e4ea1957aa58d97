"""α-calibration: a Dirichlet distribution over class probabilities.

Mimori, Sasada, Matsui and Sato (2021), *Diagnostic Uncertainty Calibration:
Towards Reliable Machine Predictions in Medical Domain*, §5.3 and App. D.2–D.5.

The estimator modes, targets, classes, ``sample_weight``, ``counts`` routing
and ``score`` come from the estimators' front end
(:mod:`sklearn_hcal._frontend`) through the calibration core
(:mod:`.._base`); this module
supplies what α-calibration takes from a classifier -- its probabilities
``f`` and the features ``g`` -- and the fit of the concentration model
(:mod:`._solvers`).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import TransformerTags
from sklearn.utils.validation import check_is_fitted

from ..._frontend import (
    class_columns,
    get_scores,
    probabilities_from_input,
    scores_from_input,
)
from ...utils._compat import (
    HasMethods,
    Interval,
    StrOptions,
    fit_context,
    get_output_config,
)
from ...utils._optional import resolve_device
from ...utils._warnings import warn_user
from .._base import _BaseCalibrator
from ._config import SolverConfig
from ._features import (
    as_feature_array,
    extract_features,
    member_probabilities,
    standardize_features,
)
from ._predict import _DirichletPredictionsMixin
from ._solvers import (
    fit_concentration_model,
    predict_log_alpha0,
    warn_if_degenerate,
)

__all__ = ["AlphaCalibrator"]


class AlphaCalibrator(_DirichletPredictionsMixin, _BaseCalibrator):
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
          ``(n_samples, n_classes)`` (``f = softmax(X)``) or probabilities
          (see ``input``; ``f`` = the renormalised probabilities, unchanged).
        * a fitted classifier wrapped in :class:`~sklearn.frozen.FrozenEstimator`
          (a raw classifier, a ``TemperatureScaler``, a ``SoftLabelClassifier``,
          a skorch net, an :class:`MCDropoutClassifier` ...). Only
          ``FrozenEstimator`` means prefit.
        * any other classifier (fitted or not; a fitted one warns): cloned
          and cross-fitted on ``cv`` folds (out-of-fold outputs train the
          calibrator), then refit on all the data; histogram targets are
          fitted through ``SoftLabelClassifier``. skorch nets and ensembles
          are not cross-fitted (a ``ValueError`` explains why): fit them, then
          pass ``FrozenEstimator(...)``.

        When the estimator has ``predict_proba_samples`` (an ensemble such as
        :class:`MCDropoutClassifier`, alone or ending a Pipeline), ζ follows the mixture
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
        :math:`\lambda_\alpha`, the penalty ``alpha_reg·mean_i (log α0_i)²``
        that keeps α0 away from 0 and ∞ (App. D.2); see ``normalization`` for
        the scale of the likelihood it is added to.
    l2_reg : float, default=0.0
        Penalty ``l2_reg · Σ‖W‖²`` on the weights of the concentration model
        (not the intercepts), added to the loss like ``alpha_reg`` (a mean
        over items, not divided by ``n_samples``). With standardised,
        uncorrelated features ``‖w‖²`` is the variance of ``log α0`` across
        items, so the two penalties are on the same scale. Needed with wide
        features such as a penultimate layer: without it the error of the
        exact optimum grows like ``sqrt(n_features / n_samples)`` and, with
        fewer than about ten items per feature, the optimum may not exist (α0
        runs to its bounds). Choose it on held-out data (e.g. a grid search
        scored by ``neg_disagreement_squared_loss``); at ``n_samples`` =
        100,000 the held-out likelihood chose 0.1 for 512 and 1 for 2,048
        features in ``benchmarks/bench_alpha.py``.
    normalization : {"reference", "eq50"}, default="reference"
        Normalisation of the Dirichlet-multinomial NLL. ``"reference"``: each
        item's NLL weighted by ``n_i / mean(n)`` and averaged over items, as
        in Mimori et al.'s code, which produced the paper's tables.
        ``"eq50"``: the summed NLL divided by ``Σ_i n_i``, as eq. 50 is
        printed. With a common number of labels ``n``, ``"reference"`` with
        ``(alpha_reg, l2_reg)`` is ``n`` times ``"eq50"`` with
        ``(alpha_reg / n, l2_reg / n)`` (the same fit), so the paper's
        λα = 0.005 is 0.005 / n in eq. 50's terms. With unequal ``n``,
        ``"reference"`` weighs an item's labels in proportion to ``n_i`` and
        ``"eq50"`` weighs every label equally.
    solver : {"auto", "lbfgs", "adam"}, default="auto"
        ``"lbfgs"``: full-batch L-BFGS (strong-Wolfe line search, float64) in
        whitened coordinates of the features; it converges in tens of
        iterations even on strongly correlated features. ``"adam"``:
        mini-batch Adam with held-out early stopping, run by a skorch
        ``NeuralNet``. ``"auto"`` picks L-BFGS for the linear model when
        ``l2_reg > 0`` or it has at most ``max(50, n_samples // 10)``
        parameters (and, on a GPU, when the data fits in float64), Adam
        otherwise.
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
        L-BFGS: tolerance on the largest gradient component in whitened
        coordinates (the Hessian is close to the identity there, so ``tol``
        bounds the distance to the optimum whatever the features' scale);
        Adam: smallest improvement of the monitored loss that counts.
    cv : int, cross-validation generator or iterable, default=None
        Folds for a cross-fitted ``estimator`` (None = 5).
    input : {"auto", "logits", "proba"}, default="auto"
        With ``estimator=None``: whether ``X`` holds logits or probabilities;
        ``"auto"`` reads rows in [0, 1] summing to 1 (within the rounding
        tolerance) as probabilities. Probabilities are ``f`` as they are
        (renormalised); their floored log is the ``"logits"`` feature.
    classes : array-like of shape (n_classes,), default=None
        Names of the columns of an array ``y``; histogram columns are matched
        to the wrapped classifier's ``classes_`` by name (a DataFrame's
        columns, or these names), as in :class:`TemperatureScaler`.
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
        Class of each column of ``predict_proba`` (the wrapped classifier's
        ``classes_``; a DataFrame's columns or ``classes`` otherwise).
    n_classes_ : int
    estimator_ : estimator or None
        The classifier that produces ``f`` (refit on all data when
        cross-fitted).
    input_type_ : {"logits", "proba"} or None
        How ``X`` is read when ``estimator=None``.
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
        Number of features seen during ``fit`` (when known).

    Notes
    -----
    **Degenerate fits.** When the fitted α0 is below 1e-6 or above 1e6 (half
    way, in log, to the clip bound of 1e-12 / 1e12) for most training items, a
    warning says so: the histograms are then far from ``f`` everywhere or the
    features separate the items perfectly, and the predicted disagreements
    will be extreme.

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

    _feature_prefix = "alpha"
    _allow_probability_targets = False  # the likelihood needs counts

    _parameter_constraints: dict = {
        **_BaseCalibrator._parameter_constraints,
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "features": [StrOptions({"logits", "penultimate"}), str, callable],
        "hidden_layer_sizes": ["array-like"],
        "alpha_reg": [Interval(numbers.Real, 0, None, closed="left")],
        "l2_reg": [Interval(numbers.Real, 0, None, closed="left")],
        "normalization": [StrOptions({"reference", "eq50"})],
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
        l2_reg=0.0,
        normalization="reference",
        solver="auto",
        max_iter=200,
        batch_size="auto",
        learning_rate=1e-2,
        validation_fraction=0.2,
        early_stopping=True,
        n_iter_no_change=10,
        tol=1e-7,
        cv=None,
        input="auto",
        classes=None,
        device="cpu",
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.features = features
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha_reg = alpha_reg
        self.l2_reg = l2_reg
        self.normalization = normalization
        self.solver = solver
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.cv = cv
        self.input = input
        self.classes = classes
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------
    # hooks of the calibration core: f(x) and g(x)
    # ------------------------------------------------------------------
    def _outputs(self, estimator, X):
        """``(F, G)``: f(x) and g(x); with a leading member axis for ensembles."""
        samples = member_probabilities(estimator)
        if samples is not None:
            if not (self.features == "logits" or callable(self.features)):
                raise ValueError(
                    "With an ensemble estimator, features must be 'logits' or a "
                    f"callable, got {self.features!r}."
                )
            F = np.asarray(samples(X), dtype=np.float64)
            if callable(self.features):
                G = extract_features(self.features, estimator, X, None)
                G = np.broadcast_to(G, (F.shape[0],) + G.shape)
            else:
                G = np.log(np.clip(F, 1e-300, None))
            return F, G
        F = class_columns(estimator.predict_proba(X))
        G = extract_features(
            self.features, estimator, X, lambda: get_scores(estimator, X)
        )
        return F, as_feature_array(G)

    def _input_proba(self, X):
        """f from ``estimator=None`` input: probabilities as they are
        (renormalised, never passed through a softmax), else softmax(X)."""
        return probabilities_from_input(X, self.input_type_, fitted_input=self.input)

    def _input_outputs(self, X):
        logits = scores_from_input(X, self.input_type_, fitted_input=self.input)
        G = extract_features(self.features, None, X, logits)
        return self._input_proba(X), as_feature_array(G)

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, sample_weight=None, counts=None):
        """Fit the concentration model on label histograms.

        Parameters
        ----------
        X : array-like
            Logits or probabilities (``estimator=None``) or the estimator's
            input.
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Label histograms (counts; a DataFrame's columns name the classes)
            or one label per item.
        sample_weight : array-like of shape (n_samples,), default=None
            Item weights: the objective is their weighted mean over items
            (integer weights equal repeated items), and the feature
            standardisation is weighted too.
        counts : array-like of shape (n_samples, n_classes), default=None
            Label histograms routed as metadata (convention B, request with
            ``set_fit_request(counts=True)``); they replace ``y``.

        Returns
        -------
        self : AlphaCalibrator
        """
        hidden = tuple(int(h) for h in np.atleast_1d(self.hidden_layer_sizes))
        if any(h < 1 for h in hidden):
            raise ValueError(
                "hidden_layer_sizes must hold positive integers, got "
                f"{self.hidden_layer_sizes!r}."
            )
        # the fit's configuration lives for the fit only, whatever happens
        self._solver_config = SolverConfig.of(
            self, hidden=hidden, device=resolve_device(self.device)
        )  # a bad device fails here, before any work
        try:
            self._fit(X, y, sample_weight, counts)
        finally:
            del self._solver_config
        return self

    def _fit_outputs(self, outputs, Y, sample_weight):
        F, G = outputs
        n = Y.shape[0]
        if F.shape[-2] != n:
            raise ValueError(
                f"X and y have inconsistent numbers of samples: {F.shape[-2]} and {n}."
            )
        G = as_feature_array(G)  # standardize_features makes the one copy
        # an item of weight 0 is absent from the likelihood
        w = np.ones(n) if sample_weight is None else np.asarray(sample_weight)
        if not np.any((Y.sum(axis=1) >= 2) & (w > 0)):
            weighted = "" if sample_weight is None else " and a positive sample_weight"
            warn_user(
                f"No item has two or more annotations{weighted}: the Dirichlet-"
                "multinomial likelihood of a single label does not depend on "
                "alpha0, so the concentration cannot be learnt (alpha0 stays at 1)."
            )
        if F.ndim == 3:  # ensemble members stacked as items (weights 1/S each)
            S = F.shape[0]
            F = F.reshape(-1, F.shape[-1])
            G = G.reshape(S * n, -1)
            Y = np.tile(Y, (S, 1))
            if sample_weight is not None:
                sample_weight = np.tile(sample_weight, S)
        # NaN or infinity in G, and only they, make its moments non-finite
        # (finite features of any magnitude are rescaled first): the check
        # reads the moments instead of making another pass over G
        with np.errstate(invalid="ignore", over="ignore"):
            H, mean, scale = standardize_features(G, sample_weight)
        if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(scale))):
            row, col = np.argwhere(~np.isfinite(G))[0]
            raise ValueError(
                "The features g(X) contain NaN or infinity (first at row "
                f"{int(row) % n}, column {int(col)}: {float(G[row, col])!r})."
            )
        self.feature_mean_, self.feature_scale_ = mean, scale

        result = fit_concentration_model(
            H,
            F,
            Y,
            self._solver_config,
            sample_weight=sample_weight,
            # float32 features (penultimate layers) serve the float32 stage
            float32_features=(G, mean, scale) if G.dtype == np.float32 else None,
        )
        self.solver_ = result.solver
        self.coefs_, self.intercepts_ = result.coefs, result.intercepts
        self.n_iter_, self.loss_ = result.n_iter, result.loss
        log_a0 = result.log_alpha0  # L-BFGS's last evaluation: no pass over H
        if log_a0 is None:
            log_a0 = predict_log_alpha0(H, self.coefs_, self.intercepts_)
        warn_if_degenerate(log_a0, sample_weight)

    def predict_proba(self, X):
        """The wrapped classifier's class probabilities ``f(x) = E[ζ|x]``.

        Parameters
        ----------
        X : array-like
            Input of the wrapped estimator, or logits/probabilities when
            ``estimator=None`` (probabilities come back renormalised).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "coefs_")
        if self.estimator_ is None:
            return self._input_proba(self._validate_input(X, reset=False))
        return class_columns(self.estimator_.predict_proba(X))

    # defined here, not in the mixin, so that set_output wraps it
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
        F, a0 = self._concentration(X)
        if F.ndim == 3 and get_output_config("transform", self)["dense"] != "default":
            # otherwise pandas/polars fail on the member axis with a message
            # that names neither this estimator nor set_output
            raise ValueError(
                f"With an ensemble estimator, transform returns {F.shape} "
                "(members, samples, classes) Dirichlet parameters, which set_output"
                f"(transform={get_output_config('transform', self)['dense']!r}) "
                "cannot hold; use set_output(transform='default')."
            )
        return a0[..., None] * F

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # transform() returns Dirichlet parameters, so it is also a transformer
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64"])
        tags.non_deterministic = False
        return tags
