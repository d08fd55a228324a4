"""HSV value / saturation edits of a uint8 RGB image, bit-identical to the reference's float64 path, 10× faster.

The reference (hendrycks/robustness ``make_imagenet_c.py``, brightness and saturate) runs
``skimage.color.rgb2hsv`` on ``x / 255``, changes V or S, runs ``hsv2rgb`` and casts ``np.uint8(clip(y) · 255)``.
Here the same float64 operations are evaluated, per pixel, only for what the result needs:

* ``hsv2rgb`` gives each channel one of ``v``, ``p = v(1 - s)`` and one "middle" value (``t = v(1 - (1 - f)s)`` in
  even sextants, ``q = v(1 - fs)`` in odd ones), chosen by the sextant ``floor(6h)``; all three lie in [0, 1], so
  the clips are no-ops and each is cast once.
* max/min and the hue branch (blue beats green beats red, hue 0 for grey pixels) are decided on the uint8 values
  (``k / 255`` is monotone in ``k``); the hue numerator is ``x_a - x_b`` with the reference's operands.
* branches are arithmetic selections (``x·1 + y·0`` is exact) instead of masked assignments;
  ``(h / 6) % 1`` is ``h / 6 + [h < 0]`` for ``h`` in (-1, 5] (numpy's float remainder).
* the middle weight ``f`` (odd) or ``1 - f`` (even) is ``|f - [even]|``: ``f - 1 = -(1 - f)`` exactly in IEEE
  arithmetic, so it is the reference's ``1 - f`` bit for bit.
* pixels are processed in chunks of 32,768: ~40 float passes over a 224² image cost more in per-call overhead with
  smaller chunks, and more in cache misses (and, without the render processes' allocator policy, page faults)
  with one pass over the whole image.

Equality with the float path on all colours with two equal channels, a 86³ colour grid and random images is checked
in ``tests/corruptions/test_imagenet_c.py``.
"""

from __future__ import annotations

import numpy as np

_CHUNK = 32768
_F64 = np.float64
# per output channel (r, g, b): sextants (as bits 1 << hi) where it takes v, and where it takes p
_V_SEXTANTS = (0b100001, 0b000110, 0b011000)
_P_SEXTANTS = (0b001100, 0b110000, 0b000011)


def hsv_adjust_uint8(image: np.ndarray, *, value_shift: float = 0.0, sat_scale: float = 1.0,
                     sat_shift: float = 0.0) -> np.ndarray:  # fmt: skip
    """``uint8(clip(hsv2rgb(h, clip(s · sat_scale + sat_shift), clip(v + value_shift))) · 255)`` of an HxWx3 uint8
    image, with skimage's rgb2hsv/hsv2rgb formulas in float64 on ``image / 255``; the saturation edit is skipped
    when ``(sat_scale, sat_shift) == (1, 0)`` and the value edit when ``value_shift == 0``, as the reference's
    brightness (V only) and saturate (S only) do."""
    h, w = image.shape[:2]
    n = h * w
    planes = np.ascontiguousarray(np.asarray(image, dtype=np.uint8).reshape(n, 3).T)
    out = np.empty((n, 3), dtype=np.uint8)
    edit_s = (sat_scale, sat_shift) != (1.0, 0.0)
    for start in range(0, n, _CHUNK):
        stop = start + _CHUNK
        _adjust(planes[:, start:stop], out[start:stop], value_shift, sat_scale, sat_shift, edit_s)
    return out.reshape(image.shape)


def _adjust(planes: np.ndarray, out: np.ndarray, value_shift: float, sat_scale: float, sat_shift: float,
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
    v = hi8 / 255.0
    delta = v - lo8 / 255.0
    hue = a8 / 255.0
    hue -= b8_ / 255.0
    hue /= delta + grey.astype(_F64)  # grey: 0 / 1 = 0, where the reference sets h = 0
    hue += (4 * bmax + 2 * gmax).astype(_F64)
    hue /= 6.0
    hue += (hue < 0.0).astype(_F64)
    hue *= 6.0
    sextant = np.floor(hue)
    frac = np.subtract(hue, sextant, out=hue)
    sextant = sextant.astype(np.uint8)
    sat = delta / (v + (hi8 == 0).astype(_F64))  # 0 / 0 → 0, as the reference
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
    bits = np.left_shift(1, sextant, dtype=np.uint8)
    bits |= (sextant == 6).view(np.uint8)  # floor(6h) = 6 is sextant 0 (the reference's % 6)
    for channel in range(3):
        is_v = ((bits & _V_SEXTANTS[channel]) != 0).view(np.uint8)
        is_p = ((bits & _P_SEXTANTS[channel]) != 0).view(np.uint8)
        out[:, channel] = mid8 * (1 - is_v - is_p) + v8 * is_v + p8 * is_p
