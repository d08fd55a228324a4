"""Shared private helpers of the albumentations 0.5.2 ports (range parsing, data access).

Conventions of every port: all random draws happen in ``get_params`` / ``get_params_dependent_on_data`` and use the
transform's own ``self.py_random`` (where 0.5.2 used the global ``random``) or ``self.random_generator`` (where 0.5.2
used a ``np.random.RandomState``), so ``set_random_seed(s)`` makes the output byte-reproducible; ``apply`` is a pure
function of the image and the params and calls a module-level ``*_image`` functional core; images are HxWx3 uint8
RGB in and out; large random fields are numpy arrays in the params (the caller strips arrays larger than 64
elements from metadata). Constructor defaults are the values ImageNet-Syn2Nat used; every transform defaults to
``p=1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..albu import albumentations

Color = tuple[int, int, int]


def _base_class() -> type:
    albumentations()  # imported first through here: without its torch adapter (see there)
    from albumentations.core.transforms_interface import ImageOnlyTransform

    return ImageOnlyTransform


#: albumentations' base class of every port
ImageOnlyTransform = _base_class()


def _pair(value: float | Sequence[float], name: str) -> tuple[float, float]:
    """``v`` -> ``(-v, v)`` (0.5.2 ``to_tuple``); a 2-sequence is returned sorted as given."""
    if isinstance(value, (int, float)):
        return (-abs(float(value)), abs(float(value)))
    lo, hi = value
    if lo > hi:
        raise ValueError(f"{name}: lower bound {lo} exceeds upper bound {hi}")
    return (float(lo), float(hi))


def _range(value: Sequence[float], name: str) -> tuple[float, float]:
    lo, hi = value
    if lo > hi:
        raise ValueError(f"{name}: lower bound {lo} exceeds upper bound {hi}")
    return (float(lo), float(hi))


def _image_from(data: dict[str, Any]) -> np.ndarray:
    if "image" in data:
        return data["image"]
    return data["images"][0]


def _hw(params: dict[str, Any]) -> tuple[int, int]:
    shape = params["shape"]
    return int(shape[0]), int(shape[1])
