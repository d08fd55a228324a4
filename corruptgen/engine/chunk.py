"""Worker side of the engine: render one chunk of source items into one shard per subset.

Each input is read, decoded and preprocessed once, then corrupted for every subset; every sample is encoded and
appended to its subset's shard in a fixed order (item order, then the repeats of the item). Two schedules give the
same bytes:

* serial (``io_threads=0``, the default on CPU): a block of decoded inputs (up to :data:`BLOCK_BYTES`, at least one
  input) corrupted subset by subset, one output in memory at a time, plus the buffered batches of batched
  corruptions;
* pipelined (``io_threads=N``, the default with ``--device cuda``): :mod:`corruptgen.engine.pipeline` decodes the next
  inputs and encodes finished samples on N threads while this thread corrupts (on the device, in batches).

Memory bound of a chunk task: ``BLOCK_BYTES`` of decoded inputs plus one (serial), at most ``batch_size`` buffered
samples per batched subset, plus, when pipelined,
``2·N`` decoded inputs ahead and ``4·N`` samples awaiting encoding per subset.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from ..corruptions import Corruption, get
from ..errors import CorruptgenError
from ..family.plan import Plan, Subset
from ..io.codec import JsonRecord, encode_fields
from ..io.decode import BadImageError, decode_array, decode_image
from ..io.facts import ShardFacts
from ..io.layout import shard_relpath
from ..io.shards import open_shard
from ..io.shown import scrub
from ..io.sources import Source, SourceItem
from ..seeding import sample_rng, sample_seed
from . import trace
from .fingerprint import FIELD, ReadLog, open_plan_source, shard_inputs
from .lifeline import die_with_parent, stop_on_sigterm
from .manifest import library_versions
from .options import RenderOptions

#: the serial schedule decodes inputs until this many bytes of them are in memory, then corrupts them subset by subset
BLOCK_BYTES = 16 << 20


@dataclass(frozen=True)
class ChunkTask:
    """Render ``subsets`` for source items ``[start, stop)`` as shard number ``chunk``; ``options`` only affect
    speed."""

    plan: Plan
    out_dir: str
    chunk: int
    start: int
    stop: int
    subsets: tuple[str, ...]
    options: RenderOptions = field(default_factory=RenderOptions)
    listing: str | None = None  # the driver's Source.listing_id(): a worker that lists another source refuses
    part: str = ""  # e.g. "part 1 of 2": the chunk's subsets are shared out over several tasks (a small build)
    share: tuple[int, int] = (0, 1)  # (g, k): this task is part g + 1 of the k that share the chunk

    @property
    def name(self) -> str:
        return f"chunk {self.chunk}" + (f" ({self.part})" if self.part else "")

    @property
    def counted(self) -> int:
        """The inputs this task advances the progress bar by: the k parts of a chunk count its inputs once."""
        size, (g, k) = self.stop - self.start, self.share
        return size * (g + 1) // k - size * g // k


@dataclass
class _Pending:
    item: SourceItem
    index: int  # position of the item in the source (for corruptions that reproduce order-based quirks)
    key: str
    repeat: int
    image: np.ndarray
    seed: int  # the generator is made from it only where the corruption draws (Corruption.random)

    def rng(self) -> np.random.Generator:
        """A fresh generator of the sample (what :func:`~corruptgen.seeding.sample_rng` gives)."""
        return np.random.default_rng(self.seed)


def _number(p: _Pending, subset: Subset) -> int:
    """Position of a sample among its subset's samples: ``input index · per_input + repeat``."""
    return p.index * subset.per_input + p.repeat


def sample_kwargs(corruption: Corruption, plan: Plan, subset: Subset, item_key: str, index: int, repeat: int,
                  label: int | None = None) -> dict:  # fmt: skip
    """The per-sample context ``corruption`` declares (:attr:`~corruptgen.corruptions.Corruption.context`):
    ``sample_index`` (the input's position in the source, for order-based quirks), ``stratum`` (``(position,
    count)`` of the sample among its input's repeats) and ``label`` (the input's class or ``None``)."""
    extra: dict[str, Any] = {"label": label} if "label" in corruption.context else {}
    if "sample_index" in corruption.context:
        extra["sample_index"] = index
    if "stratum" in corruption.context:
        count = subset.per_input
        extra["stratum"] = (_strata(plan.seed, plan.benchmark, subset.name, item_key, count)[repeat], count)
    return extra


def batch_kwargs(corruption: Corruption, indices: list[int], labels: list[int | None] | None = None) -> dict:
    """The per-sample context of a batch: ``sample_indices`` (the inputs' positions in the source) and ``labels``,
    when declared."""
    extra: dict[str, Any] = {"sample_indices": indices} if "sample_index" in corruption.context else {}
    if "label" in corruption.context:
        extra["labels"] = [None] * len(indices) if labels is None else labels
    return extra


@functools.lru_cache(maxsize=256)
def _strata(seed: int, benchmark: str, subset: str, item_key: str, count: int) -> tuple[int, ...]:
    """π of one input's ``count`` repeats (stratum position of repeat j = π(j)), drawn from the input's key, so it
    does not depend on chunking or workers (e.g. to stratify a quantile: repeat j uses ``[π(j), π(j) + 1) / count``)."""
    if count == 1:
        return (0,)
    rng = sample_rng(seed, benchmark, subset, item_key + "\x1fstratum")[1]
    return tuple(int(v) for v in rng.permutation(count))


_SOURCES: dict[Any, Source] = {}


def source_for(plan: Plan, *, listing: str | None = None, refresh: bool = False) -> Source:
    """The plan's source, opened once per process (``refresh``: scanned again now). With ``listing`` (the driver's
    :meth:`~corruptgen.io.sources.Source.listing_id`), a source listed differently is scanned again, and refused if
    it still differs: the source changed while the build ran."""
    key = plan.source
    if refresh or key not in _SOURCES or (listing is not None and _SOURCES[key].listing_id() != listing):
        _SOURCES[key] = open_plan_source(key)
    if listing is not None and _SOURCES[key].listing_id() != listing:
        raise CorruptgenError(
            f"the source {key.spec} changed while this build ran (it lists other items than when the build started); "
            "run the same command again: it renders what changed"
        )
    return _SOURCES[key]


def load_image(source: Source, index: int, plan: Plan) -> np.ndarray:
    """Read, decode and preprocess one input; raises :class:`BadImageError` with a reason."""
    return prepare_image(source.read_input(index, max_bytes=plan.max_bytes), plan)


def prepare_image(data: bytes | np.ndarray, plan: Plan) -> np.ndarray:
    """Decode and preprocess one input's bytes, or the array of an array source (no codec; thread-safe); raises
    :class:`BadImageError` with a reason."""
    if isinstance(data, np.ndarray):
        image = decode_array(data, max_pixels=plan.max_pixels)
    else:
        image, _ = decode_image(data, max_pixels=plan.max_pixels, min_side_hint=plan.preprocess.min_side)
    return plan.preprocess(image, max_pixels=plan.max_pixels)


class ChunkRenderer:
    """Renders the samples of one chunk into its open shard writers."""

    def __init__(self, task: ChunkTask) -> None:
        self.task = task
        self.plan = plan = task.plan
        self.source = source_for(plan, listing=task.listing)
        self.reads = ReadLog(self.source, plan.max_bytes)  # what the shards are rendered from (their fingerprint)
        self.subsets = [plan.subset(name) for name in task.subsets]
        self.corruptions = {s.name: (get(s.corruption) if s.corruption else None) for s in self.subsets}
        self.writers = {
            s.name: open_shard(task.out_dir, shard_relpath(s.name, task.chunk, plan.split)) for s in self.subsets
        }
        common = {"benchmark": plan.benchmark, "preprocessing": plan.preprocess.to_dict(),
                  "versions": library_versions()}  # fmt: skip
        self.records = {  # per subset: the members every sample json shares, JSON-encoded once
            s.name: JsonRecord({**common, "subset": s.name, "corruption": c.name if (c := self.corruptions[s.name])
                                else None, "category": s.category, "severity": s.severity})
            for s in self.subsets
        }  # fmt: skip
        # what the card needs, see corruptgen.io.facts
        self.facts = {name: ShardFacts(record.fixed) for name, record in self.records.items()}
        self.skipped: list[dict[str, Any]] = []
        self.batches: dict[str, list[_Pending]] = {s.name: [] for s in self.subsets}
        self.group_sizes = {s.name: c.group_size(dict(s.options)) for s in self.subsets
                            if (c := self.corruptions[s.name]) is not None and c.group_size is not None}  # fmt: skip
        self.outside: dict[int, np.ndarray | None] = {}  # inputs of other chunks that share a group with this one
        trace.event("setup", task=task.name)  # the task's own set-up is done (scripts/bench_scaling.py)

    def skip(self, item: SourceItem, subset: str | None, reason: str) -> None:
        self.skipped.append({"chunk": self.task.chunk, "key": item.key, "source_id": item.source_id,
                             "subset": subset, "reason": scrub(reason)})  # fmt: skip

    def render_block(self, start: int, stop: int) -> int:
        """Read and decode inputs from ``start`` on until :data:`BLOCK_BYTES` of them are decoded (or ``stop``), then
        corrupt them subset by subset (a corruption's code and tables stay in the caches across inputs: ~30 % less
        CPU at 32 px than input by input); returns the position after the block."""
        items, loaded, size, index = self.source.items(), [], 0, start
        while index < stop and size < BLOCK_BYTES:
            try:
                image = prepare_image(self.reads.read(index), self.plan)
            except BadImageError as e:
                self.skip(items[index], None, e.reason)
            else:
                loaded.append((index, items[index], image))
                size += image.nbytes
            index += 1
        for subset in self.subsets:
            for position, item, image in loaded:
                self.render_subset(subset, position, item, image)
        return index

    def render_loaded(self, index: int, item: SourceItem, image: np.ndarray | BadImageError) -> None:
        """Corrupt one decoded input for every subset (``image`` is the decode error of a bad input)."""
        if isinstance(image, BadImageError):
            self.skip(item, None, image.reason)
            return
        for subset in self.subsets:
            self.render_subset(subset, index, item, image)

    def render_subset(self, subset: Subset, index: int, item: SourceItem, image: np.ndarray) -> None:
        """The samples of ``subset`` from one decoded input (rendered now, or buffered for a batch or a group)."""
        corruption = self.corruptions[subset.name]
        for repeat, key in enumerate(subset.sample_keys(item.key)):
            pending = _Pending(item, index, key, repeat, image,
                               sample_seed(self.plan.seed, self.plan.benchmark, subset.name, key))  # fmt: skip
            if subset.name in self.group_sizes:
                self.add_to_group(subset, pending)
            elif corruption is not None and corruption.batch_fn is not None:
                self.batches[subset.name].append(pending)
                if len(self.batches[subset.name]) >= self.task.options.batch_size:
                    self.flush(subset)
            else:
                self.render_one(subset, corruption, pending)

    def render_one(self, subset: Subset, corruption: Corruption | None, p: _Pending) -> None:
        if corruption is None:
            result, params = p.image, {}
        else:
            try:
                extra = sample_kwargs(corruption, self.plan, subset, p.item.key, p.index, p.repeat, p.item.label)
                # the seed, not a generator: apply makes one only for a corruption that draws (same stream)
                result, params = corruption.apply(p.image, p.seed, **dict(subset.options), **extra)
            except Exception as e:  # a corruption that cannot handle this input is counted, never fatal
                self.skip(p.item, subset.name, f"corruption failed: {type(e).__name__}: {e}")
                return
        self.write(subset, p, result, params)

    def flush(self, subset: Subset) -> None:
        """Run a corruption's batched form over the buffered samples of ``subset`` (in item order)."""
        batch, self.batches[subset.name] = self.batches[subset.name], []
        if not batch:
            return
        corruption = self.corruptions[subset.name]
        assert corruption is not None and corruption.batch_fn is not None
        try:
            images = np.stack([p.image for p in batch])
            extra = batch_kwargs(corruption, [p.index for p in batch], [p.item.label for p in batch])
            results, params = corruption.batch_fn(images, [p.rng() for p in batch], device=self.task.options.device,
                                                  **dict(subset.options), **extra)  # fmt: skip
        except Exception:  # e.g. mixed shapes or one bad input: fall back to one at a time, with fresh generators
            for p in batch:
                self.render_one(subset, corruption, p)
            return
        for p, result, prm in zip(batch, results, params, strict=True):
            self.write(subset, p, result, prm)

    def flush_all(self) -> None:
        for subset in self.subsets:
            if subset.name in self.group_sizes:
                self.flush_group(subset)
            else:
                self.flush(subset)

    def add_to_group(self, subset: Subset, p: _Pending) -> None:
        """Buffer a sample of a grouped corruption; a sample of the next group renders the buffered one first."""
        size, buffer = self.group_sizes[subset.name], self.batches[subset.name]
        if buffer and _number(buffer[0], subset) // size != _number(p, subset) // size:
            self.flush_group(subset)
        self.batches[subset.name].append(p)

    def flush_group(self, subset: Subset) -> None:
        """Render the buffered group of ``subset`` with its members from other chunks (inputs that fail to decode
        are left out, in every chunk alike); only this chunk's members are written."""
        own, self.batches[subset.name] = self.batches[subset.name], []
        if not own:
            return
        corruption, size = self.corruptions[subset.name], self.group_sizes[subset.name]
        assert corruption is not None and corruption.group_fn is not None
        first = _number(own[0], subset) // size * size
        mine = {(p.index, p.repeat): p for p in own}
        members = []
        for n in range(first, min(first + size, len(self.source) * subset.per_input)):
            index, repeat = divmod(n, subset.per_input)
            p = mine.get((index, repeat)) if self.task.start <= index < self.task.stop else self.other(subset, n)
            if p is not None:
                members.append(p)
        try:
            strata = [sample_kwargs(corruption, self.plan, subset, p.item.key, p.index, p.repeat).get("stratum")
                      for p in members]  # fmt: skip
            results = corruption.group_fn([p.image for p in members], [p.rng() for p in members], strata,
                                          **dict(subset.options))  # fmt: skip
        except Exception:  # e.g. an input too small for the corruption: one at a time, with fresh generators
            for p in own:
                self.render_one(subset, corruption, p)
            return
        for p, (result, params) in zip(members, results, strict=True):
            if (p.index, p.repeat) in mine:
                self.write(subset, p, result, params)

    def other(self, subset: Subset, number: int) -> _Pending | None:
        """Sample ``number`` of ``subset`` from another chunk (``None`` when its input does not decode)."""
        index, repeat = divmod(number, subset.per_input)
        if index not in self.outside:
            try:
                self.outside[index] = prepare_image(self.reads.read(index), self.plan)
            except BadImageError:
                self.outside[index] = None
        image = self.outside[index]
        if image is None:
            return None
        item = self.source.items()[index]
        key = subset.sample_keys(item.key)[repeat]
        return _Pending(
            item, index, key, repeat, image, sample_seed(self.plan.seed, self.plan.benchmark, subset.name, key)
        )

    def write(self, subset: Subset, p: _Pending, image: np.ndarray, params) -> None:
        item = p.item
        record = self.records[subset.name]
        values = {"key": p.key, "source_key": item.key, "repeat": p.repeat, "source_id": item.source_id,
                  "label": item.label, "label_name": item.label_name, "params": params, "seed": p.seed}  # fmt: skip
        if image.ndim == 4:  # a sequence (e.g. ImageNet-P): frames 000.jpg, 001.jpg, ...
            values["frames"] = len(image)
        self.facts[subset.name].add(values)
        fields = {"json": record.dump(values)}
        if self.source.labelled:
            fields["cls"] = str(-1 if item.label is None else int(item.label)).encode()
        self.emit(subset.name, p.key, fields, image)

    def emit(self, subset: str, key: str, fields: dict[str, bytes], image: np.ndarray) -> None:
        """Encode ``image`` into ``fields`` and append the sample to its shard (the pipeline encodes on threads)."""
        fields.update(encode_fields(image, self.plan.image_format, self.plan.quality))
        self.writers[subset].add(key, fields)

    def drain(self) -> None:
        """Wait for samples still being encoded (nothing to wait for in the serial schedule)."""

    def commit(self) -> dict[str, dict[str, Any]]:
        shards = {}
        task, n = self.task, len(self.source)
        for name, shard in self.writers.items():
            rel = shard_relpath(name, task.chunk, self.plan.split)
            indices = shard_inputs(self.plan, name, task.start, task.stop, n)
            read = {FIELD: self.reads.record(indices, each=name == self.plan.subsets[0].name)}
            if shard.count:
                facts = self.facts[name].record(list(shard.fields))
                shards[rel] = {**shard.commit(), "subset": name, "chunk": task.chunk, "facts": facts, **read}
            else:  # every input of this chunk was skipped for this subset: no file
                shard.abort()
                shards[rel] = {"sha256": None, "bytes": 0, "samples": 0, "subset": name, "chunk": task.chunk, **read}
        return shards

    def abort(self) -> None:
        for shard in self.writers.values():
            shard.abort()


def worker_init(parent_pid: int | None = None) -> None:
    """Worker-process initializer: die with ``parent_pid`` (the driver) and stop when it says so (SIGTERM); one
    OpenCV and one torch thread per worker (the pool already uses the cores)."""
    die_with_parent(parent_pid)
    if parent_pid is not None:
        stop_on_sigterm()
    cv2.setNumThreads(1)
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # read by torch when it is first imported
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
