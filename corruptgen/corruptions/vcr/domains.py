"""The 14 VCR corruptions as ``draw(rng, shape) -> field`` + ``apply(image, s, field) -> image`` on one strength s.

VCR (Shen et al., WACV 2025, §4) studies Shot, Impulse and Gaussian Noise, Glass, Gaussian, Defocus and Motion Blur,
Brightness and Frost (ImageNet-C), Blur, Median Blur, Hue-Saturation-Value and Color Jitter (Albumentations) and
Uniform Noise (Geirhos et al., NeurIPS 2018). The paper gives no parameter table and the public code's domains stop
short of Δv = 1 (spec vcr.md §1), so each corruption here has ONE scalar strength ``s ∈ [0, 1]``: ``s = 0`` is the
clean image, every parameter moves monotonically with s, and ``s = 1`` (near) destroys the image (median Δv 0.96–1
over the scikit-image sample photos at 224 px; docs/vcr.md lists the values). Randomness (noise fields, angles,
textures, directions) is drawn once per sample by ``draw`` and reused for every s, so Δv is monotone in s for a fixed
field, which the per-image search in :mod:`.search` relies on. The 8-bit output is rounded stochastically with a fixed
per-sample dither (:func:`_u8`), so s → 0 tends to the clean image and Δv is continuous in s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
from albumentations.augmentations.pixel import functional as albu_f
from scipy import special

from ..imagenet_c import _ops as inc_ops
from ..imagenet_c import blur as inc_blur
from ..imagenet_c import weather as inc_weather
from ..imagenet_c._frost import REFERENCE_TEXTURES, draw_frost

Field = dict[str, Any]


@dataclass(frozen=True)
class Domain:
    """One VCR corruption on a scalar strength.

    Attributes:
        name: registry name (``vcr/<name>``).
        source: where the operation comes from (``ImageNet-C``, ``Albumentations``, ``Geirhos et al.``).
        draw: ``draw(rng, (H, W)) -> field``: everything random, drawn once per sample.
        apply: ``apply(image uint8 HxWx3, s, field) -> uint8 HxWx3``; ``s = 0`` returns the image unchanged.
        params: ``params(s, field) -> dict``: the operation's own parameters at s (JSON-safe), incl. the drawn ones.
        domain: the parameters' ranges over s ∈ [0, 1] (documentation, ``corruptgen list vcr``).
        mapping: how s maps to the parameters (documentation).
        reference: the operation it reproduces.
        warp: (a, b): the search runs on u with ``s = 1 − (1 − uᵃ)ᵇ`` (a > 1 stretches a steep start, b > 1 a steep
            end), so that Δv is roughly linear in u; it only affects how fast the search converges.
        prepare: optional ``prepare(image) -> dict`` of per-image precomputations (keys start with ``_``) merged into
            the field before a search; ``apply`` recomputes them when absent.
    """

    name: str
    source: str
    draw: Callable[[np.random.Generator, tuple[int, int]], Field] = field(repr=False)
    apply: Callable[[np.ndarray, float, Field], np.ndarray] = field(repr=False)
    params: Callable[[float, Field], dict[str, Any]] = field(repr=False)
    domain: dict[str, Any] = field(default_factory=dict)
    mapping: str = ""
    reference: str = ""
    warp: tuple[float, float] = (1.0, 1.0)
    prepare: Callable[[np.ndarray], Field] | None = field(default=None, repr=False)

    def make_field(self, rng: np.random.Generator, image: np.ndarray) -> Field:
        """The sample's field for ``image``: ``draw``, then the dither of the 8-bit output (``_dither``, U(0, 1)
        per value, from ``rng``), then (if any) ``prepare``."""
        fld = self.draw(rng, image.shape[:2])
        fld["_dither"] = rng.random((*image.shape[:2], 3), dtype=np.float32)
        return {**fld, **self.prepare(image)} if self.prepare is not None else fld

    def strength(self, u: float) -> float:
        """Strength at search coordinate u ∈ [0, 1] (see ``warp``)."""
        a, b = self.warp
        return float(1.0 - (1.0 - float(u) ** a) ** b)


def _u8(y: np.ndarray, fld: Field | None = None) -> np.ndarray:
    """Float image on the 0..255 scale → uint8, clipped; rounded stochastically with the sample's fixed dither
    ``floor(y + d)``, d ~ U(0, 1) (unbiased; an integer image is unchanged; a change of ε moves a share ε of the
    values by one level, so Δv is continuous in s instead of jumping when all values round up together), or to the
    nearest level without a dither field."""
    dither = None if fld is None else fld.get("_dither")
    if dither is None:
        out = np.rint(y)
    else:
        out = np.floor(y + (dither[..., 0] if np.ndim(y) == 2 else dither))
    return np.clip(out, 0, 255).astype(np.uint8)


def _u8_unit(y: np.ndarray, fld: Field | None = None) -> np.ndarray:
    """Float image on the 0..1 scale → uint8 (see :func:`_u8`)."""
    return _u8(np.asarray(y) * 255.0, fld)


def _identity_at_zero(fn: Callable[[np.ndarray, float, Field], np.ndarray]):
    def apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
        if s <= 0:
            return image.copy()
        return fn(image, float(min(s, 1.0)), fld)

    apply.__doc__ = fn.__doc__
    return apply


def _r(x: float, nd: int = 6) -> float:
    return round(float(x), nd)


# ------------------------------------------------------------------------------------------- 1. gaussian noise
GAUSS_SIGMA_MAX = 8.0  # on the [0, 1] scale


def _gauss_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {"z": rng.standard_normal((*shape, 3), dtype=np.float32)}


@_identity_at_zero
def _gauss_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """``clip(x + σ·z)`` with σ = 8s (ImageNet-C ``gaussian_noise`` with an injected N(0, 1) field)."""
    return _u8(image.astype(np.float32) + np.float32(255.0 * s * GAUSS_SIGMA_MAX) * fld["z"], fld)


# ------------------------------------------------------------------------------------------- 2. shot noise
SHOT_STD_MAX = 30.0  # noise std at white on the [0, 1] scale; photons at white λ = 1 / std² ≥ 1/900


def poisson_quantile(u: np.ndarray, mu: np.ndarray, z: np.ndarray | None = None, *, exact_below: float = 10.0):
    """Smallest k ≥ 0 with ``P(Poisson(μ) ≤ k) ≥ u``, elementwise (float64 result).

    Inverse-CDF sampling from one uniform field u couples the draws across μ (k is non-decreasing in μ). Below
    ``exact_below`` expected counts the CDF is accumulated exactly; above, the Cornish-Fisher expansion of the quantile
    is used (``z = Φ⁻¹(u)``, pass it to skip the computation): it is off by one count on ≤ 1.2 % of the values at
    μ = 10 and fewer beyond.
    """
    u = np.asarray(u, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    k = np.empty(mu.shape, dtype=np.float64)
    small = mu < exact_below
    if not small.all():
        big = ~small
        m = mu[big]
        zz = special.ndtri(u[big]) if z is None else np.asarray(z, dtype=np.float64)[big]
        sd = np.sqrt(m)
        q = m + sd * zz + (zz * zz - 1) / 6 + (zz**3 - 7 * zz) / (72 * sd)
        k[big] = np.maximum(np.ceil(q - 0.5), 0)
    if small.any():
        m, uu = mu[small], u[small]
        pmf = np.exp(-m)
        cdf = pmf.copy()
        ks = np.zeros_like(m)
        active = np.nonzero(cdf < uu)[0]
        limit = int(exact_below + 12 * math.sqrt(exact_below) + 40)
        j = 0
        while active.size and j < limit:
            j += 1
            ks[active] = j
            pmf_a = pmf[active] * (m[active] / j)
            pmf[active] = pmf_a
            cdf[active] += pmf_a
            active = active[cdf[active] < uu[active]]
        k[small] = ks
    return k


def _shot_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    u = rng.random((*shape, 3))
    return {"u": u, "z": special.ndtri(u)}


def _shot_photons(s: float) -> float:
    return 1.0 / (s * SHOT_STD_MAX) ** 2


@_identity_at_zero
def _shot_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """``clip(Poisson(x·λ) / λ)`` (ImageNet-C ``shot_noise``), λ = 1/(30s)² photons at white, by inverse CDF."""
    lam = _shot_photons(s)
    k = poisson_quantile(fld["u"], image * (lam / 255.0), fld.get("z"))
    return _u8(k * (255.0 / lam), fld)


# ------------------------------------------------------------------------------------------- 3. impulse noise
IMPULSE_AMOUNT_MAX = 1.0


def _impulse_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {"flip": rng.random((*shape, 3), dtype=np.float32), "salt": rng.random((*shape, 3), dtype=np.float32) < 0.5}


@_identity_at_zero
def _impulse_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """Salt-and-pepper per value with amount p = s (ImageNet-C ``impulse_noise`` = skimage ``s&p``, salt:pepper 1:1):
    values with ``flip < p`` become 255 (``salt``) or 0; the set of hit values grows with p."""
    out = image.copy()
    hit = fld["flip"] < np.float32(s * IMPULSE_AMOUNT_MAX)
    out[hit & fld["salt"]] = 255
    out[hit & ~fld["salt"]] = 0
    return out


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
    (:func:`~corruptgen.corruptions.imagenet_c.glass_shuffle`), Gaussian blur σ.

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


def _none_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {}


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


# ------------------------------------------------------------------------------------------- 8. brightness
BRIGHTNESS_DELTA_MAX = 1.0
BRIGHTNESS_FADE_POWER = 4


def _brightness_scale(s: float) -> float:
    return 1.0 - s**BRIGHTNESS_FADE_POWER


def _brightness_prepare(image: np.ndarray) -> Field:
    return {"_hsv": inc_ops.rgb_to_hsv(image / 255.0)}


@_identity_at_zero
def _brightness_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """ImageNet-C ``brightness`` (HSV ``V + δ``, δ = s) after ImageNet-C ``saturate`` with scale 1 − s⁴, in one HSV
    round trip (skimage formulas).

    The V shift alone saturates at V = 1 with hue and saturation intact (Δv ≤ 0.61-0.92 on the sample photos); the
    saturation fade (negligible below s ≈ 0.5: 1 − s⁴ ≥ 0.94) makes s = 1 a white image, like over-exposure.
    """
    h, sat, v = fld.get("_hsv") or inc_ops.rgb_to_hsv(image / 255.0)
    out = inc_ops.hsv_to_rgb(h, sat * _brightness_scale(s), np.clip(v + s * BRIGHTNESS_DELTA_MAX, 0, 1))
    return _u8_unit(out, fld)


# ------------------------------------------------------------------------------------------- 9. frost
FROST_IMAGE_END = 0.0  # image weight at s = 1
FROST_WEIGHT_END = 1.5  # frost weight at s = 1


def _frost_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return draw_frost(rng, shape, REFERENCE_TEXTURES)


def _frost_weights(s: float) -> tuple[float, float]:
    return 1.0 - s * (1.0 - FROST_IMAGE_END), s * FROST_WEIGHT_END


@_identity_at_zero
def _frost_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """ImageNet-C ``frost``: ``clip(a·x + b·crop)`` with a = 1 − s, b = 1.5s (a crop of frost texture 1-5)."""
    a, b = _frost_weights(s)
    out = inc_weather.frost_255(image / 255.0, a, b, texture=fld["texture"], top=fld["top"], left=fld["left"])
    return _u8(out, fld)


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


# ------------------------------------------------------------------------------------------- 12. hue saturation value
HSV_HUE_MAX = 90.0  # OpenCV hue units (180 = full turn): 90 is the largest distinct shift
HSV_SV_MAX = 255.0


def _hsv_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {"hue_dir": float(rng.uniform(-1, 1)), "sat_dir": float(rng.uniform(-1, 1)),
            "val_sign": int(rng.choice((-1, 1)))}  # fmt: skip


def _hsv_shifts(s: float, fld: Field) -> tuple[float, float, float]:
    """(hue, sat, val) shifts at s: val → ±255 (black or white at s = 1), sat → −255 when brightening (white, not
    saturated colour, at s = 1), else ``±255·|sat_dir|``; hue ``90·hue_dir·s``."""
    val = fld["val_sign"] * HSV_SV_MAX * s
    sat = -HSV_SV_MAX * s if fld["val_sign"] > 0 else HSV_SV_MAX * s * fld["sat_dir"]
    return HSV_HUE_MAX * s * fld["hue_dir"], sat, val


def _hsv_prepare(image: np.ndarray) -> Field:
    return {"_hsv": cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2HSV)}


@_identity_at_zero
def _hsv_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """Albumentations ``HueSaturationValue`` (``shift_hsv``: OpenCV HSV, hue mod 180 units, S and V shifted and
    clipped, grey pixels keep S = 0), computed on float32 HSV: the uint8 HSV round trip alone would change the image
    (Δv jumps at s = 0+), the float one is exact, so small shifts make small changes."""
    hue, sat, val = _hsv_shifts(s, fld)
    hsv = fld.get("_hsv")
    hsv = (_hsv_prepare(image)["_hsv"] if hsv is None else hsv).copy()
    hsv[..., 0] = np.mod(hsv[..., 0] + np.float32(2.0 * hue), 360.0)  # OpenCV uint8 hue unit = 2 degrees
    grey = hsv[..., 1] == 0
    hsv[..., 1] = np.where(grey, 0.0, np.clip(hsv[..., 1] + np.float32(sat / 255.0), 0.0, 1.0))
    hsv[..., 2] = np.clip(hsv[..., 2] + np.float32(val / 255.0), 0.0, 1.0)
    return _u8_unit(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB), fld)


# ------------------------------------------------------------------------------------------- 13. color jitter
JITTER_HUE_MAX = 0.15  # hue factor (fraction of a turn)


def _jitter_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {"fade": "brightness" if rng.integers(2) == 0 else "contrast",
            "dirs": [*(float(v) for v in rng.uniform(0, 1, size=2)), float(rng.uniform(-1, 1))],
            "order": [int(v) for v in rng.permutation(4)]}  # fmt: skip


def _jitter_factors(s: float, fld: Field) -> dict[str, float]:
    """brightness, contrast, saturation factors and hue shift at s. The ``fade`` factor goes 1 → 0 (black or flat
    grey at s = 1), the other of brightness/contrast to ``1 − s·U(0, 1)`` (only down: a gain above 1 lifts VIF over
    1, so Δv would not grow with s), saturation to ``1 ± s`` and hue to ``±0.5·s``, along the drawn directions."""
    d_other, d_sat, d_hue = fld["dirs"]
    fade, other = 1.0 - s, 1.0 - s * d_other
    b, c = (fade, other) if fld["fade"] == "brightness" else (other, fade)
    return {"brightness": b, "contrast": c, "saturation": 1.0 - s * d_sat, "hue": JITTER_HUE_MAX * s * d_hue}


@_identity_at_zero
def _jitter_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """Albumentations ``ColorJitter`` (torchvision semantics) in the drawn order of its four operations, on float32
    (each clipped to [0, 1]; the uint8 path's HSV quantisation would make Δv jump at s = 0+)."""
    f = _jitter_factors(s, fld)
    ops = (
        lambda im: albu_f.adjust_brightness_torchvision(im, f["brightness"]),
        lambda im: albu_f.adjust_contrast_torchvision(im, f["contrast"]),
        lambda im: albu_f.adjust_saturation_torchvision(im, f["saturation"]),
        lambda im: albu_f.adjust_hue_torchvision(im, f["hue"]),
    )
    out = image.astype(np.float32) / 255.0
    for i in fld["order"]:
        out = np.clip(ops[i](out), 0.0, 1.0)
    return _u8_unit(out, fld)


# ------------------------------------------------------------------------------------------- 14. uniform noise
UNIFORM_CONTRAST = 0.3
UNIFORM_WIDTH_MAX = 1.5
UNIFORM_FADE_END = 0.45  # s at which the fade to Geirhos' grey, low-contrast base image is complete
UNIFORM_WIDTH_POWER = 2
_SKIMAGE_GRAY = np.array([0.2125, 0.7154, 0.0721], dtype=np.float32)


def _uniform_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {"u": rng.random(shape, dtype=np.float32)}


def _uniform_parts(s: float) -> tuple[float, float, float]:
    """(fade, contrast, width) at s: the fade a = min(s / 0.45, 1) mixes the colour image towards its grey and the
    contrast 1 → 0.3 together (Geirhos' base image at a = 1); beyond s = 0.45 the width w = 1.5·t²,
    t = (s − 0.45)/0.55 (the square spreads the steep first part of the noise's Δv over more of s)."""
    s = min(max(float(s), 0.0), 1.0)
    fade = min(s / UNIFORM_FADE_END, 1.0)
    t = max(s - UNIFORM_FADE_END, 0.0) / (1.0 - UNIFORM_FADE_END)
    width = UNIFORM_WIDTH_MAX * t**UNIFORM_WIDTH_POWER
    return fade, 1.0 - fade * (1.0 - UNIFORM_CONTRAST), width


@_identity_at_zero
def _uniform_apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
    """Geirhos et al. (2018) uniform noise, led in by a fade: ``c·((1 − a)·x + a·grey(x)) + (1 − c)/2`` with grey =
    skimage ``rgb2gray``, a the fade and c = 1 − 0.7a the contrast, then ``+ U(−w, w)``, clipped. For s ≥ 0.45
    (a = 1, c = 0.3) it is exactly Geirhos' grey, contrast-0.3 image plus noise (three equal channels)."""
    fade, contrast, width = _uniform_parts(s)
    x = image.astype(np.float32) / 255.0
    gray = (x @ _SKIMAGE_GRAY)[..., None]
    y = np.float32(contrast) * (gray if fade >= 1 else np.float32(1 - fade) * x + np.float32(fade) * gray)
    y += np.float32((1 - contrast) / 2)
    if width > 0:
        y = y + np.float32(width) * (2 * fld["u"][..., None] - 1)
    out = _u8_unit(np.clip(y, 0, 1), {"_dither": fld["_dither"][..., :1]})  # one dither: grey stays grey
    return np.repeat(out, 3, axis=2) if out.shape[2] == 1 else out


# ------------------------------------------------------------------------------------------- the table
DOMAINS: dict[str, Domain] = {
    d.name: d
    for d in (
        Domain("shot_noise", "ImageNet-C", _shot_draw, _shot_apply,
               lambda s, f: {"noise_std_at_white": _r(s * SHOT_STD_MAX),
                             "photons": None if s <= 0 else _r(_shot_photons(s), 9)},
               {"noise_std_at_white": [0.0, SHOT_STD_MAX], "photons": ["inf", _r(1 / SHOT_STD_MAX**2, 9)]},
               f"noise std at white = {SHOT_STD_MAX:g}·s, photons at white λ = 1/({SHOT_STD_MAX:g}·s)²",
               "clip(poisson(x·λ)/λ), inverse-CDF draw from one uniform field", warp=(4.0, 1.0)),
        Domain("impulse_noise", "ImageNet-C", _impulse_draw, _impulse_apply,
               lambda s, f: {"amount": _r(s * IMPULSE_AMOUNT_MAX)}, {"amount": [0.0, IMPULSE_AMOUNT_MAX]},
               "amount = s", "skimage random_noise(x, mode='s&p', amount)", warp=(3.0, 1.0)),
        Domain("gaussian_noise", "ImageNet-C", _gauss_draw, _gauss_apply,
               lambda s, f: {"sigma": _r(s * GAUSS_SIGMA_MAX)}, {"sigma": [0.0, GAUSS_SIGMA_MAX]},
               f"sigma = {GAUSS_SIGMA_MAX:g}·s (image on [0, 1])", "clip(x + N(0, sigma))", warp=(4.0, 1.0)),
        Domain("glass_blur", "ImageNet-C", _glass_draw, _glass_apply,
               lambda s, f: {"sigma": _r(s * GLASS_SIGMA_MAX), "max_delta": _r(s * GLASS_DELTA_MAX),
                             "iterations": GLASS_ITERATIONS},
               {"sigma": [0.0, GLASS_SIGMA_MAX], "max_delta": [0.0, GLASS_DELTA_MAX], "iterations": GLASS_ITERATIONS},
               f"sigma = {GLASS_SIGMA_MAX:g}·s px, max_delta = {GLASS_DELTA_MAX:g}·s px (continuous offsets), "
               f"{GLASS_ITERATIONS} iterations", "gaussian → local pixel shuffle → gaussian", warp=(3.0, 1.0)),
        Domain("gaussian_blur", "ImageNet-C", _none_draw, _gaussian_blur_apply,
               lambda s, f: {"sigma": _r(s * GAUSSIAN_SIGMA_MAX)}, {"sigma": [0.0, GAUSSIAN_SIGMA_MAX]},
               f"sigma = {GAUSSIAN_SIGMA_MAX:g}·s px", "skimage.filters.gaussian(x, sigma)", warp=(3.0, 1.0)),
        Domain("defocus_blur", "ImageNet-C", _none_draw, _defocus_apply,
               lambda s, f: {"radius": _r(s * DEFOCUS_RADIUS_MAX), "alias_blur": _r(s * DEFOCUS_ALIAS_MAX)},
               {"radius": [0.0, DEFOCUS_RADIUS_MAX], "alias_blur": [0.0, DEFOCUS_ALIAS_MAX]},
               f"radius = {DEFOCUS_RADIUS_MAX:g}·s px, alias_blur = {DEFOCUS_ALIAS_MAX:g}·s",
               "cv2.filter2D(x, disk(radius, alias_blur)), area-weighted disk rim", warp=(3.0, 1.0)),
        Domain("motion_blur", "ImageNet-C", _motion_draw, _motion_apply,
               lambda s, f: {"sigma": _r(s * MOTION_SIGMA_MAX), "radius": _r(MOTION_RADIUS * s * MOTION_SIGMA_MAX),
                             "angle": _r(f["angle"])},
               {"sigma": [0.0, MOTION_SIGMA_MAX], "radius": f"{MOTION_RADIUS:g}·sigma", "angle": [-45.0, 45.0]},
               f"sigma = {MOTION_SIGMA_MAX:g}·s px, radius = {MOTION_RADIUS:g}·sigma, angle ~ U(−45°, 45°) per sample",
               "ImageMagick MotionBlurImage(radius, sigma, angle)", warp=(3.0, 1.0)),
        Domain("brightness", "ImageNet-C", _none_draw, _brightness_apply,
               lambda s, f: {"delta": _r(s * BRIGHTNESS_DELTA_MAX), "saturation_scale": _r(_brightness_scale(s))},
               {"delta": [0.0, BRIGHTNESS_DELTA_MAX], "saturation_scale": [1.0, 0.0]},
               f"delta = s, saturation scale = 1 − s^{BRIGHTNESS_FADE_POWER}",
               "HSV: S·scale (saturate), then V + delta (brightness)", warp=(1.0, 3.0),
               prepare=_brightness_prepare),
        Domain("frost", "ImageNet-C", _frost_draw, _frost_apply,
               lambda s, f: {"img_weight": _r(_frost_weights(s)[0]), "frost_weight": _r(_frost_weights(s)[1]),
                             "texture": f["texture"], "top": f["top"], "left": f["left"]},
               {"img_weight": [1.0, FROST_IMAGE_END], "frost_weight": [0.0, FROST_WEIGHT_END], "texture": [0, 4]},
               f"img_weight = 1 − s, frost_weight = {FROST_WEIGHT_END:g}·s; texture and crop drawn per sample",
               "clip(img_weight·x + frost_weight·frost_crop)", warp=(1.5, 1.0)),
        Domain("blur", "Albumentations", _none_draw, _box_apply,
               lambda s, f: {"width": _r(_blur_width(s))}, {"width": [1.0, BLUR_WIDTH_MAX]},
               f"kernel width w = 1 + {BLUR_WIDTH_MAX - 1:g}·s px, continuous (area-weighted edge taps)",
               "A.Blur → cv2.blur(x, (k, k))", warp=(2.0, 1.0)),
        Domain("median_blur", "Albumentations", _none_draw, _median_apply,
               lambda s, f: dict(zip(("ksize", "blend"), (_median_level(s)[0], _r(_median_level(s)[1])), strict=True)),
               {"ksize": [1, MEDIAN_K_MAX], "blend": [0.0, 1.0]},
               f"(1 − blend)·median_ksize + blend·median_(ksize+2), ksize = 2·floor({(MEDIAN_K_MAX - 1) // 2}·s) + 1, "
               f"blend = frac({(MEDIAN_K_MAX - 1) // 2}·s)", "A.MedianBlur → cv2.medianBlur(x, k)", warp=(2.0, 1.0)),
        Domain("hue_saturation_value", "Albumentations", _hsv_draw, _hsv_apply,
               lambda s, f: {**dict(zip(("hue_shift", "sat_shift", "val_shift"), map(_r, _hsv_shifts(s, f)),
                                        strict=True)), "val_sign": f["val_sign"]},
               {"hue_shift": [-HSV_HUE_MAX, HSV_HUE_MAX], "sat_shift": [-HSV_SV_MAX, HSV_SV_MAX],
                "val_shift": [-HSV_SV_MAX, HSV_SV_MAX]},
               "val_shift = ±255·s (sign drawn), sat_shift = −255·s when brightening else 255·s·U(−1, 1), "
               "hue_shift = 90·s·U(−1, 1)", "A.HueSaturationValue → shift_hsv(x, hue, sat, val)", warp=(1.0, 1.0),
               prepare=_hsv_prepare),
        Domain("color_jitter", "Albumentations", _jitter_draw, _jitter_apply,
               lambda s, f: {**{k: _r(v) for k, v in _jitter_factors(s, f).items()}, "fade": f["fade"],
                             "order": f["order"]},
               {"brightness": [0.0, 1.0], "contrast": [0.0, 1.0], "saturation": [0.0, 2.0],
                "hue": [-JITTER_HUE_MAX, JITTER_HUE_MAX]},
               "brightness or contrast (drawn) = 1 − s, the other = 1 − s·U(0, 1), saturation = 1 + s·U(−1, 1), "
               "hue = 0.5·s·U(−1, 1); order of the 4 operations drawn", "A.ColorJitter (torchvision semantics)",
               warp=(1.0, 3.0)),
        Domain("uniform_noise", "Geirhos et al. 2018", _uniform_draw, _uniform_apply,
               lambda s, f: dict(zip(("fade", "contrast", "width"), map(_r, _uniform_parts(s)), strict=True)),
               {"fade": [0.0, 1.0], "contrast": [1.0, UNIFORM_CONTRAST], "width": [0.0, UNIFORM_WIDTH_MAX]},
               f"s ≤ {UNIFORM_FADE_END:g}: fade a = s/{UNIFORM_FADE_END:g} to grey with contrast 1 − "
               f"{1 - UNIFORM_CONTRAST:g}a; s ≥ {UNIFORM_FADE_END:g}: Geirhos' grey, contrast {UNIFORM_CONTRAST:g} "
               f"image + U(−w, w), w = {UNIFORM_WIDTH_MAX:g}·t², t = (s − {UNIFORM_FADE_END:g})/"
               f"{1 - UNIFORM_FADE_END:g}",
               "Geirhos et al. (2018) uniform noise (grey, contrast 0.3, + U(−w, w))", warp=(1.0, 1.0)),
    )
}  # fmt: skip

#: The 14 corruptions in the paper's order (§4: IN-C noise, blur, weather; Albumentations; Geirhos).
NAMES: tuple[str, ...] = tuple(DOMAINS)
