"""``torch_loader``: a DataLoader streaming the tar shards of a build, with the same number of batches on every rank.

Distributed evaluation (DDP) hangs when one rank runs out of batches before the others, so the split is by sample,
not by shard. Samples that can share a batch form a group: every single-image subset together, each subset of
sequences (ImageNet-P's frame stacks, whose length differs between perturbations) on its own, so an image and a
sequence never meet in one batch. Each group's samples (in plan order, or in a seeded shard order with ``shuffle``)
form one sequence; each rank takes a contiguous block of it and cuts it into batches (only the group's last batch may
be partial), and each DataLoader worker takes a contiguous run of its rank's batches. Every rank gets the same block
sizes, hence the same number of batches, whatever the number of workers. When a group's sample count does not divide
by the number of ranks, ``balance`` decides: ``"pad"`` (default) tops the last ranks up with repeated samples marked
``meta["padding"] = True`` (every sample is seen at least once; drop the padded ones from metrics), ``"drop"`` leaves
the remainder (fewer than ``world_size`` samples per group) out. A worker opens only the shards its batches overlap.
The per-shard sample counts come from the build's manifest.

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

from ..engine.manifest import MANIFEST
from ..engine.reader import Build
from ..errors import CorruptgenError
from .features import field_kind

DECODES = ("torch", "numpy", "pil", "raw")
BALANCE = ("pad", "drop")
#: how DataLoader workers start unless ``multiprocessing_context`` says otherwise: a fresh interpreter with this
#: process's environment, never a fork of it (a fork copies its threads, torch's, OpenBLAS's or an HTTP client's, whose
#: locks can stay held in the child: a deadlock risk Python 3.12+ warns about; Python 3.14 no longer forks by default)
START_METHOD = "spawn"
#: webdataset image decoders for each ``decode`` mode (``raw`` keeps the encoded bytes)
_WDS_DECODE = {"torch": "torchrgb", "numpy": "rgb8", "pil": "pilrgb", "raw": None}


def _unknown_subset(name: str, known: Sequence[str], where: str) -> CorruptgenError:
    import difflib

    near = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else f"; known: {', '.join(known[:12])}"
    return CorruptgenError(f"unknown subset {name!r} in {where}{hint}")


Shards = list[tuple[str, int]]  # (shard path or URL, sample count)


def _resolve_shards(path: str | Path, subsets: Sequence[str] | None, revision: str | None) -> list[Shards]:
    """The chosen subsets' shards in plan order, in groups whose samples can share a batch: all single-image subsets
    together, each subset of sequences on its own (read from the first member of its first shard)."""
    build = Build.open(path, revision=revision)
    if not build.manifest:
        raise CorruptgenError(f"{path}: no {MANIFEST} found (not a corruptgen build)")
    configs = build.configs()
    chosen = list(configs) if subsets is None else ([subsets] if isinstance(subsets, str) else list(subsets))
    for name in chosen:
        if name not in configs:
            raise _unknown_subset(name, configs, str(path))
    records = build.manifest["shards"]
    groups: dict[str, Shards] = {}
    for name in chosen:
        shards = [(build.shard_ref(rel), int(records[rel]["samples"])) for rel in build.shards(name)]
        if shards:
            kind = name if len(chosen) > 1 and _holds_sequences(shards[0][0]) else ""
            groups.setdefault(kind, []).extend(shards)
    return list(groups.values())


def _holds_sequences(url: str) -> bool:
    """Whether a shard's samples are frame sequences (``<key>.000.jpg``, ...): its first member's name tells."""
    import tarfile

    from ..io.layout import split_member

    try:
        with _open(url, block_size=1 << 16) as f, tarfile.open(fileobj=f, mode="r|") as tar:
            first = tar.next()
    except (OSError, tarfile.TarError) as e:
        raise CorruptgenError(f"cannot read shard {url}: {type(e).__name__}: {e}") from None
    field = split_member(first.name)[1] if first is not None else None
    return field is not None and field_kind(field) in ("image", "array") and "." in field


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
    """The raw samples (webdataset dicts, ``__group__`` set) of this rank's batches, this worker's run of them."""

    def __init__(self, groups: list[Shards], rank: int, world: int, balance: str, shuffle: bool, seed: int,
                 epoch: _Epoch, batch_size: int, drop_last: bool) -> None:  # fmt: skip
        self.groups, self.rank, self.world, self.balance = groups, rank, world, balance
        self.shuffle, self.seed, self.epoch = shuffle, seed, epoch
        self.batch_size, self.drop_last = batch_size, drop_last

    def batches(self) -> list[tuple[int, int, int]]:
        """(group, start, stop) positions of this rank's batches: each group's rank block cut into ``batch_size``
        pieces, the last one partial (left out with ``drop_last``)."""
        out = []
        for g, shards in enumerate(self.groups):
            block = share(sum(n for _, n in shards), self.world, self.balance)[0]
            start, stop = self.rank * block, (self.rank + 1) * block
            for lo in range(start, stop, self.batch_size):
                hi = min(lo + self.batch_size, stop)
                if hi - lo == self.batch_size or not self.drop_last:
                    out.append((g, lo, hi))
        return out

    def __call__(self) -> Iterator[dict]:
        import torch.utils.data
        import webdataset as wds

        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        orders = [list(shards) for shards in self.groups]
        if self.shuffle:  # the same order on every rank and worker (seed, epoch)
            rng = random.Random(self.seed * 1_000_003 + self.epoch.next())
            for order in orders:
                rng.shuffle(order)
        batches = self.batches()
        parts = share(len(batches), workers, "split")
        for g, start, stop in _runs(batches[sum(parts[:worker]) : sum(parts[: worker + 1])]):
            order = orders[g]
            for shard, first, take, padding in pieces([n for _, n in order], start, stop):
                stream = _open(order[shard][0])
                try:
                    expanded = wds.tariterators.tar_file_expander([{"url": order[shard][0], "stream": stream}])
                    for sample in itertools.islice(wds.tariterators.group_by_keys(expanded), first, first + take):
                        yield {**sample, "__group__": g, **({"__padding__": True} if padding else {})}
                finally:
                    stream.close()


def _runs(batches: list[tuple[int, int, int]]) -> Iterator[tuple[int, int, int]]:
    """Consecutive batches of one group merged into one (group, start, stop) run (each shard is opened once)."""
    run = None
    for g, lo, hi in batches:
        if run is not None and run[0] == g and run[2] == lo:
            run = (g, run[1], hi)
            continue
        if run is not None:
            yield run
        run = (g, lo, hi)
    if run is not None:
        yield run


def _open(url: str, block_size: int | None = None):
    """A binary stream of a local path or an fsspec URL (``hf://``, ``s3://``, ``file://``, ...); ``block_size``: the
    bytes a remote read fetches at a time (the filesystem's default when None)."""
    if "://" in url:
        import fsspec

        if block_size is None:
            return fsspec.open(url, "rb").open()
        fs, path = fsspec.core.url_to_fs(url)
        return fs.open(path, "rb", block_size=block_size)
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
        rng = random.Random(((self.seed * 1_000_003 + self.epoch.current) * 65_537 + self.rank) * 1_009 + worker)
        for _, run in itertools.groupby(itertools.chain([first], src), key=lambda s: s["__group__"]):
            yield from wds.filters._shuffle(run, self.bufsize, min(100, self.bufsize), rng=rng)  # within a group


class _Assemble:
    """A decoded sample dict → (image, label, meta). Sequences (``000.jpg``, ``001.jpg``, ...) become stacked
    frames; padding samples carry ``meta["padding"] = True``. An ``npy`` member (float32 (H, W, 3) on [0, 1], decoded
    by webdataset without unpickling) is checked, and becomes a (3, H, W) tensor with ``decode="torch"``; it stays a
    float32 array otherwise."""

    def __init__(self, how: str) -> None:
        self.how = how

    def _array(self, value: Any, where: str) -> Any:
        from ..io.decode import BadImageError
        from ..io.float_images import decode_npy

        try:
            image = decode_npy(value)
        except BadImageError as e:
            raise CorruptgenError(f"{where}: {e.reason}") from None
        if self.how == "torch":
            import torch

            return torch.from_numpy(image).permute(2, 0, 1)
        return image

    def __call__(self, sample: dict) -> tuple[Any, int, dict]:
        kinds = {k: field_kind(k) for k in sample if not k.startswith("__")}
        images = sorted(k for k, kind in kinds.items() if kind in ("image", "array"))
        for k in images:
            if kinds[k] == "array":
                sample[k] = self._array(sample[k], f"sample {sample.get('__key__')} in {sample.get('__url__')}")
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


class _Batches:
    """Decoded samples → collated batches of ``size``; a group change starts a new batch (a worker's run of a group
    begins on a batch boundary, so these are exactly the planned batches)."""

    def __init__(self, size: int, how: str) -> None:
        self.size, self.assemble, self.collate = size, _Assemble(how), _Collate(how)

    def __call__(self, src: Iterable[dict]) -> Iterator[tuple[Any, Any, list[dict]]]:
        batch: list[tuple[Any, int, dict]] = []
        group = None
        for sample in src:
            if batch and (len(batch) == self.size or sample["__group__"] != group):
                yield self.collate(batch)
                batch = []
            group = sample["__group__"]
            batch.append(self.assemble(sample))
        if batch:
            yield self.collate(batch)


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
                raise CorruptgenError(f"images in one batch differ in size {sorted(shapes)[:3]}: use decode='pil' or "
                                      "'raw' (lists of any size) or batch_size=1, or build with a preprocessing that "
                                      "gives one size (the families' defaults do)")  # fmt: skip
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
    ``"raw"`` the encoded bytes; labels an int64 tensor (-1 when unknown); metas the list of sample json dicts. A
    build stored with ``--format npy`` holds float32 arrays on [0, 1]: ``"torch"`` gives the same float tensors
    (unrounded), the other modes float32 ``(H, W, 3)`` arrays (``"numpy"`` stacked).

    A batch holds single images or sequences of one subset, never both; batches are full except the last of each
    group (all single-image subsets form one group, each sequence subset its own), and ``len(loader)`` is the exact
    batch count, the same with any ``num_workers``. Ranks (``rank``/``world_size``, default: ``torch.distributed`` or
    ``RANK``/``WORLD_SIZE``) and DataLoader workers split the samples (module docstring): every rank gets the same
    number of samples and of batches, every sample is read once per epoch, plus with ``balance="pad"`` (default) up
    to ``world_size − 1`` repeated samples per group marked ``meta["padding"] = True``; ``balance="drop"`` leaves
    those last samples out instead. ``shuffle`` shuffles the shard order (the same on every rank, per ``seed`` and
    epoch) and samples within a ``shuffle_buffer`` (inside a group); call ``loader.set_epoch(epoch)`` before each
    epoch for a new order.

    ``path``: a local build directory, a Hub dataset repository ``user/name`` (``revision`` optional), or an fsspec
    URL of a build directory. ``loader_kwargs`` go to the DataLoader (``pin_memory``, ``prefetch_factor``, ...).
    Workers start with :data:`START_METHOD` (``spawn``) unless ``multiprocessing_context`` is given: a script that
    iterates a loader with workers needs the ``if __name__ == "__main__":`` guard, and ``persistent_workers=True``
    starts them once instead of every epoch.
    """
    import torch
    import webdataset as wds

    from .sized import SizedPipeline

    if decode not in DECODES:
        raise CorruptgenError(f"decode must be one of {', '.join(DECODES)}, got {decode!r}")
    if balance not in BALANCE:
        raise CorruptgenError(f"balance must be 'pad' or 'drop', got {balance!r}")
    if batch_size < 1 or num_workers < 0:
        raise CorruptgenError("batch_size must be >= 1 and num_workers >= 0")
    groups = _resolve_shards(path, subsets, revision)
    if not groups:
        raise CorruptgenError(f"{path}: the chosen subsets have no shards")
    rank, world = _world(rank, world_size)
    epoch = _Epoch()
    samples = _Samples(groups, rank, world, balance, shuffle, seed, epoch, batch_size, drop_last)
    stages: list[Any] = [samples]
    if shuffle and shuffle_buffer > 1:
        stages.append(_Shuffle(shuffle_buffer, seed, rank, epoch))
    image = _WDS_DECODE[decode]
    stages += [wds.decode(image) if image else wds.decode(), _Batches(batch_size, decode)]
    batches = samples.batches()
    pipeline = SizedPipeline(*stages, length=len(batches))  # exact, whatever the workers
    loader_kwargs.setdefault("collate_fn", _identity)  # batches are already collated (numpy stays numpy)
    if num_workers > 0 and loader_kwargs.get("multiprocessing_context") is None:
        loader_kwargs["multiprocessing_context"] = START_METHOD
    loader = torch.utils.data.DataLoader(pipeline, batch_size=None, num_workers=num_workers, **loader_kwargs)
    loader.num_samples = sum(n for shards in groups for _, n in shards)  # distinct samples over all ranks
    loader.rank_samples = sum(hi - lo for _, lo, hi in batches)  # samples this rank yields per epoch (padding included)
    loader.set_epoch = epoch.set  # reshuffle differently each epoch (shuffle=True)
    return loader
