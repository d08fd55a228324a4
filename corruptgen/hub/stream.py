"""``torch_loader``: a DataLoader streaming the tar shards of a build, with the same number of batches on every rank.

Distributed evaluation (DDP) hangs when one rank runs out of batches before the others, so the split is by sample,
not by shard: the build's samples (in plan order, or in a seeded shard order with ``shuffle``) form one sequence, each
rank takes a contiguous block of it and each DataLoader worker a contiguous part of its rank's block. Every rank gets
the same block size and splits it over its workers the same way, hence the same number of batches. When the sample
count does not divide by the number of ranks, ``balance`` decides: ``"pad"`` (default) tops the last ranks up with
repeated samples marked ``meta["padding"] = True`` (every sample is seen at least once; drop the padded ones from
metrics), ``"drop"`` leaves the remainder (fewer than ``world_size`` samples) out. A worker opens only the shards its
part overlaps. The per-shard sample counts come from the build's manifest.

Reading, shuffling and decoding are webdataset's own stages (``tar_file_expander`` + ``group_by_keys``,
``wds.shuffle``, ``wds.decode``); ``split_by_node`` / ``split_by_worker`` are not used because they split whole
shards, which gives ranks unequal sample counts.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from ..manifest import MANIFEST
from ..reader import Build
from .features import field_kind

DECODES = ("torch", "numpy", "pil", "raw")
BALANCE = ("pad", "drop")
#: webdataset image decoders for each ``decode`` mode (``raw`` keeps the encoded bytes)
_WDS_DECODE = {"torch": "torchrgb", "numpy": "rgb8", "pil": "pilrgb", "raw": None}


def _unknown_subset(name: str, known: Sequence[str], where: str) -> CorruptgenError:
    import difflib

    near = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else f"; known: {', '.join(known[:12])}"
    return CorruptgenError(f"unknown subset {name!r} in {where}{hint}")


def _resolve_shards(path: str | Path, subsets: Sequence[str] | None, revision: str | None) -> list[tuple[str, int]]:
    """(shard path or URL, sample count) of the chosen subsets' shards, in plan order."""
    build = Build.open(path, revision=revision)
    if not build.manifest:
        raise CorruptgenError(f"{path}: no {MANIFEST} found (not a corruptgen build)")
    configs = build.configs()
    chosen = list(configs) if subsets is None else ([subsets] if isinstance(subsets, str) else list(subsets))
    for name in chosen:
        if name not in configs:
            raise _unknown_subset(name, configs, str(path))
    records = build.manifest["shards"]
    return [(build.shard_ref(rel), int(records[rel]["samples"])) for name in chosen for rel in build.shards(name)]


def share(total: int, parts: int, balance: str) -> list[int]:
    """Samples per part (rank or worker) of ``total``: equal block sizes for ranks (``balance`` pad: rounded up,
    drop: down); ``balance="split"`` splits exactly, the first parts taking one more."""
    if balance == "split":
        return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]
    size = -(-total // parts) if balance == "pad" else total // parts
    return [size] * parts


def pieces(counts: Sequence[int], start: int, stop: int) -> Iterator[tuple[int, int, int, bool]]:
    """(shard index, first sample, sample count, padding) covering positions ``start:stop`` of the sequence of the
    shards' samples; positions past the end wrap around to the beginning and are padding."""
    total = sum(counts)
    ends = list(itertools.accumulate(counts))
    pos = start
    while pos < stop and total:
        wrapped, padding = pos % total, pos >= total
        shard = next(i for i, end in enumerate(ends) if end > wrapped)
        first = wrapped - (ends[shard] - counts[shard])
        take = min(counts[shard] - first, stop - pos, total - wrapped)
        yield shard, first, take, padding
        pos += take


class _Epoch:
    """Epoch counter shared by the shuffle stages: ``loader.set_epoch(e)`` (before iterating, as with
    ``DistributedSampler``); without it the count advances with every pass made in the same process."""

    def __init__(self) -> None:
        self.value = 0
        self.passes = 0
        self.current = 0

    def set(self, epoch: int) -> None:
        self.value, self.passes = int(epoch), 0

    def next(self) -> int:
        self.current = self.value + self.passes
        self.passes += 1
        return self.current


class _Samples:
    """The raw samples (webdataset dicts) of this rank's block, this worker's part of it."""

    def __init__(self, shards: list[tuple[str, int]], rank: int, world: int, balance: str, shuffle: bool, seed: int,
                 epoch: _Epoch) -> None:  # fmt: skip
        self.shards, self.rank, self.world, self.balance = shards, rank, world, balance
        self.shuffle, self.seed, self.epoch = shuffle, seed, epoch

    def block(self) -> int:
        return share(sum(n for _, n in self.shards), self.world, self.balance)[0]

    def __call__(self) -> Iterator[dict]:
        import torch.utils.data
        import webdataset as wds

        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        order = list(self.shards)
        if self.shuffle:  # the same order on every rank and worker (seed, epoch)
            random.Random(self.seed * 1_000_003 + self.epoch.next()).shuffle(order)
        block = self.block()
        parts = share(block, workers, "split")
        start = self.rank * block + sum(parts[:worker])
        counts = [n for _, n in order]
        for shard, first, take, padding in pieces(counts, start, start + parts[worker]):
            stream = _open(order[shard][0])
            try:
                expanded = wds.tariterators.tar_file_expander([{"url": order[shard][0], "stream": stream}])
                for sample in itertools.islice(wds.tariterators.group_by_keys(expanded), first, first + take):
                    yield {**sample, "__padding__": True} if padding else sample
            finally:
                stream.close()


def _open(url: str):
    """A binary stream of a local path or an fsspec URL (``hf://``, ``s3://``, ``file://``, ...)."""
    if "://" in url:
        import fsspec

        return fsspec.open(url, "rb").open()
    return open(url, "rb")


class _Shuffle:
    """``wds.shuffle`` with a generator per (seed, epoch, rank, worker), made when a pass starts."""

    def __init__(self, bufsize: int, seed: int, rank: int, epoch: _Epoch) -> None:
        self.bufsize, self.seed, self.rank, self.epoch = bufsize, seed, rank, epoch

    def __call__(self, src: Iterable[dict]) -> Iterator[dict]:
        import torch.utils.data
        import webdataset as wds

        info = torch.utils.data.get_worker_info()
        worker = info.id if info is not None else 0
        src = iter(src)
        first = next(src, None)  # the sample stage has started this pass and set the epoch
        if first is None:
            return
        key = ((self.seed * 1_000_003 + self.epoch.current) * 65_537 + self.rank) * 1_009 + worker
        yield from wds.filters._shuffle(itertools.chain([first], src), self.bufsize, min(100, self.bufsize),
                                        rng=random.Random(key))  # fmt: skip


class _Assemble:
    """A decoded sample dict → (image, label, meta). Sequences (``000.jpg``, ``001.jpg``, ...) become stacked
    frames; padding samples carry ``meta["padding"] = True``."""

    def __init__(self, how: str) -> None:
        self.how = how

    def __call__(self, sample: dict) -> tuple[Any, int, dict]:
        images = sorted(k for k in sample if not k.startswith("__") and field_kind(k) == "image")
        if not images:
            raise CorruptgenError(f"sample {sample.get('__key__')} in {sample.get('__url__')} has no image")
        meta = dict(sample.get("json") or {})
        meta.setdefault("key", sample.get("__key__"))
        if sample.get("__padding__"):
            meta["padding"] = True
        label = sample["cls"] if "cls" in sample else meta.get("label")
        label = -1 if label is None else int(label)
        frames = [sample[k] for k in images]
        if len(images) == 1 and "." not in images[0]:
            return frames[0], label, meta
        if self.how == "torch":
            import torch

            return torch.stack(frames), label, meta
        if self.how == "numpy":
            import numpy as np

            return np.stack(frames), label, meta
        return frames, label, meta


def _identity(batch: Any) -> Any:
    return batch


class _Collate:
    def __init__(self, how: str) -> None:
        self.how = how

    def __call__(self, batch: list[tuple[Any, int, dict]]) -> tuple[Any, Any, list[dict]]:
        import torch

        images, labels, metas = zip(*batch, strict=True)
        labels_t = torch.tensor(labels, dtype=torch.int64)
        if self.how in ("torch", "numpy"):
            shapes = {tuple(x.shape) for x in images}
            if len(shapes) > 1:
                raise CorruptgenError(f"images in one batch differ in size {sorted(shapes)[:3]}: build with a fixed "
                                      "crop (the default), use batch_size=1, or decode='pil'")  # fmt: skip
            if self.how == "torch":
                return torch.stack(images), labels_t, list(metas)
            import numpy as np

            return np.stack(images), labels_t, list(metas)
        return list(images), labels_t, list(metas)


def _world(rank: int | None, world_size: int | None) -> tuple[int, int]:
    import webdataset as wds

    env_rank, env_world, _, _ = wds.utils.pytorch_worker_info()  # torch.distributed, else RANK / WORLD_SIZE
    rank = env_rank if rank is None else rank
    world = env_world if world_size is None else world_size
    if world < 1 or not 0 <= rank < world:
        raise CorruptgenError(f"rank {rank} is not in 0..{world - 1} (world_size {world})")
    return rank, world


def torch_loader(
    path: str | Path,
    subsets: Sequence[str] | str | None = None,
    batch_size: int = 64,
    num_workers: int = 0,
    shuffle: bool = False,
    seed: int = 0,
    decode: str = "torch",
    *,
    balance: str = "pad",
    rank: int | None = None,
    world_size: int | None = None,
    shuffle_buffer: int = 1000,
    drop_last: bool = False,
    revision: str | None = None,
    **loader_kwargs: Any,
):
    """A ``torch.utils.data.DataLoader`` over the shards of the chosen subsets (default: every subset).

    Each batch is ``(images, labels, metas)``: with ``decode="torch"`` images are float tensors ``(B, 3, H, W)`` in
    [0, 1] (sequences: ``(B, T, 3, H, W)``), ``"numpy"`` uint8 ``(B, H, W, 3)``, ``"pil"`` a list of PIL images,
    ``"raw"`` the encoded bytes; labels an int64 tensor (-1 when unknown); metas the list of sample json dicts.

    Ranks (``rank``/``world_size``, default: ``torch.distributed`` or ``RANK``/``WORLD_SIZE``) and DataLoader workers
    split the samples (module docstring): every rank gets the same number of samples and of batches (``len(loader)``),
    every sample is read once per epoch, plus with ``balance="pad"`` (default) up to ``world_size − 1`` repeated
    samples marked ``meta["padding"] = True``; ``balance="drop"`` leaves those last samples out instead. ``shuffle``
    shuffles the shard order (the same on every rank, per ``seed`` and epoch) and samples within a
    ``shuffle_buffer``; call ``loader.set_epoch(epoch)`` before each epoch for a new order.

    ``path``: a local build directory, a Hub dataset repository ``user/name`` (``revision`` optional), or an fsspec
    URL of a build directory. ``loader_kwargs`` go to the DataLoader (``pin_memory``, ``prefetch_factor``, ...).
    """
    import torch
    import webdataset as wds

    if decode not in DECODES:
        raise CorruptgenError(f"decode must be one of {', '.join(DECODES)}, got {decode!r}")
    if balance not in BALANCE:
        raise CorruptgenError(f"balance must be 'pad' or 'drop', got {balance!r}")
    if batch_size < 1 or num_workers < 0:
        raise CorruptgenError("batch_size must be >= 1 and num_workers >= 0")
    shards = _resolve_shards(path, subsets, revision)
    if not shards:
        raise CorruptgenError(f"{path}: the chosen subsets have no shards")
    rank, world = _world(rank, world_size)
    epoch = _Epoch()
    samples = _Samples(shards, rank, world, balance, shuffle, seed, epoch)
    stages: list[Any] = [samples]
    if shuffle and shuffle_buffer > 1:
        stages.append(_Shuffle(shuffle_buffer, seed, rank, epoch))
    image = _WDS_DECODE[decode]
    stages += [wds.decode(image) if image else wds.decode(), wds.map(_Assemble(decode)),
               wds.batched(batch_size, collation_fn=_Collate(decode), partial=not drop_last)]  # fmt: skip
    parts = share(samples.block(), max(num_workers, 1), "split")
    batches = sum((n // batch_size) if drop_last else -(-n // batch_size) for n in parts)
    pipeline = wds.DataPipeline(*stages).with_length(batches, silent=True)  # exact
    loader_kwargs.setdefault("collate_fn", _identity)  # batches are already collated (numpy stays numpy)
    loader = torch.utils.data.DataLoader(pipeline, batch_size=None, num_workers=num_workers, **loader_kwargs)
    loader.num_samples = sum(n for _, n in shards)  # distinct samples over all ranks, for progress bars
    loader.rank_samples = samples.block()  # samples this rank yields per epoch (padding included)
    loader.set_epoch = epoch.set  # reshuffle differently each epoch (shuffle=True)
    return loader
