"""A build directory read through its manifest: subsets in plan order, their written shards, counts and sizes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from ..manifest import MANIFEST, load_manifest


@dataclass
class Build:
    """A build directory and its manifest, with subsets in plan order."""

    root: Path
    manifest: dict[str, Any]

    @classmethod
    def open(cls, directory: str | Path) -> Build:
        root = Path(directory)
        if not root.is_dir():
            raise CorruptgenError(f"no build directory at {root}")
        manifest = load_manifest(root)
        if manifest is None:
            raise CorruptgenError(f"no {MANIFEST} in {root}: not a corruptgen build directory")
        return cls(root, manifest)

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
        """Subsets in plan order (then any others in the manifest)."""
        names = [s["name"] for s in self.plan.get("subsets", []) if s["name"] in self.manifest["subsets"]]
        return names + [n for n in self.manifest["subsets"] if n not in names]

    def subset(self, name: str) -> dict[str, Any]:
        return self.manifest["subsets"][name]

    def shards(self, name: str) -> list[str]:
        """Relative paths of the subset's written shards (shards where every input was skipped have no file)."""
        records = self.manifest["shards"]
        rels = self.subset(name).get("shards") or sorted(r for r, rec in records.items() if rec.get("subset") == name)
        return [r for r in rels if records.get(r, {}).get("samples", 0) > 0]

    def samples(self, name: str) -> int:
        return sum(self.manifest["shards"][r]["samples"] for r in self.shards(name))

    def nbytes(self, name: str) -> int:
        return sum(self.manifest["shards"][r]["bytes"] for r in self.shards(name))

    def configs(self) -> list[str]:
        """Subsets that have at least one sample (one Hub config each)."""
        return [n for n in self.subset_names() if self.samples(n) > 0]

    def default_config(self) -> str:
        """The first corrupted subset (the Hub's default config), else the first config."""
        configs = self.configs()
        if not configs:
            raise CorruptgenError(f"{self.root}: the build has no samples")
        return next((n for n in configs if n != "clean" and self.subset(n).get("corruption")), configs[0])

    def manifest_sha256(self) -> str:
        return hashlib.sha256((self.root / MANIFEST).read_bytes()).hexdigest()
