"""The build manifest: the plan, counts, every shard's sha256 and every skipped input; and ``verify``.

Every function takes a local build directory or an fsspec URL (see :mod:`corruptgen.io.storage`)."""

from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from .errors import CorruptgenError
from .io.hashing import sha256_file
from .io.storage import local_path, location
from .manifest_schema import validate_manifest

MANIFEST = "manifest.json"
FORMAT_VERSION = 1
_PACKAGES = ("corruptgen", "albumentations", "albucore", "numpy", "opencv-python-headless", "pillow", "scipy")


@cache
def library_versions() -> dict[str, str]:
    """Versions of the libraries that decide output bytes (recorded in every sample and the manifest)."""
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    if "opencv-python-headless" not in out:
        import cv2

        out["opencv"] = cv2.__version__
    return out


def manifest_path(out_dir: str | os.PathLike) -> Path:
    return Path(out_dir) / MANIFEST


def load_manifest(out_dir: str | os.PathLike) -> dict[str, Any] | None:
    """The manifest of a build directory (or URL), or ``None`` if there is none; unreadable files fail clearly."""
    local = local_path(out_dir)
    if local is None:
        where = location(str(out_dir)).url_of(MANIFEST)
        raw = location(str(out_dir)).read_bytes(MANIFEST)
        if raw is None:
            return None
        return _parse_manifest(raw, where)
    path = manifest_path(local)
    if not path.exists():
        return None
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise CorruptgenError(f"{path} is not a readable corruptgen manifest ({e})") from None
    return _parse_manifest(raw, str(path))


def _parse_manifest(raw: bytes, where: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise CorruptgenError(f"{where} is not a readable corruptgen manifest ({e})") from None
    return validate_manifest(data, where)


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()


def write_manifest(out_dir: str | os.PathLike, manifest: dict[str, Any]) -> Path | str:
    """Atomically (re)write ``manifest.json`` (stable key order, so identical builds give identical bytes).

    Local: a ``.partial`` file renamed into place; a URL: one put of the whole file (atomic on object stores).
    """
    local = local_path(out_dir)
    if local is None:
        loc = location(str(out_dir))
        loc.put_bytes(MANIFEST, manifest_bytes(manifest))
        return loc.url_of(MANIFEST)
    path = manifest_path(local)
    tmp = path.with_name("." + path.name + ".partial")
    tmp.write_bytes(manifest_bytes(manifest))
    os.replace(tmp, path)
    return path


@dataclass
class VerifyReport:
    """Result of :func:`verify`: ``ok`` when every shard is present with the recorded checksum."""

    checked: int = 0
    missing: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    complete: bool = True
    stale: list[str] | None = None  # with ``source=True``: what no longer matches the source, one line each

    @property
    def ok(self) -> bool:
        return not (self.missing or self.mismatched or self.stale) and self.complete

    def summary(self, strict: bool = False) -> str:
        """One line; with ``strict`` a tar file the manifest does not list fails the check too."""
        status = "OK" if self.ok and not (strict and self.unexpected) else "FAILED"
        parts = [f"{self.checked} shards checked", f"{len(self.missing)} missing", f"{len(self.mismatched)} mismatched"]
        if self.unexpected:
            parts.append(f"{len(self.unexpected)} not in the manifest")
        if self.stale is not None:
            shards = sum(1 for line in self.stale if line.startswith("data/"))
            stale = f"{shards} shard{'' if shards == 1 else 's'} stale against the source"
            parts.append(stale if self.stale else "source unchanged")
            parts += [line for line in self.stale if not line.startswith("data/")]
        if not self.complete:
            parts.append("build incomplete (re-run the build to finish it)")
        return f"verify {status}: " + ", ".join(parts)


def verify(out_dir: str | os.PathLike, *, source: bool = False) -> VerifyReport:
    """Re-hash every shard of a build directory (or URL: each shard is streamed) against its manifest; with
    ``source``, also read every input of the build's source again and report the shards it no longer matches
    (:func:`corruptgen.fingerprint.verify_source`)."""
    report = _verify_remote(str(out_dir)) if local_path(out_dir) is None else _verify_local(out_dir)
    if source:
        from .fingerprint import verify_source

        report.stale = verify_source(load_manifest(out_dir))
    return report


def _verify_local(out_dir: str | os.PathLike) -> VerifyReport:
    root = local_path(out_dir)
    assert root is not None
    if not root.is_dir():
        raise CorruptgenError(f"no build directory at {root}")
    manifest = load_manifest(root)
    if manifest is None:
        raise CorruptgenError(f"no {MANIFEST} in {root}: not a corruptgen build directory")
    report = VerifyReport(complete=bool(manifest.get("complete")))
    for rel, rec in sorted(manifest["shards"].items()):
        path = root / rel
        if rec.get("samples", 0) == 0 and rec.get("sha256") is None:
            continue  # every input of this shard was skipped; no file is written
        report.checked += 1
        if not path.exists():
            report.missing.append(rel)
        elif sha256_file(path) != rec["sha256"]:
            report.mismatched.append(rel)
    known = set(manifest["shards"])
    report.unexpected = sorted(
        p.relative_to(root).as_posix() for p in (root / "data").rglob("*.tar") if p.relative_to(root).as_posix()
        not in known
    ) if (root / "data").exists() else []  # fmt: skip
    return report


def _verify_remote(url: str) -> VerifyReport:
    loc = location(url)
    manifest = load_manifest(url)
    if manifest is None:
        raise CorruptgenError(f"no {MANIFEST} at {url}: not a corruptgen build")
    report = VerifyReport(complete=bool(manifest.get("complete")))
    for rel, rec in sorted(manifest["shards"].items()):
        if rec.get("samples", 0) == 0 and rec.get("sha256") is None:
            continue
        report.checked += 1
        digest = loc.sha256(rel)
        if digest is None:
            report.missing.append(rel)
        elif digest != rec["sha256"]:
            report.mismatched.append(rel)
    known = set(manifest["shards"])
    report.unexpected = [rel for rel in loc.find("data", ".tar") if rel not in known]
    return report
