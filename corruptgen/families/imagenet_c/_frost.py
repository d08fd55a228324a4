"""The six ImageNet-C frost textures, read from the installed ``imagecorruptions`` package's data files.

The textures ship with hendrycks/robustness and, identical, with bethgelab/imagecorruptions 1.1.2 (Apache-2.0
package; the textures' own provenance and licence are not stated anywhere). corruptgen
does not redistribute them: it locates the installed package with ``importlib.util.find_spec`` (which does not
execute it; imagecorruptions 1.1.2 no longer imports on NumPy 2) and reads ``frost/frostN.*`` with OpenCV, as the
reference does (``cv2.imread``, alpha dropped, BGR → RGB).
"""

from __future__ import annotations

import functools
import importlib.util
import math
from pathlib import Path

import cv2
import numpy as np

from ...errors import CorruptgenError

FROST_FILES: tuple[str, ...] = ("frost1.png", "frost2.png", "frost3.png", "frost4.jpg", "frost5.jpg", "frost6.jpg")
#: The reference draws ``np.random.randint(5)``: frost6.jpg is never used. corruptgen keeps that by default.
REFERENCE_TEXTURES = 5
_INSTALL = "pip install --no-deps imagecorruptions==1.1.2"


def frost_dir() -> Path:
    """Folder holding the frost textures inside the installed ``imagecorruptions`` package."""
    spec = importlib.util.find_spec("imagecorruptions")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / "frost"
        if all((folder / name).is_file() for name in FROST_FILES):
            return folder
    raise CorruptgenError(f"frost needs the ImageNet-C frost textures of the imagecorruptions package: {_INSTALL}")


@functools.lru_cache(maxsize=len(FROST_FILES))
def load_texture(index: int) -> np.ndarray:
    """Texture ``index`` (0-based) as a read-only HxWx3 uint8 RGB array."""
    path = frost_dir() / FROST_FILES[index]
    bgr = cv2.imread(str(path))
    if bgr is None:
        raise CorruptgenError(f"cannot read frost texture {path}; reinstall: {_INSTALL}")
    rgb = np.ascontiguousarray(bgr[..., ::-1])
    rgb.setflags(write=False)
    return rgb


def texture_scale(texture_shape: tuple[int, ...], shape: tuple[int, int]) -> float:
    """Rescale factor so a random ``shape`` crop exists: 1 when the texture is larger than the image on both axes
    (the reference at 224 px), else imagecorruptions' rule: the factor that covers the too-small side(s), × 1.1."""
    th, tw = texture_shape[:2]
    h, w = shape
    if th > h and tw > w:
        return 1.0
    need = max(h / th if th <= h else 0.0, w / tw if tw <= w else 0.0)
    return need * 1.1


@functools.lru_cache(maxsize=32)
def fitted_texture(index: int, shape: tuple[int, int], resize: float | None = None) -> np.ndarray:
    """Texture ``index`` for an image of ``shape``: first scaled by ``resize`` when given (``cv2.resize(tex, (0, 0),
    fx=resize, fy=resize)``, bilinear: the 32 px and 64 px reference scripts use 0.2 and 0.3; the 224 px one none),
    then rescaled (bicubic, ceil sizes, as imagecorruptions) when it is still not larger than ``shape``."""
    tex = load_texture(index)
    if resize is not None:
        tex = cv2.resize(tex, (0, 0), fx=float(resize), fy=float(resize))
    scale = texture_scale(tex.shape, shape)
    if scale == 1.0:
        tex.setflags(write=False)
        return tex
    size = (math.ceil(tex.shape[1] * scale), math.ceil(tex.shape[0] * scale))
    out = cv2.resize(tex, size, interpolation=cv2.INTER_CUBIC)
    out.setflags(write=False)
    return out


def draw_frost(rng: np.random.Generator, shape: tuple[int, int], textures: int = REFERENCE_TEXTURES,
               resize: float | None = None) -> dict:  # fmt: skip
    """The reference's draws: texture ``randint(textures)``, then crop ``top``/``left`` uniform over valid offsets."""
    index = int(rng.integers(textures))
    tex = fitted_texture(index, (int(shape[0]), int(shape[1])), resize)
    top = int(rng.integers(0, tex.shape[0] - shape[0]))
    left = int(rng.integers(0, tex.shape[1] - shape[1]))
    return {"texture": index, "top": top, "left": left}


def frost_crop(index: int, shape: tuple[int, int], top: int, left: int, resize: float | None = None) -> np.ndarray:
    """The ``shape`` crop at (top, left) of texture ``index`` (fitted to ``shape``, see :func:`fitted_texture`)."""
    h, w = int(shape[0]), int(shape[1])
    tex = fitted_texture(index, (h, w), resize)
    if not (0 <= top <= tex.shape[0] - h and 0 <= left <= tex.shape[1] - w):
        raise ValueError(
            f"frost crop top={top}, left={left} does not fit texture {index} ({tex.shape[0]}x{tex.shape[1]}) "
            f"for a {h}x{w} image: top in [0, {tex.shape[0] - h}], left in [0, {tex.shape[1] - w}]"
        )
    return tex[top : top + h, left : left + w]
