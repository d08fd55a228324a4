"""The ``imagenet-c`` layout: the folder tree of the released ImageNet-C (Hendrycks & Dietterich, "Benchmarking
Neural Network Robustness to Common Corruptions and Perturbations", ICLR 2019), read by its evaluation scripts,
RobustBench and any ImageFolder reader:

* subsets with a severity: ``<corruption>/<severity>/<class>/<key>.JPEG`` (``gaussian_noise/3/n01440764/...``),
* subsets without one (``clean``, Syn2Nat, VCR): ``<subset>/<class>/<key>.JPEG``,
* sequences (ImageNet-P): one folder per sample, ``.../<class>/<key>/<frame>.JPEG``.

Images are the shards' bytes, never re-encoded (a PNG or WebP build keeps ``.png`` / ``.webp``). ``<class>`` is the
ImageNet wnid for ImageNet-labelled builds (see :func:`class_folders`); unlabelled samples are skipped and counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import CorruptgenError
from ..reader import Build
from .layouts import register_layout
from .outdir import ExportDir

#: Shard field extension -> file extension (ImageNet's own files end in ``.JPEG``).
EXTENSIONS = {"jpg": ".JPEG", "jpeg": ".JPEG", "png": ".png", "webp": ".webp"}
CLASS_DIRS = ("auto", "wnid", "name", "index")
_FRAME = re.compile(r"^(?:(?P<frame>[^.]+)\.)?(?P<ext>jpg|jpeg|png|webp)$", re.IGNORECASE)
_IMAGENET_SOURCE_LAYOUTS = ("imagenet-wnid", "imagenet-val")


def image_fields(fields: dict[str, bytes | None]) -> list[tuple[str | None, str, bytes]]:
    """``(frame or None, file extension, bytes)`` of a sample's image fields (``jpg`` or frames ``000.jpg``...)."""
    found = []
    for name, data in sorted(fields.items()):
        match = _FRAME.match(name)
        if match and data is not None:
            found.append((match["frame"], EXTENSIONS[match["ext"].lower()], data))
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
    source = build.manifest.get("source") or {}
    return source.get("kind") == "samples" or source.get("layout") in _IMAGENET_SOURCE_LAYOUTS


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


def _wanted(field: str) -> bool:
    return field in ("json", "cls") or _FRAME.match(field) is not None


@register_layout(
    "imagenet-c",
    summary="<corruption>/<severity>/<wnid>/<key>.JPEG; subsets without a severity: <subset>/<wnid>/<key>.JPEG",
    options={"class-dirs": "class folder names: auto (default) | wnid | name | index"},
)
def imagenet_c(build: Build, out: ExportDir, subsets: list[str], options: dict[str, str]) -> None:
    """The ImageNet-C folder tree (module docstring)."""
    mode, folder_of = class_folders(build, options.get("class-dirs", "auto"))
    if mode == "index":
        out.note("class folders are label indices (00000, 00001, ...); --option class-dirs=wnid names ImageNet-1k "
                 "classes by wnid")  # fmt: skip
    claimed: dict[str, str] = {}
    extensions: set[str] = set()
    for name in subsets:
        base, seen = None, set()
        for key, fields in build.iter_samples(name, _wanted):
            meta = build.metadata(fields)
            if base is None:
                base = subset_folder(build, name, meta)
                if claimed.setdefault(base, name) != name:  # two subsets with one corruption and severity
                    out.note(f"{name} shares {base} with {claimed[base]}: written to {name}/ instead")
                    base = claimed[name] = name
                out.folder(name, base)
            label = sample_label(meta, fields)
            folder = None if label is None else folder_of(label, meta)
            images = image_fields(fields)
            if label is None:
                out.skip(name, key, "unlabelled (no class to put it in)")
            elif folder is None:
                out.skip(name, key, f"label {label} has no {mode} class folder")
            elif not images:
                out.skip(name, key, "no image field")
            elif key in seen:
                out.skip(name, key, "key repeated in the subset")
            else:
                seen.add(key)
                extensions.update(ext for _, ext, _ in images)
                _put_sample(out, name, key, f"{base}/{folder}/{key}", images)
    other = sorted(extensions - {".JPEG"})
    if other:
        out.note(f"the build's images are {', '.join(e[1:].upper() for e in other)}, not JPEG: files keep their bytes "
                 f"and end in {', '.join(other)} (ImageNet-C and RobustBench lists name .JPEG files)")  # fmt: skip


def _put_sample(out: ExportDir, subset: str, key: str, stem: str, images: list[tuple[str | None, str, bytes]]) -> None:
    try:
        if len(images) == 1 and images[0][0] is None:
            out.put(stem + images[0][1], images[0][2])
        else:
            for frame, ext, data in images:
                out.put(f"{stem}/{frame or 'image'}{ext}", data)
    except ValueError as e:  # a key that is not a safe file name (shards not written by corruptgen)
        out.skip(subset, key, str(e))
