"""ImageNet-C blurs: defocus, glass, motion, zoom and gaussian blur (Hendrycks & Dietterich, ICLR 2019).

Pure functions of a float image ``x`` in [0, 1] (HxWxC) with explicit parameters; randomness is injected (glass
``shifts``, motion ``angle``) or drawn from ``rng``. Formulas follow hendrycks/robustness ``make_imagenet_c.py``;
motion blur is ImageMagick 6's ``MotionBlurImage`` (what the reference calls through Wand), re-implemented.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from ._ops import clipped_zoom, gaussian


# ---------------------------------------------------------------- defocus
def disk(radius: float, alias_sigma: float = 0.1, dtype: type = np.float32) -> np.ndarray:
    """The reference's anti-aliased disk kernel: a 17×17 grid (``ceil(radius)`` half-width beyond 8) with
    ``X² + Y² <= radius²``, normalised, then ``cv2.GaussianBlur`` 3×3 (5×5 beyond radius 8) with ``alias_sigma``.

    For a non-integer radius above 8 the grid half-width is ``ceil(radius)`` (the reference, written for integer
    radii, would build an off-centre grid from ``np.arange(-radius, radius + 1)``).
    """
    if radius <= 8:
        grid, ksize = np.arange(-8, 8 + 1), (3, 3)
    else:
        half = math.ceil(radius)
        grid, ksize = np.arange(-half, half + 1), (5, 5)
    xx, yy = np.meshgrid(grid, grid)
    aliased = np.array((xx**2 + yy**2) <= radius**2, dtype=dtype)
    aliased /= np.sum(aliased)
    return cv2.GaussianBlur(aliased, ksize=ksize, sigmaX=alias_sigma)


def defocus_blur(x: np.ndarray, radius: float, alias_sigma: float) -> np.ndarray:
    """Convolution with :func:`disk` (``cv2.filter2D``, reflect-101 border), clipped."""
    out = cv2.filter2D(x, -1, disk(radius, alias_sigma))
    return np.clip(out, 0, 1, out=out)


# ---------------------------------------------------------------- gaussian
def gaussian_blur(x: np.ndarray, sigma: float) -> np.ndarray:
    """``skimage.filters.gaussian(x, sigma, channel_axis=-1)`` (nearest border, truncate 4), clipped."""
    out = gaussian(x, sigma)
    return np.clip(out, 0, 1, out=out)


# ---------------------------------------------------------------- glass
def glass_shifts(rng: np.random.Generator, shape: tuple[int, int], max_delta: int, iterations: int) -> np.ndarray:
    """All the reference's ``randint(-max_delta, max_delta, size=2)`` draws at once (upper bound excluded).

    Returns ``(iterations, H - 2·max_delta, W - 2·max_delta, 2)`` int16 ``(dx, dy)`` for the visited positions
    ``h, w`` in ``[max_delta + 1, H - max_delta]`` × ``[max_delta + 1, W - max_delta]``, in natural (ascending) order.
    """
    nh, nw = max(shape[0] - 2 * max_delta, 0), max(shape[1] - 2 * max_delta, 0)
    return rng.integers(-max_delta, max_delta, size=(iterations, nh, nw, 2), dtype=np.int16)


def glass_shuffle(img: np.ndarray, shifts: np.ndarray, max_delta: int) -> np.ndarray:
    """One iteration of the reference's local pixel "swap", vectorised.

    The reference visits ``h`` then ``w`` in descending order and runs ``x[h, w], x[h', w'] = x[h', w'], x[h, w]``
    on numpy views, which copies ``x[h', w']`` into ``x[h, w]`` and leaves ``x[h', w']`` unchanged. Every position is
    written once per iteration, so ``new(p) = new(q)`` if ``q = p + d(p)`` was visited before ``p`` (``dy > 0``, or
    ``dy == 0`` and ``dx > 0``, inside the visited window), else ``old(q)``. The chains are resolved by pointer
    jumping (O(log chain length) vectorised passes).
    """
    h, w = img.shape[:2]
    c = max_delta
    nh, nw = shifts.shape[:2]
    if nh <= 0 or nw <= 0:
        return img.copy()
    rows = np.arange(c + 1, c + 1 + nh)[:, None]
    cols = np.arange(c + 1, c + 1 + nw)[None, :]
    dx, dy = shifts[..., 0].astype(np.intp), shifts[..., 1].astype(np.intp)
    qr, qc = rows + dy, cols + dx
    visited = (qr >= c + 1) & (qr <= h - c) & (qc >= c + 1) & (qc <= w - c)
    earlier = visited & ((dy > 0) | ((dy == 0) & (dx > 0)))
    window = (slice(c + 1, c + 1 + nh), slice(c + 1, c + 1 + nw))
    target = np.arange(h * w).reshape(h, w)
    done = np.ones((h, w), dtype=bool)
    active = target[window][earlier]
    target[window] = qr * w + qc
    done[window] = ~earlier
    target, done = target.ravel(), done.ravel()
    while active.size:
        nxt = target[active]
        target[active] = target[nxt]
        finished = done[nxt]
        done[active] = finished
        active = active[~finished]
    return np.take(img.reshape(h * w, -1), target, axis=0).reshape(img.shape)


def glass_blur(x: np.ndarray, sigma: float, max_delta: int, iterations: int, rng: np.random.Generator | None = None,
               *, shifts: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Gaussian blur, 8-bit truncation, ``iterations`` local pixel shuffles (:func:`glass_shuffle`), Gaussian blur.

    ``shifts``: the draws of :func:`glass_shifts` (drawn from ``rng`` when omitted). The visited window comes from
    the image size (the reference hard-codes 224).
    """
    img = np.uint8(gaussian(np.asarray(x, dtype=np.float64), sigma, exact=True) * 255)
    if shifts is None:
        shifts = glass_shifts(rng, img.shape[:2], max_delta, iterations)
    for i in range(iterations):
        img = glass_shuffle(img, shifts[i], max_delta)
    out = gaussian(img / 255.0, sigma, exact=True)
    return np.clip(out, 0, 1, out=out)


# ---------------------------------------------------------------- motion (ImageMagick MotionBlurImage)
def motion_kernel(radius: float, sigma: float, angle: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ImageMagick 6 ``MotionBlurImage`` taps: weights and (dx, dy) sample offsets.

    width = 2·ceil(radius) + 1; weight_i ∝ exp(-i²/2σ²), i = 0..width-1, normalised to 1; tap i samples the input at
    ``(x + ceil(i·cos a - 0.5), y + ceil(i·sin a - 0.5))`` (x right, y down; so the streak trails towards -angle).
    """
    width = 2 * math.ceil(radius) + 1
    i = np.arange(width, dtype=np.float64)
    weights = np.exp(-(i * i) / (2.0 * sigma * sigma)) / (math.sqrt(2 * math.pi) * sigma)
    weights /= weights.sum()
    a = math.pi * angle / 180.0
    px, py = width * math.sin(a), width * math.cos(a)
    hyp = math.hypot(px, py)
    dx = np.ceil(i * py / hyp - 0.5).astype(np.intp)
    dy = np.ceil(i * px / hyp - 0.5).astype(np.intp)
    return weights, dx, dy


def motion_blur(x: np.ndarray, radius: float, sigma: float, angle: float, *, quantize: bool = True) -> np.ndarray:
    """ImageMagick 6 ``MotionBlurImage(radius, sigma, angle)`` with edge-replicated borders (its default virtual
    pixels): one correlation (``cv2.filter2D``, float64) with a kernel holding the ≤ 2·ceil(radius) + 1 taps.

    ``quantize`` reproduces the reference's 8-bit PNG round trip through ImageMagick Q16: the sum is rounded to a
    16-bit quantum and the PNG writer truncates it to 8 bits (``floor(round(65535·v) / 257)``); verified bit-exact
    against ``convert -motion-blur`` of ImageMagick 6.9.11 Q16. Works on HxW or HxWxC (C ≤ 4).
    """
    src = np.ascontiguousarray(x, dtype=np.float64)
    kernel, anchor = _motion_kernel_2d(*motion_kernel(radius, sigma, angle))
    out = cv2.filter2D(src, -1, kernel, anchor=anchor, borderType=cv2.BORDER_REPLICATE).reshape(x.shape)
    if quantize:
        out *= 65535.0
        out += 0.5
        out = np.floor(np.floor(out, out=out) / 257.0, out=out)
        out /= 255.0
    return np.clip(out, 0, 1, out=out)


def motion_blur_uint8(image: np.ndarray, radius: float, sigma: float, angle: float) -> np.ndarray:
    """:func:`motion_blur` (quantized) of a uint8 image straight to uint8, as ImageMagick Q16 computes it: the taps
    weight the 16-bit quanta ``257·u``, the sum is rounded to a quantum and truncated to 8 bits. One ``cv2.filter2D``
    correlation with the taps' bounding box, except for images up to 96×96 whose box is too large for OpenCV's direct
    path: those sum the shifted copies tap by tap (ImageMagick's order; faster there than OpenCV's FFT path). The
    8-bit results are the same."""
    h, w = image.shape[:2]
    taps = motion_kernel(radius, sigma, angle)
    box = (np.ptp(taps[1]) + 1) * (np.ptp(taps[2]) + 1)  # the entries of the taps' bounding box
    if h * w <= _TAP_LOOP_PIXELS and box >= _DIRECT_TAPS:
        quanta = _motion_taps(image, *taps)
    else:
        kernel, anchor = _motion_kernel_2d(*taps)
        quanta = image.astype(np.float64)  # a float64 source: OpenCV correlates an integer one in float32 precision
        quanta *= 257.0
        quanta = cv2.filter2D(quanta, -1, kernel, anchor=anchor, borderType=cv2.BORDER_REPLICATE)
        quanta = quanta.reshape(image.shape)
    quanta += 0.5
    np.floor(quanta, out=quanta)
    np.clip(quanta, 0, 65535, out=quanta)
    quanta /= 257.0
    return quanta.astype(np.uint8)


_TAP_LOOP_PIXELS = 96 * 96
#: OpenCV correlates float64 images directly (not through an FFT) with kernels of fewer entries than this
_DIRECT_TAPS = 50


def _motion_taps(image: np.ndarray, weights: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """Σ_k w_k · 257·u(x + dx_k, y + dy_k) in tap order (:func:`motion_kernel`'s taps), edges replicated (float64)."""
    h, w = image.shape[:2]
    pad = int(max(np.abs(dx).max(), np.abs(dy).max()))
    padded = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_REPLICATE).reshape(
        (h + 2 * pad, w + 2 * pad, *image.shape[2:])
    )
    quanta = padded.astype(np.float64)
    quanta *= 257.0
    out, term = np.empty(image.shape, dtype=np.float64), np.empty(image.shape, dtype=np.float64)
    for tap, (k, ox, oy) in enumerate(zip(weights.tolist(), dx.tolist(), dy.tolist(), strict=True)):
        shifted = quanta[pad + oy : pad + oy + h, pad + ox : pad + ox + w]
        if tap == 0:
            np.multiply(shifted, k, out=out)
        else:
            out += np.multiply(shifted, k, out=term)
    return out


def _motion_kernel_2d(weights: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, tuple[int, int]]:
    """:func:`motion_kernel`'s taps as a correlation kernel over their bounding box (taps on one offset add up) and
    the anchor ``(x, y)`` in it of the offset (0, 0)."""
    x0, y0 = int(dx.min()), int(dy.min())
    width, height = int(dx.max()) - x0 + 1, int(dy.max()) - y0 + 1
    flat = np.bincount((dy - y0) * width + (dx - x0), weights=weights, minlength=width * height)
    return flat.reshape(height, width), (-x0, -y0)


# ---------------------------------------------------------------- zoom
def zoom_factors(zoom_end: float, zoom_step: float) -> np.ndarray:
    """The reference's zoom factors ``np.arange(1, zoom_end, zoom_step)`` (float endpoints included as numpy does)."""
    return np.arange(1, zoom_end, zoom_step)


def zoom_blur(x: np.ndarray, zoom_end: float, zoom_step: float, *, factors: np.ndarray | None = None) -> np.ndarray:
    """Average of ``x`` and its centre zooms (:func:`~._ops.clipped_zoom`) by ``np.arange(1, zoom_end, zoom_step)``,
    in float32 as the reference; non-square images zoom each axis about its own centre."""
    if factors is None:
        factors = zoom_factors(zoom_end, zoom_step)
    img = np.asarray(x, dtype=np.float32)
    out = np.zeros_like(img)
    for z in factors:
        out += clipped_zoom(img, float(z))
    out = (img + out) / (len(factors) + 1)
    return np.clip(out, 0, 1, out=out)
