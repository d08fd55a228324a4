"""Shared numeric kernels of the ImageNet-C ports: Gaussian filters, clipped zoom, bilinear sampling, HSV, uint8 cast.

Each one reproduces the library call the reference (hendrycks/robustness ``make_imagenet_c.py``) makes, with the same
arithmetic, only faster: ``skimage.filters.gaussian`` → ``cv2.GaussianBlur`` with the same kernel (scipy's
``radius = int(truncate * sigma + 0.5)``, ``exp(-x²/2σ²)`` normalised) and border; ``scipy.ndimage.zoom(order=1)``
→ separable linear interpolation of only the rows/columns that survive the centre trim; ``map_coordinates(order=1,
mode="reflect")`` → a bilinear gather with half-sample-symmetric indices; ``skimage.color.rgb2hsv/hsv2rgb`` → the same
formulas without boolean-mask assignment.
"""

from __future__ import annotations

import functools

import cv2
import numpy as np

_CV2_BORDER = {"nearest": cv2.BORDER_REPLICATE, "reflect": cv2.BORDER_REFLECT, "mirror": cv2.BORDER_REFLECT_101,
               "constant": cv2.BORDER_CONSTANT}  # fmt: skip


def gaussian(x: np.ndarray, sigma: float, *, mode: str = "nearest", truncate: float = 4.0,
             exact: bool = False) -> np.ndarray:  # fmt: skip
    """``skimage.filters.gaussian(x, sigma, mode=mode, truncate=truncate)`` over the two spatial axes (channels apart).

    Same kernel and border as scipy's ``gaussian_filter``, computed by OpenCV in the input's float type (results
    differ from scipy's in the last bits); ``exact`` calls scipy itself, for results that are truncated to 8 bits
    right after (glass blur), where those last bits decide flat regions.
    """
    if sigma <= 0:
        return x.copy()
    if exact:
        from scipy import ndimage  # here: scipy.ndimage costs ~0.2 CPU-s to import, most corruptions never call it

        return ndimage.gaussian_filter(x, (sigma, sigma, 0)[: x.ndim], mode=mode, truncate=truncate)
    radius = int(truncate * float(sigma) + 0.5)
    ksize = 2 * radius + 1
    return cv2.GaussianBlur(x, (ksize, ksize), sigmaX=float(sigma), sigmaY=float(sigma), borderType=_CV2_BORDER[mode])


def _reflect(index: np.ndarray, n: int) -> np.ndarray:
    """Half-sample symmetric index (scipy ``mode="reflect"``: d c b a | a b c d | d c b a)."""
    m = np.mod(index, 2 * n)
    return np.where(m >= n, 2 * n - 1 - m, m)


@functools.lru_cache(maxsize=16)
def _reflect_gaussian_matrix(n: int, sigma: float, truncate: float) -> np.ndarray:
    """(n, n) matrix M with ``M @ u == scipy.ndimage.gaussian_filter1d(u, sigma, axis=0, mode="reflect", truncate)``."""
    radius = int(truncate * float(sigma) + 0.5)
    taps = np.arange(-radius, radius + 1)
    weights = np.exp(-0.5 / (sigma * sigma) * taps**2)
    weights = weights / weights.sum()
    rows = np.repeat(np.arange(n), taps.size)
    cols = _reflect(rows + np.tile(taps, n), n)
    matrix = np.bincount(rows * n + cols, weights=np.tile(weights, n), minlength=n * n).reshape(n, n)
    matrix.setflags(write=False)
    return matrix


def gaussian_reflect_2d(u: np.ndarray, sigma: float, *, truncate: float = 3.0) -> np.ndarray:
    """``skimage.filters.gaussian(u, sigma, mode="reflect", truncate=truncate)`` of a 2-D float64 field.

    Wide kernels (elastic_transform uses σ up to 171 px on 224 px) run as two small matrix products with the
    reflected kernel folded into an (n, n) matrix (cached); narrow ones call scipy directly.
    """
    radius = int(truncate * float(sigma) + 0.5)
    if 2 * radius + 1 <= 33:
        from scipy import ndimage

        return ndimage.gaussian_filter(u, sigma, mode="reflect", truncate=truncate)
    h, w = u.shape
    return (
        _reflect_gaussian_matrix(h, float(sigma), truncate) @ u @ _reflect_gaussian_matrix(w, float(sigma), truncate).T
    )


def _zoom_axis(n: int, zoom: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source rows (i0, i1) and weights t of the reference ``clipped_zoom`` along one axis of length ``n``.

    Reference: crop the centre ``ceil(n / zoom)``, ``scipy.ndimage.zoom(order=1)`` it to ``round(ch * zoom)`` samples
    (corner-aligned: output j samples input ``j * (ch - 1) / (n_out - 1)``), then keep the centre ``n``.
    """
    ch = int(np.ceil(n / float(zoom)))
    top = (n - ch) // 2
    n_out = round(ch * float(zoom))  # Python's round, as scipy's output_shape
    trim = (n_out - n) // 2
    step = (ch - 1) / (n_out - 1) if n_out > 1 else 1.0
    coord = np.arange(trim, trim + n, dtype=np.float64) * step
    i0 = np.minimum(np.floor(coord).astype(np.intp), max(ch - 1, 0))
    t = coord - i0
    i1 = np.minimum(i0 + 1, ch - 1)
    return top + i0, top + i1, t


def clipped_zoom(img: np.ndarray, zoom: float) -> np.ndarray:
    """The reference ``clipped_zoom`` (centre crop, bilinear ``scipy.ndimage.zoom``, centre trim), per axis.

    The reference uses the height for both axes (square images only); here each axis uses its own length, which is
    the same at 224×224. Computes only the kept output samples. Returns the input's dtype.
    """
    if zoom == 1:
        return img.copy()
    out = img
    for axis in (0, 1):
        i0, i1, t = _zoom_axis(img.shape[axis], zoom)
        shape = [1] * img.ndim
        shape[axis] = t.size
        a, b = np.take(out, i0, axis=axis), np.take(out, i1, axis=axis)
        b -= a  # a + (b - a)·t in the image's float type, in place
        b *= t.reshape(shape).astype(img.dtype)
        a += b
        out = a
    return out


def _reflect_table(index: np.ndarray, n: int) -> np.ndarray:
    """:func:`_reflect` of ``index`` through a table over its range (one integer ``mod`` per distinct value)."""
    low = int(index.min())
    return np.take(_reflect(np.arange(low, int(index.max()) + 1), n), index - low)


_BILINEAR_CHUNK = 4096  # pixels: the float64 temporaries stay below the allocator's mmap threshold and in cache


def bilinear_reflect(img: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``map_coordinates(img, (rows, cols, channel), order=1, mode="reflect")`` for an HxWxC image; float64 out.

    ``(a·(1 - tc) + b·tc)·(1 - tr) + (c·(1 - tc) + d·tc)·tr`` in float64 on the four reflected neighbours, gathered
    from the flattened image, in chunks of pixels.
    """
    h, w = img.shape[:2]
    flat = np.asarray(img, dtype=np.float64).reshape(h * w, -1)  # exact widening: the products were float64 already
    shape = np.shape(rows) + img.shape[2:]
    rows, cols = np.ravel(rows), np.ravel(cols)
    out = np.empty((rows.size, flat.shape[1]), dtype=np.float64)
    for start in range(0, rows.size, _BILINEAR_CHUNK):
        r, c = rows[start : start + _BILINEAR_CHUNK], cols[start : start + _BILINEAR_CHUNK]
        r0, c0 = np.floor(r), np.floor(c)
        tr, tc = (r - r0)[:, None], (c - c0)[:, None]
        r0, c0 = r0.astype(np.intp), c0.astype(np.intp)
        ra, rb = _reflect_table(r0, h) * w, _reflect_table(r0 + 1, h) * w
        ca, cb = _reflect_table(c0, w), _reflect_table(c0 + 1, w)
        left, right = 1.0 - tc, tc
        top = np.take(flat, ra + ca, axis=0) * left
        top += np.take(flat, ra + cb, axis=0) * right
        bottom = np.take(flat, rb + ca, axis=0) * left
        bottom += np.take(flat, rb + cb, axis=0) * right
        top *= 1.0 - tr
        bottom *= tr
        np.add(top, bottom, out=out[start : start + r.size])
    return out.reshape(shape)


def rgb_to_hsv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``skimage.color.rgb2hsv`` (same formulas and tie order: blue beats green beats red) as (h, s, v)."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    v = rgb.max(-1)
    delta = v - rgb.min(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(delta == 0.0, 0.0, delta / v)
        h = np.where(b == v, 4.0 + (r - g) / delta, np.where(g == v, 2.0 + (b - r) / delta, (g - b) / delta))
        h = (h / 6.0) % 1.0
    h[delta == 0.0] = 0.0
    return h, s, v


# hsv2rgb: output channel = one of (v, t, p, q) chosen by the sextant hi = floor(6h) % 6
_SEXTANT = np.array([[0, 1, 2], [3, 0, 2], [2, 0, 1], [2, 3, 0], [1, 2, 0], [0, 2, 3]])  # 0 v, 1 t, 2 p, 3 q


def hsv_to_rgb(h: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``skimage.color.hsv2rgb`` of separate (h, s, v) planes; returns HxWx3."""
    hi = np.floor(h * 6)
    f = h * 6 - hi
    p = v * (1 - s)
    q = v * (1 - f * s)
    t = v * (1 - (1 - f) * s)
    choices = np.stack((v, t, p, q), axis=-1)
    index = _SEXTANT[hi.astype(np.uint8) % 6]
    return np.take_along_axis(choices, index, axis=-1)


def to_uint8(y: np.ndarray, *, rounding: bool = False, clipped: bool = False) -> np.ndarray:
    """The reference's output cast ``np.uint8(np.clip(y, 0, 1) * 255)`` (truncating); ``rounding`` for outputs that
    are already on the 8-bit grid (ImageMagick's PNG). ``clipped``: ``y`` is a scratch array already in [0, 1]
    (the pure functions' results), scaled in place."""
    y = np.multiply(y, 255, out=y) if clipped and y.flags.writeable else np.clip(y, 0, 1) * 255
    if rounding:
        np.rint(y, out=y)
    return y.astype(np.uint8)
