"""``webdataset:<path-or-pattern>`` source: local tar shards; brace patterns (``clean-{000..009}.tar``) and shell
globs."""

from __future__ import annotations

import glob
import lzma
import os
import re
import stat
import tarfile
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, BinaryIO

from corruptgen.errors import CorruptgenError
from corruptgen.io.decode import BadImageError
from corruptgen.io.layout import IMAGE_EXTENSIONS
from corruptgen.io.shown import shown_pattern
from corruptgen.io.tarread import MAX_JSON_BYTES

from .base import (
    Source,
    SourceItem,
    _one_line,
    _sanitize_key,
    _unique_keys,
    build_dir_above,
    file_identity,
    too_many_bytes,
)

_WDS_MEMBER = re.compile(r"^((?:.*/|)[^.]+)[.]([^/]*)$")  # webdataset's base_plus_ext rule
_MAX_OPEN_SHARDS = 8
_MAX_LABEL_BYTES = MAX_JSON_BYTES  # .cls / .json members read while scanning (1 MiB, as a build's json members)


@dataclass(frozen=True)
class _TarMember:
    shard: int
    offset: int
    size: int


class WebDatasetSource(Source):
    """Local WebDataset tar shards; each sample's first image member is an item.

    Samples are grouped by the webdataset key (member path up to the first dot of its basename). Labels come from
    a ``.cls`` member (integer text) or a ``.json`` member (``label``/``cls``, optional ``label_name``). Samples
    without an image member are skipped (counted in ``describe()["skipped_samples"]``). Uncompressed shards are
    read with ``os.pread`` at the member offset; compressed ones through ``tarfile``.

    Damage never refuses the whole source: the samples before a shard's damage are items, and the rest of that
    shard, a shard that cannot be read at all, a sample whose image member is a link, device or FIFO, and a sample
    with a repeated member name stay in the item list as *problem* items that the build skips with their reason.
    """

    kind = "webdataset"
    _TRANSIENT = ("_handles",)

    @staticmethod
    def shown_rest(rest: str) -> str:
        return shown_pattern(rest[len("file://") :] if rest.startswith("file://") else rest)

    def __init__(self, spec: str, pattern: str, *, limit: int | None = None) -> None:
        super().__init__(spec, limit=limit)
        self.pattern = pattern
        self.shards: list[str] = []
        self.shard_paths: list[str] = []
        self.names: list[str] = []  # the shards' paths relative to their common folder (what is recorded)
        self.compressed: list[bool] = []
        self.skipped_samples = 0
        self._members: list[_TarMember | None] = []
        self._handles: OrderedDict[int, Any] = OrderedDict()

    def _scan(self) -> list[SourceItem]:
        self.shards = _outside_build_dirs(_expand_shards(self.pattern), self.pattern)
        self.shard_paths = [os.path.abspath(os.path.expanduser(s)) for s in self.shards]
        self.names = _relative_names(self.shard_paths)
        self.compressed = [_is_compressed(p) for p in self.shard_paths]
        records = []
        for index, path in enumerate(self.shard_paths):
            records.extend(self._scan_shard(index, path))
        if not any(r["problem"] is None for r in records):
            why = next((f": {r['problem']}" for r in records if r["problem"]), "")
            raise CorruptgenError(f"webdataset: no samples with an image member in {self.pattern}{why}")
        self.labelled = any(r["label"] is not None for r in records)
        ids = [f"{os.path.basename(self.shards[r['shard']])}/{r['key']}" for r in records]
        keys = _unique_keys([_sanitize_key(r["key"]) for r in records], ids)
        self._members = [r["member"] for r in records]
        self.problems = {i: r["problem"] for i, r in enumerate(records) if r["problem"] is not None}
        return [
            SourceItem(key, f"{self.names[r['shard']]}:{r['name']}", r["label"], r["label_name"])
            for key, r in zip(keys, records, strict=True)
        ]

    def items(self) -> list[SourceItem]:
        """All items in deterministic order (shard order, then tar member order)."""
        items = super().items()
        del self._members[len(items) :]
        return items

    def _scan_shard(self, shard: int, path: str) -> list[dict]:
        """The records of one shard; a shard that cannot be opened is one problem record."""
        name = self.names[shard]
        stem = _sanitize_key(os.path.basename(name))  # the key of a problem of the whole shard
        try:
            kind = _not_regular(os.stat(path).st_mode)
            if kind is not None:
                return [_problem(shard, "(shard)", f"not a regular file: tar shard {name} is {kind}", stem)]
            with tarfile.open(path, "r:*") as tf:
                groups, damage = _group_members(tf)
                listed = sum(map(len, groups.values()))
                lost = groups.popitem()[0] if damage is not None and groups else None  # may lack later members
                records = [self._sample_record(tf, shard, key, ms) for key, ms in groups.items()]
        except Exception as exc:  # hostile bytes: any failure of the tar/compression libraries
            return [_problem(shard, "(shard)", f"cannot read tar shard {name}: {_describe(exc)}", stem)]
        if damage is not None:
            what = f"sample {lost!r} and the rest of the shard" if lost else "the rest of the shard"
            reason = f"tar shard {name} damaged after {listed} members ({damage}): {what} skipped"
            records.append(_problem(shard, "(rest of shard)", reason, f"{stem}_rest"))
        return [r for r in records if r is not None]

    def _sample_record(self, tf: tarfile.TarFile, shard: int, key: str, members: list[tarfile.TarInfo]) -> dict | None:
        image = next((m for m in members if _extension(m) in IMAGE_EXTENSIONS), None)
        if image is None:
            self.skipped_samples += 1
            return None
        names = [m.name for m in members]
        duplicate = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if duplicate is not None:
            return _problem(shard, image.name, f"tar member name {duplicate} repeated in the shard: ambiguous", key)
        kind = _member_kind(image)
        if kind is not None:
            return _problem(shard, image.name, f"tar member {image.name} is {kind}; only regular members are read", key)
        by_ext = {_extension(m): m for m in reversed(members) if m.isreg()}  # first occurrence wins
        try:
            label, label_name = _wds_label(tf, by_ext)
        except Exception as exc:  # a damaged or oversized label member
            return _problem(shard, image.name, f"cannot read the label of {image.name}: {_describe(exc)}", key)
        return {
            "shard": shard,
            "key": key,
            "name": image.name,
            "member": _TarMember(shard, image.offset_data, image.size),
            "label": label,
            "label_name": label_name,
            "problem": None,
        }

    def _read(self, index: int, max_bytes: int) -> bytes:
        member = self._members[index]
        shown = self._items[index].source_id
        if member.size > max_bytes:
            raise BadImageError(too_many_bytes(shown, member.size, max_bytes))
        try:
            data = self._read_member(member)
        except OSError as exc:
            raise BadImageError(f"cannot read {shown}: {exc.strerror or _one_line(exc)}", transient=True) from exc
        except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError) as exc:
            raise BadImageError(f"cannot read {shown}: {_describe(exc)}") from exc
        if len(data) != member.size:
            raise BadImageError(f"tar member truncated: {shown} ({len(data)} of {member.size} bytes)")
        return data

    def _read_member(self, member: _TarMember) -> bytes:
        handle = self._handle(member.shard)
        if isinstance(handle, int):  # uncompressed: positional read, safe after fork
            return _pread_all(handle, member.size, member.offset)
        handle.fileobj.seek(member.offset)
        return handle.fileobj.read(member.size)

    def _handle(self, shard: int) -> Any:
        handles = self.__dict__.setdefault("_handles", OrderedDict())
        if shard in handles:
            handles.move_to_end(shard)
            return handles[shard]
        path = self.shard_paths[shard]
        handle = tarfile.open(path, "r:*") if self.compressed[shard] else os.open(path, os.O_RDONLY)
        handles[shard] = handle
        while len(handles) > _MAX_OPEN_SHARDS:
            _close_handle(handles.popitem(last=False)[1])
        return handle

    def close(self) -> None:
        """Closes the open shard handles of this process (they are reopened on demand)."""
        handles = self.__dict__.get("_handles") or {}
        for handle in handles.values():
            _close_handle(handle)
        handles.clear()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def identity(self, index: int) -> str:
        """The tar shard's size and modification time, and the member's offset and size."""
        problem = self.problems.get(index)
        if problem is not None:
            return f"refused: {problem}"
        member = self._members[index]
        return f"{file_identity(self.shard_paths[member.shard])}:{member.offset}:{member.size}"

    def _describe_extra(self) -> dict:
        return {"pattern": shown_pattern(self.pattern), "shards": list(self.names),
                "skipped_samples": self.skipped_samples, "refused": len(self.problems)}  # fmt: skip


def _relative_names(paths: list[str]) -> list[str]:
    """The shards' paths relative to the folder holding them all (a sample's ``source_id`` and a skip reason name a
    shard so: never by an absolute path, and the same from any folder the build runs in)."""
    if not paths:
        return []
    root = os.path.commonpath([os.path.dirname(p) for p in paths])
    home = os.path.normpath(os.path.expanduser("~"))
    if root == os.path.dirname(root) or home.startswith(root.rstrip(os.sep) + os.sep):  # "/", or above the home
        return [os.path.basename(p) for p in paths]  # folder: the names alone, never the path through it
    return [os.path.relpath(p, root).replace(os.sep, "/") for p in paths]


def _group_members(tf: tarfile.TarFile) -> tuple[OrderedDict[str, list[tarfile.TarInfo]], str | None]:
    """The members of a shard grouped by sample key (directories and dot-less names left out), and the description
    of the damage that ended the listing early (``None`` when the archive was read to its end)."""
    groups: OrderedDict[str, list[tarfile.TarInfo]] = OrderedDict()
    try:
        for member in tf:
            match = _WDS_MEMBER.match(member.name)
            if match and not member.isdir():
                groups.setdefault(match.group(1), []).append(member)
    except Exception as exc:  # truncated or corrupt archive: what was listed before stays usable
        return groups, _describe(exc)
    return groups, None


def _problem(shard: int, name: str, reason: str, key: str) -> dict:
    """A record the build skips with ``reason`` (keyed by the sample key, or by the shard's name)."""
    return {"shard": shard, "key": key, "name": name, "member": None, "label": None,
            "label_name": None, "problem": reason}  # fmt: skip


def _extension(member: tarfile.TarInfo) -> str:
    return _WDS_MEMBER.match(member.name).group(2).lower()


def _member_kind(member: tarfile.TarInfo) -> str | None:
    """What a member is when it is not a plain regular file (``None`` for a regular file)."""
    if member.issym():
        return f"a symbolic link (to {member.linkname})"
    if member.islnk():
        return f"a hard link (to {member.linkname})"
    if member.issparse():
        return "a sparse file"
    if member.ischr() or member.isblk():
        return "a device"
    if member.isfifo():
        return "a FIFO"
    return None if member.isreg() else f"of tar type {member.type!r}"


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {_one_line(exc)}"


def _wds_label(tf: tarfile.TarFile, by_ext: dict[str, tarfile.TarInfo]) -> tuple[int | None, str | None]:
    """Label from ``.cls`` (integer text), else from ``.json`` ``label``/``cls``; name from json ``label_name``."""
    import json

    meta: dict = {}
    if "json" in by_ext:
        try:
            loaded = json.loads(_member_text(tf, by_ext["json"]))
            meta = loaded if isinstance(loaded, dict) else {}
        except ValueError:
            meta = {}
    label = None
    if "cls" in by_ext:
        label = _as_label(_member_text(tf, by_ext["cls"]).strip())
    if label is None:
        label = _as_label(meta.get("label", meta.get("cls")))
    name = meta.get("label_name")
    return label, name if isinstance(name, str) else None


def _member_text(tf: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    if member.size > _MAX_LABEL_BYTES:
        raise BadImageError(f"label member {member.name} has {member.size} bytes > {_MAX_LABEL_BYTES}")
    fh = tf.extractfile(member)
    return fh.read(_MAX_LABEL_BYTES).decode("utf-8", errors="replace") if fh is not None else ""


def _as_label(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and re.fullmatch(r"\d+", value.strip()):
        return int(value.strip())
    return None


def _expand_shards(pattern: str) -> list[str]:
    """Expands brace patterns and shell globs; every named shard must exist (regularity is checked by the scan)."""
    import braceexpand

    shards: list[str] = []
    missing: list[str] = []
    for part in braceexpand.braceexpand(pattern):
        expanded = os.path.expanduser(part)
        matches = sorted(glob.glob(expanded)) if glob.has_magic(expanded) else []
        if matches:
            shards.extend(matches)
        elif os.path.exists(expanded):
            shards.append(part)
        else:
            missing.append(part)
    if missing:
        more = f" (and {len(missing) - 3} more)" if len(missing) > 3 else ""
        raise CorruptgenError(f"webdataset: shard not found: {', '.join(missing[:3])}{more}")
    return list(dict.fromkeys(shards))


def _outside_build_dirs(shards: list[str], pattern: str) -> list[str]:
    """``shards`` without those inside a corruptgen build directory (a build never reads a build's own shards)."""
    seen: dict[str, bool] = {}
    inside = {s: build_dir_above(os.path.dirname(os.path.abspath(os.path.expanduser(s))), None, seen) for s in shards}
    kept = [s for s in shards if inside[s] is None]
    if not kept:
        raise CorruptgenError(
            f"webdataset: {pattern} names only shards inside the corruptgen build directory {inside[shards[0]]}; "
            "a build never reads a build's files as its source"
        )
    return kept


def _is_compressed(path: str) -> bool:
    """True for gzip/bzip2/xz data; False for anything else, including what is not a readable regular file."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False  # never opened: a FIFO would block
        with open(path, "rb") as fh:
            magic = fh.read(6)
    except OSError:
        return False
    return magic.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ"))


def _pread_all(fd: int, size: int, offset: int) -> bytes:
    chunks, done = [], 0
    while done < size:
        chunk = os.pread(fd, size - done, offset + done)
        if not chunk:
            break
        chunks.append(chunk)
        done += len(chunk)
    return b"".join(chunks)


def _close_handle(handle: int | BinaryIO | tarfile.TarFile) -> None:
    try:
        os.close(handle) if isinstance(handle, int) else handle.close()
    except OSError:
        pass
