"""The gallery's image files, content-addressed by the sha256 of the stored sample bytes: ``images/<sha256>.<ext>``
is the stored image itself (byte for byte), ``thumbs/<sha256>.jpg`` a small JPEG of it. A file that exists is never
written again, so a second run after an incremental build only adds the new samples' files."""

from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..io.atomic import write_atomic

THUMB_SIDE = 128
THUMB_QUALITY = 80
_EXTENSIONS = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp"}


@dataclass(frozen=True)
class Asset:
    """One image of the gallery: the sha256 of its stored bytes and its two files (relative to the site)."""

    sha256: str
    image: str
    thumb: str


class AssetStore:
    """Writes images and thumbnails once; counts what it wrote and what it found already there."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written = 0
        self.reused = 0
        (root / "images").mkdir(parents=True, exist_ok=True)
        (root / "thumbs").mkdir(parents=True, exist_ok=True)

    def add(self, data: bytes, member: str) -> Asset | None:
        """The asset of a stored image (``member`` names its format); ``None`` when it does not decode."""
        digest = hashlib.sha256(data).hexdigest()
        ext = member.rsplit(".", 1)[-1].lower()
        ext = "jpg" if ext == "jpeg" else ext
        image, thumb = f"images/{digest}.{ext}", f"thumbs/{digest}.jpg"
        if (self.root / image).is_file() and (self.root / thumb).is_file():
            self.reused += 1
            return Asset(digest, image, thumb)
        small = _thumbnail(data)
        if small is None:
            return None
        write_atomic(self.root / image, data)
        write_atomic(self.root / thumb, small)
        self.written += 1
        return Asset(digest, image, thumb)


def _thumbnail(data: bytes) -> bytes | None:
    """A JPEG at most ``THUMB_SIDE`` px on its longer side (small images are kept at their size); a float image
    (``npy``) is rounded to 8 bits for it. The build's reader has checked the declared pixels against the build's
    limit: PIL's own bomb warning is not printed."""
    from PIL import Image, UnidentifiedImageError

    from ..io.decode import BadImageError
    from ..io.float_images import decode_npy, is_npy, to_uint8

    try:
        if is_npy(data):
            rgb = Image.fromarray(to_uint8(decode_npy(data)))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                with Image.open(io.BytesIO(data)) as im:
                    if im.format not in _EXTENSIONS:
                        return None
                    rgb = im.convert("RGB")
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError, BadImageError):
        return None
    rgb.thumbnail((THUMB_SIDE, THUMB_SIDE), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    rgb.save(out, format="JPEG", quality=THUMB_QUALITY, optimize=True)
    return out.getvalue()
