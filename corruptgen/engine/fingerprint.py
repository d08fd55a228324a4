"""What each shard was rendered from, and whether the source still holds it (resume, re-run, ``verify --source``).

A shard depends on the inputs of its chunk and, for a grouped corruption, on every input of a group with a sample in
the chunk (:func:`shard_inputs`). When a chunk task writes a shard, the shard's manifest record gets ``"source"``:

* ``inputs``: a digest of those inputs' positions, keys, origins and labels and of each one's identity taken just
  before it was read (:meth:`~corruptgen.io.sources.Source.identity`: a file's size and modification time; a tar
  shard's, with the member's offset and size; the pixels of an ``npy`` row; an ``hf`` dataset's fingerprint). Every
  later run of the build recomputes it without reading an image and renders the shard again when it differs: an
  input modified, added (the inputs after it move by one), removed or relabelled;
* ``content``: a digest of the bytes read (of the array, for a source whose items are arrays), which only
  ``verify --source`` recomputes (it reads every input again, so
  it also sees a change that kept a file's size and modification time);
* ``unread``: the keys of inputs that could not be read for an I/O error (a file missing for a moment, a failed
  network read; not an input that is not an image). The next run reads them again and renders the shard again when
  one now reads;
* ``each`` (the shard of the plan's first subset in each chunk): a short print of every input, so that what changed
  can be named (:mod:`corruptgen.engine.source_diff`).

An identity is taken before the bytes are read, so a file that changes while it is read counts as changed on the next
run. A shard recorded by a corruptgen without fingerprints is kept while the source has as many items as it had.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..corruptions import get
from ..errors import CorruptgenError
from ..family.plan import Plan, SourceSpec
from ..io.decode import BadImageError
from ..io.sources import Source, open_source
from ..wording import counted, some
from .source_diff import WIDTH, Changes, entry

FIELD = "source"  # the key of a shard record's fingerprint
UNCHECKED = "no source fingerprint: rendered by an earlier corruptgen"  # why a record cannot be checked
_CHUNK = re.compile(r"-(\d+)\.tar$")


def open_plan_source(spec: SourceSpec) -> Source:
    """The source a plan names, scanned now."""
    return open_source(spec.spec, image_column=spec.image_column, label_column=spec.label_column, limit=spec.limit,
                       folder_labels=spec.folder_labels)  # fmt: skip


def shard_inputs(plan: Plan, subset: str, start: int, stop: int, n: int) -> range:
    """Positions of the inputs the shard of ``subset`` for source items ``[start, stop)`` is rendered from (of ``n``):
    the chunk's own, and for a grouped corruption every member of a group that has a sample in the chunk."""
    record = plan.subset(subset)
    corruption = get(record.corruption) if record.corruption else None
    if corruption is None or corruption.group_size is None:
        return range(start, stop)
    size, per = corruption.group_size(dict(record.options)), record.per_input
    first = start * per // size * size
    last = min(math.ceil(stop * per / size) * size, n * per)
    return range(first // per, math.ceil(last / per))


def _digest(parts: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\n")
    return digest.hexdigest()[:32]


def _inputs_digest(source: Source, indices: range, identity: Callable[[int], str]) -> str:
    items = source.items()
    lines = (json.dumps([i, items[i].key, items[i].source_id, items[i].label, items[i].label_name, identity(i)])
             for i in indices)  # fmt: skip
    return _digest([f"labelled={source.labelled}", *lines])


def content_digest(data: bytes | np.ndarray) -> str:
    """A digest of an input as read (:meth:`~corruptgen.io.sources.Source.read_input`): its bytes, or an array's
    shape, dtype and pixels."""
    if isinstance(data, np.ndarray):
        digest = hashlib.sha256(f"{data.dtype.str}{data.shape}".encode())
        digest.update(np.ascontiguousarray(data).data)
        return digest.hexdigest()[:32]
    return hashlib.sha256(data).hexdigest()[:32]


def _content(read: Callable[[], bytes | np.ndarray]) -> tuple[str, bool]:
    """A digest of what ``read`` returns (or ``!`` and the reason it fails), and whether it failed for an I/O error."""
    try:
        return content_digest(read()), False
    except BadImageError as e:
        return "!" + e.reason, e.transient


class ReadLog:
    """The reads of one chunk task: each input's identity just before its read and a digest of its bytes."""

    def __init__(self, source: Source, max_bytes: int) -> None:
        self.source, self.max_bytes = source, max_bytes
        self.identity: dict[int, str] = {}
        self.content: dict[int, str] = {}
        self.unread: set[int] = set()
        self._records: dict[range, dict[str, Any]] = {}

    def read(self, index: int) -> bytes | np.ndarray:
        """Input ``index`` as the engine decodes it (bytes, or an array source's array; raises
        :class:`BadImageError`), logged."""
        self.identity[index] = self.source.identity(index)
        try:
            data = self.source.read_input(index, max_bytes=self.max_bytes)
        except BadImageError as e:
            self.content[index] = "!" + e.reason
            if e.transient:
                self.unread.add(index)
            raise
        self.content[index] = content_digest(data)
        return data

    def record(self, indices: range, *, each: bool = False) -> dict[str, Any]:
        """The fingerprint of a shard rendered from ``indices`` (an input the task did not need is read now); the
        shards of a chunk's subsets share one. ``each``: with every input's print (``each``, see
        :mod:`corruptgen.engine.source_diff`)."""
        if indices not in self._records:
            self._records[indices] = self._record(indices)
        if not each:
            return dict(self._records[indices])
        items = self.source.items()
        prints = "".join(entry(items[i], self.identity[i], self.content[i]) for i in indices)
        return {**self._records[indices], "each": prints}

    def _record(self, indices: range) -> dict[str, Any]:
        for index in indices:
            if index not in self.content:
                try:
                    self.read(index)
                except BadImageError:
                    pass
        items = self.source.items()
        record: dict[str, Any] = {"inputs": _inputs_digest(self.source, indices, self.identity.__getitem__),
                                  "content": _digest(self.content[i] for i in indices)}  # fmt: skip
        unread = [items[i].key for i in indices if i in self.unread]
        return {**record, "unread": unread} if unread else record


class SourceCheck:
    """Shard records (``shards``: the build's) against the source as it is now; identities and digests are computed
    once per input/range. :meth:`summary` names what changed in a few lines."""

    def __init__(self, plan: Plan, source: Source, shards: dict[str, dict] | None = None) -> None:
        self.plan, self.source, self.n = plan, source, len(source)
        self.chunks = math.ceil(self.n / plan.shard_size)
        self._identity: dict[int, str] = {}
        self._content: dict[int, tuple[str, bool]] = {}
        self._inputs: dict[range, str] = {}
        self._positions: dict[str, int] | None = None
        self._prints = _prints(plan, shards or {})  # position -> the print recorded for it
        # for the summary: stale shards whose inputs changed (-> their inputs now), past the end of the source, and
        # the keys that could not be read when rendered and read now
        self._changed_inputs: dict[str, range] = {}
        self._past: list[str] = []
        self._reads_now: list[str] = []

    def indices(self, rel: str, record: dict[str, Any]) -> range | None:
        """The inputs shard ``rel`` depends on now (``None``: its chunk is past the end of the source)."""
        chunk = record.get("chunk")
        if chunk is None:
            match = _CHUNK.search(rel)
            chunk = int(match.group(1)) if match else self.chunks
        if chunk >= self.chunks:
            return None
        size = self.plan.shard_size
        return shard_inputs(self.plan, record["subset"], chunk * size, min(self.n, (chunk + 1) * size), self.n)

    def changed(self, rel: str, record: dict[str, Any], *, content: bool = False) -> str | None:
        """Why shard ``rel`` no longer matches the source (``None`` when it does); ``content``: also read every input
        and compare the bytes. A record without a fingerprint is :data:`UNCHECKED`."""
        indices = self.indices(rel, record)
        why = self._changed(indices, record, content)
        if indices is None:
            self._past.append(rel)
        elif why is not None and why.startswith(("inputs ", "the bytes of inputs ")):
            self._changed_inputs[rel] = indices
        return why

    def _changed(self, indices: range | None, record: dict[str, Any], content: bool) -> str | None:
        if indices is None:
            return f"past the end of the source (it has {counted(self.n, 'input')} now)"
        recorded = record.get(FIELD)
        if not isinstance(recorded, dict):
            return UNCHECKED
        if indices not in self._inputs:
            self._inputs[indices] = _inputs_digest(self.source, indices, self._identity_of)
        if recorded.get("inputs") != self._inputs[indices]:
            return f"inputs {self.name(indices)} changed"
        for key in recorded.get("unread", []):
            position = self._position(key)
            if position is not None and not self._read(position)[1]:
                self._reads_now.append(key)
                return f"{key} could not be read when the shard was rendered and reads now"
        if content and recorded.get("content") != _digest(self._read(i)[0] for i in indices):
            return f"the bytes of inputs {self.name(indices)} changed"
        return None

    def summary(self, *, content: bool = False) -> list[str]:
        """What changed for the shards :meth:`changed` found stale, one line per kind: the inputs named where the
        build recorded their prints, else (a build by an earlier corruptgen) the ranges of the shards' inputs."""
        if not (self._changed_inputs or self._past or self._reads_now):
            return []
        read = (lambda i: self._read(i)[0]) if content else None
        changes = Changes(self._prints, self.source, self.plan.shard_size, self._identity_of, read)
        lines = changes.lines()
        if self._past:
            past = sorted(set(self._past))
            lines.append(f"{counted(len(past), 'shard')} past the end of the source (it has "
                         f"{counted(self.n, 'input')} now): {some(past, 3)}")  # fmt: skip
        if self._reads_now:
            names = list(dict.fromkeys(self._reads_now))
            lines.append(f"{counted(len(names), 'input')} could not be read when rendered and read now: {some(names)}")
        unnamed = {indices: None for indices in self._changed_inputs.values() if not changes.positions & set(indices)}
        if unnamed:
            ranges = [self.name(indices) for indices in sorted(unnamed, key=lambda r: (r.start, r.stop))]
            lines.append(f"the inputs of {counted(len(ranges), 'shard')} changed (which ones is not recorded): "
                         f"{some(ranges, 3)}")  # fmt: skip
        return lines

    def name(self, indices: range) -> str:
        keys = [self.source.items()[i].key for i in indices]
        return ", ".join(keys) if len(keys) <= 2 else f"{keys[0]} … {keys[-1]}"

    def _identity_of(self, index: int) -> str:
        if index not in self._identity:
            self._identity[index] = self.source.identity(index)
        return self._identity[index]

    def _read(self, index: int) -> tuple[str, bool]:
        if index not in self._content:
            self._content[index] = _content(lambda: self.source.read_input(index, max_bytes=self.plan.max_bytes))
        return self._content[index]

    def _position(self, key: str) -> int | None:
        if self._positions is None:
            self._positions = {item.key: i for i, item in enumerate(self.source.items())}
        return self._positions.get(key)


class Stale(dict):
    """Shard -> why the source no longer matches it; ``lines``: what changed, one line per kind."""

    lines: list[str]


def stale_shards(plan: Plan, source: Source, shards: dict[str, dict], built_from: dict | None) -> Stale:
    """The shards of an earlier run of ``plan`` that the source no longer matches, with why. A shard without a
    fingerprint (an earlier corruptgen's) is kept while the source has as many items as ``built_from`` (the earlier
    manifest's source record) says it had."""
    check, same_size = SourceCheck(plan, source, shards), _same_size(source, built_from)
    stale, unchecked = Stale(), []
    for rel, record in shards.items():
        why = check.changed(rel, record)
        if why == UNCHECKED:
            why = None if same_size else f"{why}, from a source with another number of inputs"
            unchecked += [rel] if why else []
        if why is not None:
            stale[rel] = why
    stale.lines = check.summary()
    if unchecked:
        stale.lines.append(f"{counted(len(unchecked), 'shard')} without a source fingerprint, from a source with "
                           "another number of inputs")  # fmt: skip
    return stale


def _same_size(source: Source, built_from: dict | None) -> bool:
    now = source.describe()
    return bool(built_from) and all(built_from.get(k) == now.get(k) for k in ("spec", "count", "total"))


def verify_source(manifest: dict[str, Any], spec: str | None = None) -> tuple[list[str], list[str]]:
    """What of a build no longer matches its source, summarised (one line per kind of change, the inputs named), and
    the shards that no longer match (reads every input once; both empty: all match).

    The source is the one the plan records (a local path relative to the folder the build ran in, or its last
    component: :func:`corruptgen.io.sources.recorded_spec`), or ``spec`` when given: either way the shards'
    fingerprints decide, so a source that is not the one the build read never passes."""
    if "plan" not in manifest:
        raise CorruptgenError("the manifest records no plan: its source cannot be checked")
    plan = Plan.from_dict(manifest["plan"])
    if spec is not None:
        plan = dataclasses.replace(plan, source=dataclasses.replace(plan.source, spec=spec))
    try:
        source = open_plan_source(plan.source)
    except CorruptgenError as e:
        if spec is not None:
            raise
        raise CorruptgenError(
            f"{e} (the build records its source as {plan.source.spec}: a local path relative to the folder the build "
            "ran in, or its last component; run verify there, or name the source with --source-from SPEC)"
        ) from None
    check = SourceCheck(plan, source, manifest["shards"])
    lines, stale, unchecked = [], [], []
    built = manifest.get("counts", {}).get("inputs")
    if built is not None and built != check.n:
        lines.append(f"the source has {counted(check.n, 'input')} now, the build was rendered from {built}")
    for rel, record in sorted(manifest["shards"].items()):
        why = check.changed(rel, record, content=True)
        if why is not None:
            stale.append(rel)
            unchecked += [rel] if why == UNCHECKED else []
    lines += check.summary(content=True)
    if unchecked:
        lines.append(f"{counted(len(unchecked), 'shard')} cannot be checked ({UNCHECKED}): {some(unchecked, 3)}")
    if stale:
        lines.append(f"{counted(len(stale), 'shard')} to render again (re-run the build): {some(stale, 3)}")
    return lines, stale


def _prints(plan: Plan, shards: dict[str, dict]) -> dict[int, str]:
    """Position -> the print of the input recorded there, from the shard records that hold ``each``."""
    prints: dict[int, str] = {}
    names = {s.name for s in plan.subsets}
    for rel, record in shards.items():
        each = record[FIELD].get("each") if isinstance(record.get(FIELD), dict) else None
        chunk = record.get("chunk")
        if chunk is None:
            match = _CHUNK.search(rel)
            chunk = int(match.group(1)) if match else None
        if not isinstance(each, str) or chunk is None or record.get("subset") not in names:
            continue
        start = chunk * plan.shard_size
        first = shard_inputs(plan, record["subset"], start, start + plan.shard_size, start + plan.shard_size).start
        for j in range(len(each) // WIDTH):
            prints.setdefault(first + j, each[j * WIDTH : (j + 1) * WIDTH])
    return prints
