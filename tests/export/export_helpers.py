"""Helpers of the export and file-list tests (test modules import them; fixtures live in conftest.py)."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import skimage.data
from PIL import Image

#: (wnid folder, file name, scikit-image photo): ImageNet validation names, real photographs.
IMAGENET_LIKE = (
    ("n01440764", "ILSVRC2012_val_00000293.JPEG", "astronaut"),
    ("n01440764", "ILSVRC2012_val_00002138.JPEG", "rocket"),
    ("n02123045", "ILSVRC2012_val_00000001.JPEG", "chelsea"),
    ("n07920052", "ILSVRC2012_val_00000017.JPEG", "coffee"),
    ("n07920052", "ILSVRC2012_val_00000042.JPEG", "stereo_motorcycle"),
)


def shard_images(build_dir: Path, subset: str) -> dict[str, tuple[str, bytes]]:
    """key -> (image field, bytes) read straight from the subset's tar files with :mod:`tarfile`."""
    found = {}
    for shard in sorted((build_dir / "data" / subset).glob("*.tar")):
        with tarfile.open(shard) as tar:
            for member in tar:
                key, _, fld = member.name.partition(".")
                if fld in ("jpg", "png", "webp"):
                    found[key] = (fld, tar.extractfile(member).read())
    return found


def imagefolder_samples(root: Path) -> list[tuple[str, int]]:
    """An ImageFolder reader without torchvision: class folders sorted -> index; (path, class index) sorted."""
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
    index = {c: i for i, c in enumerate(classes)}
    samples = []
    for cls in classes:
        for dirpath, _, files in os.walk(root / cls):
            for name in files:
                if name.lower().endswith((".jpeg", ".jpg", ".png", ".webp")):
                    samples.append((os.path.join(dirpath, name), index[cls]))
    return sorted(samples)


def write_imagenet_like(root: Path) -> list[str]:
    """``<wnid>/<ILSVRC2012_val_*.JPEG>`` files of real photos under ``root``; returns the relative paths."""
    rels = []
    for wnid, name, photo in IMAGENET_LIKE:
        arr = getattr(skimage.data, photo)()
        arr = arr[0] if isinstance(arr, tuple) else arr
        (root / wnid).mkdir(parents=True, exist_ok=True)
        Image.fromarray(arr).convert("RGB").save(root / wnid / name, quality=90)
        rels.append(f"{wnid}/{name}")
    return rels
