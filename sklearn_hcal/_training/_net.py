"""skorch networks trained on label histograms (soft labels).

:class:`SoftLabelNetClassifier` (a skorch ``NeuralNetClassifier``) and
:func:`make_soft_label_net`. torch and skorch are optional: this module
imports them, and the package faces import this module only when one of its
names is first used.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from ..utils._optional import import_optional, resolve_device
from ._inputs import (
    _check_valid_targets,
    _plain_array,
    _prepare_targets,
    _seed_from,
    _takes_n_classes,
    _valid_majority_accuracy,
    _validate_X,
)

__all__ = ["SoftLabelNetClassifier", "make_soft_label_net"]

# This module is imported only when one of its names is used (the package
# faces resolve names lazily), so importing torch and skorch here costs
# nothing to users of the metrics; without them the error names the extra.
torch = import_optional("torch")
skorch = import_optional("skorch")
from skorch.callbacks import (  # noqa: E402
    EpochScoring,
    EpochTimer,
    PassthroughScoring,
    PrintLog,
)


class SoftLabelNetClassifier(skorch.NeuralNetClassifier):
    """skorch ``NeuralNetClassifier`` that trains on label histograms.

    ``fit(X, y)`` accepts ``y`` as an ``(n_samples, n_classes)`` label
    histogram (counts, or rows of probabilities) or as 1-D class labels.
    Histograms are normalised to ``Y / n`` and used as probability
    targets of ``torch.nn.CrossEntropyLoss``, i.e. the soft cross-entropy
    ``-sum_k (Y_ik / n_i) log softmax(f(x_i))_k`` averaged over the
    batch; labels become class indices (ordinary cross-entropy). The
    module must output logits (one per class); ``predict_proba`` applies
    the softmax (skorch's ``predict_nonlinearity="auto"``).

    Differences from ``NeuralNetClassifier``: ``criterion`` defaults to
    ``CrossEntropyLoss``; ``train_split`` defaults to ``None`` (train on
    everything; skorch's default stratified split cannot stratify a 2-D
    ``y`` -- pass ``skorch.dataset.ValidSplit(5, stratified=False)`` for a
    validation set); ``classes_`` come from ``classes``, the DataFrame
    columns of ``y``, ``0 .. K-1`` for a histogram, or the sorted labels;
    ``predict`` returns elements of ``classes_``; ``score`` is the
    accuracy against the human majority for histograms; float64 numpy
    inputs are cast to float32; ``random_state`` (int) seeds torch
    inside ``fit`` without changing the global torch RNG state. A module
    *class* whose constructor takes ``n_classes`` (like :class:`SmallCNN`)
    gets one output per class found in ``fit`` unless
    ``module__n_classes`` is given; a module whose number of outputs
    differs from the number of classes is refused with a clear error.
    numpy inputs get scikit-learn's checks in ``fit`` (no NaN or
    infinity, not empty) and must keep their number of features
    (``n_features_in_``) at prediction; tensors, dicts, DataFrames and
    datasets go to skorch unchanged (a Python list is skorch's list of
    several inputs, not a list of rows).

    With ``criterion=torch.nn.NLLLoss`` (module outputs probabilities,
    skorch's convention) histograms are trained with the soft negative
    log-likelihood ``-sum_k p_ik log q_ik`` (mean over the batch).

    Parameters
    ----------
    module : torch module class or instance
        The network; see ``skorch.NeuralNet``. An instance is copied in
        ``fit`` and the copy trained (``module_``): the instance keeps its
        weights, so every ``fit`` starts from them (pretrained weights are
        fine-tuned afresh each time). ``random_state`` does not redraw an
        instance's weights, which were drawn when it was built.
    *args, **kwargs
        Passed to ``skorch.NeuralNetClassifier``.
    criterion : torch criterion class, default=torch.nn.CrossEntropyLoss
        Loss; ``CrossEntropyLoss`` or ``NLLLoss`` for histograms.
    train_split : callable or None, default=None
        skorch's train/validation split.
    classes : array-like or None, default=None
        The classes; fixes their number and order.
    random_state : int, RandomState or None, default=None
        Seed for the weight initialisation, batch shuffling and dropout
        during ``fit``.
    """

    #: fits on label histograms (the ensembles and cross-fitting do not
    #: wrap it in a SoftLabelClassifier)
    _fits_histograms = True

    def __init__(
        self,
        module,
        *args,
        criterion=torch.nn.CrossEntropyLoss,
        train_split=None,
        classes=None,
        random_state=None,
        **kwargs,
    ):
        super().__init__(
            module,
            *args,
            criterion=criterion,
            train_split=train_split,
            classes=classes,
            **kwargs,
        )
        self.random_state = random_state

    @property
    def _default_callbacks(self):
        return [
            ("epoch_timer", EpochTimer()),
            ("train_loss", PassthroughScoring(name="train_loss", on_train=True)),
            ("valid_loss", PassthroughScoring(name="valid_loss")),
            (
                "valid_acc",
                EpochScoring(
                    _valid_majority_accuracy,
                    name="valid_acc",
                    lower_is_better=False,
                ),
            ),
            ("print_log", PrintLog()),
        ]

    def check_data(self, X, y):
        # classes_inferred_ is set in fit from the raw y; the parent would
        # take np.unique of the (normalised) targets instead.
        if y is None and not skorch.utils.is_dataset(X):
            return super().check_data(X, y)
        return None

    def get_dataset(self, X, y=None):
        # prediction: finite values of the width seen in fit
        X = _plain_array(X) if y is not None else _validate_X(self, X, reset=False)
        if isinstance(X, np.ndarray) and X.dtype == np.float64:
            X = X.astype(np.float32)
        return super().get_dataset(X, y)

    def _prepare(self, y):
        if y is None:
            return None
        if hasattr(y, "detach"):
            y = y.detach().cpu().numpy()
        classes = None if self.classes is None else list(self.classes)
        targets, found = _prepare_targets(y, classes)
        self.classes_inferred_ = found
        return targets

    def _infer_classes(self, X, y):
        """Classes of ``y`` before the module is built (for ``n_classes``)."""
        if y is None:
            if not skorch.utils.is_dataset(X):
                raise ValueError(
                    f"{type(self).__name__} requires y to be passed, but the "
                    "target y is None (pass label histograms or labels, or a "
                    "torch Dataset that yields them)."
                )
            return
        raw = y.detach().cpu().numpy() if hasattr(y, "detach") else y
        classes = None if self.classes is None else list(self.classes)
        self.classes_inferred_ = _prepare_targets(raw, classes)[1]

    def initialize_module(self):
        # A module class whose constructor takes n_classes is built with
        # one output per class found in fit, unless module__n_classes is
        # given (an instance is used as it is).
        kwargs = self.get_params_for("module")
        classes = self.classes
        if classes is None:
            classes = getattr(self, "classes_inferred_", None)
        if (
            isinstance(self.module, type)
            and "n_classes" not in kwargs
            and classes is not None
            and _takes_n_classes(self.module)
        ):
            kwargs["n_classes"] = len(classes)
        module = self.initialized_instance(self.module, kwargs)
        if module is self.module:
            # skorch trains an instance in place: fit would change the
            # module parameter, and a second fit would go on from the
            # trained weights instead of starting again (scikit-learn's
            # fit must not change parameters and must be repeatable).
            module = copy.deepcopy(module)
        self.module_ = module
        return self

    def _fork_rng(self):
        devices = []
        if torch.cuda.is_available():
            devices = list(range(torch.cuda.device_count()))
        return torch.random.fork_rng(devices=devices)

    def fit(self, X, y, **fit_params):
        """Initialise and train the module on histograms or labels.

        Parameters
        ----------
        X : input data accepted by skorch
            Features (float64 arrays are cast to float32).
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Label histograms (or probability rows) or class labels.
        **fit_params : dict
            Passed to ``skorch.NeuralNet.fit``.

        Returns
        -------
        self
        """
        X = _validate_X(self, X, reset=True)
        self._infer_classes(X, y)
        seed = _seed_from(self.random_state)
        if seed is None:
            return super().fit(X, y, **fit_params)
        with self._fork_rng():
            torch.manual_seed(seed)
            return super().fit(X, y, **fit_params)

    def partial_fit(self, X, y=None, classes=None, **fit_params):
        """Train for one more ``max_epochs`` run without re-initialising.

        Parameters
        ----------
        X : input data accepted by skorch
            Features; a numpy array must keep the width seen first.
        y : array-like of shape (n_samples, n_classes) or (n_samples,)
            Label histograms (or probability rows) or class labels.
        classes : array-like, default=None
            Ignored (skorch's signature); use the ``classes`` parameter.
        **fit_params : dict
            Passed to ``skorch.NeuralNet.partial_fit``.

        Returns
        -------
        self
        """
        first = not getattr(self, "initialized_", False)
        X = _validate_X(self, X, reset=first)
        if first:
            self._infer_classes(X, y)
        return super().partial_fit(X, y, classes=classes, **fit_params)

    def get_split_datasets(self, X, y=None, **fit_params):
        dataset_train, dataset_valid = super().get_split_datasets(X, y, **fit_params)
        # a predefined validation set keeps its targets (counts for the
        # human metrics' estimators); they get fit's checks here, and the
        # loss reads them as Y / n (get_loss)
        _check_valid_targets(getattr(dataset_valid, "y", None))
        return dataset_train, dataset_valid

    def fit_loop(self, X, y=None, epochs=None, **fit_params):
        # the single entry point shared by fit and partial_fit
        return super().fit_loop(X, self._prepare(y), epochs=epochs, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        y_true = skorch.utils.to_tensor(y_true, device=self.device)
        if y_true.dim() == 2:
            if y_pred.shape[-1] != y_true.shape[-1]:
                raise ValueError(
                    f"The module outputs {y_pred.shape[-1]} columns but y has "
                    f"{y_true.shape[-1]} classes; set the module's number of "
                    "outputs to the number of histogram columns."
                )
            # every 2-D target is a histogram read as Y / n: fit's targets
            # arrive normalised, a predefined validation set (or a Dataset)
            # as counts -- an n times larger loss, integer counts a crash
            y_true = y_true.to(y_pred.dtype)
            sums = y_true.sum(dim=1, keepdim=True)
            if bool((sums <= 0).any()):
                raise ValueError(
                    "A target row of the "
                    + ("training" if training else "validation")
                    + " data sums to 0: every item needs at least one annotation."
                )
            y_true = y_true / sums
            if isinstance(self.criterion_, torch.nn.NLLLoss):
                eps = torch.finfo(y_pred.dtype).eps
                return -(y_true * torch.log(y_pred + eps)).sum(dim=1).mean()
        elif y_pred.dim() == 2:
            n_classes = len(self.classes_)
            if y_pred.shape[-1] != n_classes:
                raise ValueError(
                    f"The module outputs {y_pred.shape[-1]} columns but there "
                    f"are {n_classes} classes ({list(self.classes_)!r}); set "
                    "the module's number of outputs to the number of classes "
                    "(or pass classes=... to fix them)."
                )
        return super().get_loss(y_pred, y_true, X=X, training=training)

    def predict(self, X):
        """Most probable class, an element of ``classes_``."""
        # predict_proba first: it raises NotFittedError on an unfitted net
        top = self.predict_proba(X).argmax(axis=1)
        return np.asarray(self.classes_)[top]

    def score(self, X, y, sample_weight=None):
        """Majority accuracy for histograms, accuracy for labels.

        The package's one ``score``
        (:func:`sklearn_hcal._frontend.human_score`): histogram columns
        are matched to ``classes_`` by name, as in ``fit``.
        """
        from .._frontend import human_score

        return human_score(self, X, y, sample_weight=sample_weight)


# ---------------------------------------------------------------------------
# public functions


def make_soft_label_net(
    module,
    *,
    n_classes: int | None = None,
    classes=None,
    max_epochs: int = 20,
    lr: float = 1e-3,
    batch_size: int = 64,
    optimizer="adam",
    train_split=None,
    device: str = "cpu",
    random_state=None,
    verbose: int = 0,
    **skorch_kwargs,
):
    """A skorch classifier that fits directly on label histograms.

    Returns a :class:`SoftLabelNetClassifier` (a skorch
    ``NeuralNetClassifier``) whose ``fit`` accepts ``(n_samples, n_classes)``
    histograms -- trained with the soft cross-entropy against ``Y / n``
    (``torch.nn.CrossEntropyLoss`` with probability targets) -- or 1-D
    integer labels, and whose ``predict_proba`` returns the softmax of the
    module's logits, one column per class.

    Parameters
    ----------
    module : torch.nn.Module class or instance
        Must output one **logit** per class. Module parameters go in
        ``skorch_kwargs`` as ``module__name=value``. An instance is copied in
        ``fit``, never trained in place, so every ``fit`` starts from its
        weights.
    n_classes : int, default=None
        Number of classes; sets ``classes=range(n_classes)`` so that 1-D
        labels missing a class still give ``n_classes`` columns.
    classes : array-like, default=None
        Class names, in the column order of the histograms. Takes precedence
        over ``n_classes``; by default the classes are inferred in ``fit``.
    max_epochs : int, default=20
        Training epochs.
    lr : float, default=1e-3
        Learning rate.
    batch_size : int, default=64
        Mini-batch size.
    optimizer : {"adam", "adamw", "sgd"} or torch optimizer class, default="adam"
        Optimiser.
    train_split : callable or None, default=None
        skorch's validation split; ``None`` trains on all data. For a
        validation set with histograms use
        ``skorch.dataset.ValidSplit(5, stratified=False)``.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where to train; ``"auto"`` picks CUDA when available.
    random_state : int or None, default=None
        Seed for initialisation, shuffling and dropout inside ``fit``. Two
        fits with the same seed are identical for the same number of torch
        threads (``torch.get_num_threads()``); with another thread count the
        floating-point sums run in another order and the weights differ by
        rounding (e.g. a fitted temperature of 1.2814 with 2 threads and
        1.2865 with 1 on the gallery's Mix-Digits CNN). A module instance
        keeps the weights it was built with (see ``module``); pass the class
        for seeded weights.
    verbose : int, default=0
        skorch's verbosity (0 prints nothing).
    **skorch_kwargs
        Any other ``NeuralNetClassifier`` argument (``module__*``,
        ``optimizer__*``, ``callbacks``, ``criterion``, ...).

    Returns
    -------
    net : SoftLabelNetClassifier
        Unfitted; clonable, picklable and usable in ``GridSearchCV``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_hcal import make_soft_label_net
    >>> from sklearn_hcal import SmallCNN, skorch_logits
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(40, 64).astype(np.float32)
    >>> Y = rng.multinomial(3, [0.5, 0.3, 0.2], size=40)  # 3 labels per image
    >>> net = make_soft_label_net(
    ...     SmallCNN, module__n_classes=3, max_epochs=2, random_state=0
    ... ).fit(X, Y)
    >>> net.predict_proba(X).shape
    (40, 3)
    >>> bool(np.allclose(net.predict_proba(X).sum(axis=1), 1, atol=1e-5))
    True
    >>> skorch_logits(net, X).shape
    (40, 3)
    """
    net_cls = SoftLabelNetClassifier
    optimizers = {
        "adam": torch.optim.Adam,
        "adamw": torch.optim.AdamW,
        "sgd": torch.optim.SGD,
    }
    if isinstance(optimizer, str):
        if optimizer.lower() not in optimizers:
            raise ValueError(
                f"optimizer must be one of {sorted(optimizers)} or a torch "
                f"optimizer class, got {optimizer!r}."
            )
        optimizer = optimizers[optimizer.lower()]
    if classes is None and n_classes is not None:
        if not isinstance(n_classes, numbers.Integral) or n_classes < 2:
            raise ValueError(f"n_classes must be an int >= 2, got {n_classes!r}.")
        classes = list(range(int(n_classes)))
    elif classes is not None:
        classes = list(classes)
        if n_classes is not None and len(classes) != n_classes:
            raise ValueError(
                f"classes has {len(classes)} entries but n_classes={n_classes}."
            )
    _seed_from(random_state)  # fail early on a bad seed
    return net_cls(
        module,
        classes=classes,
        max_epochs=max_epochs,
        lr=lr,
        batch_size=batch_size,
        optimizer=optimizer,
        train_split=train_split,
        device=str(resolve_device(device)),
        random_state=random_state,
        verbose=verbose,
        **skorch_kwargs,
    )
