"""Input handling shared by :func:`~corruptgen.quality.vif` and :func:`~corruptgen.quality.vif_p`: NumPy or torch
images and batches (channels last / first, uint8 or float) → gray or per-channel tensors on the 0..255 scale."""

from __future__ import annotations

import warnings

import numpy as np
import torch

from .steerable import MIN_SIZE

# OpenCV 5 RGB2GRAY for 8-bit data: 15-bit fixed point, round half up (exact on all 2**24 colours). OpenCV 4.x
# used 14-bit weights (4899, 9617, 1868), which differ by ±1 on ~0.3 % of colours.
_GRAY_WEIGHTS = (9798, 19235, 3735)
_GRAY_SHIFT = 15
_LUMA = (0.299, 0.587, 0.114)


def to_gray(image):
    """Grayscale as VCR computes it: ``cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)``.

    uint8 RGB gives the bit-exact OpenCV uint8 gray (``(9798 R + 19235 G + 3735 B + 2**14) >> 15``); floating-point
    RGB gives the unrounded luma ``0.299 R + 0.587 G + 0.114 B`` in the input's own scale. Single-channel input is
    returned unchanged (a trailing/leading channel axis of size 1 is dropped).

    Accepts NumPy ``(H, W)``, ``(H, W, C)``, ``(N, H, W, C)`` (channels last) or torch ``(H, W)``, ``(N, H, W)``,
    ``(N, C, H, W)`` (channels first) and returns the same container type without the channel axis.
    """
    if isinstance(image, np.ndarray):
        if image.ndim in (3, 4) and image.shape[-1] in (1, 3):
            return _gray(_from_numpy(image), -1).numpy()
        if image.ndim in (2, 3):
            return image
        raise ValueError(f"expected (H, W), (H, W, C) or (N, H, W, C) with C in (1, 3), got {image.shape}")
    if isinstance(image, torch.Tensor):
        if image.dim() == 4:
            return _gray(image, 1)
        if image.dim() in (2, 3):
            return image
        raise ValueError(f"expected (H, W), (N, H, W) or (N, C, H, W), got {tuple(image.shape)}")
    raise TypeError(f"expected a NumPy array or torch tensor, got {type(image).__name__}")


def _from_numpy(arr: np.ndarray) -> torch.Tensor:
    """Zero-copy view (inputs are only read, so read-only arrays are fine); copies only negative-stride views."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        try:
            return torch.from_numpy(arr)
        except ValueError:  # negative strides (flipped views)
            return torch.from_numpy(np.ascontiguousarray(arr))


def _gray(t: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Drops the colour axis ``dim`` (size 1 or 3) of ``t``; result in ``dtype`` (default: uint8 stays uint8).

    uint8 RGB follows OpenCV's fixed-point formula exactly; in float32/float64 the integer arithmetic is exact
    (every intermediate is an integer below 2**24).
    """
    c = t.shape[dim]
    if c == 1:
        gray = t.squeeze(dim)
        return gray if dtype is None else gray.to(dtype)
    if c != 3:
        raise ValueError(f"expected 1 (gray) or 3 (RGB) channels, got {c}")
    half, one = 1 << (_GRAY_SHIFT - 1), 1 << _GRAY_SHIFT
    if t.dtype == torch.uint8 and dtype is None:
        r, g, b = (v.to(torch.int32) for v in t.unbind(dim))
        wr, wg, wb = _GRAY_WEIGHTS
        return ((r * wr + g * wg + b * wb + half) >> _GRAY_SHIFT).to(torch.uint8)
    if t.dtype == torch.uint8:
        weights = torch.tensor(_GRAY_WEIGHTS, dtype=dtype, device=t.device)
        return torch.floor((torch.tensordot(t.to(dtype), weights, dims=([dim], [0])) + half) / one)
    work = t.to(dtype) if dtype is not None else (t if t.is_floating_point() else t.double())
    return torch.tensordot(work, torch.tensor(_LUMA, dtype=work.dtype, device=t.device), dims=([dim], [0]))


def _is_batch_broadcast(x) -> bool:
    """True for a batch whose images all alias one image (``tensor.expand`` / ``np.broadcast_to``)."""
    if isinstance(x, torch.Tensor):
        return x.dim() >= 3 and x.shape[0] > 1 and x.stride(0) == 0
    if isinstance(x, np.ndarray):  # (N, H, W) or (N, H, W, C); (H, W, C) is one image
        is_batch = x.ndim == 4 or (x.ndim == 3 and x.shape[-1] not in (1, 3))
        return is_batch and x.shape[0] > 1 and x.strides[0] == 0
    return False


class _Images:
    """A validated input batch, converted to gray (on the device, in the working dtype) one chunk at a time."""

    def __init__(self, image, name: str):
        if isinstance(image, np.ndarray):
            t = _from_numpy(image)
            if t.dim() == 2:
                t, self.single, self.dim = t[None, None], True, 1
            elif t.dim() == 3 and t.shape[-1] in (1, 3):  # one (H, W, C) image
                t, self.single, self.dim = t[None], True, -1
            elif t.dim() == 3:  # (N, H, W) gray batch
                t, self.single, self.dim = t[:, None], False, 1
            elif t.dim() == 4:  # (N, H, W, C) batch
                self.single, self.dim = False, -1
            else:
                raise ValueError(f"{name}: expected (H, W), (H, W, C), (N, H, W) or (N, H, W, C), got {image.shape}")
        elif isinstance(image, torch.Tensor):
            if image.dim() == 2:
                t, self.single = image[None, None], True
            elif image.dim() == 3:
                t, self.single = image[:, None], False
            elif image.dim() == 4:
                t, self.single = image, False
            else:
                raise ValueError(f"{name}: expected (H, W), (N, H, W) or (N, C, H, W), got {tuple(image.shape)}")
            self.dim = 1
        else:
            raise TypeError(f"{name}: expected a NumPy array or torch tensor, got {type(image).__name__}")
        if t.dtype == torch.bool or t.is_complex():
            raise TypeError(f"{name}: unsupported dtype {t.dtype}")
        if t.shape[self.dim] not in (1, 3):
            raise ValueError(f"{name}: expected 1 (gray) or 3 (RGB) channels, got {t.shape[self.dim]}")
        self.t, self.name = t, name
        self.hw = tuple(t.shape[1:3] if self.dim == -1 else t.shape[2:4])

    def __len__(self) -> int:
        return self.t.shape[0]

    def gray(self, rows: slice, device, dtype, data_range: float) -> torch.Tensor:
        """(n, H, W) contiguous gray of images ``rows`` on the 0..255 scale."""
        t = self.t[rows]
        gray = _gray(t.to(device), self.dim, dtype)
        if t.dtype != torch.uint8 and data_range != 255.0:
            gray = gray * (255.0 / data_range)
        return gray.contiguous()


def _as_gray_batch(image, *, device, dtype, data_range: float, name: str) -> tuple[torch.Tensor, bool]:
    """Any accepted input → ((N, H, W) gray tensor on ``device`` in ``dtype`` on the 0..255 scale, is_single)."""
    images = _Images(image, name)
    return images.gray(slice(None), device, dtype, data_range), images.single


def _resolve_device(device, *inputs) -> torch.device:
    if device is not None:
        return torch.device(device)
    for x in inputs:
        if isinstance(x, torch.Tensor):
            return x.device
    return torch.device("cpu")


def _check_size(hw: tuple[int, int], name: str) -> None:
    h, w = hw
    if min(h, w) < MIN_SIZE:
        raise ValueError(
            f"{name}: VIF needs images of at least {MIN_SIZE}x{MIN_SIZE} px (4-level pyramid), got {h}x{w}"
        )


def _as_channels(image, device, dtype, data_range: float, name: str) -> tuple[torch.Tensor, bool]:
    """Any accepted input → ((N, C, H, W) float tensor on the 0..255 scale, is_single), colour kept."""
    if isinstance(image, np.ndarray):
        single = image.ndim == 2 or (image.ndim == 3 and image.shape[-1] in (1, 3))
        arr = image[None] if single else image
        if arr.ndim == 3:
            arr = arr[..., None]
        t = torch.from_numpy(np.ascontiguousarray(np.moveaxis(arr, -1, 1)))
    elif isinstance(image, torch.Tensor):
        single = image.dim() == 2
        t = image[None, None] if single else (image[:, None] if image.dim() == 3 else image)
    else:
        raise TypeError(f"{name}: expected a NumPy array or torch tensor, got {type(image).__name__}")
    if t.dim() != 4:
        raise ValueError(f"{name}: unsupported shape {tuple(image.shape)}")
    is_uint8 = t.dtype == torch.uint8
    t = t.to(device=device, dtype=dtype)
    if not is_uint8 and data_range != 255.0:
        t = t * (255.0 / data_range)
    return t, single


def _default_chunk(device: torch.device, shape) -> int:
    """Images processed together: ~0.2 Mpx on the CPU (cache-sized temporaries are ~2x faster than large ones;
    4 images of 224 x 224), ~13 Mpx on GPUs (256 images of 224 x 224)."""
    budget = 200_000 if device.type == "cpu" else 12_800_000
    return int(min(1024, max(1, budget // (shape[-1] * shape[-2]))))
