"""Batched per-channel PSF convolution in torch: a direct ``conv2d`` path and an FFT path with the same semantics.

Convention (the OpticsBench reference generator ``generate_datasets.py``): every colour channel is filtered with its
own kernel channel by ``F.conv2d``, which is a *cross-correlation* — the kernel is **not** flipped::

    out[b, c, i, j] = sum_{u, v} k[c, u, v] * x~[b, c, i + u - pt, j + v - pl],   pt = (kh - 1) // 2, pl = (kw - 1) // 2

(torch ``padding='same'``), where ``x~`` extends the image with zeros (``padding="zero"``, the paper-era v1.0
behaviour) or by reflection without repeating the edge pixel (``padding="reflect"`` = ``F.pad(mode="reflect")`` =
OpenCV ``BORDER_REFLECT_101``). A unit impulse therefore comes back as the kernel rotated by 180°; ``flip=True``
rotates the kernel first, i.e. gives the true convolution (the impulse comes back as the kernel, the PSF as imaged).

Both paths compute the same thing (to float rounding): ``direct`` is one grouped ``F.conv2d`` over the whole batch,
``fft`` multiplies ``rfft2`` spectra (zero padding is done by wrapping the kernel around the origin of a transform of
size ≥ H + kh//2, so no padded copy of the images is made). ``method="auto"`` picks by kernel size,
dtype and device type (never by batch size), so a batch and its single images take the same path.

Transforms: on the CPU ``scipy.fft`` (pocketfft, vectorised over the batch's planes; ~2.5× faster than ``torch.fft``'s
column transforms in float64 at 240×240 on 1 thread), on other devices ``torch.fft``. Both give the float64 result
to its last bits (~1e-16), which is below every rounding decision the corruptions make (their tie guard is 1e-6).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.fft
import torch
import torch.nn.functional as F

PADDINGS = ("zero", "reflect")
METHODS = ("auto", "direct", "fft")
_PADDING_ALIASES = {"zero": "zero", "zeros": "zero", "constant": "zero", "reflect": "reflect"}
# complex elements per FFT chunk (bounds the memory of one transform; results do not depend on it)
_CHUNK_ELEMENTS = 1 << 25


def normalize_padding(padding: str) -> str:
    """``"zero"`` (aliases ``"zeros"``, ``"constant"``) or ``"reflect"``; anything else raises ``ValueError``."""
    try:
        return _PADDING_ALIASES[str(padding).lower()]
    except KeyError:
        raise ValueError(f"unknown padding {padding!r}; use one of {', '.join(PADDINGS)}") from None


def fft_size(n: int) -> int:
    """The smallest 2^a·3^b·5^c ≥ ``n`` (a fast transform length)."""
    m = max(int(n), 1)
    while True:
        r = m
        for p in (2, 3, 5):
            while r % p == 0:
                r //= p
        if r == 1:
            return m
        m += 1


def choose_method(kh: int, kw: int, dtype: torch.dtype = torch.float32, device: str = "cpu") -> str:
    """The path ``method="auto"`` takes; depends on the kernel, dtype and device type only, never on the batch.

    CPU float32: the direct depthwise convolution up to 25×25 (oneDNN; measured as fast as or faster than the FFT at
    25×25 on 1-2 cores), FFT beyond. CPU float64: FFT beyond 3×3 (no fast direct float64 kernel). Other devices
    (CUDA): FFT from 11×11.
    """
    area = kh * kw
    if dtype == torch.float64:
        return "fft" if area > 9 else "direct"
    if str(device).startswith("cpu"):
        return "fft" if area > 625 else "direct"
    return "fft" if area >= 121 else "direct"


def _pads(kh: int, kw: int) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) as torch ``padding='same'`` (the extra pixel of an even kernel goes after)."""
    top, left = (kh - 1) // 2, (kw - 1) // 2
    return top, kh - 1 - top, left, kw - 1 - left


def rfft2(x: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:
    """``torch.fft.rfft2(x, s=shape)``; by ``scipy.fft`` on the CPU (torch's intra-op thread count as workers) unless
    ``x`` needs gradients."""
    if x.device.type != "cpu" or x.requires_grad:
        return torch.fft.rfft2(x, s=shape)
    return torch.from_numpy(scipy.fft.rfft2(x.numpy(), s=shape, workers=torch.get_num_threads()))


def irfft2(z: torch.Tensor, shape: tuple[int, int], *, overwrite: bool = False) -> torch.Tensor:
    """``torch.fft.irfft2(z, s=shape)``; by ``scipy.fft`` on the CPU unless ``z`` needs gradients (``overwrite``: ``z``
    may be used as scratch)."""
    if z.device.type != "cpu" or z.requires_grad:
        return torch.fft.irfft2(z, s=shape)
    out = scipy.fft.irfft2(z.resolve_conj().numpy(), s=shape, workers=torch.get_num_threads(), overwrite_x=overwrite)
    return torch.from_numpy(out)


def _as_tensor(a: Any, device: torch.device | None, dtype: torch.dtype | None = None) -> torch.Tensor:
    t = torch.from_numpy(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else torch.as_tensor(a)
    return t.to(device=device if device is not None else t.device, dtype=dtype if dtype is not None else t.dtype)


@dataclass(frozen=True)
class FFTGeometry:
    """Transform size and placement for FFT correlation of (H, W) images with (kh, kw) kernels."""

    height: int
    width: int
    kh: int
    kw: int
    padding: str

    @property
    def shape(self) -> tuple[int, int]:
        top, bottom, left, right = _pads(self.kh, self.kw)
        if self.padding == "zero":  # wrapped kernel: the zeros after the image serve as padding on both sides
            return fft_size(self.height + max(top, bottom)), fft_size(self.width + max(left, right))
        return fft_size(self.height + self.kh - 1), fft_size(self.width + self.kw - 1)

    def image_spectrum(self, x: torch.Tensor) -> torch.Tensor:
        """``rfft2`` of the (padded) images (B, C, H, W) — reusable for any kernels of this size."""
        if self.padding == "reflect":
            x = _reflect_pad(x, self.kh, self.kw)
        return rfft2(x, self.shape)

    def kernel_spectrum(self, k: torch.Tensor) -> torch.Tensor:
        """Conjugate spectrum of kernels (..., kh, kw) placed for correlation (no flip)."""
        n, m = self.shape
        top, _, left, _ = _pads(self.kh, self.kw)
        placed = F.pad(k, (0, m - self.kw, 0, n - self.kh))
        if self.padding == "zero":
            placed = torch.roll(placed, shifts=(-top, -left), dims=(-2, -1))
        return rfft2(placed, self.shape).conj_physical()

    def kernel_spectra(self, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(spectra, index) for (C, kh, kw) kernels shared by the batch (index ``None``) or (B, C, kh, kw) per image:
        each distinct kernel is transformed once and image ``i`` uses ``spectra[index[i]]``."""
        if k.ndim == 3:
            return self.kernel_spectrum(k), None
        uniq, inverse = torch.unique(k.reshape(k.shape[0], -1), dim=0, return_inverse=True)
        return self.kernel_spectrum(uniq.reshape(-1, *k.shape[1:])), inverse.tolist()

    def correlate(
        self, spectrum: torch.Tensor, spectra: torch.Tensor | Sequence[torch.Tensor], index: list[int] | None = None
    ) -> torch.Tensor:
        """Images (B, C, H, W) from their spectrum and :meth:`kernel_spectra` (no gathered copy of the spectra): image
        ``i`` uses ``spectra[index[i]]``, or all of ``spectra`` (broadcast) when ``index`` is ``None``."""
        if index is None:
            product = spectrum * spectra
        else:
            product = torch.empty_like(spectrum)
            for i, j in enumerate(index):
                torch.mul(spectrum[i], spectra[j], out=product[i])
        y = irfft2(product, self.shape, overwrite=True)
        return y[..., : self.height, : self.width]


def _reflect_pad(x: torch.Tensor, kh: int, kw: int) -> torch.Tensor:
    top, bottom, left, right = _pads(kh, kw)
    h, w = x.shape[-2:]
    if max(top, bottom) >= h or max(left, right) >= w:
        raise ValueError(f"reflect padding needs images larger than half the kernel: {h}x{w} with a {kh}x{kw} kernel")
    return F.pad(x, (left, right, top, bottom), mode="reflect")


def _check(images: torch.Tensor, kernels: torch.Tensor) -> None:
    if images.ndim != 4:
        raise ValueError(f"images must be (B, C, H, W), got shape {tuple(images.shape)}")
    if not images.is_floating_point():
        raise ValueError(f"images must be floating point, got {images.dtype}")
    b, c = images.shape[:2]
    if kernels.ndim == 3:
        ok = kernels.shape[0] == c
    elif kernels.ndim == 4:
        ok = kernels.shape[:2] == (b, c)
    else:
        ok = False
    if not ok:
        raise ValueError(f"kernels must be (C, kh, kw) or (B, C, kh, kw) for images {tuple(images.shape)}, "
                         f"got {tuple(kernels.shape)}")  # fmt: skip


def _direct(x: torch.Tensor, k: torch.Tensor, padding: str) -> torch.Tensor:
    b, c, h, w = x.shape
    kh, kw = k.shape[-2:]
    top, bottom, left, right = _pads(kh, kw)
    xp = _reflect_pad(x, kh, kw) if padding == "reflect" else F.pad(x, (left, right, top, bottom))
    # every (image, channel) plane is a channel of ONE depthwise convolution of a batch of 1 (oneDNN runs this layout
    # about 3x faster than a batch of B with groups=C, and it takes one kernel per image as it is)
    weight = k.repeat(b, 1, 1) if k.ndim == 3 else k.reshape(b * c, kh, kw)
    y = F.conv2d(xp.reshape(1, b * c, *xp.shape[-2:]), weight.reshape(b * c, 1, kh, kw), groups=b * c)
    return y.reshape(b, c, h, w)


def _fft(x: torch.Tensor, k: torch.Tensor, padding: str) -> torch.Tensor:
    b, c, h, w = x.shape
    geo = FFTGeometry(h, w, k.shape[-2], k.shape[-1], padding)
    n, m = geo.shape
    step = max(1, _CHUNK_ELEMENTS // (c * n * (m // 2 + 1)))
    if b <= step:
        return geo.correlate(geo.image_spectrum(x), *geo.kernel_spectra(k))
    out = torch.empty_like(x)
    shared = geo.kernel_spectra(k) if k.ndim == 3 else None
    for s in range(0, b, step):
        spectra = shared if shared is not None else geo.kernel_spectra(k[s : s + step])
        out[s : s + step] = geo.correlate(geo.image_spectrum(x[s : s + step]), *spectra)
    return out


def psf_conv(
    images: torch.Tensor | np.ndarray,
    kernels: torch.Tensor | np.ndarray,
    *,
    padding: str = "zero",
    method: str = "auto",
    flip: bool = False,
    device: str | torch.device | None = None,
) -> torch.Tensor:
    """Filter each channel of a batch with its PSF kernel channel (the reference's ``F.conv2d`` convention).

    Args:
        images: (B, C, H, W) float tensor (or array); float32 or float64.
        kernels: (C, kh, kw) shared by the batch, or (B, C, kh, kw) one per image.
        padding: ``"zero"`` (the paper-era generator) or ``"reflect"`` (reflect-101).
        method: ``"direct"`` (grouped ``conv2d``), ``"fft"`` (``rfft2``) or ``"auto"`` (:func:`choose_method`).
        flip: rotate kernels by 180° first (true convolution); the reference does not.
        device: where to compute (default: the images' device); the result stays there.

    Returns:
        (B, C, H, W) tensor of the images' dtype on ``device``.
    """
    dev = torch.device(device) if device is not None else None
    x = _as_tensor(images, dev)
    k = _as_tensor(kernels, x.device, x.dtype)
    _check(x, k)
    padding = normalize_padding(padding)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    if flip:
        k = k.flip(-2, -1)
    if method == "auto":
        method = choose_method(k.shape[-2], k.shape[-1], x.dtype, x.device.type)
    return (_fft if method == "fft" else _direct)(x, k.contiguous(), padding)
