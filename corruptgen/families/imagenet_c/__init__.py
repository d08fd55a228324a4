"""ImageNet-C: the 15 common corruptions and the 4 held-out ("extra") ones, 5 severities each.

Hendrycks & Dietterich, "Benchmarking Neural Network Robustness to Common Corruptions and Perturbations", ICLR 2019;
reference generator hendrycks/robustness ``ImageNet-C/create_c/make_imagenet_c.py``.
Importing this package registers ``imagenet_c/<name>`` for every name in :data:`TABLES`:
``fn(image_uint8, rng, *, severity=None, **params) -> (uint8 image, params)``. The pure float functions
(``gaussian_noise(x, sigma, rng)``, ``glass_blur(x, sigma, max_delta, iterations, rng)``, ...) take explicit,
continuous parameters and injectable random fields.
"""

from __future__ import annotations

from ._frost import FROST_FILES, frost_dir, load_texture
from ._register import FAMILY, IMAGENET_C, ParameterError, Spec, register_all, resolve
from .blur import (
    defocus_blur,
    disk,
    gaussian_blur,
    glass_blur,
    glass_shifts,
    glass_shuffle,
    motion_blur,
    motion_kernel,
    zoom_blur,
    zoom_factors,
)
from .digital import contrast, elastic_draws, elastic_transform, jpeg_compression, pixelate, saturate
from .noise import gaussian_noise, impulse_noise, shot_noise, speckle_noise
from .tables import COMMON, DOMAINS, EXTRA, GROUPS, SEVERITIES, TABLES
from .weather import brightness, fog, frost, plasma_fractal, snow, spatter

__all__ = [
    "COMMON", "DOMAINS", "EXTRA", "FAMILY", "FROST_FILES", "GROUPS", "IMAGENET_C", "SEVERITIES", "TABLES",
    "ParameterError", "Spec", "brightness", "contrast", "defocus_blur", "disk", "elastic_draws", "elastic_transform",
    "fog", "frost", "frost_dir", "gaussian_blur", "gaussian_noise", "glass_blur", "glass_shifts", "glass_shuffle",
    "impulse_noise", "jpeg_compression", "load_texture", "motion_blur", "motion_kernel", "pixelate", "plasma_fractal",
    "register_all", "resolve",
    "saturate", "shot_noise", "snow", "spatter", "speckle_noise", "zoom_blur", "zoom_factors",
]  # fmt: skip

register_all()

from . import benchmark  # noqa: E402, F401 (registers the family after its corruptions)
