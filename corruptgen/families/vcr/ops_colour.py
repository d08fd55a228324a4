"""VCR colour and weather operations on one strength s: brightness and frost (ImageNet-C), hue-saturation-value and
colour jitter (Albumentations); the table in :mod:`.domains` maps s to their parameters."""

from __future__ import annotations

import cv2
import numpy as np

from ..imagenet_c import _ops as inc_ops
from ..imagenet_c import weather as inc_weather
from ..imagenet_c._frost import REFERENCE_TEXTURES, draw_frost
from .ops_common import Field, _identity_at_zero, _u8, _u8_unit

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
    from albumentations.augmentations.pixel import functional as albu_f  # ~0.8 s to import: only when jittering

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
