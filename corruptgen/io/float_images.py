"""Float images in builds: ``--format npy`` members are float32 (H, W, 3) arrays on [0, 1] in NumPy's ``.npy`` format
(written by :func:`corruptgen.io.codec.encode_npy`; the adversarial family stores its attacks' float results so).

Reading one never unpickles (``allow_pickle=False``) and checks the header before allocating: dtype float32, C order,
shape (H, W, 3) with at most ``max_pixels`` pixels, and the data size the header promises.
"""

from __future__ import annotations

import io

import numpy as np

from .decode import DEFAULT_MAX_PIXELS, BadImageError

#: the first bytes of every ``.npy`` file
MAGIC = b"\x93NUMPY"
NPY = "npy"


def is_npy(data: object) -> bool:
    """Whether ``data`` are ``.npy`` bytes (or an array a reader already decoded from them)."""
    return isinstance(data, np.ndarray) or (isinstance(data, (bytes, bytearray, memoryview)) and
                                            bytes(data[:6]) == MAGIC)  # fmt: skip


def npy_size(data: bytes) -> tuple[int, int]:
    """The ``(width, height)`` a float image's ``.npy`` header declares, read without its data (as
    :func:`corruptgen.io.decode.image_size` reads an encoded image's); :class:`BadImageError` for anything else."""
    shape, fortran, dtype = _header(io.BytesIO(data))
    _check_header(tuple(shape), bool(fortran), np.dtype(dtype), max_pixels=1 << 62)
    return int(shape[1]), int(shape[0])


def _header(stream: io.BytesIO) -> tuple:
    try:
        version = np.lib.format.read_magic(stream)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        return read(stream, max_header_size=10_000)
    except Exception as exc:  # a truncated or foreign file: one reason
        raise BadImageError(f"not a .npy array: {type(exc).__name__}: {exc}") from None


def decode_npy(data: bytes | np.ndarray, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> np.ndarray:
    """``.npy`` bytes (or an already decoded array, e.g. from `datasets`) → float32 (H, W, 3) on [0, 1]; raises
    :class:`BadImageError` with the reason for anything else."""
    if isinstance(data, np.ndarray):
        return _checked(data, max_pixels)
    stream = io.BytesIO(data)
    shape, fortran, dtype = _header(stream)
    _check_header(tuple(shape), bool(fortran), np.dtype(dtype), max_pixels)
    body = memoryview(data)[stream.tell() :]
    expected = int(np.prod(shape)) * 4
    if len(body) != expected:
        raise BadImageError(f".npy array of shape {tuple(shape)} needs {expected} bytes of data, has {len(body)}")
    return _checked(np.frombuffer(body, dtype="<f4").reshape(shape).astype(np.float32), max_pixels)


def _check_header(shape: tuple, fortran: bool, dtype: np.dtype, max_pixels: int) -> None:
    if dtype != np.dtype("<f4") or fortran or len(shape) != 3 or shape[2] != 3:
        raise BadImageError(f".npy image must be float32 (H, W, 3) in C order, got {dtype} {shape}"
                            f"{' (Fortran order)' if fortran else ''}")  # fmt: skip
    if shape[0] * shape[1] > max_pixels:
        raise BadImageError(f".npy image of {shape[1]}x{shape[0]} pixels > limit of {max_pixels}")


def _checked(array: np.ndarray, max_pixels: int) -> np.ndarray:
    array = np.asarray(array, dtype=np.float32)
    _check_header(array.shape, False, np.dtype("<f4"), max_pixels)
    if not np.isfinite(array).all() or array.min(initial=0) < 0 or array.max(initial=0) > 1:
        raise BadImageError(".npy image values must be finite and on [0, 1]")
    return np.ascontiguousarray(array)


def to_uint8(image: np.ndarray) -> np.ndarray:
    """A float image on [0, 1] rounded to 8 bits, for display only (previews, thumbnails)."""
    return np.clip(np.rint(image * 255), 0, 255).astype(np.uint8)
