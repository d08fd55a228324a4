"""The build manifest: the plan, counts, every shard's sha256 and every skipped input; and ``verify``."""

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
from .io.shards import sha256_file

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
    """The manifest of a build directory, or ``None`` if there is none; unreadable files fail clearly."""
    path = manifest_path(out_dir)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise CorruptgenError(f"{path} is not a readable corruptgen manifest ({e})") from None
    if not isinstance(data, dict) or "shards" not in data or "plan_id" not in data:
        raise CorruptgenError(f"{path} is not a corruptgen manifest")
    return data


def write_manifest(out_dir: str | os.PathLike, manifest: dict[str, Any]) -> Path:
    """Atomically (re)write ``manifest.json`` (stable key order, so identical builds give identical bytes)."""
    path = manifest_path(out_dir)
    tmp = path.with_name("." + path.name + ".partial")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
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

    @property
    def ok(self) -> bool:
        return not (self.missing or self.mismatched) and self.complete

    def summary(self) -> str:
        status = "OK" if self.ok else "FAILED"
        parts = [f"{self.checked} shards checked", f"{len(self.missing)} missing", f"{len(self.mismatched)} mismatched"]
        if self.unexpected:
            parts.append(f"{len(self.unexpected)} not in the manifest")
        if not self.complete:
            parts.append("build incomplete (re-run the build to finish it)")
        return f"verify {status}: " + ", ".join(parts)


def verify(out_dir: str | os.PathLike) -> VerifyReport:
    """Re-hash every shard of a build directory against its manifest."""
    root = Path(out_dir)
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
