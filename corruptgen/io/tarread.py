"""Reading WebDataset tar shards sample by sample (the writer's counterpart): local paths or fsspec URLs, bounded.

A sample is the run of consecutive members sharing a key; the key ends at the first dot of the basename (webdataset's
rule), so ``k.000.jpg`` is field ``000.jpg`` of sample ``k``. Plain ustar archives (as corruptgen writes them) are
read header by header, seeking over fields that are not wanted; anything else goes through :mod:`tarfile`.

Every read is bounded by :class:`Limits` (the build's own, see :meth:`Limits.of`): a local shard is opened only when it
is a regular file (:mod:`corruptgen.io.regular`: a FIFO, socket, device or symbolic link is refused before
``open()``); a member is read only when the size its tar header declares is within its cap (json and other text
metadata: 1 MiB, as a source's label members; images: the larger of the sources' byte cap and 4 bytes per allowed
pixel); an image member's header must declare at most the build's pixel limit (checked before anything decodes it:
a 30000² PNG of a few hundred kB is refused, not decoded), and must not be empty. A sample with a member refused is
not yielded: ``refused(key, reason)`` is told, or, without it, :class:`ShardError` stops the read in one line. A shard
that cannot be read (not a regular file, not a tar, cut short) raises :class:`ShardError`.
"""

from __future__ import annotations

import json
import os
import tarfile
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import CorruptgenError
from .decode import DEFAULT_MAX_BYTES, DEFAULT_MAX_PIXELS, BadImageError, image_size
from .float_images import is_npy, npy_size
from .layout import image_field, split_member
from .regular import NotRegularError, open_regular

#: Largest json (or other text metadata) member read: 1 MiB, the cap of a webdataset source's label members.
MAX_JSON_BYTES = 2**20
_TEXT_FIELDS = ("json", "jsn", "cls", "txt", "text")


@dataclass(frozen=True)
class Limits:
    """What a member may be before it is read (its declared size) and before it is decoded (its declared pixels)."""

    max_pixels: int = DEFAULT_MAX_PIXELS
    max_json_bytes: int = MAX_JSON_BYTES

    @classmethod
    def of(cls, manifest: dict[str, Any] | None) -> Limits:
        """The limits of a build: its plan's ``max_pixels`` (``--max-pixels``; the sources' default without one)."""
        value = ((manifest or {}).get("plan") or {}).get("max_pixels")
        ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        return cls(max_pixels=value if ok else DEFAULT_MAX_PIXELS)

    @property
    def max_bytes(self) -> int:
        """Largest image (or other non-text) member: the sources' byte cap, or 4 bytes per allowed pixel (an
        uncompressed RGBA image) when that is more."""
        return max(DEFAULT_MAX_BYTES, 4 * self.max_pixels)

    def cap(self, fld: str) -> int:
        return self.max_json_bytes if fld.rsplit(".", 1)[-1].lower() in _TEXT_FIELDS else self.max_bytes

    def refuse_size(self, fld: str, size: int) -> str | None:
        """Why a ``fld`` member of ``size`` declared bytes is not read, or ``None``."""
        cap = self.cap(fld)
        if size <= cap:
            return None
        what = "json/text" if cap == self.max_json_bytes else "image"
        return f"{fld} member declares {size} bytes > the limit of {cap} bytes for a {what} member: not read"

    def refuse_image(self, fld: str, data: bytes) -> str | None:
        """Why an image member is not handed on to be decoded (empty, not an image, more pixels than the limit)."""
        if image_field(fld) is None:
            return None
        why = self.refuse_pixels(data)
        return None if why is None else f"{fld} image: {why}"

    def refuse_pixels(self, data: bytes) -> str | None:
        """Why encoded image bytes are not decoded, from their header alone: empty, not an image of an accepted
        format, or more pixels than :attr:`max_pixels`."""
        try:
            w, h = npy_size(data) if is_npy(data) else image_size(data)
        except BadImageError as e:
            return e.reason
        if w * h > self.max_pixels:
            return f"{w}x{h} pixels > the build's limit of {self.max_pixels} (its --max-pixels): not decoded"
        return None


DEFAULT_LIMITS = Limits()


class ShardError(CorruptgenError):
    """A shard that cannot be read (or a sample refused with nobody to tell); ``reason`` is the message without the
    shard's name."""

    def __init__(self, shard: str | os.PathLike, reason: str) -> None:
        super().__init__(f"shard {shard}: {reason}")
        self.shard, self.reason = str(shard), reason


class _Fallback(Exception):
    pass


def _members(f: IO[bytes]) -> Iterator[tuple[str, int, int]]:
    """(name, data offset, size) of the regular files of a plain ustar archive, read header by header with seeks over
    the data; raises ``_Fallback`` on anything else (PAX / GNU long names, base-256 sizes, links, ...)."""
    offset = 0
    while True:
        f.seek(offset)
        header = f.read(512)
        if len(header) < 512 or header == bytes(512):
            if 0 < len(header) < 512:
                raise tarfile.ReadError(f"cut short in a member header at byte {offset}")
            return
        typeflag = header[156:157]
        if typeflag not in (b"0", b"\0") or header[257:262] != b"ustar":
            raise _Fallback
        name = header[0:100].split(b"\0", 1)[0].decode("utf-8")
        prefix = header[345:500].split(b"\0", 1)[0].decode("utf-8")
        if prefix:
            name = f"{prefix}/{name}"
        size_field = header[124:136]
        if size_field[0] & 0x80:
            raise _Fallback
        size = int(size_field.split(b"\0", 1)[0].strip() or b"0", 8)
        yield name, offset + 512, size
        offset += 512 + -(-size // 512) * 512


def _open(shard: str | os.PathLike) -> IO[bytes]:
    text = str(shard)
    if "://" in text:
        import fsspec

        return fsspec.open(text, "rb").open()
    try:
        return open_regular(shard)
    except NotRegularError as e:
        raise ShardError(shard, e.reason) from None


def _read(f: IO[bytes], name: str, size: int) -> bytes:
    data = f.read(size)
    if len(data) != size:
        raise tarfile.ReadError(f"member {name} cut short ({len(data)} of {size} bytes)")
    return data


Member = tuple[str, bytes | None, str | None]  # (name, its bytes when wanted and read, why it was not read)


def tar_members(
    shard: str | os.PathLike,
    want: Callable[[str], bool],
    only: Collection[str] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Iterator[Member]:
    """``(member name, bytes or None, refusal or None)`` of every regular file, in archive order: the bytes when
    ``want(field)`` (and the name is in ``only``, when given) and ``limits`` allow them, else the reason they were
    refused (a wanted member only). Raises :class:`ShardError` when the archive cannot be read."""
    try:
        with _open(shard) as f:
            yield from _tar_members(f, want, only, limits)
    except (tarfile.TarError, EOFError, UnicodeDecodeError, ValueError) as e:
        raise ShardError(shard, f"not a readable tar archive ({type(e).__name__}: {e})") from None


def _tar_members(f: IO[bytes], want: Callable[[str], bool], only: Collection[str] | None, limits: Limits):
    def wanted(name: str) -> str | None:
        _, fld = split_member(name)
        return fld if fld is not None and want(fld) and (only is None or name in only) else None

    try:
        members = list(_members(f))
    except _Fallback:
        members = None
    if members is not None:
        for name, start, size in members:
            fld = wanted(name)
            if fld is None:
                yield name, None, None
                continue
            why = limits.refuse_size(fld, size)
            if why is None:
                f.seek(start)
                data = _read(f, name, size)
                why = limits.refuse_image(fld, data)
            yield (name, None, why) if why else (name, data, None)
        return
    f.seek(0)
    with tarfile.open(fileobj=f, mode="r:") as tar:
        for member in tar:
            fld = wanted(member.name)
            if not member.isfile():
                if fld is not None and not member.isdir():
                    yield member.name, None, f"{fld} member is not a regular file in the tar: not read"
                continue
            why = None if fld is None else limits.refuse_size(fld, member.size)
            if fld is None or why is not None:
                yield member.name, None, why
                continue
            extracted = tar.extractfile(member)
            data = _read(extracted, member.name, member.size) if extracted is not None else b""
            why = limits.refuse_image(fld, data)
            yield (member.name, None, why) if why else (member.name, data, None)


def oversized(shard: str | os.PathLike, limits: Limits = DEFAULT_LIMITS) -> Iterator[tuple[str, str]]:
    """``(member name, why)`` of every member whose declared size is over its cap, from the tar headers alone (the
    data are seeked over): what a reader that reads whole members itself checks first. Raises :class:`ShardError`."""
    try:
        with _open(shard) as f:
            try:
                listed = [(name, size) for name, _, size in _members(f)]
            except _Fallback:
                f.seek(0)
                with tarfile.open(fileobj=f, mode="r:") as tar:
                    listed = [(m.name, m.size) for m in tar if m.isfile()]
    except (tarfile.TarError, EOFError, UnicodeDecodeError, ValueError) as e:
        raise ShardError(shard, f"not a readable tar archive ({type(e).__name__}: {e})") from None
    for name, size in listed:
        _, fld = split_member(name)
        why = None if fld is None else limits.refuse_size(fld, size)
        if why is not None:
            yield name, why


def iter_samples(
    shard: str | os.PathLike | Path,
    want: Callable[[str], bool] = lambda field: False,
    *,
    limits: Limits = DEFAULT_LIMITS,
    refused: Callable[[str, str], None] | None = None,
) -> Iterator[tuple[str, dict[str, bytes | None]]]:
    """``(key, {field: bytes or None})`` per sample of a shard; only fields with ``want(field)`` are read. A sample with
    a refused member is left out and ``refused(key, reason)`` told (without ``refused``: :class:`ShardError`)."""
    key, fields, why = None, {}, None
    for name, data, refusal in tar_members(shard, want, limits=limits):
        k, fld = split_member(name)
        if k is None:
            continue
        if key is not None and k != key:
            yield from _finish(shard, key, fields, why, refused)
            fields, why = {}, None
        key = k
        fields[fld] = data
        why = why or refusal
    if key is not None:
        yield from _finish(shard, key, fields, why, refused)


def _finish(shard, key: str, fields: dict, why: str | None, refused: Callable[[str, str], None] | None):
    if why is None:
        yield key, fields
    elif refused is None:
        raise ShardError(shard, f"sample {key}: {why}")
    else:
        refused(key, why)


def read_members(
    shard: str | os.PathLike | Path,
    names: Collection[str],
    *,
    limits: Limits = DEFAULT_LIMITS,
    refused: Callable[[str, str], None] | None = None,
) -> dict[str, bytes]:
    """``{member name: bytes}`` of the named members of a shard; the others are seeked over, not read. A refused member
    is left out and ``refused(name, reason)`` told (without ``refused``: :class:`ShardError`)."""
    out = {}
    for name, data, why in tar_members(shard, lambda field: True, set(names), limits):
        if why is not None:
            if refused is None:
                raise ShardError(shard, why)
            refused(name, why)
        elif data is not None:
            out[name] = data
    return out


def parse_json(raw: bytes | None) -> dict[str, Any]:
    """A sample's json member as a dict: ``{}`` when it is missing, not JSON (or nested too deeply to parse) or not
    a JSON object."""
    try:
        value = json.loads(raw) if raw else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}
