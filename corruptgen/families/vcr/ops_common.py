"""Shared pieces of the VCR operations: the per-sample field type and the dithered 8-bit output."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Field = dict[str, Any]


def _u8(y: np.ndarray, fld: Field | None = None) -> np.ndarray:
    """Float image on the 0..255 scale → uint8, clipped; rounded stochastically with the sample's fixed dither
    ``floor(y + d)``, d ~ U(0, 1) (unbiased; an integer image is unchanged; a change of ε moves a share ε of the
    values by one level, so Δv is continuous in s instead of jumping when all values round up together), or to the
    nearest level without a dither field."""
    dither = None if fld is None else fld.get("_dither")
    if dither is None:
        out = np.rint(y)
    else:
        out = np.floor(y + (dither[..., 0] if np.ndim(y) == 2 else dither))
    return np.clip(out, 0, 255).astype(np.uint8)


def _u8_unit(y: np.ndarray, fld: Field | None = None) -> np.ndarray:
    """Float image on the 0..1 scale → uint8 (see :func:`_u8`)."""
    return _u8(np.asarray(y) * 255.0, fld)


def _identity_at_zero(fn: Callable[[np.ndarray, float, Field], np.ndarray]):
    def apply(image: np.ndarray, s: float, fld: Field) -> np.ndarray:
        if s <= 0:
            return image.copy()
        return fn(image, float(min(s, 1.0)), fld)

    apply.__doc__ = fn.__doc__
    return apply


def _r(x: float, nd: int = 6) -> float:
    return round(float(x), nd)


def _none_draw(rng: np.random.Generator, shape: tuple[int, int]) -> Field:
    return {}
