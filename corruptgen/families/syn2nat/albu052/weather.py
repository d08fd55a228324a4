"""0.5.2 weather ports: RandomSunFlare, RandomFog and RandomRain (algorithms or sampling changed in 2.x)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from ._common import Color, ImageOnlyTransform, _hw

# cv2 drawing functions take C ints; 0.5.2's RandomSunFlare could hand them a coordinate beyond this and crash.
_INT32_MAX = 2**31 - 1
# A flare circle centred further than this from the image cannot touch it (radius <= 8 px at 224 px, and far below
# this for any sane image), so clamping coordinates to +-_SAFE_COORD never changes the output.
_SAFE_COORD = 2**24


# ----------------------------------------------------------------------------------------------------------------------
# RandomSunFlare
# ----------------------------------------------------------------------------------------------------------------------

FlareCircle = tuple[float, tuple[int, int], int, Color]


def sun_flare_image(
    img: np.ndarray,
    flare_center_x: int,
    flare_center_y: int,
    src_radius: int,
    src_color: Color,
    circles: Sequence[FlareCircle],
) -> np.ndarray:
    """0.5.2 ``add_sun_flare``: blend the flare circles, then a sun of ``src_radius // 10`` nested discs.

    Each circle is ``(alpha, (x, y), radius, (r, g, b))``. Circles are drawn cumulatively on one overlay and blended
    one after another; the sun discs grow from radius 1 to ``src_radius`` with opacity falling from 1 to 0 as a cube.
    """
    out = img.copy()
    layer = img.copy()
    for alpha, (x, y), radius, color in circles:
        centre = (int(np.clip(x, -_SAFE_COORD, _SAFE_COORD)), int(np.clip(y, -_SAFE_COORD, _SAFE_COORD)))
        cv2.circle(layer, centre, int(radius), tuple(int(c) for c in color), -1)
        cv2.addWeighted(layer, alpha, out, 1 - alpha, 0, out)

    centre = (int(flare_center_x), int(flare_center_y))
    steps = src_radius // 10
    opacity = np.linspace(0.0, 1, num=steps)
    radii = np.linspace(1, src_radius, num=steps)
    layer = out.copy()
    colour = tuple(int(c) for c in src_color)
    for i in range(steps):
        cv2.circle(layer, centre, int(radii[i]), colour, -1)
        a = opacity[steps - 1 - i] ** 3
        cv2.addWeighted(layer, a, out, 1 - a, 0, out)
    return out


class LegacySunFlare(ImageOnlyTransform):
    """albumentations 0.5.2 ``RandomSunFlare``: a bright sun disc plus small flare circles along a line.

    The sun centre is uniform in ``flare_roi``; the sun's opacity ramps (cubically) up to 1.0 at its centre (2.x caps
    it much lower). ``num_flare_circles`` circles (radius 1 or 8 px at 224 px, alpha U(0.05, 0.2), grey-white) sit on
    the line through the centre with direction ``angle * 2pi``, reflected about the centre row, exactly as 0.5.2.

    Overflow: for an angle within ~1e-7 of pi/2 or 3pi/2 the 0.5.2 ``tan()`` line puts a circle centre beyond the C
    int range and ``cv2.circle`` raised (Syn2Nat's loader caught it and re-ran the transform). Here such a draw is
    rejected and **all** parameters are redrawn from the same ``py_random`` stream (up to 16 times, which mirrors the
    loader's retry and samples 0.5.2's conditional distribution); after that coordinates are clamped to +-2**24
    (pixel-identical, since such circles are far off-image). ``apply`` clamps the same way, so it never raises.
    All draws use ``py_random`` in 0.5.2's order.
    """

    _MAX_ATTEMPTS = 16

    def __init__(
        self,
        flare_roi: tuple[float, float, float, float] = (0, 0, 1, 0.5),
        angle_lower: float = 0.0,
        angle_upper: float = 1.0,
        num_flare_circles_lower: int = 6,
        num_flare_circles_upper: int = 10,
        src_radius: int = 200,
        src_color: Color = (255, 255, 255),
        p: float = 1.0,
    ) -> None:
        super().__init__(p=p)
        x0, y0, x1, y1 = flare_roi
        if not (0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1):
            raise ValueError(f"invalid flare_roi {flare_roi}")
        if not 0 <= angle_lower < angle_upper <= 1:
            raise ValueError(f"invalid angle range {(angle_lower, angle_upper)}")
        if not 0 <= num_flare_circles_lower < num_flare_circles_upper:
            raise ValueError(f"invalid circle-count range {(num_flare_circles_lower, num_flare_circles_upper)}")
        self.flare_roi = (float(x0), float(y0), float(x1), float(y1))
        self.angle_lower = float(angle_lower)
        self.angle_upper = float(angle_upper)
        self.num_flare_circles_lower = int(num_flare_circles_lower)
        self.num_flare_circles_upper = int(num_flare_circles_upper)
        self.src_radius = int(src_radius)
        self.src_color: Color = (int(src_color[0]), int(src_color[1]), int(src_color[2]))

    def _draw(self, h: int, w: int) -> dict[str, Any]:
        rnd = self.py_random
        x0, y0, x1, y1 = self.flare_roi
        angle = 2 * math.pi * rnd.uniform(self.angle_lower, self.angle_upper)
        cx = int(w * rnd.uniform(x0, x1))
        cy = int(h * rnd.uniform(y0, y1))
        num_circles = rnd.randint(self.num_flare_circles_lower, self.num_flare_circles_upper)

        slope = math.tan(angle)
        xs = list(range(0, w, 10))
        # the line y = slope*(x - cx) + cy, mirrored about the row cy (0.5.2's float expression, kept verbatim so the
        # truncated pixel coordinates match)
        ys = [2 * cy - (slope * (x - cx) + cy) for x in xs]

        # 0.5.2 draws all three channels from the *red* component's range; kept for fidelity.
        lo_c = max(self.src_color[0] - 50, 0)
        circles: list[FlareCircle] = []
        for _ in range(num_circles):
            alpha = rnd.uniform(0.05, 0.2)
            idx = rnd.randint(0, len(xs) - 1)
            rad = rnd.randint(1, max(h // 100 - 2, 2))
            colour = (
                rnd.randint(lo_c, self.src_color[0]),
                rnd.randint(lo_c, self.src_color[0]),
                rnd.randint(lo_c, self.src_color[0]),
            )
            circles.append((alpha, (int(xs[idx]), int(ys[idx])), rad**3, colour))
        return {"angle": angle, "flare_center_x": cx, "flare_center_y": cy, "circles": circles}

    @staticmethod
    def recorded_params(params: dict[str, Any]) -> dict[str, Any]:
        """The drawn circles as records (``alpha``, ``center``, ``radius``, ``color``): one JSON type per field."""
        circles = [{"alpha": float(a), "center": [int(x), int(y)], "radius": int(r), "color": [int(c) for c in col]}
                   for a, (x, y), r, col in params.get("circles", ())]  # fmt: skip
        return {**params, "circles": circles}

    def get_params_dependent_on_data(self, params: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        h, w = _hw(params)
        for _ in range(self._MAX_ATTEMPTS):
            drawn = self._draw(h, w)
            if all(abs(x) <= _INT32_MAX and abs(y) <= _INT32_MAX for _, (x, y), _, _ in drawn["circles"]):
                return drawn
        return drawn  # still overflowing after all attempts: apply() clamps the coordinates

    def apply(
        self,
        img: np.ndarray,
        flare_center_x: int,
        flare_center_y: int,
        circles: Sequence[FlareCircle],
        **params: Any,
    ) -> np.ndarray:
        return sun_flare_image(img, flare_center_x, flare_center_y, self.src_radius, self.src_color, circles)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return (
            "flare_roi",
            "angle_lower",
            "angle_upper",
            "num_flare_circles_lower",
            "num_flare_circles_upper",
            "src_radius",
            "src_color",
        )


# ----------------------------------------------------------------------------------------------------------------------
# RandomFog
# ----------------------------------------------------------------------------------------------------------------------


def fog_image(
    img: np.ndarray, fog_coef: float, alpha_coef: float, haze_list: np.ndarray | Sequence[Sequence[int]]
) -> np.ndarray:
    """0.5.2 ``add_fog``: blend white discs of diameter ``hw`` one by one, then box-blur.

    ``hw = max(int(W // 3 * fog_coef), 10)``; each haze point ``(x, y)`` is the top-left of a disc of radius
    ``hw // 2`` blended with opacity ``alpha_coef * fog_coef``; the result is blurred with an ``hw // 10`` box.
    """
    w = img.shape[1]
    hw = max(int(w // 3 * fog_coef), 10)
    alpha = alpha_coef * fog_coef
    out = img
    for x, y in np.asarray(haze_list, dtype=np.int64).reshape(-1, 2).tolist():
        layer = out.copy()
        cv2.circle(layer, (x + hw // 2, y + hw // 2), hw // 2, (255, 255, 255), -1)
        out = cv2.addWeighted(layer, alpha, out, 1 - alpha, 0)
    return cv2.blur(out, (hw // 10, hw // 10))


class LegacyFog(ImageOnlyTransform):
    """albumentations 0.5.2 ``RandomFog``: translucent white haze circles spreading out from the centre, then blur.

    ``fog_coef`` ~ U(fog_coef_lower, fog_coef_upper); haze circle positions follow 0.5.2's growing-rectangle loop
    (``hw // 10 * index`` circles per ring, about 18 at 224 px), all from ``py_random`` in 0.5.2's order. 2.x replaced
    this with a much stronger particle algorithm. Params: ``fog_coef`` and ``haze_list`` (Nx2 int array of (x, y)).
    """

    def __init__(
        self,
        fog_coef_lower: float = 0.8,
        fog_coef_upper: float = 1.0,
        alpha_coef: float = 0.08,
        p: float = 1.0,
    ) -> None:
        super().__init__(p=p)
        if not 0 <= fog_coef_lower <= fog_coef_upper <= 1:
            raise ValueError(f"invalid fog_coef range {(fog_coef_lower, fog_coef_upper)}")
        if not 0 <= alpha_coef <= 1:
            raise ValueError(f"alpha_coef must be in [0, 1], got {alpha_coef}")
        self.fog_coef_lower = float(fog_coef_lower)
        self.fog_coef_upper = float(fog_coef_upper)
        self.alpha_coef = float(alpha_coef)

    def get_params_dependent_on_data(self, params: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        h, w = _hw(params)
        rnd = self.py_random
        fog_coef = rnd.uniform(self.fog_coef_lower, self.fog_coef_upper)
        hw = max(1, int(w // 3 * fog_coef))
        left, top = w // 2 - 2 * hw, h // 2 - hw
        points: list[tuple[int, int]] = []
        ring = 1
        while left > -hw or top > -hw:
            for _ in range(hw // 10 * ring):
                x = rnd.randint(left, w - left - hw)
                y = rnd.randint(top, h - top - hw)
                points.append((x, y))
            left -= 3 * hw * w // (h + w)
            top -= 3 * hw * h // (h + w)
            ring += 1
        return {"fog_coef": fog_coef, "haze_list": np.array(points, dtype=np.int64).reshape(-1, 2)}

    def apply(self, img: np.ndarray, fog_coef: float, haze_list: np.ndarray, **params: Any) -> np.ndarray:
        return fog_image(img, fog_coef, self.alpha_coef, haze_list)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("fog_coef_lower", "fog_coef_upper", "alpha_coef")


# ----------------------------------------------------------------------------------------------------------------------
# RandomRain
# ----------------------------------------------------------------------------------------------------------------------


def rain_image(
    img: np.ndarray,
    slant: int,
    drop_length: int,
    drop_width: int,
    drop_color: Color,
    blur_value: int,
    brightness_coefficient: float,
    rain_drops: np.ndarray | Sequence[Sequence[int]],
) -> np.ndarray:
    """0.5.2 ``add_rain``: draw each drop as a line ``(x, y) -> (x + slant, y + drop_length)``, box-blur the image,
    then scale the HLS lightness (uint8 HLS, truncating) by ``brightness_coefficient``."""
    out = img.copy()
    colour = tuple(int(c) for c in drop_color)
    for x, y in np.asarray(rain_drops, dtype=np.int64).reshape(-1, 2).tolist():
        cv2.line(out, (x, y), (x + slant, y + drop_length), colour, drop_width)
    out = cv2.blur(out, (blur_value, blur_value))
    hls = cv2.cvtColor(out, cv2.COLOR_RGB2HLS).astype(np.float32)
    hls[..., 1] *= brightness_coefficient
    return cv2.cvtColor(hls.astype(np.uint8), cv2.COLOR_HLS2RGB)


class LegacyRandomRain(ImageOnlyTransform):
    """albumentations 0.5.2 ``RandomRain`` (default rain type): ``H*W // 600`` slanted drops, blur, darkening.

    ``slant = int(U(slant_lower, slant_upper))``; each drop's top is ``x = randint(slant, W)`` if the slant is
    negative else ``randint(0, W - slant)``, and ``y = randint(0, H - drop_length)`` — all ``py_random`` in 0.5.2's
    order (83 drops at 224 px; 2.x uses H // 3 = 74). Params: ``slant``, ``rain_drops`` (Nx2 int array of (x, y)).

    Kept 0.5.2 quirk: its ``get_params_dependent_on_targets`` never returned ``slant``, so ``apply`` drew every drop
    with its default slant of **+10 px** whatever was sampled; the sampled slant only shifts the drop positions.
    This port does the same (checked byte-identical against the 0.5.2 code).
    """

    # the x-offset 0.5.2 actually drew each drop with (``RandomRain.apply``'s default ``slant=10``)
    DRAWN_SLANT = 10

    def __init__(
        self,
        slant_lower: int = -10,
        slant_upper: int = 10,
        drop_length: int = 20,
        drop_width: int = 1,
        drop_color: Color = (200, 200, 200),
        blur_value: int = 7,
        brightness_coefficient: float = 0.7,
        p: float = 1.0,
    ) -> None:
        super().__init__(p=p)
        if not -20 <= slant_lower <= slant_upper <= 20:
            raise ValueError(f"invalid slant range {(slant_lower, slant_upper)}")
        if not 1 <= drop_width <= 5:
            raise ValueError(f"drop_width must be in [1, 5], got {drop_width}")
        if not 0 <= drop_length <= 100:
            raise ValueError(f"drop_length must be in [0, 100], got {drop_length}")
        if not 0 <= brightness_coefficient <= 1:
            raise ValueError(f"brightness_coefficient must be in [0, 1], got {brightness_coefficient}")
        self.slant_lower = slant_lower
        self.slant_upper = slant_upper
        self.drop_length = int(drop_length)
        self.drop_width = int(drop_width)
        self.drop_color: Color = (int(drop_color[0]), int(drop_color[1]), int(drop_color[2]))
        self.blur_value = int(blur_value)
        self.brightness_coefficient = float(brightness_coefficient)

    def get_params_dependent_on_data(self, params: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        h, w = _hw(params)
        rnd = self.py_random
        slant = int(rnd.uniform(self.slant_lower, self.slant_upper))
        drops = np.empty((h * w // 600, 2), dtype=np.int64)
        for i in range(len(drops)):
            x = rnd.randint(slant, w) if slant < 0 else rnd.randint(0, w - slant)
            drops[i] = (x, rnd.randint(0, h - self.drop_length))
        return {"slant": slant, "rain_drops": drops}

    def apply(self, img: np.ndarray, rain_drops: np.ndarray, **params: Any) -> np.ndarray:
        return rain_image(
            img,
            self.DRAWN_SLANT,
            self.drop_length,
            self.drop_width,
            self.drop_color,
            self.blur_value,
            self.brightness_coefficient,
            rain_drops,
        )

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return (
            "slant_lower",
            "slant_upper",
            "drop_length",
            "drop_width",
            "drop_color",
            "blur_value",
            "brightness_coefficient",
        )
