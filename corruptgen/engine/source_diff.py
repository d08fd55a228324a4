"""Which inputs of a source changed since a build read them: named and summarised in a few lines (``verify --source``
and the note of a re-run that renders shards again).

A shard's fingerprint (:mod:`corruptgen.engine.fingerprint`) tells that one of its inputs changed, not which. So the
shard of the plan's first subset in each chunk also records ``each``: a short print of every input it was rendered from,
in source order, :data:`WIDTH` hex digits an input: a hash of its key (6), of its label (2), of its origin and identity
(4) and of its bytes as read (4). Compared with the source as it is now they name the inputs modified, relabelled,
added, removed (by the input before them: a removed input's name is not recorded), moved to another shard (inputs added
or removed before them) and, when the bytes are read again, touched (another modification time, the same bytes). The
hashes are short (the manifest grows by 16 bytes an input): a change one of them misses is still caught by the shard's
full digests, only not named."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from ..io.sources import Source, SourceItem
from ..wording import counted, some

WIDTH = 16  # hex digits of one input's print
UNREAD = "----"  # the bytes part of an input whose bytes were not digested

#: kind -> how a line says it (in this order)
KINDS = {
    "modified": "modified",
    "relabelled": "relabelled",
    "added": "added",
    "removed": "removed (a removed input's name is not recorded): after",
    "moved": "moved to another shard (inputs were added or removed before them)",
    "touched": "touched (another size or modification time, the same bytes)",
}


def _hash(text: str, digits: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:digits]


def entry(item: SourceItem, identity: str, content: str | None) -> str:
    """The print of one input: its item, its identity and the digest of its bytes as read (``None``: not read)."""
    return (_hash(item.key, 6) + _hash(json.dumps([item.label, item.label_name]), 2)
            + _hash(json.dumps([item.source_id, identity]), 4)
            + (UNREAD if content is None else _hash(content, 4)))  # fmt: skip


class Changes:
    """The inputs that differ between the prints a build recorded (``old``: position -> print) and ``source`` now.

    ``identity(i)`` and ``content(i)`` give input ``i``'s identity and the digest of its bytes (``content=None``: the
    bytes are not compared); ``shard_size`` tells which inputs moved to another shard."""

    def __init__(self, old: dict[int, str], source: Source, shard_size: int, identity: Callable[[int], str],
                 content: Callable[[int], str] | None = None) -> None:  # fmt: skip
        self.kinds: dict[str, list[str]] = {kind: [] for kind in KINDS}
        self.positions: set[int] = set()  # positions (now) of named changes, and (then) of removed inputs
        if not old:
            return
        items = source.items()
        now = {}
        for i, item in enumerate(items):
            now.setdefault(_hash(item.key, 6), i)
        recorded = {print_[:6] for print_ in old.values()}
        for pos in sorted(old):
            then, i = old[pos], now.get(old[pos][:6])
            if i is None:
                self._add("removed", self._before(old, now, items, pos), pos)
                continue
            print_ = entry(items[i], identity(i), None if content is None else content(i))
            self._compare(then, print_, items[i].key, i, content is not None)
            if i // shard_size != pos // shard_size:
                self._add("moved", items[i].key, i)
        covered = {pos // shard_size for pos in old}
        for i, item in enumerate(items):
            if i // shard_size in covered and _hash(item.key, 6) not in recorded:
                self._add("added", item.key, i)

    def _compare(self, then: str, now: str, key: str, i: int, read: bool) -> None:
        if then[6:8] != now[6:8]:
            self._add("relabelled", key, i)
        other_identity = then[8:12] != now[8:12]
        if read and then[12:] != UNREAD:
            if then[12:] != now[12:]:
                self._add("modified", key, i)
            elif other_identity:
                self._add("touched", key, i)
        elif other_identity:
            self._add("modified", key, i)

    def _add(self, kind: str, name: str, position: int) -> None:
        self.kinds[kind].append(name)
        self.positions.add(position)

    @staticmethod
    def _before(old: dict[int, str], now: dict[str, int], items: list[SourceItem], pos: int) -> str:
        """What a removed input came after: the input before it then (by its name now), or the start."""
        if pos == 0:
            return "the start"
        previous = now.get(old.get(pos - 1, "")[:6]) if pos - 1 in old else None
        return items[previous].key if previous is not None else f"input {pos - 1}"

    def lines(self) -> list[str]:
        """One line per kind of change: how many inputs, and the first names."""
        return [f"{counted(len(names), 'input')} {KINDS[kind]}{'' if kind == 'removed' else ':'} {some(names)}"
                for kind, names in self.kinds.items() if names]  # fmt: skip
