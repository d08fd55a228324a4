"""Straightforward transcriptions of the small-image ImageNet-C generators, for the fidelity tests.

Transcribed from hendrycks/robustness ``ImageNet-C/create_c/make_cifar_c.py`` (32 px) and ``make_tinyimagenet_c.py``
/ ``make_imagenet_64_c.py`` (64 px, the same constants) onto current NumPy / scikit-image / SciPy / OpenCV, with the
global ``np.random`` replaced by a Generator ``rng`` making the same calls in the same order. The constants are the
scripts' own, written out here (not read from corruptgen). Helpers the 224 px transcription already has (ImageMagick's
motion blur, ``clipped_zoom``, the plasma fractal, the disk kernel, spatter, the HSV ones, elastic with explicit
constants) are shared with ``tests/corruptions/imagenet_c_reference.py``.
"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import cv2
import numpy as np
import skimage as sk
from PIL import Image
from skimage.filters import gaussian

from corruptgen.families.imagenet_c import FROST_FILES, frost_dir, glass_shifts

_PATH = Path(__file__).resolve().parents[1] / "corruptions" / "imagenet_c_reference.py"
_SPEC = importlib.util.spec_from_file_location("_small_c_imagenet_c_reference", _PATH)
ref224 = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(ref224)


def _elastic_rows(imsize: int, rows):
    return [tuple(imsize * v for v in row) for row in rows]


#: The scripts' ``c = [...]`` lists: 32 = make_cifar_c.py, 64 = make_tinyimagenet_c.py (= make_imagenet_64_c.py).
CONSTANTS = {
    32: {
        "gaussian_noise": [0.04, 0.06, 0.08, 0.09, 0.10],
        "shot_noise": [500, 250, 100, 75, 50],
        "impulse_noise": [0.01, 0.02, 0.03, 0.05, 0.07],
        "speckle_noise": [0.06, 0.1, 0.12, 0.16, 0.2],
        "gaussian_blur": [0.4, 0.6, 0.7, 0.8, 1],
        "glass_blur": [(0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2), (0.4, 1, 2)],
        "defocus_blur": [(0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1, 0.2), (1.5, 0.1)],
        "motion_blur": [(6, 1), (6, 1.5), (6, 2), (8, 2), (9, 2.5)],
        "zoom_blur": [
            np.arange(1, 1.06, 0.01),
            np.arange(1, 1.11, 0.01),
            np.arange(1, 1.16, 0.01),
            np.arange(1, 1.21, 0.01),
            np.arange(1, 1.26, 0.01),
        ],
        "fog": [(0.2, 3), (0.5, 3), (0.75, 2.5), (1, 2), (1.5, 1.75)],
        "frost": [(1, 0.2), (1, 0.3), (0.9, 0.4), (0.85, 0.4), (0.75, 0.45)],
        "frost_resize": 0.2,
        "snow": [
            (0.1, 0.2, 1, 0.6, 8, 3, 0.95),
            (0.1, 0.2, 1, 0.5, 10, 4, 0.9),
            (0.15, 0.3, 1.75, 0.55, 10, 4, 0.9),
            (0.25, 0.3, 2.25, 0.6, 12, 6, 0.85),
            (0.3, 0.3, 1.25, 0.65, 14, 12, 0.8),
        ],
        "spatter": [
            (0.62, 0.1, 0.7, 0.7, 0.5, 0),
            (0.65, 0.1, 0.8, 0.7, 0.5, 0),
            (0.65, 0.3, 1, 0.69, 0.5, 0),
            (0.65, 0.1, 0.7, 0.69, 0.6, 1),
            (0.65, 0.1, 0.5, 0.68, 0.6, 1),
        ],
        "contrast": [0.75, 0.5, 0.4, 0.3, 0.15],
        "brightness": [0.05, 0.1, 0.15, 0.2, 0.3],
        "saturate": [(0.3, 0), (0.1, 0), (1.5, 0), (2, 0.1), (2.5, 0.2)],
        "jpeg_compression": [80, 65, 58, 50, 40],
        "pixelate": [0.95, 0.9, 0.85, 0.75, 0.65],
        "elastic_transform": _elastic_rows(
            32, [(0, 0, 0.08), (0.05, 0.2, 0.07), (0.08, 0.06, 0.06), (0.1, 0.04, 0.05), (0.1, 0.03, 0.03)]
        ),
    },
    64: {
        "gaussian_noise": [0.04, 0.08, 0.12, 0.15, 0.18],
        "shot_noise": [250, 100, 50, 30, 15],
        "impulse_noise": [0.01, 0.02, 0.05, 0.08, 0.14],
        "speckle_noise": [0.15, 0.2, 0.25, 0.3, 0.35],
        "gaussian_blur": [0.5, 0.75, 1, 1.25, 1.5],
        "glass_blur": [(0.1, 1, 1), (0.5, 1, 1), (0.6, 1, 2), (0.7, 2, 1), (0.9, 2, 2)],
        "defocus_blur": [(0.5, 0.6), (1, 0.1), (1.5, 0.1), (2.5, 0.01), (3, 0.1)],
        "motion_blur": [(10, 1), (10, 1.5), (10, 2), (10, 2.5), (12, 3)],
        "zoom_blur": [
            np.arange(1, 1.06, 0.01),
            np.arange(1, 1.11, 0.01),
            np.arange(1, 1.16, 0.01),
            np.arange(1, 1.21, 0.01),
            np.arange(1, 1.26, 0.01),
        ],
        "fog": [(0.4, 3), (0.7, 3), (1, 2.5), (1.5, 2), (2, 1.75)],
        "frost": [(1, 0.3), (0.9, 0.4), (0.8, 0.45), (0.75, 0.5), (0.7, 0.55)],
        "frost_resize": 0.3,
        "snow": [
            (0.1, 0.2, 1, 0.6, 8, 3, 0.8),
            (0.1, 0.2, 1, 0.5, 10, 4, 0.8),
            (0.15, 0.3, 1.75, 0.55, 10, 4, 0.7),
            (0.25, 0.3, 2.25, 0.6, 12, 6, 0.65),
            (0.3, 0.3, 1.25, 0.65, 14, 12, 0.6),
        ],
        "spatter": [
            (0.62, 0.1, 0.7, 0.7, 0.6, 0),
            (0.65, 0.1, 0.8, 0.7, 0.6, 0),
            (0.65, 0.3, 1, 0.69, 0.6, 0),
            (0.65, 0.1, 0.7, 0.68, 0.6, 1),
            (0.65, 0.1, 0.5, 0.67, 0.6, 1),
        ],
        "contrast": [0.4, 0.3, 0.2, 0.1, 0.05],
        "brightness": [0.1, 0.2, 0.3, 0.4, 0.5],
        "saturate": [(0.3, 0), (0.1, 0), (2, 0), (5, 0.1), (30, 0.2)],
        "jpeg_compression": [65, 58, 50, 40, 25],
        "pixelate": [0.9, 0.8, 0.7, 0.6, 0.5],
        "elastic_transform": _elastic_rows(
            64, [(0, 0, 0.08), (0.05, 0.3, 0.06), (0.1, 0.08, 0.06), (0.1, 0.03, 0.03), (0.16, 0.03, 0.02)]
        ),
    },
}


def _u8(x):
    return np.uint8(x)


def corrupt(name: str, img: np.ndarray, rng: np.random.Generator, severity: int) -> np.ndarray:
    """The script's ``<name>(x, severity)`` on a uint8 size×size×3 image (size 32 or 64), then ``np.uint8``."""
    size = img.shape[0]
    table = CONSTANTS[size]
    c = table[name][severity - 1]
    x = np.array(img) / 255.0
    if name == "gaussian_noise":
        return _u8(np.clip(x + rng.normal(size=x.shape, scale=c), 0, 1) * 255)
    if name == "shot_noise":
        return _u8(np.clip(rng.poisson(x * c) / c, 0, 1) * 255)
    if name == "impulse_noise":
        return _u8(np.clip(sk.util.random_noise(x, mode="s&p", amount=c, rng=rng), 0, 1) * 255)
    if name == "speckle_noise":
        return _u8(np.clip(x + x * rng.normal(size=x.shape, scale=c), 0, 1) * 255)
    if name == "gaussian_blur":
        return _u8(np.clip(gaussian(x, sigma=c, channel_axis=-1), 0, 1) * 255)
    if name == "glass_blur":
        return _glass(img, rng, *c)
    if name == "defocus_blur":
        kernel = ref224._disk(c[0], c[1])
        channels = np.array([cv2.filter2D(x[:, :, d], -1, kernel) for d in range(3)]).transpose((1, 2, 0))
        return _u8(np.clip(channels, 0, 1) * 255)
    if name == "motion_blur":
        return ref224.imagemagick_motion_blur(np.array(img), c[0], c[1], rng.uniform(-45, 45))
    if name == "zoom_blur":
        x32 = x.astype(np.float32)
        out = np.zeros_like(x32)
        for zoom_factor in c:
            out += ref224._clipped_zoom(x32, zoom_factor)
        return _u8(np.clip((x32 + out) / (len(c) + 1), 0, 1) * 255)
    if name == "fog":
        max_val = x.max()
        x += c[0] * ref224.plasma_fractal(rng, mapsize=size, wibbledecay=c[1])[:size, :size][..., np.newaxis]
        return _u8(np.clip(x * max_val / (max_val + c[0]), 0, 1) * 255)
    if name == "frost":
        idx = rng.integers(5)
        texture = cv2.imread(str(frost_dir() / FROST_FILES[idx]))
        texture = cv2.resize(texture, (0, 0), fx=table["frost_resize"], fy=table["frost_resize"])
        x_start, y_start = rng.integers(0, texture.shape[0] - size), rng.integers(0, texture.shape[1] - size)
        texture = texture[x_start : x_start + size, y_start : y_start + size][..., [2, 1, 0]]
        return _u8(np.clip(c[0] * np.array(img) + c[1] * texture, 0, 255))
    if name == "snow":
        return _snow(img, rng, c)
    if name in ("spatter", "brightness", "saturate", "contrast", "elastic_transform", "pixelate", "jpeg_compression"):
        return _with_constants(name, img, rng, c)
    raise KeyError(name)


def _glass(img, rng, sigma, delta, iterations):
    """The script's per-pixel loop; the (dx, dy) of visit (h, w) from ``glass_shifts`` (corruptgen's batched draws)."""
    x = np.uint8(gaussian(np.array(img) / 255.0, sigma=sigma, channel_axis=-1) * 255)
    shifts = glass_shifts(rng, x.shape[:2], delta, iterations)
    size = x.shape[0]
    for i in range(iterations):
        for h in range(size - delta, delta, -1):
            for w in range(size - delta, delta, -1):
                dx, dy = shifts[i, h - delta - 1, w - delta - 1]
                h_prime, w_prime = h + dy, w + dx
                x[h, w], x[h_prime, w_prime] = x[h_prime, w_prime], x[h, w]
    return _u8(np.clip(gaussian(x / 255.0, sigma=sigma, channel_axis=-1), 0, 1) * 255)


def _snow(img, rng, c):
    x = np.array(img, dtype=np.float32) / 255.0
    size = x.shape[0]
    layer = rng.normal(size=x.shape[:2], loc=c[0], scale=c[1])
    layer = ref224._clipped_zoom(layer[..., np.newaxis], c[2])
    layer[layer < c[3]] = 0
    layer = (np.clip(layer.squeeze(), 0, 1) * 255).astype(np.uint8)
    layer = ref224.imagemagick_motion_blur(layer, c[4], c[5], rng.uniform(-135, -45)) / 255.0
    layer = layer[..., np.newaxis]
    x = c[6] * x + (1 - c[6]) * np.maximum(x, cv2.cvtColor(x, cv2.COLOR_RGB2GRAY).reshape(size, size, 1) * 1.5 + 0.5)
    return _u8(np.clip(x + layer + np.rot90(layer, k=2), 0, 1) * 255)


def _with_constants(name, img, rng, c):
    """The 224 px transcription's function body with this script's constants (the bodies are the same)."""
    original = ref224._c
    ref224._c = lambda _name, _s: c if isinstance(c, tuple) else (c,)
    try:
        if name == "pixelate":  # the script: int(size * c), as the 224 px one's int(w * c)
            size = img.shape[0]
            small = Image.fromarray(img).resize((int(size * c), int(size * c)), Image.Resampling.BOX)
            return np.uint8(small.resize((size, size), Image.Resampling.BOX))
        if name == "jpeg_compression":
            output = io.BytesIO()
            Image.fromarray(img).save(output, "JPEG", quality=c)
            return np.uint8(Image.open(output))
        return ref224.REFERENCE[name](img, rng, 1)
    finally:
        ref224._c = original
