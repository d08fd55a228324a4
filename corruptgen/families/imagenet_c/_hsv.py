"""HSV value / saturation edits of a uint8 RGB image, bit-identical to the reference's float64 path, 10× faster.

The reference (hendrycks/robustness ``make_imagenet_c.py``, brightness and saturate) runs
``skimage.color.rgb2hsv`` on ``x / 255``, changes V or S, runs ``hsv2rgb`` and casts ``np.uint8(clip(y) · 255)``.
Here the same float64 operations are evaluated, per pixel, only for what the result needs:

* ``hsv2rgb`` gives each channel one of ``v``, ``p = v(1 - s)`` and one "middle" value (``t = v(1 - (1 - f)s)`` in
  even sextants, ``q = v(1 - fs)`` in odd ones), chosen by the sextant ``floor(6h)``; all three lie in [0, 1], so
  the clips are no-ops and each is cast once.
* max/min and the hue branch (blue beats green beats red, hue 0 for grey pixels) are decided on the uint8 values
  (``k / 255`` is monotone in ``k``); the hue numerator is ``x_a - x_b`` with the reference's operands.
* branches are arithmetic selections (``x·1 + y·0`` is exact; the channel roles in wrapping uint8 arithmetic)
  instead of masked assignments; ``(h / 6) % 1`` is ``h / 6 + [h < 0]`` for ``h`` in (-1, 5] (numpy's float
  remainder); ``k / 255`` is one OpenCV table look-up (``cv2.LUT``, float64 table, same values).
* the middle weight ``f`` (odd) or ``1 - f`` (even) is ``|f - [even]|``: ``f - 1 = -(1 - f)`` exactly in IEEE
  arithmetic, so it is the reference's ``1 - f`` bit for bit.
* pixels are processed in chunks of 32,768: ~40 passes per chunk cost more in per-call overhead with smaller
  chunks, and more in cache misses (and, without the render processes' allocator policy, page faults) with one
  pass over a whole 224² image.

Still ~2× corrupt-tta's OpenCV float32 conversion at 224 px (which differs from the reference in 1-4 % of values):
the ~25 float64 passes the exact formulas need are the floor of a numpy implementation. A process that renders many
images of one parameter set evaluates this kernel once on all 2²⁴ colours instead (``_hsv_table``: one gather per
image, the same bytes).

Equality with the float path on all colours with two equal channels, a 86³ colour grid and random images is checked
in ``tests/corruptions/test_imagenet_c_fast_paths.py``, on all 2²⁴ colours by ``scripts/check_hsv_exhaustive.py``.
"""

from __future__ import annotations

import cv2
import numpy as np

_CHUNK = 32768
_UNIT = np.arange(256) / 255.0
# per output channel (r, g, b) and sextant floor(6h) (6 is the reference's 6 % 6 = 0): 1 where it takes v / p
_TAKES_V = tuple(np.array([(k % 6) in sextants for k in range(256)], dtype=np.uint8)
                 for sextants in ((0, 5), (1, 2), (3, 4)))  # fmt: skip
_TAKES_P = tuple(np.array([(k % 6) in sextants for k in range(256)], dtype=np.uint8)
                 for sextants in ((2, 3), (4, 5), (0, 1)))  # fmt: skip


def hsv_adjust_uint8(image: np.ndarray, *, value_shift: float = 0.0, sat_scale: float = 1.0,
                     sat_shift: float = 0.0) -> np.ndarray:  # fmt: skip
    """``uint8(clip(hsv2rgb(h, clip(s · sat_scale + sat_shift), clip(v + value_shift))) · 255)`` of an HxWx3 uint8
    image, with skimage's rgb2hsv/hsv2rgb formulas in float64 on ``image / 255``; the saturation edit is skipped
    when ``(sat_scale, sat_shift) == (1, 0)`` and the value edit when ``value_shift == 0``, as the reference's
    brightness (V only) and saturate (S only) do."""
    h, w = image.shape[:2]
    n = h * w
    planes = [p.reshape(n) for p in cv2.split(np.ascontiguousarray(image, dtype=np.uint8))]
    out = np.empty((3, n), dtype=np.uint8)
    edit_s = (sat_scale, sat_shift) != (1.0, 0.0)
    for start in range(0, n, _CHUNK):
        chunk = slice(start, start + _CHUNK)
        _adjust([p[chunk] for p in planes], out[:, chunk], value_shift, sat_scale, sat_shift, edit_s)
    return cv2.merge(list(out)).reshape(image.shape)


def _unit(values: np.ndarray) -> np.ndarray:
    """``values / 255`` in float64 of a uint8 array, as one table look-up."""
    return cv2.LUT(values, _UNIT).reshape(values.shape)


def _adjust(planes: list[np.ndarray], out: np.ndarray, value_shift: float, sat_scale: float, sat_shift: float,
            edit_s: bool) -> None:  # fmt: skip
    r8, g8, b8 = planes
    hi8 = np.maximum(np.maximum(r8, g8), b8)
    lo8 = np.minimum(np.minimum(r8, g8), b8)
    # the hue branch as 0/1 uint8: blue max beats green max beats red max; grey pixels get no branch offset
    grey = (hi8 == lo8).view(np.uint8)
    bmax = (b8 == hi8).view(np.uint8)
    gmax = ((g8 == hi8).view(np.uint8) > bmax).view(np.uint8)
    rmax = 1 - (bmax | gmax)
    bmax &= 1 - grey
    # numerator x_a - x_b: (g - b) red max, (b - r) green max, (r - g) blue max
    a8 = g8 * rmax + b8 * gmax + r8 * bmax
    b8_ = b8 * rmax + r8 * gmax + g8 * bmax
    v = _unit(hi8)
    delta = v - _unit(lo8)
    hue = _unit(a8)
    hue -= _unit(b8_)
    hue /= np.add(delta, grey)  # grey: 0 / 1 = 0, where the reference sets h = 0
    hue += 4 * bmax + 2 * gmax
    hue /= 6.0
    hue += hue < 0.0
    hue *= 6.0
    sextant = np.floor(hue)
    frac = np.subtract(hue, sextant, out=hue)
    sextant = sextant.astype(np.uint8)
    sat = delta / np.add(v, hi8 == 0)  # 0 / 0 → 0, as the reference
    if edit_s:
        sat *= sat_scale
        sat += sat_shift
        np.clip(sat, 0, 1, out=sat)
    if value_shift != 0.0:
        v += value_shift
        np.clip(v, 0, 1, out=v)
    # middle value: q = v(1 - f·s) in odd sextants, t = v(1 - (1 - f)·s) in even ones
    frac -= (sextant & 1) ^ 1
    weight = np.abs(frac, out=frac)
    weight *= sat
    mid = np.subtract(1.0, weight, out=weight)
    mid *= v
    p = np.subtract(1.0, sat, out=sat)
    p *= v
    v8, mid8, p8 = (np.multiply(x, 255, out=x).astype(np.uint8) for x in (v, mid, p))
    # out = mid + (v - mid)·[takes v] + (p - mid)·[takes p], in wrapping uint8 arithmetic
    v8 -= mid8
    p8 -= mid8
    for channel in range(3):
        row = out[channel]
        np.multiply(v8, cv2.LUT(sextant, _TAKES_V[channel]).reshape(sextant.shape), out=row)
        row += mid8
        row += p8 * cv2.LUT(sextant, _TAKES_P[channel]).reshape(sextant.shape)
