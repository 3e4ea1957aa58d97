"""The concentration model of α-calibration and its whitened parametrisation.

``log α0 = MLP(h)`` as a torch module whose first layer is trained in
whitened coordinates (see :mod:`._solvers` for why), the Cholesky
preconditioner of the feature covariance, and the mean curvature of the
Dirichlet-multinomial NLL that scales it. This module imports torch: the
solvers (:mod:`._solvers`) import it only when they fit, so importing the
estimator imports no torch.
"""

from __future__ import annotations

import numpy as np

from ...utils._optional import import_optional

__all__ = [
    "PRECONDITIONER_ROWS",
    "ConcentrationNet",
    "fits_on_device",
    "mean_curvature",
    "preconditioner",
    "preconditioner_rows",
]

torch = import_optional("torch")

#: Rows used for the covariance of the preconditioner: ``PRECONDITIONER_SHARE``
#: of the items, clipped to [``PRECONDITIONER_MIN_ROWS``,
#: ``PRECONDITIONER_ROWS``], and at least ten per feature (the whitened
#: Hessian then stays within a factor ~2 of the identity in every
#: direction); never more than the data. The covariance costs ``rows·d²``
#: and an evaluation of the loss about ``N·d``: at N = 20,000 and d = 512,
#: 8,000 rows cost one to three more L-BFGS evaluations than 20,000 and save
#: 0.03 s of the product; small problems keep all their rows (the product
#: costs nothing there, and the subsample's noise would only add iterations).
PRECONDITIONER_ROWS = 20_000
PRECONDITIONER_MIN_ROWS = 8_000
PRECONDITIONER_SHARE = 0.4


class ConcentrationNet(torch.nn.Module):
    """The MLP ``log α0 = MLP(h)`` with its first layer in whitened coordinates.

    The trainable first-layer weight ``B`` and bias ``c`` act on whitened,
    centred features: the layer computes ``(h - m) (B L⁻¹)ᵀ + c·bias_scale``,
    i.e. weight ``W = B L⁻¹`` and bias ``c·bias_scale - W m`` on ``h``
    (:meth:`layers`). ``chol=None`` is the plain parametrisation.
    """

    def __init__(self, n_in, hidden, dtype, chol=None, center=None, bias_scale=1.0):
        super().__init__()
        widths = (n_in,) + hidden
        self.linears = torch.nn.ModuleList(
            torch.nn.Linear(a, b, dtype=dtype) for a, b in zip(widths, hidden + (1,))
        )
        # Zero output layer: α0 = 1 at initialisation whatever the hidden
        # layers, the starting point of the reference implementation.
        torch.nn.init.zeros_(self.linears[-1].weight)
        torch.nn.init.zeros_(self.linears[-1].bias)
        self.register_buffer("chol", chol)
        self.register_buffer("center", center)
        self.bias_scale = bias_scale

    def layers(self):
        """``(weight, bias)`` of every layer in feature coordinates."""
        first = self.linears[0]
        W, b = first.weight, first.bias
        if self.chol is not None:
            # X L = B  <=>  X = B L⁻¹ (a triangular solve, d² per row of B)
            W = torch.linalg.solve_triangular(self.chol, W, upper=False, left=False)
            b = b * self.bias_scale - W @ self.center
        return [(W, b)] + [(m.weight, m.bias) for m in self.linears[1:]]

    def forward(self, h, layers=None):
        """``log α0`` of ``h``; float32 ``h`` (the solver's first stage) is
        multiplied in float32 and the layer's output cast back (see
        :func:`~._lbfgs.fit_lbfgs`)."""
        layers = self.layers() if layers is None else layers
        for i, (W, b) in enumerate(layers):
            if h.dtype != W.dtype:
                h = torch.nn.functional.linear(h, W.to(h.dtype)).to(W.dtype) + b
            else:
                h = torch.nn.functional.linear(h, W, b)
            if i < len(layers) - 1:
                h = torch.relu(h)
        return h[:, 0]


def fits_on_device(nbytes, device) -> bool:
    """Whether ``nbytes`` of float64 data fit in 70% of a CUDA device's free
    memory (the CPU fit shares the caller's arrays: always True)."""
    if device.type != "cuda":
        return True
    free, _ = torch.cuda.mem_get_info(device)
    return nbytes <= 0.7 * free


def preconditioner_rows(n, d) -> int:
    """Rows of ``n`` whose covariance makes the preconditioner (see above)."""
    share = int(PRECONDITIONER_SHARE * n)
    return max(min(max(share, PRECONDITIONER_MIN_ROWS), PRECONDITIONER_ROWS), 10 * d)


def preconditioner(H, sw, rng, *, curvature, l2_reg, device, H32=None):
    """``(L, m)``: Cholesky factor of the scaled covariance and the mean of ``H``.

    ``L Lᵀ = curvature·Cov_s(H) + 2·l2_reg·I`` (the Hessian of the linear
    model's loss if every item had the mean curvature) or, with
    ``curvature=None``, ``Cov_s(H)`` (unit-variance whitened inputs, the scale
    that Adam's step size and default initialisations assume). ``Cov_s`` and
    ``m`` are ``sw``-weighted, on a random subset of rows when ``H`` is large.
    ``H32``, ``H`` in float32 on ``device`` when the caller has it, is read
    instead of making that copy here.
    """
    n, d = H.shape
    rows = preconditioner_rows(n, d)
    ws = torch.as_tensor(sw, dtype=torch.float64)
    idx = None
    if n > rows:
        idx = np.sort(rng.choice(n, rows, replace=False))
        ws = ws[torch.as_tensor(idx)]
    ws = ws / ws.sum()
    # Everything below reads float32 features, as a preconditioner need not
    # be exact: the product is the costliest step (0.44 s in float64, 0.05 s
    # in float32 at 20,000 × 512 on one core). The covariance is the weighted
    # second moment less ``m mᵀ``, so that the float32 rows are read as they
    # are (not centred in a copy): the features are standardised, ``|m|`` is
    # of the order of their scale at most and the difference loses no more
    # than float32 resolution.
    if H32 is None:  # numpy's conversion: twice as fast as torch's here
        rows_of_H = H if idx is None else H[idx]
        Hs = torch.as_tensor(np.asarray(rows_of_H, dtype=np.float32)).to(device)
    elif idx is not None:
        Hs = H32.index_select(0, torch.as_tensor(idx, device=device))
    else:
        Hs = H32
    ws = ws.to(device)
    mean = (ws.to(torch.float32) @ Hs).double()
    uniform = bool(torch.all(ws == ws[0]))
    if not uniform:
        # weighted rows: scaled in place, in a copy when Hs is the caller's
        root = ws.sqrt().to(torch.float32)[:, None]
        Hs = Hs * root if Hs is H32 else Hs.mul_(root)
    cov = _gram(Hs).double()
    del Hs
    if uniform:
        cov *= float(ws[0])
    cov -= torch.outer(mean, mean)
    A = cov
    if curvature is not None:
        A *= curvature
        A.diagonal().add_(2.0 * l2_reg)
    # A relative jitter at float32 resolution keeps constant or duplicated
    # features (a singular covariance) factorisable; such directions hardly
    # move the loss.
    jitter = 1e-6 * max(float(A.diagonal().mean()), 1e-300)
    for _ in range(8):
        L, info = torch.linalg.cholesky_ex(
            A + jitter * torch.eye(d, dtype=A.dtype, device=device)
        )
        if int(info) == 0:
            return L, mean
        jitter *= 100.0
    raise ValueError("The covariance of the features could not be factorised.")


#: Columns per block of the Gram matrix (:func:`_gram`).
_GRAM_BLOCK = 64


def _gram(X):
    """``XᵀX``, block row by block row of its upper triangle, mirrored.

    BLAS's product does not know that ``XᵀX`` is symmetric; the blocks right
    of the diagonal are ``(k + 1)/(2k)`` of the work with ``k`` blocks
    (9/16 at 512 columns: 15 against 25 ms on 8,000 rows on one core, where
    ``ssyrk`` through scipy took 150 ms).
    """
    d = X.shape[1]
    if d < 2 * _GRAM_BLOCK:
        return X.T @ X
    C = X.new_empty((d, d))
    for i in range(0, d, _GRAM_BLOCK):
        C[i : i + _GRAM_BLOCK, i:] = X[:, i : i + _GRAM_BLOCK].T @ X[:, i:]
    upper = C.triu()
    return upper + upper.triu(1).T


def mean_curvature(nll, data):
    """Mean over items of ``u_i·d²NLL_i/d(log α0_i)²`` at α0 = 1.

    Each item's NLL depends on its own ``log α0`` only, so the second
    derivatives are the gradient of the summed first derivatives (one double
    backward pass instead of a Hessian).
    """
    w, _, *lik = data
    eta = torch.zeros(w.shape[0], dtype=w.dtype, device=w.device, requires_grad=True)
    (g,) = torch.autograd.grad((w * nll(eta, *lik)).sum(), eta, create_graph=True)
    (d2,) = torch.autograd.grad(g.sum(), eta)
    return float(d2.mean())
