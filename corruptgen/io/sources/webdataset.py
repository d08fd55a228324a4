"""``webdataset:<path-or-pattern>`` source: local tar shards; brace patterns (``clean-{000..009}.tar``) and shell
globs."""

from __future__ import annotations

import glob
import os
import re
import tarfile
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, BinaryIO

from corruptgen.errors import CorruptgenError
from corruptgen.io.decode import BadImageError

from .base import Source, SourceItem, _one_line, _sanitize_key, _unique_keys

_WDS_IMAGE_EXTENSIONS = frozenset({"jpg", "jpeg", "png", "webp", "ppm", "bmp", "tif", "tiff"})
_WDS_MEMBER = re.compile(r"^((?:.*/|)[^.]+)[.]([^/]*)$")  # webdataset's base_plus_ext rule
_MAX_OPEN_SHARDS = 8


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
    """

    kind = "webdataset"
    _TRANSIENT = ("_handles",)

    def __init__(self, spec: str, pattern: str, *, limit: int | None = None) -> None:
        super().__init__(spec, limit=limit)
        self.pattern = pattern
        self.shards: list[str] = []
        self.shard_paths: list[str] = []
        self.compressed: list[bool] = []
        self.skipped_samples = 0
        self._members: list[_TarMember] = []
        self._handles: OrderedDict[int, Any] = OrderedDict()

    def _scan(self) -> list[SourceItem]:
        self.shards = _expand_shards(self.pattern)
        self.shard_paths = [os.path.abspath(os.path.expanduser(s)) for s in self.shards]
        self.compressed = [_is_compressed(p) for p in self.shard_paths]
        records = []
        for index, path in enumerate(self.shard_paths):
            records.extend(self._scan_shard(index, path))
        if not records:
            raise CorruptgenError(f"webdataset: no samples with an image member in {self.pattern}")
        self.labelled = any(r["label"] is not None for r in records)
        ids = [f"{os.path.basename(self.shards[r['shard']])}/{r['key']}" for r in records]
        keys = _unique_keys([_sanitize_key(r["key"]) for r in records], ids)
        self._members = [r["member"] for r in records]
        return [
            SourceItem(key, f"{self.shards[r['shard']]}:{r['name']}", r["label"], r["label_name"])
            for key, r in zip(keys, records, strict=True)
        ]

    def items(self) -> list[SourceItem]:
        """All items in deterministic order (shard order, then tar member order)."""
        items = super().items()
        del self._members[len(items) :]
        return items

    def _scan_shard(self, shard: int, path: str) -> list[dict]:
        try:
            with tarfile.open(path, "r:*") as tf:
                groups: OrderedDict[str, list[tarfile.TarInfo]] = OrderedDict()
                for member in tf:
                    match = _WDS_MEMBER.match(member.name)
                    if member.isfile() and match:
                        groups.setdefault(match.group(1), []).append(member)
                return [r for key, ms in groups.items() if (r := self._sample_record(tf, shard, key, ms)) is not None]
        except (OSError, tarfile.TarError, EOFError) as exc:
            raise CorruptgenError(f"webdataset: cannot read tar shard {self.shards[shard]}: {_one_line(exc)}") from exc

    def _sample_record(self, tf: tarfile.TarFile, shard: int, key: str, members: list[tarfile.TarInfo]) -> dict | None:
        by_ext = {_WDS_MEMBER.match(m.name).group(2).lower(): m for m in reversed(members)}  # first occurrence wins
        image = next((m for m in members if _WDS_MEMBER.match(m.name).group(2).lower() in _WDS_IMAGE_EXTENSIONS), None)
        if image is None:
            self.skipped_samples += 1
            return None
        label, label_name = _wds_label(tf, by_ext)
        return {
            "shard": shard,
            "key": key,
            "name": image.name,
            "member": _TarMember(shard, image.offset_data, image.size),
            "label": label,
            "label_name": label_name,
        }

    def _read(self, index: int) -> bytes:
        member = self._members[index]
        shown = self._items[index].source_id
        try:
            data = self._read_member(member)
        except OSError as exc:
            raise BadImageError(f"cannot read {shown}: {exc.strerror or _one_line(exc)}") from exc
        except (tarfile.TarError, EOFError) as exc:
            raise BadImageError(f"cannot read {shown}: {_one_line(exc)}") from exc
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

    def _describe_extra(self) -> dict:
        return {"pattern": self.pattern, "shards": list(self.shards), "skipped_samples": self.skipped_samples}


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
    fh = tf.extractfile(member)
    return fh.read().decode("utf-8", errors="replace") if fh is not None else ""


def _as_label(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and re.fullmatch(r"\d+", value.strip()):
        return int(value.strip())
    return None


def _expand_shards(pattern: str) -> list[str]:
    """Expands brace patterns and shell globs; every named shard must exist."""
    import braceexpand

    shards: list[str] = []
    missing: list[str] = []
    for part in braceexpand.braceexpand(pattern):
        expanded = os.path.expanduser(part)
        matches = sorted(glob.glob(expanded)) if glob.has_magic(expanded) else []
        if matches:
            shards.extend(matches)
        elif os.path.isfile(expanded):
            shards.append(part)
        else:
            missing.append(part)
    if missing:
        more = f" (and {len(missing) - 3} more)" if len(missing) > 3 else ""
        raise CorruptgenError(f"webdataset: shard not found: {', '.join(missing[:3])}{more}")
    return list(dict.fromkeys(shards))


def _is_compressed(path: str) -> bool:
    with open(path, "rb") as fh:
        magic = fh.read(6)
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
