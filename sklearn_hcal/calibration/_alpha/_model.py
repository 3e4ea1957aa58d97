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
    "Float32Features",
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
#: Features below this many (the logit features, ``K + 1`` of them) keep all
#: their rows up to ``PRECONDITIONER_ROWS``: the covariance costs nothing at
#: that width and a subsample's noise only adds iterations (at N = 20,000,
#: K = 10 and 50 labels: 37 evaluations against 29, 0.65 against 0.53 s).
PRECONDITIONER_WIDE = 64


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
        """``log α0`` of ``h``; :class:`Float32Features` (the solver's first
        stage, :func:`~._lbfgs.fit_lbfgs`) are multiplied in float32."""
        layers = self.layers() if layers is None else layers
        for i, (W, b) in enumerate(layers):
            if isinstance(h, Float32Features):
                h = h.linear(W, b)
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


class Float32Features:
    """Standardised features ``H = (X - shift)·inv_scale`` read from float32 ``X``.

    The float32 stage of the linear model's L-BFGS and the preconditioner
    read ``X``: the caller's float32 features themselves when ``H`` was
    standardised from them (no copy at all), or a float32 copy of ``H``
    (:meth:`of`). ``z = H w + b`` is then the float32 product ``X (inv_scale·w)``
    less ``shift·(inv_scale·w)``: float32 rounding relative to
    ``(|shift| + scale)·|w|``, so the caller passes ``X`` only when
    ``|shift|`` is at most a few times the scale (:data:`MAX_SHIFT`).
    """

    #: Largest ``|shift|·inv_scale`` for which ``X`` is read as it is.
    MAX_SHIFT = 4.0

    def __init__(self, X, shift, inv_scale):
        self.X, self.shift, self.inv_scale = X, shift, inv_scale

    @classmethod
    def of(cls, H, device):
        """A float32 copy of ``H`` (numpy's conversion: twice torch's speed)."""
        X = torch.as_tensor(np.asarray(H, dtype=np.float32)).to(device)
        zeros = torch.zeros(H.shape[1], dtype=torch.float64, device=device)
        return cls(X, zeros, zeros + 1.0)

    @property
    def shape(self):
        return self.X.shape

    def linear(self, W, b):
        """``H Wᵀ + b`` for float64 ``W`` of shape ``(1, d)``, in float32."""
        v = W * self.inv_scale
        z = torch.nn.functional.linear(self.X, v.to(self.X.dtype)).to(W.dtype)
        return z - v @ self.shift + b


def preconditioner_rows(n, d) -> int:
    """Rows of ``n`` whose covariance makes the preconditioner (see above)."""
    if d < PRECONDITIONER_WIDE:
        return min(n, PRECONDITIONER_ROWS)
    share = int(PRECONDITIONER_SHARE * n)
    return max(min(max(share, PRECONDITIONER_MIN_ROWS), PRECONDITIONER_ROWS), 10 * d)


def preconditioner(H, sw, rng, *, curvature, l2_reg, device, H32=None):
    """``(L, m)``: Cholesky factor of the scaled covariance and the mean of ``H``.

    ``L Lᵀ = curvature·Cov_s(H) + 2·l2_reg·I`` (the Hessian of the linear
    model's loss if every item had the mean curvature) or, with
    ``curvature=None``, ``Cov_s(H)`` (unit-variance whitened inputs, the scale
    that Adam's step size and default initialisations assume). ``Cov_s`` and
    ``m`` are ``sw``-weighted, on a random subset of rows when ``H`` is large.
    ``H32`` (:class:`Float32Features` of ``H``), when the caller has it, is
    read instead of a float32 copy made here.
    """
    n, d = H.shape
    rows = preconditioner_rows(n, d)
    ws = torch.as_tensor(sw, dtype=torch.float64)
    idx = None
    if n > rows:
        idx = np.sort(rng.choice(n, rows, replace=False))
        ws = ws[torch.as_tensor(idx)]
    ws = ws / ws.sum()
    if H32 is None:
        H32 = Float32Features.of(H if idx is None else H[idx], device)
        idx = None
    # Everything below reads float32 features, as a preconditioner need not
    # be exact: the product is the costliest step (0.44 s in float64, 0.05 s
    # in float32 at 20,000 × 512 on one core). The covariance is the weighted
    # second moment less ``m mᵀ``, so that the float32 rows are read as they
    # are (not centred in a copy): their mean is at most a few times their
    # scale (:class:`Float32Features`) and the difference loses no more than
    # float32 resolution.
    Xs = (
        H32.X
        if idx is None
        else H32.X.index_select(0, torch.as_tensor(idx, device=device))
    )
    ws = ws.to(device)
    mean = (ws.to(torch.float32) @ Xs).double()
    uniform = bool(torch.all(ws == ws[0]))
    if not uniform:
        # weighted rows: scaled in place, in a copy when Xs is the caller's
        root = ws.sqrt().to(torch.float32)[:, None]
        Xs = Xs * root if Xs is H32.X else Xs.mul_(root)
    cov = _gram(Xs).double()
    del Xs
    if uniform:
        cov *= float(ws[0])
    cov -= torch.outer(mean, mean)
    # back to H = (X - shift)·inv_scale
    cov *= torch.outer(H32.inv_scale, H32.inv_scale)
    mean = (mean - H32.shift) * H32.inv_scale
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
