"""The one reader of a build: a local directory, any fsspec URL (``s3://``, ``memory://``, ...) or a Hub dataset
repository, named as one (``hf:owner/name[@revision]``, ``hf://datasets/owner/name``).

Evaluation, coverage, loaders, export and cards all open a build here: :meth:`Build.open` resolves where it is,
reads and validates ``manifest.json`` (a build without one, e.g. a Hub repo of plain shards, is read from its
``data/<subset>/*.tar`` files), lists subsets in plan order and their shards, and iterates samples, bounded by the
build's :class:`~corruptgen.io.tarread.Limits`: a sample or shard that cannot be read safely (a member over its size or
pixel limit, a shard that is a FIFO or a link) is left out and recorded in :attr:`Build.refused`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from ..io.layout import shard_subset, split_member
from ..io.storage import hub_dataset, hub_url, local_path
from ..io.tarread import Limits, ShardError, iter_samples, parse_json, read_members
from .manifest import MANIFEST, load_manifest, missing_build, not_a_build


@dataclass(frozen=True)
class Refused:
    """A sample (``key``), or a whole shard (``key`` None), left out of reading because it cannot be read safely."""

    subset: str
    shard: str
    key: str | None
    reason: str

    def __str__(self) -> str:
        return f"{self.subset}/{self.key}: {self.reason}" if self.key else f"{self.shard}: {self.reason}"


@dataclass
class Build:
    """A build and its manifest, with subsets in plan order.

    Attributes:
        root: the local directory (remote builds: ``Path(".")``, their shards are URLs below ``base``).
        manifest: the validated manifest, or ``{}`` for shards without one.
        base: the URL of a remote build (``None`` when local).
        found: subset -> relative shard paths present (read from storage when there is no manifest).
    """

    root: Path
    manifest: dict[str, Any]
    base: str | None = None
    found: dict[str, list[str]] = field(default_factory=dict)
    _refused: dict[tuple[str, str | None], Refused] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def open(cls, where: str | os.PathLike, *, revision: str | None = None) -> Build:
        """Open a local build directory, an fsspec URL or a Hub dataset id; unusable places fail in one line."""
        text = str(where)
        hub = hub_dataset(where)
        if hub is not None:
            return cls._open_remote(hub_url(hub[0], revision or hub[1]))
        local = local_path(where)
        if local is None:
            return cls._open_remote(text.rstrip("/"))
        if not local.expanduser().exists():
            raise missing_build(where)
        return cls._open_local(local.expanduser())

    @classmethod
    def _open_local(cls, root: Path) -> Build:
        if not root.is_dir():
            raise CorruptgenError(f"no build directory at {root}")
        manifest = load_manifest(root)
        found = {}
        if (root / "data").is_dir():
            found = _group([p.relative_to(root).as_posix() for p in (root / "data").glob("*/*.tar")])
        if manifest is None and not found:
            raise not_a_build(root, f"no {MANIFEST} and no data/<subset>/*.tar in {root}")
        return cls(root.resolve(), manifest or {}, None, found)

    @classmethod
    def _open_remote(cls, base: str) -> Build:
        from fsspec.core import url_to_fs

        try:
            manifest = _remote_manifest(base)
            found = {}
            if manifest is None:
                fs, root = url_to_fs(base)
                listed = fs.glob(f"{root.rstrip('/')}/data/*/*.tar")
                found = _group(["data/" + p.split("/data/", 1)[-1] for p in listed])
        except CorruptgenError:
            raise
        except Exception as e:  # missing credentials, unknown repo, no network
            from ..io.remote_errors import read_failure

            raise read_failure(e, base) from None
        if manifest is None and not found:
            raise CorruptgenError(f"{base}: no {MANIFEST} and no data/<subset>/*.tar shards")
        return cls(Path("."), manifest or {}, base, found)

    # ------------------------------------------------------------------ what the build holds
    @property
    def location(self) -> str:
        return self.base or str(self.root)

    @property
    def benchmark(self) -> str:
        return self.manifest.get("benchmark") or self.plan.get("benchmark", "")

    @property
    def plan(self) -> dict[str, Any]:
        return self.manifest.get("plan") or {}

    @property
    def split(self) -> str:
        return self.plan.get("split") or "test"

    def subset_names(self) -> list[str]:
        """Subsets in plan order (then any others in the manifest, then shards found without one)."""
        listed = self.manifest.get("subsets") or {}
        names = [s["name"] for s in self.plan.get("subsets", []) if s["name"] in listed]
        names += [n for n in listed if n not in names]
        return names + sorted(n for n in self.found if n not in names)

    def subset(self, name: str) -> dict[str, Any]:
        return (self.manifest.get("subsets") or {}).get(name) or {"shards": self.found.get(name, [])}

    def shards(self, name: str) -> list[str]:
        """Relative paths of the subset's written shards (shards where every input was skipped have no file)."""
        if not self.manifest:
            return list(self.found.get(name, []))
        records = self.manifest["shards"]
        rels = self.subset(name).get("shards") or sorted(r for r, rec in records.items() if rec.get("subset") == name)
        return [r for r in rels if records.get(r, {}).get("samples", 0) > 0]

    def shard_ref(self, rel: str) -> str:
        """Where a shard is read from: an absolute local path or a URL."""
        return f"{self.base}/{rel}" if self.base else str(self.root / rel)

    def samples(self, name: str) -> int:
        """The subset's sample count from the manifest (0 when there is none)."""
        return sum((self.manifest.get("shards") or {}).get(r, {}).get("samples", 0) for r in self.shards(name))

    def nbytes(self, name: str) -> int:
        return sum((self.manifest.get("shards") or {}).get(r, {}).get("bytes", 0) for r in self.shards(name))

    def configs(self) -> list[str]:
        """Subsets that have at least one sample (one Hub config each)."""
        if not self.manifest:
            return [n for n in self.subset_names() if self.found.get(n)]
        return [n for n in self.subset_names() if self.samples(n) > 0]

    def default_config(self) -> str:
        """The first corrupted subset (the Hub's default config), else the first config."""
        configs = self.configs()
        if not configs:
            raise CorruptgenError(f"{self.location}: the build has no samples")
        return next((n for n in configs if n != "clean" and self.subset(n).get("corruption")), configs[0])

    def manifest_sha256(self) -> str:
        return hashlib.sha256((self.root / MANIFEST).read_bytes()).hexdigest()

    def iter_samples(
        self, name: str, want: Callable[[str], bool] = lambda f: True
    ) -> Iterator[tuple[str, dict[str, bytes | None]]]:
        """``(key, {field: bytes})`` for every sample of subset ``name``, shard by shard (fields ``want`` reads)."""
        for rel in self.shards(name):
            yield from self.shard_samples(name, rel, want)

    @property
    def limits(self) -> Limits:
        return Limits.of(self.manifest)

    def shard_samples(
        self, name: str, rel: str, want: Callable[[str], bool] = lambda f: True
    ) -> Iterator[tuple[str, dict[str, bytes | None]]]:
        """The samples of one shard of subset ``name``; what cannot be read safely is left out and recorded."""
        try:
            yield from iter_samples(self.shard_ref(rel), want, limits=self.limits,
                                    refused=lambda key, why: self.refuse(name, rel, key, why))  # fmt: skip
        except ShardError as e:
            self.refuse(name, rel, None, e.reason)

    def read_members(self, name: str, rel: str, names: set[str]) -> dict[str, bytes]:
        """``{member: bytes}`` of the named members of one shard (refused ones left out and recorded)."""

        def refused(member: str, why: str) -> None:
            self.refuse(name, rel, split_member(member)[0], why)

        try:
            return read_members(self.shard_ref(rel), names, limits=self.limits, refused=refused)
        except ShardError as e:
            self.refuse(name, rel, None, e.reason)
            return {}

    def refuse(self, name: str, rel: str, key: str | None, reason: str) -> None:
        """Record a sample (or shard) left out (each once)."""
        self._refused.setdefault((rel, key), Refused(name, rel, key, reason))

    @property
    def refused(self) -> list[Refused]:
        """What reading has left out so far, in the order met."""
        return list(self._refused.values())

    def refused_note(self) -> str | None:
        """One line on what was left out (counted, the first three reasons), or ``None``."""
        items = self.refused
        if not items:
            return None
        shards = sum(1 for r in items if r.key is None)
        counts = [f"{n} {what}{'' if n == 1 else 's'}" for n, what in ((len(items) - shards, "sample"),
                                                                        (shards, "shard")) if n]  # fmt: skip
        shown = "; ".join(map(str, items[:3])) + (f"; ... {len(items) - 3} more" if len(items) > 3 else "")
        return f"skipped {' and '.join(counts)} of the build that cannot be read safely ({shown})"

    @staticmethod
    def metadata(fields: dict[str, bytes | None]) -> dict[str, Any]:
        """A sample's ``json`` field, parsed (``{}`` without one, or when it is not a JSON object)."""
        return parse_json(fields.get("json"))


def _remote_manifest(base: str) -> dict[str, Any] | None:
    """The manifest at ``base`` (one ``fsspec.open``), validated; ``None`` when there is none."""
    import fsspec

    from .manifest import _parse_manifest

    try:
        with fsspec.open(f"{base}/{MANIFEST}", "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return None
    return _parse_manifest(raw, f"{base}/{MANIFEST}")


def _group(rels: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rel in sorted(rels):
        subset = shard_subset(rel)
        if subset is not None:
            out.setdefault(subset, []).append(rel)
    return out
