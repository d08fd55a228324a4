"""0.5.2 geometric ports: ElasticTransform (with ``alpha_affine``), OpticalDistortion (with ``shift_limit``), Flip
(gone in 2.x) and Cutout (boxes clipped at the border)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
from scipy.ndimage import gaussian_filter

from ._common import ImageOnlyTransform, _hw, _pair

# ----------------------------------------------------------------------------------------------------------------------
# ElasticTransform
# ----------------------------------------------------------------------------------------------------------------------


def elastic_image(
    img: np.ndarray,
    affine_jitter: np.ndarray | Sequence[Sequence[float]],
    noise_dx: np.ndarray,
    noise_dy: np.ndarray,
    alpha: float,
    sigma: float,
    interpolation: int = cv2.INTER_LINEAR,
    border_mode: int = cv2.BORDER_REPLICATE,
) -> np.ndarray:
    """0.5.2 ``elastic_transform`` (``approximate=False``) given its random inputs.

    Args:
        affine_jitter: 3x2 offsets added to the three anchor points ``c + (s, s)``, ``c + (s, -s)``, ``c - (s, s)``
            with ``c = (H // 2, W // 2)`` (0.5.2 uses (row, col) order as (x, y); harmless for square images) and
            ``s = min(H, W) // 3``.
        noise_dx, noise_dy: HxW fields uniform in [-1, 1); each is smoothed by a Gaussian of std ``sigma``
            (``scipy.ndimage.gaussian_filter``, reflect mode) and scaled by ``alpha`` to give the displacement.
    """
    h, w = img.shape[:2]
    c = np.float32((h, w)) // 2
    s = min(h, w) // 3
    anchors = np.float32([[c[0] + s, c[1] + s], [c[0] + s, c[1] - s], [c[0] - s, c[1] - s]])
    moved = anchors + np.asarray(affine_jitter, dtype=np.float32)
    matrix = cv2.getAffineTransform(anchors, moved)
    warped = cv2.warpAffine(img, matrix, (w, h), flags=interpolation, borderMode=border_mode)

    dx = np.float32(gaussian_filter(noise_dx, sigma) * alpha)
    dy = np.float32(gaussian_filter(noise_dy, sigma) * alpha)
    gx, gy = np.meshgrid(np.arange(w), np.arange(h))
    map_x = np.float32(gx + dx)
    map_y = np.float32(gy + dy)
    return cv2.remap(warped, map_x, map_y, interpolation=interpolation, borderMode=border_mode)


class LegacyElasticTransform(ImageOnlyTransform):
    """albumentations 0.5.2 ``ElasticTransform`` (``approximate=False``): random affine, then an elastic field.

    The affine moves three anchor points (centre +- ``min(H, W) // 3``) by U(-alpha_affine, alpha_affine) px each
    (2.x removed ``alpha_affine``); the elastic field is uniform noise smoothed by a Gaussian of std ``sigma`` times
    ``alpha`` (under 1 px with Syn2Nat's alpha=1, sigma=50, so this is in effect a random affine warp). Syn2Nat used
    ``border_mode=cv2.BORDER_REPLICATE``. All randomness comes from ``random_generator`` (0.5.2 seeded a
    ``RandomState``); params: ``affine_jitter`` (3x2 list), ``noise_dx`` / ``noise_dy`` (HxW arrays).
    """

    def __init__(
        self,
        alpha: float = 1.0,
        sigma: float = 50.0,
        alpha_affine: float = 50.0,
        border_mode: int = cv2.BORDER_REPLICATE,
        interpolation: int = cv2.INTER_LINEAR,
        p: float = 1.0,
    ) -> None:
        super().__init__(p=p)
        if sigma <= 0 or alpha_affine < 0:
            raise ValueError("sigma must be positive and alpha_affine non-negative")
        self.alpha = float(alpha)
        self.sigma = float(sigma)
        self.alpha_affine = float(alpha_affine)
        self.border_mode = int(border_mode)
        self.interpolation = int(interpolation)

    def get_params_dependent_on_data(self, params: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        h, w = _hw(params)
        rng = self.random_generator
        jitter = rng.uniform(-self.alpha_affine, self.alpha_affine, size=(3, 2)).astype(np.float32)
        return {
            "affine_jitter": jitter.tolist(),
            "noise_dx": rng.uniform(-1.0, 1.0, size=(h, w)),
            "noise_dy": rng.uniform(-1.0, 1.0, size=(h, w)),
        }

    def apply(
        self,
        img: np.ndarray,
        affine_jitter: Sequence[Sequence[float]],
        noise_dx: np.ndarray,
        noise_dy: np.ndarray,
        **params: Any,
    ) -> np.ndarray:
        return elastic_image(
            img, affine_jitter, noise_dx, noise_dy, self.alpha, self.sigma, self.interpolation, self.border_mode
        )

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("alpha", "sigma", "alpha_affine", "border_mode", "interpolation")


# ----------------------------------------------------------------------------------------------------------------------
# OpticalDistortion
# ----------------------------------------------------------------------------------------------------------------------


def optical_distortion_image(
    img: np.ndarray,
    k: float,
    dx: int,
    dy: int,
    interpolation: int = cv2.INTER_LINEAR,
    border_mode: int = cv2.BORDER_REFLECT_101,
) -> np.ndarray:
    """0.5.2 ``optical_distortion``: undistortion remap with camera matrix ``fx=W, fy=H, cx=W/2+dx, cy=H/2+dy`` and
    radial coefficients ``k1 = k2 = k`` (``cv2.initUndistortRectifyMap`` + ``cv2.remap``)."""
    h, w = img.shape[:2]
    camera = np.array([[w, 0, w * 0.5 + dx], [0, h, h * 0.5 + dy], [0, 0, 1]], dtype=np.float32)
    coeffs = np.array([k, k, 0, 0, 0], dtype=np.float32)
    map_x, map_y = cv2.initUndistortRectifyMap(camera, coeffs, None, None, (w, h), cv2.CV_32FC1)
    return cv2.remap(img, map_x, map_y, interpolation=interpolation, borderMode=border_mode)


class LegacyOpticalDistortion(ImageOnlyTransform):
    """albumentations 0.5.2 ``OpticalDistortion``: strong barrel/pincushion distortion with a shifted centre.

    ``k`` ~ U(distort_limit), ``dx``, ``dy`` = round(U(shift_limit)) px (2.x dropped the centre shift); a single float
    limit ``v`` means (-v, v). Draws from ``py_random`` in 0.5.2's order. Params: ``k``, ``dx``, ``dy``.
    """

    def __init__(
        self,
        distort_limit: float | tuple[float, float] = 4.0,
        shift_limit: float | tuple[float, float] = 4.0,
        border_mode: int = cv2.BORDER_REFLECT_101,
        interpolation: int = cv2.INTER_LINEAR,
        p: float = 1.0,
    ) -> None:
        super().__init__(p=p)
        self.distort_limit = _pair(distort_limit, "distort_limit")
        self.shift_limit = _pair(shift_limit, "shift_limit")
        self.border_mode = int(border_mode)
        self.interpolation = int(interpolation)

    def get_params(self) -> dict[str, Any]:
        rnd = self.py_random
        return {
            "k": rnd.uniform(*self.distort_limit),
            "dx": round(rnd.uniform(*self.shift_limit)),
            "dy": round(rnd.uniform(*self.shift_limit)),
        }

    def apply(self, img: np.ndarray, k: float, dx: int, dy: int, **params: Any) -> np.ndarray:
        return optical_distortion_image(img, k, dx, dy, self.interpolation, self.border_mode)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("distort_limit", "shift_limit", "border_mode", "interpolation")


# ----------------------------------------------------------------------------------------------------------------------
# Flip
# ----------------------------------------------------------------------------------------------------------------------


def flip_image(img: np.ndarray, d: int) -> np.ndarray:
    """``cv2.flip``: 0 = vertical (upside down), 1 = horizontal (mirror), -1 = both (180° rotation)."""
    return cv2.flip(img, d)


class LegacyFlip(ImageOnlyTransform):
    """albumentations 0.5.2 ``Flip``: vertical, horizontal or both flips, 1/3 each (``d = randint(-1, 1)``).

    2.x has no ``Flip``. Params: ``d`` (the ``cv2.flip`` code).
    """

    def __init__(self, p: float = 1.0) -> None:
        super().__init__(p=p)

    def get_params(self) -> dict[str, Any]:
        return {"d": self.py_random.randint(-1, 1)}

    def apply(self, img: np.ndarray, d: int, **params: Any) -> np.ndarray:
        return flip_image(img, d)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ()


# ----------------------------------------------------------------------------------------------------------------------
# Cutout
# ----------------------------------------------------------------------------------------------------------------------

Hole = tuple[int, int, int, int]


def cutout_image(img: np.ndarray, holes: Sequence[Hole], fill_value: float | Sequence[float] = 0) -> np.ndarray:
    """Fill each ``(x1, y1, x2, y2)`` box (end-exclusive) with ``fill_value``."""
    out = img.copy()
    for x1, y1, x2, y2 in holes:
        out[y1:y2, x1:x2] = fill_value
    return out


class LegacyCutout(ImageOnlyTransform):
    """albumentations 0.5.2 ``Cutout``: ``num_holes`` boxes of up to ``max_h_size x max_w_size`` set to a constant.

    Per hole: ``y = randint(0, H)``, ``x = randint(0, W)`` (inclusive, ``py_random``); the top-left corner is the
    point minus half the size, clipped to the image, and the bottom-right is that corner plus the size, clipped again.
    Near the bottom/right border the box is therefore cut (75-150 px per side for 150 px holes at 224 px), while
    2.x ``CoarseDropout`` keeps the whole box inside. Deviation: 0.5.2 silently ignored ``fill_value`` (always 0);
    here it is honoured (Syn2Nat uses 0, so its output is unchanged).
    """

    def __init__(
        self,
        num_holes: int = 1,
        max_h_size: int = 150,
        max_w_size: int = 150,
        fill_value: float | Sequence[float] = 0,
        p: float = 1.0,
    ) -> None:
        super().__init__(p=p)
        if num_holes < 0 or max_h_size < 0 or max_w_size < 0:
            raise ValueError("num_holes, max_h_size and max_w_size must be non-negative")
        self.num_holes = int(num_holes)
        self.max_h_size = int(max_h_size)
        self.max_w_size = int(max_w_size)
        self.fill_value = fill_value

    def get_params_dependent_on_data(self, params: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        h, w = _hw(params)
        holes: list[Hole] = []
        for _ in range(self.num_holes):
            y = self.py_random.randint(0, h)
            x = self.py_random.randint(0, w)
            y1 = min(max(y - self.max_h_size // 2, 0), h)
            x1 = min(max(x - self.max_w_size // 2, 0), w)
            holes.append((x1, y1, min(x1 + self.max_w_size, w), min(y1 + self.max_h_size, h)))
        return {"holes": holes}

    def apply(self, img: np.ndarray, holes: Sequence[Hole], **params: Any) -> np.ndarray:
        return cutout_image(img, holes, self.fill_value)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("num_holes", "max_h_size", "max_w_size", "fill_value")
