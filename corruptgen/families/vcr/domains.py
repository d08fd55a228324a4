"""The 14 VCR corruptions as ``draw(rng, shape) -> field`` + ``apply(image, s, field) -> image`` on one strength s.

VCR (Shen et al., WACV 2025, §4) studies Shot, Impulse and Gaussian Noise, Glass, Gaussian, Defocus and Motion Blur,
Brightness and Frost (ImageNet-C), Blur, Median Blur, Hue-Saturation-Value and Color Jitter (Albumentations) and
Uniform Noise (Geirhos et al., NeurIPS 2018). The paper gives no parameter table and the public code's domains stop
short of Δv = 1, so each corruption here has ONE scalar strength ``s ∈ [0, 1]``: ``s = 0`` is the
clean image, every parameter moves monotonically with s, and ``s = 1`` (near) destroys the image (median Δv 0.96–1
over the scikit-image sample photos at 224 px; docs/vcr.md lists the values). Randomness (noise fields, angles,
textures, directions) is drawn once per sample by ``draw`` and reused for every s, so Δv is monotone in s for a fixed
field, which the per-image search in :mod:`.search` relies on. The 8-bit output is rounded stochastically with a fixed
per-sample dither (:func:`.ops_common._u8`), so s → 0 tends to the clean image and Δv is continuous in s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .ops_blur import (
    BLUR_WIDTH_MAX,
    DEFOCUS_ALIAS_MAX,
    DEFOCUS_RADIUS_MAX,
    GAUSSIAN_SIGMA_MAX,
    GLASS_DELTA_MAX,
    GLASS_ITERATIONS,
    GLASS_SIGMA_MAX,
    MEDIAN_K_MAX,
    MOTION_RADIUS,
    MOTION_SIGMA_MAX,
    _blur_width,
    _box_apply,
    _defocus_apply,
    _gaussian_blur_apply,
    _glass_apply,
    _glass_draw,
    _median_apply,
    _median_level,
    _motion_apply,
    _motion_draw,
)
from .ops_colour import (
    BRIGHTNESS_DELTA_MAX,
    BRIGHTNESS_FADE_POWER,
    FROST_IMAGE_END,
    FROST_WEIGHT_END,
    HSV_HUE_MAX,
    HSV_SV_MAX,
    JITTER_HUE_MAX,
    _brightness_apply,
    _brightness_prepare,
    _brightness_scale,
    _frost_apply,
    _frost_draw,
    _frost_weights,
    _hsv_apply,
    _hsv_draw,
    _hsv_prepare,
    _hsv_shifts,
    _jitter_apply,
    _jitter_draw,
    _jitter_factors,
)
from .ops_common import Field, _none_draw, _r
from .ops_noise import (
    GAUSS_SIGMA_MAX,
    IMPULSE_AMOUNT_MAX,
    SHOT_STD_MAX,
    UNIFORM_CONTRAST,
    UNIFORM_FADE_END,
    UNIFORM_WIDTH_MAX,
    _gauss_apply,
    _gauss_draw,
    _impulse_apply,
    _impulse_draw,
    _shot_apply,
    _shot_draw,
    _shot_photons,
    _uniform_apply,
    _uniform_draw,
    _uniform_parts,
)


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
