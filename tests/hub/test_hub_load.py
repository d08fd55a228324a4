"""``load`` and ``torch_loader``: every sample exactly once across workers and nodes, decoding, shuffling."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import datasets
import numpy as np
import pytest
import torch

import corruptgen
from corruptgen.errors import CorruptgenError
from corruptgen.hub import load, torch_loader


def manifest_keys(root: Path, subsets: list[str]) -> Counter:
    """(subset, key) of every sample of ``subsets`` according to the shards."""
    from corruptgen.io.tarread import iter_samples

    manifest = json.loads((root / "manifest.json").read_text())
    keys = Counter()
    for name in subsets:
        for rel in manifest["subsets"][name]["shards"]:
            keys.update((name, k) for k, _ in iter_samples(root / rel))
    return keys


def loaded_keys(loader) -> Counter:
    return Counter((m["subset"], m["key"]) for _, _, metas in loader for m in metas)


def test_two_workers_yield_every_sample_exactly_once(sharded_build):
    subsets = ["clean", "solarize", "posterize"]  # 4 shards each: split by shard
    loader = torch_loader(sharded_build, subsets=subsets, batch_size=5, num_workers=2)
    expected = manifest_keys(sharded_build, subsets)
    assert sum(expected.values()) == 30 == loader.num_samples
    batches = list(loader)
    assert loaded_keys(batches) == expected  # no duplicate, nothing missing
    images, labels, metas = batches[0]
    assert images.dtype == torch.float32 and images.shape[1:] == (3, 224, 224) and len(metas) == len(labels)
    assert 0.0 <= float(images.min()) and float(images.max()) <= 1.0
    for _, labels, metas in batches:
        for label, meta in zip(labels.tolist(), metas, strict=True):
            assert label == (meta["label"] if meta["label"] is not None else -1)


def test_fewer_shards_than_workers_splits_by_sample(syn2nat_pristine):
    subsets = ["solarize"]  # one shard, two workers: each keeps every other sample
    loader = torch_loader(syn2nat_pristine, subsets=subsets, batch_size=4, num_workers=2)
    assert loaded_keys(loader) == manifest_keys(syn2nat_pristine, subsets)


def test_nodes_split_the_shards(sharded_build, monkeypatch):
    subsets = ["solarize", "posterize"]
    seen = []
    for rank in (0, 1):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "2")
        seen.append(loaded_keys(torch_loader(sharded_build, subsets=subsets, batch_size=4, num_workers=0)))
    assert not set(seen[0]) & set(seen[1]) and seen[0] + seen[1] == manifest_keys(sharded_build, subsets)


def test_shuffle_is_seeded_and_changes_with_the_epoch(sharded_build):
    def order(seed, epoch=0):
        loader = torch_loader(sharded_build, subsets=["solarize", "posterize"], batch_size=3, shuffle=True, seed=seed,
                              shuffle_buffer=8, decode="raw")  # fmt: skip
        loader.set_epoch(epoch)
        return [(m["subset"], m["key"]) for _, _, metas in loader for m in metas]

    plain = [(m["subset"], m["key"]) for _, _, ms in torch_loader(sharded_build, subsets=["solarize", "posterize"],
                                                                    decode="raw") for m in ms]  # fmt: skip
    assert order(0) == order(0) and sorted(order(0)) == sorted(plain)
    assert order(0) != plain and order(0, epoch=1) != order(0)


def test_decode_modes_and_fsspec_urls(syn2nat_pristine):
    (arr, labels, _), *_ = torch_loader(syn2nat_pristine, subsets="clean", batch_size=3, decode="numpy")
    assert arr.dtype == np.uint8 and arr.shape == (3, 224, 224, 3) and labels.dtype == torch.int64
    (pils, _, _), *_ = torch_loader(syn2nat_pristine, subsets="clean", batch_size=2, decode="pil")
    assert pils[0].size == (224, 224)
    (raw, _, _), *_ = torch_loader(syn2nat_pristine, subsets="clean", batch_size=2, decode="raw")
    assert raw[0][:2] == b"\xff\xd8"
    url = f"file://{syn2nat_pristine}"
    assert loaded_keys(torch_loader(url, subsets=["clean"])) == manifest_keys(syn2nat_pristine, ["clean"])
    with pytest.raises(CorruptgenError, match="did you mean solarize"):
        torch_loader(syn2nat_pristine, subsets=["solarise"])
    with pytest.raises(CorruptgenError, match="decode"):
        torch_loader(syn2nat_pristine, decode="tensor")


@pytest.mark.skipif("imagenet-p" not in corruptgen.list_benchmarks(), reason="no ImageNet-P builder yet")
def test_sequences_decode_to_frame_stacks(family_dirs):
    root = family_dirs["imagenet-p"]
    manifest = json.loads((root / "manifest.json").read_text())
    name = next(n for n, s in manifest["subsets"].items() if s["corruption"] and s["samples"])
    images, _, metas = next(iter(torch_loader(root, subsets=[name], batch_size=2)))
    assert images.ndim == 5 and images.shape[0] == 2 and images.shape[1] == metas[0]["frames"]
    assert images.shape[2] == 3


def test_load_local_with_and_without_card(syn2nat_pristine, syn2nat_carded, hf_cache):
    direct = load(syn2nat_pristine, subset="solarize", cache_dir=hf_cache)  # no README: shards + inferred features
    carded = load(syn2nat_carded, subset="solarize", cache_dir=hf_cache)  # through the card's config
    assert isinstance(direct, datasets.Dataset) and direct.num_rows == carded.num_rows == 10
    assert direct.features == carded.features
    assert sorted(direct["__key__"]) == sorted(carded["__key__"])
    streamed = load(syn2nat_carded, subset="random_sun_flare", streaming=True, cache_dir=hf_cache)
    assert isinstance(streamed, datasets.IterableDataset)
    assert len(list(streamed)) == 10
    assert load(syn2nat_carded, cache_dir=hf_cache)[0]["json"]["subset"] == "solarize"  # the default config
    with pytest.raises(CorruptgenError, match="did you mean"):
        load(syn2nat_carded, subset="solarise")
    with pytest.raises(CorruptgenError, match="no build directory"):
        load("./no/such/dir", subset="solarize")


def test_stale_card_is_not_used(syn2nat_copy, hf_cache):
    from corruptgen.hub import write_card

    write_card(syn2nat_copy, images=False)
    manifest = json.loads((syn2nat_copy / "manifest.json").read_text())
    (syn2nat_copy / "manifest.json").write_text(json.dumps(manifest, indent=2))  # a rewritten manifest
    ds = load(syn2nat_copy, subset="posterize", cache_dir=hf_cache)
    assert ds.num_rows == 10 and ds[0]["__url__"].endswith("test-00000.tar")


def test_hub_repositories_go_through_datasets_and_hf_urls(syn2nat_pristine, monkeypatch):
    """A repo id is handed to datasets.load_dataset; torch_loader reads hf://datasets/<repo>@<rev>/... (here: the
    same build on disk, with fsspec's opener redirected)."""
    calls = []

    def fake_load_dataset(path, **kwargs):
        calls.append((path, kwargs))
        return datasets.DatasetDict({"test": datasets.Dataset.from_dict({"x": [1]})})

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    ds = load("hf:someone/syn2nat", subset="solarize", streaming=False, revision="v1")
    assert isinstance(ds, datasets.Dataset)  # a single split is returned as such
    assert calls == [("someone/syn2nat", {"name": "solarize", "split": None, "streaming": False, "revision": "v1"})]

    import fsspec

    real_open = fsspec.open
    prefix = "hf://datasets/someone/syn2nat@v1/"
    opened = []

    def redirect(url, *args, **kwargs):
        opened.append(url)
        return real_open(url.replace(prefix, f"file://{syn2nat_pristine}/"), *args, **kwargs)

    monkeypatch.setattr(fsspec, "open", redirect)
    loader = torch_loader("hf:someone/syn2nat", subsets=["clean"], revision="v1", decode="raw")
    assert loaded_keys(loader) == manifest_keys(syn2nat_pristine, ["clean"])
    assert opened == [prefix + "manifest.json", prefix + "data/clean/test-00000.tar"]
