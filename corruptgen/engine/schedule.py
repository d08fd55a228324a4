"""The order and the split of a build's chunk tasks over ``--workers`` processes: speed only, never the bytes (a shard
is one subset of one chunk whichever task renders it; the samples, their seeds and the manifest are the same).

A task's cost is estimated from its size: inputs × (samples per input of its subsets + :data:`DECODE` for reading
and decoding each input). With more than one worker:

* **longest first**: tasks are handed out in decreasing cost (list scheduling, as the worker pool runs them: each
  task to the worker that is free first), so no long task starts last;
* **the tail split**: the tasks are laid out that way as long as each ends by the level every worker reaches when
  the work is shared equally (total ÷ workers; up to one decode of its inputs past it, what a cut would cost); the
  rest is cut at subset boundaries into the gaps the workers have left below that level, so that every worker
  renders to the end and the last tasks are small: McNaughton's wrap-around rule (one piece per gap, two where a gap
  takes the end of one task and the start of the next) or each task into equal pieces (one or two per gap in all),
  whichever the estimate says ends first (or no cut, if that does). A piece of a chunk takes an even spread of its
  subsets (neighbouring subsets often cost alike) and reads and decodes the chunk's inputs itself: a chunk is cut
  only where a worker would otherwise idle.
"""

from __future__ import annotations

import heapq
from dataclasses import replace

from .chunk import ChunkTask

#: estimated cost of reading, decoding and preprocessing one input, in samples rendered (decode + resize of a
#: 375-px JPEG is about two 224-px ImageNet-C samples' corrupt + encode; an array source costs far less)
DECODE = 2.0


def _per_input(task: ChunkTask, subset: str) -> int:
    return 1 if task.plan is None else task.plan.subset(subset).per_input


def cost(task: ChunkTask) -> float:
    """The estimated cost of ``task``: inputs × (samples per input + :data:`DECODE`)."""
    return (task.stop - task.start) * (sum(_per_input(task, s) for s in task.subsets) + DECODE)


def schedule(tasks: list[ChunkTask], workers: int) -> list[ChunkTask]:
    """``tasks`` in the order to hand them out, the tail cut into parts (see the module docstring)."""
    if workers <= 1 or not tasks:
        return list(tasks)
    order = sorted(tasks, key=cost, reverse=True)  # stable: chunk order among equals
    level = sum(cost(t) for t in order) / workers
    free = [0.0] * workers
    whole, rest = [], []
    for task in order:
        first = heapq.heappop(free)
        if first + cost(task) <= level + (task.stop - task.start) * DECODE:  # a cut would cost a decode more
            whole.append(task)
            first += cost(task)
        else:
            rest.append(task)
        heapq.heappush(free, first)
    if not rest:
        return whole
    gaps = [level - f for f in sorted(free) if f < level]
    cuts = (rest, _numbered(_wrap(rest, gaps)), *(_numbered(_even(rest, k * len(gaps))) for k in (1, 2)))
    return min((whole + cut for cut in cuts), key=lambda c: (makespan(c, workers), len(c)))


def makespan(tasks: list[ChunkTask], workers: int) -> float:
    """When the last of ``workers`` would end, handed ``tasks`` in order (each to the worker free first), by
    :func:`cost`."""
    free = [0.0] * workers
    for task in tasks:
        heapq.heappush(free, heapq.heappop(free) + cost(task))
    return max(free)


def _wrap(rest: list[ChunkTask], gaps: list[float]) -> list[tuple[ChunkTask, int]]:
    """McNaughton's wrap-around of the subsets of ``rest`` (in order) into ``gaps`` (scaled to the subsets' cost, the
    decoding left out): each subset goes to the gap that holds its middle; each task's share of a gap is a piece."""
    units = [[(t.stop - t.start) * _per_input(t, s) for s in t.subsets] for t in rest]
    scale = sum(map(sum, units)) / sum(gaps)
    bounds, total = [], 0.0
    for gap in gaps:
        total += gap * scale
        bounds.append(total)
    pieces: list[tuple[ChunkTask, int]] = []
    position, gap = 0.0, 0
    for task, sizes in zip(rest, units, strict=True):
        counts: dict[int, int] = {}
        for size in sizes:
            middle = position + size / 2
            while gap < len(bounds) - 1 and middle >= bounds[gap]:
                gap += 1
            counts[gap] = counts.get(gap, 0) + 1
            position += size
        groups = _deal(task.subsets, list(counts.values()))
        pieces += [(replace(task, subsets=g), len(groups)) for g in groups]
    return pieces


def _even(rest: list[ChunkTask], pieces: int) -> list[tuple[ChunkTask, int]]:
    """Each task of ``rest`` cut into equal pieces, about ``pieces`` in all, shared out in proportion to the tasks'
    costs (largest remainders; at least one piece per task, at most one per subset)."""
    total = sum(cost(t) for t in rest)
    shares = [max(1.0, pieces * cost(t) / total) for t in rest]
    parts = [min(len(t.subsets), int(s)) for t, s in zip(rest, shares, strict=True)]
    by_remainder = sorted(range(len(rest)), key=lambda i: shares[i] - int(shares[i]), reverse=True)
    for i in by_remainder[: max(0, pieces - sum(parts))]:
        parts[i] = min(len(rest[i].subsets), parts[i] + 1)
    out: list[tuple[ChunkTask, int]] = []
    for task, k in zip(rest, parts, strict=True):
        n = len(task.subsets)
        groups = _deal(task.subsets, [n // k + (j < n % k) for j in range(k)])
        out += [(replace(task, subsets=g), k) for g in groups]
    return out


def _numbered(pieces: list[tuple[ChunkTask, int]]) -> list[ChunkTask]:
    """The pieces longest first (stable), each part of a cut chunk named by the order it is handed out in."""
    pieces = sorted(pieces, key=lambda p: cost(p[0]), reverse=True)
    numbered, seen = [], {}
    for piece, count in pieces:
        if count > 1:
            seen[piece.chunk] = seen.get(piece.chunk, 0) + 1
            piece = replace(piece, part=f"part {seen[piece.chunk]} of {count}", share=(seen[piece.chunk] - 1, count))
        numbered.append(piece)
    return numbered


def _deal(subsets: tuple[str, ...], counts: list[int]) -> list[tuple[str, ...]]:
    """``subsets`` dealt into groups of ``counts`` (summing to their number), each group an even spread over the
    order (Webster's method: the next subset to the group furthest below its share; equal counts: round robin)."""
    groups: list[list[str]] = [[] for _ in counts]
    for name in subsets:
        j = min((j for j in range(len(counts)) if len(groups[j]) < counts[j]),
                key=lambda j: (len(groups[j]) + 0.5) / counts[j])  # fmt: skip
        groups[j].append(name)
    return [tuple(g) for g in groups]
