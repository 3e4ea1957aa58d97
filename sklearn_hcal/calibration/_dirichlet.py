"""Dirichlet-multinomial likelihood and the α-calibration objective (PyTorch).

All functions take and return ``torch`` tensors and are differentiable; torch is
imported lazily, so importing this module does not import torch.

References
----------
Mimori, Sasada, Matsui and Sato (2021), *Diagnostic Uncertainty Calibration:
Towards Reliable Machine Predictions in Medical Domain*, AISTATS, App. D.2
(eq. 50–51).
"""

from __future__ import annotations

import numpy as np

from ..utils._optional import import_optional

__all__ = [
    "NORMALIZATIONS",
    "dirichlet_multinomial_log_likelihood",
    "dirichlet_multinomial_nll_log_alpha0",
    "alpha_calibration_objective",
    "objective_weights",
    "histogram_slots",
    "dirichlet_multinomial_nll_slots",
]

#: Normalisations of the data term of the α-calibration loss, see
#: :func:`objective_weights`.
NORMALIZATIONS = ("reference", "eq50")

#: Floor on the Dirichlet parameters ``α0·f_k``: a class with ``f_k`` rounding
#: to 0 would make ``lgamma`` infinite; 1e-30 keeps the log-likelihood finite
#: (a huge penalty when that class was observed) in float32 and float64.
ALPHA_FLOOR = 1e-30


def dirichlet_multinomial_log_likelihood(alpha, counts, *, coefficient=True):
    r"""Log-pmf of the Dirichlet-multinomial distribution, row by row.

    .. math::

        \log \mathrm{DM}(y \mid \alpha) = \log\frac{n!}{\prod_k y_k!}
        + \log\Gamma(\alpha_0) - \log\Gamma(\alpha_0 + n)
        + \sum_k \left[\log\Gamma(\alpha_k + y_k) - \log\Gamma(\alpha_k)\right],

    with :math:`\alpha_0 = \sum_k \alpha_k` and :math:`n = \sum_k y_k`
    (Mimori et al. 2021, eq. 50).

    Parameters
    ----------
    alpha : torch.Tensor of shape (n_samples, n_classes)
        Positive Dirichlet parameters (floored at ``1e-30``).
    counts : torch.Tensor of shape (n_samples, n_classes)
        Label histograms (non-negative counts, float dtype).
    coefficient : bool, default=True
        Include the multinomial coefficient ``log n! - Σ log y_k!``; it does not
        depend on ``alpha`` and can be dropped in an objective.

    Returns
    -------
    log_likelihood : torch.Tensor of shape (n_samples,)

    Examples
    --------
    >>> import torch
    >>> alpha = torch.tensor([[1.0, 1.0]], dtype=torch.float64)
    >>> y = torch.tensor([[1.0, 1.0]], dtype=torch.float64)
    >>> # Dir(1, 1) is uniform: P(one of each in two draws) = 1/3.
    >>> float(dirichlet_multinomial_log_likelihood(alpha, y).exp()[0])
    0.333...
    """
    torch = import_optional("torch")
    alpha = torch.clamp(alpha, min=ALPHA_FLOOR)
    alpha0 = alpha.sum(dim=-1)
    n = counts.sum(dim=-1)
    ll = (
        torch.lgamma(alpha0)
        - torch.lgamma(alpha0 + n)
        + (torch.lgamma(alpha + counts) - torch.lgamma(alpha)).sum(dim=-1)
    )
    if coefficient:
        ll = ll + torch.lgamma(n + 1) - torch.lgamma(counts + 1).sum(dim=-1)
    return ll


def dirichlet_multinomial_nll_log_alpha0(log_alpha0, proba, counts):
    r"""Per-item NLL of ``counts`` under ``DM(α0·f)`` as a function of ``log α0``.

    The multinomial coefficient is omitted (it does not depend on ``α0``).
    For an item with a single annotation the value is ``-log f_y`` whatever
    ``α0`` is: one label carries no information about the concentration.

    Parameters
    ----------
    log_alpha0 : torch.Tensor of shape (n_samples,)
        Log concentrations.
    proba : torch.Tensor of shape (n_samples, n_classes)
        The mean of the Dirichlet, ``f(x)``.
    counts : torch.Tensor of shape (n_samples, n_classes)
        Label histograms.

    Returns
    -------
    nll : torch.Tensor of shape (n_samples,)

    Examples
    --------
    >>> import torch
    >>> f = torch.tensor([[0.3, 0.7]], dtype=torch.float64)
    >>> y = torch.tensor([[0.0, 1.0]], dtype=torch.float64)
    >>> la = torch.tensor([-2.0, 3.0], dtype=torch.float64)
    >>> nll = dirichlet_multinomial_nll_log_alpha0(la, f.expand(2, 2), y.expand(2, 2))
    >>> [round(float(v), 6) for v in nll]  # -log 0.7 for both
    [0.356675, 0.356675]
    """
    torch = import_optional("torch")
    alpha = torch.exp(log_alpha0)[:, None] * proba
    return -dirichlet_multinomial_log_likelihood(alpha, counts, coefficient=False)


def objective_weights(n_labels, sample_weight=None, normalization="reference"):
    r"""Per-item weights of the α-calibration loss for a normalisation.

    The loss is written ``J = mean_i(u_i·NLL_i) + alpha_reg·mean_i(v_i·(log
    α0_i)²)`` (plus any penalty on the weights of the model), with

    * ``normalization="reference"``: :math:`u_i = s_i n_i / \bar n_s`, the
      reference implementation of Mimori et al. (``lh_calib``: Keras sample
      weights ``n_i / mean(n)``, averaged over the items of a batch, plus
      ``log_alpha0_l2·mean (log α0)²``);
    * ``normalization="eq50"``: :math:`u_i = s_i / \bar n_s`, Mimori et al.'s
      eq. 50 as printed: the summed NLL divided by :math:`\sum_i n_i` (per
      annotation), plus :math:`\frac{\lambda_\alpha}{N}\sum_i(\log
      \alpha_{0,i})^2`;

    and :math:`v_i = s_i` in both, where ``s`` are the item weights scaled to
    mean 1 and :math:`\bar n_s` is the ``s``-weighted mean of ``n`` (so integer
    weights equal repeated items). The two differ by a factor ``n_i`` on each
    item's NLL: with a common ``n`` the reference loss at ``alpha_reg = λ`` is
    exactly ``n`` times the eq. 50 loss at ``alpha_reg = λ / n`` (same
    minimiser); with unequal ``n`` the reference weighting gives an item's
    labels a weight proportional to ``n_i``, eq. 50 the same weight to every
    label.

    **Which one the paper's tables use.** The reference normalisation. Its
    tables come from ``lh_calib`` (``scripts/calibrate.py`` through
    ``make/lh_mixed_calib.mk``: ``--log-alpha0-l2 0.005 -a0ar``), whose
    calibration batches carry Keras sample weights ``n_i / mean(n)``
    (``LHGenerator(use_weight=True, weight_norm_mode="mean")``; Keras 2
    averages ``w_i·loss_i`` over the batch) on the per-item DM NLL, plus
    ``0.005·mean (log α0)²`` added to the loss in training and validation.
    The text (App. D.2, E.4) says eq. 50 was used with λα = 0.005; on
    Mix-MNIST and Mix-CIFAR-10 every calibration item has the same ``n``
    (2 or 5 labels), so the runs equal eq. 50 up to the factor ``n`` but
    with λα = 0.005 / n (0.0025 and 0.001), not 0.005. On MDS (5.67 labels
    per item on average, varying) the two differ by more than a scale.

    Parameters
    ----------
    n_labels : ndarray of shape (n_samples,)
        Number of labels ``n_i`` of each item.
    sample_weight : ndarray of shape (n_samples,), default=None
        Item weights ``s`` (any positive scale; None means all ones).
    normalization : {"reference", "eq50"}, default="reference"

    Returns
    -------
    nll_weights, penalty_weights : ndarray of shape (n_samples,)
        ``u`` and ``v``.

    Examples
    --------
    >>> import numpy as np
    >>> n = np.array([2.0, 2.0, 5.0, 3.0])
    >>> u, v = objective_weights(n, normalization="eq50")
    >>> bool(np.isclose(np.mean(u), 1 / n.mean()))  # Σ NLL_i / Σ n_i
    True
    >>> objective_weights(n)[0]  # n_i / mean(n)
    array([0.66666667, 0.66666667, 1.66666667, 1.        ])
    """
    if normalization not in NORMALIZATIONS:
        raise ValueError(
            f"normalization must be one of {NORMALIZATIONS}, got {normalization!r}."
        )
    n = np.asarray(n_labels, dtype=np.float64)
    if sample_weight is None:
        sw = np.ones_like(n)
    else:
        sw = np.asarray(sample_weight, dtype=np.float64)
        sw = sw / sw.mean()
    mean_n = np.average(n, weights=sw)
    if normalization == "reference":
        return sw * n / mean_n, sw
    return sw / mean_n, sw


def alpha_calibration_objective(
    log_alpha0,
    proba,
    counts,
    *,
    alpha_reg=0.0,
    weights=None,
    normalization="reference",
):
    r"""The α-calibration loss: weighted mean DM NLL plus the log-α0 penalty.

    .. math::

        J = \frac{1}{N}\sum_i u_i\,\mathrm{NLL}_i(\alpha_{0,i})
            + \frac{\lambda_\alpha}{N}\sum_i (\log\alpha_{0,i})^2,

    with :math:`u_i = n_i / \bar n` (``normalization="reference"``: Mimori et
    al.'s reference implementation, sample weights ``n_i`` divided by their
    mean, Keras averaging the weighted per-item losses) or :math:`u_i = 1 /
    \bar n` (``"eq50"``: the paper's eq. 50, :math:`-\frac{1}{\sum_i n_i}
    \sum_i \log\mathrm{DirMult}_i`). For a common ``n`` the reference loss
    is ``n`` times eq. 50 with :math:`\lambda_\alpha^{\text{eq50}} =
    \lambda_\alpha / n`. See :func:`objective_weights`.

    Parameters
    ----------
    log_alpha0 : torch.Tensor of shape (n_samples,)
    proba : torch.Tensor of shape (n_samples, n_classes)
    counts : torch.Tensor of shape (n_samples, n_classes)
    alpha_reg : float, default=0.0
        :math:`\lambda_\alpha`.
    weights : torch.Tensor of shape (n_samples,), default=None
        ``u_i``; None means the ``normalization``'s weights.
    normalization : {"reference", "eq50"}, default="reference"

    Returns
    -------
    loss : torch.Tensor, scalar

    Examples
    --------
    >>> import torch
    >>> f = torch.full((3, 2), 0.5, dtype=torch.float64)
    >>> y = torch.tensor([[2.0, 0.0], [1.0, 1.0], [0.0, 2.0]], dtype=torch.float64)
    >>> la = torch.zeros(3, dtype=torch.float64)
    >>> loss = alpha_calibration_objective(la, f, y, alpha_reg=0.005)
    >>> # Dir(1/2, 1/2): P(AA) = 3/8, P(AB) = 1/8 for an ordered pair of labels
    >>> round(float(loss), 6)  # -(1/3)[2 log(3/8) + log(1/8)]
    1.347033
    >>> eq50 = alpha_calibration_objective(la, f, y, normalization="eq50")
    >>> round(float(eq50), 6)  # the same NLL per annotation (n = 2)
    0.673517
    """
    nll = dirichlet_multinomial_nll_log_alpha0(log_alpha0, proba, counts)
    if weights is None:
        u, _ = objective_weights(
            counts.sum(dim=-1).detach().cpu().numpy(), normalization=normalization
        )
        weights = log_alpha0.new_tensor(u)
    loss = (weights * nll).mean()
    if alpha_reg:
        loss = loss + alpha_reg * (log_alpha0**2).mean()
    return loss


def histogram_slots(counts, proba):
    r"""Per-label ("slot") layout of histograms for a fast DM likelihood.

    With integer counts, :math:`\Gamma(a + y)/\Gamma(a) = \prod_{l<y}(a + l)`
    (the recurrence behind Mimori et al.'s eq. 51), so the log-likelihood of
    item ``i`` without its multinomial coefficient is a sum over its ``n_i``
    labels ``j``, sorted by class, of
    :math:`\log(\alpha_0 f_{k_j} + l_j) - \log(\alpha_0 + j)`, where
    :math:`l_j` counts the earlier labels of the same class. This needs one
    ``log`` per label instead of ``2K + 2`` ``lgamma`` per item, which is much
    faster whenever ``n_i`` is moderate.

    Parameters
    ----------
    counts : ndarray of shape (n_samples, n_classes)
        Integer label counts.
    proba : ndarray of shape (n_samples, n_classes)
        ``f(x)``.

    Returns
    -------
    f_slot, within, position : ndarray of shape (n_samples, max_n)
        ``f_{k_j}``, ``l_j`` and ``j`` per label; padding entries are
        ``(1, 0, 0)``, whose term ``log(α0) - log(α0)`` is exactly zero.

    Examples
    --------
    >>> import numpy as np
    >>> fs, within, pos = histogram_slots(np.array([[2, 1]]), np.array([[.2, .8]]))
    >>> fs, within, pos
    (array([[0.2, 0.2, 0.8]]), array([[0., 1., 0.]]), array([[0., 1., 2.]]))
    """
    counts = np.asarray(counts).astype(np.int64)
    proba = np.asarray(proba, dtype=np.float64)
    n_samples, n_classes = counts.shape
    n = counts.sum(axis=1)
    width = max(int(n.max()), 1)
    flat = counts.ravel()
    total = int(flat.sum())
    entry = np.repeat(np.arange(flat.size), flat)
    item, cls = np.divmod(entry, n_classes)
    run_start = np.repeat(np.cumsum(flat) - flat, flat)
    within_flat = np.arange(total) - run_start
    item_start = np.repeat(np.cumsum(n) - n, n)
    pos_flat = np.arange(total) - item_start
    f_slot = np.ones((n_samples, width))
    within = np.zeros((n_samples, width))
    position = np.zeros((n_samples, width))
    f_slot[item, pos_flat] = proba[item, cls]
    within[item, pos_flat] = within_flat
    position[item, pos_flat] = pos_flat
    return f_slot, within, position


def dirichlet_multinomial_nll_slots(log_alpha0, f_slot, within, position):
    """Per-item DM NLL (no multinomial coefficient) from :func:`histogram_slots`.

    Equals :func:`dirichlet_multinomial_nll_log_alpha0` for integer counts.

    Parameters
    ----------
    log_alpha0 : torch.Tensor of shape (n_samples,)
    f_slot, within, position : torch.Tensor of shape (n_samples, max_n)

    Returns
    -------
    nll : torch.Tensor of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np, torch
    >>> Y, F = np.array([[2, 1]]), np.array([[.2, .8]])
    >>> slots = [torch.as_tensor(a) for a in histogram_slots(Y, F)]
    >>> la = torch.tensor([0.5], dtype=torch.float64)
    >>> a = dirichlet_multinomial_nll_slots(la, *slots)
    >>> Yt = torch.as_tensor(Y, dtype=torch.float64)
    >>> b = dirichlet_multinomial_nll_log_alpha0(la, torch.as_tensor(F), Yt)
    >>> bool(torch.allclose(a, b))
    True
    """
    torch = import_optional("torch")
    a0 = torch.exp(log_alpha0)[:, None]
    num = torch.clamp(a0 * f_slot, min=ALPHA_FLOOR) + within
    return -(torch.log(num) - torch.log(a0 + position)).sum(dim=1)
