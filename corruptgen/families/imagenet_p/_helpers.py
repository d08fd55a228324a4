"""Private building blocks of the sequences: ImageMagick motion blur (ImageNet-C's), ``clipped_zoom``, water spatter.

Facts from hendrycks/robustness ``make_imagenet_c.py`` / ``make_imagenet_p.py``. The
ImageNet-C package has spatter only as a whole corruption (field → blur → threshold → water); ImageNet-P needs the
water-drawing step alone on a liquid layer that evolves between frames, so it is written out here. Each function is
pure: the randomness lives in the callers.
"""

from __future__ import annotations

import numpy as np

from ..imagenet_c import motion_blur
from ..imagenet_c.weather import water_relief


def magick_motion_blur(image: np.ndarray, radius: float, sigma: float, angles: np.ndarray) -> np.ndarray:
    """``MagickMotionBlurImage(radius, sigma, angle)`` + 8-bit PNG of a uint8 HxW or HxWxC image, for each angle.

    Uses ImageNet-C's port (:func:`corruptgen.families.imagenet_c.motion_blur`, bit-exact against ImageMagick 6.9
    Q16); returns (len(angles), *image.shape) uint8 — what the reference decodes from ImageMagick's PNG blob.
    """
    x = np.asarray(image, dtype=np.float64) / 255.0
    return np.stack([np.rint(motion_blur(x, radius, sigma, float(a)) * 255).astype(np.uint8)
                     for a in np.atleast_1d(angles)])  # fmt: skip


def clipped_zoom(image: np.ndarray, zoom_factor: float) -> np.ndarray:
    """The reference ``clipped_zoom``: zoom the central ``ceil(h / z)`` square by ``z`` (scipy, order 1), crop ``h``."""
    from scipy.ndimage import zoom as _scizoom  # scipy.ndimage loads on first use: not at `corruptgen list`

    h = image.shape[0]
    ch = int(np.ceil(h / zoom_factor))
    top = (h - ch) // 2
    zoomed = _scizoom(image[top : top + ch, top : top + ch], (zoom_factor, zoom_factor, 1), order=1)
    trim = (zoomed.shape[0] - h) // 2
    return zoomed[trim : trim + h, trim : trim + h]


_WATER_BGR = np.array([175, 238, 238], dtype=np.float64) / 255.0  # "pale turquoise", in the array's channel order


def spatter_water(x: np.ndarray, liquid: np.ndarray, intensity: float) -> np.ndarray:
    """ImageNet-C spatter, mode 0 (water drops), on a float HxWx3 image in [0, 1] and a uint8 HxW liquid layer.

    ``m = liquid · emboss(equalise(blur(min(dist_to_canny_edges, 20))))``, normalised by its maximum and scaled by
    ``intensity``; the result ``clip(x + m · colour, 0, 1)`` (float64, not yet ×255). A layer without any liquid
    leaves the image unchanged (the reference divides 0 by 0 there).
    """
    m = liquid * water_relief(liquid)
    peak = float(m.max())
    m = m / peak * intensity if peak > 0 else np.zeros_like(m)
    return np.clip(x + m[..., None] * _WATER_BGR, 0, 1)
