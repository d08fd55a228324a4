"""Ports of albumentations 0.5.2 transforms whose behaviour changed (or vanished) in albumentations 2.x, as used by
ImageNet-Syn2Nat's reference code (Laugros et al., BMVC 2021). Each ``LegacyXxx`` is an albumentations 2.0.8
``ImageOnlyTransform``; the ``*_image`` functions are their functional cores (conventions: see ``_common``).
"""

from ._common import Color as Color
from .blur import LegacyGaussianBlur, LegacyMotionBlur, gaussian_blur_image, motion_blur_image, motion_blur_kernel
from .geometry import Hole as Hole
from .geometry import (
    LegacyCutout,
    LegacyElasticTransform,
    LegacyFlip,
    LegacyOpticalDistortion,
    cutout_image,
    elastic_image,
    flip_image,
    optical_distortion_image,
)
from .noise import LegacyGaussNoise, LegacyISONoise, gauss_noise_image, iso_noise_image
from .weather import FlareCircle as FlareCircle
from .weather import LegacyFog, LegacyRandomRain, LegacySunFlare, fog_image, rain_image, sun_flare_image

__all__ = [
    "LegacyCutout",
    "LegacyElasticTransform",
    "LegacyFlip",
    "LegacyFog",
    "LegacyGaussNoise",
    "LegacyGaussianBlur",
    "LegacyISONoise",
    "LegacyMotionBlur",
    "LegacyOpticalDistortion",
    "LegacyRandomRain",
    "LegacySunFlare",
    "cutout_image",
    "elastic_image",
    "flip_image",
    "fog_image",
    "gauss_noise_image",
    "gaussian_blur_image",
    "iso_noise_image",
    "motion_blur_image",
    "motion_blur_kernel",
    "optical_distortion_image",
    "rain_image",
    "sun_flare_image",
]
