"""Where things live in a build, defined once: ``data/<subset>/<split>-<chunk>.tar`` shards holding WebDataset
samples whose members are ``<key>.<field>`` (``jpg``/``png``/``webp`` image, ``npy`` float32 array, or ``000.jpg``...
frames, ``json`` metadata, ``cls`` label)."""

from __future__ import annotations

import re
from collections.abc import Iterable

DATA_DIR = "data"
SHARD_GLOB = f"{DATA_DIR}/*/*.tar"
#: File extensions read as images: image files of a folder source, image members of a WebDataset sample (builds
#: write ``jpg``, ``png`` or ``webp``; readers take what other writers use too).
IMAGE_EXTENSIONS = frozenset({"jpg", "jpeg", "png", "webp", "bmp", "tif", "tiff", "ppm", "pgm", "gif"})
#: Image members of a build that are arrays, not encoded images: ``npy`` (float32 (H, W, 3) on [0, 1],
#: :mod:`corruptgen.io.float_images`). Not read as images from sources.
ARRAY_EXTENSIONS = frozenset({"npy"})
_IMAGE_FIELD = re.compile(r"^(?:(?P<frame>.+)\.)?(?P<ext>[^.]+)$")


def shard_relpath(subset: str, chunk: int, split: str = "test") -> str:
    """The path of one shard inside a build directory."""
    return f"{DATA_DIR}/{subset}/{split}-{chunk:05d}.tar"


def shard_subset(relpath: str) -> str | None:
    """The subset of a ``data/<subset>/<name>.tar`` path (``None`` for anything else)."""
    parts = relpath.split("/")
    if len(parts) == 3 and parts[0] == DATA_DIR and parts[2].endswith(".tar"):
        return parts[1]
    return None


def image_field(field: str) -> tuple[str | None, str] | None:
    """``(frame or None, lower-case extension)`` when a sample field is an image (``jpg``, ``npy``, or the frame
    ``000.jpg`` of a sequence), else ``None``."""
    match = _IMAGE_FIELD.match(field)
    if match is None or (match["ext"].lower() not in IMAGE_EXTENSIONS and match["ext"].lower() not in ARRAY_EXTENSIONS):
        return None
    return match["frame"], match["ext"].lower()


def image_fields(fields: Iterable[str]) -> list[str]:
    """The image fields of a sample in frame order (``jpg``; or ``000.jpg``, ``001.jpg``, …)."""
    return sorted((f for f in fields if image_field(f) is not None), key=lambda f: (len(f), f))


def split_member(name: str) -> tuple[str | None, str | None]:
    """(sample key, field) of a tar member: the key ends at the first dot of the basename (webdataset rule)."""
    slash = name.rfind("/")
    dot = name.find(".", slash + 1)
    if dot <= slash + 1:
        return None, None
    return name[:dot], name[dot + 1 :]
