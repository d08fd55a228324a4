"""OpticsAugment (Müller et al., ICCVW 2023, Algorithm 1) as a batched ``torch.nn.Module``.

Per image of a batch: one kernel drawn uniformly from *all* kernels of the stack at a fixed severity (8 aberrations
for OpticsBench), a weight ``w ~ Beta(α, α)``, the output ``(1 − w)·x + w·K(x)``, then ImageNet normalisation
*after* mixing (the reference ``_aug_batch`` used in training; since normalisation is affine this equals mixing
normalised images, its ``forward``). The convolution is the reference's per-channel ``F.conv2d`` correlation
(:func:`.conv.psf_conv`), reflect padding as at HEAD (``padding="zero"`` for the v1.0 behaviour).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import torch

from .conv import normalize_padding, psf_conv

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _kernel_table(kernels, severity: int) -> torch.Tensor:
    """(M, 3, k, k) float32 from a stack id/path, a (M, S, 3, k, k) stack, an (M, 3, k, k) set or one (3, k, k)."""
    if isinstance(kernels, (str, os.PathLike)):
        from .corruptions import load_stack

        kernels = load_stack(str(kernels))[0]
    k = torch.as_tensor(np.asarray(kernels) if not isinstance(kernels, torch.Tensor) else kernels).detach()
    if k.ndim == 5:
        if not 1 <= severity <= k.shape[1]:
            raise ValueError(f"severity must be in 1..{k.shape[1]}, got {severity}")
        k = k[:, severity - 1]
    elif k.ndim == 3:
        k = k[None]
    if k.ndim != 4 or k.shape[1] != 3:
        raise ValueError(f"kernels must be (M, S, 3, k, k), (M, 3, k, k) or (3, k, k), got {tuple(k.shape)}")
    return k.to(torch.float32).contiguous()


def beta_weights(u: torch.Tensor, alpha: float) -> torch.Tensor:
    """``Beta(α, α)`` samples from uniforms ``u`` by the inverse CDF (exact, and seedable through ``u``).

    ``α = 1`` is ``u`` itself (uniform, the paper's setting); ``α = 0`` is the limit, ``w ∈ {0, 1}`` with
    probability ½ each.
    """
    if alpha < 0 or not np.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha}")
    if alpha == 1:
        return u
    if alpha == 0:
        return (u >= 0.5).to(u.dtype)
    from scipy.special import betaincinv

    w = betaincinv(alpha, alpha, u.detach().cpu().double().numpy())
    return torch.from_numpy(w).to(device=u.device, dtype=u.dtype)


class OpticsAugment(torch.nn.Module):
    """Blur each image of a batch with a random optical kernel and mix it with the clean image (Algorithm 1).

    Args:
        kernels: a stack id (``"opticsbench"``), a path (``.npz`` or published ``.pt``), or an array/tensor of
            shape (M, S, 3, k, k) (``severity`` selects S), (M, 3, k, k) or (3, k, k).
        severity: the fixed severity 1..5 (paper: 3).
        alpha: Beta(α, α) parameter of the mixing weight (paper: 1.0, i.e. uniform).
        p: probability that an image is augmented at all (the reference: 1.0).
        padding: ``"reflect"`` (reference HEAD) or ``"zero"`` (v1.0).
        normalize: ``(mean, std)`` applied after mixing (default ImageNet), or ``None`` for the [0, 1] output.
        generator: a ``torch.Generator`` for reproducible draws (its device is used for drawing); ``None`` uses the
            global torch RNG.
        method: convolution path, ``"auto"``, ``"fft"`` or ``"direct"``.

    ``forward(x)`` takes a (B, 3, H, W) float batch in [0, 1] (uint8 is scaled by 1/255) on any device and returns the
    augmented batch on that device; ``forward(x, return_params=True)`` also returns the kernel indices and weights.
    """

    def __init__(
        self,
        kernels: str | os.PathLike | np.ndarray | torch.Tensor = "opticsbench",
        severity: int = 3,
        alpha: float = 1.0,
        p: float = 1.0,
        *,
        padding: str = "reflect",
        normalize: tuple[Sequence[float], Sequence[float]] | None = (IMAGENET_MEAN, IMAGENET_STD),
        generator: torch.Generator | None = None,
        method: str = "auto",
    ) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be in [0, 1], got {p}")
        beta_weights(torch.zeros(1, dtype=torch.float64), float(alpha))  # validates alpha
        self.severity, self.alpha, self.p = int(severity), float(alpha), float(p)
        self.padding, self.method, self.generator = normalize_padding(padding), method, generator
        self.register_buffer("kernels", _kernel_table(kernels, self.severity))
        if normalize is not None:
            mean, std = (torch.as_tensor(v, dtype=torch.float32).reshape(1, -1, 1, 1) for v in normalize)
            self.register_buffer("mean", mean)
            self.register_buffer("std", std)
        else:
            self.mean = self.std = None

    def extra_repr(self) -> str:
        return (f"kernels={self.kernels.shape[0]}, severity={self.severity}, alpha={self.alpha}, p={self.p}, "
                f"padding={self.padding!r}, normalize={self.mean is not None}")  # fmt: skip

    def draw(self, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Kernel indices (B,) and mixing weights (B,) float64 for a batch (3 draws from the generator per call)."""
        g = self.generator
        dev = g.device if g is not None else torch.device("cpu")
        index = torch.randint(self.kernels.shape[0], (batch,), generator=g, device=dev)
        u = torch.rand(batch, generator=g, device=dev, dtype=torch.float64)
        keep = torch.rand(batch, generator=g, device=dev, dtype=torch.float64) < self.p
        return index, beta_weights(u, self.alpha) * keep

    def forward(self, x: torch.Tensor, return_params: bool = False):
        if x.ndim != 4 or x.shape[1] != 3:
            raise ValueError(f"OpticsAugment expects a (B, 3, H, W) batch, got {tuple(x.shape)}")
        if not x.is_floating_point():
            x = x.to(torch.float32) / 255
        index, weight = self.draw(x.shape[0])
        kernels = self.kernels[index.to(self.kernels.device)].to(device=x.device, dtype=x.dtype)
        blurred = psf_conv(x, kernels, padding=self.padding, method=self.method)
        w = weight.to(device=x.device, dtype=x.dtype).reshape(-1, 1, 1, 1)
        out = (1 - w) * x + w * blurred
        if self.mean is not None:
            out = (out - self.mean.to(x)) / self.std.to(x)
        if return_params:
            return out, {"kernel_index": index, "weight": weight}
        return out
