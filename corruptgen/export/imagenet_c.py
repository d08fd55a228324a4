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

from ..engine.reader import Build
from .layouts import register_layout
from .outdir import ExportDir
from .samples import class_folders, image_files, sample_label, subset_folder, wanted


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
        for key, fields in build.iter_samples(name, wanted):
            meta = build.metadata(fields)
            if base is None:
                base = subset_folder(build, name, meta)
                if claimed.setdefault(base, name) != name:  # two subsets with one corruption and severity
                    out.note(f"{name} shares {base} with {claimed[base]}: written to {name}/ instead")
                    base = claimed[name] = name
                out.folder(name, base)
            label = sample_label(meta, fields)
            folder = None if label is None else folder_of(label, meta)
            images = image_files(fields)
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
