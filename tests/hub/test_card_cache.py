"""The card against `datasets`' own cache and later builds: rebuilt shards are never served from a stale Arrow cache,
a ``--no-card`` build loads by config, what the publisher set on the card survives, the facts a build records equal
what its samples say, and class names are never sized by a label's value."""

from __future__ import annotations

import json
import shutil

import datasets
import numpy as np
import pytest
from huggingface_hub import DatasetCard

import corruptgen
from corruptgen.cli import main
from corruptgen.engine import chunk
from corruptgen.engine.reader import Build
from corruptgen.hub import card as card_mod
from corruptgen.hub.card_scan import class_names, imagenet_class_names, scan_build
from corruptgen.io.facts import parse_signature, signature, type_of

ONE_SUBSET = {"subsets": "fog", "severities": "3", "clean": False, "progress": False}


@pytest.fixture
def offline_cache(hf_cache, monkeypatch):
    """datasets' default cache, in a private folder, with the Hub offline (as a user's machine, minus the network)."""
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)


def _arrays(tmp_path, labels, name="lab.npy"):
    np.save(tmp_path / "img.npy", np.random.default_rng(0).integers(0, 256, (len(labels), 32, 32, 3), dtype=np.uint8))
    np.save(tmp_path / name, np.array(labels))
    return f"npy:{tmp_path / 'img.npy'}:{tmp_path / name}"


def _labels(root) -> list[int]:
    return datasets.load_dataset(str(root), name="fog_s3", split="test")["cls"]


def test_rebuilt_shards_are_new_cache_entries(tmp_path, offline_cache):
    out = tmp_path / "out"
    root = corruptgen.build("cifar10-c", source=_arrays(tmp_path, [0, 3, 5, 8]), out=out, **ONE_SUBSET).out_dir
    assert _labels(root) == [0, 3, 5, 8]
    fixed = _arrays(tmp_path, [1, 3, 5, 7], "fixed.npy")  # corrected labels: same images, same shard sizes
    corruptgen.build("cifar10-c", source=fixed, out=out, overwrite=True, **ONE_SUBSET)
    assert _labels(root) == [1, 3, 5, 7]
    assert corruptgen.load(root, subset="fog_s3")["cls"] == [1, 3, 5, 7]

    shutil.rmtree(root)  # the same plan (same source spec) over changed arrays: only the shards' bytes differ
    chunk._SOURCES.clear()  # a process keeps the sources it opened, by spec: let this one read the new arrays
    corruptgen.build("cifar10-c", source=_arrays(tmp_path, [2, 2, 2, 2]), out=out, **ONE_SUBSET)
    assert _labels(root) == [2, 2, 2, 2]

    seeds = {}
    for seed in (11, 12):  # two directories, equal cards but for the plan and shard digests
        build = corruptgen.build("cifar10-c", source=_arrays(tmp_path, [0, 3, 5, 8]), out=tmp_path / f"s{seed}",
                                 seed=seed, **ONE_SUBSET)  # fmt: skip
        seeds[seed] = datasets.load_dataset(str(build.out_dir), name="fog_s3", split="test")["json"]
    assert [r["seed"] for r in seeds[11]] != [r["seed"] for r in seeds[12]]
    for seed, rows in seeds.items():
        recorded = json.loads((tmp_path / f"s{seed}/cifar10-c/manifest.json").read_text())["plan"]["seed"]
        assert recorded == seed and rows[0]["subset"] == "fog_s3"


def test_a_build_without_card_loads_by_config_and_a_card_replaces_its_yaml(tmp_path, offline_cache):
    source = _arrays(tmp_path, [0, 1, 1, 0])
    root = corruptgen.build(
        "cifar10-c", source=source, out=tmp_path, card=False, **{**ONE_SUBSET, "clean": True}
    ).out_dir
    assert not (root / "README.md").exists() and (root / card_mod.CONFIGS_YAML).is_file()
    ds = datasets.load_dataset(str(root), name="fog_s3", split="test")
    assert ds.num_rows == 4 and ds.features["json"]["params"]["strength"] == datasets.Value("float64")
    assert ds["cls"] == [0, 1, 1, 0] and ds.features["cls"] == datasets.Value("int64")  # no class names known
    assert datasets.load_dataset(str(root), name="clean", split="test")[0]["json"]["subset"] == "clean"
    card_mod.write_card(root, images=False)
    assert (root / "README.md").is_file() and not (root / card_mod.CONFIGS_YAML).exists()


def test_what_the_publisher_set_survives_later_builds(tmp_path):
    kw = {"source": _arrays(tmp_path, [0, 1]), "out": tmp_path, "severities": "3", "progress": False}
    root = corruptgen.build("cifar10-c", subsets="fog", **kw).out_dir
    assert main(["card", str(root), "--license", "cc-by-4.0", "--pretty-name", "Mine", "--repo-id", "me/mine",
                 "--no-images"]) == 0  # fmt: skip
    corruptgen.build("cifar10-c", subsets="fog,frost", **kw)  # adds a subset: the card is written again
    card = DatasetCard.load(root / "README.md")
    assert card.data.license == "cc-by-4.0" and card.data.pretty_name == "Mine"
    assert "frost_s3" in {c["config_name"] for c in card.data.configs} and 'load_dataset("me/mine"' in card.text
    assert not (root / card_mod.GRID).exists()
    assert main(["card", str(root), "--license", "mit"]) == 0  # a new value replaces it, the rest is kept
    assert card_mod.card_marker(root)["options"] == {"license": "mit", "pretty_name": "Mine", "repo_id": "me/mine",
                                                     "images": False}  # fmt: skip


def test_recorded_facts_equal_what_the_samples_say(syn2nat_carded):
    build = Build.open(syn2nat_carded)
    from_facts = scan_build(build)
    build.manifest = {**build.manifest, "shards": {rel: {k: v for k, v in rec.items() if k != "facts"}
                                                    for rel, rec in build.manifest["shards"].items()}}  # fmt: skip
    read = scan_build(build)
    source = build.manifest["source"]
    assert from_facts.max_label == read.max_label == max(read.labels) and 281 in read.labels
    assert class_names(source, from_facts.labels, from_facts.max_label) == class_names(source, read.labels)
    for name, schema in read.schemas.items():
        assert from_facts.schemas[name].yaml_features() == schema.yaml_features(), name
        assert from_facts.schemas[name].scanned == schema.scanned == 10
    meta = {"a": [1, 2.5], "b": {"c": None, "d e": "x"}, "f": [[1], []], "g": True}
    assert parse_signature(signature(type_of(meta))) == type_of(meta)


def test_class_names_are_never_sized_by_a_label_value():
    npy = {"kind": "npy", "labelled": True, "spec": "npy:a.npy:b.npy"}
    assert class_names(npy, {0: None, 10**9: None}) is None  # no declared label space: no ClassLabel
    assert class_names(npy, {0: None, 3: None}) is None  # unnamed indices are not taken for ImageNet's
    assert class_names({**npy, "num_classes": 10}, {0: None, 3: None}) == tuple(f"class_{i}" for i in range(10))
    assert class_names({**npy, "num_classes": 10}, {}, max_label=9) == tuple(f"class_{i}" for i in range(10))
    assert class_names({**npy, "num_classes": 10}, {12: None}) is None  # a label outside the declared space
    assert class_names(npy, {0: "cat", 1: "dog"}) == ("cat", "dog")  # every index from 0 on, named
    assert class_names(npy, {281: "tabby cat"}) is imagenet_class_names()  # one object, however many configs
    assert class_names({"kind": "samples", "labelled": True}, {}) is imagenet_class_names()
