"""ImageNet-C weather corruptions (snow, frost, fog, brightness) and the extra spatter (Hendrycks & Dietterich, 2019).

Pure functions of a float image ``x`` in [0, 1] (HxWx3); random fields are injected (``field``, ``plasma``, frost
``texture``/``top``/``left``) or drawn from ``rng`` with the reference's calls (hendrycks/robustness
``make_imagenet_c.py``). The 224 px constants of the reference follow the image size (see each function).
"""

from __future__ import annotations

import cv2
import numpy as np

from ._frost import REFERENCE_TEXTURES, fitted_texture, frost_crop
from ._hsv_table import hsv_adjust
from ._ops import clipped_zoom, gaussian, hsv_to_rgb, rgb_to_hsv
from .blur import motion_blur


# ---------------------------------------------------------------- snow
def snow(x: np.ndarray, loc: float, scale: float, zoom: float, threshold: float, blur_radius: float,
         blur_sigma: float, blend: float, angle: float, rng: np.random.Generator | None = None, *,
         field: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Snow flakes: an HxW ``N(loc, scale)`` field (``field``, else drawn), zoomed by ``zoom`` about the centre,
    thresholded, cast to 8 bits, motion-blurred (ImageMagick, ``blur_radius``/``blur_sigma``/``angle``, 8-bit PNG
    round trip), added twice (as is and rotated 180°) to the image brightened towards ``1.5·gray + 0.5``
    (weight ``1 - blend``). The reference reshapes to 224×224; here the layer has the image's H×W."""
    img = np.asarray(x, dtype=np.float32)
    h, w = img.shape[:2]
    if field is None:
        field = rng.normal(size=(h, w), loc=loc, scale=scale)
    layer = clipped_zoom(np.asarray(field, dtype=np.float64)[..., None], zoom)[..., 0]
    layer[layer < threshold] = 0
    layer8 = (np.clip(layer, 0, 1) * 255).astype(np.uint8)
    flakes = motion_blur(layer8 / 255.0, blur_radius, blur_sigma, angle)[..., None]
    gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)[..., None]
    img = blend * img + (1 - blend) * np.maximum(img, gray * 1.5 + 0.5)
    out = img + flakes + np.rot90(flakes, k=2)
    return np.clip(out, 0, 1, out=out)


# ---------------------------------------------------------------- frost
def frost(x: np.ndarray, img_weight: float, frost_weight: float, rng: np.random.Generator | None = None, *,
          texture: int | None = None, top: int | None = None, left: int | None = None,
          resize: float | None = None) -> np.ndarray:  # fmt: skip
    """``clip(img_weight·x + frost_weight·crop)`` with an H×W crop of a frost texture. Missing draws come from ``rng``
    as the reference: texture ``randint(5)`` (frost6 never drawn), then the crop's top and left; ``resize`` scales the
    texture first (the 32 px / 64 px scripts: 0.2 / 0.3); textures not larger than the image are then rescaled
    (imagecorruptions' rule, see :func:`~._frost.texture_scale`)."""
    return frost_255(x, img_weight, frost_weight, rng, texture=texture, top=top, left=left, resize=resize) / 255.0


def frost_255(x: np.ndarray, img_weight: float, frost_weight: float, rng: np.random.Generator | None = None, *,
              texture: int | None = None, top: int | None = None, left: int | None = None,
              resize: float | None = None) -> np.ndarray:  # fmt: skip
    """:func:`frost` on the reference's 0–255 scale (its output cast ``np.uint8`` of this is the reference's)."""
    h, w = x.shape[:2]
    if texture is None:
        texture = int(rng.integers(REFERENCE_TEXTURES))
    if top is None or left is None:
        tex = fitted_texture(texture, (h, w), resize)
        top = int(rng.integers(0, tex.shape[0] - h)) if top is None else top
        left = int(rng.integers(0, tex.shape[1] - w)) if left is None else left
    crop = frost_crop(texture, (h, w), top, left, resize)
    out = img_weight * (np.asarray(x, dtype=np.float64) * 255.0) + frost_weight * crop
    return np.clip(out, 0, 255, out=out)


# ---------------------------------------------------------------- fog
def next_power_of_two(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


def _plus_rolled(a: np.ndarray, shift: int, axis: int) -> np.ndarray:
    """``a + np.roll(a, shift, axis)`` for shift ±1, by slicing (the same additions, without np.roll's overhead)."""
    out = np.empty_like(a)
    lead = (slice(None),) * axis
    if shift == -1:
        np.add(a[(*lead, slice(0, -1))], a[(*lead, slice(1, None))], out=out[(*lead, slice(0, -1))])
        np.add(a[(*lead, slice(-1, None))], a[(*lead, slice(0, 1))], out=out[(*lead, slice(-1, None))])
    else:
        np.add(a[(*lead, slice(1, None))], a[(*lead, slice(0, -1))], out=out[(*lead, slice(1, None))])
        np.add(a[(*lead, slice(0, 1))], a[(*lead, slice(-1, None))], out=out[(*lead, slice(0, 1))])
    return out


def plasma_fractal(rng: np.random.Generator, mapsize: int = 256, wibbledecay: float = 3.0) -> np.ndarray:
    """Diamond-square height map in [0, 1] (the reference's ``plasma_fractal``, same draws in the same order)."""
    if mapsize < 1 or mapsize & (mapsize - 1):
        raise ValueError(f"plasma map size must be a power of two, got {mapsize}")
    maparray = np.empty((mapsize, mapsize), dtype=np.float64)
    maparray[0, 0] = 0
    stepsize, wibble = mapsize, 100.0

    def wibbled_mean(array: np.ndarray) -> np.ndarray:
        return array / 4 + wibble * rng.uniform(-wibble, wibble, array.shape)

    while stepsize >= 2:
        half = stepsize // 2
        corners = maparray[0:mapsize:stepsize, 0:mapsize:stepsize]
        squares = _plus_rolled(_plus_rolled(corners, -1, 0), -1, 1)
        maparray[half:mapsize:stepsize, half:mapsize:stepsize] = wibbled_mean(squares)
        centres = maparray[half:mapsize:stepsize, half:mapsize:stepsize]
        left = _plus_rolled(centres, 1, 0) + _plus_rolled(corners, -1, 1)
        maparray[0:mapsize:stepsize, half:mapsize:stepsize] = wibbled_mean(left)
        top = _plus_rolled(centres, 1, 1) + _plus_rolled(corners, -1, 0)
        maparray[half:mapsize:stepsize, 0:mapsize:stepsize] = wibbled_mean(top)
        stepsize //= 2
        wibble /= wibbledecay
    maparray -= maparray.min()
    return maparray / maparray.max()


def fog(x: np.ndarray, strength: float, wibbledecay: float, rng: np.random.Generator | None = None, *,
        plasma: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """``clip((x + strength·plasma) · max(x) / (max(x) + strength))``. The plasma map is the next power of two ≥ the
    longer side (256 at 224 px, as the reference's fixed map), cropped to H×W."""
    h, w = x.shape[:2]
    if plasma is None:
        plasma = plasma_fractal(rng, next_power_of_two(max(h, w)), wibbledecay)
    max_val = x.max()
    out = np.add(x, strength * plasma[:h, :w][..., None], dtype=np.float64)
    out *= max_val
    out /= max_val + strength
    return np.clip(out, 0, 1, out=out)


# ---------------------------------------------------------------- brightness
def brightness(x: np.ndarray, delta: float) -> np.ndarray:
    """HSV value ``V → clip(V + delta)`` (skimage's rgb2hsv / hsv2rgb formulas)."""
    h, s, v = rgb_to_hsv(np.asarray(x, dtype=np.float64))
    out = hsv_to_rgb(h, s, np.clip(v + delta, 0, 1))
    return np.clip(out, 0, 1, out=out)


def brightness_uint8(image: np.ndarray, delta: float) -> np.ndarray:
    """``np.uint8(brightness(image / 255, delta) · 255)``, bit for bit, without the float HSV images (through the
    exact colour table of ``delta`` once this process has used it enough, :mod:`._hsv_table`)."""
    return hsv_adjust(image, value_shift=delta)


# ---------------------------------------------------------------- spatter (extra)
_EMBOSS = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]])
_WATER = np.array([175 / 255.0, 238 / 255.0, 238 / 255.0], dtype=np.float32)  # pale turquoise
_MUD = np.array([63 / 255.0, 42 / 255.0, 20 / 255.0], dtype=np.float32)  # brown


def water_relief(liquid8: np.ndarray) -> np.ndarray:
    """The reference's water relief of a uint8 liquid layer: embossed, equalised, blurred distance to its Canny
    edges (capped at 20) — float32, to be multiplied by the layer (ImageNet-C spatter mode 0; ImageNet-P spatter)."""
    dist = 255 - cv2.Canny(liquid8, 50, 150)
    dist = cv2.distanceTransform(dist, cv2.DIST_L2, 5)
    _, dist = cv2.threshold(dist, 20, 20, cv2.THRESH_TRUNC)
    dist = cv2.blur(dist, (3, 3)).astype(np.uint8)
    dist = cv2.equalizeHist(dist)
    dist = cv2.filter2D(dist, cv2.CV_8U, _EMBOSS)
    return cv2.blur(dist, (3, 3)).astype(np.float32)


def spatter(x: np.ndarray, loc: float, scale: float, sigma: float, threshold: float, intensity: float, mode: int,
            rng: np.random.Generator | None = None, *, field: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Liquid splashes from a blurred, thresholded ``N(loc, scale)`` field (``field``, else drawn).

    Mode 0 (water): an embossed distance-to-edge map of the liquid, normalised to ``intensity``, adds pale turquoise;
    mode 1 (mud): the liquid mask blurred with σ = ``intensity``, kept above 0.8, blends in brown. Computed in float32
    as the reference. An empty water layer (all-zero map; the reference divides 0/0) leaves the image unchanged.
    """
    img = np.asarray(x, dtype=np.float32)
    if field is None:
        field = rng.normal(size=img.shape[:2], loc=loc, scale=scale)
    liquid = gaussian(np.asarray(field, dtype=np.float64), sigma)
    liquid[liquid < threshold] = 0
    if mode == 0:
        liquid8 = (liquid * 255).astype(np.uint8)
        m = liquid8 * water_relief(liquid8)
        peak = m.max()
        if peak > 0:
            m /= peak
        m *= intensity
        out = img + _per_channel(m, _WATER)
    else:
        from scipy import ndimage  # here: ~0.2 CPU-s to import, for mud spatter only

        mask = np.where(liquid > threshold, 1, 0).astype(np.float32)
        m = ndimage.gaussian_filter(mask, intensity, mode="nearest", truncate=4.0)  # float32 out, as skimage
        m[m < 0.8] = 0
        out = img * cv2.merge([1 - m] * 3)
        out += _per_channel(m, _MUD)
    return np.clip(out, 0, 1, out=out)


def _per_channel(layer: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """``layer[..., None] * colour`` for an HxW float32 layer, as one contiguous HxWx3 array (numpy's broadcast over
    a last axis of 3 runs ~5× slower than three plane products merged by OpenCV; the values are the same)."""
    return cv2.merge([layer * c for c in colour])
