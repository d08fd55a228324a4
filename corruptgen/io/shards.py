"""Deterministic, atomic WebDataset shard writing.

Members are written in a fixed order with fixed metadata (mtime, owner, mode), so the same samples always give the
same bytes. A local shard is written under a hidden ``.partial`` name and renamed when complete; a shard of a remote
build (an fsspec URL, see :mod:`corruptgen.io.storage`) is written to a local temporary file and uploaded with one put.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
from pathlib import Path
from typing import Any

from .atomic import PARTIAL_SUFFIX, partial_path

__all__ = ["ShardWriter", "open_shard"]

TAR_MTIME = 946_684_800  # 2000-01-01T00:00:00Z: fixed so rebuilds are byte-identical
_ZEROS = bytes(512)


def _octal(value: int, width: int) -> bytes:
    return b"%0*o\0" % (width - 1, value)


# the fixed fields of every member header (ustar: name 0-100, mode, uid, gid 100-124, size 124-136, mtime 136-148,
# checksum 148-156, type flag 156, link name 157-257, magic + version 257-265, owner and group names 265-329, device
# numbers 329-345, prefix 345-500, padding 500-512)
_IDS = _octal(0o444, 8) + _octal(0, 8) + _octal(0, 8)
_MTIME = _octal(TAR_MTIME, 12)
_TYPE_TO_DEVICES = tarfile.REGTYPE + bytes(100) + b"ustar\x0000" + bytes(64) + _octal(0, 8) + _octal(0, 8)
_FIXED_SUM = sum(_IDS) + sum(_MTIME) + sum(_TYPE_TO_DEVICES) + 8 * ord(" ")  # the checksum counts itself as spaces


def tar_header(name: str, size: int) -> bytes:
    """A 512-byte POSIX ustar header with fixed metadata (mode 0444, uid/gid 0, fixed mtime)."""
    raw = name.encode("utf-8")
    prefix = b""
    if len(raw) > 100:  # split at a "/" into prefix (155) + name (100), as ustar allows
        cut = raw.rfind(b"/", 0, 156)
        if cut <= 0 or len(raw) - cut - 1 > 100:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode, info.uname, info.gname = size, TAR_MTIME, 0o444, "", ""
            return info.tobuf(format=tarfile.PAX_FORMAT)
        prefix, raw = raw[:cut], raw[cut + 1 :]
    size_field = _octal(size, 12)
    checksum = b"%06o\0 " % (_FIXED_SUM + sum(raw) + sum(size_field) + sum(prefix))
    return b"".join((raw.ljust(100, b"\0"), _IDS, size_field, _MTIME, checksum, _TYPE_TO_DEVICES,
                     prefix.ljust(167, b"\0")))  # fmt: skip


class ShardWriter:
    """Write one tar shard: ``add(key, {"jpg": bytes, "json": bytes, ...})`` then ``commit()`` (atomic rename)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = partial_path(self.path)
        self._start(open(self._tmp, "wb"))  # closed in commit() or abort()

    def _start(self, file: Any) -> None:
        self._file = file
        self._hash = hashlib.sha256()  # of the bytes as written: no re-read on commit
        self._size = 0
        self.count = 0
        self.fields: dict[str, None] = {}  # member suffixes written, in first-seen order

    def _write(self, data: bytes) -> None:
        self._file.write(data)
        self._hash.update(data)
        self._size += len(data)

    def _record(self) -> dict[str, Any]:
        return {"sha256": self._hash.hexdigest(), "bytes": self._size, "samples": self.count}

    def add(self, key: str, fields: dict[str, bytes]) -> None:
        """Add one sample; fields are written in sorted extension order, keys must not contain dots."""
        if "." in key or "/" in key or not key:
            raise ValueError(f"invalid sample key {key!r}")
        parts = []
        for ext in sorted(fields):
            data = fields[ext]
            self.fields.setdefault(ext)
            parts += (tar_header(f"{key}.{ext}", len(data)), data, _ZEROS[: -len(data) % 512])
        self._write(b"".join(parts))  # one write and one hash update per sample
        self.count += 1

    def _finish(self) -> None:
        end = 1024 + (-(self._size + 1024)) % tarfile.RECORDSIZE  # two zero blocks, padded to a whole record
        self._write(bytes(end))
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def commit(self) -> dict[str, Any]:
        """Finish the archive, fsync and rename into place; return ``{"sha256", "bytes", "samples"}``."""
        self._finish()
        os.replace(self._tmp, self.path)
        return self._record()

    def abort(self) -> None:
        """Drop the partial file."""
        try:
            self._file.close()
        finally:
            self._tmp.unlink(missing_ok=True)


class RemoteShardWriter(ShardWriter):
    """A shard of a remote build: written to a local temporary file, uploaded to ``url`` with one put on commit.

    The temporary file is deleted after the upload, and on abort; the remote object appears only complete on object
    stores (see :mod:`corruptgen.io.storage`).
    """

    def __init__(self, url: str, rel: str) -> None:
        from .storage import location, temp_file

        self._location, self._rel = location(url), rel
        self.path = self._location.url_of(rel)  # type: ignore[assignment]
        self._temp = temp_file(".tar" + PARTIAL_SUFFIX)
        self._tmp = self._temp.path
        self._start(self._temp.file)

    def commit(self) -> dict[str, Any]:
        """Finish the archive, upload it with one put; return ``{"sha256", "bytes", "samples"}``."""
        try:
            self._finish()
            record = self._record()
            self._location.put_file(self._tmp, self._rel)
        finally:
            self._temp.close()
        return record

    def abort(self) -> None:
        """Drop the staging file."""
        self._temp.close()


def open_shard(out_dir: str | os.PathLike, rel: str) -> ShardWriter:
    """A writer for shard ``rel`` of the build at ``out_dir``: a local path, or an fsspec URL (uploaded on commit)."""
    from .storage import local_path

    local = local_path(out_dir)
    if local is not None:
        return ShardWriter(local / rel)
    return RemoteShardWriter(str(out_dir), rel)
