"""The 14 ImageNet-P perturbation sequences as pure array functions (explicit parameters, randomness from ``rng``).

Hendrycks & Dietterich, "Benchmarking Neural Network Robustness to Common Corruptions and Perturbations", ICLR 2019;
formulas from the reference ``ImageNet-P/create_p/make_imagenet_p.py``. Every function
returns a (T, crop, crop, 3) uint8 array. Conversions to uint8 truncate, as ``np.uint8(float)`` and torchvision's
``ToPILImage`` (``mul(255).byte()``) do in the reference.

Noise sequences and the appearance sequences take the centre ``crop`` (HxWx3 uint8); the geometric ones (translate,
rotate, scale, shear, tilt, and zoom_blur's zooms) take the ``Resize(256)`` image ``img`` before the crop and crop
each warped frame, so content from outside the crop moves into view as in the reference.
"""

from __future__ import annotations

from collections.abc import Iterable

import cv2
import numpy as np
from PIL import Image

from . import geometry
from ._helpers import clipped_zoom, magick_motion_blur, spatter_water

#: difficulty 1 / 2 / 3 → noise level (σ of N(0, σ) on [0, 1]; Poisson rate λ; σ of the multiplicative noise)
NOISE_LEVELS: dict[str, tuple[float, ...]] = {
    "gaussian_noise": (0.03, 0.05, 0.08),
    "shot_noise": (300, 120, 60),
    "speckle_noise": (0.05, 0.10, 0.15),
}


def _u8(x: np.ndarray) -> np.ndarray:
    """``np.uint8(x)`` of values already in [0, 255]: truncation."""
    return x.astype(np.uint8)


def _with_clean(crop: np.ndarray, frames: np.ndarray) -> np.ndarray:
    return np.concatenate([crop[None], frames])


# ---------------------------------------------------------------- noise: frame 0 clean, 30 independent draws


def gaussian_noise(crop: np.ndarray, sigma: float, rng: np.random.Generator, frames: int = 31) -> np.ndarray:
    """Frame i ≥ 1: ``ToPILImage(clamp(ToTensor(crop) + σ·randn, 0, 1))`` in float32."""
    x = crop.astype(np.float32) / np.float32(255)
    noise = rng.standard_normal((frames - 1, *x.shape), dtype=np.float32)
    return _with_clean(crop, _u8(np.clip(x + np.float32(sigma) * noise, 0, 1) * np.float32(255)))


def shot_noise(crop: np.ndarray, lam: float, rng: np.random.Generator, frames: int = 31) -> np.ndarray:
    """Frame i ≥ 1: ``uint8(255 · clip(poisson(x · λ) / λ, 0, 1))`` with ``x = crop / 255``."""
    x = crop / 255.0
    counts = rng.poisson(x * lam, size=(frames - 1, *x.shape))
    return _with_clean(crop, _u8(255 * np.clip(counts / lam, 0, 1)))


def speckle_noise(crop: np.ndarray, sigma: float, rng: np.random.Generator, frames: int = 31) -> np.ndarray:
    """Frame i ≥ 1: ``uint8(255 · clip(x + x · N(0, σ), 0, 1))`` with ``x = crop / 255``."""
    x = crop / 255.0
    return _with_clean(crop, _u8(255 * np.clip(x + x * rng.normal(scale=sigma, size=(frames - 1, *x.shape)), 0, 1)))


# ---------------------------------------------------------------- geometric: warp the Resize(256) image, then crop


def _affine_frames(img: np.ndarray, crop: int, resample: Image.Resampling, steps: Iterable[dict]) -> np.ndarray:
    return np.stack([geometry.center_crop(geometry.affine(img, resample=resample, **kw), crop) for kw in steps])


def translate(img: np.ndarray, crop: int) -> np.ndarray:
    """41 frames: horizontal shift ``i − 20`` px, i = 0..40 (NEAREST, black fill)."""
    return _affine_frames(img, crop, geometry.NEAREST, ({"translate": (i - 20, 0)} for i in range(41)))


def rotate(img: np.ndarray, crop: int) -> np.ndarray:
    """31 frames: rotation ``i − 15`` degrees (clockwise on screen), bilinear."""
    return _affine_frames(img, crop, geometry.BILINEAR, ({"angle": i - 15} for i in range(31)))


def scale(img: np.ndarray, crop: int) -> np.ndarray:
    """31 frames: zoom ``(2.5·i + 40) / 100`` = 0.4 … 1.15, bilinear."""
    return _affine_frames(img, crop, geometry.BILINEAR, ({"scale": (i * 2.5 + 40) / 100.0} for i in range(31)))


def shear(img: np.ndarray, crop: int) -> np.ndarray:
    """31 frames: x-shear ``i − 15`` degrees, bilinear."""
    return _affine_frames(img, crop, geometry.BILINEAR, ({"shear": i - 15} for i in range(31)))


def tilt(img: np.ndarray, crop: int) -> np.ndarray:
    """31 frames: the reference 3-D tilt by ``i − 15`` degrees about both axes (cv2.warpPerspective), then crop."""
    return np.stack([geometry.center_crop(geometry.tilt(img, i - 15), crop) for i in range(31)])


def zoom_blur(img: np.ndarray, crop: int) -> np.ndarray:
    """31 frames: frame i is the running mean of the crop and the crops of zooms ``1 + 0.004·k``, k = 1..i (float32)."""
    zooms = _affine_frames(img, crop, geometry.BILINEAR, ({"scale": 1 + 0.004 * i} for i in range(1, 31)))
    stack = np.concatenate([geometry.center_crop(img, crop)[None], zooms]).astype(np.float32) / np.float32(255)
    running = np.cumsum(stack, axis=0, dtype=np.float32)
    counts = np.arange(1, 32, dtype=np.float32)[:, None, None, None]
    return _u8(running / counts * np.float32(255))


# ---------------------------------------------------------------- appearance sequences on the crop


def motion_blur(crop: np.ndarray) -> np.ndarray:
    """31 frames: ImageMagick MotionBlur(radius 10, σ 3) at angle ``4·(i − 30)`` = −120° … 0°."""
    return magick_motion_blur(crop, 10, 3, np.array([(i - 30) * 4 for i in range(31)], dtype=np.float64))


def snow(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """31 frames: one snow layer (N(0.05, 0.3), zoom 3, threshold 0.5) motion-blurred (r 14, σ 4) at ``4i − 150``°."""
    h, w = crop.shape[:2]
    x = crop.astype(np.float32) / 255.0
    layer = rng.normal(size=(h, w), loc=0.05, scale=0.3)
    layer = clipped_zoom(layer[..., None], 3)
    layer[layer < 0.5] = 0
    layer = (np.clip(layer.squeeze(), 0, 1) * 255).astype(np.uint8)
    moving = magick_motion_blur(layer, 14, 4, np.array([i * 4 - 150 for i in range(31)], dtype=np.float64)) / 255.0
    gray = cv2.cvtColor(x, cv2.COLOR_RGB2GRAY)[..., None]
    base = 0.85 * x + 0.15 * np.maximum(x, gray * 1.5 + 0.5)
    moving = moving[..., None]
    return _u8(np.clip(base + moving + np.rot90(moving, 2, axes=(1, 2)), 0, 1) * 255)


def brightness(crop: np.ndarray) -> np.ndarray:
    """31 frames: HSV value + ``(i − 15)·2 / 100`` (−0.30 … +0.30), clipped (skimage rgb2hsv / hsv2rgb).

    skimage's ``hsv2rgb`` multiplies every output channel by V (``p = v·(1 − s)``, ``q``, ``t``, ``v``), so
    ``hsv2rgb(h, s, v') = v' · hsv2rgb(h, s, 1)`` bit for bit; the hue/saturation part is computed once.
    """
    from skimage.color import hsv2rgb, rgb2hsv  # scikit-image loads on first use: not at `corruptgen list`

    hsv = rgb2hsv(crop / 255.0)
    shifts = np.array([(i - 15) * 2 / 100 for i in range(31)])
    values = np.clip(hsv[None, ..., 2] + shifts[:, None, None], 0, 1)
    unit = hsv.copy()
    unit[..., 2] = 1.0
    return _u8(np.clip(hsv2rgb(unit)[None] * values[..., None], 0, 1) * 255)


def gaussian_blur(crop: np.ndarray) -> np.ndarray:
    """31 frames: skimage ``gaussian(x, σ = 0.25 + 0.035·i, truncate=6)`` per channel."""
    from skimage.filters import gaussian

    x = crop / 255.0
    return np.stack([_u8(255 * gaussian(x, sigma=0.25 + 0.035 * i, channel_axis=-1, truncate=6.0))
                     for i in range(31)])  # fmt: skip


def spatter(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """31 frames: ImageNet-C water spatter (intensity 0.6) of one liquid layer that runs down between frames.

    The layer is ``gaussian(N(0.65, 0.27), σ 3.7)`` zeroed below 0.69; after each frame every column is convolved
    with ``[0.05, 0.1, 0.15, 0.7]`` (``np.convolve(..., mode='same')``: ``out[m] = .05 c[m+1] + .1 c[m] + .15 c[m-1]
    + .7 c[m-2]``, zeros outside), which moves the drops down by about two pixels a frame.
    """
    from skimage.filters import gaussian

    h, w = crop.shape[:2]
    x = crop.astype(np.float32) / 255.0
    liquid = gaussian(rng.normal(loc=0.65, scale=0.27, size=(h, w)), sigma=3.7)
    liquid[liquid < 0.69] = 0
    out = np.empty((31, h, w, 3), dtype=np.uint8)
    for i in range(31):
        out[i] = _u8(spatter_water(x, (liquid * 255).astype(np.uint8), 0.6) * 255)
        nxt = 0.1 * liquid
        nxt[:-1] += 0.05 * liquid[1:]
        nxt[1:] += 0.15 * liquid[:-1]
        nxt[2:] += 0.7 * liquid[:-2]
        liquid = nxt
    return out
