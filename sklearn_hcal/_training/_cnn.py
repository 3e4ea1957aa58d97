"""The small CNN of the Mix-Digits examples (:class:`sklearn_hcal.SmallCNN`)."""

from __future__ import annotations

from ..utils._optional import import_optional

__all__ = ["SmallCNN"]

# Imported only when SmallCNN is used (the package faces resolve names
# lazily); without torch the error names the extra.
torch = import_optional("torch")
nn = torch.nn


class SmallCNN(nn.Module):
    """A two-convolution CNN for small single-channel images (8x8 digits).

    ``conv1`` (3x3, padding 1) -> ReLU -> ``conv2`` (3x3, padding 1) ->
    ReLU -> ``pool`` (2x2 max) -> ``flatten`` -> ``dropout`` -> ``fc``
    (linear, one logit per class). The output is **logits** (use it with
    ``CrossEntropyLoss``, the default of :func:`make_soft_label_net`).
    The penultimate representation is the input of ``fc``.

    Parameters
    ----------
    n_classes : int, default=10
        Number of outputs.
    channels : tuple of two ints, default=(16, 32)
        Output channels of the two convolutions.
    dropout : float, default=0.0
        Dropout probability before ``fc`` (> 0 enables MC dropout).
    image_shape : tuple of two ints, default=(8, 8)
        Height and width; flat inputs ``(n, h*w)`` are reshaped to
        ``(n, 1, h, w)``. Inputs of another size raise a ``ValueError``.
    """

    def __init__(
        self, n_classes=10, channels=(16, 32), dropout=0.0, image_shape=(8, 8)
    ):
        super().__init__()
        if int(n_classes) < 2:
            raise ValueError(f"n_classes must be >= 2, got {n_classes!r}.")
        if len(channels) != 2:
            raise ValueError(
                f"channels must hold two ints (one per conv), got {channels!r}."
            )
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}.")
        h, w = (int(s) for s in image_shape)
        self.image_shape = (h, w)
        self.conv1 = nn.Conv2d(1, int(channels[0]), kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(
            int(channels[0]), int(channels[1]), kernel_size=3, padding=1
        )
        self.pool = nn.MaxPool2d(2)
        self.flatten = nn.Flatten()
        self.dropout = nn.Dropout(float(dropout))
        self.fc = nn.Linear(int(channels[1]) * (h // 2) * (w // 2), int(n_classes))

    def forward(self, X):
        h, w = self.image_shape
        shape = tuple(X.shape)
        if X.dim() == 2 and shape[1] == h * w:
            X = X.reshape(X.shape[0], 1, h, w)
        elif X.dim() == 3:
            X = X.unsqueeze(1)
        if X.dim() != 4 or tuple(X.shape[1:]) != (1, h, w):
            # torch's own errors (a failed reshape, a matrix product or
            # channel mismatch) name neither the input nor image_shape
            raise ValueError(
                f"SmallCNN takes one-channel images of image_shape={(h, w)}: "
                f"X of shape (n, {h * w}), (n, {h}, {w}) or (n, 1, {h}, {w}); "
                f"got a batch of shape {shape}. Set module__image_shape to "
                "the image size."
            )
        X = torch.relu(self.conv1(X))
        X = torch.relu(self.conv2(X))
        X = self.flatten(self.pool(X))
        return self.fc(self.dropout(X))
