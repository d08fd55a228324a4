"""The ``cifar-c`` export layout: CIFAR-10-C's and CIFAR-100-C's released arrays (Hendrycks & Dietterich, ICLR 2019;
``make_cifar_c.py`` saves them), read unchanged by RobustBench's ``load_cifar10c`` / ``load_cifar100c``:

* ``<corruption>.npy``: uint8 ``(5·N, H, W, 3)``, the 5 severities stacked, severity 1 first; row ``(s - 1)·N + i``
  is source image ``i`` at severity ``s`` (the loaders slice ``[(s - 1)·N : s·N]``);
* ``labels.npy``: the ``5·N`` labels aligned with those rows (each block's labels, as released; uint8 when every
  label fits, else int64 with -1 for unlabelled images);
* ``clean.npy``: the ``N`` clean images in the same order, when the clean subset is exported.

A corruption is written only with all 5 severities and the same images in each; images come from the shards as
stored (PNG by default for these families: the exact pixels; a JPEG build gives the decoded JPEG pixels).
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import numpy as np
from PIL import Image

from ...export.layouts import register_layout
from ...export.outdir import ExportDir
from ...export.samples import image_fields, sample_label, wanted
from ...reader import Build

SEVERITIES = (1, 2, 3, 4, 5)


def _samples(build: Build, subset: str, out: ExportDir) -> Iterator[tuple[str, int | None, np.ndarray]]:
    """``(key, label, HxWx3 uint8)`` of a subset's single-image samples, in shard (= source) order."""
    for key, fields in build.iter_samples(subset, wanted):
        images = image_fields(fields)
        if len(images) != 1 or images[0][0] is not None:
            out.skip(subset, key, "not a single image")
            continue
        if images[0][1] == ".JPEG":
            out.note("the build's images are JPEG: the arrays hold the decoded JPEG pixels (build with --format png "
                     "for the corrupted pixels themselves, as the released arrays)")  # fmt: skip
        with Image.open(io.BytesIO(images[0][2])) as decoded:
            pixels = np.asarray(decoded.convert("RGB"))
        yield key, sample_label(build.metadata(fields), fields), pixels


def _write_array(out: ExportDir, rel: str, blocks: Iterator[np.ndarray], shape: tuple[int, ...]) -> None:
    """Stream ``blocks`` (uint8, concatenated along axis 0 they have ``shape``) into a ``.npy`` file."""
    with out.open(rel) as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "|u1", "fortran_order": False, "shape": shape})
        for block in blocks:
            f.write(np.ascontiguousarray(block, dtype=np.uint8).tobytes())


def _grid(build: Build, out: ExportDir, subsets: list[str]) -> tuple[dict[str, dict[int, str]], str | None]:
    """corruption -> severity -> subset name, and the clean subset's name (others noted and left out)."""
    grid: dict[str, dict[int, str]] = {}
    clean = None
    for name in subsets:
        record = build.subset(name)
        corruption, severity = record.get("corruption"), record.get("severity")
        if not corruption:
            clean = name if name == "clean" else clean
            if name != "clean":
                out.note(f"{name} has no corruption: not part of the cifar-c layout")
        elif severity not in SEVERITIES:
            out.note(f"{name} has no severity 1..5: not part of the cifar-c layout")
        else:
            grid.setdefault(str(corruption).rsplit("/", 1)[-1], {})[int(severity)] = name
    return grid, clean


@register_layout(
    "cifar-c",
    summary="<corruption>.npy (5 severities stacked, severity 1 first, source order) + labels.npy + clean.npy: "
    "CIFAR-10-C's arrays, as RobustBench's load_cifar10c reads them",
)
def cifar_c(build: Build, out: ExportDir, subsets: list[str], options: dict[str, str]) -> None:
    """The released CIFAR-10-C arrays (module docstring)."""
    grid, clean = _grid(build, out, subsets)
    order: list[str] | None = None  # source keys in source order: index i of every block
    labels: list[int | None] = []
    for corruption, by_severity in grid.items():
        missing = [s for s in SEVERITIES if s not in by_severity]
        if missing:
            out.note(f"{corruption}: severities {missing} not exported, so no {corruption}.npy (it stacks all 5)")
            continue
        blocks, shape = [], None
        for s in SEVERITIES:
            samples = list(_samples(build, by_severity[s], out))
            keys = [k for k, _, _ in samples]
            if order is None:
                order, labels = keys, [label for _, label, _ in samples]
            if sorted(keys) != sorted(order) or not samples:
                out.note(f"{corruption}: severity {s} holds other images than the first exported corruption: "
                         f"{corruption}.npy not written (its blocks must be aligned)")  # fmt: skip
                blocks = []
                break
            by_key = {k: image for k, _, image in samples}
            shape = by_key[order[0]].shape
            if any(image.shape != shape for image in by_key.values()):
                out.note(f"{corruption}: images of different sizes cannot be stacked; not written")
                blocks = []
                break
            blocks.append(np.stack([by_key[k] for k in order]))
            out.folder(by_severity[s], f"{corruption}.npy[{(s - 1) * len(order)}:{s * len(order)}]")
        if len(blocks) == len(SEVERITIES):
            _write_array(out, f"{corruption}.npy", iter(blocks), (len(SEVERITIES) * len(order), *shape))
    if clean is not None:
        samples = {k: image for k, _, image in _samples(build, clean, out)}
        if order is None or sorted(samples) == sorted(order):
            keys = order or list(samples)
            if order is None:
                order = keys
                labels = [sample_label(build.metadata(f), f) for _, f in build.iter_samples(clean, wanted)]
            if keys:
                stacked = np.stack([samples[k] for k in keys])
                _write_array(out, "clean.npy", iter([stacked]), stacked.shape)
                out.folder(clean, "clean.npy")
        else:
            out.note("clean holds other images than the corruptions: clean.npy not written")
    if order:
        _write_labels(out, labels)


def _write_labels(out: ExportDir, labels: list[int | None]) -> None:
    """``labels.npy``: the labels of one block repeated for the 5 severities (the released file's 5·N entries)."""
    if any(label is None for label in labels):
        out.note("some images are unlabelled: labels.npy is int64 with -1 for them")
    values = np.array([-1 if label is None else label for label in labels], dtype=np.int64)
    dtype = np.uint8 if values.size and values.min() >= 0 and values.max() <= 255 else np.int64
    buffer = io.BytesIO()
    np.save(buffer, np.tile(values, len(SEVERITIES)).astype(dtype))
    out.put("labels.npy", buffer.getvalue())
