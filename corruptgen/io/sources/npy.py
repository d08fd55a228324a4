"""``npy:<images.npy>[:<labels.npy>]`` source: images stored as one uint8 array file (N×H×W×3, RGB), as the CIFAR-10
test set is usually kept, with an optional file of N integer labels.

Both files are memory-mapped (``np.load(mmap_mode="r")``, never unpickled): a 50,000-image array is not read into
memory, each image is read when it is rendered. Item ``i`` has key ``<i:08d>`` (source order) and is handed to the
engine as the array itself (no image codec), so the pixels reach the corruptions unchanged.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np

from corruptgen.errors import CorruptgenError
from corruptgen.io.decode import BadImageError
from corruptgen.io.shown import shown_path

from . import register_source
from .base import Source, SourceItem, _one_line, shown_file_and, split_file


class NpySource(Source):
    """Images ``array[i]`` of a uint8 N×H×W×3 ``.npy`` file, labels ``labels[i]`` of an optional N-long int file."""

    kind = "npy"
    shown_rest = staticmethod(shown_file_and)
    _TRANSIENT = ("_array",)
    arrays = True

    def __init__(self, spec: str, images: str, labels: str | None = None, *, limit: int | None = None) -> None:
        super().__init__(spec, limit=limit)
        self.images_given, self.labels_given = images, labels
        self.images_path = os.path.abspath(os.path.expanduser(images))
        self.labels_path = None if labels is None else os.path.abspath(os.path.expanduser(labels))
        self.shape: tuple[int, ...] | None = None
        self._array: np.ndarray | None = None

    def _scan(self) -> list[SourceItem]:
        array = self._images()
        n, h, w, c = array.shape
        self.shape = (n, h, w, c)
        labels: list[int | None] = [None] * n
        if self.labels_path is not None:
            values = _load(self.labels_path, "labels")
            if values.ndim != 1 or values.shape[0] != n or not np.issubdtype(values.dtype, np.integer):
                raise CorruptgenError(
                    f"npy: labels {self.labels_path} must be {n} integers (one per image), got "
                    f"shape {tuple(values.shape)} dtype {values.dtype}"
                )
            labels = [int(v) if v >= 0 else None for v in np.asarray(values)]
            self.labelled = True
        return [SourceItem(f"{i:08d}", f"{self._name}:{i}", labels[i], None) for i in range(n)]

    def _images(self) -> np.ndarray:
        if self.__dict__.get("_array") is None:
            array = _load(self.images_path, "images")
            if array.dtype != np.uint8 or array.ndim != 4 or array.shape[3] != 3 or 0 in array.shape:
                raise CorruptgenError(
                    f"npy: {self.images_path} must be a uint8 N×H×W×3 RGB array, got shape {tuple(array.shape)} "
                    f"dtype {array.dtype}"
                )
            self._array = array
        return self._array

    def _read_array(self, index: int, max_bytes: int) -> np.ndarray:
        size = int(np.prod(self.shape[1:])) if self.shape else 0
        if size > max_bytes:
            raise BadImageError(f"image {index} of {self._name}: {size} bytes > {max_bytes} (--max-bytes)")
        try:
            image = np.array(self._images()[index])  # a copy: read here, writeable, not tied to the mapping
        except (CorruptgenError, OSError, ValueError) as exc:
            why = _one_line(exc).replace(self.images_path, self._name)  # the file's folder is not recorded
            reason = f"cannot read image {index} of {self._name}: {why}"
            raise BadImageError(reason, transient=isinstance(exc, OSError)) from exc
        return image

    def identity(self, index: int) -> str:
        """The sha256 of the image's pixels (a row of a memory-mapped array: cheap to hash)."""
        try:
            row = np.ascontiguousarray(self._images()[index])
        except (CorruptgenError, OSError, ValueError) as exc:
            return f"unreadable: {_one_line(exc)}"
        return f"{'x'.join(map(str, row.shape))}:{hashlib.sha256(row.data).hexdigest()[:32]}"

    def _describe_extra(self) -> dict[str, Any]:
        labels = None if self.labels_given is None else shown_path(self.labels_given)
        return {"images": shown_path(self.images_given), "labels": labels, "shape": list(self.shape or ())}

    @property
    def _name(self) -> str:
        """The images file's name (what a skip reason records: never its folder)."""
        return os.path.basename(self.images_path)


def _load(path: str, what: str) -> np.ndarray:
    """``np.load(path, mmap_mode="r")`` with every failure as one :class:`CorruptgenError` line (no pickles)."""
    if not os.path.isfile(path):
        raise CorruptgenError(f"npy: no such {what} file: {path}")
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
    except OSError as exc:
        raise CorruptgenError(f"npy: cannot read {what} {path}: {exc.strerror or exc}") from None
    if magic != b"\x93NUMPY":
        raise CorruptgenError(f"npy: {what} {path} is not a .npy file (np.save writes one)")
    try:
        value = np.load(path, mmap_mode="r", allow_pickle=False)
    except Exception as exc:
        raise CorruptgenError(f"npy: cannot read {what} {path} as a .npy array: {_one_line(exc)}") from None
    if not isinstance(value, np.ndarray):
        raise CorruptgenError(f"npy: {path} is not a single .npy array (an .npz archive?)")
    return value


@register_source("npy", "npy:<images.npy>[:<labels.npy>]", NpySource.shown_rest)
def open_npy(spec: str, rest: str, _image: str | None, _label: str | None, limit: int | None) -> Source:
    """``npy:<images>[:<labels>]``: the images file is the longest leading part naming an existing file, a ``:`` after
    it separates the labels file (so paths holding ``:`` still work)."""
    if not rest:
        raise CorruptgenError("npy: missing array file, use npy:<images.npy>[:<labels.npy>]")
    parts = split_file(rest)
    if parts is None:
        raise CorruptgenError(f"npy: no such images file: {rest.split(':', 1)[0]}")
    return NpySource(spec, *parts, limit=limit)
