"""The 40 candidate corruptions of ImageNet-Syn2Nat on albumentations 2.0.8.

Source: Laugros, Caplier, Ospici, "Using Synthetic Corruptions to Measure Robustness to Natural Distribution Shifts",
BMVC 2021, and its reference code (``candidate_corruptions.py``, albumentations 0.5.2). Parameters and the 0.5.2 → 2.x
mapping follow that code and albumentations' changelogs; transforms whose algorithm changed in 2.x are ported from
0.5.2 (:mod:`corruptgen.families.syn2nat.albu052`). Every corruption runs on a 224×224 uint8 RGB crop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import cv2
import numpy as np

from ...corruptions.registry import Corruption, Params, register
from .albu import LAZY_ALBUMENTATIONS as A
from .albu import albumentations_fn

FAMILY = "syn2nat"
CITE = "Laugros et al., BMVC 2021 (candidate_corruptions.py, albumentations 0.5.2)"

#: Categories 1–6 in the paper's order (Laugros et al., BMVC 2021, §4); membership from the reference code's triplets.
CATEGORY_NAMES: dict[int, str] = {
    1: "heterogeneous",
    2: "spatial transformations",
    3: "blurs / fine texture",
    4: "lighting",
    5: "fine-grain artifacts",
    6: "colour",
}

REFLECT = cv2.BORDER_REFLECT_101


def _border(image: np.ndarray, rng: np.random.Generator, **_: Any) -> tuple[np.ndarray, Params]:
    """Keep the central 130×130 and pad back to the input size with black (CenterCrop(130) + PadIfNeeded(224))."""
    h, w = image.shape[:2]
    ch, cw = min(130, h), min(130, w)
    top, left = (h - ch) // 2, (w - cw) // 2
    out = np.zeros_like(image)
    out[top : top + ch, left : left + cw] = image[top : top + ch, left : left + cw]
    return out, {"crop": [ch, cw]}


def _port(name: str) -> Callable[[], Any]:
    """A factory of the albumentations 0.5.2 port ``name`` (:mod:`.albu052`, imported when first built)."""

    def make() -> Any:
        from . import albu052

        return getattr(albu052, name)()

    return make


def _jpeg() -> Any:
    return A.ImageCompression(quality_range=(5, 15), compression_type="jpeg", p=1)


# (code name, snake name, category, reference 0.5.2 call, declared params, factory or fn, fidelity)
_Spec = tuple[str, str, int | None, str, dict[str, Any], Callable[[], Any] | None, str]
_TABLE: list[_Spec] = [
    ("Affines", "affines", 2, "IAAAffine(scale=(0.6, 0.8))", {"scale": [0.6, 0.8]},
     lambda: A.Affine(scale=(0.6, 0.8), keep_ratio=True, interpolation=cv2.INTER_LINEAR, border_mode=REFLECT, p=1),
     "A.Affine, reflect border (imgaug 'reflect' = REFLECT_101)"),
    ("Blur", "blur", None, "Blur(blur_limit=(5, 9))", {"blur_limit": [5, 9]},
     lambda: A.Blur(blur_limit=(5, 9), p=1), "exact"),
    ("Border", "border", None, "Compose([CenterCrop(130, 130), PadIfNeeded(224, 224, border_mode=0, value=0)])",
     {"crop": 130, "fill": 0}, None, "exact (numpy)"),
    ("ChannelDropout", "channel_dropout", 6, "ChannelDropout()", {"channel_drop_range": [1, 1], "fill": 0},
     lambda: A.ChannelDropout(channel_drop_range=(1, 1), fill=0, p=1), "exact"),
    ("CoarseDropout", "coarse_dropout", None, "CoarseDropout(min_holes=16, max_holes=48)",
     {"holes": [16, 48], "hole_size": 8, "fill": 0},
     lambda: A.CoarseDropout(num_holes_range=(16, 48), hole_height_range=(8, 8), hole_width_range=(8, 8), fill=0, p=1),
     "equivalent"),
    ("ColorJitter", "color_jitter", 6, "ColorJitter(brightness=0.7, contrast=0.7, saturation=0.7, hue=0.7)",
     {"brightness": [0.3, 1.7], "contrast": [0.3, 1.7], "saturation": [0.3, 1.7], "hue": [-0.7, 0.7]},
     lambda: A.ColorJitter(brightness=0.7, contrast=0.7, saturation=0.7, hue=0.7, p=1), "exact per sub-operation"),
    ("Cutout", "cutout", 2, "Cutout(num_holes=1, max_h_size=150, max_w_size=150)",
     {"num_holes": 1, "hole_size": 150, "fill": 0}, _port("LegacyCutout"), "port of 0.5.2 (centre anywhere, clipped)"),
    ("Downscale", "downscale", 5, "Downscale(scale_min=0.45, scale_max=0.45)",
     {"scale": 0.45, "interpolation": "nearest"},
     lambda: A.Downscale(
         scale_range=(0.45, 0.45),
         interpolation_pair={"downscale": cv2.INTER_NEAREST, "upscale": cv2.INTER_NEAREST},
         p=1,
     ), "exact"),
    ("ElasticTransform", "elastic_transform", None, "ElasticTransform(border_mode=1, value=0)",
     {"alpha": 1, "sigma": 50, "alpha_affine": 50, "border": "replicate"}, _port("LegacyElasticTransform"),
     "port of 0.5.2 (alpha_affine removed in 2.x)"),
    ("Emboss", "emboss", 3, "IAAEmboss(alpha=(1.0, 1.0))", {"alpha": [1.0, 1.0], "strength": [0.2, 0.7]},
     lambda: A.Emboss(alpha=(1.0, 1.0), strength=(0.2, 0.7), p=1), "exact"),
    ("Flip", "flip", None, "Flip()", {"flip_code": [-1, 0, 1]}, _port("LegacyFlip"), "port of 0.5.2"),
    ("GaussianBlur", "gaussian_blur", None, "GaussianBlur(blur_limit=(9, 13))",
     {"ksize": {"9": 0.2, "11": 0.4, "13": 0.4}, "sigma": "OpenCV default for sigma=0"}, _port("LegacyGaussianBlur"),
     "port of 0.5.2 (exact cv2.GaussianBlur, sigma=0)"),
    ("GaussNoise", "gauss_noise", None, "GaussNoise(var_limit=(500.0, 1000.0), mean=0)",
     {"var": [500.0, 1000.0], "mean": 0}, _port("LegacyGaussNoise"), "port of 0.5.2 (variance drawn uniformly)"),
    ("GridDistortion", "grid_distortion", None, "GridDistortion(distort_limit=1)",
     {"num_steps": 5, "distort_limit": [-1, 1], "border": "reflect_101"},
     lambda: A.GridDistortion(
         num_steps=5, distort_limit=(-1, 1), normalized=False, interpolation=cv2.INTER_LINEAR, border_mode=REFLECT, p=1
     ), "near"),
    ("HueSaturationValue", "hue_saturation_value", None,
     "HueSaturationValue(hue_shift_limit=100, sat_shift_limit=150, val_shift_limit=100)",
     {"hue_shift": [-100, 100], "sat_shift": [-150, 150], "val_shift": [-100, 100]},
     lambda: A.HueSaturationValue(
         hue_shift_limit=(-100, 100), sat_shift_limit=(-150, 150), val_shift_limit=(-100, 100), p=1
     ), "near-exact"),
    ("ImageCompression", "image_compression", None, "ImageCompression(quality_lower=5, quality_upper=15)",
     {"quality": [5, 15]}, _jpeg, "exact"),
    ("InvertImg", "invert_img", None, "InvertImg()", {}, lambda: A.InvertImg(p=1), "exact"),
    ("ISONoise", "iso_noise", 5, "ISONoise(color_shift=(0.2, 0.5), intensity=(0.5, 1.0))",
     {"color_shift": [0.2, 0.5], "intensity": [0.5, 1.0]}, _port("LegacyISONoise"),
     "port of 0.5.2 (2.x is ~2x weaker)"),
    ("JpegCompression", "jpeg_compression", None, "JpegCompression(quality_lower=5, quality_upper=15)",
     {"quality": [5, 15]}, _jpeg, "exact (same corruption as image_compression)"),
    ("MedianBlur", "median_blur", None, "MedianBlur(blur_limit=(5, 11))", {"blur_limit": [5, 11]},
     lambda: A.MedianBlur(blur_limit=(5, 11), p=1), "exact"),
    ("MotionBlur", "motion_blur", None, "MotionBlur(blur_limit=(11, 17))", {"blur_limit": [11, 17]},
     _port("LegacyMotionBlur"), "port of 0.5.2 kernel generator"),
    ("MultiplicativeNoise", "multiplicative_noise", None,
     "MultiplicativeNoise(multiplier=(0.7, 1.3), elementwise=True)",
     {"multiplier": [0.7, 1.3], "per_channel": False, "elementwise": True},
     lambda: A.MultiplicativeNoise(multiplier=(0.7, 1.3), per_channel=False, elementwise=True, p=1), "equivalent"),
    ("OpticalDistortion", "optical_distortion", None, "OpticalDistortion(distort_limit=4, shift_limit=4)",
     {"distort_limit": [-4, 4], "shift_limit": [-4, 4], "border": "reflect_101"}, _port("LegacyOpticalDistortion"),
     "port of 0.5.2 (2.x dropped shift_limit)"),
    ("Perspective", "perspective", 2, "IAAPerspective(scale=(0.1, 0.3))", {"scale": [0.1, 0.3], "fill": 0},
     lambda: A.Perspective(
         scale=(0.1, 0.3), keep_size=True, fit_output=False, border_mode=cv2.BORDER_CONSTANT, fill=0, p=1
     ), "equivalent"),
    ("Posterize", "posterize", 5, "Posterize(num_bits=2)", {"num_bits": 2}, lambda: A.Posterize(num_bits=2, p=1),
     "exact"),
    ("RandomBrightness", "random_brightness", 4, "RandomBrightness(limit=0.9)", {"beta": [-0.9, 0.9]},
     lambda: A.RandomBrightnessContrast(
         brightness_limit=(-0.9, 0.9), contrast_limit=(0, 0), brightness_by_max=True, p=1
     ), "exact"),
    ("RandomContrast", "random_contrast", 4, "RandomContrast(limit=1.5)", {"alpha": [-0.5, 2.5]},
     lambda: A.RandomBrightnessContrast(brightness_limit=(0, 0), contrast_limit=(-1.5, 1.5), p=1), "exact"),
    ("RandomFog", "random_fog", None, "RandomFog(fog_coef_lower=0.8)", {"fog_coef": [0.8, 1.0], "alpha_coef": 0.08},
     _port("LegacyFog"), "port of 0.5.2 (2.x changed the algorithm)"),
    ("RandomGamma", "random_gamma", 4, "RandomGamma(gamma_limit=(300, 1000))", {"gamma": [3.0, 10.0]},
     lambda: A.RandomGamma(gamma_limit=(300, 1000), p=1), "exact"),
    ("RandomGridShuffle", "random_grid_shuffle", None, "RandomGridShuffle(grid=(4, 4))", {"grid": [4, 4]},
     lambda: A.RandomGridShuffle(grid=(4, 4), p=1), "equivalent"),
    ("RandomRain", "random_rain", 3, "RandomRain()",
     {"slant": [-10, 10], "drop_length": 20, "drop_width": 1, "drop_color": [200, 200, 200], "blur_value": 7,
      "brightness_coefficient": 0.7, "drops": "H*W//600"}, _port("LegacyRandomRain"), "port of 0.5.2 (drop count)"),
    ("RandomShadow", "random_shadow", 1,
     "RandomShadow(shadow_roi=(0, 0, 1, 1), num_shadows_lower=2, num_shadows_upper=4, shadow_dimension=8)",
     {"num_shadows": [2, 4], "shadow_dimension": 8, "intensity": 0.5},
     lambda: A.RandomShadow(
         shadow_roi=(0, 0, 1, 1), num_shadows_limit=(2, 4), shadow_dimension=8, shadow_intensity_range=(0.5, 0.5), p=1
     ), "near"),
    ("RandomSnow", "random_snow", None, "RandomSnow()", {"snow_point": [0.1, 0.3], "brightness_coeff": 2.5},
     lambda: A.RandomSnow(snow_point_range=(0.1, 0.3), brightness_coeff=2.5, method="bleach", p=1), "near"),
    ("RandomSunFlare", "random_sun_flare", 1, "RandomSunFlare(src_radius=200)",
     {"flare_roi": [0, 0, 1, 0.5], "src_radius": 200, "angle": [0, 1], "circles": [6, 10]}, _port("LegacySunFlare"),
     "port of 0.5.2 (2.x caps the sun alpha)"),
    ("RGBShift", "rgb_shift", None, "RGBShift(r_shift_limit=200, g_shift_limit=200, b_shift_limit=200)",
     {"shift": [-200, 200]},
     lambda: A.RGBShift(r_shift_limit=(-200, 200), g_shift_limit=(-200, 200), b_shift_limit=(-200, 200), p=1),
     "exact"),
    ("Rotate", "rotate", None, "Rotate(limit=180)", {"angle": [-180, 180], "border": "reflect_101"},
     lambda: A.Rotate(limit=(-180, 180), interpolation=cv2.INTER_LINEAR, border_mode=REFLECT, p=1),
     "equivalent (half-pixel centre convention)"),
    ("Sharpen", "sharpen", 3, "IAASharpen(alpha=(0.3, 0.6), lightness=(0.6, 1.0))",
     {"alpha": [0.3, 0.6], "lightness": [0.6, 1.0]},
     lambda: A.Sharpen(alpha=(0.3, 0.6), lightness=(0.6, 1.0), method="kernel", p=1), "exact"),
    ("Solarize", "solarize", 1, "Solarize(threshold=200)", {"threshold": 200},
     lambda: A.Solarize(threshold_range=(200 / 255, 200 / 255), p=1), "exact"),
    ("ToSepia", "to_sepia", 6, "ToSepia()", {}, lambda: A.ToSepia(p=1), "exact"),
    ("Transpose", "transpose", None, "ShiftScaleRotate(shift_limit=0.7, scale_limit=0.0, rotate_limit=0.0)",
     {"shift": [-0.7, 0.7], "border": "reflect_101"},
     lambda: A.Affine(
         translate_percent=(-0.7, 0.7), scale=1.0, rotate=0, shear=0, interpolation=cv2.INTER_LINEAR,
         border_mode=REFLECT, p=1,
     ), "equivalent (a reflected-border translation, not a transpose)"),
]  # fmt: skip

#: ImageNet-Syn2Nat = these 18, in the reference order (``test_inet_syn2nat.py`` of the reference code).
SYN2NAT_18: tuple[str, ...] = (
    "solarize", "random_sun_flare", "random_shadow",
    "affines", "perspective", "cutout",
    "sharpen", "random_rain", "emboss",
    "random_contrast", "random_brightness", "random_gamma",
    "iso_noise", "downscale", "posterize",
    "color_jitter", "channel_dropout", "to_sepia",
)  # fmt: skip

CODE_NAMES: dict[str, str] = {snake: code for code, snake, *_ in _TABLE}


def _no_options(options: Mapping[str, Any]) -> None:
    if options:
        raise ValueError(f"Syn2Nat corruptions take no options, got {sorted(options)}")


def _register_all() -> tuple[Corruption, ...]:
    out = []
    for _code, snake, category, reference, params, factory, fidelity in _TABLE:
        fn = _border if factory is None else albumentations_fn(factory)
        corruption = register(
            Corruption(
                name=snake,
                family=FAMILY,
                fn=fn,
                params=params,
                category=category,
                cite=CITE,
                reference=reference,
                fidelity=fidelity,
                check=_no_options,
            )
        )
        out.append(corruption)
    assert len(_TABLE) == 40 and all(name in CODE_NAMES for name in SYN2NAT_18)
    return tuple(out)


#: The 40 candidate corruptions in paper order (read by the benchmark without loading every other family).
ALL_CORRUPTIONS = _register_all()
