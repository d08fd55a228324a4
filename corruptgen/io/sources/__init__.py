"""Image sources: enumerate clean images (with optional labels) and read their raw encoded bytes.

Spec strings accepted by :func:`open_source`:

* ``samples`` -- real photographs bundled with scikit-image (no download).
* ``imagefolder:<path>`` -- a directory tree of image files (ImageNet wnid folders, generic class folders, a flat
  ``ILSVRC2012_val_*`` folder, or any flat folder).
* ``hf:<name-or-local-path>[:<split>]`` -- a Hugging Face ``datasets`` dataset (hub name, ``save_to_disk``
  directory, or a local directory loadable with ``load_dataset``).
* ``webdataset:<path-or-pattern>`` -- local tar shards; brace patterns (``clean-{000..009}.tar``) and shell globs.

Sources are picklable (they are sent to "spawn" worker processes): they hold plain data plus a cached item list;
file and dataset handles are reopened lazily in each process and never pickled.

Item keys only use ``[A-Za-z0-9_-]`` (WebDataset keys end at the first dot), never start with ``_`` (readers skip
such names as hidden files) and are unique within a source. They are computed over the whole source before ``limit``
is applied, so an image keeps its key whatever the limit.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import sys
from collections.abc import Callable

from corruptgen.errors import CorruptgenError
from corruptgen.io.layout import IMAGE_EXTENSIONS
from corruptgen.io.shown import drop_credentials
from corruptgen.registry import Registry

from .base import Source, SourceItem
from .hf import HFSource, _parse_hf_spec
from .imagefolder import ImageFolderSource
from .samples import SamplesSource
from .webdataset import WebDatasetSource

__all__ = [
    "IMAGE_EXTENSIONS",
    "SOURCES",
    "HFSource",
    "ImageFolderSource",
    "SamplesSource",
    "Source",
    "SourceItem",
    "WebDatasetSource",
    "open_source",
    "recorded_spec",
    "register_source",
]

#: ``<kind>`` of a ``<kind>:<rest>`` spec -> opener ``(spec, rest, image_column, label_column, limit) -> Source``.
#: A new source registers itself with :func:`register_source` in its own module of this package (imported on first use).
SOURCES: Registry[Callable[[str, str, str | None, str | None, int | None], Source]] = Registry(
    "image source", discover=("corruptgen.io.sources",)
)


def register_source(kind: str, form: str, shown: Callable[[str], str] | None = None) -> Callable:
    """Decorator registering a source opener for specs ``<kind>:<rest>``; ``form`` is its syntax for messages,
    ``shown(rest)`` the ``<rest>`` a build records (its local paths as :mod:`corruptgen.io.shown` shows them; a source
    without local paths has none)."""

    def add(opener):
        opener.form, opener.shown = form, shown
        return SOURCES.register(kind, opener)

    return add


def recorded_spec(spec: str) -> str:
    """``spec`` as a build records it (in its plan, hence its plan id, manifest, card and command): every local path
    relative to the folder the command ran in, or its last component (:func:`corruptgen.io.shown.shown_path`), so
    nothing published holds an absolute path or a home directory. A recorded spec records itself unchanged."""
    kind, colon, rest = spec.partition(":")
    if not (colon and rest) or kind not in SOURCES:
        return spec
    shown = getattr(SOURCES.get(kind), "shown", None)
    return drop_credentials(f"{kind}:{shown(rest)}" if shown is not None else spec)


_REMOTE_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|pipe:)")


def open_source(
    spec: str,
    *,
    image_column: str | None = None,
    label_column: str | None = None,
    limit: int | None = None,
    folder_labels: bool = False,
) -> Source:
    """Opens an image source from its spec string and scans its items (so bad specs fail here).

    Args:
        spec: ``samples``, ``imagefolder:<dir>``, ``hf:<name-or-path>[:<split>]`` or ``webdataset:<pattern>``.
        image_column: Image column of a ``hf`` source (default: the first ``datasets.Image`` feature).
        label_column: Label column of a ``hf`` source (default: the first ``ClassLabel``, or label/cls/... ints).
        limit: Keep only the first N items in the deterministic order.
        folder_labels: An ``imagefolder``/``filelist`` source's class folders are labelled by their sorted order,
            ImageNet wnids are not looked up (default: the layout rules).

    The scan's notes (lines or folders the build will skip) are printed on stderr, each once per process.

    Raises:
        CorruptgenError: Unknown scheme, missing path, no images, missing column, remote URL, a label outside the
            class count, ...
    """
    scheme, _, rest = spec.partition(":")
    if (image_column is not None or label_column is not None) and scheme != "hf":
        flag = "--image-column" if image_column is not None else "--label-column"
        raise CorruptgenError(f"{flag} only applies to hf:<dataset> sources")
    factory = SOURCES.get(scheme) if scheme in SOURCES and (scheme == "samples") == (spec == "samples") else None
    if factory is None:
        hint = f" (did you mean imagefolder:{spec}?)" if os.path.isdir(os.path.expanduser(spec)) else ""
        raise CorruptgenError(f"unknown image source {spec!r}{hint}; valid forms: {spec_forms()}")
    source = factory(spec, rest, image_column, label_column, limit)
    if folder_labels:
        if not isinstance(source, ImageFolderSource):
            raise CorruptgenError(f"--folder-labels applies to imagefolder: and filelist: sources, not {scheme}:")
        source.folder_labels = True
    source.items()
    if multiprocessing.parent_process() is None:  # once per build: not again in each worker process
        for note in source.notes:
            if (spec, note) not in _SHOWN:  # a build opens its source twice (sizing the shards, then rendering)
                _SHOWN.add((spec, note))
                print(f"corruptgen: {note}", file=sys.stderr)
    return source


_SHOWN: set[tuple[str, str]] = set()  # (spec, note) printed by this process


@register_source("samples", "samples")
def _open_samples(spec: str, _rest: str, _image: str | None, _label: str | None, limit: int | None) -> Source:
    return SamplesSource(spec, limit=limit)


@register_source("imagefolder", "imagefolder:<dir>", ImageFolderSource.shown_rest)
def _open_imagefolder(spec: str, rest: str, _image: str | None, _label: str | None, limit: int | None) -> Source:
    if not rest:
        raise CorruptgenError("imagefolder: missing path, use imagefolder:<dir>")
    return ImageFolderSource(spec, rest, limit=limit)


@register_source("hf", "hf:<name-or-path>[:<split>]", HFSource.shown_rest)
def _open_hf(spec: str, rest: str, image: str | None, label: str | None, limit: int | None) -> Source:
    if not rest:
        raise CorruptgenError("hf: missing dataset, use hf:<name-or-path>[:<split>]")
    name, split = _parse_hf_spec(rest)
    return HFSource(spec, name, split, image_column=image, label_column=label, limit=limit)


@register_source("webdataset", "webdataset:<tar, brace pattern or glob>", WebDatasetSource.shown_rest)
def _open_webdataset(spec: str, rest: str, _image: str | None, _label: str | None, limit: int | None) -> Source:
    if not rest:
        raise CorruptgenError("webdataset: missing shard path, use webdataset:<tar, brace pattern or glob>")
    if rest.startswith("file://"):
        rest = rest[len("file://") :]
    if _REMOTE_URL.match(rest):
        raise CorruptgenError(f"webdataset: {rest} is remote; only local tar files are supported for now")
    return WebDatasetSource(spec, rest, limit=limit)


def spec_forms() -> str:
    """Every registered source's spec syntax, for messages and ``--help``."""
    return " | ".join(getattr(opener, "form", name) for name, opener in SOURCES.items())
