"""The 16 synthetic corruptions of Laugros's thesis (Université Grenoble Alpes 2022, Figure 3.2 and the flip of
Tables 3.2–3.3 — also Laugros et al., ICCVW 2019 — and Figure 4.3), registered as ``laugros/<name>``.

Each sample draws its severity uniformly from the figure's range and every other random choice from its own
generator; ``params`` records them all, with ``severity`` in the figure's unit. The figure's pixel sizes
(obstruction, translation, border, the artifacts' pattern) are for 224×224 images: they scale with the short side
(``px = round(severity · short / 224)``, at least 1) and the pixels applied are recorded too. Where the figure's
one-line description leaves a choice open, the choice is written in the corruption's docstring; the reference
implementation consulted is the authors' ``CC_Transform.py`` (bds-ailab/common_corruption_benchmark) in the version
whose ranges are Figure 4.3's (obstruction 47–125, border 9–46, translation 15–62, rotation 7–50, …). Where the
figure and that code differ, the docstring says which is followed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...corruptions.registry import Corruption, Params, register
from . import ops

FAMILY = "laugros"
CITE = "A. Laugros, PhD thesis, Université Grenoble Alpes 2022"
#: The side the figures' pixel sizes are given for.
REFERENCE_SIDE = 224

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


def artifacts(image: np.ndarray, rng: np.random.Generator, lo: int, hi: int) -> Draw:
    """``n`` (15–170) "small dotted lines" (Figures 3.2 and 4.3), drawn as the authors' ``get_artifacts`` draws them,
    on which the range was set (§3.2.2's procedure): each a horizontal dash of 5 px, 3 px tall, at a uniform position
    inside the image; with odds 6/7 (the code's ``randint(0, 6) ≥ 1``) it also has, on each side where they fit,
    1-px ticks one every 2 px (4 on the left, 5 on the right, 25 px in all). All are painted in one gray level drawn
    from 0..255 (the code's one random gray). Pattern pixels are ``unit`` = round(short / 224) px (at least 1): the
    authors' pixels at 224. ``tops`` / ``lefts``: each dash's top row and left column; ``extended``: ticks drawn."""
    n = int(rng.integers(lo, hi + 1))
    h, w = image.shape[:2]
    unit = max(round(_scale(image)), 1)
    tops = rng.integers(0, max(h - ops.ARTIFACT_ROWS * unit, 0) + 1, size=n)
    lefts = rng.integers(0, max(w - len(ops.DASH) * unit, 0) + 1, size=n)
    extended = rng.integers(0, 7, size=n) >= 1
    value = _gray_level(rng)
    out = ops.dashed_lines(image, tops, lefts, extended, unit, value)
    return out, {"severity": n, "count": n, "unit": unit, "gray": value / 255, "tops": tops.tolist(),
                 "lefts": lefts.tolist(), "extended": extended.tolist()}  # fmt: skip


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
    """Figures 3.2 and 4.3's "one horizontal and one vertical translation", each by its own number of pixels drawn
    from 15–62 at 224 px and its own sign: the figure's "for both translations" gives the range of each, and the
    authors' code draws the two independently. Uncovered pixels are black (the code's fill). ``severities``:
    ``[horizontal, vertical]`` at 224 px (``severity``: the larger, one number as every corruption's);
    ``shift_px``: the same in this image's pixels; ``dx`` > 0 moves right, ``dy`` > 0 down."""
    h, w = image.shape[:2]
    severities = [int(v) for v in rng.integers(lo, hi + 1, size=2)]
    shift = [_px(v, image, min(h, w) - 1) for v in severities]
    dx, dy = _sign(rng) * shift[0], _sign(rng) * shift[1]
    return ops.translate(image, dx, dy), {"severity": max(severities), "severities": severities, "shift_px": shift,
                                          "dx": dx, "dy": dy}  # fmt: skip


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
    """A frame t px thick (9–46 at 224 px) along the four edges, filled with "a unique pixel value" (Figure 4.3): one
    gray level drawn from 0..255 (R = G = B), as the authors' code of Figure 4.3's ranges draws it (an earlier
    version filled with 0.5)."""
    severity = int(rng.integers(lo, hi + 1))
    thickness = _px(severity, image, max((min(image.shape[:2]) - 1) // 2, 1))
    value = _gray_level(rng)
    out = ops.fill_border(image, thickness, value)
    return out, {"severity": severity, "thickness_px": thickness, "gray": value / 255}


def shear(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """Horizontal shear about the centre row with factor k (px of horizontal shift per px of height), |k| uniform in
    0.12–0.39, either sign. Figure 4.3 gives only the maximum, 0.39; §3.2.2's range procedure gives every range a
    lower bound where the model starts to lose accuracy, and the authors' code draws ``±randint(12, 39)``. Where the
    two differ we follow the figure: its unit (k, at most 0.39), with the code's 12 : 39 for the minimum (the code
    passes its numbers to torchvision as shear *degrees*, k = tan 12°–39° = 0.21–0.81). The top and bottom rows shift
    most, by ``|k|·(h − 1)/2`` px (recorded); ``degrees`` = atan k."""
    magnitude = float(rng.uniform(lo, hi))
    factor = _sign(rng) * magnitude
    shift = magnitude * (image.shape[0] - 1) / 2
    degrees = math.degrees(math.atan(factor))
    return ops.shear(image, factor), {"severity": magnitude, "factor": factor, "degrees": degrees,
                                      "max_shift_px": shift}  # fmt: skip


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


def flip(image: np.ndarray, rng: np.random.Generator, lo: float, hi: float) -> Draw:
    """The image flipped upside down (top ↔ bottom). The *flip* of §3.2 (Tables 3.2–3.3; Laugros et al., ICCVW 2019)
    has no severity range (§3.2.2: "each of the selected perturbations except flip") and no axis in the text; it is
    vertical here: the thesis treats a horizontal flip as harmless (its trainings flip horizontally at random as
    plain augmentation, §4.2.3 and §4.3.2), while flip costs the standard model 22 % of its accuracy (APP 0.78, Table
    3.2), and its benchmarks count upside-down objects as a shift ("flipped and landed on its roof", §2.3.4.2)."""
    return ops.flip_vertical(image), {"axis": "vertical"}


# name -> (figures, the figure's description, severity range (None: none), its unit, draw function)
Spec = tuple[tuple[str, ...], str, tuple[float, float] | None, str, Callable[..., Draw]]
TABLE: dict[str, Spec] = {
    "gaussian_noise": (("3.2",), "zero-mean Gaussian noise", (0.05, 0.18), "standard deviation", gaussian_noise),
    "blur": (("3.2",), "image interpolated with its five-pass 3×3 box blur", (0.4, 0.95),
             "interpolation factor of the blurred image", blur),
    "artifacts": (("3.2", "4.3"), "small dotted lines: 5-px dashes with dotted ends", (15, 170),
                  "number of artifacts", artifacts),
    "obstruction": (("3.2", "4.3"), "one square filled with one gray value", (47, 125),
                    "square side, px at 224 (scales with the short side)", obstruction),
    "translation": (("3.2", "4.3"), "one horizontal and one vertical translation, each its own shift, black fill",
                    (15, 62), "px moved in each direction, drawn apart, at 224 (scales with the short side)",
                    translation),
    "rotation": (("3.2", "4.3"), "clockwise or anticlockwise rotation, black corners", (7.0, 50.0), "degrees",
                 rotation),
    "brightness": (("3.2",), "one value added to or subtracted from every pixel", (0.16, 0.51), "value", brightness),
    "contrast": (("3.2",), "contrast reduced towards the image mean", (0.33, 0.74), "reduction factor", contrast),
    "color_distortion": (("3.2", "4.3"), "one value added to one RGB channel", (0.09, 0.40), "value added",
                         color_distortion),
    "quantization": (("4.3",), "values quantised to a few levels", (4, 9), "number of levels", quantization),
    "thumbnail_resize": (("4.3",), "bilinear down-resize and back", (1.1, 3.25), "reduction factor",
                         thumbnail_resize),
    "border": (("4.3",), "a frame along the edges filled with one gray value", (9, 46),
               "thickness, px at 224 (scales with the short side)", border),
    "shear": (("4.3",), "horizontal shear about the centre row", (0.12, 0.39),
              "shear factor |k| (figure: maximum pixel translation 0.39; minimum from the authors' code)", shear),
    "backlight": (("4.3",), "two areas, one lightened and one darkened by one value", (0.11, 0.44),
                  "value added / subtracted", backlight),
    "gray_scale": (("4.3",), "image interpolated with its gray-scale version", (0.49, 1.0),
                   "interpolation factor of the gray image", gray_scale),
    "flip": (("3.2",), "the image flipped upside down (§3.2.2, Tables 3.2-3.3)", None, "vertical", flip),
}  # fmt: skip
NAMES: tuple[str, ...] = tuple(TABLE)


def _check(options: dict[str, Any]) -> None:
    if options:
        raise ValueError(f"takes no options (each sample draws its severity), got {dict(options)}")


def _bound(draw: Callable[..., Draw], span: tuple[float, float] | None) -> Callable[..., Draw]:
    lo, hi = span or (0, 0)

    def fn(image: np.ndarray, rng: np.random.Generator) -> Draw:
        return draw(image, rng, lo, hi)

    fn.__doc__ = draw.__doc__
    return fn


for _name, (_figures, _what, _span, _unit, _draw) in TABLE.items():
    register(
        Corruption(
            name=_name,
            family=FAMILY,
            fn=_bound(_draw, _span),
            params={"severity_range": list(_span), "unit": _unit} if _span else {"severity": "none", "axis": _unit},
            cite=f"{CITE}, Figure {' and '.join(_figures)}" if _span else f"{CITE}, §3.2.2 and Tables 3.2-3.3",
            reference=_what,
            fidelity="from the figure's description; open choices in the docstring",
            check=_check,
        )
    )
