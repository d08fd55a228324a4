"""The pure image operations of the thesis's synthetic corruptions (Laugros, PhD thesis, Université Grenoble Alpes
2022, Figures 3.2 and 4.3): explicit arguments, no randomness, HxWx3 uint8 RGB in and out.

Pixel values are on [0, 1] in the thesis; an 8-bit image holds ``255·v``, and every result is rounded to the nearest
level (``np.rint``) and clipped to ``0..255``. Sizes are in pixels of the image they are applied to.
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

#: ITU-R 601-2 luma weights (PIL's ``convert("L")``, torchvision's ``to_grayscale``).
LUMA = np.array([0.299, 0.587, 0.114])
#: The thesis's blur: five passes of a 3×3 box filter ("a 3x3 filter filled with the value 1", normalised).
BLUR_PASSES = 5


def to_u8(x: np.ndarray) -> np.ndarray:
    """A float image on the 0..255 scale → uint8 (nearest level, clipped)."""
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


def gaussian_noise(image: np.ndarray, sigma: float, noise: np.ndarray) -> np.ndarray:
    """``x + σ·n`` with ``noise`` = n ~ N(0, 1) per pixel and channel (zero mean), clipped."""
    return to_u8(image + np.float32(255.0 * sigma) * noise)


def box_blur(image: np.ndarray, passes: int = BLUR_PASSES) -> np.ndarray:
    """``passes`` 3×3 mean filters in float32 (edges mirrored without repeating the edge pixel, OpenCV's default)."""
    out = image.astype(np.float32)
    for _ in range(passes):
        out = cv2.blur(out, (3, 3), borderType=cv2.BORDER_REFLECT_101)
    return out


def blend_blur(image: np.ndarray, alpha: float) -> np.ndarray:
    """``(1 − α)·x + α·blur(x)``: the image interpolated with its five-pass 3×3 box blur."""
    return to_u8((1.0 - alpha) * image + alpha * box_blur(image))


#: One artifact in pattern pixels (the authors' ``get_artifacts``): a dash of 5 px, 3 px tall, and on each side, when
#: the artifact has them and they fit, 1-px ticks one every 2 px (columns relative to the dash's left end).
DASH = tuple(range(5))
RIGHT_TICKS, LEFT_TICKS = (8, 10, 12, 14, 16), (-8, -6, -4, -2)
ARTIFACT_ROWS = 3


def artifact_columns(left: int, extended: bool, unit: int, width: int) -> np.ndarray:
    """The image columns one artifact paints: its dash (``5·unit`` px from ``left``, clipped to ``width``) and, when
    ``extended``, each side's ticks (``unit`` px wide every ``2·unit``) if that side fits inside ``0..width − 1``."""
    blocks = [np.asarray(DASH)]
    if extended and left + unit * (RIGHT_TICKS[-1] + 1) <= width:
        blocks.append(np.asarray(RIGHT_TICKS))
    if extended and left + unit * LEFT_TICKS[0] >= 0:
        blocks.append(np.asarray(LEFT_TICKS))
    starts = left + unit * np.concatenate(blocks)
    cols = (starts[:, None] + np.arange(unit)).ravel()
    return cols[(cols >= 0) & (cols < width)]


def dashed_lines(image: np.ndarray, tops: np.ndarray, lefts: np.ndarray, extended: np.ndarray, unit: int,
                 value: int) -> np.ndarray:  # fmt: skip
    """The artifacts of :func:`artifact_columns`, each ``3·unit`` rows tall from ``top`` (clipped to the image), all
    painted in the gray level ``value`` (0..255)."""
    out = image.copy()
    h, w = image.shape[:2]
    for top, left, ext in zip(tops, lefts, extended, strict=True):
        out[int(top) : min(int(top) + ARTIFACT_ROWS * unit, h), artifact_columns(int(left), bool(ext), unit, w)] = value
    return out


def fill_square(image: np.ndarray, top: int, left: int, size: int, value: int) -> np.ndarray:
    """The ``size``×``size`` square at ``(top, left)`` set to the gray level ``value``."""
    out = image.copy()
    out[top : top + size, left : left + size] = value
    return out


def fill_border(image: np.ndarray, thickness: int, value: int) -> np.ndarray:
    """A frame ``thickness`` pixels wide along all four edges set to the gray level ``value``."""
    out = image.copy()
    t = thickness
    out[:t], out[-t:], out[:, :t], out[:, -t:] = value, value, value, value
    return out


def flip_vertical(image: np.ndarray) -> np.ndarray:
    """The image upside down: row ``y`` becomes row ``h − 1 − y`` (no interpolation, no pixel value changes)."""
    return np.ascontiguousarray(image[::-1])


def translate(image: np.ndarray, dx: int, dy: int) -> np.ndarray:
    """Content moved ``dx`` px right and ``dy`` px down (negative: left / up); uncovered pixels black."""
    h, w = image.shape[:2]
    out = np.zeros_like(image)
    if abs(dx) < w and abs(dy) < h:
        out[max(dy, 0) : h + min(dy, 0), max(dx, 0) : w + min(dx, 0)] = image[
            max(-dy, 0) : h - max(dy, 0), max(-dx, 0) : w - max(dx, 0)
        ]
    return out


def _warp(image: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Forward affine ``matrix`` (2×3, input → output pixel coordinates), bilinear, black outside the input."""
    h, w = image.shape[:2]
    return cv2.warpAffine(image, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=(0, 0, 0))  # fmt: skip


def rotate(image: np.ndarray, degrees: float) -> np.ndarray:
    """Rotation about the image centre by ``degrees`` (positive: anticlockwise on screen), bilinear, black corners."""
    h, w = image.shape[:2]
    return _warp(image, cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), degrees, 1.0))


def shear(image: np.ndarray, factor: float) -> np.ndarray:
    """Horizontal shear about the centre row: row ``y`` moves ``factor·(y − (h − 1)/2)`` px to the right
    (bilinear, black outside); the centre row stays, the top and bottom rows move most."""
    h = image.shape[0]
    return _warp(image, np.array([[1.0, factor, -factor * (h - 1) / 2], [0.0, 1.0, 0.0]]))


def shift_brightness(image: np.ndarray, delta: float) -> np.ndarray:
    """``x + δ`` on every pixel and channel (δ on [0, 1] pixel values), clipped."""
    return to_u8(image + 255.0 * delta)


def reduce_contrast(image: np.ndarray, factor: float) -> np.ndarray:
    """``(1 − c)·x + c·mean(x)``: every value pulled towards the image's mean (over all pixels and channels)."""
    return to_u8((1.0 - factor) * image + factor * float(image.mean()))


def shift_channel(image: np.ndarray, channel: int, delta: float) -> np.ndarray:
    """``δ`` added to every pixel of one RGB channel, clipped."""
    out = image.copy()
    out[..., channel] = to_u8(image[..., channel] + 255.0 * delta)
    return out


def quantize(image: np.ndarray, levels: int) -> np.ndarray:
    """Each value rounded to the nearest of ``levels`` evenly spaced levels ``k/(levels − 1)``, k = 0..levels − 1."""
    steps = levels - 1
    return to_u8(np.rint(image * (steps / 255.0)) * (255.0 / steps))


def thumbnail(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """Bilinear resize to ``height``×``width`` and back to the input size (PIL's BILINEAR, as torchvision's
    ``resize`` on a PIL image)."""
    h, w = image.shape[:2]
    small = Image.fromarray(image).resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(small.resize((w, h), Image.Resampling.BILINEAR))


def backlight(image: np.ndarray, axis: str, split: int, delta: float) -> np.ndarray:
    """Two areas split at column (``axis="x"``) or row (``"y"``) ``split``: ``+δ`` on the left / top one, ``−δ`` on
    the other, clipped."""
    sign = np.ones(image.shape[1] if axis == "x" else image.shape[0])
    sign[split:] = -1.0
    sign = sign[None, :, None] if axis == "x" else sign[:, None, None]
    return to_u8(image + (255.0 * delta) * sign)


def gray_blend(image: np.ndarray, alpha: float) -> np.ndarray:
    """``α·gray(x) + (1 − α)·x`` with gray = ITU-R 601-2 luma (no intermediate rounding); α = 1 gives R = G = B."""
    gray = (image @ LUMA)[..., None]
    return to_u8(alpha * gray + (1.0 - alpha) * image)
