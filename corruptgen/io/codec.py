"""Sample field encoding: images (deterministic JPEG / PNG / WebP bytes, or float32 ``.npy`` arrays) and canonical JSON
metadata."""

from __future__ import annotations

import io
import json
from typing import Any

import cv2
import numpy as np
from PIL import Image

__all__ = ["JsonRecord", "dump_json", "encode_fields", "encode_image", "encode_npy"]


def encode_image(image: np.ndarray, fmt: str = "jpg", quality: int = 85) -> bytes:
    """Encode an HxWx3 uint8 RGB array deterministically: baseline JPEG (libjpeg-turbo via OpenCV, standard IJG
    tables scaled by ``quality``, 4:2:0; pixel-identical to PIL's ``save(quality=q)``), lossless PNG or lossy WebP;
    or, for ``npy``, a float32 HxWx3 array on [0, 1] (a uint8 image as ``image / 255``) in NumPy's ``.npy`` format."""
    if fmt == "npy":
        return encode_npy(image)
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


def encode_npy(image: np.ndarray) -> bytes:
    """An HxWx3 image as ``.npy`` bytes of float32 on [0, 1]: uint8 as ``image / 255`` (rounded once, from float64),
    float32 as it is (finite, on [0, 1]; anything else is a programming error)."""
    if image.dtype == np.uint8:
        image = (image.astype(np.float64) / 255).astype(np.float32)
    elif image.dtype != np.float32 or not np.isfinite(image).all() or image.min() < 0 or image.max() > 1:
        raise ValueError(f"npy images are float32 on [0, 1], got {image.dtype}")
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(image), allow_pickle=False)
    return buf.getvalue()


def encode_fields(image: np.ndarray, image_format: str, quality: int) -> dict[str, bytes]:
    """The image fields of one sample: ``<format>``, or ``000.<format>, 001.<format>, ...`` for a sequence."""
    if image.ndim == 4:
        return {f"{t:03d}.{image_format}": encode_image(frame, image_format, quality) for t, frame in enumerate(image)}
    return {image_format: encode_image(image, image_format, quality)}


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)
_STRING = json.encoder.encode_basestring_ascii  # how the encoder writes a str (ensure_ascii)


def dump_json(obj: Any) -> bytes:
    """Canonical JSON bytes (sorted keys, no NaN)."""
    return _ENCODER.encode(obj).encode("utf-8")


class JsonRecord:
    """:func:`dump_json` of ``{**fixed, **values}`` for many ``values`` (the sample metadata of one subset): the
    fixed members are encoded once, the others member by member in the same sorted order."""

    def __init__(self, fixed: dict[str, Any]) -> None:
        self.fixed = fixed
        self._encoded = {key: f"{_STRING(key)}:{_ENCODER.encode(value)}" for key, value in fixed.items()}
        self._orders: dict[tuple[str, ...], list[tuple[str, str | None]]] = {}

    def dump(self, values: dict[str, Any]) -> bytes:
        names = tuple(values)
        order = self._orders.get(names)
        if order is None:
            if not self.fixed.keys().isdisjoint(names):
                return dump_json({**self.fixed, **values})
            order = self._orders[names] = [(k, self._encoded.get(k, _STRING(k) + ":")) for k in
                                           sorted({*self.fixed, *names})]  # fmt: skip
        parts = []
        for key, head in order:
            if key in values:
                value = values[key]
                kind = type(value)
                if kind is str:
                    head += _STRING(value)
                elif kind is int:
                    head += int.__repr__(value)
                elif value is None:
                    head += "null"
                else:
                    head += _ENCODER.encode(value)
            parts.append(head)
        return ("{" + ",".join(parts) + "}").encode("utf-8")
