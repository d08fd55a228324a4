"""Adapter from albumentations transforms to corruptgen's ``fn(image, rng) -> (image, params)``.

Each call seeds the transform from the sample's own generator (``set_random_seed``), applies it and reads back the
parameters it drew (``get_applied_params``, reshaped by the transform's ``recorded_params`` when it has one, so every
parameter keeps one JSON type across samples), so a sample's output depends only on its seed.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from ...corruptions.registry import ApplyFn, Params


def albumentations() -> ModuleType:
    """``albumentations``, imported on first use (~0.8 CPU-s, so ``corruptgen list`` and other families never pay
    it) without ``albumentations.pytorch`` — its ``__init__`` imports that adapter, and with it torch (~2 CPU-s),
    whenever torch is installed, and no corruption uses it — and without its update check (a network request)."""
    if "albumentations" not in sys.modules:
        os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")
        skip = "albumentations.pytorch" not in sys.modules
        if skip:
            sys.modules["albumentations.pytorch"] = None  # type: ignore[assignment]  # its import then fails, caught
        try:
            import albumentations  # noqa: F401
        finally:
            if skip and sys.modules.get("albumentations.pytorch") is None:
                del sys.modules["albumentations.pytorch"]  # importable later, by whoever asks for it
    return sys.modules["albumentations"]


class _LazyAlbumentations:
    """``albumentations`` for transform factories: an attribute imports it (see :func:`albumentations`)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(albumentations(), name)


LAZY_ALBUMENTATIONS: Any = _LazyAlbumentations()
_DROP_KEYS = frozenset({"shape", "fill_mask", "bbox_matrix", "matrix_bbox", "output_shape"})
MAX_ARRAY_ELEMENTS = 64


def json_safe(value: Any) -> Any:
    """Convert drawn parameters to JSON-safe values; arrays over 64 elements (noise fields) are dropped (``None``)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in _DROP_KEYS:
                continue
            safe = json_safe(v)
            if safe is not None or v is None:
                out[str(k)] = safe
        return out
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist()) if value.size <= MAX_ARRAY_ELEMENTS else None
    if isinstance(value, (list, tuple)):
        items = [json_safe(v) for v in value]
        return None if any(i is None and v is not None for i, v in zip(items, value, strict=True)) else items
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return repr(value)


def albumentations_fn(factory: Callable[[], Any]) -> ApplyFn:
    """Wrap a transform factory; one transform instance per thread, built on first use."""
    local = threading.local()

    def apply(image: np.ndarray, rng: np.random.Generator, **options: Any) -> tuple[np.ndarray, Params]:
        if options:
            raise TypeError(f"unexpected options {sorted(options)}: albumentations corruptions take none")
        transform = getattr(local, "transform", None)
        if transform is None:
            transform = local.transform = factory()
        transform.set_random_seed(int(rng.integers(0, 2**32)))
        out = transform(image=image)["image"]
        params = transform.get_applied_params()
        if hasattr(transform, "recorded_params"):  # a port that stores its draws in a loader-friendly shape
            params = transform.recorded_params(params)
        return np.ascontiguousarray(out, dtype=np.uint8), json_safe(params)

    return apply
