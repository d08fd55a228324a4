"""What layouts need from a build's samples: image fields and their file extensions, labels, class folder names and
the ``<corruption>/<severity>`` folder of a subset."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.reader import Build
from ..errors import CorruptgenError
from ..io.layout import image_field
from ..models.labels import imagenet_source

#: Shard field extension -> file extension (ImageNet's own files end in ``.JPEG``; ``npy``: float32 arrays, written as
#: they are stored).
EXTENSIONS = {"jpg": ".JPEG", "jpeg": ".JPEG", "png": ".png", "webp": ".webp", "npy": ".npy"}
CLASS_DIRS = ("auto", "wnid", "name", "index")


def image_files(fields: dict[str, bytes | None]) -> list[tuple[str | None, str, bytes]]:
    """``(frame or None, file extension, bytes)`` of a sample's image fields (``jpg`` or frames ``000.jpg``...)."""
    found = []
    for name, data in sorted(fields.items()):
        kind = image_field(name)
        if kind is not None and kind[1] in EXTENSIONS and data is not None:
            found.append((kind[0], EXTENSIONS[kind[1]], data))
    return found


def sample_label(meta: dict[str, Any], fields: dict[str, bytes | None]) -> int | None:
    """The sample's class index (``json`` ``label``, else the ``cls`` field); ``None`` when unlabelled."""
    label = meta.get("label")
    if label is None and "label" not in meta and fields.get("cls"):
        try:
            label = int(fields["cls"].decode().strip())
        except ValueError:
            return None
    return label if isinstance(label, int) and label >= 0 else None


def imagenet_labelled(build: Build) -> bool:
    """True when the build's source carries ImageNet-1k indices (the ``samples`` photos, ImageNet wnid folders, the
    flat validation folder, file lists over them)."""
    return imagenet_source(build.manifest.get("source") or {})


def class_folders(build: Build, mode: str = "auto") -> tuple[str, Callable[[int, dict[str, Any]], str | None]]:
    """How a sample's class becomes a folder name: ``(mode used, fn(label, meta) -> folder or None)``.

    ``wnid``: the ImageNet wnid (``n01440764``; labels 0..999). ``name``: the source's class name (class-folder
    sources, whose names sort in label order). ``index``: the label zero-padded to 5 digits, so folders sort in label
    order. ``auto``: ``wnid`` for ImageNet-labelled builds, ``name`` for class-folder sources, else ``index``.
    """
    if mode not in CLASS_DIRS:
        raise CorruptgenError(f"class-dirs must be one of {', '.join(CLASS_DIRS)}, got {mode!r}")
    if mode == "auto":
        layout = (build.manifest.get("source") or {}).get("layout")
        mode = "wnid" if imagenet_labelled(build) else "name" if layout == "class-folders" else "index"
    if mode == "wnid":
        from ..io.labels import imagenet_wnids

        wnids = imagenet_wnids()
        return mode, lambda label, meta: wnids[label] if label < len(wnids) else None
    if mode == "name":
        return mode, lambda label, meta: _safe_name(meta.get("label_name"))
    return mode, lambda label, meta: f"{label:05d}"


def _safe_name(name: Any) -> str | None:
    text = str(name).replace("/", "_").replace("\\", "_").strip() if name is not None else ""
    return None if text in ("", ".", "..") else text


def subset_folder(build: Build, name: str, meta: dict[str, Any]) -> str:
    """``<corruption>/<severity>`` for a subset with a severity, else ``<subset>`` (manifest first, then the
    sample's metadata for builds without one)."""
    record = build.subset(name)
    corruption = record.get("corruption", meta.get("corruption"))
    severity = record.get("severity", meta.get("severity"))
    if severity is None or not corruption:
        return name
    return f"{str(corruption).rsplit('/', 1)[-1]}/{severity}"


def wanted(field: str) -> bool:
    """The fields a layout reads: ``json``, ``cls`` and the image fields."""
    return field in ("json", "cls") or image_field(field) is not None
