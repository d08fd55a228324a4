"""ImageNet-C digital corruptions (contrast, elastic transform, pixelate, JPEG) and the extra saturate.

Pure functions of a float image ``x`` in [0, 1] (HxWx3), formulas of hendrycks/robustness ``make_imagenet_c.py``
(Hendrycks & Dietterich, ICLR 2019). JPEG and pixelate go through PIL exactly as the reference.
"""

from __future__ import annotations

import functools
import io

import cv2
import numpy as np
from PIL import Image

from ._hsv_table import hsv_adjust
from ._ops import bilinear_reflect, gaussian_reflect_2d, hsv_to_rgb, rgb_to_hsv


def _to_uint8_image(x: np.ndarray) -> np.ndarray:
    return np.rint(np.clip(x, 0, 1) * 255).astype(np.uint8)


def contrast(x: np.ndarray, factor: float) -> np.ndarray:
    """``clip((x - mean) · factor + mean)`` with per-channel means."""
    means = np.mean(x, axis=(0, 1), keepdims=True)
    out = np.subtract(x, means, dtype=np.float64)
    out *= factor
    out += means
    return np.clip(out, 0, 1, out=out)


def elastic_draws(rng: np.random.Generator, shape: tuple[int, int], affine: float):
    """The reference's draws, in order: the 3×2 affine jitter ``U(-affine, affine)`` (float32), then the ``U(-1, 1)``
    H×W fields for dx and dy."""
    jitter = rng.uniform(-affine, affine, size=(3, 2)).astype(np.float32)
    ux = rng.uniform(-1, 1, size=shape)
    uy = rng.uniform(-1, 1, size=shape)
    return jitter, ux, uy


def elastic_transform(x: np.ndarray, alpha: float, sigma: float, affine: float,
                      rng: np.random.Generator | None = None, *, draws=None) -> np.ndarray:  # fmt: skip
    """Random affine warp (3 points jittered by ±``affine`` px, reflect-101 border) then a smooth displacement field
    ``alpha · gaussian(U(-1, 1), sigma, reflect, truncate 3)`` sampled bilinearly with reflect borders; float32.

    Parameters are in pixels of this image (the registered corruption scales the reference's 224 px values).
    ``draws``: ``(jitter, ux, uy)`` as :func:`elastic_draws` returns (drawn from ``rng`` when omitted).
    """
    img = np.asarray(x, dtype=np.float32)
    h, w = img.shape[:2]
    jitter, ux, uy = elastic_draws(rng, (h, w), affine) if draws is None else draws
    # the reference's affine construction, (row, col) values used as cv2 (x, y) points
    center = np.float32((h, w)) // 2
    half = min(h, w) // 3
    pts1 = np.float32([center + half, [center[0] + half, center[1] - half], center - half])
    matrix = cv2.getAffineTransform(pts1, pts1 + jitter)
    img = cv2.warpAffine(img, matrix, (w, h), borderMode=cv2.BORDER_REFLECT_101)
    dx = (gaussian_reflect_2d(ux, sigma, truncate=3) * alpha).astype(np.float32)
    dy = (gaussian_reflect_2d(uy, sigma, truncate=3) * alpha).astype(np.float32)
    rows = np.arange(h)[:, None] + dy
    cols = np.arange(w)[None, :] + dx
    out = bilinear_reflect(img, rows.astype(np.float64), cols.astype(np.float64)).astype(np.float32)
    return np.clip(out, 0, 1, out=out)


def pixelate(x: np.ndarray, factor: float) -> np.ndarray:
    """PIL BOX downscale to ``(int(W·factor), int(H·factor))`` (at least 1 px) and BOX upscale back."""
    return pixelate_uint8(_to_uint8_image(x), factor) / 255.0


def pixelate_uint8(image: np.ndarray, factor: float) -> np.ndarray:
    """:func:`pixelate` of a uint8 image (the reference's PIL calls, no float round trip).

    The BOX upscale is done as the gather it is: enlarging, PIL's box filter (support 1/2) gives output pixel ``j``
    the single source pixel ``floor((j + 0.5) · n_in / n_out)`` with weight 1 (checked against PIL for every
    ``n_in <= n_out <= 200``); only the BOX downscale calls PIL.
    """
    h, w = image.shape[:2]
    small = (max(int(w * factor), 1), max(int(h * factor), 1))
    img = Image.fromarray(image).resize(small, Image.Resampling.BOX)
    if small[0] > w or small[1] > h:  # factor > 1: the way back is a real reduction
        return np.asarray(img.resize((w, h), Image.Resampling.BOX))
    columns = np.take(np.asarray(img), _box_enlarge_index(small[0], w), axis=1)
    return np.take(columns, _box_enlarge_index(small[1], h), axis=0)


@functools.lru_cache(maxsize=64)
def _box_enlarge_index(n_in: int, n_out: int) -> np.ndarray:
    """Source index of each output pixel of PIL's BOX resize from ``n_in`` to ``n_out >= n_in`` pixels (its
    ``center = (j + 0.5) · scale``, one tap at ``int(center)``)."""
    index = np.floor((np.arange(n_out) + 0.5) * (n_in / n_out)).astype(np.intp)
    index.setflags(write=False)
    return index


def jpeg_compression(x: np.ndarray, quality: int) -> np.ndarray:
    """PIL JPEG encode at ``quality`` (PIL defaults: 4:2:0, standard tables) and decode."""
    return jpeg_uint8(_to_uint8_image(x), quality) / 255.0


def jpeg_uint8(image: np.ndarray, quality: int) -> np.ndarray:
    """:func:`jpeg_compression` of a uint8 image: PIL's JPEG round trip (the reference's calls), run through OpenCV's
    libjpeg when that gives PIL's pixels on this installation (checked once per process; it skips PIL's Python
    marker parsing, 2–5× faster), through PIL otherwise."""
    if _opencv_jpeg_is_pil():
        return _jpeg_opencv(image, quality)
    return _jpeg_pil(image, quality)


def _jpeg_pil(image: np.ndarray, quality: int) -> np.ndarray:
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "JPEG", quality=int(quality))
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        return np.asarray(decoded if decoded.mode == "RGB" else decoded.convert("RGB"))


def _jpeg_opencv(image: np.ndarray, quality: int) -> np.ndarray:
    bgr = cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2BGR)
    ok, data = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError(f"OpenCV could not JPEG-encode a {image.shape} image")
    return cv2.cvtColor(cv2.imdecode(data, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


@functools.cache
def _opencv_jpeg_is_pil() -> bool:
    """Whether OpenCV's JPEG round trip equals PIL's (same libjpeg settings: 4:2:0, standard tables, islow DCT,
    fancy upsampling) on a probe image with odd sides, at qualities across the ImageNet-C tables."""
    rows, cols = np.mgrid[0:37, 0:45]
    noise = np.random.default_rng(0).integers(0, 64, size=(37, 45, 3))
    probe = ((np.stack([rows * 6, cols * 5, (rows + cols) * 3], -1) + noise) % 256).astype(np.uint8)
    try:
        return all(np.array_equal(_jpeg_opencv(probe, q), _jpeg_pil(probe, q)) for q in (7, 15, 25, 50, 80, 95))
    except (cv2.error, ValueError):
        return False


def saturate(x: np.ndarray, scale: float, shift: float) -> np.ndarray:
    """HSV saturation ``S → clip(S · scale + shift)`` (skimage's rgb2hsv / hsv2rgb formulas)."""
    h, s, v = rgb_to_hsv(np.asarray(x, dtype=np.float64))
    out = hsv_to_rgb(h, np.clip(s * scale + shift, 0, 1), v)
    return np.clip(out, 0, 1, out=out)


def saturate_uint8(image: np.ndarray, scale: float, shift: float) -> np.ndarray:
    """``np.uint8(saturate(image / 255, scale, shift) · 255)``, bit for bit, without the float HSV images (through
    the exact colour table of ``(scale, shift)`` once this process has used it enough, :mod:`._hsv_table`)."""
    return hsv_adjust(image, sat_scale=scale, sat_shift=shift)
