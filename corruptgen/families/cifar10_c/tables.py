"""CIFAR-10-C severity tables (32 px): the constants of hendrycks/robustness ``ImageNet-C/create_c/make_cifar_c.py``
(Hendrycks & Dietterich, "Benchmarking Neural Network Robustness to Common Corruptions and Perturbations", ICLR 2019,
Appendix: CIFAR-10-C). Same parameter names as the ImageNet-C tables; the functions are ImageNet-C's.

Algorithmic differences from the 224 px script, all expressed as parameters: frost textures are scaled by 0.2 before
the 32×32 crop (:data:`FROST_RESIZE`); the elastic transform's pixel constants are written for a 32 px image
(``IMSIZE * ...``, severity 1 has no displacement field at all: alpha = sigma = 0); the fog map is 32×32 and the
glass-blur window spans the 32 px image (both follow the image size).
"""

from __future__ import annotations

from ..imagenet_c import DOMAINS as IMAGENET_C_DOMAINS
from ..imagenet_c.tables import Table, _rows

IMSIZE = 32
FROST_RESIZE = 0.2

TABLES: dict[str, Table] = {
    "gaussian_noise": _rows(("sigma",), 0.04, 0.06, 0.08, 0.09, 0.10),
    "shot_noise": _rows(("photons",), 500, 250, 100, 75, 50),
    "impulse_noise": _rows(("amount",), 0.01, 0.02, 0.03, 0.05, 0.07),
    "defocus_blur": _rows(("radius", "alias_sigma"), (0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1, 0.2), (1.5, 0.1)),
    "glass_blur": _rows(
        ("sigma", "max_delta", "iterations"), (0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2), (0.4, 1, 2)
    ),
    "motion_blur": _rows(("radius", "sigma"), (6, 1), (6, 1.5), (6, 2), (8, 2), (9, 2.5)),
    "zoom_blur": _rows(("zoom_end", "zoom_step"), (1.06, 0.01), (1.11, 0.01), (1.16, 0.01), (1.21, 0.01), (1.26, 0.01)),
    "snow": _rows(
        ("loc", "scale", "zoom", "threshold", "blur_radius", "blur_sigma", "blend"),
        (0.1, 0.2, 1, 0.6, 8, 3, 0.95),
        (0.1, 0.2, 1, 0.5, 10, 4, 0.9),
        (0.15, 0.3, 1.75, 0.55, 10, 4, 0.9),
        (0.25, 0.3, 2.25, 0.6, 12, 6, 0.85),
        (0.3, 0.3, 1.25, 0.65, 14, 12, 0.8),
    ),
    "frost": _rows(("img_weight", "frost_weight"), (1, 0.2), (1, 0.3), (0.9, 0.4), (0.85, 0.4), (0.75, 0.45)),
    "fog": _rows(("strength", "wibbledecay"), (0.2, 3), (0.5, 3), (0.75, 2.5), (1, 2), (1.5, 1.75)),
    "brightness": _rows(("delta",), 0.05, 0.1, 0.15, 0.2, 0.3),
    "contrast": _rows(("factor",), 0.75, 0.5, 0.4, 0.3, 0.15),
    "elastic_transform": _rows(
        ("alpha", "sigma", "affine"),
        (IMSIZE * 0, IMSIZE * 0, IMSIZE * 0.08),
        (IMSIZE * 0.05, IMSIZE * 0.2, IMSIZE * 0.07),
        (IMSIZE * 0.08, IMSIZE * 0.06, IMSIZE * 0.06),
        (IMSIZE * 0.1, IMSIZE * 0.04, IMSIZE * 0.05),
        (IMSIZE * 0.1, IMSIZE * 0.03, IMSIZE * 0.03),
    ),
    "pixelate": _rows(("factor",), 0.95, 0.9, 0.85, 0.75, 0.65),
    "jpeg_compression": _rows(("quality",), 80, 65, 58, 50, 40),
    "speckle_noise": _rows(("sigma",), 0.06, 0.1, 0.12, 0.16, 0.2),
    "gaussian_blur": _rows(("sigma",), 0.4, 0.6, 0.7, 0.8, 1),
    "spatter": _rows(
        ("loc", "scale", "sigma", "threshold", "intensity", "mode"),
        (0.62, 0.1, 0.7, 0.7, 0.5, 0),
        (0.65, 0.1, 0.8, 0.7, 0.5, 0),
        (0.65, 0.3, 1, 0.69, 0.5, 0),
        (0.65, 0.1, 0.7, 0.69, 0.6, 1),
        (0.65, 0.1, 0.5, 0.68, 0.6, 1),
    ),
    "saturate": _rows(("scale", "shift"), (0.3, 0), (0.1, 0), (1.5, 0), (2, 0.1), (2.5, 0.2)),
}

#: ImageNet-C's domains; the elastic smoothing sigma may be 0 here (severity 1: no displacement field).
DOMAINS = {
    **IMAGENET_C_DOMAINS,
    "elastic_transform": {**IMAGENET_C_DOMAINS["elastic_transform"], "sigma": ("float", 0.0, 2000.0)},
}
