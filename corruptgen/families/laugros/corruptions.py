"""The 15 synthetic corruptions of Laugros's thesis (Université Grenoble Alpes 2022, Figure 3.2 — also Laugros et al.,
ICCVW 2019 — and Figure 4.3), registered as ``laugros/<name>``.

Each sample draws its severity uniformly from the figure's range and every other random choice from its own
generator; ``params`` records them all, with ``severity`` in the figure's unit. The figure's pixel sizes
(obstruction, translation, border) are for 224×224 images: they scale with the short side (``px = round(severity ·
short / 224)``, at least 1) and the pixels applied are recorded too. Where the figure's one-line description leaves a
choice open, the choice is written in the corruption's docstring; the reference implementation consulted for those
choices is the authors' ``CC_Transform.py`` (bds-ailab/common_corruption_benchmark).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...corruptions.registry import Corruption, Params, register
from . import ops

FAMILY = "laugros"
CITE = "A. Laugros, PhD thesis, Université Grenoble Alpes 2022"
#: The side the figures' pixel sizes are given for.
REFERENCE_SIDE = 224
#: The gray level of the border frame: mid-gray 0.5 (128), the reference's value.
BORDER_GRAY = 128

Draw = tuple[np.ndarray, Params]


def _scale(image: np.ndarray) -> float:
    return min(image.shape[:2]) / REFERENCE_SIDE


def _px(severity: float, image: np.ndarray, most: int) -> int:
    """A 224-px size in pixels of ``image`` (short side), within ``1..most``."""
    return int(min(max(round(severity * _scale(image)), 1), most))


def _sign(rng: np.random.Generator) -> int:
    return 1 if rng.random() < 0.5 else -1


def _gray_level(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 256))


def gaussian_noise(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """Zero-mean Gaussian noise, i.i.d. per pixel and channel, standard deviation σ (on [0, 1] values)."""
    sigma = float(rng.uniform(lo, hi))
    noise = rng.standard_normal(image.shape, dtype=np.float32)
    return ops.gaussian_noise(image, sigma, noise), {"severity": sigma, "sigma": sigma}


def blur(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """``(1 − α)·x + α·b`` where b is x after five 3×3 mean filters (kept 3×3 at every image size; edges mirrored)."""
    alpha = float(rng.uniform(lo, hi))
    return ops.blend_blur(image, alpha), {"severity": alpha, "alpha": alpha, "passes": ops.BLUR_PASSES}


#: An artifact at 224 px: a horizontal dotted line of 13 one-pixel dots, one every 2 px (25 px long), 3 px tall.
ARTIFACT_DOTS, ARTIFACT_HEIGHT = 13, 3


def artifacts(image: np.ndarray, rng: np.random.Generator, lo: int, hi: int) -> Draw:
    """``n`` small dotted lines: each horizontal, 13 one-pixel dots one every 2 px (25 px) and 3 px tall at 224 px
    (dots and height scale with the short side, at least 2 dots and 1 px), at a uniform position fully inside the
    image; all painted in one gray level drawn uniformly from 0..255 (the reference's single random gray)."""
    n = int(rng.integers(lo, hi + 1))
    h, w = image.shape[:2]
    dots = min(max(round(ARTIFACT_DOTS * _scale(image)), 2), (w + 1) // 2)
    height = min(max(round(ARTIFACT_HEIGHT * _scale(image)), 1), h)
    rows = rng.integers(0, h - height + 1, size=n)
    cols = rng.integers(0, w - 2 * (dots - 1), size=n)
    value = _gray_level(rng)
    out = ops.dotted_lines(image, rows, cols, dots, height, value)
    return out, {"severity": n, "count": n, "dots": dots, "height_px": height, "gray": value / 255,
                 "rows": rows.tolist(), "cols": cols.tolist()}  # fmt: skip


def obstruction(image: np.ndarray, rng: np.random.Generator, lo: int, hi: int) -> Draw:
    """One square of side s (47–125 px at 224 px) at a uniform position fully inside the image, filled with one gray
    level drawn uniformly from 0..255 (R = G = B; the reference fills with one random gray)."""
    severity = int(rng.integers(lo, hi + 1))
    h, w = image.shape[:2]
    size = _px(severity, image, min(h, w))
    top, left = int(rng.integers(0, h - size + 1)), int(rng.integers(0, w - size + 1))
    value = _gray_level(rng)
    out = ops.fill_square(image, top, left, size, value)
    return out, {"severity": severity, "size_px": size, "top": top, "left": left, "gray": value / 255}


def translation(image: np.ndarray, rng: np.random.Generator, lo: int, hi: int) -> Draw:
    """One horizontal and one vertical translation by the same number of pixels n (15–62 at 224 px, "for both
    translations"), each direction's sign drawn independently; uncovered pixels are black (the reference's fill)."""
    severity = int(rng.integers(lo, hi + 1))
    h, w = image.shape[:2]
    n = _px(severity, image, min(h, w) - 1)
    dx, dy = _sign(rng) * n, _sign(rng) * n
    return ops.translate(image, dx, dy), {"severity": severity, "shift_px": n, "dx": dx, "dy": dy}


def rotation(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """Rotation about the centre by 7–50 degrees, clockwise or anticlockwise with equal odds (bilinear, black
    corners as the reference's fill); ``angle`` > 0 is anticlockwise on screen."""
    degrees = float(rng.uniform(lo, hi))
    angle = _sign(rng) * degrees
    direction = "anticlockwise" if angle > 0 else "clockwise"
    return ops.rotate(image, angle), {"severity": degrees, "angle": angle, "direction": direction}


def brightness(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """One value v added to or subtracted from (equal odds) every pixel and channel, clipped."""
    value = float(rng.uniform(lo, hi))
    delta = _sign(rng) * value
    return ops.shift_brightness(image, delta), {"severity": value, "delta": delta}


def contrast(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """Contrast reduced by a factor c: ``(1 − c)·x + c·mean(x)`` (the mean over all pixels and channels)."""
    factor = float(rng.uniform(lo, hi))
    return ops.reduce_contrast(image, factor), {"severity": factor, "factor": factor, "mean": float(image.mean()) / 255}


def color_distortion(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """One value v added (never subtracted: "value added") to every pixel of one RGB channel drawn uniformly."""
    value = float(rng.uniform(lo, hi))
    channel = int(rng.integers(0, 3))
    out = ops.shift_channel(image, channel, value)
    return out, {"severity": value, "delta": value, "channel": channel, "channel_name": "RGB"[channel]}


def quantization(image: np.ndarray, rng: np.random.Generator, lo: int, hi: int) -> Draw:
    """Every value rounded to the nearest of L evenly spaced levels on [0, 1] (0, 1/(L−1), …, 1)."""
    levels = int(rng.integers(lo, hi + 1))
    return ops.quantize(image, levels), {"severity": levels, "levels": levels}


def thumbnail_resize(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """Bilinear resize down by a factor f (to ``int(h/f)``×``int(w/f)``, at least 1 px) and back to the input size."""
    factor = float(rng.uniform(lo, hi))
    h, w = image.shape[:2]
    size = [max(int(h / factor), 1), max(int(w / factor), 1)]
    return ops.thumbnail(image, *size), {"severity": factor, "factor": factor, "size": size}


def border(image: np.ndarray, rng: np.random.Generator, lo: int, hi: int) -> Draw:
    """A frame t px thick (9–46 at 224 px) along the four edges, filled with mid-gray 0.5 (128, the reference's)."""
    severity = int(rng.integers(lo, hi + 1))
    thickness = _px(severity, image, max((min(image.shape[:2]) - 1) // 2, 1))
    out = ops.fill_border(image, thickness, BORDER_GRAY)
    return out, {"severity": severity, "thickness_px": thickness, "gray": BORDER_GRAY / 255}


def shear(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """Horizontal shear about the centre row with factor k (px of horizontal shift per px of height), |k| uniform up
    to the figure's 0.39 and either sign; the top and bottom rows shift most, by ``|k|·(h − 1)/2`` px (recorded)."""
    magnitude = float(rng.uniform(lo, hi))
    factor = _sign(rng) * magnitude
    shift = magnitude * (image.shape[0] - 1) / 2
    return ops.shear(image, factor), {"severity": magnitude, "factor": factor, "max_shift_px": shift}


def backlight(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """The image split into two areas by a vertical or horizontal line (equal odds) at the middle ± up to a fifth of
    the side (the reference's split); v added to one area and subtracted from the other, which one by a coin flip.
    ``delta`` is what the left (x) / top (y) area receives."""
    value = float(rng.uniform(lo, hi))
    axis = "x" if rng.random() < 0.5 else "y"
    side = image.shape[1] if axis == "x" else image.shape[0]
    split = side // 2 + int(rng.integers(-(side // 5), side // 5 + 1))
    delta = _sign(rng) * value
    return ops.backlight(image, axis, split, delta), {"severity": value, "delta": delta, "axis": axis, "split": split}


def gray_scale(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """``α·gray + (1 − α)·x`` (gray = ITU-R 601-2 luma): α = 1 is fully gray (R = G = B); the colour left is
    ``1 − α`` of the original's."""
    alpha = float(rng.uniform(lo, hi))
    return ops.gray_blend(image, alpha), {"severity": alpha, "alpha": alpha}


# name -> (figures, the figure's description, severity range, its unit, draw function)
Spec = tuple[tuple[str, ...], str, tuple[float, float], str, Callable[..., Draw]]
TABLE: dict[str, Spec] = {
    "gaussian_noise": (("3.2",), "zero-mean Gaussian noise", (0.05, 0.18), "standard deviation", gaussian_noise),
    "blur": (("3.2",), "image interpolated with its five-pass 3×3 box blur", (0.4, 0.95),
             "interpolation factor of the blurred image", blur),
    "artifacts": (("3.2", "4.3"), "small dotted lines", (15, 170), "number of artifacts", artifacts),
    "obstruction": (("3.2", "4.3"), "one square filled with one gray value", (47, 125),
                    "square side, px at 224 (scales with the short side)", obstruction),
    "translation": (("3.2", "4.3"), "one horizontal and one vertical translation, black fill", (15, 62),
                    "px moved in each direction at 224 (scales with the short side)", translation),
    "rotation": (("3.2", "4.3"), "clockwise or anticlockwise rotation, black corners", (7.0, 50.0), "degrees",
                 rotation),
    "brightness": (("3.2",), "one value added to or subtracted from every pixel", (0.16, 0.51), "value", brightness),
    "contrast": (("3.2",), "contrast reduced towards the image mean", (0.33, 0.74), "reduction factor", contrast),
    "color_distortion": (("3.2", "4.3"), "one value added to one RGB channel", (0.09, 0.40), "value added",
                         color_distortion),
    "quantization": (("4.3",), "values quantised to a few levels", (4, 9), "number of levels", quantization),
    "thumbnail_resize": (("4.3",), "bilinear down-resize and back", (1.1, 3.25), "reduction factor",
                         thumbnail_resize),
    "border": (("4.3",), "a frame along the edges filled with mid-gray", (9, 46),
               "thickness, px at 224 (scales with the short side)", border),
    "shear": (("4.3",), "horizontal shear about the centre row", (0.0, 0.39),
              "shear factor |k| (figure: maximum pixel translation 0.39)", shear),
    "backlight": (("4.3",), "two areas, one lightened and one darkened by one value", (0.11, 0.44),
                  "value added / subtracted", backlight),
    "gray_scale": (("4.3",), "image interpolated with its gray-scale version", (0.49, 1.0),
                   "interpolation factor of the gray image", gray_scale),
}  # fmt: skip
NAMES: tuple[str, ...] = tuple(TABLE)


def _check(options: dict[str, Any]) -> None:
    if options:
        raise ValueError(f"takes no options (each sample draws its severity), got {dict(options)}")


def _bound(draw: Callable[..., Draw], lo: float, hi: float) -> Callable[..., Draw]:
    def fn(image: np.ndarray, rng: np.random.Generator) -> Draw:
        return draw(image, rng, lo, hi)

    fn.__doc__ = draw.__doc__
    return fn


for _name, (_figures, _what, (_lo, _hi), _unit, _draw) in TABLE.items():
    register(
        Corruption(
            name=_name,
            family=FAMILY,
            fn=_bound(_draw, _lo, _hi),
            params={"severity_range": [_lo, _hi], "unit": _unit},
            cite=f"{CITE}, Figure {' and '.join(_figures)}",
            reference=_what,
            fidelity="from the figure's description; open choices in the docstring",
            check=_check,
        )
    )
