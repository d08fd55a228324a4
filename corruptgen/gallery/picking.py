"""Which samples a gallery shows, read through :class:`corruptgen.engine.reader.Build`.

First the sample json of as few shards as possible (tar headers are read and the images seeked over): the preferred
source images are the first ``N`` source keys, by key, of the reference subset's first shard (``clean`` when the
build has one), so every row shows the same photos; a subset is then read from the shard of the same name (the
engine writes chunk ``n`` of every subset to ``<split>-<n>.tar``), and further shards only while a preferred image is
missing and fewer than ``N`` samples were found. Rows binned by Δv read every shard's json (the histogram needs every
Δv). Then only the chosen members (json and one image each) are read. Reading is bounded by the build's limits
(:meth:`corruptgen.engine.reader.Build.shard_samples`): what cannot be read safely is not shown and is counted in a
note.
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.reader import Build
from ..io.layout import image_fields
from ..io.tarread import parse_json
from ..quality.coverage import stored_delta_v


@dataclass
class Seen:
    """One sample as its json describes it: where it is (``shard``, its ``image`` member) and what it is."""

    subset: str
    key: str
    source_key: str
    shard: str
    image: str | None
    repeat: int
    delta_v: float | None

    @property
    def members(self) -> list[str]:
        return [f"{self.key}.json"] + ([self.image] if self.image else [])


def _wanted(fld: str) -> bool:
    return fld == "json"


def _image_member(key: str, fields: Iterable[str]) -> str | None:
    """The image a sample is shown by: its single image, or the last frame of a sequence (``040.jpg``)."""
    images = image_fields(fields)
    return f"{key}.{images[-1]}" if images else None


def sample_json(raw: bytes | None) -> dict[str, Any]:
    """A sample's json (``{}`` when it is missing or not a JSON object)."""
    return parse_json(raw)


def _basename(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


class ShardScan:
    """The json of a build's shards, each shard read at most once."""

    def __init__(self, build: Build) -> None:
        self.build = build
        self.done: dict[str, list[Seen]] = {}
        self.first: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []

    def shard(self, subset: str, rel: str) -> list[Seen]:
        """The samples of one shard (an unreadable shard: none, and a note saying why)."""
        if rel not in self.done:
            seen = []
            try:
                for key, fields in self.build.shard_samples(subset, rel, _wanted):
                    meta = sample_json(fields.get("json"))
                    repeat = meta.get("repeat") if isinstance(meta.get("repeat"), int) else 0
                    source_key = str(meta.get("source_key", key))
                    seen.append(Seen(subset, key, source_key, rel, _image_member(key, fields), repeat,
                                     stored_delta_v(meta)))  # fmt: skip
                    self.first.setdefault(subset, meta)
            except (OSError, tarfile.TarError, UnicodeDecodeError) as e:
                self.notes.append(f"{rel}: unreadable ({type(e).__name__}: {e}), its samples are not shown")
            self.done[rel] = seen
        return self.done[rel]

    def first_meta(self, subset: str) -> dict[str, Any]:
        """The json of the subset's first sample (``{}`` when it has none)."""
        for rel in self.build.shards(subset):
            if subset in self.first:
                break
            self.shard(subset, rel)
        return self.first.get(subset, {})

    def ordered(self, subset: str, near: str | None) -> list[str]:
        """The subset's shards, the one named like ``near`` first."""
        rels = self.build.shards(subset)
        return sorted(rels, key=lambda r: _basename(r) != near) if near else rels

    def every(self, subset: str) -> list[Seen]:
        return [s for rel in self.build.shards(subset) for s in self.shard(subset, rel)]


def preferred_keys(scan: ShardScan, reference: str | None, n: int) -> tuple[list[str], str | None]:
    """The ``n`` first source keys of the reference subset's first shard, and that shard's file name."""
    if reference is None:
        return [], None
    for rel in scan.build.shards(reference):
        seen = scan.shard(reference, rel)
        if seen:
            return sorted({s.source_key for s in seen})[:n], _basename(rel)
    return [], None


def _rank(preferred: Sequence[str]):
    order = {k: i for i, k in enumerate(preferred)}
    return lambda s: (s.repeat, order.get(s.source_key, len(order)), s.key)


def pick_subset(scan: ShardScan, subset: str, preferred: Sequence[str], near: str | None, n: int) -> list[Seen]:
    """Up to ``n`` samples of one subset: the preferred source images first, then others, by key."""
    pool: list[Seen] = []
    wanted = set(preferred)
    for rel in scan.ordered(subset, near):
        pool.extend(s for s in scan.shard(subset, rel) if s.image)
        missing = wanted - {s.source_key for s in pool if s.repeat == 0}
        if not missing or len(pool) >= n:
            break
    return sorted(pool, key=_rank(preferred))[:n]


def pick_binned(seen: Sequence[Seen], preferred: Sequence[str], n: int, index) -> dict[int, list[Seen]]:
    """Up to ``n`` samples per Δv column (``index(Δv) -> column``), preferred source images first."""
    cells: dict[int, list[Seen]] = {}
    for s in sorted((s for s in seen if s.image and s.delta_v is not None), key=_rank(preferred)):
        cell = cells.setdefault(index(s.delta_v), [])
        if len(cell) < n:
            cell.append(s)
    return cells


class CleanTwins:
    """The clean sample of a source key: the clean shard named like the sample's own first, then every other."""

    def __init__(self, scan: ShardScan, clean: str | None) -> None:
        self.scan, self.clean = scan, clean
        self.by_key: dict[str, Seen] = {}
        self.indexed: set[str] = set()

    def get(self, sample: Seen) -> Seen | None:
        if self.clean is None:
            return None
        for rel in self.scan.ordered(self.clean, _basename(sample.shard)):
            if sample.source_key in self.by_key:
                break
            if rel not in self.indexed:
                self.indexed.add(rel)
                for s in self.scan.shard(self.clean, rel):
                    known = self.by_key.get(s.source_key)
                    if s.image and (known is None or s.repeat < known.repeat):
                        self.by_key[s.source_key] = s
        return self.by_key.get(sample.source_key)


def read_picks(build: Build, picks: Iterable[Seen], notes: list[str]) -> dict[tuple[str, str], bytes]:
    """``{(shard, member): bytes}`` of the picks' json and image members, one pass per shard."""
    by_shard: dict[str, set[str]] = {}
    subsets: dict[str, str] = {}
    for s in picks:
        by_shard.setdefault(s.shard, set()).update(s.members)
        subsets[s.shard] = s.subset
    out = {}
    for rel, names in sorted(by_shard.items()):
        try:
            found = build.read_members(subsets[rel], rel, names)
        except (OSError, tarfile.TarError, UnicodeDecodeError) as e:
            notes.append(f"{rel}: unreadable ({type(e).__name__}: {e}), its samples are not shown")
            continue
        out.update({(rel, name): data for name, data in found.items()})
    return out
