"""Reading builds back: ``load`` (a `datasets` Dataset per subset) and ``torch_loader`` (a webdataset DataLoader).

``load`` works on a local build directory or a Hub repository. ``torch_loader`` streams the tar shards of a build
(a local directory, a Hub repository or any fsspec URL) through a webdataset pipeline split by node and by DataLoader
worker (spec hub_and_scale.md §1.6), decoding with PIL → numpy → torch (torchvision is not required).
"""

from __future__ import annotations

import difflib
import io
import json
import random
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from ..manifest import MANIFEST
from .card import README, Build, card_marker
from .card_yaml import ScanResult, class_names, record_label
from .features import field_kind, scan_subset

DECODES = ("torch", "numpy", "pil", "raw")


def _unknown_subset(name: str, known: Sequence[str], where: str) -> CorruptgenError:
    near = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else f"; known: {', '.join(known[:12])}"
    return CorruptgenError(f"unknown subset {name!r} in {where}{hint}")


def _card_configs(root: Path) -> set[str]:
    from huggingface_hub import metadata_load

    meta = metadata_load(root / README) or {}
    return {c.get("config_name") for c in meta.get("configs") or [] if isinstance(c, dict)}


def load(
    path_or_repo: str | Path,
    subset: str | None = None,
    split: str | None = None,
    streaming: bool = False,
    **kwargs: Any,
):
    """One subset of a build as a ``datasets.Dataset`` (or ``IterableDataset`` with ``streaming=True``).

    Args:
        path_or_repo: a local build directory (``<out>/<benchmark>``) or a Hub dataset repository (``user/name``).
        subset: the subset (= Hub config), e.g. ``"solarize"`` or ``"gaussian_noise_s3"``; default: the card's default.
        split: the split (default: the build's, ``test``); a Hub repository with several splits and ``split=None``
            gives a ``DatasetDict``.
        streaming: stream the shards instead of preparing an Arrow cache.
        kwargs: passed to ``datasets.load_dataset`` (``revision``, ``cache_dir``, ``token``, ...).

    A local directory whose README.md was written (by the build or ``corruptgen card``) for this very manifest is
    loaded through the card (declared features, one config per subset); otherwise the subset's shards are read
    directly with features inferred from its samples (``cls`` with the same class names as a card gives).
    """
    import datasets

    from ..io.storage import require_local

    if not str(path_or_repo).startswith("hf://"):
        require_local(path_or_repo, "corruptgen.load", "; corruptgen.torch_loader streams shards from any fsspec URL")
    local = Path(path_or_repo)
    if local.is_dir():
        build = Build.open(local)
        configs = build.configs()
        if not configs:
            raise CorruptgenError(f"{local}: the build has no samples")
        if subset is None:
            subset = build.default_config()
        if subset not in configs:
            raise _unknown_subset(subset, configs, str(local))
        split = split or build.split
        marker = card_marker(local)
        if marker and marker["manifest_sha256"] == build.manifest_sha256() and subset in _card_configs(local):
            return datasets.load_dataset(str(local), name=subset, split=split, streaming=streaming, **kwargs)
        shards = [str((local / rel).resolve()) for rel in build.shards(subset)]
        labels: dict[int, str | None] = {}
        schema = scan_subset(shards, on_meta=lambda meta: record_label(meta, labels))
        features = schema.features(class_names=class_names(build, ScanResult({subset: schema}, {}, {}, labels)))
        return datasets.load_dataset("webdataset", data_files={split: shards}, split=split, streaming=streaming,
                                     features=features, **kwargs)  # fmt: skip
    if isinstance(path_or_repo, Path) or str(path_or_repo).startswith((".", "/", "~")):
        raise CorruptgenError(f"no build directory at {path_or_repo}")
    try:
        ds = datasets.load_dataset(str(path_or_repo), name=subset, split=split, streaming=streaming, **kwargs)
    except datasets.exceptions.DatasetNotFoundError as e:
        raise CorruptgenError(f"{path_or_repo}: no such local directory or Hub dataset (or no access): {e}") from None
    if split is None and isinstance(ds, (datasets.DatasetDict, datasets.IterableDatasetDict)) and len(ds) == 1:
        return next(iter(ds.values()))
    return ds


# ---------------------------------------------------------------------------------------------------- torch_loader


def _resolve_shards(path: str | Path, subsets: Sequence[str] | None, revision: str | None) -> tuple[list[str], int]:
    """Absolute shard paths or URLs of the chosen subsets (in plan order) and their sample count (the one reader)."""
    build = Build.open(path, revision=revision)
    if not build.manifest:
        raise CorruptgenError(f"{path}: no {MANIFEST} found (not a corruptgen build)")
    configs = build.configs()
    chosen = list(configs) if subsets is None else ([subsets] if isinstance(subsets, str) else list(subsets))
    for name in chosen:
        if name not in configs:
            raise _unknown_subset(name, configs, str(path))
    urls = [build.shard_ref(rel) for name in chosen for rel in build.shards(name)]
    return urls, sum(build.samples(n) for n in chosen)


def _open_shards(src: Iterable[dict]) -> Iterator[dict]:
    """webdataset url_opener for local paths and fsspec URLs (``hf://``, ``s3://``, ``file://``, ...)."""
    stream = None
    try:
        for sample in src:
            if stream is not None:
                stream.close()
            url = sample["url"]
            if "://" in url:
                import fsspec

                stream = fsspec.open(url, "rb").open()
            else:
                stream = open(url, "rb")
            yield {**sample, "stream": stream}
    finally:
        if stream is not None:
            stream.close()


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


class _ShardShuffle:
    """Shuffle the shard list identically on every node and worker (seed, epoch) before splitting it."""

    def __init__(self, seed: int, epoch: _Epoch) -> None:
        self.seed, self.epoch = seed, epoch

    def __call__(self, src: Iterable[dict]) -> Iterator[dict]:
        urls = list(src)
        random.Random(self.seed * 1_000_003 + self.epoch.next()).shuffle(urls)
        yield from urls


class _SampleShuffle:
    """Shuffle samples within a buffer, with a generator per (seed, epoch, node, worker)."""

    def __init__(self, bufsize: int, seed: int, epoch: _Epoch) -> None:
        self.bufsize, self.seed, self.epoch = bufsize, seed, epoch

    def __call__(self, src: Iterable[dict]) -> Iterator[dict]:
        import webdataset as wds

        rank, _, worker, _ = wds.utils.pytorch_worker_info()
        rng = None
        buf: list[dict] = []
        for sample in src:
            if rng is None:  # the shard shuffle upstream has started this pass and set the epoch
                rng = random.Random(((self.seed * 1_000_003 + self.epoch.current) * 65_537 + rank) * 1_009 + worker)
            if len(buf) < self.bufsize:
                buf.append(sample)
                continue
            i = rng.randrange(len(buf))
            buf[i], sample = sample, buf[i]
            yield sample
        if rng is not None:
            rng.shuffle(buf)
        yield from buf


def _every_nth(src: Iterable[dict]) -> Iterator[dict]:
    """Sample-level split for builds with fewer shards than consumers: consumer i keeps samples i, i+n, i+2n, ..."""
    import webdataset as wds

    rank, world, worker, workers = wds.utils.pytorch_worker_info()
    me, n = rank * workers + worker, world * workers
    for i, sample in enumerate(src):
        if i % n == me:
            yield sample


def _decode_image(data: bytes, how: str) -> Any:
    from PIL import Image

    if how == "raw":
        return data
    img = Image.open(io.BytesIO(data))
    img = img.convert("RGB")
    if how == "pil":
        return img
    import numpy as np

    arr = np.asarray(img)
    if how == "numpy":
        return arr
    import torch

    return torch.from_numpy(arr.copy()).permute(2, 0, 1).float().div_(255.0)


class _Decoder:
    """Sample dict → (image, label, meta). Sequences (``000.jpg``, ``001.jpg``, ...) become stacked frames."""

    def __init__(self, how: str) -> None:
        self.how = how

    def __call__(self, sample: dict) -> tuple[Any, int, dict]:
        images = sorted(k for k in sample if not k.startswith("__") and field_kind(k) == "image")
        if not images:
            raise CorruptgenError(f"sample {sample.get('__key__')} in {sample.get('__url__')} has no image")
        meta = json.loads(sample["json"]) if "json" in sample else {}
        meta.setdefault("key", sample.get("__key__"))
        label = int(sample["cls"]) if "cls" in sample else (meta.get("label") if meta.get("label") is not None else -1)
        frames = [_decode_image(sample[k], self.how) for k in images]
        if len(images) == 1 and "." not in images[0]:
            return frames[0], int(label), meta
        if self.how == "torch":
            import torch

            return torch.stack(frames), int(label), meta
        if self.how == "numpy":
            import numpy as np

            return np.stack(frames), int(label), meta
        return frames, int(label), meta


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


def torch_loader(
    path: str | Path,
    subsets: Sequence[str] | str | None = None,
    batch_size: int = 64,
    num_workers: int = 0,
    shuffle: bool = False,
    seed: int = 0,
    decode: str = "torch",
    *,
    shuffle_buffer: int = 1000,
    drop_last: bool = False,
    revision: str | None = None,
    **loader_kwargs: Any,
):
    """A ``torch.utils.data.DataLoader`` over the shards of the chosen subsets (default: every subset).

    Each batch is ``(images, labels, metas)``: with ``decode="torch"`` images are float tensors ``(B, 3, H, W)`` in
    [0, 1] (sequences: ``(B, T, 3, H, W)``), ``"numpy"`` uint8 ``(B, H, W, 3)``, ``"pil"`` a list of PIL images,
    ``"raw"`` the encoded bytes; labels an int64 tensor (-1 when unknown); metas the list of sample json dicts.

    Shards are split over nodes (``RANK``/``WORLD_SIZE`` or ``torch.distributed``) and then over DataLoader workers
    (``wds.split_by_node`` / ``wds.split_by_worker``), so every sample is read exactly once per epoch. When there are
    fewer shards than nodes × workers, every consumer reads all shards and keeps every n-th sample instead (still
    each sample exactly once). ``shuffle`` shuffles the shard order (the same on every node, per ``seed`` and epoch)
    and samples within a ``shuffle_buffer``; call ``loader.set_epoch(epoch)`` before each epoch for a new order.

    ``path``: a local build directory, a Hub dataset repository ``user/name`` (``revision`` optional), or an fsspec
    URL of a build directory. ``loader_kwargs`` go to the DataLoader (``pin_memory``, ``prefetch_factor``, ...).
    """
    import torch
    import webdataset as wds

    if decode not in DECODES:
        raise CorruptgenError(f"decode must be one of {', '.join(DECODES)}, got {decode!r}")
    if batch_size < 1 or num_workers < 0:
        raise CorruptgenError("batch_size must be >= 1 and num_workers >= 0")
    urls, total = _resolve_shards(path, subsets, revision)
    if not urls:
        raise CorruptgenError(f"{path}: the chosen subsets have no shards")
    _, world, _, _ = wds.utils.pytorch_worker_info()
    consumers = world * max(num_workers, 1)
    epoch = _Epoch()
    stages: list[Any] = [wds.SimpleShardList(urls)]
    if shuffle:
        stages.append(_ShardShuffle(seed, epoch))
    by_shard = len(urls) >= consumers
    if by_shard:
        stages += [wds.split_by_node, wds.split_by_worker]
    stages += [_open_shards, wds.tariterators.tar_file_expander, wds.tariterators.group_by_keys]
    if not by_shard:
        stages.append(_every_nth)
    if shuffle and shuffle_buffer > 1:
        stages.append(_SampleShuffle(shuffle_buffer, seed, epoch))
    stages += [wds.map(_Decoder(decode)), wds.batched(batch_size, collation_fn=_Collate(decode), partial=not drop_last)]
    pipeline = wds.DataPipeline(*stages)
    loader_kwargs.setdefault("collate_fn", _identity)  # batches are already collated (numpy stays numpy)
    loader = torch.utils.data.DataLoader(pipeline, batch_size=None, num_workers=num_workers, **loader_kwargs)
    loader.num_samples = total  # samples over all nodes and workers, for progress bars
    loader.set_epoch = epoch.set  # reshuffle differently each epoch (shuffle=True)
    return loader
