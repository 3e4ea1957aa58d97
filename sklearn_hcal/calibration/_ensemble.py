"""Prediction-time ensembles: MC dropout and test-time augmentation.

The baselines of Mimori et al. (2021), §7 and App. D.4–D.5: an ensemble of
``S`` class-probability vectors ``f^(s)(x)`` is read as the distribution
``(1/S) Σ_s δ(ζ − f^(s)(x))`` over class probabilities (eq. 80).

With an int ``random_state`` the members of an item are a function of the
item alone (``_row_streams``): predicting a row alone, inside any batch, in
any order or with any batch size gives the same members.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .._frontend import class_columns
from ..utils._compat import (
    HasMethods,
    Interval,
    fit_context,
    num_samples,
    skorch_predict_nonlinearity,
)
from ..utils._optional import import_optional, is_skorch_net
from ..utils._warnings import warn_user
from ._ensemble_base import _BaseEnsemble
from ._row_streams import (
    concat_rows,
    dropout_hooks,
    input_row_keys,
    row_seed_sequence,
    seed_from_random_state,
    supported_dropout,
    take_rows,
)

__all__ = ["MCDropoutClassifier", "TestTimeAugmentationClassifier"]

# Augmented rows passed to predict_proba at once (bounds the memory of S
# copies of a chunk of items).
_ROWS_PER_CALL = 8192


class MCDropoutClassifier(_BaseEnsemble):
    """Monte-Carlo dropout ensemble of a skorch net.

    Each of the ``n_samples`` members is a forward pass with the dropout
    layers active and every other layer in evaluation mode (batch norm uses
    its running statistics), as in Gal and Ghahramani (2016) and the MCDO
    baseline of Mimori et al. (2021, §7, 20 samples).

    **Reproducible per item.** The dropout masks are not drawn from torch's
    random generator (whose draws for a row depend on the rows before it in
    the call) but from a counter-based hash of ``(random_state, member,
    dropout layer, row, unit)``, where the row is identified by the content of
    its input to the module (float64 arrays are cast to float32 first). With
    an int ``random_state`` an item gets the same members alone, in any batch,
    in any order and with any ``batch_size``; two identical items get the same
    members. (The masks are identical bit for bit; the probabilities are
    equal up to the float32 rounding of matrix products, which can differ
    in the last bits between batch shapes.) Each unit (``nn.Dropout``) or
    channel (``nn.Dropout1d/2d/3d``) is kept with probability ``1 − p`` and
    scaled by ``1/(1 − p)``, as torch's dropout does. Masks are applied
    through forward hooks on the net's dropout modules, which therefore need
    batch-first activations (a clear error otherwise); alpha dropout is
    refused, and dropout written as ``torch.nn.functional.dropout(x,
    training=self.training)`` stays off (the module is in evaluation mode).
    Torch's global random state is not changed.

    ``fit(X, y)`` trains a clone of ``net`` (e.g. a
    :func:`~sklearn_hcal.make_soft_label_net` on label histograms); to use a
    net that is already trained, pass ``FrozenEstimator(net)`` and call
    ``fit()`` without data. The net is never modified (its training mode is
    restored after each call).

    Parameters
    ----------
    net : skorch ``NeuralNet`` classifier, or ``FrozenEstimator`` of a fitted one
        Its module must contain dropout layers (``torch.nn.Dropout`` and
        ``Dropout1d/2d/3d``, at least one with ``p > 0``) for the members to
        differ.
    n_samples : int, default=20
        Number of stochastic forward passes ``S``.
    random_state : int, RandomState instance or None, default=None
        Seeds the dropout masks. An int gives the same members at every call
        and for every batch (so ``predict_proba`` and
        ``predict_proba_samples`` agree); a ``RandomState`` or None draws a
        new seed at each call.

    Attributes
    ----------
    net_ : skorch ``NeuralNet``
        The fitted net (the frozen one, unwrapped, or the trained clone).
    classes_ : ndarray of shape (n_classes,)
        The net's classes.
    dropout_layers_ : list of str
        Names of the dropout modules that are made stochastic.
    n_features_in_ : int
        Number of features seen in ``fit`` (2-D inputs only).

    Examples
    --------
    >>> import numpy as np, torch
    >>> from skorch import NeuralNetClassifier
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn_hcal.calibration import MCDropoutClassifier
    >>> X = np.random.RandomState(0).randn(60, 4).astype(np.float32)
    >>> y = (X[:, 0] > 0).astype(np.int64)
    >>> module = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(),
    ...                              torch.nn.Dropout(0.5), torch.nn.Linear(16, 2))
    >>> net = NeuralNetClassifier(module, criterion=torch.nn.CrossEntropyLoss,
    ...                           max_epochs=3, train_split=None, verbose=0)
    >>> mc = MCDropoutClassifier(FrozenEstimator(net.fit(X, y)), n_samples=5,
    ...                          random_state=0).fit()
    >>> mc.predict_proba_samples(X[:3]).shape
    (5, 3, 2)
    >>> # the members of an item do not depend on the other items in the call
    >>> bool(np.allclose(mc.predict_proba_samples(X)[:, 1:3],
    ...                  mc.predict_proba_samples(X[1:3]), rtol=0, atol=1e-6))
    True
    """

    _model_param = "net"
    _parameter_constraints: dict = {
        "net": [HasMethods(["fit", "predict_proba"])],
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, net, *, n_samples=20, random_state=None):
        self.net = net
        self.n_samples = n_samples
        self.random_state = random_state

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X=None, y=None, **fit_params):
        """Train a clone of ``net`` on ``(X, y)``, or take a frozen net as is.

        Parameters
        ----------
        X : input accepted by the net, default=None
            Training inputs; None only with ``net=FrozenEstimator(...)``.
        y : array-like of shape (n_samples, n_classes) or (n_samples,), \
                default=None
            Label histograms or labels.
        **fit_params : dict
            Passed to the net's ``fit``.

        Returns
        -------
        self : MCDropoutClassifier
        """
        net = getattr(self.net, "estimator", self.net)
        if not is_skorch_net(net):
            raise ValueError(
                "net must be a skorch NeuralNet (or FrozenEstimator of a fitted "
                f"one), got {type(net).__name__}."
            )
        return self._fit(X, y, fit_params)

    def _validate_model(self, net):
        torch = import_optional("torch")
        names, unsupported, lookalikes = [], [], []
        modules = dict(net.module_.named_modules())
        for name, m in modules.items():
            if supported_dropout(m):
                names.append(name)
            elif isinstance(m, torch.nn.modules.dropout._DropoutNd):
                unsupported.append(f"{name or 'module'} ({type(m).__name__})")
            elif "dropout" in type(m).__name__.lower():
                lookalikes.append(f"{name or 'module'} ({type(m).__name__})")
        if unsupported:
            raise ValueError(
                "MC dropout draws per-row keep masks for nn.Dropout and "
                "nn.Dropout1d/2d/3d; these layers are not supported: "
                f"{', '.join(unsupported)} (alpha dropout rescales dropped units "
                "instead of zeroing them)."
            )
        if lookalikes:
            warn_user(
                f"Layers that look like dropout but are not torch dropout "
                f"layers stay in evaluation mode (no dropout): "
                f"{', '.join(lookalikes)}."
            )
        if not names:
            raise ValueError(
                "The net's module has no dropout layer, so MC dropout would "
                "repeat one deterministic prediction."
            )
        if all(float(modules[name].p) == 0.0 for name in names):
            # p = 0 keeps every unit, so the members are all equal; a warning,
            # not an error: the deterministic ensemble is a useful baseline.
            warn_user(
                "Every dropout layer of the net's module has p=0 "
                f"({', '.join(names)}), so every MC-dropout member repeats one "
                "deterministic prediction (no spread, zero model uncertainty)."
            )
        self.dropout_layers_ = names

    def predict_proba_samples(self, X):
        """Class probabilities of each member.

        Parameters
        ----------
        X : input accepted by the net
            Items to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_items, n_classes)
            ``n_samples`` is the ensemble size ``S``.
        """
        X = self._check_input(X)
        torch = import_optional("torch")
        net = self.net_
        if isinstance(X, np.ndarray) and X.dtype == np.float64:
            X = X.astype(np.float32)
        nonlin = skorch_predict_nonlinearity(net)
        module = net.module_
        modules = dict(module.named_modules())
        dropouts = [modules[name] for name in self.dropout_layers_]
        seed = seed_from_random_state(self.random_state)
        was_training = module.training
        iterator = net.get_iterator(net.get_dataset(X), training=False)
        batches = []
        device = next(module.parameters()).device
        # torch's DataLoader draws a base seed from the global generator on
        # every pass; forking keeps the caller's random state untouched.
        forked = torch.random.fork_rng(
            devices=[device] if device.type == "cuda" else []
        )
        try:
            module.eval()
            with (
                forked,
                torch.no_grad(),
                dropout_hooks(module, dropouts, seed) as state,
            ):
                for batch in iterator:
                    Xi = batch[0] if isinstance(batch, (tuple, list)) else batch
                    state.keys = None  # a new batch: key its rows once
                    members = []
                    for s in range(self.n_samples):
                        state.member = s
                        out = net.infer(Xi)
                        if isinstance(out, (tuple, list)):
                            out = out[0]
                        members.append(nonlin(out).detach().cpu().double())
                    batches.append(torch.stack(members))
        finally:
            module.train(was_training)
        if not batches:
            raise ValueError("X has no items to predict.")
        # one probability per item and member: a binary net's P(second class)
        return class_columns(torch.cat(batches, dim=1).numpy(), ndim=3)


class TestTimeAugmentationClassifier(_BaseEnsemble):
    """Test-time augmentation ensemble of any classifier.

    Member ``s`` is ``estimator.predict_proba`` of a random augmentation of
    the inputs (Ayhan and Berens 2018; the TTA baseline of Mimori et al. 2021,
    §7, 20 samples).

    **Reproducible per item** (``per_row=True``, the default): ``augment`` is
    called once per item, on ``S`` copies of it, with a ``RandomState``
    seeded by ``random_state`` and a hash of the item's content (its bytes;
    by value for DataFrames and object arrays). The ``S`` augmented copies
    of an item therefore depend on the item, ``random_state`` and
    ``n_samples`` only -- not on the other items in the call, their order or
    the batch size -- for any ``augment`` that is deterministic given its
    arguments; the members are then ``predict_proba`` of those copies, the
    same for any row-wise classifier. Identical items get identical
    members. ``per_row=False`` calls ``augment`` once per member on the whole
    ``X`` (one generator for the call; faster for vectorised augmentations,
    but an item's members then depend on the rest of the call).

    ``fit(X, y)`` trains a clone of ``estimator`` (through
    :class:`~sklearn_hcal.SoftLabelClassifier` when ``y`` is a label
    histogram and the estimator does not take histograms itself); pass
    ``FrozenEstimator(fitted)`` and call ``fit()`` to use a fitted classifier.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, or ``FrozenEstimator``
        Any scikit-learn classifier, skorch net or calibrator.
    augment : callable
        ``augment(X, random_state) -> X_aug``, where ``random_state`` is a
        :class:`numpy.random.RandomState`; must return inputs the estimator
        accepts, with the same number of items as ``X``.
    n_samples : int, default=20
        Number of augmented copies ``S``.
    random_state : int, RandomState instance or None, default=None
        Seeds the augmentations; an int gives the same members at every call.
    per_row : bool, default=True
        Augment item by item (reproducible per item) or the whole ``X`` at
        once.

    Attributes
    ----------
    estimator_ : classifier
        The fitted classifier (the frozen one, unwrapped, or the trained
        clone).
    classes_ : ndarray of shape (n_classes,)
        The estimator's classes.
    n_features_in_ : int
        Number of features seen in ``fit`` (2-D inputs only).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_hcal.calibration import TestTimeAugmentationClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(100, 2)
    >>> y = (X[:, 0] + 0.5 * rng.randn(100) > 0).astype(int)
    >>> def jitter(X, random_state):
    ...     return X + 0.3 * random_state.standard_normal(X.shape)
    >>> tta = TestTimeAugmentationClassifier(LogisticRegression(), augment=jitter,
    ...                                      n_samples=8, random_state=0).fit(X, y)
    >>> tta.predict_proba_samples(X[:4]).shape
    (8, 4, 2)
    >>> bool(np.array_equal(tta.predict_proba_samples(X[:4])[:, ::-1],
    ...                     tta.predict_proba_samples(X[3::-1][:4])))
    True
    """

    __test__ = False  # not a pytest test class despite its name

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "augment": [callable],
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "per_row": ["boolean"],
    }

    def __init__(
        self, estimator, *, augment, n_samples=20, random_state=None, per_row=True
    ):
        self.estimator = estimator
        self.augment = augment
        self.n_samples = n_samples
        self.random_state = random_state
        self.per_row = per_row

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X=None, y=None, **fit_params):
        """Train a clone of ``estimator`` on ``(X, y)``, or take a frozen one.

        Parameters
        ----------
        X : input accepted by the estimator, default=None
            Training inputs; None only with ``estimator=FrozenEstimator(...)``.
        y : array-like of shape (n_samples, n_classes) or (n_samples,), \
                default=None
            Label histograms or labels.
        **fit_params : dict
            Passed to the estimator's ``fit``.

        Returns
        -------
        self : TestTimeAugmentationClassifier
        """
        return self._fit(X, y, fit_params)

    def _validate_model(self, model):
        if not hasattr(model, "predict_proba"):
            raise ValueError(
                f"estimator ({type(model).__name__}) has no predict_proba."
            )

    def _proba(self, X_aug, n_items: int) -> np.ndarray:
        P = class_columns(self.estimator_.predict_proba(X_aug))
        if P.shape[0] != n_items:
            raise ValueError(
                f"augment must return as many items as it is given ({n_items}); "
                f"the estimator predicted {P.shape[0]}."
            )
        return P

    def predict_proba_samples(self, X):
        """Class probabilities on each augmented copy.

        Parameters
        ----------
        X : array-like
            Items to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_items, n_classes)
        """
        X = self._check_input(X)
        S = self.n_samples
        seed = seed_from_random_state(self.random_state)
        n = num_samples(X)
        if not self.per_row:
            rng = np.random.RandomState(row_seed_sequence(seed, 0))
            return np.stack([self._proba(self.augment(X, rng), n) for _ in range(S)])
        if n == 0:
            raise ValueError("X has no items to predict.")
        if sp.issparse(X):
            X = X.tocsr()  # row indexing (COO, DIA, ... have none)
        keys = input_row_keys(X, n)
        chunk = max(1, _ROWS_PER_CALL // S)
        out = None
        for start in range(0, n, chunk):
            items = range(start, min(n, start + chunk))
            parts = []
            for i in items:
                rng = np.random.RandomState(row_seed_sequence(seed, keys[i]))
                parts.append(self.augment(take_rows(X, [i] * S), rng))
            P = self._proba(concat_rows(parts), len(items) * S)
            P = P.reshape(len(items), S, -1).transpose(1, 0, 2)
            if out is None:
                out = np.empty((S, n, P.shape[-1]))
            out[:, items.start : items.stop] = P
        return out
