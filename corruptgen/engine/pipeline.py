"""Pipelined chunk rendering: decode ahead and encode behind on threads while the corruptions run.

The serial renderer (:func:`render_chunk` with ``io_threads=0``) decodes, corrupts and encodes one input after
the other.
On a GPU node the corruption of a batch is fast and the CPU stages dominate, so here

1. the task's thread reads each input's bytes (sources are read from one thread) and hands them to a pool of
   ``io_threads`` threads that decode and preprocess up to ``2·io_threads`` inputs ahead (PIL and OpenCV release the
   GIL while they work);
2. the task's thread corrupts: per sample, or in batches of ``batch_size`` on ``device`` for corruptions with a
   batched torch form (OpticsBench, OpticsBench-RG);
3. finished samples are JPEG/PNG-encoded on the same pool; each subset keeps its samples in a queue and appends them
   to its shard strictly in order, so the shards are byte-identical to the serial schedule's (tested).

Memory bound of one task: ``2·io_threads`` decoded inputs ahead, at most ``batch_size`` buffered samples per batched
subset, and at most ``4·io_threads`` samples awaiting encoding per subset (a full queue waits for its oldest sample).
nvJPEG decoding is not used: the preprocessing presets are PIL resizes on the CPU, and a GPU decoder's IDCT differs
from libjpeg's, which would change the bytes of every build (see README, "Scale").
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ..alloc import tune_allocator
from ..family.plan import Plan
from ..io.codec import encode_fields
from ..io.decode import BadImageError
from . import trace
from .chunk import ChunkRenderer, ChunkTask, prepare_image


def _prepare(data: bytes | np.ndarray | BadImageError, plan: Plan) -> np.ndarray | BadImageError:
    """Decode + preprocess on a pool thread; a bad input comes back as its error (counted by the renderer)."""
    if isinstance(data, BadImageError):
        return data
    try:
        return prepare_image(data, plan)
    except BadImageError as e:
        return e


class _PipelinedRenderer(ChunkRenderer):
    """A chunk renderer whose encodes run on ``pool``, written to each shard in submission order."""

    def __init__(self, task: ChunkTask, pool: ThreadPoolExecutor) -> None:
        super().__init__(task)
        self.pool = pool
        self.window = 4 * task.options.io_threads
        self.queues: dict[str, deque[tuple[str, dict[str, bytes], Future]]] = {s.name: deque() for s in self.subsets}

    def emit(self, subset: str, key: str, fields: dict[str, bytes], image: np.ndarray) -> None:
        plan = self.plan
        queue = self.queues[subset]
        queue.append((key, fields, self.pool.submit(encode_fields, image, plan.image_format, plan.quality)))
        self._write_ready(subset, limit=self.window)

    def _write_ready(self, subset: str, limit: int) -> None:
        """Append finished samples at the head of the queue; block on the head while more than ``limit`` wait."""
        queue = self.queues[subset]
        while queue and (len(queue) > limit or queue[0][2].done()):
            key, fields, future = queue.popleft()
            fields.update(future.result())
            self.writers[subset].add(key, fields)

    def drain(self) -> None:
        for subset in self.queues:
            self._write_ready(subset, limit=0)


def render_pipelined(task: ChunkTask, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """:func:`render_chunk` with decoding and encoding overlapped on ``task.options.io_threads`` threads."""
    with ThreadPoolExecutor(max_workers=task.options.io_threads, thread_name_prefix="corruptgen-io") as pool:
        renderer = _PipelinedRenderer(task, pool)
        items = renderer.source.items()
        ahead: deque[Future] = deque()
        next_index = task.start
        try:
            for index in range(task.start, task.stop):
                while next_index < task.stop and next_index < index + 2 * task.options.io_threads:
                    ahead.append(pool.submit(_prepare, _read(renderer, next_index), task.plan))
                    next_index += 1
                renderer.render_loaded(index, items[index], ahead.popleft().result())
                if progress:
                    progress(1)
            renderer.flush_all()
            renderer.drain()
            shards = renderer.commit()
        except BaseException:
            for future in ahead:
                future.cancel()
            renderer.abort()
            raise
    return {"chunk": task.chunk, "shards": shards, "skipped": renderer.skipped}


def _read(renderer: ChunkRenderer, index: int) -> bytes | np.ndarray | BadImageError:
    try:
        return renderer.reads.read(index)
    except BadImageError as e:
        return e


def render_chunk(task: ChunkTask, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Render one chunk; returns ``{"chunk", "shards": {relpath: record}, "skipped": [...]}``."""
    if trace.PATH is None:
        return _render_chunk(task, progress)
    start, cpu = time.time(), time.process_time()
    result = _render_chunk(task, progress)
    trace.event("task", task=task.name, start=start, cpu_start=cpu, inputs=task.stop - task.start,
                subsets=len(task.subsets))  # fmt: skip
    return result


def _render_chunk(task: ChunkTask, progress: Callable[[int], None] | None) -> dict[str, Any]:
    tune_allocator()  # once per process: large temporaries reused, not re-mapped (corruptgen.alloc)
    if task.options.io_threads > 0:
        return render_pipelined(task, progress)
    renderer = ChunkRenderer(task)
    try:
        index = task.start
        while index < task.stop:
            done = renderer.render_block(index, task.stop)
            if progress:
                progress(done - index)
            index = done
        renderer.flush_all()
        shards = renderer.commit()
    except BaseException:
        renderer.abort()
        raise
    return {"chunk": task.chunk, "shards": shards, "skipped": renderer.skipped}
