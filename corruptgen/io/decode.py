"""Robust decoding of encoded image bytes into HxWx3 uint8 RGB arrays.

Every input that is not a usable image raises :class:`BadImageError` with a short human-readable reason (it is
written to the manifest); no PIL exception ever escapes. Conversion rules:

* ``1``/``L`` grayscale is replicated to three channels; ``CMYK`` uses PIL's multiplicative conversion
  (``R = (255 - C) * (255 - K) / 255``; Adobe-inverted CMYK JPEGs are handled by PIL's reader); ICC profiles are
  ignored.
* 16-bit modes (``I;16``, ``I;16B``, ...) are scaled from 0..65535 to 0..255 as ``round(v / 257)`` (not clipped).
  32-bit ``I`` images are treated as 8-bit data when their maximum is <= 255 and as 16-bit data otherwise.
* Float ``F`` images are assumed to be in 0..1 when their maximum is <= 1, else in 0..255; NaN becomes 0 and the
  result is clipped and rounded.
* Images with alpha (``RGBA``, ``LA``, ``PA``, palette with transparency) are alpha-composited over a WHITE
  background, the usual convention for "paper"/web images (ImageNet-C-style pipelines drop alpha otherwise).
* EXIF orientation is applied (``ImageOps.exif_transpose``); animated/multi-frame files yield their first frame.

Decompression bombs: the size the header declares is checked before any pixel is decoded; an image declaring more
than ``max_pixels`` is rejected, whatever its format (a JPEG header forged to 65000x65000 would otherwise decode at
8125x8125 through DCT scaling). With ``fast_draft``, JPEGs within the limit may be decoded at a reduced DCT scale.
PIL's own bomb limit and ``LOAD_TRUNCATED_IMAGES`` are process globals, so they are set (None / False) and restored
under a lock around open+load: decoding is serialized between threads of one process (use processes for parallelism).
"""

from __future__ import annotations

import io
import threading
import warnings
from typing import Any

import numpy as np
from PIL import Image, ImageFile, ImageOps, JpegImagePlugin

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_PIXELS", "BadImageError", "decode_array", "decode_image", "image_size"]

DEFAULT_MAX_PIXELS = 100_000_000
#: Largest encoded input read (``--max-bytes``): far above any real photograph, far below a machine's memory.
DEFAULT_MAX_BYTES = 256 * 2**20
_EXIF_ORIENTATION = 0x0112

# Formats we are willing to parse. Formats that shell out (EPS -> Ghostscript) or lack a magic number (TGA) are
# deliberately excluded so arbitrary bytes are never misread.
_ALLOWED_FORMATS = ("JPEG", "MPO", "PNG", "WEBP", "BMP", "DIB", "TIFF", "PPM", "GIF", "JPEG2000", "AVIF", "ICO")

_PIL_GLOBALS_LOCK = threading.Lock()


class BadImageError(Exception):
    """Input that is not a usable image.

    Attributes:
        reason: A short human sentence explaining why (goes into the manifest).
        transient: True when the input could not be *read* (an I/O error: a file missing for a moment, a failed
            network read) rather than being unusable: the next run of the build reads it again.
    """

    def __init__(self, reason: str, *, transient: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across worker processes
        return (_bad_image, (self.reason, self.transient))


def _bad_image(reason: str, transient: bool) -> BadImageError:
    return BadImageError(reason, transient=transient)


def decode_image(
    data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, min_side_hint: int | None = None, fast_draft: bool = False
) -> tuple[np.ndarray, dict]:
    """Decodes encoded image bytes to an RGB array.

    Args:
        data: The encoded file content.
        max_pixels: Largest accepted size (width * height) as declared by the header; larger images are rejected.
        min_side_hint: Shortest side the caller needs: the draft target of ``fast_draft``.
        fast_draft: Also draft JPEGs within the limit: with ``min_side_hint``, decode at a reduced DCT scale whose
            shorter side stays >= the hint (recorded as ``info["drafted"]``). Off by default: full resolution (exact
            output) unless the image exceeds ``max_pixels``.

    Returns:
        ``(array, info)``: an HxWx3 ``uint8`` RGB array and a JSON-safe dict with ``mode`` (original PIL mode),
        ``format``, ``size`` (original ``[w, h]``), ``exif_rotated``, ``drafted``, ``draft_size`` (``[w, h]`` or
        ``None``), ``alpha_composited`` and ``animated``.

    Raises:
        BadImageError: If the bytes are empty, not an image, truncated/corrupt, in an unsupported mode or too large.
    """
    if not data:
        raise BadImageError("empty file (0 bytes)")
    if max_pixels <= 0:
        raise ValueError(f"max_pixels must be positive, got {max_pixels}")
    img, info = _open_and_load(bytes(data), max_pixels, min_side_hint, fast_draft)
    try:
        orientation = _exif_orientation(img)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            img, rotated = _exif_transpose(img, orientation)
            arr, info["alpha_composited"] = _to_rgb_array(img)
        if orientation != 1 and not rotated:
            arr, rotated = _orient_array(arr, orientation), True
        info["exif_rotated"] = rotated
    except BadImageError:
        raise
    except Exception as exc:
        raise BadImageError(f"cannot convert {info['mode']} image to RGB: {_describe(exc)}") from exc
    return arr, info


def decode_array(array: np.ndarray, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> np.ndarray:
    """An in-memory uint8 image (H×W grey, H×W×3 RGB or H×W×4 RGBA: what an array source serves) as the HxWx3 RGB
    array :func:`decode_image` gives for the same pixels stored as PNG, without an image codec: grey replicated, RGBA
    composited over white, nothing to orient (no EXIF). Other shapes and dtypes go through PNG.

    Raises:
        BadImageError: If it has more than ``max_pixels`` pixels (or no pixels).
    """
    h, w = array.shape[:2] if array.ndim >= 2 else (0, 0)
    if h * w > max_pixels:
        raise BadImageError(_too_large_message(w, h, max_pixels))
    if array.dtype == np.uint8 and h and w:
        if array.ndim == 2:
            return _gray_to_rgb(array)
        if array.ndim == 3 and array.shape[2] == 3:
            writeable = array.flags.c_contiguous and array.flags.writeable  # as a decoded image is
            return array if writeable else np.array(array, order="C")
        if array.ndim == 3 and array.shape[2] == 4:
            return _composite_over_white(array)
    try:
        data = array_png(array)
    except Exception as exc:
        raise BadImageError(f"not an image array: shape {tuple(array.shape)} dtype {array.dtype}") from exc
    return decode_image(data, max_pixels=max_pixels)[0]


def array_png(array: np.ndarray) -> bytes:
    """An in-memory image array as stored (uncompressed) PNG bytes (what :meth:`Source.read` gives for a source whose
    items are arrays; a build takes the arrays themselves)."""
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(array)).save(buffer, format="PNG", compress_level=0)
    return buffer.getvalue()


def _open_and_load(
    data: bytes, max_pixels: int, min_side_hint: int | None, fast_draft: bool
) -> tuple[Image.Image, dict]:
    """Opens lazily, checks the header size, drafts JPEGs if needed and fully loads the first frame."""
    with _PIL_GLOBALS_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        saved = Image.MAX_IMAGE_PIXELS, ImageFile.LOAD_TRUNCATED_IMAGES
        # We do the size check ourselves (with draft support); truncated data must fail loudly.
        Image.MAX_IMAGE_PIXELS, ImageFile.LOAD_TRUNCATED_IMAGES = None, False
        try:
            img = _open(data)
            w, h = img.size
            info: dict[str, Any] = {
                "mode": img.mode,
                "format": img.format,
                "size": [w, h],
                "exif_rotated": False,
                "drafted": False,
                "draft_size": None,
            }
            if w <= 0 or h <= 0:
                raise BadImageError(f"invalid image size {w}x{h}")
            info["animated"] = _is_animated(img)  # before draft: seeking back to frame 0 resets the decoder tile
            _maybe_draft(img, info, max_pixels, min_side_hint, fast_draft)
            try:
                img.load()
            except Exception as exc:
                raise BadImageError(f"truncated or corrupt {img.format} data: {_describe(exc)}") from exc
        finally:
            Image.MAX_IMAGE_PIXELS, ImageFile.LOAD_TRUNCATED_IMAGES = saved
    return img, info


def image_size(data: bytes) -> tuple[int, int]:
    """The ``(width, height)`` an encoded image's header declares, read without decoding a pixel (what a reader
    checks against a pixel limit before it decodes anything).

    Raises:
        BadImageError: If the bytes are empty or not an image of an accepted format.
    """
    if not data:
        raise BadImageError("empty file (0 bytes)")
    with _PIL_GLOBALS_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        saved, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None  # the caller compares with its own limit
        try:
            with _open(bytes(data)) as img:
                return img.size
        finally:
            Image.MAX_IMAGE_PIXELS = saved


def _open(data: bytes) -> Image.Image:
    """Opens the bytes with PIL (header only), mapping every failure to BadImageError."""
    try:
        return Image.open(io.BytesIO(data), formats=_allowed_formats())
    except Image.UnidentifiedImageError as exc:
        raise BadImageError(f"not a recognised image format ({len(data)} bytes)") from exc
    except Exception as exc:
        raise BadImageError(f"corrupt image header: {_describe(exc)}") from exc


def _allowed_formats() -> list[str]:
    Image.init()
    return [f for f in _ALLOWED_FORMATS if f in Image.OPEN]


def _maybe_draft(img: Image.Image, info: dict, max_pixels: int, min_side_hint: int | None, fast: bool) -> None:
    """Rejects a declared size over ``max_pixels``; with ``fast``, reduces the JPEG decode size by DCT scaling when
    ``min_side_hint`` allows."""
    w, h = img.size
    if w * h > max_pixels:
        raise BadImageError(_too_large_message(w, h, max_pixels))
    is_jpeg = isinstance(img, JpegImagePlugin.JpegImageFile)
    if not is_jpeg or not (fast and min_side_hint and min(w, h) >= 2 * min_side_hint):
        return
    try:
        img.draft("RGB", (min_side_hint, min_side_hint))
    except Exception as exc:
        raise BadImageError(f"corrupt JPEG header: {_describe(exc)}") from exc
    dw, dh = img.size
    if (dw, dh) != (w, h):
        info["drafted"], info["draft_size"] = True, [dw, dh]


def _too_large_message(w: int, h: int, max_pixels: int) -> str:
    return f"image too large: {w}x{h} pixels > limit of {max_pixels} (--max-pixels)"


def _is_animated(img: Image.Image) -> bool:
    try:
        return bool(getattr(img, "is_animated", False))
    except Exception:
        return False
    finally:
        try:
            if img.tell() != 0:
                img.seek(0)
        except Exception:
            pass


def _exif_orientation(img: Image.Image) -> int:
    """The EXIF orientation (1..8); 1 when absent or when the EXIF block is corrupt (never rejects the image)."""
    try:
        orientation = img.getexif().get(_EXIF_ORIENTATION, 1)
    except Exception:
        return 1
    return orientation if orientation in range(1, 9) else 1


def _exif_transpose(img: Image.Image, orientation: int) -> tuple[Image.Image, bool]:
    """Applies ``ImageOps.exif_transpose``; returns (image, rotated). Modes PIL cannot transpose return False."""
    if orientation == 1:
        return img, False
    try:
        return ImageOps.exif_transpose(img), True
    except Exception:
        return img, False


def _orient_array(arr: np.ndarray, orientation: int) -> np.ndarray:
    """Numpy equivalent of ``ImageOps.exif_transpose`` for an HxWxC array (fallback path)."""
    swapped = arr.transpose(1, 0, 2)
    result = {
        2: arr[:, ::-1],
        3: arr[::-1, ::-1],
        4: arr[::-1],
        5: swapped,
        6: np.rot90(arr, -1),
        7: swapped[::-1, ::-1],
        8: np.rot90(arr, 1),
    }.get(orientation, arr)
    return np.ascontiguousarray(result)


def _to_rgb_array(img: Image.Image) -> tuple[np.ndarray, bool]:
    """Converts a loaded PIL image of any supported mode to HxWx3 uint8; returns (array, alpha_composited)."""
    mode = img.mode
    if mode == "RGB":
        return _as_rgb(np.asarray(img)), False
    if mode in ("1", "L"):
        return _gray_to_rgb(np.asarray(img.convert("L"))), False
    if mode.startswith("I;16") or mode == "I":
        return _gray_to_rgb(_int_to_uint8(np.asarray(img), sixteen_bit=mode != "I")), False
    if mode == "F":
        return _gray_to_rgb(_float_to_uint8(np.asarray(img))), False
    if mode == "P" and "transparency" not in img.info:
        return _as_rgb(np.asarray(img.convert("RGB"))), False
    if mode in ("RGBA", "LA", "PA", "P", "RGBa", "La"):
        return _composite_over_white(np.asarray(img.convert("RGBA"))), True
    if mode in ("CMYK", "YCbCr", "RGBX", "LAB", "HSV"):
        return _as_rgb(np.asarray(img.convert("RGB"))), False
    raise BadImageError(f"unsupported image mode {mode}")


def _as_rgb(arr: np.ndarray) -> np.ndarray:
    if arr.ndim != 3 or arr.shape[2] != 3 or arr.dtype != np.uint8:
        raise BadImageError(f"unexpected decoded array {arr.shape} {arr.dtype}")
    return np.ascontiguousarray(arr)


def _gray_to_rgb(gray: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.repeat(gray.astype(np.uint8, copy=False)[:, :, None], 3, axis=2))


def _int_to_uint8(arr: np.ndarray, *, sixteen_bit: bool) -> np.ndarray:
    """Maps integer data to 0..255: 16-bit as round(v / 257); ``I`` data with max <= 255 is taken as 8-bit."""
    values = arr.astype(np.int64)
    if not sixteen_bit and values.size and values.max() <= 255:
        return np.clip(values, 0, 255).astype(np.uint8)
    values = np.clip(values, 0, 65535)
    return ((values + 128) // 257).astype(np.uint8)  # exact round(v / 257): v / 257 is never exactly k + 0.5


def _float_to_uint8(arr: np.ndarray) -> np.ndarray:
    """Maps float data to 0..255, assuming a 0..1 range when max <= 1 and 0..255 otherwise."""
    values = np.nan_to_num(arr.astype(np.float64), nan=0.0, posinf=255.0, neginf=0.0)
    if values.size and values.max() <= 1.0:
        values = values * 255.0
    return np.clip(np.rint(values), 0, 255).astype(np.uint8)


def _composite_over_white(rgba: np.ndarray) -> np.ndarray:
    """Alpha-composites RGBA over white with exact integer rounding."""
    rgb = rgba[:, :, :3].astype(np.uint32)
    alpha = rgba[:, :, 3:4].astype(np.uint32)
    out = (rgb * alpha + 255 * (255 - alpha) + 127) // 255
    return np.ascontiguousarray(out.astype(np.uint8))


def _describe(exc: BaseException) -> str:
    """One-line description of an exception for a manifest reason."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
