"""Prediction-time ensembles: MC dropout and test-time augmentation.

The baselines of Mimori et al. (2021), §7 and App. D.4–D.5: an ensemble of
``S`` class-probability vectors ``f^(s)(x)`` is read as the distribution
``(1/S) Σ_s δ(ζ − f^(s)(x))`` over class probabilities (eq. 80).
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted

from .._validation import labels_to_histograms
from ..utils._optional import import_optional, is_skorch_net

__all__ = ["MCDropoutClassifier", "TestTimeAugmentationClassifier"]


def _check_new_counts(Y_new, n_samples, classes):
    """New labels as an ``(n, K)`` count matrix; zero rows are allowed."""
    K = len(classes)
    arr = Y_new.to_numpy() if hasattr(Y_new, "to_numpy") else np.asarray(Y_new)
    if arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 1):
        arr, _ = labels_to_histograms(arr, classes=classes, name="Y_new")
    arr = np.asarray(arr, dtype=np.float64)
    if arr.shape != (n_samples, K):
        raise ValueError(
            f"Y_new must be labels of shape ({n_samples},) or counts of shape "
            f"({n_samples}, {K}), got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or np.any(arr % 1 != 0):
        raise ValueError("Y_new must hold finite non-negative integer counts.")
    return arr


class _BaseEnsemble(ClassifierMixin, BaseEstimator):
    """Shared prediction API of the prediction-time ensembles.

    Subclasses wrap an already fitted model (like ``FrozenEstimator``): ``fit``
    validates the wrapped model and returns ``self``; nothing is trained.
    """

    def _wrapped(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def __sklearn_is_fitted__(self):
        model = self._wrapped()
        if is_skorch_net(model):
            return bool(getattr(model, "initialized_", False))
        try:
            check_is_fitted(model)
            return True
        except (NotFittedError, TypeError):
            return False

    def _check_fitted(self):
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(
                f"The model wrapped by this {type(self).__name__} is not fitted; "
                "fit it first (the ensemble wraps a fitted model)."
            )

    @property
    def classes_(self):
        """Classes of the wrapped model (``arange(K)`` when it has none)."""
        self._check_fitted()
        model = self._wrapped()
        for attr in ("classes_", "classes_inferred_"):
            classes = getattr(model, attr, None)
            if classes is not None:
                return np.asarray(classes)
        return None

    def fit(self, X=None, y=None):
        """Validate the parameters and the wrapped model; train nothing.

        Parameters
        ----------
        X : None
            Ignored; present for API compatibility.
        y : None
            Ignored; present for API compatibility.

        Returns
        -------
        self
        """
        self._validate_params()
        self._check_fitted()
        return self

    def _rng_seed(self):
        """A seed per call: fixed ``random_state`` gives the same members."""
        rng = check_random_state(self.random_state)
        return int(rng.randint(np.iinfo(np.int32).max))

    def predict_proba_samples(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def predict_proba(self, X):
        """Ensemble mean ``(1/S) Σ_s f^(s)(x)``.

        Parameters
        ----------
        X : array-like

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self.predict_proba_samples(X).mean(axis=0)

    def predict(self, X):
        """Class with the highest mean probability, mapped to ``classes_``."""
        P = self.predict_proba(X)
        classes = self.classes_
        if classes is None or len(classes) != P.shape[1]:
            classes = np.arange(P.shape[1])
        return classes[np.argmax(P, axis=1)]

    def predict_disagreement(self, X):
        r"""Disagreement probability, eq. 72 of Mimori et al. (2021).

        :math:`\hat\varphi = \frac1S\sum_s\left(1 - \sum_k (f^{(s)}_k)^2\right)`.

        Returns
        -------
        phi : ndarray of shape (n_samples,)
        """
        F = self.predict_proba_samples(X)
        return (1.0 - np.sum(F**2, axis=-1)).mean(axis=0)

    def predict_posterior(self, X, Y_new):
        r"""Posterior class probabilities after new labels (eq. 80–81).

        Each member is re-weighted by the likelihood of the new labels,
        :math:`w_s \propto \prod_k (f^{(s)}_k)^{y_k}` (the product over classes;
        Mimori et al.'s released code sums over classes, which is not the
        likelihood), and the posterior mean is
        :math:`\sum_s w_s f^{(s)} / \sum_s w_s`. A zero row of ``Y_new`` gives
        the prior mean.

        Parameters
        ----------
        X : array-like
        Y_new : array-like of shape (n_samples, n_classes) or (n_samples,)
            New label counts or one new label per item.

        Returns
        -------
        posterior : ndarray of shape (n_samples, n_classes)
        """
        F = self.predict_proba_samples(X)
        classes = self.classes_
        if classes is None or len(classes) != F.shape[-1]:
            classes = np.arange(F.shape[-1])
        Yn = _check_new_counts(Y_new, F.shape[1], classes)
        log_f = np.log(np.clip(F, 1e-300, None))
        # Members with f_k = 0 for an observed class get weight exp(-690·y):
        # effectively zero, without 0·log 0 = NaN for unobserved classes.
        log_w = np.einsum("snk,nk->sn", log_f, Yn)
        w = softmax(log_w, axis=0)
        return np.einsum("sn,snk->nk", w, F)

    def score(self, X, y):
        """Majority accuracy (histograms) or accuracy (labels)."""
        y_arr = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
        pred = self.predict(X)
        if y_arr.ndim == 2 and y_arr.shape[1] > 1:
            classes = self.classes_
            if classes is None or len(classes) != y_arr.shape[1]:
                classes = np.arange(y_arr.shape[1])
            truth = classes[np.argmax(y_arr, axis=1)]
        else:
            truth = y_arr.ravel()
        return float(np.mean(pred == truth))


class MCDropoutClassifier(_BaseEnsemble):
    """Monte-Carlo dropout ensemble of a fitted skorch net.

    Each of the ``n_samples`` members is a forward pass with the dropout
    layers active and every other layer in evaluation mode (batch norm uses
    its running statistics), as in Gal and Ghahramani (2016) and the MCDO
    baseline of Mimori et al. (2021, §7, 20 samples).

    This is a wrapper around an already fitted net: ``fit`` only validates,
    and the net is never modified (its training mode is restored after each
    call).

    Parameters
    ----------
    net : fitted skorch ``NeuralNet`` classifier
        Its module must contain dropout layers (``torch.nn.Dropout`` and
        friends) for the members to differ.
    n_samples : int, default=20
        Number of stochastic forward passes ``S``.
    random_state : int, RandomState instance or None, default=None
        Seeds the dropout masks; an int gives the same members at every call
        (so ``predict_proba`` and ``predict_proba_samples`` agree).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The net's classes.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from skorch import NeuralNetClassifier
    >>> from sklearn_hcal.calibration import MCDropoutClassifier
    >>> X = np.random.RandomState(0).randn(60, 4).astype(np.float32)
    >>> y = (X[:, 0] > 0).astype(np.int64)
    >>> module = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(),
    ...                              torch.nn.Dropout(0.5), torch.nn.Linear(16, 2))
    >>> net = NeuralNetClassifier(module, criterion=torch.nn.CrossEntropyLoss,
    ...                           max_epochs=3, train_split=None, verbose=0)
    >>> mc = MCDropoutClassifier(net.fit(X, y), n_samples=5, random_state=0)
    >>> mc.predict_proba_samples(X[:3]).shape
    (5, 3, 2)
    >>> np.allclose(mc.predict_proba(X[:3]), mc.predict_proba_samples(X[:3]).mean(0))
    True
    """

    _parameter_constraints: dict = {
        "net": [HasMethods(["forward", "predict_proba"])],
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, net, *, n_samples=20, random_state=None):
        self.net = net
        self.n_samples = n_samples
        self.random_state = random_state

    def _wrapped(self):
        return self.net

    def fit(self, X=None, y=None):
        """Validate that ``net`` is a fitted skorch net with dropout; no training.

        Parameters
        ----------
        X : None
            Ignored; present for API compatibility.
        y : None
            Ignored; present for API compatibility.

        Returns
        -------
        self
        """
        if not is_skorch_net(self.net):
            raise ValueError(
                f"net must be a fitted skorch NeuralNet, got {type(self.net).__name__}."
            )
        super().fit(X, y)
        if not self._dropout_modules():
            raise ValueError(
                "The net's module has no dropout layer, so MC dropout would "
                "repeat one deterministic prediction."
            )
        return self

    def _dropout_modules(self):
        torch = import_optional("torch")
        return [
            m
            for m in self.net.module_.modules()
            if isinstance(m, torch.nn.modules.dropout._DropoutNd)
        ]

    def predict_proba_samples(self, X):
        """Class probabilities of each member.

        Parameters
        ----------
        X : input accepted by the net

        Returns
        -------
        proba : ndarray of shape (n_samples, n_items, n_classes)
            ``n_samples`` is the ensemble size ``S``.
        """
        if not is_skorch_net(self.net):
            raise ValueError(
                f"net must be a fitted skorch NeuralNet, got {type(self.net).__name__}."
            )
        self._check_fitted()
        if not isinstance(self.n_samples, numbers.Integral) or self.n_samples < 1:
            raise ValueError(
                f"n_samples must be a positive integer, got {self.n_samples!r}."
            )
        torch = import_optional("torch")
        net = self.net
        if isinstance(X, np.ndarray) and X.dtype == np.float64:
            X = X.astype(np.float32)
        nonlin = net._get_predict_nonlinearity()
        module = net.module_
        was_training = module.training
        dropouts = self._dropout_modules()
        device = next(module.parameters()).device
        members = []
        iterator = net.get_iterator(net.get_dataset(X), training=False)
        with (
            torch.random.fork_rng(devices=[device] if device.type == "cuda" else []),
            torch.no_grad(),
        ):
            torch.manual_seed(self._rng_seed())
            try:
                module.eval()
                for m in dropouts:
                    m.train()
                for _ in range(self.n_samples):
                    outs = []
                    for batch in iterator:
                        Xi = batch[0] if isinstance(batch, (tuple, list)) else batch
                        out = net.infer(Xi)
                        if isinstance(out, (tuple, list)):
                            out = out[0]
                        outs.append(nonlin(out).detach().cpu().double())
                    members.append(torch.cat(outs).numpy())
            finally:
                module.train(was_training)
        P = np.stack(members)
        if P.ndim == 2:  # one probability per item (binary nets)
            P = np.stack([1.0 - P, P], axis=-1)
        return P


class TestTimeAugmentationClassifier(_BaseEnsemble):
    """Test-time augmentation ensemble of any fitted classifier.

    Member ``s`` is ``estimator.predict_proba(augment(X, rng))`` with a fresh
    augmentation of the inputs (Ayhan and Berens 2018; the TTA baseline of
    Mimori et al. 2021, §7, 20 samples).

    This is a wrapper around an already fitted classifier: ``fit`` only
    validates it.

    Parameters
    ----------
    estimator : fitted classifier with ``predict_proba``
        Any scikit-learn classifier, skorch net or calibrator.
    augment : callable
        ``augment(X, random_state) -> X_aug``, where ``random_state`` is a
        :class:`numpy.random.RandomState`; must return inputs the estimator
        accepts, with the same number of items.
    n_samples : int, default=20
        Number of augmented copies ``S``.
    random_state : int, RandomState instance or None, default=None
        Seeds the augmentations; an int gives the same members at every call.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The estimator's classes.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_hcal.calibration import TestTimeAugmentationClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(100, 2)
    >>> y = (X[:, 0] + 0.5 * rng.randn(100) > 0).astype(int)
    >>> clf = LogisticRegression().fit(X, y)
    >>> def jitter(X, random_state):
    ...     return X + 0.3 * random_state.standard_normal(X.shape)
    >>> tta = TestTimeAugmentationClassifier(clf, augment=jitter, n_samples=8,
    ...                                      random_state=0).fit()
    >>> tta.predict_proba_samples(X[:4]).shape
    (8, 4, 2)
    >>> tta.predict_disagreement(X[:4]).shape
    (4,)
    """

    __test__ = False  # not a pytest test class despite its name

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["predict_proba"])],
        "augment": [callable],
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, *, augment, n_samples=20, random_state=None):
        self.estimator = estimator
        self.augment = augment
        self.n_samples = n_samples
        self.random_state = random_state

    def _wrapped(self):
        return self.estimator

    def predict_proba_samples(self, X):
        """Class probabilities on each augmented copy.

        Parameters
        ----------
        X : array-like

        Returns
        -------
        proba : ndarray of shape (n_samples, n_items, n_classes)
        """
        self._check_fitted()
        if not callable(self.augment):
            raise ValueError("augment must be a callable (X, random_state) -> X.")
        if not isinstance(self.n_samples, numbers.Integral) or self.n_samples < 1:
            raise ValueError(
                f"n_samples must be a positive integer, got {self.n_samples!r}."
            )
        rng = np.random.RandomState(self._rng_seed())
        members = []
        n_items = None
        for _ in range(self.n_samples):
            X_aug = self.augment(X, rng)
            P = np.asarray(self.estimator.predict_proba(X_aug), dtype=np.float64)
            if P.ndim == 1:
                P = np.column_stack([1.0 - P, P])
            if n_items is None:
                n_items = P.shape[0]
            elif P.shape[0] != n_items:
                raise ValueError(
                    "augment must return the same number of items at every call."
                )
            members.append(P)
        return np.stack(members)
