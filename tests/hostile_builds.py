"""Hostile copies of a real build for the reading commands: an image member whose header declares 30000² pixels (a
real, valid PNG of zeros: 1-bit grey, ~110 kB), a 0-byte image member, a json member far over the 1 MiB cap (a sparse
200 MB member: no disk is written for its zeros), a FIFO or a symbolic link in place of a shard. Each copy's manifest
records the new shard's sha256 and size, as an attacker's build would, so checksums do not stop a command first."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import struct
import tarfile
import zlib
from pathlib import Path


def sparse_png(side: int) -> bytes:
    """A valid PNG of ``side`` x ``side`` black 1-bit grey pixels: decoding it to RGB takes ``3 * side²`` bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row, compress, rows, idat = bytes(1 + -(-side // 8)), zlib.compressobj(9), side, []
    while rows:
        n = min(rows, 1000)
        idat.append(compress.compress(row * n))
        rows -= n
    idat.append(compress.flush())
    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", b"".join(idat)) + chunk(b"IEND", b"")


def shards(build: Path) -> dict[str, dict]:
    return json.loads((build / "manifest.json").read_text())["shards"]


def _record(build: Path, rel: str) -> None:
    """Record the shard's current sha256 and size in the manifest (what a hostile build's author would do)."""
    manifest = json.loads((build / "manifest.json").read_text())
    digest = hashlib.sha256()
    with open(build / rel, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    manifest["shards"][rel].update(sha256=digest.hexdigest(), bytes=(build / rel).stat().st_size)
    (build / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def replace_member(build: Path, rel: str, suffix: str, data: bytes | int) -> str:
    """Give the first member of shard ``rel`` ending in ``suffix`` the bytes ``data`` (an int: that many zero bytes,
    left as a hole of a sparse file); returns the member's name."""
    path = build / rel
    with tarfile.open(path) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    target = next(m.name for m, _ in members if m.name.endswith(suffix))
    with open(path, "wb") as f:
        for member, payload in members:
            if member.name == target:
                size = data if isinstance(data, int) else len(data)
                member.size = size
                f.write(member.tobuf(format=tarfile.USTAR_FORMAT))
                if isinstance(data, int):
                    f.seek(size, os.SEEK_CUR)  # a hole: zeros that take no disk
                else:
                    f.write(data)
            else:
                f.write(member.tobuf(format=tarfile.USTAR_FORMAT))
                f.write(payload)
                size = len(payload)
            f.write(bytes(-size % 512))
        f.write(bytes(1024))
    _record(build, rel)
    return target


def fifo_shard(build: Path, rel: str) -> None:
    os.unlink(build / rel)
    os.mkfifo(build / rel)


def symlinked_shard(build: Path, rel: str, elsewhere: Path) -> None:
    """The shard moved out of the build and linked back (its bytes still match the manifest)."""
    elsewhere.mkdir(parents=True, exist_ok=True)
    target = elsewhere / Path(rel).name
    shutil.move(build / rel, target)
    os.symlink(target, build / rel)


def tar_of(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()
