"""Protocol preprocessing applied before any corruption (resize, centre crop)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import cv2
import numpy as np
from PIL import Image

from ..errors import CorruptgenError
from ..io.decode import BadImageError
from ..registry import Registry

_CV2 = {"area": cv2.INTER_AREA, "bilinear": cv2.INTER_LINEAR, "bicubic": cv2.INTER_CUBIC, "nearest": cv2.INTER_NEAREST,
        "lanczos": cv2.INTER_LANCZOS4}  # fmt: skip
_PIL = {"area": Image.Resampling.BOX, "bilinear": Image.Resampling.BILINEAR, "bicubic": Image.Resampling.BICUBIC,
        "nearest": Image.Resampling.NEAREST, "lanczos": Image.Resampling.LANCZOS}  # fmt: skip


@dataclass(frozen=True)
class Preprocess:
    """Resize then centre-crop a uint8 RGB image.

    Attributes:
        name: preset name (for metadata).
        resize: exact ``(height, width)`` resize (aspect not kept), or ``None``.
        resize_short: resize the shorter side to this length keeping the aspect ratio, or ``None``.
        crop: centre-crop to ``crop × crop`` (``None``: no crop).
        interpolation: ``area``, ``bilinear``, ``bicubic``, ``nearest`` or ``lanczos``.
        library: ``cv2`` (albumentations' Resize) or ``pil`` (torchvision's Resize on PIL images).
    """

    name: str = "syn2nat"
    resize: tuple[int, int] | None = (256, 256)
    resize_short: int | None = None
    crop: int | None = 224
    interpolation: str = "area"
    library: str = "cv2"

    def __post_init__(self) -> None:
        if self.interpolation not in _CV2:
            raise CorruptgenError(f"unknown interpolation {self.interpolation!r}; use one of {', '.join(_CV2)}")
        if self.library not in ("cv2", "pil"):
            raise CorruptgenError(f"unknown resize library {self.library!r}; use cv2 or pil")
        if self.resize is not None and self.resize_short is not None:
            raise CorruptgenError("give either resize or resize_short, not both")
        for value in (*(self.resize or ()), self.resize_short, self.crop):
            if value is not None and int(value) < 1:
                raise CorruptgenError(f"preprocessing sizes must be positive, got {value}")

    @property
    def min_side(self) -> int | None:
        """Smallest source side length that keeps full quality (a decoder may downscale to it)."""
        if self.resize is not None:
            return max(self.resize)
        return self.resize_short

    def _resize_to(self, image: np.ndarray, height: int, width: int) -> np.ndarray:
        if image.shape[:2] == (height, width):
            return image
        if self.library == "pil":
            return np.asarray(Image.fromarray(image).resize((width, height), _PIL[self.interpolation]))
        return cv2.resize(image, (width, height), interpolation=_CV2[self.interpolation])

    def resized_size(self, height: int, width: int) -> tuple[int, int]:
        """``(height, width)`` after the resize step (before the crop), computed from the input size alone."""
        if self.resize is not None:
            return self.resize
        if self.resize_short is None:
            return height, width
        short, scale = self.resize_short, self.resize_short / min(height, width)
        # torchvision's Resize(int) truncates the long side: int(long * short_target / short)
        nh, nw = (short, int(width * scale)) if height <= width else (int(height * scale), short)
        return max(nh, 1), max(nw, 1)

    @property
    def least_pixels(self) -> int:
        """Pixels of the smallest image the resize can produce (a square one for a shorter-side resize)."""
        if self.resize is not None:
            return self.resize[0] * self.resize[1]
        return (self.resize_short or 1) ** 2

    def check_size(self, height: int, width: int, max_pixels: int) -> None:
        """Raises :class:`BadImageError` (reason ``aspect ratio ...``) if the resize would grow the image past
        ``max_pixels``.

        Only a resize can grow an image (the crop shrinks or pads it to ``crop × crop``): a 1×20000 input resized to
        a shorter side of 256 would become 256×5120000, so it is refused before anything is allocated.
        """
        nh, nw = self.resized_size(height, width)
        if nh * nw > max(max_pixels, height * width):
            raise BadImageError(
                f"aspect ratio {width}:{height} too extreme for preprocessing {self.name!r}: its resize of "
                f"{width}x{height} gives {nw}x{nh} pixels > limit of {max_pixels} (--max-pixels)"
            )

    def __call__(self, image: np.ndarray, *, max_pixels: int | None = None) -> np.ndarray:
        """Apply to an HxWx3 uint8 array; returns a contiguous HxWx3 uint8 array.

        With ``max_pixels``, the resized size is checked first (:meth:`check_size`).
        """
        if max_pixels is not None:
            self.check_size(*image.shape[:2], max_pixels)
        if self.resize is not None or self.resize_short is not None:
            image = self._resize_to(image, *self.resized_size(*image.shape[:2]))
        if self.crop is not None:
            image = center_crop(image, self.crop, torchvision=self.library == "pil")
        return np.ascontiguousarray(image)

    def scaled(self, size: int) -> Preprocess:
        """The same protocol for a ``size`` × ``size`` output: crop = size, resize scaled by size / crop (a square
        resize without crop, as ``resize224``: a resize to size × size)."""
        if size < 8:
            raise CorruptgenError(f"--size must be at least 8, got {size}")
        if self.crop is None and self.resize is not None and self.resize[0] == self.resize[1]:
            return Preprocess(f"{self.name}@{size}", (size, size), None, None, self.interpolation, self.library)
        if self.crop is None:
            raise CorruptgenError(f"--size needs a preprocessing with a crop; {self.name!r} has none")
        factor = size / self.crop
        resize = None if self.resize is None else (round(self.resize[0] * factor), round(self.resize[1] * factor))
        short = None if self.resize_short is None else round(self.resize_short * factor)
        return Preprocess(f"{self.name}@{size}", resize, short, size, self.interpolation, self.library)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["resize"] = list(self.resize) if self.resize else None
        return d


def center_crop(image: np.ndarray, size: int, *, torchvision: bool = False) -> np.ndarray:
    """Centre crop to ``size × size``; images smaller than ``size`` are zero-padded first.

    Offsets: albumentations ``CenterCrop`` floors ``(h - size) / 2``; torchvision's ``CenterCrop``
    (``torchvision=True``) rounds it (half to even), which differs by one pixel for some sizes.
    """
    h, w = image.shape[:2]
    if h < size or w < size:
        ph, pw = max(size - h, 0), max(size - w, 0)
        image = np.pad(image, ((ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
        h, w = image.shape[:2]
    if torchvision:
        top, left = round((h - size) / 2.0), round((w - size) / 2.0)
    else:
        top, left = (h - size) // 2, (w - size) // 2
    return image[top : top + size, left : left + size]


#: Preprocessing presets by name (``--preprocess``). A family folder may register its own preset with
#: ``PRESETS.register(name, Preprocess(...))``; folders are imported on the first look-up.
PRESETS: Registry[Preprocess] = Registry("preprocessing", discover=("corruptgen.families",))
for _preset in (
    # Laugros et al. reference: albumentations Resize(256, 256, INTER_AREA) + CenterCrop(224)
    Preprocess(),
    # torchvision Resize(256) (shorter side, bilinear on PIL) + CenterCrop(224), as ImageNet-C's reference
    Preprocess(name="imagenet", resize=None, resize_short=256, crop=224, interpolation="bilinear", library="pil"),
    # ImageNet-P reference: torchvision Resize(256) only (PIL bilinear, shorter side); each sequence crops itself
    Preprocess(
        name="imagenet_resize", resize=None, resize_short=256, crop=None, interpolation="bilinear", library="pil"
    ),
    # exact 224×224 resize, no crop
    Preprocess(name="resize224", resize=(224, 224), crop=None),
    # keep the source size (pixel-sized corruption parameters then act differently)
    Preprocess(name="none", resize=None, crop=None),
):
    PRESETS.register(_preset.name, _preset)  # fmt: skip


def get_preprocess(name: str) -> Preprocess:
    """A preset by name (``syn2nat``, ``imagenet``, ``imagenet_resize``, ``resize224``, ``none``, or a family's own)."""
    return PRESETS.get(name)
