"""Shared pieces of the image sources: :class:`SourceItem`, the :class:`Source` base class and key helpers.

Item keys only use ``[A-Za-z0-9_-]`` (WebDataset keys end at the first dot), never start with ``_`` (readers skip
such names as hidden files) and are unique within a source. They are computed over the whole source before ``limit``
is applied, so an image keeps its key whatever the limit.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from corruptgen.errors import CorruptgenError
from corruptgen.io.decode import DEFAULT_MAX_BYTES, BadImageError, array_png
from corruptgen.io.lock import LOCK_NAME
from corruptgen.io.shown import shown_path

if TYPE_CHECKING:
    import numpy as np

#: Labels of a source that declares no class count must be below this (ImageNet-21k has 21,841 classes, Google
#: Landmarks v2 about 200,000): a label is a class index, and readers size class tables by it.
MAX_CLASSES = 1_000_000
_KEY_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_MAX_MANIFEST_BYTES = 1 << 26  # a manifest.json larger than this is not read to tell a build directory


@dataclass(frozen=True)
class SourceItem:
    """One clean image of a source.

    Attributes:
        key: Unique within the source; only ``[A-Za-z0-9_-]`` (no dots), never starting with ``_``.
        source_id: Human-readable origin (relative path, ``hf:<name>:<split>:<row>``, ``<tar>:<member>``, ...).
        label: Class index, or ``None`` when unknown/unlabelled.
        label_name: Human-readable class name, when known.
    """

    key: str
    source_id: str
    label: int | None
    label_name: str | None


class Source:
    """Base class of image sources.

    Subclasses implement ``_scan`` (all items, deterministic order) and ``_read`` (raw bytes of one item, reading
    at most ``max_bytes + 1`` bytes: only regular files, never a FIFO or a device).

    Attributes:
        spec: The spec string the source was opened from.
        labelled: True if the source carries labels at all (every sample then gets a class, -1 when unknown).
        num_classes: The declared or known class count (1,000 for ImageNet labels), ``None`` when the source does not
            say; every label is checked to lie below it (below :data:`MAX_CLASSES` when ``None``) when it is opened.
        problems: item index -> why the build skips it (an item the scan already knows to be unusable).
        notes: one-line remarks of the scan for the user (lines or folders skipped), printed once when opened.
    """

    kind: ClassVar[str] = "source"
    _TRANSIENT: ClassVar[tuple[str, ...]] = ()  # per-process handles, dropped when pickling
    #: items are uint8 arrays (``_read_array``): a build takes them as they are, without an image codec
    arrays: ClassVar[bool] = False

    def __init__(self, spec: str, *, limit: int | None = None) -> None:
        if limit is not None and limit < 0:
            raise CorruptgenError(f"--limit must be >= 0, got {limit}")
        self.spec = spec
        self.limit = limit
        self.labelled = False
        self.num_classes: int | None = None
        self.problems: dict[int, str] = {}
        self.notes: list[str] = []
        self._items: list[SourceItem] | None = None
        self._total: int | None = None

    def items(self) -> list[SourceItem]:
        """All items in deterministic order (computed once, cached and pickled along; do not mutate).

        Raises:
            CorruptgenError: A label lies outside the source's class count (see ``num_classes``).
        """
        if self._items is None:
            items = self._scan()
            kept = items if self.limit is None else items[: self.limit]
            self._check_labels(kept)
            self._total, self._items = len(items), kept
        return self._items

    def _check_labels(self, items: list[SourceItem]) -> None:
        """Every label a class index below ``num_classes`` (or :data:`MAX_CLASSES`), else one error line."""
        bad = self._outside([item.label for item in items], self.num_classes)
        if bad is not None:
            raise self._label_error(items[bad].label, items[bad].source_id, self.num_classes)

    @staticmethod
    def _outside(labels: Sequence[int | None], num_classes: int | None) -> int | None:
        """Position of the first label that is not a class index below ``num_classes`` (or :data:`MAX_CLASSES`)."""
        bound = num_classes or MAX_CLASSES
        return next((i for i, label in enumerate(labels) if label is not None and not 0 <= label < bound), None)

    def _label_error(self, label: int, source_id: str, num_classes: int | None) -> CorruptgenError:
        if num_classes:
            return CorruptgenError(f"{self.kind}: label {label} of {source_id} is outside the {num_classes} classes "
                                   f"of {self.spec} (labels 0..{num_classes - 1})")  # fmt: skip
        return CorruptgenError(f"{self.kind}: label {label} of {source_id} is not a class index: labels must be "
                               f"0..{MAX_CLASSES - 1} (at most {MAX_CLASSES:,} classes)")  # fmt: skip

    def read(self, index: int, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
        """Raw encoded bytes of item ``index``, at most ``max_bytes`` of them.

        Raises:
            BadImageError: If the item cannot be read (file vanished, permission, not a regular file, over
                ``max_bytes``, corrupt container...).
        """
        return self._checked(index, max_bytes, self._read, len)

    def read_input(self, index: int, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes | np.ndarray:
        """What a build decodes of item ``index``: its encoded bytes (:meth:`read`), or the item's uint8 array for a
        source whose items are arrays (``samples``, ``npy:``; :meth:`read` gives that array as PNG bytes), at most
        ``max_bytes`` of pixels. Raises :class:`BadImageError` as :meth:`read` does."""
        if not self.arrays:
            return self.read(index, max_bytes=max_bytes)
        return self._checked(index, max_bytes, self._read_array, lambda array: array.nbytes)

    def _checked(self, index: int, max_bytes: int, fetch: Callable[[int, int], Any],
                 size: Callable[[Any], int]) -> Any:  # fmt: skip
        """``fetch(index, max_bytes)`` of an item in range without a known problem, refused over ``max_bytes``."""
        self.items()
        if not 0 <= index < len(self._items):
            raise IndexError(f"item index {index} out of range for {len(self._items)} items")
        problem = self.problems.get(index)
        if problem is not None:
            raise BadImageError(problem)
        data = fetch(index, max_bytes)
        if size(data) > max_bytes:
            raise BadImageError(too_many_bytes(self._items[index].source_id, size(data), max_bytes))
        return data

    def identity(self, index: int) -> str:
        """What item ``index`` is now, found without decoding it (a file's size and modification time, ...): the
        build records it when it reads the item and renders the item again when it changed (see
        :mod:`corruptgen.engine.fingerprint`); ``""`` where the item list says all there is."""
        return ""

    def listing_id(self) -> str:
        """sha256 of the item list (keys, origins, labels): two processes that scanned the same source agree on it."""
        if self.__dict__.get("_listing_id") is None:
            digest = hashlib.sha256()
            for item in self.items():
                digest.update(json.dumps([item.key, item.source_id, item.label, item.label_name]).encode() + b"\n")
            digest.update(b"labelled" if self.labelled else b"unlabelled")
            self._listing_id = digest.hexdigest()[:32]
        return self._listing_id

    def describe(self) -> dict:
        """JSON-safe description for the manifest: the spec and every path as a build records them
        (:func:`~corruptgen.io.sources.recorded_spec`: no absolute path, no home directory)."""
        count = len(self.items())
        kind, colon, rest = self.spec.partition(":")
        spec = f"{kind}:{self.shown_rest(rest)}" if colon and rest else self.spec
        base = {"spec": spec, "kind": self.kind, "count": count, "labelled": self.labelled,
                "num_classes": self.num_classes}  # fmt: skip
        return {**base, "total": self._total, "limit": self.limit, **self._describe_extra()}

    @staticmethod
    def shown_rest(rest: str) -> str:
        """The ``<rest>`` of a ``<kind>:<rest>`` spec as a build records it (its local paths as
        :mod:`corruptgen.io.shown` shows them); a source without local paths records it as it is."""
        return rest

    def __len__(self) -> int:
        return len(self.items())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r}, limit={self.limit})"

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        for name in self._TRANSIENT:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def _scan(self) -> list[SourceItem]:
        raise NotImplementedError

    def _read(self, index: int, max_bytes: int) -> bytes:
        if self.arrays:
            return array_png(self._read_array(index, max_bytes))
        raise NotImplementedError

    def _read_array(self, index: int, max_bytes: int) -> np.ndarray:
        raise NotImplementedError

    def _describe_extra(self) -> dict:
        return {}


# ----------------------------------------------------------------------------------------------------------- keys


def _sanitize_key(text: str) -> str:
    """Maps ``/`` to ``__`` and every other character outside ``[A-Za-z0-9_-]`` to ``_``; a key that would start with
    ``_`` (e.g. a non-ASCII name, ``__``) or be empty gets an ``x`` in front, since readers skip names starting with
    ``_`` or ``.`` as hidden files (datasets' webdataset loader drops them)."""
    key = _KEY_BAD_CHARS.sub("_", text.replace("/", "__"))
    return key if key[:1] not in ("", "_") else f"x{key}"


def _short_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def _unique_keys(keys: Sequence[str], ids: Sequence[str]) -> list[str]:
    """Makes keys unique: every member of a colliding group gets ``_<sha1(id)[:8]>``; a numeric suffix is the
    (deterministic) last resort."""
    counts = Counter(keys)
    hashed = [key if counts[key] == 1 else f"{key}_{_short_hash(id_)}" for key, id_ in zip(keys, ids, strict=True)]
    seen: set[str] = set()
    result = []
    for key in hashed:
        candidate, n = key, 0
        while candidate in seen:
            n += 1
            candidate = f"{key}_{n}"
        seen.add(candidate)
        result.append(candidate)
    return result


def _path_keys(relpaths: Sequence[str]) -> list[str]:
    """Keys for relative file paths: sanitized stems if unique, else sanitized paths without extension."""
    stems = [_sanitize_key(Path(rel).stem) for rel in relpaths]
    if len(set(stems)) == len(stems):
        return stems
    return _unique_keys([_sanitize_key(os.path.splitext(rel)[0]) for rel in relpaths], relpaths)


def _read_file(path: str, shown: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (checked before and while reading).

    FIFOs, sockets and devices (also behind a symlink) are refused without being read; the file is opened
    non-blocking and checked again after opening, so a file swapped for a FIFO never blocks the build.
    """
    try:
        _check_regular(os.stat(path), shown, max_bytes)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as fh:
            _check_regular(os.fstat(fd), shown, max_bytes)
            data = fh.read(max_bytes + 1)
    except FileNotFoundError as exc:
        raise BadImageError(f"file not found: {shown}", transient=True) from exc
    except PermissionError as exc:
        raise BadImageError(f"permission denied: {shown}", transient=True) from exc
    except OSError as exc:
        raise BadImageError(f"cannot read file {shown}: {exc.strerror or exc}", transient=True) from exc
    if len(data) > max_bytes:  # the file grew after the size check
        raise BadImageError(too_many_bytes(shown, None, max_bytes))
    return data


_FILE_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))  # fmt: skip


def _check_regular(st: os.stat_result, shown: str, max_bytes: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _FILE_KINDS if test(st.st_mode)), "not a regular file")
        raise BadImageError(f"not a regular file: {shown} is {kind}; only regular files are read")
    if st.st_size > max_bytes:
        raise BadImageError(too_many_bytes(shown, st.st_size, max_bytes))


def file_identity(path: str) -> str:
    """``<size>:<mtime in ns>`` of a file (through links), or why it has none: what a build records of a file it
    read, so that a later run can tell it changed without reading it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    return f"{st.st_size}:{st.st_mtime_ns}"


def is_build_dir(folder: str, names: Collection[str] | None = None) -> bool:
    """True when ``folder`` is a corruptgen build directory: it holds the build lock file, or a ``manifest.json``
    with a plan id and shard records (``names``: the folder's file names, when they are already listed)."""
    if names is None:
        names = [n for n in (LOCK_NAME, "manifest.json") if os.path.isfile(os.path.join(folder, n))]
    if LOCK_NAME in names:
        return True
    if "manifest.json" not in names:
        return False
    try:
        with open(os.path.join(folder, "manifest.json"), "rb") as fh:
            manifest = json.loads(fh.read(_MAX_MANIFEST_BYTES))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and "plan_id" in manifest and "shards" in manifest


def build_dir_above(folder: str, top: str | None = None, seen: dict[str, bool] | None = None) -> str | None:
    """The nearest corruptgen build directory at or above ``folder`` (up to ``top``, else up to the filesystem root);
    ``seen`` caches the answers of one scan."""
    seen = {} if seen is None else seen
    here = os.path.abspath(folder)
    while True:
        if here not in seen:
            seen[here] = is_build_dir(here)
        if seen[here]:
            return here
        parent = os.path.dirname(here)
        if here == top or parent == here:
            return None
        here = parent


def refuse_build_dir(folder: str, what: str, *, below: bool = False) -> None:
    """Fail in one line when ``folder`` is in a corruptgen build directory (with ``below``: or holds one anywhere
    under it): a build never reads a build's files as its source."""
    inside = build_dir_above(folder)
    where = "inside"
    if inside is None and below:
        found = (d for d, _, names in os.walk(folder, followlinks=False) if is_build_dir(d, names))
        inside, where = next(found, None), "holding"
    if inside is not None:
        raise CorruptgenError(
            f"{what} is {where} the corruptgen build directory {inside}; a build never reads a build's files as its "
            "source: name the folder of the source images (or put --out elsewhere)"
        )


def split_file(rest: str) -> tuple[str, str | None] | None:
    """``<file>[:<second>]``: the longest leading part of ``rest`` naming an existing file, and what follows its ``:``
    (``None`` when nothing does); ``None`` when no leading part names a file. Paths holding ``:`` still work."""
    cuts = [i for i, ch in enumerate(rest) if ch == ":"] + [len(rest)]
    for cut in reversed(cuts):
        if os.path.isfile(os.path.expanduser(rest[:cut])):
            return rest[:cut], rest[cut + 1 :] or None
    return None


def shown_file_and(rest: str) -> str:
    """``<file>[:<second>]`` with both paths as a build records them (:func:`corruptgen.io.shown.shown_path`)."""
    parts = split_file(rest)
    if parts is None:
        return rest
    first, second = parts
    return shown_path(first) + ("" if second is None else f":{shown_path(second)}")


def too_many_bytes(shown: str, size: int | None, max_bytes: int) -> str:
    """The skip reason of an input over the byte cap (``size`` None: it grew past the cap while being read)."""
    has = "grew past the limit" if size is None else f"{size} bytes > limit"
    return f"file too large: {shown}: {has} of {max_bytes} bytes (--max-bytes)"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
