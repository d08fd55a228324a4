"""Reading WebDataset tar shards sample by sample (the writer's counterpart): local paths or fsspec URLs.

A sample is the run of consecutive members sharing a key; the key ends at the first dot of the basename (webdataset's
rule), so ``k.000.jpg`` is field ``000.jpg`` of sample ``k``. Plain ustar archives (as corruptgen writes them) are
read header by header, seeking over fields that are not wanted; anything else goes through :mod:`tarfile`.
"""

from __future__ import annotations

import os
import tarfile
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import IO

from .layout import split_member


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
    return open(shard, "rb")


def tar_members(
    shard: str | os.PathLike, want: Callable[[str], bool], only: Collection[str] | None = None
) -> Iterator[tuple[str, bytes | None]]:
    """(member name, its bytes if ``want(field)`` (and the name is in ``only``, when given), else ``None``) of every
    regular file, in archive order."""
    with _open(shard) as f:
        try:
            members = list(_members(f))
        except _Fallback:
            members = None
        if members is not None:
            for name, start, size in members:
                _, fld = split_member(name)
                data = None
                if fld is not None and want(fld) and (only is None or name in only):
                    f.seek(start)
                    data = f.read(size)
                yield name, data
            return
        f.seek(0)
        with tarfile.open(fileobj=f, mode="r:") as tar:
            for member in tar:
                if member.isfile():
                    _, fld = split_member(member.name)
                    keep = fld is not None and want(fld) and (only is None or member.name in only)
                    extracted = tar.extractfile(member) if keep else None
                    yield member.name, (extracted.read() if extracted is not None else None)


def iter_samples(
    shard: str | os.PathLike | Path, want: Callable[[str], bool] = lambda field: False
) -> Iterator[tuple[str, dict[str, bytes | None]]]:
    """``(key, {field: bytes or None})`` per sample of a shard; only fields with ``want(field)`` are read."""
    key, fields = None, {}
    for name, data in tar_members(shard, want):
        k, fld = split_member(name)
        if k is None:
            continue
        if key is not None and k != key:
            yield key, fields
            fields = {}
        key = k
        fields[fld] = data
    if key is not None:
        yield key, fields


def read_members(shard: str | os.PathLike | Path, names: Collection[str]) -> dict[str, bytes]:
    """``{member name: bytes}`` of the named members of a shard; the others are seeked over, not read."""
    wanted = set(names)
    return {name: data for name, data in tar_members(shard, lambda field: True, wanted) if data is not None}
