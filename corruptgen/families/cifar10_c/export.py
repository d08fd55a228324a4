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
import warnings
from collections.abc import Iterator

import numpy as np
from PIL import Image

from ...engine.reader import Build
from ...export.layouts import register_layout
from ...export.outdir import ExportDir
from ...export.samples import image_files, sample_label, wanted

SEVERITIES = (1, 2, 3, 4, 5)


def _samples(build: Build, subset: str, out: ExportDir) -> Iterator[tuple[str, int | None, np.ndarray]]:
    """``(key, label, HxWx3 uint8)`` of a subset's single-image samples, in shard (= source) order."""
    for key, fields in build.iter_samples(subset, wanted):
        images = image_files(fields)
        if len(images) != 1 or images[0][0] is not None:
            out.skip(subset, key, "not a single image")
            continue
        if images[0][1] == ".npy":
            out.skip(
                subset, key, "a float32 array (--format npy), not an 8-bit image: export it with --layout imagenet-c"
            )
            continue
        if images[0][1] == ".JPEG":
            out.note("the build's images are JPEG: the arrays hold the decoded JPEG pixels (build with --format png "
                     "for the corrupted pixels themselves, as the released arrays)")  # fmt: skip
        try:  # the reader checked the declared pixels against the build's limit: PIL's bomb warning is not shown
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                with Image.open(io.BytesIO(images[0][2])) as decoded:
                    pixels = np.asarray(decoded.convert("RGB"))
        except (OSError, ValueError, Image.DecompressionBombError) as e:  # truncated or corrupt image data
            out.skip(subset, key, f"the image does not decode ({type(e).__name__})")
            continue
        yield key, sample_label(build.metadata(fields), fields), pixels


class _Unaligned(Exception):
    """A block that cannot sit at its place in a stacked array (other images, other sizes); the reason is noted."""


def _block(samples: list[tuple[str, int | None, np.ndarray]], order: list[str], what: str) -> np.ndarray:
    """The images of ``samples`` in ``order`` (the source order of the first exported subset), stacked."""
    by_key = {key: image for key, _, image in samples}
    if not by_key:
        raise _Unaligned(f"{what} has no image")
    if len(by_key) != len(order) or set(by_key) != set(order):
        raise _Unaligned(f"{what} holds other images than the first exported subset")
    shapes = {image.shape for image in by_key.values()}
    if len(shapes) != 1:
        raise _Unaligned(f"{what} has images of different sizes {sorted(shapes)}")
    return np.stack([by_key[key] for key in order])


def _write_stacked(out: ExportDir, rel: str, blocks: Iterator[np.ndarray], count: int) -> None:
    """Stream ``count`` equal blocks into one uint8 ``.npy`` file (``_Unaligned`` from a block: nothing written)."""
    first = next(blocks)
    with out.open(rel) as f:
        header = {"descr": "|u1", "fortran_order": False, "shape": (count * len(first), *first.shape[1:])}
        np.lib.format.write_array_header_1_0(f, header)
        f.write(np.ascontiguousarray(first).tobytes())
        for block in blocks:
            f.write(np.ascontiguousarray(block).tobytes())


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
    order: list[str] = []  # source keys in source order: row i of every block
    labels: list[int | None] = []

    def blocks(corruption: str, by_severity: dict[int, str]) -> Iterator[np.ndarray]:
        nonlocal order, labels
        for s in SEVERITIES:
            samples = list(_samples(build, by_severity[s], out))
            if not order:
                order, labels = [k for k, _, _ in samples], [label for _, label, _ in samples]
            yield _block(samples, order, f"{corruption} severity {s}")
            out.folder(by_severity[s], f"{corruption}.npy[{(s - 1) * len(order)}:{s * len(order)}]")

    for corruption, by_severity in grid.items():
        missing = [s for s in SEVERITIES if s not in by_severity]
        if missing:
            out.note(f"{corruption}: severities {missing} not exported, so no {corruption}.npy (it stacks all 5)")
            continue
        try:
            _write_stacked(out, f"{corruption}.npy", blocks(corruption, by_severity), len(SEVERITIES))
        except _Unaligned as e:
            out.note(f"{e}: {corruption}.npy not written (its 5 blocks must hold the same images)")
    if clean is not None:
        samples = list(_samples(build, clean, out))
        if not order:
            order, labels = [k for k, _, _ in samples], [label for _, label, _ in samples]
        try:
            _write_stacked(out, "clean.npy", iter([_block(samples, order, clean)]), 1)
            out.folder(clean, "clean.npy")
        except _Unaligned as e:
            out.note(f"{e}: clean.npy not written")
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
