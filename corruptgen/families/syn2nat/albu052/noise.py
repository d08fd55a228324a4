"""0.5.2 sensor-noise ports: ISONoise (HLS hue/lightness noise) and GaussNoise (variance drawn uniformly)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from ._common import ImageOnlyTransform, _hw, _image_from, _range

# ----------------------------------------------------------------------------------------------------------------------
# ISONoise
# ----------------------------------------------------------------------------------------------------------------------


def _luminance_std(img: np.ndarray) -> float:
    """Population std of the HLS lightness channel (float HLS, L in [0, 1]) — the Poisson scale of 0.5.2 ISONoise."""
    hls = cv2.cvtColor(np.multiply(img, np.float32(1.0 / 255.0), dtype=np.float32), cv2.COLOR_RGB2HLS)
    return float(cv2.meanStdDev(hls)[1][1, 0])


def iso_noise_image(img: np.ndarray, luminance_noise: np.ndarray, color_noise: np.ndarray) -> np.ndarray:
    """0.5.2 ``iso_noise`` given its two random fields.

    Args:
        img: HxWx3 uint8 RGB.
        luminance_noise: HxW Poisson counts, drawn with mean ``std_L * intensity * 255``.
        color_noise: HxW hue offsets in degrees, drawn from ``N(0, color_shift * 360 * intensity)``.
    """
    hls = cv2.cvtColor(np.multiply(img, np.float32(1.0 / 255.0), dtype=np.float32), cv2.COLOR_RGB2HLS)
    hue = hls[..., 0]
    hue += color_noise  # in place, float32 like 0.5.2
    hue[hue < 0] += 360
    hue[hue > 360] -= 360
    # 0.5.2 stopped after one wrap. A hue still negative here (noise below -360 - hue: ~0.1 % of pixels on average
    # at Syn2Nat's settings) gets build-dependent garbage from OpenCV's float HLS->RGB (OpenCV 5's SIMD path returns
    # negative RGB, which 0.5.2's unclipped uint8 cast then wrapped); wrap it into [0, 360) instead.
    negative = hue < 0
    hue[negative] = np.mod(hue[negative], 360)
    light = hls[..., 1]
    light += (luminance_noise / 255) * (1.0 - light)
    rgb = cv2.cvtColor(hls, cv2.COLOR_HLS2RGB) * 255
    # 0.5.2 cast with astype(uint8) (truncation) before clipping; clipping first is identical for in-range values
    # and well defined for the rest.
    return np.clip(rgb, 0, 255).astype(np.uint8)


class LegacyISONoise(ImageOnlyTransform):
    """albumentations 0.5.2 ``ISONoise``: camera sensor noise in HLS space.

    Hue gets ``N(0, color_shift*360*intensity)`` degrees; lightness L gets ``Poisson(std_L*intensity*255)/255*(1-L)``
    where ``std_L`` is the image's lightness std. albumentations 2.x dropped the ``*360`` and ``*255`` factors and is
    about 2x weaker. ``color_shift`` and ``intensity`` come from ``py_random``; both noise fields (params
    ``luminance_noise``, ``color_noise``) from ``random_generator`` (0.5.2 seeded a ``RandomState`` instead).
    Deviation: hues left negative by 0.5.2's single wrap are wrapped into [0, 360) and the result is clipped before
    the uint8 cast (0.5.2 produced build-dependent values for those ~0.1 % of pixels); see :func:`iso_noise_image`.
    """

    def __init__(
        self,
        color_shift: tuple[float, float] = (0.2, 0.5),
        intensity: tuple[float, float] = (0.5, 1.0),
        p: float = 1.0,
    ) -> None:
        super().__init__(p=p)
        self.color_shift = _range(color_shift, "color_shift")
        self.intensity = _range(intensity, "intensity")

    def get_params(self) -> dict[str, Any]:
        return {
            "color_shift": self.py_random.uniform(*self.color_shift),
            "intensity": self.py_random.uniform(*self.intensity),
        }

    def get_params_dependent_on_data(self, params: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        h, w = _hw(params)
        std_l = _luminance_std(_image_from(data))
        rng = self.random_generator
        return {
            "std_l": std_l,
            "luminance_noise": rng.poisson(std_l * params["intensity"] * 255, size=(h, w)),
            "color_noise": rng.normal(0.0, params["color_shift"] * 360 * params["intensity"], size=(h, w)),
        }

    def apply(self, img: np.ndarray, luminance_noise: np.ndarray, color_noise: np.ndarray, **params: Any) -> np.ndarray:
        return iso_noise_image(img, luminance_noise, color_noise)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("color_shift", "intensity")


# ----------------------------------------------------------------------------------------------------------------------
# GaussNoise
# ----------------------------------------------------------------------------------------------------------------------


def gauss_noise_image(img: np.ndarray, gauss: np.ndarray) -> np.ndarray:
    """Add ``gauss`` (same shape as ``img``) to the float32 image, clip to [0, 255], truncate to uint8."""
    return np.clip(img.astype(np.float32) + gauss, 0, 255).astype(np.uint8)


class LegacyGaussNoise(ImageOnlyTransform):
    """albumentations 0.5.2 ``GaussNoise``: additive ``N(mean, sqrt(var))`` noise, per pixel and per channel.

    The *variance* is uniform in ``var_limit`` (``py_random``; 2.x draws the std uniformly); the noise field comes
    from ``random_generator`` (0.5.2 seeded a ``RandomState``). Params: ``var``, ``sigma``, ``gauss`` (HxWx3 array).
    """

    def __init__(self, var_limit: tuple[float, float] = (500.0, 1000.0), mean: float = 0.0, p: float = 1.0) -> None:
        super().__init__(p=p)
        lo, hi = _range(var_limit, "var_limit")
        if lo < 0:
            raise ValueError("var_limit must be non-negative")
        self.var_limit = (lo, hi)
        self.mean = float(mean)

    def get_params_dependent_on_data(self, params: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        var = self.py_random.uniform(*self.var_limit)
        sigma = var**0.5
        gauss = self.random_generator.normal(self.mean, sigma, size=tuple(params["shape"]))
        return {"var": var, "sigma": sigma, "gauss": gauss}

    def apply(self, img: np.ndarray, gauss: np.ndarray, **params: Any) -> np.ndarray:
        return gauss_noise_image(img, gauss)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("var_limit", "mean")
