"""ImageNet-P perturbation sequences, registered as ``imagenet_p/<name>`` (plus ``imagenet_p/clean``).

Hendrycks & Dietterich, "Benchmarking Neural Network Robustness to Common Corruptions and Perturbations", ICLR 2019
(arXiv:1903.12261); reference ``ImageNet-P/create_p/make_imagenet_p.py``.

Each ``fn(image, rng, *, difficulty=1, crop=None)`` takes the ``Resize(256)`` image (shorter side 256, *not* cropped:
preset ``imagenet_resize``) and returns ``(frames, params)`` with frames a (T, crop, crop, 3) uint8 array; ``crop``
defaults to ``round(shorter side · 224 / 256)`` (224 for the protocol). For the three noise sequences ``difficulty``
(1–3) picks the noise level; for the others it is only the frame stride the evaluation uses and the frames do not
change. Pixel-valued parameters (shifts, blur radii) are the reference's 224-px values at every ``--size``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...corruptions.registry import Corruption, Params, register
from . import functional, geometry
from .functional import NOISE_LEVELS

FAMILY = "imagenet_p"
CITE = "Hendrycks & Dietterich, ICLR 2019 (arXiv:1903.12261); hendrycks/robustness make_imagenet_p.py"

#: Groups as in the paper; the four held-out validation sequences form group 5 (as ImageNet-C's validation set).
CATEGORY_NAMES: dict[int, str] = {1: "noise", 2: "blur", 3: "weather", 4: "digital", 5: "validation"}

#: The 10 test perturbations (the ImageNet-P release) and the 4 validation ones, in paper order.
TEST_PERTURBATIONS = ("gaussian_noise", "shot_noise", "motion_blur", "zoom_blur", "snow", "brightness", "translate",
                      "rotate", "tilt", "scale")  # fmt: skip
VALIDATION_PERTURBATIONS = ("speckle_noise", "gaussian_blur", "spatter", "shear")
DIFFICULTIES = (1, 2, 3)


def crop_size(image: np.ndarray, crop: int | None) -> int:
    """The crop side: ``crop`` or, by default, the protocol's 224/256 of the shorter side (exact for any --size)."""
    if crop is not None:
        return int(crop)
    return max(1, round(min(image.shape[:2]) * 224 / 256))


def _check_difficulty(difficulty: int) -> int:
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty must be 1, 2 or 3, got {difficulty!r}")
    return int(difficulty)


def _clean(
    image: np.ndarray, rng: np.random.Generator, *, crop: int | None = None, **_: Any
) -> tuple[np.ndarray, Params]:
    """The clean reference: ``CenterCrop(crop)`` of the resized image (= frame 0 of the noise sequences)."""
    c = crop_size(image, crop)
    return np.ascontiguousarray(geometry.center_crop(image, c)), {"crop": c}


def _noise(name: str, level_name: str) -> Callable[..., tuple[np.ndarray, Params]]:
    func = getattr(functional, name)

    def fn(image: np.ndarray, rng: np.random.Generator, *, difficulty: int = 1, crop: int | None = None):
        d, c = _check_difficulty(difficulty), crop_size(image, crop)
        level = NOISE_LEVELS[name][d - 1]
        frames = func(np.ascontiguousarray(geometry.center_crop(image, c)), level, rng)
        return frames, {"difficulty": d, level_name: level, "frames": len(frames), "crop": c, "compare": "first"}

    fn.__doc__ = func.__doc__
    return fn


def _sequence(name: str, on: str, parameter: str, values: list) -> Callable[..., tuple[np.ndarray, Params]]:
    """Wrap a non-noise sequence; ``on`` says whether it takes the resized ``image`` or its ``crop`` (and an rng)."""
    func = getattr(functional, name)

    def fn(image: np.ndarray, rng: np.random.Generator, *, difficulty: int = 1, crop: int | None = None):
        d, c = _check_difficulty(difficulty), crop_size(image, crop)
        if on == "image":
            frames = func(image, c)
        else:
            x = np.ascontiguousarray(geometry.center_crop(image, c))
            frames = func(x, rng) if on == "crop+rng" else func(x)
        params = {"difficulty": d, "stride": d, "frames": len(frames), "crop": c, "compare": "consecutive",
                  "parameter": parameter, "values": values}  # fmt: skip
        return frames, params

    fn.__doc__ = func.__doc__
    return fn


def _r(values) -> list:
    return [round(float(v), 6) for v in values]


# name, category, wrapper, declared params, reference expression
_TABLE: list[tuple[str, int, Callable, dict[str, Any], str]] = [
    ("gaussian_noise", 1, _noise("gaussian_noise", "sigma"), {"sigma": [0.03, 0.05, 0.08], "frames": 31},
     "ToPILImage(clamp(ToTensor(crop) + s * randn, 0, 1)), frame 0 clean"),
    ("shot_noise", 1, _noise("shot_noise", "lam"), {"lam": [300, 120, 60], "frames": 31},
     "uint8(255 * clip(poisson(x * L) / L, 0, 1)), frame 0 clean"),
    ("motion_blur", 2, _sequence("motion_blur", "crop", "angle_deg", [(i - 30) * 4 for i in range(31)]),
     {"radius": 10, "sigma": 3, "angle": [-120, 0], "frames": 31}, "MotionBlur(radius=10, sigma=3, angle=(i-30)*4)"),
    ("zoom_blur", 2, _sequence("zoom_blur", "image", "max_zoom", _r(1 + 0.004 * i for i in range(31))),
     {"zoom_step": 0.004, "frames": 31}, "running mean of CenterCrop(affine(img, scale=1+0.004*k)), k <= i"),
    ("snow", 3, _sequence("snow", "crop+rng", "angle_deg", [i * 4 - 150 for i in range(31)]),
     {"loc": 0.05, "scale": 0.3, "zoom": 3, "threshold": 0.5, "radius": 14, "sigma": 4, "frames": 31},
     "ImageNet-C snow layer, MotionBlur(14, 4, angle=4i-150), blend 0.85"),
    ("brightness", 3, _sequence("brightness", "crop", "value_shift", _r((i - 15) * 2 / 100 for i in range(31))),
     {"shift": [-0.3, 0.3], "frames": 31}, "HSV V + (i-15)*2/100 (skimage)"),
    ("translate", 4, _sequence("translate", "image", "shift_px", [i - 20 for i in range(41)]),
     {"shift": [-20, 20], "frames": 41}, "CenterCrop(affine(img, translate=(i-20, 0))), NEAREST"),
    ("rotate", 4, _sequence("rotate", "image", "angle_deg", [i - 15 for i in range(31)]),
     {"angle": [-15, 15], "frames": 31}, "CenterCrop(affine(img, angle=i-15, resample=BILINEAR))"),
    ("tilt", 4, _sequence("tilt", "image", "angle_deg", [i - 15 for i in range(31)]),
     {"angle": [-15, 15], "frames": 31}, "CenterCrop(warpPerspective(img, P2 T RX RY P1))"),
    ("scale", 4, _sequence("scale", "image", "scale", _r((i * 2.5 + 40) / 100 for i in range(31))),
     {"scale": [0.4, 1.15], "frames": 31}, "CenterCrop(affine(img, scale=(2.5i+40)/100, resample=BILINEAR))"),
    ("speckle_noise", 5, _noise("speckle_noise", "sigma"), {"sigma": [0.05, 0.10, 0.15], "frames": 31},
     "uint8(255 * clip(x + x * normal(scale=s), 0, 1)), frame 0 clean"),
    ("gaussian_blur", 5, _sequence("gaussian_blur", "crop", "sigma", _r(0.25 + 0.035 * i for i in range(31))),
     {"sigma": [0.25, 1.3], "truncate": 6.0, "frames": 31}, "gaussian(x, sigma=0.25+0.035i, truncate=6.0)"),
    ("spatter", 5, _sequence("spatter", "crop+rng", "frame", list(range(31))),
     {"loc": 0.65, "scale": 0.27, "sigma": 3.7, "threshold": 0.69, "intensity": 0.6, "frames": 31},
     "ImageNet-C water spatter; liquid convolved along columns with [.05, .1, .15, .7] per frame"),
    ("shear", 5, _sequence("shear", "image", "shear_deg", [i - 15 for i in range(31)]),
     {"shear": [-15, 15], "frames": 31}, "CenterCrop(affine(img, shear=i-15, resample=BILINEAR))"),
]  # fmt: skip


def _check_fixed(options: Mapping[str, Any], allowed: tuple[str, ...] = ("difficulty", "crop")) -> None:
    """A subset's fixed options: ``difficulty`` 1..3 and a positive ``crop``."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"unknown options {unknown}; known: {', '.join(allowed)}")
    if "difficulty" in options:
        _check_difficulty(options["difficulty"])
    crop = options.get("crop")
    if crop is not None and (isinstance(crop, bool) or not isinstance(crop, int) or crop < 1):
        raise ValueError(f"crop must be a positive integer, got {crop!r}")


register(Corruption(name="clean", family=FAMILY, fn=_clean, params={"crop": 224}, cite=CITE,
                    reference="CenterCrop(224)(Resize(256)(img))", fidelity="exact",
                    check=lambda options: _check_fixed(options, ("crop",))))  # fmt: skip
for _name, _category, _fn, _params, _reference in _TABLE:
    register(Corruption(name=_name, family=FAMILY, fn=_fn, params=_params, category=_category, cite=CITE,
                        reference=_reference, fidelity="reference formula; frames as JPEG, not MP4",
                        check=_check_fixed))  # fmt: skip

__all__ = ["CATEGORY_NAMES", "DIFFICULTIES", "FAMILY", "NOISE_LEVELS", "TEST_PERTURBATIONS",
           "VALIDATION_PERTURBATIONS", "crop_size", "functional", "geometry"]  # fmt: skip
