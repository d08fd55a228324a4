"""Pixel-domain multi-scale VIF-P (Sheikh & Bovik's ``vifp_mscale``, as ``sewar.full_ref.vifp``): NOT the VCR variant.

Offered for comparison with other toolkits; VCR's Δv uses the steerable-pyramid VIF of :mod:`.vif`.
"""

from __future__ import annotations

import numpy as np
import torch

from .inputs import _as_channels, _as_gray_batch, _default_chunk, _is_batch_broadcast, _resolve_device
from .vif import gain_and_noise

__all__ = ["vif_p"]

_VIFP_EPS = 1e-10


def _gaussian_taps(n: int) -> list[float]:
    """1-D factor of MATLAB ``fspecial('gaussian', n, n/5)`` as sewar builds it (for n <= 17 no tap falls below
    sewar's eps * max cut-off, so the 2-D window is exactly the outer product of these normalised taps)."""
    g = np.exp(-((np.arange(n) - n // 2) ** 2) / (2 * (n / 5) ** 2))
    return (g / g.sum()).tolist()


def _gaussian_valid(x: torch.Tensor, taps: list[float]) -> torch.Tensor:
    """'valid' separable Gaussian filtering of (..., H, W) by shifted weighted sums (no im2col buffers)."""
    n = len(taps)
    h, w = x.shape[-2:]
    rows = sum(t * x[..., i : i + h - n + 1, :] for i, t in enumerate(taps))
    return sum(t * rows[..., i : i + w - n + 1] for i, t in enumerate(taps))


def vif_p(
    ref,
    dist,
    *,
    sigma_nsq: float = 2.0,
    per_channel: bool = False,
    device=None,
    dtype: torch.dtype = torch.float64,
    data_range: float = 255.0,
    chunk_size: int | None = None,
):
    """Pixel-domain multi-scale VIF-P (Sheikh & Bovik's ``vifp_mscale``, as ``sewar.full_ref.vifp``). NOT VCR's VIF.

    Four scales with Gaussian windows of 17, 9, 5, 3 taps (σ = N/5), valid filtering, 2x subsampling between
    scales, σ_n² = 2 on the 0..255 scale, log10 sums over all pixels and scales, ``VIF-P = Σ num / Σ den``.
    By default it runs on the same gray image as :func:`vif`; ``per_channel=True`` scores each colour channel
    separately and averages (sewar's behaviour on RGB arrays). Inputs, batching, ``chunk_size`` and return type
    as :func:`vif` (images must be at least 41 px per side). Matches sewar to ~1e-13 in float64.
    """
    device = _resolve_device(device, ref, dist)
    if _is_batch_broadcast(ref):
        ref = ref[:1]
    if per_channel:
        x, single_x = _as_channels(ref, device, dtype, data_range, "ref")
        y, single_y = _as_channels(dist, device, dtype, data_range, "dist")
    else:
        x, single_x = _as_gray_batch(ref, device=device, dtype=dtype, data_range=data_range, name="ref")
        y, single_y = _as_gray_batch(dist, device=device, dtype=dtype, data_range=data_range, name="dist")
        x, y = x[:, None], y[:, None]
    if x.shape[-2:] != y.shape[-2:]:
        raise ValueError(f"size mismatch: reference {tuple(x.shape[-2:])}, distorted {tuple(y.shape[-2:])}")
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"channel mismatch: reference has {x.shape[1]}, distorted {y.shape[1]}")
    if x.shape[0] not in (1, y.shape[0]):
        raise ValueError(f"batch mismatch: {x.shape[0]} references for {y.shape[0]} distorted images")
    if min(x.shape[-2:]) < 41:
        raise ValueError(f"VIF-P needs images of at least 41x41 px, got {x.shape[-2]}x{x.shape[-1]}")
    n, c = y.shape[:2]
    x = x.expand(n, -1, -1, -1).reshape(n * c, *x.shape[-2:])
    y = y.reshape(n * c, *y.shape[-2:])
    step = max(1, int(chunk_size or _default_chunk(device, y.shape)))
    sums = [torch.stack(_vifp_sums(x[i : i + step], y[i : i + step], sigma_nsq)) for i in range(0, n * c, step)]
    num, den = torch.cat(sums, 1)
    value = (num / den).reshape(n, c).mean(1)
    if single_x and single_y:
        return float(value[0])
    return value


def _vifp_sums(x: torch.Tensor, y: torch.Tensor, sigma_nsq: float) -> tuple[torch.Tensor, torch.Tensor]:
    """VIF-P numerator and denominator sums of (N, H, W) image pairs (sewar ``vifp`` for one channel)."""
    num = torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)
    den = torch.zeros_like(num)
    for scale in range(4):
        taps = _gaussian_taps(2 ** (4 - scale) + 1)
        if scale:
            x = _gaussian_valid(x, taps)[..., ::2, ::2]
            y = _gaussian_valid(y, taps)[..., ::2, ::2]
        mu_x, mu_y = _gaussian_valid(x, taps), _gaussian_valid(y, taps)
        var_x = (_gaussian_valid(x * x, taps) - mu_x * mu_x).clamp_min(0)
        var_y = (_gaussian_valid(y * y, taps) - mu_y * mu_y).clamp_min(0)
        cov = _gaussian_valid(x * y, taps) - mu_x * mu_y
        small_x = var_x < _VIFP_EPS
        g, sv = gain_and_noise(cov, var_x, var_y, small_x, _VIFP_EPS)
        var_x = var_x.masked_fill(small_x, 0)
        num += torch.log10(1 + g * g * var_x / (sv + sigma_nsq)).sum((-2, -1))
        den += torch.log10(1 + var_x / sigma_nsq).sum((-2, -1))
    return num, den
