"""Real photographs (scikit-image) downsized to CIFAR's 32×32 and Tiny-ImageNet's 64×64, shared by the tests of the
small-image ImageNet-C variants."""

from __future__ import annotations

import numpy as np
import skimage.data
from PIL import Image

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket")


def photos(size: int, names: tuple[str, ...] = PHOTOS) -> np.ndarray:
    """``len(names)``×size×size×3 uint8: each photo centre-cropped to a square and resized (PIL bilinear)."""
    out = []
    for name in names:
        arr = getattr(skimage.data, name)()
        h, w = arr.shape[:2]
        side = min(h, w)
        top, left = (h - side) // 2, (w - side) // 2
        square = Image.fromarray(np.ascontiguousarray(arr[top : top + side, left : left + side]))
        out.append(np.asarray(square.resize((size, size), Image.Resampling.BILINEAR)))
    return np.stack(out)
