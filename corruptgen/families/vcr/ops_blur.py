"""VCR blur operations on one strength s: glass, Gaussian, defocus and motion blur (ImageNet-C), box and median blur
(Albumentations), made continuous in s; the table in :mod:`.domains` maps s to their parameters."""

from __future__ import annotations

import math

import cv2
import numpy as np

from ..imagenet_c import _ops as inc_ops
from ..imagenet_c import blur as inc_blur
from .ops_common import Field, _identity_at_zero, _u8, _u8_unit

# ------------------------------------------------------------------------------------------- 4. glass blur
GLASS_SIGMA_MAX = 20.0
GLASS_DELTA_MAX = 16.0
GLASS_ITERATIONS = 2


def _glass_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {"u": rng.random((GLASS_ITERATIONS, *shape, 2), dtype=np.float32)}


def _glass_window(m: float) -> int:
    """Border of the shuffled window: offsets lie in [−c, c − 1] as ImageNet-C's ``randint(−c, c)``."""
    return round(float(m)) + 1


@_identity_at_zero
def _glass_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """ImageNet-C ``glass_blur``: Gaussian blur σ = 20s, 8-bit image, 2 local pixel shuffles
    (:func:`~corruptgen.families.imagenet_c.glass_shuffle`), Gaussian blur σ.

    Offsets ``round((2u − 1)·m)`` with m = 16s: continuous in s (a pixel moves once m passes ½|2u − 1|⁻¹), so the
    shuffle fades in instead of ImageNet-C's integer max_delta; the field is indexed by absolute position. The 8-bit
    step uses the sample's dither (ImageNet-C truncates, which would shift half the values one level at any s > 0).
    """
    sigma, m = s * GLASS_SIGMA_MAX, s * GLASS_DELTA_MAX
    h, w = image.shape[:2]
    img = _u8(inc_ops.gaussian(image.astype(np.float32), sigma), fld)
    c = _glass_window(m)
    u = fld["u"][:, c + 1 : h - c + 1, c + 1 : w - c + 1]
    shifts = np.minimum(np.rint((2.0 * u - 1.0) * np.float32(m)), c - 1).astype(np.int16)
    if m >= 0.5:
        for i in range(GLASS_ITERATIONS):
            img = inc_blur.glass_shuffle(img, shifts[i], c)
    return _u8(inc_ops.gaussian(img.astype(np.float32), sigma), fld)


# ------------------------------------------------------------------------------------------- 5. gaussian blur
GAUSSIAN_SIGMA_MAX = 96.0


@_identity_at_zero
def _gaussian_blur_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """ImageNet-C ``gaussian_blur`` (skimage ``gaussian``, nearest border, truncate 4) with σ = 96s px."""
    return _u8_unit(inc_blur.gaussian_blur(image.astype(np.float32) / 255.0, s * GAUSSIAN_SIGMA_MAX), fld)


# ------------------------------------------------------------------------------------------- 6. defocus blur
DEFOCUS_RADIUS_MAX = 96.0
DEFOCUS_ALIAS_MAX = 0.5


def smooth_disk(radius: float, alias_sigma: float) -> np.ndarray:
    """Area-weighted disk: tap weight ``clip(r + ½ − |d|, 0, 1)`` (the pixel's share inside the disk, linearised), so
    the kernel grows continuously from the identity at r = 0; normalised, then ImageNet-C's anti-alias Gaussian
    (3 x 3, 5 x 5 beyond r = 8) with ``alias_sigma``. At integer radii > ½ it is ImageNet-C's ``disk`` up to the
    half-covered rim."""
    ksize = 3 if radius <= 8 else 5
    half = math.ceil(radius + 0.5) + (ksize // 2 if alias_sigma > 0 else 0)  # room for the anti-alias blur
    grid = np.arange(-half, half + 1, dtype=np.float64)
    d = np.hypot(grid[:, None], grid[None, :])
    kernel = np.clip(radius + 0.5 - d, 0.0, 1.0).astype(np.float32)
    kernel /= kernel.sum()
    if alias_sigma > 0:
        kernel = cv2.GaussianBlur(kernel, ksize=(ksize, ksize), sigmaX=float(alias_sigma))
        kernel /= kernel.sum()
    return kernel


@_identity_at_zero
def _defocus_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """ImageNet-C ``defocus_blur`` (``cv2.filter2D``, reflect-101) with :func:`smooth_disk`, r = 96s, alias = 0.5s."""
    kernel = smooth_disk(s * DEFOCUS_RADIUS_MAX, s * DEFOCUS_ALIAS_MAX)
    return _u8(cv2.filter2D(image.astype(np.float32), -1, kernel, borderType=cv2.BORDER_REFLECT_101), fld)


# ------------------------------------------------------------------------------------------- 7. motion blur
MOTION_SIGMA_MAX = 64.0
MOTION_RADIUS = 2.0  # radius / sigma: taps beyond 4σ (weight < e⁻⁸) are dropped


def _motion_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {"angle": float(rng.uniform(-45, 45))}


@_identity_at_zero
def _motion_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """ImageNet-C ``motion_blur`` (ImageMagick ``MotionBlurImage``, no 8-bit PNG round trip) with σ = 64s px,
    radius 2σ (its 4σ + 1 one-sided Gaussian taps; the rest weighs < e⁻⁸) and the drawn angle U(−45°, 45°)."""
    sigma = s * MOTION_SIGMA_MAX
    x = image.astype(np.float32) / 255.0
    out = inc_blur.motion_blur(x, MOTION_RADIUS * sigma, sigma, fld["angle"], quantize=False)
    return _u8_unit(out, fld)


# ------------------------------------------------------------------------------------------- 10./11. blur, median blur
BLUR_WIDTH_MAX = 61.0
MEDIAN_K_MAX = 61


def box_weights(width: float) -> np.ndarray:
    """1-D box of continuous ``width`` ≥ 1 px with area-weighted edge taps: tap i weighs the overlap of its pixel cell
    [i − ½, i + ½] with [−w/2, w/2], normalised. w = 1 is the identity, an odd integer w the plain k-tap box
    (``cv2.blur``), and the weights move continuously in between."""
    half = max(float(width), 1.0) / 2.0
    n = max(math.ceil(half - 0.5), 0)
    i = np.arange(-n, n + 1, dtype=np.float64)
    w = np.clip(np.minimum(i + 0.5, half) - np.maximum(i - 0.5, -half), 0.0, 1.0)
    return (w / w.sum()).astype(np.float32)


def box_blur(image: np.ndarray, width: float) -> np.ndarray:
    """Float32 box blur of continuous ``width`` (separable :func:`box_weights`, reflect-101 border as ``cv2.blur`` in
    Albumentations ``Blur``); on the image's scale, not rounded."""
    k = box_weights(width)
    return cv2.sepFilter2D(image.astype(np.float32), -1, k, k, borderType=cv2.BORDER_REFLECT_101)


def _blur_width(s: float) -> float:
    return 1.0 + float(s) * (BLUR_WIDTH_MAX - 1.0)


@_identity_at_zero
def _box_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """Albumentations ``Blur`` (``cv2.blur``, reflect-101) with a continuous kernel width w = 1 + 60s px
    (:func:`box_blur`; odd integer w is ``cv2.blur``'s k x k box)."""
    return _u8(box_blur(image, _blur_width(s)), fld)


def _median_level(s: float) -> tuple[int, float]:
    """(k, f): the blend ``(1 − f)·median_k + f·median_{k+2}`` at s; level x = 30s, k = 2·floor(x) + 1, f = frac(x)."""
    x = float(s) * (MEDIAN_K_MAX - 1) / 2
    j = min(math.floor(x), (MEDIAN_K_MAX - 1) // 2)
    return 2 * j + 1, x - j


def _median(image: np.ndarray, k: int) -> np.ndarray:
    return image if k == 1 else cv2.medianBlur(image, k)


@_identity_at_zero
def _median_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """Albumentations ``MedianBlur`` (``cv2.medianBlur``) between adjacent odd kernel sizes: ``(1 − f)·median_k +
    f·median_{k+2}`` with k = 2·floor(30s) + 1, f = frac(30s) (k = 1: the image); odd k at f = 0 is the reference."""
    k, f = _median_level(s)
    lower = _median(image, k)
    if f <= 0:
        return lower.copy()
    y = np.float32(1.0 - f) * lower.astype(np.float32) + np.float32(f) * _median(image, k + 2).astype(np.float32)
    return _u8(y, fld)
