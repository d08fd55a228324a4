"""Tiny-ImageNet-C severity tables (64 px): the constants of hendrycks/robustness
``ImageNet-C/create_c/make_tinyimagenet_c.py`` (Hendrycks & Dietterich, "Benchmarking Neural Network Robustness to
Common Corruptions and Perturbations", ICLR 2019). Same parameter names as the ImageNet-C tables; the functions are
ImageNet-C's. The script corrupts ImageNet validation bounding-box crops resized to 64×64 (torchvision
``Resize((64, 64))``).

Algorithmic differences from the 224 px script, all expressed as parameters: frost textures are scaled by 0.3 before
the 64×64 crop (:data:`FROST_RESIZE`); the elastic transform's pixel constants are written for a 64 px image
(``IMSIZE * ...``, severity 1 has no displacement field: alpha = sigma = 0); the fog map is 64×64 and the glass-blur
window spans the 64 px image (both follow the image size).
"""

from __future__ import annotations

from ..imagenet_c import DOMAINS as IMAGENET_C_DOMAINS
from ..imagenet_c.tables import Table, _rows

IMSIZE = 64
FROST_RESIZE = 0.3

TABLES: dict[str, Table] = {
    "gaussian_noise": _rows(("sigma",), 0.04, 0.08, 0.12, 0.15, 0.18),
    "shot_noise": _rows(("photons",), 250, 100, 50, 30, 15),
    "impulse_noise": _rows(("amount",), 0.01, 0.02, 0.05, 0.08, 0.14),
    "defocus_blur": _rows(("radius", "alias_sigma"), (0.5, 0.6), (1, 0.1), (1.5, 0.1), (2.5, 0.01), (3, 0.1)),
    "glass_blur": _rows(
        ("sigma", "max_delta", "iterations"), (0.1, 1, 1), (0.5, 1, 1), (0.6, 1, 2), (0.7, 2, 1), (0.9, 2, 2)
    ),
    "motion_blur": _rows(("radius", "sigma"), (10, 1), (10, 1.5), (10, 2), (10, 2.5), (12, 3)),
    "zoom_blur": _rows(("zoom_end", "zoom_step"), (1.06, 0.01), (1.11, 0.01), (1.16, 0.01), (1.21, 0.01), (1.26, 0.01)),
    "snow": _rows(
        ("loc", "scale", "zoom", "threshold", "blur_radius", "blur_sigma", "blend"),
        (0.1, 0.2, 1, 0.6, 8, 3, 0.8),
        (0.1, 0.2, 1, 0.5, 10, 4, 0.8),
        (0.15, 0.3, 1.75, 0.55, 10, 4, 0.7),
        (0.25, 0.3, 2.25, 0.6, 12, 6, 0.65),
        (0.3, 0.3, 1.25, 0.65, 14, 12, 0.6),
    ),
    "frost": _rows(("img_weight", "frost_weight"), (1, 0.3), (0.9, 0.4), (0.8, 0.45), (0.75, 0.5), (0.7, 0.55)),
    "fog": _rows(("strength", "wibbledecay"), (0.4, 3), (0.7, 3), (1, 2.5), (1.5, 2), (2, 1.75)),
    "brightness": _rows(("delta",), 0.1, 0.2, 0.3, 0.4, 0.5),
    "contrast": _rows(("factor",), 0.4, 0.3, 0.2, 0.1, 0.05),
    "elastic_transform": _rows(
        ("alpha", "sigma", "affine"),
        (IMSIZE * 0, IMSIZE * 0, IMSIZE * 0.08),
        (IMSIZE * 0.05, IMSIZE * 0.3, IMSIZE * 0.06),
        (IMSIZE * 0.1, IMSIZE * 0.08, IMSIZE * 0.06),
        (IMSIZE * 0.1, IMSIZE * 0.03, IMSIZE * 0.03),
        (IMSIZE * 0.16, IMSIZE * 0.03, IMSIZE * 0.02),
    ),
    "pixelate": _rows(("factor",), 0.9, 0.8, 0.7, 0.6, 0.5),
    "jpeg_compression": _rows(("quality",), 65, 58, 50, 40, 25),
    "speckle_noise": _rows(("sigma",), 0.15, 0.2, 0.25, 0.3, 0.35),
    "gaussian_blur": _rows(("sigma",), 0.5, 0.75, 1, 1.25, 1.5),
    "spatter": _rows(
        ("loc", "scale", "sigma", "threshold", "intensity", "mode"),
        (0.62, 0.1, 0.7, 0.7, 0.6, 0),
        (0.65, 0.1, 0.8, 0.7, 0.6, 0),
        (0.65, 0.3, 1, 0.69, 0.6, 0),
        (0.65, 0.1, 0.7, 0.68, 0.6, 1),
        (0.65, 0.1, 0.5, 0.67, 0.6, 1),
    ),
    "saturate": _rows(("scale", "shift"), (0.3, 0), (0.1, 0), (2, 0), (5, 0.1), (30, 0.2)),
}

#: ImageNet-C's domains; the elastic smoothing sigma may be 0 here (severity 1: no displacement field).
DOMAINS = {
    **IMAGENET_C_DOMAINS,
    "elastic_transform": {**IMAGENET_C_DOMAINS["elastic_transform"], "sigma": ("float", 0.0, 2000.0)},
}
