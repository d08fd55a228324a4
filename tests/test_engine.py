"""The render engine: layout, determinism, independence, resume, atomicity, loading."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

import corruptgen
from corruptgen.errors import CorruptgenError

SUBSETS = "solarize,random_sun_flare,iso_noise,affines"


def tar_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.tar"))}


def test_default_build_layout_and_metadata(tmp_path):
    result = corruptgen.build("syn2nat", out=tmp_path)
    root = tmp_path / "syn2nat"
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["complete"] and manifest["counts"]["samples"] == 19 * 10
    subsets = sorted(p.name for p in (root / "data").iterdir())
    assert len(subsets) == 19 and "clean" in subsets and "solarize" in subsets
    assert result.written_shards == 19 and result.reused_shards == 0
    with tarfile.open(root / "data/random_sun_flare/test-00000.tar") as tar:
        names = tar.getnames()
        meta = json.loads(tar.extractfile("chelsea.json").read())
        assert tar.extractfile("chelsea.cls").read() == b"281"
    assert names[:3] == ["astronaut.cls", "astronaut.jpg", "astronaut.json"]
    for field in ("key", "source_id", "label", "label_name", "benchmark", "subset", "corruption", "category",
                  "severity", "params", "seed", "preprocessing", "versions"):  # fmt: skip
        assert field in meta
    assert meta["corruption"] == "random_sun_flare" and meta["category"] == 1 and meta["severity"] is None
    assert meta["label"] == 281 and meta["params"]["flare_center_x"] >= 0
    assert meta["versions"]["albumentations"] == "2.0.8"
    rec = manifest["shards"]["data/random_sun_flare/test-00000.tar"]
    assert rec["samples"] == 10 and len(rec["sha256"]) == 64
    assert corruptgen.verify(root).ok


def test_workers_do_not_change_bytes(tmp_path):
    kw = dict(subsets=SUBSETS, shard_size=3)
    corruptgen.build("syn2nat", out=tmp_path / "a", workers=1, **kw)
    corruptgen.build("syn2nat", out=tmp_path / "b", workers=2, **kw)
    a, b = tar_bytes(tmp_path / "a/syn2nat"), tar_bytes(tmp_path / "b/syn2nat")
    assert len(a) == 5 * 4 and a == b  # 5 subsets x ceil(10/3) shards
    ma = (tmp_path / "a/syn2nat/manifest.json").read_bytes()
    assert ma == (tmp_path / "b/syn2nat/manifest.json").read_bytes()


def test_sample_bytes_do_not_depend_on_other_subsets(tmp_path):
    corruptgen.build("syn2nat", out=tmp_path / "a", subsets="solarize,iso_noise", clean=False)
    corruptgen.build("syn2nat", out=tmp_path / "b", subsets="iso_noise", clean=False)
    a = (tmp_path / "a/syn2nat/data/iso_noise/test-00000.tar").read_bytes()
    assert a == (tmp_path / "b/syn2nat/data/iso_noise/test-00000.tar").read_bytes()


def test_seed_changes_output(tmp_path):
    corruptgen.build("syn2nat", out=tmp_path / "a", subsets="iso_noise", clean=False, seed=0)
    corruptgen.build("syn2nat", out=tmp_path / "b", subsets="iso_noise", clean=False, seed=1)
    assert tar_bytes(tmp_path / "a/syn2nat") != tar_bytes(tmp_path / "b/syn2nat")


def test_resume_redoes_only_missing_or_damaged_shards(tmp_path):
    kw = dict(subsets="solarize,posterize", shard_size=4)
    corruptgen.build("syn2nat", out=tmp_path, **kw)
    root = tmp_path / "syn2nat"
    reference = tar_bytes(root)
    (root / "data/solarize/test-00001.tar").unlink()
    (root / "data/posterize/test-00002.tar").write_bytes(b"garbage")
    (root / "data/clean/.test-00000.tar.partial").write_bytes(b"left over by a killed build")
    result = corruptgen.build("syn2nat", out=tmp_path, **kw)
    assert (result.written_shards, result.reused_shards) == (2, 7)
    assert tar_bytes(root) == reference
    assert not list(root.rglob("*.partial"))


def test_kill_9_then_rerun_gives_identical_bytes(tmp_path):
    args = ["build", "syn2nat", "--subsets", "all", "--shard-size", "2", "--no-progress"]
    subprocess.run([sys.executable, "-m", "corruptgen", *args, "--out", str(tmp_path / "ref")], check=True)
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "corruptgen", *args, "--out", str(out)])
    deadline = time.time() + 120
    while time.time() < deadline and len(list(out.rglob("*.tar"))) < 30:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(list(out.rglob("*.tar")))
    assert 0 < done < 41 * 5, "the kill should land mid-build"
    manifest = json.loads((out / "syn2nat/manifest.json").read_text())
    assert manifest["complete"] is False
    subprocess.run([sys.executable, "-m", "corruptgen", *args, "--out", str(out)], check=True)
    assert tar_bytes(out / "syn2nat") == tar_bytes(tmp_path / "ref/syn2nat")
    ref_manifest = (tmp_path / "ref/syn2nat/manifest.json").read_bytes()
    assert (out / "syn2nat/manifest.json").read_bytes() == ref_manifest


def test_different_plan_in_same_directory_needs_overwrite(tmp_path):
    corruptgen.build("syn2nat", out=tmp_path, subsets="solarize")
    with pytest.raises(CorruptgenError, match="different build"):
        corruptgen.build("syn2nat", out=tmp_path, subsets="posterize")
    corruptgen.build("syn2nat", out=tmp_path, subsets="posterize", overwrite=True)
    assert sorted(p.name for p in (tmp_path / "syn2nat/data").iterdir()) == ["clean", "posterize"]


def test_formats_and_options(tmp_path):
    result = corruptgen.build(
        "syn2nat", out=tmp_path, subsets="posterize", clean=False, image_format="png", limit=3, split="validation"
    )
    shard = tmp_path / "syn2nat/data/posterize/validation-00000.tar"
    with tarfile.open(shard) as tar:
        assert sorted(tar.getnames())[:3] == ["astronaut.cls", "astronaut.json", "astronaut.png"]
    assert result.manifest["counts"]["samples"] == 3
    with pytest.raises(CorruptgenError, match="quality"):
        corruptgen.build("syn2nat", out=tmp_path / "x", quality=0)
    with pytest.raises(CorruptgenError, match=r"unknown subset 'solarise'.*solarize"):
        corruptgen.build("syn2nat", out=tmp_path / "x", subsets="solarise")
    with pytest.raises(CorruptgenError, match="unknown benchmark"):
        corruptgen.build("syn2nattt", out=tmp_path / "x")


def test_verify_detects_damage(tmp_path):
    corruptgen.build("syn2nat", out=tmp_path, subsets="solarize")
    root = tmp_path / "syn2nat"
    shard = root / "data/solarize/test-00000.tar"
    data = bytearray(shard.read_bytes())
    data[1000] ^= 0xFF
    shard.write_bytes(bytes(data))
    report = corruptgen.verify(root)
    assert not report.ok and report.mismatched == ["data/solarize/test-00000.tar"]
    (root / "data/clean/test-00000.tar").unlink()
    assert corruptgen.verify(root).missing == ["data/clean/test-00000.tar"]


def test_output_loads_with_datasets_and_webdataset(tmp_path):
    import datasets
    import webdataset as wds

    corruptgen.build("syn2nat", out=tmp_path, subsets="random_shadow,color_jitter,cutout")
    root = tmp_path / "syn2nat"
    for subset in ("clean", "random_shadow", "color_jitter", "cutout"):
        ds = datasets.load_dataset("webdataset", data_files={"test": str(root / f"data/{subset}/*.tar")}, split="test")
        assert len(ds) == 10
        row = ds[1]
        assert row["__key__"] == "chelsea" and row["cls"] == 281 and row["json"]["subset"] == subset
        assert row["jpg"].size == (224, 224)
    samples = list(wds.WebDataset(str(root / "data/cutout/test-00000.tar"), shardshuffle=False).decode("rgb"))
    assert len(samples) == 10 and samples[0]["jpg"].shape == (224, 224, 3)
    assert samples[2]["json"]["corruption"] == "cutout" and samples[2]["cls"] == 967


def test_imagefolder_source_with_workers(tmp_path, photo_folder):
    a = corruptgen.build("syn2nat", source=f"imagefolder:{photo_folder}", out=tmp_path / "a", subsets="sharpen",
                         shard_size=2, workers=2)  # fmt: skip
    assert a.manifest["counts"]["samples"] == 14 and a.manifest["source"]["count"] == 7
    with tarfile.open(tmp_path / "a/syn2nat/data/sharpen/test-00000.tar") as tar:
        meta = json.loads(tar.extractfile("img_000.json").read())
    assert meta["source_id"].endswith("img_000.jpg") and meta["label"] is None
