"""ImageNet-C severity tables (224 px), groups and parameter domains.

Values are the constants of hendrycks/robustness ``ImageNet-C/create_c/make_imagenet_c.py`` (Hendrycks & Dietterich,
ICLR 2019; the script's ``c = [...]`` lists). One dict per corruption maps severity 1..5 to its named parameters.
Order: the reference script's dict order (15 common), then the 4 held-out validation corruptions ("extra").
"""

from __future__ import annotations

from typing import Any

Table = dict[int, dict[str, Any]]


def _rows(names: tuple[str, ...], *rows: tuple[Any, ...] | Any) -> Table:
    """Severity table from five reference rows (scalars for one-parameter corruptions)."""
    assert len(rows) == 5
    return {
        s: dict(zip(names, row if isinstance(row, tuple) else (row,), strict=True)) for s, row in enumerate(rows, 1)
    }


# ---------------------------------------------------------------- noise
GAUSSIAN_NOISE = _rows(("sigma",), 0.08, 0.12, 0.18, 0.26, 0.38)
SHOT_NOISE = _rows(("photons",), 60, 25, 12, 5, 3)  # poisson(x * photons) / photons
IMPULSE_NOISE = _rows(("amount",), 0.03, 0.06, 0.09, 0.17, 0.27)  # skimage random_noise(mode="s&p")
# ---------------------------------------------------------------- blur
DEFOCUS_BLUR = _rows(("radius", "alias_sigma"), (3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5))
GLASS_BLUR = _rows(("sigma", "max_delta", "iterations"), (0.7, 1, 2), (0.9, 2, 1), (1, 2, 3), (1.1, 3, 2), (1.5, 4, 2))
MOTION_BLUR = _rows(("radius", "sigma"), (10, 3), (15, 5), (15, 8), (15, 12), (20, 15))  # angle ~ U(-45, 45)
# zoom factors are np.arange(1, zoom_end, zoom_step) exactly as the reference builds them
ZOOM_BLUR = _rows(("zoom_end", "zoom_step"), (1.11, 0.01), (1.16, 0.01), (1.21, 0.02), (1.26, 0.02), (1.31, 0.03))
# ---------------------------------------------------------------- weather
SNOW = _rows(
    ("loc", "scale", "zoom", "threshold", "blur_radius", "blur_sigma", "blend"),
    (0.1, 0.3, 3, 0.5, 10, 4, 0.8),
    (0.2, 0.3, 2, 0.5, 12, 4, 0.7),
    (0.55, 0.3, 4, 0.9, 12, 8, 0.7),
    (0.55, 0.3, 4.5, 0.85, 12, 8, 0.65),
    (0.55, 0.3, 2.5, 0.85, 12, 12, 0.55),
)  # angle ~ U(-135, -45)
FROST = _rows(("img_weight", "frost_weight"), (1, 0.4), (0.8, 0.6), (0.7, 0.7), (0.65, 0.7), (0.6, 0.75))
FOG = _rows(("strength", "wibbledecay"), (1.5, 2), (2.0, 2), (2.5, 1.7), (2.5, 1.5), (3.0, 1.4))
BRIGHTNESS = _rows(("delta",), 0.1, 0.2, 0.3, 0.4, 0.5)
# ---------------------------------------------------------------- digital
CONTRAST = _rows(("factor",), 0.4, 0.3, 0.2, 0.1, 0.05)
# the reference's "244 * (...)" (its comment: "244 should have been 224"); pixel values for a 224 px image
ELASTIC_TRANSFORM = _rows(
    ("alpha", "sigma", "affine"),
    (244 * 2, 244 * 0.7, 244 * 0.1),
    (244 * 2, 244 * 0.08, 244 * 0.2),
    (244 * 0.05, 244 * 0.01, 244 * 0.02),
    (244 * 0.07, 244 * 0.01, 244 * 0.02),
    (244 * 0.12, 244 * 0.01, 244 * 0.02),
)
PIXELATE = _rows(("factor",), 0.6, 0.5, 0.4, 0.3, 0.25)
JPEG_COMPRESSION = _rows(("quality",), 25, 18, 15, 10, 7)
# ---------------------------------------------------------------- extra (the reference's validation corruptions)
SPECKLE_NOISE = _rows(("sigma",), 0.15, 0.2, 0.35, 0.45, 0.6)
GAUSSIAN_BLUR = _rows(("sigma",), 1, 2, 3, 4, 6)
SPATTER = _rows(
    ("loc", "scale", "sigma", "threshold", "intensity", "mode"),
    (0.65, 0.3, 4, 0.69, 0.6, 0),
    (0.65, 0.3, 3, 0.68, 0.6, 0),
    (0.65, 0.3, 2, 0.68, 0.5, 0),
    (0.65, 0.3, 1, 0.65, 1.5, 1),
    (0.67, 0.4, 1, 0.65, 1.5, 1),
)  # mode 0: water (pale turquoise), 1: mud (brown)
SATURATE = _rows(("scale", "shift"), (0.3, 0), (0.1, 0), (2, 0), (5, 0.1), (20, 0.2))  # S -> S * scale + shift

TABLES: dict[str, Table] = {
    "gaussian_noise": GAUSSIAN_NOISE,
    "shot_noise": SHOT_NOISE,
    "impulse_noise": IMPULSE_NOISE,
    "defocus_blur": DEFOCUS_BLUR,
    "glass_blur": GLASS_BLUR,
    "motion_blur": MOTION_BLUR,
    "zoom_blur": ZOOM_BLUR,
    "snow": SNOW,
    "frost": FROST,
    "fog": FOG,
    "brightness": BRIGHTNESS,
    "contrast": CONTRAST,
    "elastic_transform": ELASTIC_TRANSFORM,
    "pixelate": PIXELATE,
    "jpeg_compression": JPEG_COMPRESSION,
    "speckle_noise": SPECKLE_NOISE,
    "gaussian_blur": GAUSSIAN_BLUR,
    "spatter": SPATTER,
    "saturate": SATURATE,
}

#: Group of each corruption (bethgelab/imagecorruptions ``get_corruption_names``; the 4 validation ones: "extra").
GROUPS: dict[str, str] = {
    **dict.fromkeys(("gaussian_noise", "shot_noise", "impulse_noise"), "noise"),
    **dict.fromkeys(("defocus_blur", "glass_blur", "motion_blur", "zoom_blur"), "blur"),
    **dict.fromkeys(("snow", "frost", "fog", "brightness"), "weather"),
    **dict.fromkeys(("contrast", "elastic_transform", "pixelate", "jpeg_compression"), "digital"),
    **dict.fromkeys(("speckle_noise", "gaussian_blur", "spatter", "saturate"), "extra"),
}

COMMON: tuple[str, ...] = tuple(name for name in TABLES if GROUPS[name] != "extra")
EXTRA: tuple[str, ...] = tuple(name for name in TABLES if GROUPS[name] == "extra")
SEVERITIES: tuple[int, ...] = (1, 2, 3, 4, 5)

# Domain of every explicit parameter: (kind, low, high), both bounds inclusive; kind "float" or "int"; a tuple of
# allowed values for choices. Drawn parameters (angle, frost texture/crop) may be given explicitly to fix them.
Domain = tuple[str, float | None, float | None] | tuple[Any, ...]
_POS = ("float", 0.0, None)
DOMAINS: dict[str, dict[str, Domain]] = {
    "gaussian_noise": {"sigma": ("float", 0.0, 10.0)},
    "shot_noise": {"photons": ("float", 1e-3, 1e6)},
    "impulse_noise": {"amount": ("float", 0.0, 1.0)},
    "defocus_blur": {"radius": ("float", 0.0, 100.0), "alias_sigma": ("float", 0.0, 10.0)},
    "glass_blur": {"sigma": ("float", 0.0, 20.0), "max_delta": ("int", 1, 32), "iterations": ("int", 0, 20)},
    "motion_blur": {"radius": ("float", 0.1, 100.0), "sigma": ("float", 1e-3, 100.0), "angle": ("float", -360, 360)},
    "zoom_blur": {"zoom_end": ("float", 1.0, 4.0), "zoom_step": ("float", 1e-3, 1.0)},
    "snow": {
        "loc": ("float", -1.0, 2.0),
        "scale": ("float", 0.0, 2.0),
        "zoom": ("float", 1.0, 16.0),
        "threshold": ("float", 0.0, 1.0),
        "blur_radius": ("float", 0.1, 100.0),
        "blur_sigma": ("float", 1e-3, 100.0),
        "blend": ("float", 0.0, 1.0),
        "angle": ("float", -360, 360),
    },
    "frost": {
        "img_weight": ("float", 0.0, 2.0),
        "frost_weight": ("float", 0.0, 2.0),
        "texture": ("int", 0, 5),
        "top": ("int", 0, None),
        "left": ("int", 0, None),
    },
    "fog": {"strength": ("float", 0.0, 20.0), "wibbledecay": ("float", 1.0, 10.0)},
    "brightness": {"delta": ("float", -1.0, 1.0)},
    "contrast": {"factor": ("float", 0.0, 10.0)},
    "elastic_transform": {"alpha": ("float", 0.0, 5000.0), "sigma": ("float", 1e-3, 2000.0), "affine": _POS},
    "pixelate": {"factor": ("float", 1e-3, 1.0)},
    "jpeg_compression": {"quality": ("int", 1, 100)},
    "speckle_noise": {"sigma": ("float", 0.0, 10.0)},
    "gaussian_blur": {"sigma": ("float", 0.0, 100.0)},
    "spatter": {
        "loc": ("float", -1.0, 2.0),
        "scale": ("float", 0.0, 2.0),
        "sigma": ("float", 0.0, 50.0),
        "threshold": ("float", 0.0, 1.0),
        "intensity": ("float", 0.0, 10.0),
        "mode": (0, 1),
    },
    "saturate": {"scale": ("float", 0.0, 100.0), "shift": ("float", -1.0, 1.0)},
}
