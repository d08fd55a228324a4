"""The build manifest: the plan, counts, every shard's sha256 and every skipped input; and ``verify``.

Every function takes a local build directory or an fsspec URL (see :mod:`corruptgen.io.storage`)."""

from __future__ import annotations

import json
import os
import platform
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import CorruptgenError
from ..family.plan import digest, settings_id, subset_ids
from ..io.atomic import write_atomic
from ..io.regular import open_regular, refusal, sha256_regular
from ..io.storage import hub_dataset, hub_url, local_path, location
from ..wording import counted
from .manifest_schema import KNOWN_FIELDS, validate_manifest

MANIFEST = "manifest.json"
#: a manifest records ~400 bytes per shard (and 17 per input): ImageNet's 1.28M training images x 76 subsets in
#: shards of 1,000 is ~40 MB. A bigger file in its place is not parsed (JSON parsing takes several times its size).
MAX_MANIFEST_BYTES = 256 << 20
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
    if not os.path.lexists(path):
        return None
    try:
        with open_regular(path) as f:  # a FIFO, device or link in its place is refused, not opened
            raw = f.read(MAX_MANIFEST_BYTES + 1)
    except OSError as e:
        raise CorruptgenError(f"{path} is not a readable corruptgen manifest ({e})") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise CorruptgenError(f"{path} is over {MAX_MANIFEST_BYTES >> 20} MiB: not a corruptgen manifest (not parsed)")
    return _parse_manifest(raw, str(path))


def _parse_manifest(raw: bytes, where: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise CorruptgenError(f"{where} is not a readable corruptgen manifest ({e})") from None
    refuse_newer(data, where)
    return validate_manifest(data, where)


def refuse_newer(data: Any, where: str) -> None:
    """A manifest written by a newer corruptgen (a higher format version, or fields this one does not know) is
    refused in one line before anything reads or rewrites it: rewriting would drop what this version cannot see."""
    if not isinstance(data, dict):
        return
    version = data.get("corruptgen_manifest", FORMAT_VERSION)
    unknown = sorted(str(k) for k in data if k not in KNOWN_FIELDS)
    newer = isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION
    if not (newer or unknown):
        return
    versions = data.get("versions")
    writer = versions.get("corruptgen") if isinstance(versions, dict) else None
    what = f"manifest format {version}" if newer else f"fields {', '.join(unknown[:4])}"
    raise CorruptgenError(
        f"{where} was written by a newer corruptgen{f' {writer}' if writer else ''} ({what}; this corruptgen "
        f"{__version__} reads manifest format {FORMAT_VERSION}): upgrade corruptgen (pip install -U corruptgen)"
    )


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
    write_atomic(path, manifest_bytes(manifest))
    return path


def _builds_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if (p / MANIFEST).is_file() or (p / "data").is_dir())


def not_a_build(root: Path, what: str) -> CorruptgenError:
    """The one-line error for a local folder that is not a build (``what`` it lacks), naming the builds it holds, as
    ``corruptgen-out`` holds ``syn2nat``."""
    builds = _builds_in(root)
    hint = f"; it holds the builds {', '.join(builds)}: pass one of them" if builds else ""
    return CorruptgenError(f"{what}: not a build directory{hint}")


def missing_build(where: str | os.PathLike) -> CorruptgenError:
    """The one-line error for a local path that does not exist: the builds its folder holds, or how to name a Hub
    dataset when it looks like one (``owner/name``: the Hub is read only for ``hf:owner/name``)."""
    text = str(where)
    parent = Path(text).expanduser().parent
    builds = _builds_in(parent) if parent.is_dir() else []
    hint = ""
    if builds:
        hint = f"; {parent} holds the builds {', '.join(builds)}"
    elif re.fullmatch(r"[\w.-]+/[\w.-]+", text) and not text.startswith("."):
        hint = f"; to read the Hub dataset {text}, write hf:{text}"
    return CorruptgenError(f"no build directory at {text}: the path does not exist (not a build directory){hint}")


@dataclass
class VerifyReport:
    """Result of :func:`verify`: ``ok`` when every shard is present with the recorded checksum."""

    checked: int = 0
    missing: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "<shard> is a FIFO, ...": not opened (io.regular)
    complete: bool = True
    ids: list[str] = field(default_factory=list)  # ids that differ from the ones the plan gives
    stale: list[str] | None = None  # with ``source=True``: what no longer matches the source, one line each
    stale_shards: list[str] = field(default_factory=list)  # with ``source=True``: the shards it no longer matches

    @property
    def ok(self) -> bool:
        return not (self.missing or self.mismatched or self.refused or self.ids or self.stale) and self.complete

    def summary(self, strict: bool = False) -> str:
        """One line; with ``strict`` a tar file the manifest does not list fails the check too."""
        status = "OK" if self.ok and not (strict and self.unexpected) else "FAILED"
        parts = [f"{counted(self.checked, 'shard')} checked", f"{len(self.missing)} missing",
                 f"{len(self.mismatched)} mismatched"]  # fmt: skip
        if self.refused:
            parts.append(f"{len(self.refused)} not a regular file ({'; '.join(self.refused[:3])})")
        if self.unexpected:
            parts.append(f"{len(self.unexpected)} not in the manifest")
        if self.ids:
            parts.append(f"{len(self.ids)} ids differ from the plan's")
        if self.stale is not None:
            stale = f"{counted(len(self.stale_shards), 'shard')} stale against the source"
            parts.append(stale if self.stale else "source unchanged")
        if not self.complete:
            parts.append("build incomplete (re-run the build to finish it)")
        return f"verify {status}: " + ", ".join(parts)


def id_mismatches(manifest: dict[str, Any]) -> list[str]:
    """Every id the manifest records that differs from the one its plan gives (the plan id, the settings id and each
    subset's id, recomputed from ``manifest["plan"]``): an edited plan whose ids were kept does not pass."""
    plan = manifest.get("plan")
    if plan is None:
        return []
    given = {"plan_id": digest(plan), "settings_id": settings_id(plan)}
    given |= {f"subsets.{name}.id": sid for name, sid in subset_ids(plan).items()}
    recorded = {"plan_id": manifest["plan_id"], "settings_id": manifest.get("settings_id")}
    recorded |= {f"subsets.{name}.id": rec.get("id") for name, rec in (manifest.get("subsets") or {}).items()}
    return [f"{key}: recorded {value}, the plan gives {given.get(key)}"
            for key, value in recorded.items() if value is not None and value != given.get(key)]  # fmt: skip


def verify(out_dir: str | os.PathLike, *, source: bool | str = False) -> VerifyReport:
    """Re-hash every shard of a build directory (or URL, or Hub dataset ``hf:owner/name``: each shard is streamed)
    against its manifest; with ``source``, also read every input of the build's source again (the recorded one, or
    ``source`` when it is a source spec) and report the shards it no longer matches
    (:func:`corruptgen.engine.fingerprint.verify_source`)."""
    hub = hub_dataset(out_dir)
    if hub is not None:
        report, manifest = _verify_remote(hub_url(*hub))
    elif local_path(out_dir) is None:
        report, manifest = _verify_remote(str(out_dir))
    else:
        report, manifest = _verify_local(out_dir)
    if source:
        from .fingerprint import verify_source

        report.stale, report.stale_shards = verify_source(manifest, source if isinstance(source, str) else None)
    return report


def _verify_local(out_dir: str | os.PathLike) -> tuple[VerifyReport, dict[str, Any]]:
    root = local_path(out_dir)
    assert root is not None
    if not root.exists():
        raise missing_build(out_dir)
    if not root.is_dir():
        raise CorruptgenError(f"no build directory at {root}: not a directory")
    manifest = load_manifest(root)
    if manifest is None:
        raise not_a_build(root, f"no {MANIFEST} in {root}")
    report = VerifyReport(complete=bool(manifest.get("complete")), ids=id_mismatches(manifest))
    for rel, rec in sorted(manifest["shards"].items()):
        path = root / rel
        if rec.get("samples", 0) == 0 and rec.get("sha256") is None:
            continue  # every input of this shard was skipped; no file is written
        report.checked += 1
        if not os.path.lexists(path):
            report.missing.append(rel)
        elif (why := refusal(path)) is not None:  # never opened: a FIFO would block the hash forever
            report.refused.append(f"{rel} {why}")
        elif sha256_regular(path) != rec["sha256"]:
            report.mismatched.append(rel)
    known = set(manifest["shards"])
    report.unexpected = sorted(
        p.relative_to(root).as_posix() for p in (root / "data").rglob("*.tar") if p.relative_to(root).as_posix()
        not in known
    ) if (root / "data").exists() else []  # fmt: skip
    return report, manifest


def _verify_remote(url: str) -> tuple[VerifyReport, dict[str, Any]]:
    loc = location(url)
    try:
        manifest = load_manifest(url)
    except CorruptgenError:
        raise
    except Exception as e:  # missing credentials, unknown repo, no network
        from ..io.remote_errors import read_failure

        raise read_failure(e, url) from None
    if manifest is None:
        raise CorruptgenError(f"no {MANIFEST} at {url}: not a corruptgen build")
    report = VerifyReport(complete=bool(manifest.get("complete")), ids=id_mismatches(manifest))
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
    return report, manifest
