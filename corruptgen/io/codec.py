"""Sample field encoding: images (deterministic JPEG / PNG / WebP bytes) and canonical JSON metadata."""

from __future__ import annotations

import io
import json
from typing import Any

import cv2
import numpy as np
from PIL import Image

__all__ = ["dump_json", "encode_fields", "encode_image"]


def encode_image(image: np.ndarray, fmt: str = "jpg", quality: int = 85) -> bytes:
    """Encode an HxWx3 uint8 RGB array deterministically: baseline JPEG (libjpeg-turbo via OpenCV, standard IJG
    tables scaled by ``quality``, 4:2:0; pixel-identical to PIL's ``save(quality=q)``), lossless PNG or lossy WebP."""
    if fmt == "jpg":
        ok, buf = cv2.imencode(".jpg", cv2.cvtColor(image, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
        if not ok:
            raise ValueError("JPEG encoding failed")
        return buf.tobytes()
    buf = io.BytesIO()
    pil = Image.fromarray(image)
    if fmt == "png":
        pil.save(buf, format="PNG", compress_level=6)
    elif fmt == "webp":
        pil.save(buf, format="WEBP", quality=quality, method=4)
    else:
        raise ValueError(f"unknown image format {fmt!r}")
    return buf.getvalue()


def encode_fields(image: np.ndarray, image_format: str, quality: int) -> dict[str, bytes]:
    """The image fields of one sample: ``<format>``, or ``000.<format>, 001.<format>, ...`` for a sequence."""
    if image.ndim == 4:
        return {f"{t:03d}.{image_format}": encode_image(frame, image_format, quality) for t, frame in enumerate(image)}
    return {image_format: encode_image(image, image_format, quality)}


def dump_json(obj: Any) -> bytes:
    """Canonical JSON bytes (sorted keys, no NaN)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
